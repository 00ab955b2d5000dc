"""index_array: the multi-index of every element of an array (nd.contrib / sym.contrib).

`_contrib_index_array(data, axes=None)` -> int64 array of shape data.shape + (m,):
out[i0, ..., in-1, :] = (i0, ..., in-1) restricted to `axes` (all axes in order when
None; m = len(axes)); negative axes count from the end. Only data's shape matters, so
the gradient is zero. One kernel for both devices, one row of the data per item.
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
    FListInputNames,
)
from ..base import InferError
from ..graph.grad import make_zero_grad_nodes
from ..infer import shape_assign, shape_is_known, type_assign
from ..kernel.launch import NULL, req_code, run_rows, store
from ..param import Parameter, field
from ..param import Shape as ShapeField
from ..registry import NodeAttrs, register_op
from ._index_kernels import device_ints

OP = "_contrib_index_array"


class IndexArrayParam(Parameter):
    axes = field(
        ShapeField,
        default=None,
        describe="The axes to include in the index array. Axes not specified will be "
        "excluded from the output. Negative axes count from the end. None (the default) "
        "includes every axis in order.",
    )


def _selected_axes(axes: Any, ndim: int) -> list[int]:
    if axes is None:
        return list(range(ndim))
    for a in axes:
        if not -ndim <= a < ndim:
            raise InferError(f"{OP}: axis {a} in 'axes' is out of range for {ndim} dimensions")
    return [a % ndim for a in axes]


def _index_array_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    data = in_shapes[0]
    if data is None:
        return False
    m = len(_selected_axes(attrs.parsed.axes, len(data)))
    shape_assign(out_shapes, 0, (*data, m), f"{OP}: output")
    return shape_is_known(data)


def _index_array_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    type_assign(out_types, 0, np.int64, f"{OP}: output")
    return in_types[0] is not None


@kernel.parallel_for
def _indices(r, out, strides, sizes, along, m, last, mode):
    """Row r of the data (its last axis, `last` elements from element r last): out[e, j]
    = e's index along the j-th selected axis (strides[j], sizes[j]: its row-major stride
    and length; along[j]: it is the last axis). Any other axis's stride is a multiple of
    `last`, so its index is found once per row."""
    first = r * last
    for j in range(m):
        fixed = (first // strides[j]) % sizes[j]
        for t in range(last):
            store(out, (first + t) * m + j, t if along[j] else fixed, mode)


def _compute(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    mode = req_code(OP, req[0])
    data, out = inputs[0], outputs[0]
    if mode == NULL or out.size == 0:
        return
    shape = tuple(data.shape)
    axes = _selected_axes(attrs.parsed.axes, len(shape))
    tables = (
        [math.prod(shape[a + 1 :]) for a in axes],
        [shape[a] for a in axes],
        [int(a == len(shape) - 1) for a in axes],
    )
    last = shape[-1]  # out.size > 0: data has an axis and no zero one
    run_rows(ctx, OP, _indices, data.size // last, out, *(device_ints(ctx, t) for t in tables),
             len(axes), last, mode)  # fmt: skip


(
    register_op(OP)
    .describe(
        "Returns an array of indexes of the input array.\n\n"
        "For an input array with shape  :math:`(d_1, d_2, ..., d_n)`, `index_array` returns "
        "a :math:`(d_1, d_2, ..., d_n, n)` array `idx`, where "
        ":math:`idx[i_1, i_2, ..., i_n, :] = [i_1, i_2, ..., i_n]`.\n\n"
        "Additionally, when the parameter `axes` is specified, `idx` will be a "
        ":math:`(d_1, d_2, ..., d_n, m)` array where `m` is the length of `axes`, and the "
        "following equality will hold: :math:`idx[i_1, i_2, ..., i_n, j] = i_{axes[j]}`.\n\n"
        "Examples::\n\n"
        "    x = mx.nd.ones((3, 2))\n\n"
        "    mx.nd.contrib.index_array(x) = [[[0 0]\n"
        "                                     [0 1]]\n\n"
        "                                    [[1 0]\n"
        "                                     [1 1]]\n\n"
        "                                    [[2 0]\n"
        "                                     [2 1]]]\n"
    )
    .set_attr_parser(IndexArrayParam)
    .set_num_inputs(1)
    .set_num_outputs(1)
    .set_attr(FListInputNames, lambda attrs: ["data"])
    .set_attr(FInferShape, _index_array_shape)
    .set_attr(FInferType, _index_array_type)
    .set_attr(FCompute_cpu, _compute)
    .set_attr(FCompute_gpu, _compute)
    .set_attr(FGradient, make_zero_grad_nodes)
    .add_argument("data", "NDArray-or-Symbol", "Input data")
    .add_arguments(IndexArrayParam.fields())
)
