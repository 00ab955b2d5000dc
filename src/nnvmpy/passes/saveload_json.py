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
    return dumps(_graph_document(graph))


def _graph_document(graph: Graph) -> dict[str, Any]:
    """The JSON document of `graph` as dicts and lists (a subgraph nests one per node)."""
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
        subgraphs = getattr(node.attrs.parsed, "subgraphs", None)  # control-flow ops
        if subgraphs:
            item["subgraphs"] = [_graph_document(g) for g in subgraphs]
        nodes.append(item)
    return {
        "nodes": nodes,
        "arg_nodes": list(idx.input_nodes),
        "node_row_ptr": list(idx.node_row_ptr),
        "heads": as_triples(idx.outputs),
        "attrs": _graph_attrs_json(graph.attrs),
    }


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
#
# A symbol file is untrusted input: every field is checked for its type and range before
# it is used, and every problem raises NNVMError naming the node (index and name), the
# field and what was expected. Inputs may only refer to earlier nodes, so a file cannot
# describe a cycle.

_ENTRY = "[node_id, output_index, version] of non-negative ints"
_TOP = "not a symbol JSON document: the top level"


def graph_from_json(text: str) -> Graph:
    """The graph in an MXNet symbol JSON string (any MXNet 0.8 - 1.9 file)."""
    if not isinstance(text, str):
        raise NNVMError(f"LoadJSON: expected the JSON text as a str, got {type(text).__name__}")
    try:
        data = json.loads(text)
    except ValueError as e:
        raise NNVMError(f"LoadJSON: not a symbol JSON document (invalid JSON: {e})") from None
    except RecursionError:
        raise NNVMError("LoadJSON: not a symbol JSON document: nested too deeply") from None
    if not isinstance(data, dict):
        raise NNVMError(
            f"LoadJSON: not a symbol JSON document: the top level is a {_kind(data)}, "
            'expected an object with "nodes" and "heads"'
        )
    nodes_json = _field(data, "nodes", list, _TOP)
    heads_json = _field(data, "heads", list, _TOP)
    attrs = _graph_attrs(data.get("attrs"))
    version = attrs.get(MXNET_VERSION, 800)
    nodes: list[Node] = []
    for nid, node_json in enumerate(nodes_json):
        nodes.append(_load_node(node_json, nid, nodes, version))
    heads = [_load_entry(nodes, e, f"heads[{i}]") for i, e in enumerate(heads_json)]
    _check_arg_nodes(data.get("arg_nodes"), nodes)
    return Graph(heads, attrs)


def _kind(value: Any) -> str:
    """A JSON value's type as the format's documentation says it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    return {dict: "object", list: "array", str: "string", int: "integer", float: "number"}.get(
        type(value), type(value).__name__
    )


def _field(obj: Mapping[str, Any], key: str, typ: type, where: str) -> Any:
    if key not in obj:
        raise NNVMError(f'LoadJSON: {where} has no "{key}" field')
    value = obj[key]
    if not isinstance(value, typ):
        expected = "an array" if typ is list else f"a {_kind(typ())}"
        raise NNVMError(f'LoadJSON: {where}: "{key}" should be {expected}, got {value!r:.80}')
    return value


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _graph_attrs(raw: Any) -> dict[str, Any]:
    """The file's graph attributes, {"name": [type, value]}, each checked against its type."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise NNVMError(f'LoadJSON: graph "attrs" should be an object, got {raw!r:.80}')
    attrs = {k: _untag(k, v) for k, v in raw.items()}
    if MXNET_VERSION in attrs and not _is_int(attrs[MXNET_VERSION]):
        raise NNVMError(
            f"LoadJSON: graph attribute '{MXNET_VERSION}' should be an int, "
            f"got {attrs[MXNET_VERSION]!r:.80}"
        )
    return attrs


_PAYLOAD_CHECKS = {
    "int": (_is_int, "an int"),
    "size_t": (lambda v: _is_int(v) and v >= 0, "a non-negative int"),
    "str": (lambda v: isinstance(v, str), "a string"),
    "list_int": (lambda v: isinstance(v, list) and all(map(_is_int, v)), "a list of ints"),
    "list_str": (
        lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
        "a list of strings",
    ),
    "list_shape": (
        lambda v: (
            isinstance(v, list) and all(isinstance(s, list) and all(map(_is_int, s)) for s in v)
        ),
        "a list of shapes (lists of ints)",
    ),
}


def _untag(key: str, value: Any) -> Any:
    if not (isinstance(value, list) and len(value) == 2 and isinstance(value[0], str)):
        raise NNVMError(
            f"LoadJSON: graph attribute '{key}' should be [type, value], got {value!r:.80}"
        )
    kind, payload = value
    check = _PAYLOAD_CHECKS.get(kind)
    if check is not None and not check[0](payload):
        raise NNVMError(
            f"LoadJSON: graph attribute '{key}' of type '{kind}' should be {check[1]}, "
            f"got {payload!r:.80}"
        )
    if kind == "list_shape":
        return [tuple(s) for s in payload]
    return payload


def _check_arg_nodes(arg_nodes: Any, nodes: list[Node]) -> None:
    """MXNet writes the variables' node ids; a file may leave them out, not get them wrong."""
    if arg_nodes is None:
        return
    if not isinstance(arg_nodes, list) or not all(map(_is_int, arg_nodes)):
        raise NNVMError(
            f'LoadJSON: "arg_nodes" should be a list of node ids, got {arg_nodes!r:.80}'
        )
    for nid in arg_nodes:
        if not 0 <= nid < len(nodes):
            raise NNVMError(
                f'LoadJSON: "arg_nodes" names node {nid}, but the file has {len(nodes)} nodes'
            )


def _load_node(node_json: Any, nid: int, nodes: list[Node], version: int) -> Node:
    if not isinstance(node_json, dict):
        raise NNVMError(f"LoadJSON: node {nid} should be an object, got {node_json!r:.80}")
    name = node_json.get("name", "")
    if not isinstance(name, str):
        raise NNVMError(f'LoadJSON: node {nid}: "name" should be a string, got {name!r:.80}')
    where = f"node '{name}'" if name else f"node #{nid}"
    op_name = node_json.get("op", "null")
    if not isinstance(op_name, str):
        raise NNVMError(f'LoadJSON: {where}: "op" should be a string, got {op_name!r:.80}')
    attrs_dict = _node_attrs(node_json, where)
    hidden: dict[str, str] = {}
    if version < legacy.CURRENT_VERSION:
        attrs_dict, hidden = legacy.split_hidden(attrs_dict)
    inputs_json = _optional_list(node_json, "inputs", where)
    deps_json = _optional_list(node_json, "control_deps", where)
    inputs = [_load_entry(nodes, e, f"{where} input {i}") for i, e in enumerate(inputs_json)]
    deps = [_node_at(nodes, d, f"{where} control dependency") for d in deps_json]
    if op_name == "null":
        node = Node(NodeAttrs(None, name, attrs_dict), inputs, deps)
        if inputs:
            raise NNVMError(f"LoadJSON: {where} is a variable (op null) but has inputs")
    else:
        node = Node(_parse_attrs(op_name, attrs_dict, name, where), inputs, deps)
    _load_subgraphs(node, _optional_list(node_json, "subgraphs", where), where)
    try:
        legacy.restore_hidden(node, hidden)
        legacy.upgrade_node(node, version)
        n_in = node.num_inputs()
    except NNVMError as e:
        raise NNVMError(f"LoadJSON: {where} ({op_name}): {e}") from e
    if node.op is not None and len(node.inputs) != n_in:
        raise NNVMError(
            f"LoadJSON: {where} ({op_name}) has {len(node.inputs)} inputs "
            f"but the op takes {n_in} with these attributes"
        )
    return node


def _load_subgraphs(node: Node, subgraphs_json: list[Any], where: str) -> None:
    """A control-flow node's subgraphs, kept in attrs.parsed.subgraphs (NNVM's
    NodeAttrs::subgraphs)."""
    if not subgraphs_json:
        return
    if not hasattr(node.attrs.parsed, "subgraphs"):
        raise NNVMError(f"LoadJSON: {where} has subgraphs but its op takes none")
    graphs = []
    for i, sub in enumerate(subgraphs_json):
        try:
            graphs.append(graph_from_json(json.dumps(sub)))
        except NNVMError as e:
            raise NNVMError(f"LoadJSON: {where} subgraph {i}: {e}") from e
    node.attrs.parsed.subgraphs = graphs


def _optional_list(node_json: Mapping[str, Any], key: str, where: str) -> list[Any]:
    value = node_json.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise NNVMError(f'LoadJSON: {where}: "{key}" should be an array, got {value!r:.80}')
    return value


def _node_attrs(node_json: Mapping[str, Any], where: str) -> dict[str, str]:
    """ "param", "attr" and "attrs" merged; each an object of string (or number) values."""
    for key in ("param", "attr", "attrs"):
        raw = node_json.get(key)
        if raw is None:
            continue
        if not isinstance(raw, dict):
            raise NNVMError(f'LoadJSON: {where}: "{key}" should be an object, got {raw!r:.80}')
        for k, v in raw.items():
            if not isinstance(v, str | int | float) or isinstance(v, bool):
                raise NNVMError(
                    f"LoadJSON: {where}: attribute '{k}' should be a string, got {v!r:.80}"
                )
    return legacy.node_dict(node_json)


def _parse_attrs(op_name: str, attrs_dict: dict[str, str], name: str, where: str) -> NodeAttrs:
    try:
        op = Op.get(op_name)
    except NNVMError as e:
        raise NNVMError(f"LoadJSON: {where} uses {e}") from e
    try:
        return op.parse_attrs(attrs_dict, name)  # keeps every string, dunder keys included
    except Exception as e:
        raise NNVMError(
            f"LoadJSON: {where} ({op_name}) has attributes the op does not accept: {e}"
        ) from e


def _node_at(nodes: list[Node], nid: Any, where: str) -> Node:
    if not _is_int(nid) or not 0 <= nid < len(nodes):
        raise NNVMError(
            f"LoadJSON: {where} refers to node {nid!r:.40}, which is not an earlier "
            f"node (0..{len(nodes) - 1}); nodes must be in topological order"
        )
    return nodes[nid]


def _load_entry(nodes: list[Node], entry: Any, where: str) -> NodeEntry:
    if (
        not isinstance(entry, list)
        or len(entry) not in (2, 3)
        or not all(map(_is_int, entry))
        or min(entry) < 0
    ):
        raise NNVMError(f"LoadJSON: {where} is {entry!r:.80}; expected {_ENTRY}")
    node = _node_at(nodes, entry[0], where)
    index, version = entry[1], entry[2] if len(entry) == 3 else 0
    n_out = node.num_outputs()
    if index >= n_out:
        raise NNVMError(
            f"LoadJSON: {where} reads output {index} of '{node.name}' (node {entry[0]}), "
            f"which has {n_out} output{'s' if n_out != 1 else ''}"
        )
    return NodeEntry(node, index, version)


__all__ = ["graph_from_json", "graph_to_json", "load_json", "save_json"]
