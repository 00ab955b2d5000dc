"""Building blocks for FGradient: make nodes and the standard element-wise gradient rules."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..registry import Op
from .node import Node, NodeEntry

GradientFn = Callable[[Node, list[NodeEntry]], list[NodeEntry]]


def make_node(
    op_name: str,
    name: str,
    inputs: list[NodeEntry],
    attrs_dict: Mapping[str, Any] | None = None,
    control_deps: list[Node] | None = None,
) -> Node:
    """A new node applying op `op_name` to `inputs`, with parsed attributes."""
    op = Op.get(op_name)
    return Node(op.parse_attrs(attrs_dict or {}, name), inputs, control_deps)


def make_grad_node(
    op_name: str, node: Node, heads: list[NodeEntry], attrs_dict: Mapping[str, Any] | None = None
) -> list[NodeEntry]:
    """The backward node of `node` (named '<node>_backward'); one entry per output.

    The forward node is kept as control dependency 0, which is how TIsBackward ops find
    the shapes and types of the forward inputs they produce gradients for.
    """
    grad = make_node(
        op_name,
        f"{node.name}_backward",
        heads,
        node.attrs.dict if attrs_dict is None else attrs_dict,
        [node],
    )
    return [NodeEntry(grad, i) for i in range(grad.num_outputs())]


def make_zero_grad_nodes(node: Node, ograds: list[NodeEntry]) -> list[NodeEntry]:
    """Zero gradients for every input (for ops whose output does not depend on them)."""
    return [
        NodeEntry(make_node("zeros_like", f"{node.name}_in{i}_zero_grad", [e]), 0)
        for i, e in enumerate(node.inputs)
    ]


def ElemwiseGradUseIn(op_name: str) -> GradientFn:  # MXNet's name
    """Gradient node fed with (ograds..., inputs...): dx = f(dy, x)."""

    def grad(node: Node, ograds: list[NodeEntry]) -> list[NodeEntry]:
        return make_grad_node(op_name, node, [*ograds, *node.inputs])

    return grad


def ElemwiseGradUseOut(op_name: str) -> GradientFn:
    """Gradient node fed with (ograds..., outputs...): dx = f(dy, y)."""

    def grad(node: Node, ograds: list[NodeEntry]) -> list[NodeEntry]:
        n_vis = len(ograds)
        outs = [NodeEntry(node, i) for i in range(n_vis)]
        return make_grad_node(op_name, node, [*ograds, *outs])

    return grad


def ElemwiseGradUseInOut(op_name: str) -> GradientFn:
    """Gradient node fed with (ograds..., inputs..., outputs...)."""

    def grad(node: Node, ograds: list[NodeEntry]) -> list[NodeEntry]:
        outs = [NodeEntry(node, i) for i in range(len(ograds))]
        return make_grad_node(op_name, node, [*ograds, *node.inputs, *outs])

    return grad


def ElemwiseGradUseNone(op_name: str) -> GradientFn:
    """Gradient node fed with ograds only: dx = f(dy)."""

    def grad(node: Node, ograds: list[NodeEntry]) -> list[NodeEntry]:
        return make_grad_node(op_name, node, list(ograds))

    return grad
