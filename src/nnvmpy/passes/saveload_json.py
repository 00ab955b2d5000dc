"""SaveJSON / LoadJSON: MXNet's symbol JSON, read and written exactly as MXNet 1.9.1 does.

The format (NNVM's saveload_json.cc): `nodes` in topological order, each with `op`
("null" for a variable), `name`, `attrs` (strings; left out when empty), `inputs` as
[node_id, index, version] and optional `control_deps`; `arg_nodes` (the variables);
`node_row_ptr` (entry id of each node's first output); `heads` (the outputs); graph
`attrs` as {"name": [type, value]}, at least {"mxnet_version": ["int", 10901]}.

Op nodes are created through `Op.get(op).parse_attrs(attrs, name)`, so a file with a
parameter the op does not know fails here, naming the node. Dunder attributes
(`__shape__`, `__lr_mult__`, ...) stay in `attrs.dict`. Older files ("param"/"attr"
instead of "attrs", hint keys without dunders, missing aux inputs) are upgraded as MXNet
does (see _legacy_json.py).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..base import NNVMError
from ..graph.attrs import JSON, MXNET_VERSION
from ..graph.graph import Graph
from ..graph.node import Node, NodeEntry
from ..graph.pass_registry import register_pass
from ..registry import NodeAttrs, Op
from . import _legacy_json as legacy
from ._dmlc_json import Inline, as_triples, dumps


@register_pass("SaveJSON", provides=(JSON,))
def save_json(graph: Graph) -> Graph:
    """graph.attrs["json"] = the graph as MXNet symbol JSON."""
    graph.attrs[JSON] = graph_to_json(graph)
    return graph


@register_pass("LoadJSON", requires=(JSON,))
def load_json(graph: Graph) -> Graph:
    """A new graph from graph.attrs["json"]; the file's graph attrs become graph attrs."""
    return graph_from_json(graph.attrs[JSON])


# -- saving -----------------------------------------------------------------------------------


def graph_to_json(graph: Graph) -> str:
    """MXNet symbol JSON of `graph`, byte-identical to what MXNet 1.9.1 writes."""
    idx = graph.indexed
    nodes = []
    for nid, node in enumerate(idx.nodes):
        inode = idx[nid]
        item: dict[str, Any] = {
            "op": node.op.name if node.op is not None else "null",
            "name": node.name,
        }
        if node.attrs.dict:
            item["attrs"] = dict(sorted(node.attrs.dict.items()))
        item["inputs"] = as_triples(inode.inputs)
        if inode.control_deps:
            item["control_deps"] = list(inode.control_deps)
        nodes.append(item)
    return dumps(
        {
            "nodes": nodes,
            "arg_nodes": list(idx.input_nodes),
            "node_row_ptr": list(idx.node_row_ptr),
            "heads": as_triples(idx.outputs),
            "attrs": _graph_attrs_json(graph.attrs),
        }
    )


def _graph_attrs_json(attrs: Mapping[str, Any]) -> dict[str, Inline]:
    """Graph attributes JSON can carry (int, str, lists of them) as [type, value] pairs."""
    version = int(attrs.get(MXNET_VERSION, legacy.CURRENT_VERSION))
    out: dict[str, Inline] = {MXNET_VERSION: Inline(("int", version))}
    for key in sorted(attrs):
        tagged = _tag(attrs[key])
        if key not in (JSON, MXNET_VERSION) and tagged is not None:
            out[key] = tagged
    return out


def _tag(value: Any) -> Inline | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return Inline(("int", value))
    if isinstance(value, str):
        return Inline(("str", value))
    if isinstance(value, list) and value and all(type(v) is int for v in value):
        return Inline(("list_int", value))
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return Inline(("list_str", value))
    return None


# -- loading ----------------------------------------------------------------------------------


def graph_from_json(text: str) -> Graph:
    """The graph in an MXNet symbol JSON string (any MXNet 0.8 - 1.9 file)."""
    try:
        data = json.loads(text)
        nodes_json = data["nodes"]
        heads_json = data["heads"]
    except (ValueError, KeyError, TypeError) as e:
        raise NNVMError(f"LoadJSON: not a symbol JSON document ({type(e).__name__}: {e})") from e
    attrs = {k: _untag(k, v) for k, v in (data.get("attrs") or {}).items()}
    version = int(attrs.get(MXNET_VERSION, 800))
    nodes: list[Node] = []
    for nid, node_json in enumerate(nodes_json):
        nodes.append(_load_node(node_json, nid, nodes, version))
    heads = [_load_entry(nodes, e, "heads") for e in heads_json]
    return Graph(heads, attrs)


def _untag(key: str, value: Any) -> Any:
    if not (isinstance(value, list) and len(value) == 2 and isinstance(value[0], str)):
        raise NNVMError(
            f"LoadJSON: graph attribute '{key}' should be [type, value], got {value!r:.80}"
        )
    kind, payload = value
    if kind in ("int", "size_t"):
        return int(payload)
    if kind == "list_shape":
        return [tuple(s) for s in payload]
    return payload


def _load_node(node_json: Mapping[str, Any], nid: int, nodes: list[Node], version: int) -> Node:
    name = str(node_json.get("name", ""))
    op_name = node_json.get("op", "null")
    attrs_dict = legacy.node_dict(node_json)
    hidden: dict[str, str] = {}
    if version < legacy.CURRENT_VERSION:
        attrs_dict, hidden = legacy.split_hidden(attrs_dict)
    inputs = [_load_entry(nodes, e, f"node '{name}'") for e in node_json.get("inputs", [])]
    deps = [_node_at(nodes, d, f"node '{name}'") for d in node_json.get("control_deps", [])]
    if op_name == "null":
        node = Node(NodeAttrs(None, name, attrs_dict), inputs, deps)
        if inputs:
            raise NNVMError(f"LoadJSON: variable '{name}' (node {nid}) has inputs")
    else:
        node = Node(_parse_attrs(op_name, attrs_dict, name), inputs, deps)
    legacy.restore_hidden(node, hidden)
    legacy.upgrade_node(node, version)
    if node.op is not None and len(node.inputs) != node.num_inputs():
        raise NNVMError(
            f"LoadJSON: node '{name}' ({op_name}) has {len(node.inputs)} inputs "
            f"but the op takes {node.num_inputs()} with these attributes"
        )
    return node


def _parse_attrs(op_name: str, attrs_dict: dict[str, str], name: str) -> NodeAttrs:
    try:
        op = Op.get(op_name)
    except NNVMError as e:
        raise NNVMError(f"LoadJSON: node '{name}' uses {e}") from e
    try:
        return op.parse_attrs(attrs_dict, name)  # keeps every string, dunder keys included
    except Exception as e:
        raise NNVMError(
            f"LoadJSON: node '{name}' ({op_name}) has attributes the op does not accept: {e}"
        ) from e


def _node_at(nodes: list[Node], nid: Any, where: str) -> Node:
    if not isinstance(nid, int) or not 0 <= nid < len(nodes):
        raise NNVMError(
            f"LoadJSON: {where} refers to node {nid!r}, which is not an earlier "
            f"node (0..{len(nodes) - 1})"
        )
    return nodes[nid]


def _load_entry(nodes: list[Node], entry: Any, where: str) -> NodeEntry:
    if not isinstance(entry, list) or len(entry) not in (2, 3):
        raise NNVMError(
            f"LoadJSON: {where} has entry {entry!r}; expected [node_id, index, version]"
        )
    node = _node_at(nodes, entry[0], where)
    index, version = int(entry[1]), int(entry[2]) if len(entry) == 3 else 0
    if not 0 <= index < node.num_outputs():
        raise NNVMError(
            f"LoadJSON: {where} reads output {index} of '{node.name}', which has "
            f"{node.num_outputs()} outputs"
        )
    return NodeEntry(node, index, version)


__all__ = ["graph_from_json", "graph_to_json", "load_json", "save_json"]
