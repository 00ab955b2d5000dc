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


#: ops whose output is known to be all zeros (MXNet's zero_ops for CheckGradAllZero)
ZERO_OPS = ("zeros_like", "_zeros")


def grads_all_zero(ograds: list[NodeEntry]) -> bool:
    """True when every output gradient is made by a zero op (e.g. behind BlockGrad)."""
    return bool(ograds) and all(
        g.node.op is not None and g.node.op.name in ZERO_OPS for g in ograds
    )


def _nonloss(
    op_name: str, inputs_of: Callable[[Node, list[NodeEntry]], list[NodeEntry]]
) -> GradientFn:
    """The backward node `op_name` on inputs_of(node, ograds) — or, when every output
    gradient is zero, zero input gradients without it (MXNet's MakeNonlossGradNode), so
    nothing behind a BlockGrad keeps forward values alive for backward."""

    def grad(node: Node, ograds: list[NodeEntry]) -> list[NodeEntry]:
        if grads_all_zero(ograds):
            return make_zero_grad_nodes(node, ograds)
        return make_grad_node(op_name, node, inputs_of(node, ograds))

    return grad


def _outputs(node: Node, n: int) -> list[NodeEntry]:
    return [NodeEntry(node, i) for i in range(n)]


def ElemwiseGradUseIn(op_name: str) -> GradientFn:  # MXNet's name
    """Gradient node fed with (ograds..., inputs...): dx = f(dy, x)."""
    return _nonloss(op_name, lambda node, ograds: [*ograds, *node.inputs])


def ElemwiseGradUseOut(op_name: str) -> GradientFn:
    """Gradient node fed with (ograds..., outputs...): dx = f(dy, y)."""
    return _nonloss(op_name, lambda node, ograds: [*ograds, *_outputs(node, len(ograds))])


def ElemwiseGradUseInOut(op_name: str) -> GradientFn:
    """Gradient node fed with (ograds..., inputs..., outputs...)."""
    return _nonloss(
        op_name, lambda node, ograds: [*ograds, *node.inputs, *_outputs(node, len(ograds))]
    )


def ElemwiseGradUseNone(op_name: str) -> GradientFn:
    """Gradient node fed with ograds only: dx = f(dy)."""
    return _nonloss(op_name, lambda node, ograds: list(ograds))
