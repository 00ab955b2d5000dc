"""moments: the mean and the (biased) variance over axes, as MXNet's moments op.

mean = sum(x) / N and var = sum((x - mean)^2) / N over the `axes` (N elements each), two
passes for accuracy. Both outputs keep the input's dtype (float16 accumulates in float32,
as reduce.py's `reduce_to` does). The gradient:

    dx = dmean / N + dvar * 2 (x - mean) / N
"""

from __future__ import annotations

import math
from typing import Any

from .. import kernel
from ..attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FListOutputNames,
    FResourceRequest,
    TIsBackward,
)
from ..base import InferError, OpReqType, Shape
from ..graph.grad import make_grad_node
from ..graph.node import NodeEntry
from ..infer import elemwise_type, shape_assign, shape_is_known
from ..kernel.elementwise import req_mode
from ..param import Parameter, field
from ..param import Shape as ShapeField
from ..registry import NodeAttrs, register_op
from ..resource import ResourceRequest
from ._broadcast_map import broadcast_map
from .elemwise_scalar import _mul as _scale
from .elemwise_unary import _identity
from .reduce import reduce_shape, reduce_to, reduced_axes


class MomentsParam(Parameter):
    axes = field(
        ShapeField,
        default=None,
        describe="Array of ints. Axes along which to compute mean and variance.",
    )
    keepdims = field(
        bool,
        default=False,
        describe="produce moments with the same dimensionality as the input.",
    )


@kernel.elementwise
def _square_diff(x, m):  # (x - mean)^2
    d = x - m
    return d * d


@kernel.elementwise
def _centered(x, m, c):  # c (x - mean)
    return c * (x - m)


def _axes(attrs: NodeAttrs, shape: Shape) -> tuple[int, ...]:
    name, axes = attrs.op.name, attrs.parsed.axes  # type: ignore[union-attr]
    if axes is None or len(axes) == 0:
        raise InferError(
            f"{name}: 'axes' is empty; for the moments of the whole array pass every axis, "
            f"e.g. axes={tuple(range(len(shape)))}"
        )
    return reduced_axes(name, shape, axes)


def _small(attrs: NodeAttrs, shape: tuple[int, ...]) -> tuple[int, ...]:
    axes = _axes(attrs, shape)
    return tuple(1 if d in axes else n for d, n in enumerate(shape))


def _infer(attrs: NodeAttrs, in_shapes: list[Shape | None], out_shapes: list[Shape | None]) -> bool:
    name = attrs.op.name  # type: ignore[union-attr]
    src = in_shapes[0]
    if src is None:
        return False
    out = reduce_shape(src, _axes(attrs, src), attrs.parsed.keepdims)
    shape_assign(out_shapes, 0, out, f"{name}: output 'mean'")
    shape_assign(out_shapes, 1, out, f"{name}: output 'var'")
    return shape_is_known(src) and shape_is_known(out)


def _compute(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    x = inputs[0]
    if x.size == 0 or all(req_mode("moments", r) is None for r in req):
        return
    small = _small(attrs, tuple(x.shape))
    k = math.prod(small)
    inv_n = k / x.size
    space = ctx.requested[0].get_space((k + x.size,), x.dtype)
    mean, sq = space[:k].reshape(small), space[k:].reshape(x.shape)
    reduce_to(ctx, mean, OpReqType.kWriteTo, x, small, "sum", inv_n)
    _identity.launch(ctx, outputs[0].reshape(small), req[0], mean)
    if req_mode("moments", req[1]) is not None:
        broadcast_map(_square_diff, ctx, sq, OpReqType.kWriteTo, x, mean)
        reduce_to(ctx, outputs[1].reshape(small), req[1], sq, small, "sum", inv_n)


def _gradient(node: Any, ograds: list[Any]) -> list[Any]:
    # the backward reads (dmean, dvar, x, mean)
    return make_grad_node("_backward_moments", node, [*ograds, node.inputs[0], NodeEntry(node, 0)])


def _backward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    dmean, dvar, x, mean = inputs
    dx = outputs[0]
    if req_mode("_backward_moments", req[0]) is None or dx.size == 0:
        return
    small = _small(attrs, tuple(x.shape))
    k = math.prod(small)
    inv_n = k / x.size
    space = ctx.requested[0].get_space((2 * k,), dx.dtype)
    c, d = space[:k].reshape(small), space[k:].reshape(small)
    _scale.launch(ctx, c, "write", dvar.reshape(small), 2 * inv_n)  # 2 dvar / N
    _scale.launch(ctx, d, "write", dmean.reshape(small), inv_n)  # dmean / N
    broadcast_map(_centered, ctx, dx, req[0], x, mean.reshape(small), c)
    broadcast_map(_identity, ctx, dx, OpReqType.kAddTo, d)


def _output_names(attrs: NodeAttrs) -> list[str]:
    return ["mean", "var"]


def _temp_space(attrs: NodeAttrs) -> list[ResourceRequest]:
    return [ResourceRequest.kTempSpace]


(
    register_op("moments")
    .describe(
        "Calculate the mean and variance of `data` over `axes`: returns (mean, var), with "
        "var = mean((data - mean)^2)."
    )
    .set_attr_parser(MomentsParam)
    .set_num_inputs(1)
    .set_num_outputs(2)
    .set_attr(FListOutputNames, _output_names)
    .set_attr(FInferShape, _infer)
    .set_attr(FInferType, elemwise_type(1, 2))
    .set_attr(FResourceRequest, _temp_space)
    .set_attr(FCompute_cpu, _compute)
    .set_attr(FCompute_gpu, _compute)
    .set_attr(FGradient, _gradient)
    .add_argument("data", "NDArray-or-Symbol", "Input ndarray")
    .add_arguments(MomentsParam.fields())
)
(
    register_op("_backward_moments")
    .set_attr_parser(MomentsParam)
    .set_num_inputs(4)
    .set_num_outputs(1)
    .set_attr(TIsBackward, True)
    .set_attr(FResourceRequest, _temp_space)
    .set_attr(FCompute_cpu, _backward)
    .set_attr(FCompute_gpu, _backward)
)

__all__ = ["MomentsParam"]
