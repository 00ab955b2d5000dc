"""Cut the graph a user function built into a subgraph of a control-flow op.

sym.contrib.foreach / while_loop / cond call the user's function inside
`AttrScope(__subgraph_name__=<unique name>)`, as MXNet does, so every node the function
makes carries that attribute. Walking back from the function's outputs, a node with the
attribute (or one of the loop variables made for the call) belongs to the subgraph; any
other entry — an outer variable, or an op computed outside — is cut: the subgraph reads
it through a new variable, and the control-flow node takes the outer entry as an input.
A variable the function itself made (an RNN cell's weight) is an input as well.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from ..graph.graph import Graph
from ..graph.node import Node, NodeEntry, post_order
from ..registry import NodeAttrs

SUBGRAPH_ATTR = "__subgraph_name__"

_counter = itertools.count()


def unique_subgraph_name(name: str) -> str:
    """A name no other subgraph made in this process has."""
    return f"{name}{next(_counter)}"


def cut_subgraph(
    heads: Sequence[NodeEntry], scope: str, loop_vars: Sequence[Node]
) -> tuple[Graph, list[NodeEntry | None]]:
    """(subgraph, per subgraph input in graph order: the outer entry feeding it, or None
    for a loop variable). The user's nodes are copied, never changed."""
    own = {id(v) for v in loop_vars}
    copies: dict[int, Node] = {id(v): v for v in loop_vars}
    cut_vars: dict[tuple[int, int], Node] = {}
    outer: dict[int, NodeEntry] = {}  # id(cut variable) -> the outer entry
    used_names = {v.name for v in loop_vars}

    def inside(node: Node) -> bool:
        return id(node) in own or (
            not node.is_variable() and node.attrs.dict.get(SUBGRAPH_ATTR) == scope
        )

    def cut(entry: NodeEntry) -> NodeEntry:
        key = (id(entry.node), entry.index)
        var = cut_vars.get(key)
        if var is None:
            node = entry.node
            base = node.name if node.num_outputs() == 1 else f"{node.name}_output{entry.index}"
            name, n = base, 0
            while name in used_names:
                n += 1
                name = f"{base}_{n}"
            used_names.add(name)
            attrs = dict(node.attrs.dict) if node.is_variable() else {}
            attrs.pop(SUBGRAPH_ATTR, None)
            var = Node.variable(name, attrs)
            cut_vars[key] = var
            outer[id(var)] = NodeEntry(entry.node, entry.index, entry.version)
        return NodeEntry(var)

    def copy_entry(entry: NodeEntry) -> NodeEntry:
        if inside(entry.node):
            return NodeEntry(copies[id(entry.node)], entry.index, entry.version)
        return cut(entry)

    inner = [n for n in _inner_nodes(heads, inside) if id(n) not in own]
    for node in inner:
        attrs = NodeAttrs(node.op, node.name, None, node.attrs.parsed)
        attrs.dict = dict(node.attrs.dict)
        new = Node(attrs, [copy_entry(e) for e in node.inputs])
        new.control_deps = [copies[id(d)] for d in node.control_deps if id(d) in copies]
        copies[id(node)] = new
    graph = Graph([copy_entry(h) for h in heads])
    idx = graph.indexed
    feeds = [outer.get(id(idx.nodes[nid])) for nid in idx.input_nodes]
    return graph, feeds


def _inner_nodes(heads: Sequence[NodeEntry], inside: Any) -> list[Node]:
    """The subgraph's own nodes, inputs first (the walk stops at cut entries)."""
    order: list[Node] = []
    seen: set[int] = set()
    stack = [h.node for h in heads if inside(h.node)]
    reach: set[int] = set()
    while stack:
        node = stack.pop()
        if id(node) in reach:
            continue
        reach.add(id(node))
        stack.extend(e.node for e in node.inputs if inside(e.node))
        stack.extend(d for d in node.control_deps if inside(d))
    for node in post_order(list(heads)):
        if id(node) in reach and id(node) not in seen:
            seen.add(id(node))
            order.append(node)
    return order


__all__ = ["SUBGRAPH_ATTR", "cut_subgraph", "unique_subgraph_name"]
