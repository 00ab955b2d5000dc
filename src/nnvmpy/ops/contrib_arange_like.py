"""arange_like: evenly spaced values shaped like an input (nd.contrib / sym.contrib).

`_contrib_arange_like(data, start=0, step=1, repeat=1, axis=None)`: without `axis` the
output has data's shape and holds start + (i // repeat) * step at flat position i; with
`axis` it is 1-D, of data.shape[axis] values. The values do not depend on data's values,
only its shape, so the gradient is zero. The dtype is data's; for an integer dtype start
and step are truncated first, as _arange does.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..attrs import FCompute_cpu, FCompute_gpu, FGradient, FInferShape, FInferType, FListInputNames
from ..base import InferError
from ..graph.grad import make_zero_grad_nodes
from ..infer import shape_assign, shape_str, type_assign
from ..param import Parameter, field
from ..registry import NodeAttrs, register_op
from .init import _affine

OP = "_contrib_arange_like"


class ArangeLikeParam(Parameter):
    start = field(
        float,
        default=0.0,
        describe="Start of interval. The interval includes this value. The default start "
        "value is 0.",
    )
    step = field(float, default=1.0, describe="Spacing between values.")
    repeat = field(
        int,
        default=1,
        lower_bound=1,
        describe="The repeating time of all elements. E.g repeat=3, the element a will be "
        "repeated three times --> a, a, a.",
    )
    ctx = field(
        str,
        default="",
        describe="Context of output, in format [cpu|gpu|cpu_pinned](n).Only used for "
        "imperative calls.",
    )
    axis = field(
        int,
        default=None,
        describe="Arange elements according to the size of a certain axis of input array. "
        "The negative numbers are interpreted counting from the backward. If not provided, "
        "will arange elements according to the input shape.",
    )


def _arange_like_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    data, axis = in_shapes[0], attrs.parsed.axis
    if data is None:
        return False
    if axis is None:
        shape_assign(out_shapes, 0, data, f"{OP}: output")
        return True
    if not -len(data) <= axis < len(data):
        raise InferError(
            f"{OP}: axis {axis} is out of range for input 'data' of shape {shape_str(data)}"
        )
    return shape_assign(out_shapes, 0, (data[axis],), f"{OP}: output")


def _arange_like_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    known = in_types[0] if in_types[0] is not None else out_types[0]
    if known is None:
        return False
    type_assign(in_types, 0, known, f"{OP}: input 'data'")
    return type_assign(out_types, 0, known, f"{OP}: output")


def _arange_like_forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    p, out = attrs.parsed, outputs[0]
    start, step = p.start, p.step
    if np.dtype(out.dtype).kind in "iub":
        start, step = int(start), int(step)
    _affine(ctx, out.reshape(out.size), req[0], start, step, p.repeat)  # flat: C order


(
    register_op(OP)
    .describe(
        "Return an array with evenly spaced values. If axis is not given, the output will "
        "have the same shape as the input array. Otherwise, the output will be a 1-D array "
        "with size of the specified axis in input shape.\n\n"
        "Examples::\n\n"
        "  x = [[0.14883883 0.7772398  0.94865847 0.7225052 ]\n"
        "       [0.23729339 0.6112595  0.66538996 0.5132841 ]\n"
        "       [0.30822644 0.9912457  0.15502319 0.7043658 ]]\n\n"
        "  arange_like(x, start=0) = [[ 0.  1.  2.  3.]\n"
        "                             [ 4.  5.  6.  7.]\n"
        "                             [ 8.  9. 10. 11.]]\n\n"
        "  arange_like(x, start=0, axis=-1) = [0. 1. 2. 3.]\n"
    )
    .set_attr_parser(ArangeLikeParam)
    .set_num_inputs(1)
    .set_num_outputs(1)
    .set_attr(FListInputNames, lambda attrs: ["data"])
    .set_attr(FInferShape, _arange_like_shape)
    .set_attr(FInferType, _arange_like_type)
    .set_attr(FCompute_cpu, _arange_like_forward)
    .set_attr(FCompute_gpu, _arange_like_forward)
    .set_attr(FGradient, make_zero_grad_nodes)
    .add_argument("data", "NDArray-or-Symbol", "The input")
    .add_arguments(ArangeLikeParam.fields())
)
