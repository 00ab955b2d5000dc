"""nv.viz: MXNet 1.9.1's layer table (print_summary) and network picture (plot_network).

Both read the symbol's JSON, as MXNet's do, so what they show depends only on what the
user wrote: a Pooling label shows its stride only when the stride was given. The table's
parameter counts follow MXNet's rules (tests/data/viz_reference.json holds MXNet's own
output): a layer's input channels are the sums of dimension 1 of its previous layers'
outputs, so FullyConnected after a 4-D output counts only the channels, as MXNet does.
The picture needs the optional `graphviz` package (`pip install nnvmpy[viz]`); rendering
it to a file needs Graphviz's `dot` program.
"""

from __future__ import annotations

import json
import re
import warnings
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .base import InferError, NNVMError

__all__ = ["plot_network", "print_summary"]

#: fill colours of plot_network's node kinds (MXNet's palette)
_COLORS = {
    "input": "#8dd3c7",
    "weighted": "#fb8072",
    "activation": "#ffffb3",
    "norm": "#bebada",
    "pool": "#80b1d3",
    "reshape": "#fdb462",
    "softmax": "#b3de69",
    "other": "#fccde5",
}
_WEIGHT_SUFFIXES = (
    "_weight",
    "_bias",
    "_beta",
    "_gamma",
    "_moving_var",
    "_moving_mean",
    "_running_var",
    "_running_mean",
)
_DEFAULT_NODE_ATTRS = {
    "shape": "box",
    "fixedsize": "true",
    "width": "1.3",
    "height": "0.8034",
    "style": "filled",
}


class NotASymbolError(NNVMError, TypeError):
    """print_summary / plot_network got something that is not a Symbol."""


class IncompleteShapeError(InferError, ValueError):
    """The given input shapes (or dtypes) do not determine every output."""


def _check_symbol(symbol: Any, fn: str) -> None:
    from nnvmpy.symbol import Symbol

    if not isinstance(symbol, Symbol):
        raise NotASymbolError(f"viz.{fn}: symbol must be a Symbol, got {type(symbol).__name__}")


def _digits(text: str) -> list[str]:
    """The integers written in a tuple attribute: '(3, 3)' -> ['3', '3']."""
    return re.findall(r"\d+", text)


def _is_true(attrs: Mapping[str, str], key: str) -> bool:
    return attrs.get(key, "False").strip().lower() in ("true", "1")


def _output_key(node: Mapping[str, Any]) -> str:
    """The name internals.list_outputs() gives a node's (single) output."""
    return node["name"] if node["op"] == "null" else node["name"] + "_output"


def _internal_outputs(symbol: Any, fn: str, what: str, given: Mapping[str, Any]) -> dict:
    """{output name of every internal node: shape (what='shape') or dtype (what='type')}."""
    internals = symbol.get_internals()
    infer = internals.infer_shape if what == "shape" else internals.infer_type
    _, outs, _ = infer(**given)
    if outs is None:
        raise IncompleteShapeError(
            f"viz.{fn}: the input {what}s {dict(given)} do not determine every output"
        )
    return dict(zip(internals.list_outputs(), outs))


# ----------------------------------------------------------------------------- summary


def _layer_params(node: Mapping[str, Any], in_channels: int, out_shape: Sequence[int]) -> int:
    """Learnable parameters of one layer, counted as MXNet's print_summary counts them."""
    op, attrs = node["op"], node.get("attrs", {})
    if op == "Convolution":
        filters = int(attrs["num_filter"])
        count = in_channels * filters // int(attrs.get("num_group", "1"))
        for k in _digits(attrs["kernel"]):
            count *= int(k)
        return count + (0 if _is_true(attrs, "no_bias") else filters)
    if op == "FullyConnected":
        bias = 0 if _is_true(attrs, "no_bias") else 1
        return (in_channels + bias) * int(attrs["num_hidden"])
    if op == "BatchNorm":
        return 2 * int(out_shape[1]) if len(out_shape) > 1 else 0
    if op == "Embedding":
        return int(attrs["input_dim"]) * int(attrs["output_dim"])
    return 0


def _format_row(fields: Sequence[Any], positions: Sequence[int]) -> str:
    """Each field starts where the previous one's column ends; a long field is cut there."""
    line = ""
    for field, end in zip(fields, positions):
        line = (line + str(field))[:end]
        line += " " * (end - len(line))
    return line


def summary_lines(
    symbol: Any,
    shape: Mapping[str, Sequence[int]] | None = None,
    line_length: int = 120,
    positions: Sequence[float] = (0.44, 0.64, 0.74, 1.0),
) -> list[str]:
    """The lines print_summary prints (one string each, no newline)."""
    _check_symbol(symbol, "print_summary")
    shapes = {}
    if shape is not None:
        shapes = _internal_outputs(symbol, "print_summary", "shape", shape)
    graph = json.loads(symbol.tojson())
    nodes = graph["nodes"]
    # MXNet tests node ids against the first head entry [node, index, version]: the head
    # node and node 0 (the first input) count as listed, other variables are left out
    listed = set(graph["heads"][0])
    if positions[-1] <= 1:
        positions = [int(line_length * p) for p in positions]
    cols = [int(p) for p in positions]
    thin, thick = "_" * line_length, "=" * line_length
    lines = [thin, _format_row(["Layer (type)", "Output Shape", "Param #", "Previous Layer"], cols)]
    lines.append(thick)
    total = 0
    for i, node in enumerate(nodes):
        if node["op"] == "null" and i > 0:
            continue
        out_full: tuple[int, ...] = ()
        if node["op"] != "null" or i in listed:
            out_full = tuple(shapes.get(_output_key(node), ()))
        previous, in_channels = [], 0
        if node["op"] != "null":
            for entry in node["inputs"]:
                src = nodes[entry[0]]
                if src["op"] == "null" and entry[0] not in listed:
                    continue
                previous.append(src["name"])
                src_shape = shapes.get(_output_key(src), ())
                if len(src_shape) > 1:
                    in_channels += int(src_shape[1])
        params = _layer_params(node, in_channels, out_full)
        total += params
        shown = "x".join(str(d) for d in out_full[1:])
        label = f"{node['name']}({node['op']})"
        lines.append(_format_row([label, shown, params, previous[0] if previous else ""], cols))
        lines += [_format_row(["", "", "", name], cols) for name in previous[1:]]
        lines.append(thick if i == len(nodes) - 1 else thin)
    lines += [f"Total params: {total}", thin]
    return lines


def print_summary(
    symbol: Any,
    shape: Mapping[str, Sequence[int]] | None = None,
    line_length: int = 120,
    positions: Sequence[float] = (0.44, 0.64, 0.74, 1.0),
) -> None:
    """Print the layer table: name(op), output shape (without the batch axis), parameter
    count and previous layers, then the total. `positions` are the right edges of the four
    columns, as fractions of `line_length` (all <= 1) or as character counts."""
    print("\n".join(summary_lines(symbol, shape, line_length, positions)))


# ----------------------------------------------------------------------------- picture


def _node_look(node: Mapping[str, Any]) -> tuple[str, str]:
    """(label, colour kind) of an op node, as MXNet draws it."""
    op, name, attrs = node["op"], node["name"], node.get("attrs") or {}
    if op == "Convolution":
        stride = "x".join(_digits(attrs["stride"])) if "stride" in attrs else "1"
        kernel = "x".join(_digits(attrs["kernel"]))
        return f"Convolution\n{kernel}/{stride}, {attrs['num_filter']}", "weighted"
    if op == "FullyConnected":
        return f"FullyConnected\n{attrs['num_hidden']}", "weighted"
    if op == "BatchNorm":
        return name, "norm"
    if op == "Activation":
        return f"Activation\n{attrs['act_type']}", "activation"
    if op == "LeakyReLU":
        return f"LeakyReLU\n{attrs.get('act_type', 'Leaky')}", "activation"
    if op == "Pooling":
        kernel = "x".join(_digits(attrs["kernel"])) if "kernel" in attrs else "[]"
        stride = "x".join(_digits(attrs["stride"])) if "stride" in attrs else "1"
        return f"Pooling\n{attrs['pool_type']}, {kernel}/{stride}", "pool"
    if op in ("Concat", "Flatten", "Reshape"):
        return name, "reshape"
    if op == "Softmax":
        return name, "softmax"
    if op == "Custom":
        return attrs["op_type"], "other"
    return name, "other"


def _edge_key(src: Mapping[str, Any]) -> str:
    """The output an edge from `src` is labelled with: the last one of a multi-output op."""
    key = _output_key(src)
    if src["op"] != "null" and "num_outputs" in (src.get("attrs") or {}):
        key += str(int(src["attrs"]["num_outputs"]) - 1)
    return key


def _warn_repeated_names(nodes: Sequence[Mapping[str, Any]]) -> None:
    counts = Counter(n["name"] for n in nodes)
    repeated = sorted(name for name, count in counts.items() if count > 1)
    if repeated:
        warnings.warn(
            "There are multiple variables with the same name in your graph, this may result "
            "in cyclic graph. Repeated names: " + ",".join(repeated),
            RuntimeWarning,
            stacklevel=3,
        )


def plot_network(
    symbol: Any,
    title: str = "plot",
    save_format: str = "pdf",
    shape: Mapping[str, Sequence[int]] | None = None,
    dtype: Mapping[str, Any] | None = None,
    node_attrs: Mapping[str, str] | None = None,
    hide_weights: bool = True,
) -> Any:
    """A graphviz.Digraph of the graph computing `symbol`: one node per op and input, an
    edge from each op back to its inputs, labelled with the tensor's shape (without the
    batch axis) when `shape` is given and its dtype when `dtype` is. Variables named like
    weights (*_weight, *_bias, *_gamma, ...) are not drawn; with hide_weights=False their
    edges are (Graphviz then draws them as plain ovals). `node_attrs` overrides the
    Graphviz attributes of every node. Save with `.render()` (needs Graphviz's `dot`)."""
    try:
        from graphviz import Digraph
    except ImportError as e:
        raise ImportError(
            "viz.plot_network needs the graphviz package: pip install 'nnvmpy[viz]'"
        ) from e
    _check_symbol(symbol, "plot_network")
    shapes = dtypes = None
    if shape is not None:
        shapes = _internal_outputs(symbol, "plot_network", "shape", shape)
    if dtype is not None:
        dtypes = _internal_outputs(symbol, "plot_network", "type", dtype)
    nodes = json.loads(symbol.tojson())["nodes"]
    _warn_repeated_names(nodes)
    base_attrs = {**_DEFAULT_NODE_ATTRS, **(node_attrs or {})}
    dot = Digraph(name=title, format=save_format)
    undrawn: set[str] = set()
    for node in nodes:
        attrs = dict(base_attrs)
        if node["op"] == "null":
            if node["name"].endswith(_WEIGHT_SUFFIXES):
                if hide_weights:
                    undrawn.add(node["name"])
                continue
            label, kind = node["name"], "input"
            attrs["shape"] = "oval"
        else:
            label, kind = _node_look(node)
        dot.node(name=node["name"], label=label, fillcolor=_COLORS[kind], **attrs)
    for node in nodes:
        if node["op"] == "null":
            continue
        entries = node["inputs"]
        if node["op"] == "_contrib_BilinearResize2D":
            entries = entries[:1]  # its second input only lends a shape
        for entry in entries:
            src = nodes[entry[0]]
            if src["name"] in undrawn:
                continue
            label = ""
            if shapes is not None:
                label = "x".join(str(d) for d in shapes[_edge_key(src)][1:])
            if dtypes is not None:
                label += f"({np.dtype(dtypes[_edge_key(src)]).type.__name__})"
            dot.edge(node["name"], src["name"], dir="back", arrowtail="open", label=label)
    return dot
