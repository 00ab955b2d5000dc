"""slice_like: data cut to the leading corner the size of shape_like, on some or all axes.

    y = x[:s0, :s1, ...] with s = shape_like's dims on `axes` (every axis by default)
    dx = dy in the leading corner, 0 elsewhere; shape_like gets no gradient

The copies are slicing.py's region gather/scatter.
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
    TIsBackward,
)
from ..base import InferError
from ..graph.grad import make_grad_node, make_zero_grad_nodes
from ..graph.node import Node, NodeEntry
from ..infer import shape_assign, shape_is_known, shape_str, type_assign
from ..kernel.elementwise import req_mode
from ..param import Parameter, field
from ..param import Shape as ShapeField
from ..registry import NodeAttrs, register_op
from .concat import _zero
from .matrix import shape_of
from .shape import normalize_axis
from .slicing import gather_region, scatter_region


class SliceLikeParam(Parameter):
    axes = field(
        ShapeField,
        default=(),
        describe="List of axes on which input data will be sliced according to the "
        "corresponding size of the second input. By default will slice on all axes. "
        "Negative axes are supported.",
    )


def _like_axes(op: str, axes: tuple[int, ...], ndim: int, other_ndim: int) -> list[int]:
    if not axes:
        if ndim != other_ndim:
            raise InferError(
                f"{op}: with no 'axes', input 'data' ({ndim} dims) and 'shape_like' "
                f"({other_ndim} dims) must have the same number of dimensions"
            )
        return list(range(ndim))
    out = []
    for a in axes:
        a = normalize_axis(op, "axes", a, ndim)
        if a >= other_ndim:
            raise InferError(
                f"{op}: axis {a} in 'axes' {tuple(axes)} is out of range for input "
                f"'shape_like' with {other_ndim} dimensions"
            )
        out.append(a)
    return out


def _slice_like_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    data, like = in_shapes
    if data is None or like is None:
        return False
    out = list(data)
    for a in _like_axes("slice_like", tuple(attrs.parsed.axes), len(data), len(like)):
        if like[a] is not None and data[a] is not None and like[a] > data[a]:
            raise InferError(
                f"slice_like: input 'shape_like' {shape_str(like)} is larger than input "
                f"'data' {shape_str(data)} at axis {a}; it can only slice a smaller region"
            )
        out[a] = like[a]
    shape_assign(out_shapes, 0, tuple(out), "slice_like: output")
    return shape_is_known(data) and shape_is_known(like)


def _data_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    """Output dtype = data's (shape_like may have any dtype)."""
    type_assign(out_types, 0, in_types[0], "slice_like: output")
    type_assign(in_types, 0, out_types[0], "slice_like: input 'data'")
    return in_types[0] is not None


def _like_ranges(attrs: NodeAttrs, data: tuple[int, ...], like: tuple[int, ...]) -> list[range]:
    ranges = [range(n) for n in data]
    for a in _like_axes("slice_like", tuple(attrs.parsed.axes), len(data), len(like)):
        ranges[a] = range(like[a])
    return ranges


def _slice_like_forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    x, like = inputs
    gather_region(ctx, outputs[0], req[0], x, _like_ranges(attrs, shape_of(x), shape_of(like)))


def _slice_like_backward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    # inputs (dy, shape_like): dx = dy in the leading corner, 0 elsewhere
    dy, like = inputs
    mode = req_mode("_backward_slice_like", req[0])
    dx = outputs[0]
    if mode is None:
        return
    if mode == "write":
        _zero(ctx, dx)
    scatter_region(ctx, dx, _like_ranges(attrs, shape_of(dx), shape_of(like)), dy, add=True)


def _slice_like_grad(node: Node, ograds: list[NodeEntry]) -> list[NodeEntry]:
    (dx,) = make_grad_node("_backward_slice_like", node, [ograds[0], node.inputs[1]])
    return [dx, make_zero_grad_nodes(node, ograds)[1]]


(
    register_op("slice_like")
    .describe(
        "Slices data like shape_like: along each axis in `axes` (all axes by default) the "
        "output keeps the first shape_like.shape[axis] elements of data.\n\n"
        "Example: data of shape (3, 4), shape_like of shape (2, 3) -> data[0:2, 0:3]; "
        "with axes=(1,) -> data[:, 0:3]."
    )
    .set_attr_parser(SliceLikeParam)
    .set_num_inputs(2)
    .set_num_outputs(1)
    .set_attr(FListInputNames, lambda attrs: ["data", "shape_like"])
    .set_attr(FInferShape, _slice_like_shape)
    .set_attr(FInferType, _data_type)
    .set_attr(FCompute_cpu, _slice_like_forward)
    .set_attr(FCompute_gpu, _slice_like_forward)
    .set_attr(FGradient, _slice_like_grad)
    .add_argument("data", "NDArray-or-Symbol", "Source input")
    .add_argument("shape_like", "NDArray-or-Symbol", "Shape like input")
    .add_arguments(SliceLikeParam.fields())
)

(
    register_op("_backward_slice_like")
    .describe("Backward of slice_like: dy placed in the leading corner of a zero array.")
    .set_attr_parser(SliceLikeParam)
    .set_num_inputs(2)
    .set_num_outputs(1)
    .set_attr(TIsBackward, True)
    .set_attr(FCompute_cpu, _slice_like_backward)
    .set_attr(FCompute_gpu, _slice_like_backward)
)
