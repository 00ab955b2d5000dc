"""The quantization graph pass: a float32 symbol -> the same network on int8/uint8 codes.

Works on the symbol's JSON (MXNet's format), node by node in topological order:

- a quantizable node (Convolution, FullyConnected; in 'smart' mode Pooling max/avg,
  Activation relu, Flatten, Concat and elemwise_add only when their first input is
  already quantized, in 'full' mode always) becomes `quantized_<name>` (op
  `_contrib_quantized_*`, same attributes); its inputs become (codes, then a min/max
  pair per input):
  * from a quantized node: that node's outputs 0, 1, 2;
  * from an offline parameter P (a weight): new variables `P_quantize`, `P_quantize_min`,
    `P_quantize_max`, filled later by `_quantize_params`;
  * otherwise: a `_contrib_quantize_v2` node `<input>_quantize` (out_type =
    quantized_dtype), shared by every consumer of that input;
- a quantized op with an int32 result (conv, FC, elemwise_add) is followed by
  `requantize_<name>`;
- a float node (or a graph output) fed by a quantized node gets a `_contrib_dequantize`
  node `<name>_dequantize` in between.

`calibrate` writes (min_calib_range, max_calib_range) from a dict of layer-output names
(`conv_output`, `data`, ...) onto the requantize and quantize_v2 nodes that read them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

#: float op -> (quantized op, needs requantize, quantized in 'smart' mode only after
#: quantized data)
QUANTIZABLE = {
    "Convolution": ("_contrib_quantized_conv", True, False),
    "FullyConnected": ("_contrib_quantized_fully_connected", True, False),
    "Pooling": ("_contrib_quantized_pooling", False, True),
    "Activation": ("_contrib_quantized_act", False, True),
    "Flatten": ("_contrib_quantized_flatten", False, True),
    "Concat": ("_contrib_quantized_concat", False, True),
    "elemwise_add": ("_contrib_quantized_elemwise_add", True, True),
}


def _supported(node: Mapping[str, Any]) -> bool:
    """Parameter sets the quantized kernels take (attributes are MXNet strings)."""
    attrs = node.get("attrs", {})
    op = node["op"]
    if op == "Pooling":
        return attrs.get("pool_type", "max") in ("max", "avg")
    if op == "Activation":
        return attrs.get("act_type") == "relu"
    if op == "Convolution":
        return attrs.get("layout", "None") in ("None", "NCW", "NCHW", "NCDHW")
    return True


Entry = tuple[int, int]


@dataclass
class _Builder:
    """The new graph, built node by node, with the caches that keep inserted nodes shared."""

    old: list[dict[str, Any]]
    names: Mapping[Entry, str]  # old entry -> layer output name ('conv_output', 'data')
    quantized_dtype: str
    nodes: list[dict[str, Any]] = field(default_factory=list)
    mirror: dict[int, int] = field(default_factory=dict)  # old node -> new node
    quantized: set[int] = field(default_factory=set)  # new nodes giving (codes, min, max)
    cache: dict[tuple[str, Any], int] = field(default_factory=dict)
    calib_layers: list[str] = field(default_factory=list)

    def add(self, node: dict[str, Any]) -> int:
        self.nodes.append(node)
        return len(self.nodes) - 1

    def variable(self, name: str) -> int:
        key = ("var", name)
        if key not in self.cache:
            self.cache[key] = self.add({"op": "null", "name": name, "inputs": []})
        return self.cache[key]

    def float_entry(self, entry: list[int]) -> list[int]:
        """An old entry as float32 in the new graph (dequantized if it is quantized)."""
        src, idx = entry[0], entry[1]
        new = self.mirror[src]
        if new not in self.quantized:
            return [new, idx, 0]
        key = ("dequantize", new)
        if key not in self.cache:
            name = f"{self.old[src]['name']}_dequantize"
            ins = [[new, 0, 0], [new, 1, 0], [new, 2, 0]]
            attrs = {"out_type": "float32"}
            node = {"op": "_contrib_dequantize", "name": name, "attrs": attrs, "inputs": ins}
            self.cache[key] = self.add(node)
        return [self.cache[key], 0, 0]

    def quantized_entry(self, entry: list[int], offline: set[str]) -> list[list[int]]:
        """An old entry as [codes, min, max] entries of the new graph."""
        src, idx = entry[0], entry[1]
        new = self.mirror[src]
        if new in self.quantized:
            return [[new, 0, 0], [new, 1, 0], [new, 2, 0]]
        old = self.old[src]
        if old["op"] == "null" and old["name"] in offline:
            base = f"{old['name']}_quantize"
            return [[self.variable(n), 0, 0] for n in (base, f"{base}_min", f"{base}_max")]
        key = ("quantize", (new, idx))
        if key not in self.cache:
            name = old["name"] if idx == 0 else f"{old['name']}{idx}"
            attrs = {"out_type": self.quantized_dtype}
            self.cache[key] = self.add({"op": "_contrib_quantize_v2", "name": f"{name}_quantize",
                                        "attrs": attrs, "inputs": [[new, idx, 0]]})  # fmt: skip
            self.calib_layers.append(self.names[(src, idx)])
        q = self.cache[key]
        return [[q, 0, 0], [q, 1, 0], [q, 2, 0]]


def _entry_names(sym: Any) -> dict[Entry, str]:
    """(node id, output index) -> MXNet's output name, from the symbol's internals."""
    graph = json.loads(sym.tojson())
    ids = {node["name"]: i for i, node in enumerate(graph["nodes"])}
    seen: dict[int, int] = {}
    names: dict[Entry, str] = {}
    for out in sym.get_internals():
        nid = ids[out.name]
        k = seen.get(nid, 0)
        names[(nid, k)] = out.list_outputs()[0]
        seen[nid] = k + 1
    return names


def quantize_graph(
    sym: Any,
    excluded_names: Iterable[str],
    excluded_ops: Iterable[str],
    offline_params: Iterable[str],
    quantized_dtype: str,
    mode: str,
) -> tuple[str, list[str]]:
    """The quantized graph's JSON and the layer outputs that calibration should measure."""
    graph = json.loads(sym.tojson())
    old = graph["nodes"]
    b = _Builder(old, _entry_names(sym), quantized_dtype)
    excluded_n, excluded_o, offline = set(excluded_names), set(excluded_ops), set(offline_params)
    for nid, node in enumerate(old):
        if node["op"] == "null":
            b.mirror[nid] = b.add(dict(node))
            continue
        rule = QUANTIZABLE.get(node["op"])
        quantize = (
            mode != "none"
            and rule is not None
            and node["name"] not in excluded_n
            and node["op"] not in excluded_o
            and _supported(node)
        )
        if quantize and rule is not None and rule[2] and mode == "smart":
            quantize = b.mirror[node["inputs"][0][0]] in b.quantized
        if not quantize or rule is None:
            ins = [b.float_entry(e) for e in node["inputs"]]
            b.mirror[nid] = b.add({**node, "inputs": ins})
            continue
        parts = [b.quantized_entry(e, offline) for e in node["inputs"]]
        ins = [p[0] for p in parts] + [e for p in parts for e in p[1:]]
        attrs = dict(node.get("attrs", {}))
        q = b.add(
            {"op": rule[0], "name": f"quantized_{node['name']}", "attrs": attrs, "inputs": ins}
        )
        if rule[1]:
            out_type = "auto" if quantized_dtype == "auto" else "int8"
            q = b.add({"op": "_contrib_requantize", "name": f"requantize_{node['name']}",
                       "attrs": {"out_type": out_type},
                       "inputs": [[q, 0, 0], [q, 1, 0], [q, 2, 0]]})  # fmt: skip
            b.calib_layers.append(f"{node['name']}_output")
        b.mirror[nid] = q
        b.quantized.add(q)
    heads = [b.float_entry(h) for h in graph["heads"]]
    out = {"nodes": b.nodes, "heads": heads, "attrs": graph.get("attrs", {})}
    out["arg_nodes"] = [i for i, n in enumerate(b.nodes) if n["op"] == "null"]
    return json.dumps(out), b.calib_layers


def calibrate(
    qjson: str, names: Mapping[Entry, str], ranges: Mapping[str, tuple[float, float]]
) -> str:
    """Set min/max_calib_range on requantize and quantize_v2 nodes whose layer is in ranges."""
    graph = json.loads(qjson)
    nodes = graph["nodes"]
    for node in nodes:
        if node["op"] == "_contrib_requantize":
            src = nodes[node["inputs"][0][0]]["name"]
            layer = f"{src.removeprefix('quantized_')}_output"
        elif node["op"] == "_contrib_quantize_v2":
            src_id, idx = node["inputs"][0][0], node["inputs"][0][1]
            layer = names.get((src_id, idx), nodes[src_id]["name"])
        else:
            continue
        if layer in ranges:
            lo, hi = ranges[layer]
            attrs = node.setdefault("attrs", {})
            attrs["min_calib_range"] = repr(float(lo))
            attrs["max_calib_range"] = repr(float(hi))
    return json.dumps(graph)
