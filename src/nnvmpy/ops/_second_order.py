"""FGradient for the backward ops of unary math: gradients of gradients (create_graph=True).

A unary backward op computes B(dy, v) = dy * h(v), where v is the forward input x
(h = f') or the forward output y (h = f' written in terms of y). With g flowing into
B's output:

    dB/d(dy) = g * h(v)          = B(g, v)          the same backward op again
    dB/dv    = g * dy * h'(v)    = B2(g, dy, v)     one fused kernel per op

B2 is registered as `_backward_<B>` (e.g. `_backward__backward_sin`), MXNet's naming for
the backward of an op. When v is y, the Gradient pass carries dB/dy on to x through the
forward op's own gradient, so the chain rule needs nothing more here.
"""

from __future__ import annotations

from ..graph.grad import GradientFn, make_node
from ..graph.node import Node, NodeEntry


def unary_backward_gradient(second: str | None) -> GradientFn:
    """FGradient of a unary backward op (dy, v) -> dy * h(v); `second` is the op computing
    g * dy * h'(v) from (g, dy, v), or None where h' is zero (piecewise-linear ops)."""

    def gradient(node: Node, ograds: list[NodeEntry]) -> list[NodeEntry]:
        g = ograds[0]
        dy, v = node.inputs[0], node.inputs[1]
        attrs = node.attrs.dict
        again = make_node(node.op.name, f"{node.name}_ddy", [g, v], attrs)  # type: ignore[union-attr]
        if second is None:
            d_v = make_node("zeros_like", f"{node.name}_dv", [v])
        else:
            d_v = make_node(second, f"{node.name}_dv", [g, dy, v], attrs)
        return [NodeEntry(again, 0), NodeEntry(d_v, 0)]

    return gradient


def second_name(backward_op: str) -> str:
    """The name of the op differentiating `backward_op` w.r.t. its second input."""
    return f"_backward_{backward_op}"


__all__ = ["second_name", "unary_backward_gradient"]
