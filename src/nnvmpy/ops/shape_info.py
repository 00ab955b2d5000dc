"""Ops about shapes: shape_array, size_array (a shape as data) and reshape_like.

    shape_array(x) = int64 [d_0, ..., d_{n-1}]     size_array(x) = int64 [d_0 * ... * d_{n-1}]
    reshape_like(lhs, rhs) = lhs with dims [lhs_begin, lhs_end) replaced by rhs's
                             [rhs_begin, rhs_end) (all of them by default)

shape_array and size_array read no element of x: their gradient is zero. reshape_like
relabels lhs's bytes (in place, like Reshape); lhs's gradient is dy relabelled back
(`_backward_reshape`), rhs's is zero.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import kernel
from ..attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FInplaceIdentity,
    FInplaceOption,
    FListInputNames,
)
from ..base import InferError, Shape
from ..graph.grad import make_grad_node, make_node, make_zero_grad_nodes
from ..graph.node import Node, NodeEntry
from ..infer import shape_assign, shape_is_known, shape_str, type_assign
from ..kernel.launch import NULL, req_code
from ..param import Parameter, field
from ..registry import NodeAttrs, register_op
from ._layout import op_name
from .shape import copy_reshaped

# -- shape_array, size_array ----------------------------------------------------------------------


@kernel.parallel_for
def _write_ints(i, out, values, mode):
    # out[i] (+)= values[i] (a tuple: the numbers live on the host)
    if mode == 2:
        out[i] += values[i]
    else:
        out[i] = values[i]


def _shape_infer(length: Any) -> Any:
    def infer(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
        if in_shapes[0] is None:
            return False
        shape_assign(out_shapes, 0, (length(in_shapes[0]),), f"{op_name(attrs, '?')}: output")
        return shape_is_known(in_shapes[0])

    return infer


def _int64_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    type_assign(out_types, 0, np.int64, f"{op_name(attrs, '?')}: output")
    return in_types[0] is not None


def _shape_values(values: Any) -> Any:
    def compute(
        attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
    ) -> None:
        mode = req_code(op_name(attrs, "shape_array"), req[0])
        vals = tuple(int(v) for v in values(tuple(inputs[0].shape)))
        if mode != NULL and vals:
            _write_ints.launch(ctx, len(vals), outputs[0], vals, mode)

    return compute


for _name, _length, _values, _doc in (
    (
        "shape_array",
        len,
        lambda shape: shape,
        "Returns a 1D int64 array containing the shape of data.\n\n"
        "shape_array([[1, 2, 3, 4], [5, 6, 7, 8]]) = [2, 4]",
    ),
    (
        "size_array",
        lambda shape: 1,
        lambda shape: (math.prod(shape),),
        "Returns a 1D int64 array containing the size of data.\n\n"
        "size_array([[1, 2, 3, 4], [5, 6, 7, 8]]) = [8]",
    ),
):
    (
        register_op(_name)
        .describe(_doc)
        .set_num_inputs(1)
        .set_num_outputs(1)
        .set_attr(FInferShape, _shape_infer(_length))
        .set_attr(FInferType, _int64_type)
        .set_attr(FCompute_cpu, _shape_values(_values))
        .set_attr(FCompute_gpu, _shape_values(_values))
        .set_attr(FGradient, make_zero_grad_nodes)
        .add_argument("data", "NDArray-or-Symbol", "Input Array.")
    )

# -- reshape_like ---------------------------------------------------------------------------------


class ReshapeLikeParam(Parameter):
    lhs_begin = field(
        int, default=None, describe="Defaults to 0. The beginning index along which the lhs "
        "dimensions are to be reshaped. Supports negative indices.",
    )  # fmt: skip
    lhs_end = field(
        int, default=None, describe="Defaults to None. The ending index along which the lhs "
        "dimensions are to be used for reshaping. Supports negative indices.",
    )  # fmt: skip
    rhs_begin = field(
        int, default=None, describe="Defaults to 0. The beginning index along which the rhs "
        "dimensions are to be used for reshaping. Supports negative indices.",
    )  # fmt: skip
    rhs_end = field(
        int, default=None, describe="Defaults to None. The ending index along which the rhs "
        "dimensions are to be used for reshaping. Supports negative indices.",
    )  # fmt: skip


def _span(op: str, side: str, begin: int | None, end: int | None, ndim: int) -> tuple[int, int]:
    b = 0 if begin is None else begin + ndim if begin < 0 else begin
    e = ndim if end is None else end + ndim if end < 0 else end
    if not 0 <= b <= e <= ndim:
        raise InferError(
            f"{op}: parameters '{side}_begin'={begin} and '{side}_end'={end} select no valid "
            f"range of the {ndim} axes of input '{side}'; expected 0 <= begin <= end <= {ndim} "
            "after counting negative values from the end"
        )
    return b, e


def reshape_like_shape(op: str, p: Any, lhs: Shape, rhs: Shape) -> Shape:
    lb, le = _span(op, "lhs", p.lhs_begin, p.lhs_end, len(lhs))
    rb, re = _span(op, "rhs", p.rhs_begin, p.rhs_end, len(rhs))
    out = (*lhs[:lb], *rhs[rb:re], *lhs[le:])
    if shape_is_known(lhs) and shape_is_known(out):
        n_in, n_out = math.prod(lhs), math.prod(out)
        if n_in != n_out:
            raise InferError(
                f"{op}: target shape {shape_str(out)} (lhs {shape_str(lhs)} with axes "
                f"[{lb}, {le}) replaced by rhs {shape_str(rhs)}'s [{rb}, {re})) has {n_out} "
                f"elements but input 'lhs' has {n_in}"
            )
    return out


def _reshape_like_infer(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    op = op_name(attrs, "reshape_like")
    lhs, rhs = in_shapes
    if lhs is None or rhs is None:
        return False
    out = reshape_like_shape(op, attrs.parsed, lhs, rhs)
    shape_assign(out_shapes, 0, out, f"{op}: output")
    return shape_is_known(lhs) and shape_is_known(rhs)


def _reshape_like_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    # the output is lhs's bytes; rhs only lends its shape, in any dtype
    type_assign(out_types, 0, in_types[0], "reshape_like: output")
    type_assign(in_types, 0, out_types[0], "reshape_like: input 'lhs'")
    return in_types[0] is not None and in_types[1] is not None


def _reshape_like_compute(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    copy_reshaped(ctx, outputs[0], req[0], inputs[0])


def _reshape_like_grad(node: Node, ograds: list[NodeEntry]) -> list[NodeEntry]:
    # dlhs = dy with lhs's shape; drhs = 0
    dlhs = make_grad_node("_backward_reshape", node, [ograds[0]], {})[0]
    zero = make_node("zeros_like", f"{node.name}_rhs_zero_grad", [node.inputs[1]])
    return [dlhs, NodeEntry(zero, 0)]


(
    register_op("reshape_like")
    .describe(
        "Reshape some or all dimensions of `lhs` to have the same shape as some or all "
        "dimensions of `rhs`: lhs's axes [lhs_begin, lhs_end) are replaced by rhs's axes "
        "[rhs_begin, rhs_end) (by default all of them, so the output has rhs's shape). The "
        "element count must not change; the output may share lhs's memory.\n\n"
        "lhs.shape = (30, 7), rhs.shape = (15, 2, 4), lhs_begin=0, lhs_end=1, rhs_begin=0, "
        "rhs_end=2: output shape (15, 2, 7)."
    )
    .set_attr_parser(ReshapeLikeParam)
    .set_num_inputs(2)
    .set_num_outputs(1)
    .set_attr(FListInputNames, lambda attrs: ["lhs", "rhs"])
    .set_attr(FInferShape, _reshape_like_infer)
    .set_attr(FInferType, _reshape_like_type)
    .set_attr(FInplaceOption, lambda attrs: [(0, 0)])
    .set_attr(FInplaceIdentity, lambda attrs: [True])
    .set_attr(FCompute_cpu, _reshape_like_compute)
    .set_attr(FCompute_gpu, _reshape_like_compute)
    .set_attr(FGradient, _reshape_like_grad)
    .add_argument("lhs", "NDArray-or-Symbol", "First input.")
    .add_argument("rhs", "NDArray-or-Symbol", "Second input.")
    .add_arguments(ReshapeLikeParam.fields())
)
