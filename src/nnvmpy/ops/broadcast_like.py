"""broadcast_like: lhs broadcast to rhs's shape, or only some axes (lhs_axes/rhs_axes).

The forward is broadcast.py's `broadcast_map` of the identity; the gradient sums dy back
to lhs (the `_broadcast_backward` op broadcast_to uses) and is zero for rhs, whose values
are never read.
"""

from __future__ import annotations

from typing import Any

from ..attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FListInputNames,
)
from ..base import InferError, Shape
from ..graph.grad import make_grad_node, make_node
from ..graph.node import NodeEntry
from ..infer import elemwise_type, shape_assign, shape_is_known, shape_str
from ..param import Parameter, field
from ..param import Shape as ShapeField
from ..registry import NodeAttrs, register_op
from ._broadcast_map import broadcast_map
from .elemwise_unary import _identity


def _names(attrs: NodeAttrs) -> list[str]:
    return ["lhs", "rhs"]


class BroadcastLikeParam(Parameter):
    lhs_axes = field(
        ShapeField, default=None, describe="Axes to perform broadcast on in the first input array"
    )
    rhs_axes = field(ShapeField, default=None, describe="Axes to copy from the second input array")


def broadcast_like_shape(name: str, lhs: Shape, rhs: Shape, lhs_axes: Any, rhs_axes: Any) -> Shape:
    """lhs broadcast to rhs's shape; with axes, lhs dim lhs_axes[i] (which must be 1)
    becomes rhs dim rhs_axes[i]. None dims stay None."""
    if (lhs_axes is None) != (rhs_axes is None):
        raise InferError(f"{name}: 'lhs_axes' and 'rhs_axes' must be given together or not at all")
    if lhs_axes is None:
        if len(lhs) != len(rhs):
            raise InferError(
                f"{name}: operand of shape {shape_str(lhs)} cannot be broadcast to "
                f"{shape_str(rhs)}: 'lhs' and 'rhs' need the same number of dims"
            )
        out: list[int | None] = []
        for d, (i, o) in enumerate(zip(lhs, rhs)):
            if o is None:
                out.append(None if i in (None, 1) else i)
            elif i not in (None, 1, o):
                raise InferError(
                    f"{name}: operand of shape {shape_str(lhs)} cannot be broadcast to "
                    f"{shape_str(rhs)}: dim {d} is {i}, which is neither 1 nor {o}"
                )
            else:
                out.append(o)
        return tuple(out)
    if len(lhs_axes) == 0 or len(rhs_axes) == 0:
        raise InferError(
            f"{name}: empty 'lhs_axes' / 'rhs_axes' are not supported; leave both out to "
            "broadcast to rhs's whole shape"
        )
    if len(lhs_axes) != len(rhs_axes):
        raise InferError(
            f"{name}: 'lhs_axes' {shape_str(lhs_axes)} and 'rhs_axes' {shape_str(rhs_axes)} "
            "must have the same length"
        )
    shape = list(lhs)
    for la, ra in zip(lhs_axes, rhs_axes):
        for what, ax, dims in (("lhs_axes", la, lhs), ("rhs_axes", ra, rhs)):
            if not -len(dims) <= ax < len(dims):
                raise InferError(
                    f"{name}: '{what}' axis {ax} is out of range for shape {shape_str(dims)} "
                    f"(expected -{len(dims)} <= axis < {len(dims)})"
                )
        src = la % len(lhs)
        if lhs[src] not in (None, 1):
            raise InferError(
                f"{name}: 'lhs' axis {la} has size {lhs[src]} in {shape_str(lhs)}; a broadcast "
                "axis must have size 1"
            )
        shape[src] = rhs[ra % len(rhs)]
    return tuple(shape)


def _infer_broadcast_like(
    attrs: NodeAttrs, in_shapes: list[Shape | None], out_shapes: list[Shape | None]
) -> bool:
    name, p = attrs.op.name, attrs.parsed  # type: ignore[union-attr]
    lhs, rhs = in_shapes
    if lhs is None or rhs is None:
        return False
    out = broadcast_like_shape(name, lhs, rhs, p.lhs_axes, p.rhs_axes)
    shape_assign(out_shapes, 0, out, f"{name}: output 'output'")
    return all(shape_is_known(s) for s in (lhs, rhs, out_shapes[0]))


def _broadcast_like_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    """The output has lhs's dtype; rhs only lends its shape (any dtype)."""
    types = [in_types[0]]
    done = bool(elemwise_type(1, 1)(attrs, types, out_types))
    in_types[0] = types[0]
    return done and in_types[1] is not None


def _broadcast_like_compute(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    broadcast_map(_identity, ctx, outputs[0], req[0], inputs[0])


def _broadcast_like_grad(node: Any, ograds: list[Any]) -> list[Any]:
    """lhs: dy summed back over the broadcast axes; rhs lends only its shape: zero."""
    (dlhs,) = make_grad_node("_broadcast_backward", node, list(ograds), {"keepdims": "true"})
    drhs = make_node("zeros_like", f"{node.name}_rhs_backward", [node.inputs[1]])
    return [dlhs, NodeEntry(drhs, 0)]


(
    register_op("broadcast_like")
    .describe(
        "Broadcasts lhs to the shape of rhs; with lhs_axes/rhs_axes, only lhs's size-1 axes "
        "lhs_axes take the sizes of rhs's axes rhs_axes."
    )
    .set_attr_parser(BroadcastLikeParam)
    .set_num_inputs(2)
    .set_num_outputs(1)
    .set_attr(FListInputNames, _names)
    .set_attr(FInferShape, _infer_broadcast_like)
    .set_attr(FInferType, _broadcast_like_type)
    .set_attr(FCompute_cpu, _broadcast_like_compute)
    .set_attr(FCompute_gpu, _broadcast_like_compute)
    .set_attr(FGradient, _broadcast_like_grad)
    .add_argument("lhs", "NDArray-or-Symbol", "First input.")
    .add_argument("rhs", "NDArray-or-Symbol", "Second input.")
    .add_arguments(BroadcastLikeParam.fields())
)
