"""FGradient for the backward op of a bilinear forward op (dot, batch_dot, broadcast_mul, ...).

For y = f(a, b) linear in a and in b, the backward op B(dy, a, b) = (da, db) returns the
adjoints da = f_a*(dy), db = f_b*(dy). With gradients (ga, gb) flowing into da and db,
adjointness (<ga, f_a*(dy)> = <f(ga, b), dy>) gives the gradients of B's inputs as the
same two ops again, whatever the transposes, flattening or broadcasting:

    d dy = f(ga, b) + f(a, gb)
    d a  = B(dy, a, gb)[0]        (da with b replaced by gb)
    d b  = B(dy, ga, b)[1]        (db with a replaced by ga)

So these backward ops become differentiable (autograd.grad(create_graph=True)) with no
new kernels. The new backward nodes keep the forward node as control dependency 0, which
gives them their output shapes, as the first backward node had.
"""

from __future__ import annotations

from ..graph.grad import GradientFn, make_node
from ..graph.node import Node, NodeEntry


def bilinear_backward_gradient(forward_op: str) -> GradientFn:
    """FGradient of `_backward_<forward_op>`, whose inputs are (dy, a, b) and outputs
    (da, db); the forward op takes the same attributes."""

    def gradient(node: Node, ograds: list[NodeEntry]) -> list[NodeEntry]:
        dy, a, b = node.inputs
        ga, gb = ograds[0], ograds[1]
        attrs, name, fwd = node.attrs.dict, node.name, node.control_deps[:1]
        left = make_node(forward_op, f"{name}_ga_b", [ga, b], attrs)
        right = make_node(forward_op, f"{name}_a_gb", [a, gb], attrs)
        d_dy = make_node("elemwise_add", f"{name}_ddy", [NodeEntry(left, 0), NodeEntry(right, 0)])
        d_a = make_node(node.op.name, f"{name}_da", [dy, a, gb], attrs, fwd)  # type: ignore[union-attr]
        d_b = make_node(node.op.name, f"{name}_db", [dy, ga, b], attrs, fwd)  # type: ignore[union-attr]
        return [NodeEntry(d_dy, 0), NodeEntry(d_a, 0), NodeEntry(d_b, 1)]

    return gradient


__all__ = ["bilinear_backward_gradient"]
