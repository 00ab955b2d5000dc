"""Node and NodeEntry: the vertices of a computation graph and the edges between outputs.

A Node is an op application (or a variable when op is None); a NodeEntry names one
output of one node. Nodes are compared by identity, as NNVM compares NodePtrs.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ..registry import NodeAttrs, Op


class Node:
    """One operator application, or a variable (op None) that stands for an input."""

    __slots__ = ("__weakref__", "attrs", "control_deps", "info", "inputs")

    def __init__(
        self,
        attrs: NodeAttrs,
        inputs: list[NodeEntry] | None = None,
        control_deps: list[Node] | None = None,
    ) -> None:
        self.attrs = attrs
        self.inputs: list[NodeEntry] = list(inputs or [])
        self.control_deps: list[Node] = list(control_deps or [])
        self.info: dict[str, Any] = {}  # free slot for passes (e.g. the forward node id)

    @property
    def op(self) -> Op | None:
        return self.attrs.op

    @property
    def name(self) -> str:
        return self.attrs.name

    def is_variable(self) -> bool:
        return self.attrs.op is None

    def num_inputs(self) -> int:
        return 0 if self.attrs.op is None else self.attrs.op.get_num_inputs(self.attrs)

    def num_outputs(self) -> int:
        return 1 if self.attrs.op is None else self.attrs.op.get_num_outputs(self.attrs)

    def __repr__(self) -> str:
        op = "null" if self.attrs.op is None else self.attrs.op.name
        return f"Node({self.attrs.name!r}, op={op})"

    @staticmethod
    def variable(name: str, attrs: Mapping[str, str] | None = None) -> Node:
        return Node(NodeAttrs(None, name, attrs))


class NodeEntry:
    """Output `index` of `node` (and a version counter for variables, as in NNVM)."""

    __slots__ = ("index", "node", "version")

    def __init__(self, node: Node, index: int = 0, version: int = 0) -> None:
        self.node = node
        self.index = index
        self.version = version

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, NodeEntry)
            and other.node is self.node
            and other.index == self.index
            and other.version == self.version
        )

    def __hash__(self) -> int:
        return hash((id(self.node), self.index, self.version))

    def __iter__(self) -> Iterator[Any]:  # allows `node, index, version = entry`
        return iter((self.node, self.index, self.version))

    def __repr__(self) -> str:
        return f"NodeEntry({self.node.name!r}, {self.index})"


def _preds(node: Node) -> list[Node]:
    """The nodes `node` waits for: its control dependencies, then its inputs' nodes."""
    if node.control_deps:
        return [*node.control_deps, *[e.node for e in node.inputs]]
    return [e.node for e in node.inputs]  # most nodes: no generator to unpack


def post_order(heads: list[NodeEntry] | list[Node]) -> list[Node]:
    """Every node reachable from heads, inputs before users (control deps first too)."""
    order: list[Node] = []
    seen: set[Node] = set()  # nodes hash by identity
    for head in heads:
        root = head.node if isinstance(head, NodeEntry) else head
        if root in seen:
            continue
        # iterative DFS: a deep chain (ResNet backward) must not hit the recursion limit;
        # each frame holds its node and an iterator over the predecessors left to visit
        seen.add(root)
        stack = [(root, iter(_preds(root)))]
        while stack:
            node, todo = stack[-1]
            for nxt in todo:
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, iter(_preds(nxt))))
                    break
            else:
                stack.pop()
                order.append(node)
    return order
