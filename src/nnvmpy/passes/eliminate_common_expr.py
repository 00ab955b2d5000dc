"""EliminateCommonExpr: one node for each computation the graph spells twice (MXNet's CSE).

Two op nodes are merged when they apply the same op, with the same attributes, to the
same inputs (after earlier merges), and the op is pure: it mutates no input, holds no
state (FCreateOpState) and asks for no resource (a random or temp-space request may make
two calls differ). Graph outputs that end up as the same entry get a `_copy` each after
the first, so every output keeps its own array, as MXNet does.

The pass builds a new graph and never edits the nodes it was given (they belong to the
caller's symbols); untouched nodes are shared. Provides `cse_copied_from`: {new node: the
given node it copies}, for nodes copied because an input became a merged node (the same
op and attributes, so the same shapes and types: Graph.seed_entry_values carries them
over).

>>> import nnvmpy as nv
>>> from nnvmpy.graph import Graph, apply_passes
>>> a, b = nv.sym.var("a"), nv.sym.var("b")
>>> s = (a + b) * (a + b)
>>> g = apply_passes(Graph(s._heads), ["EliminateCommonExpr"])
>>> g.indexed.num_nodes  # a, b, one add, the mul
4
"""

from __future__ import annotations

from typing import Any

from ..attrs import FCreateOpState, FMutateInputs, FResourceRequest
from ..graph.graph import Graph
from ..graph.node import Node, NodeEntry, post_order
from ..graph.pass_registry import register_pass
from ..registry import NodeAttrs, Op

#: provided: {new node: the given node it copies} for nodes copied because an input or a
#: control dependency became another node
CSE_COPIED_FROM = "cse_copied_from"


def _mergeable(node: Node) -> bool:
    op = node.op
    if op is None:
        return False
    return not any(op.get_attr(key) is not None for key in _IMPURE)


_IMPURE = (FMutateInputs, FCreateOpState, FResourceRequest)


@register_pass(
    "EliminateCommonExpr",
    provides=(CSE_COPIED_FROM,),
    op_attrs=(FMutateInputs, FCreateOpState, FResourceRequest),
)
def eliminate_common_expr(graph: Graph) -> Graph:
    """A graph computing the same outputs with duplicate pure nodes merged."""
    new_of: dict[int, Node] = {}
    seen: dict[Any, Node] = {}
    copied_from: dict[Node, Node] = {}
    for node in post_order(graph.outputs):
        inputs = [NodeEntry(new_of[id(e.node)], e.index, e.version) for e in node.inputs]
        deps = [new_of[id(d)] for d in node.control_deps]
        key = None
        if _mergeable(node):
            key = (
                node.op,
                tuple(sorted(node.attrs.dict.items())),
                tuple((id(e.node), e.index, e.version) for e in inputs),
                tuple(id(d) for d in deps),
            )
            if key in seen:
                new_of[id(node)] = seen[key]
                continue
        same = all(a.node is b.node for a, b in zip(inputs, node.inputs)) and all(
            a is b for a, b in zip(deps, node.control_deps)
        )
        new = node if same else _renode(node, inputs, deps)
        new_of[id(node)] = new
        if not same:
            copied_from[new] = node
        if key is not None:
            seen[key] = new
    outputs = [NodeEntry(new_of[id(h.node)], h.index, h.version) for h in graph.outputs]
    result = Graph(_distinct(outputs), graph.attrs)
    result.attrs[CSE_COPIED_FROM] = copied_from
    return result


def _renode(node: Node, inputs: list[NodeEntry], deps: list[Node]) -> Node:
    attrs = NodeAttrs(node.op, node.name, None, node.attrs.parsed)
    attrs.dict = dict(node.attrs.dict)
    new = Node(attrs, inputs, deps)
    new.info = dict(node.info)
    return new


def _distinct(outputs: list[NodeEntry]) -> list[NodeEntry]:
    """Outputs with a `_copy` for each repeat of an entry (`<node>_<i>_copy`)."""
    copy_op = Op.get("_copy")
    repeats: dict[NodeEntry, int] = {}
    result = []
    for entry in outputs:
        if entry not in repeats:
            repeats[entry] = 0
            result.append(entry)
            continue
        name = f"{entry.node.name}_{repeats[entry]}_copy"
        repeats[entry] += 1
        copy = Node(copy_op.parse_attrs({}, name), [entry])
        result.append(NodeEntry(copy, 0))
    return result


__all__ = ["CSE_COPIED_FROM", "eliminate_common_expr"]
