"""FGradient for the backward ops of unary math: gradients of gradients (create_graph=True).

A unary backward op computes B(dy, v) = dy * h(v), where v is the forward input x
(h = f') or the forward output y (h = f' written in terms of y). With g flowing into
B's output:

    dB/d(dy) = g * h(v)          = B(g, v)          the same backward op again
    dB/dv    = g * dy * h'(v)    = B2(g, dy, v)     one fused kernel per op

B2 is registered as `_backward_<B>` (e.g. `_backward__backward_sin`), MXNet's naming for
the backward of an op. When v is y, the Gradient pass carries dB/dy on to x through the
forward op's own gradient, so the chain rule needs nothing more here.

B2 is differentiable in turn where the op gives h'' built from registered ops
(a ThirdDerivative): with G flowing into B2's output,

    dB2/dg    = G * dy * h'(v)   = B2(G, dy, v)
    dB2/d(dy) = G * g * h'(v)    = B2(G, g, v)
    dB2/dv    = G * g * dy * h''(v)          elemwise_mul of those, and of h''(v)

Every node there is differentiable again (B2 by this rule, h''(v) by its ops' own
gradients), so gradients of any order follow: sin's third derivative is -cos, whose
gradient is cos's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..graph.grad import GradientFn, make_node
from ..graph.node import Node, NodeEntry

ZERO = "zero"  # a derivative that is zero everywhere (piecewise-linear gradients)

#: h''(v) for dB2/dv: a builder (v, name) -> entry made of registered differentiable ops,
#: a constant, or ZERO
ThirdDerivative = Callable[[NodeEntry, str], NodeEntry] | float | str


def apply(op_name: str, name: str, *inputs: NodeEntry, **attrs: Any) -> NodeEntry:
    """Output 0 of a new node applying `op_name` to `inputs` (for ThirdDerivative builders)."""
    return NodeEntry(make_node(op_name, name, list(inputs), attrs), 0)


def unary_chain(*op_names: str) -> ThirdDerivative:
    """h''(v) = op_n(...op_1(v)), e.g. unary_chain("cos", "negative") is -cos(v)."""

    def build(v: NodeEntry, name: str) -> NodeEntry:
        for i, op_name in enumerate(op_names):
            v = apply(op_name, f"{name}{i}_{op_name}", v)
        return v

    return build


def reciprocal_power(
    coeff: float, n: int, shift: float = 0.0, times: str | None = None
) -> ThirdDerivative:
    """h''(v) = coeff / (v + shift)^n, from reciprocal, elemwise_mul and _mul_scalar; with
    `times` (a unary op), coeff * times(v) / (v + shift)^n: x^-7/2 is rsqrt(x) / x^3."""

    def build(v: NodeEntry, name: str) -> NodeEntry:
        base = apply("_plus_scalar", f"{name}_shift", v, scalar=shift) if shift else v
        r = apply("reciprocal", f"{name}_r", base)
        power = r
        for i in range(1, n):
            power = apply("elemwise_mul", f"{name}_r{i + 1}", power, r)
        if times is not None:
            power = apply("elemwise_mul", f"{name}_times", power, apply(times, f"{name}_t", v))
        return apply("_mul_scalar", f"{name}_coeff", power, scalar=float(coeff))

    return build


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


def unary_second_gradient(third: ThirdDerivative) -> GradientFn:
    """FGradient of a second-order op B2(g, dy, v) = g * dy * h'(v), given h''(v)."""

    def gradient(node: Node, ograds: list[NodeEntry]) -> list[NodeEntry]:
        big_g = ograds[0]
        g, dy, v = node.inputs[0], node.inputs[1], node.inputs[2]
        op_name, attrs, name = node.op.name, node.attrs.dict, node.name  # type: ignore[union-attr]
        d_g = apply(op_name, f"{name}_dg", big_g, dy, v, **attrs)
        d_dy = apply(op_name, f"{name}_ddy", big_g, g, v, **attrs)
        if third == ZERO:
            return [d_g, d_dy, apply("zeros_like", f"{name}_dv", v)]
        scale = apply(
            "elemwise_mul", f"{name}_dv_scale", apply("elemwise_mul", f"{name}_Gg", big_g, g), dy
        )
        if callable(third):
            d_v = apply("elemwise_mul", f"{name}_dv", scale, third(v, f"{name}_h2"))
        else:
            d_v = apply("_mul_scalar", f"{name}_dv", scale, scalar=float(third))
        return [d_g, d_dy, d_v]

    return gradient


def second_name(backward_op: str) -> str:
    """The name of the op differentiating `backward_op` w.r.t. its second input."""
    return f"_backward_{backward_op}"


__all__ = [
    "ZERO",
    "ThirdDerivative",
    "apply",
    "reciprocal_power",
    "second_name",
    "unary_backward_gradient",
    "unary_chain",
    "unary_second_gradient",
]
