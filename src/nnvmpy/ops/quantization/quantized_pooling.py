"""quantized_pooling: max or avg Pooling on int8/uint8 codes; the range passes through.

Max pooling of codes is exact. Average pooling divides the window's sum of codes by the
same count the float Pooling uses (padding counted unless count_include_pad=False) and
rounds to the nearest code. Windows, conventions (valid / full / same) and global_pool
come from the float op's geometry, computed here on the host with NumPy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...attrs import FCompute_cpu, FCompute_gpu, FGradient, FInferShape, FInferType, FListInputNames
from ...base import InferError
from ...graph.grad import make_zero_grad_nodes
from ...infer import type_assign
from ...registry import NodeAttrs, register_op
from .._host_staged import host_compute
from ..nn._geometry import as_5d, pool_out_size
from ..nn.pooling import PoolingParam, infer_pool_shape, window
from ._common import F32, all_known, assign_range_shapes, assign_range_types, check_quantized

OP = "_contrib_quantized_pooling"
NAMES = ["data", "min_data", "max_data"]


def _axis_windows(x: int, k: int, s: int, pad: int, end: int, out: int) -> tuple[np.ndarray, ...]:
    """Per output position: the input indices of its window, which are inside, and the
    avg divisor counting padding (up to `end`)."""
    starts = np.arange(out) * s - pad
    pos = starts[:, None] + np.arange(k)[None, :]
    inside = (pos >= 0) & (pos < x)
    with_pad = np.minimum(starts + k, end) - starts
    return np.clip(pos, 0, max(x - 1, 0)), inside, with_pad


def pool_codes(p: Any, data: np.ndarray) -> np.ndarray:
    nd = data.ndim - 2
    x = as_5d(data).astype(np.float64)
    geo = window(p, tuple(data.shape))
    kernel, stride, pad, ends = geo[0:3], geo[3:6], geo[6:9], geo[9:12]
    convention = "valid" if p.global_pool else p.pooling_convention
    res, inside_all, with_pad_all = x, [], []
    for axis in range(3):
        size = x.shape[2 + axis]
        out = pool_out_size(size, kernel[axis], stride[axis], pad[axis], convention)
        idx, inside, with_pad = _axis_windows(
            size, kernel[axis], stride[axis], pad[axis], ends[axis], out
        )
        res = np.take(res, idx, axis=2 + 2 * axis)  # axis -> (out, k)
        inside_all.append(inside)
        with_pad_all.append(with_pad)
    # res: (N, C, oD, kD, oH, kH, oW, kW)
    mask = (
        inside_all[0][:, :, None, None, None, None]
        & inside_all[1][None, None, :, :, None, None]
        & inside_all[2][None, None, None, None, :, :]
    )
    k_axes = (3, 5, 7)
    if p.pool_type == "max":
        pooled = np.where(mask, res, -np.inf).max(axis=k_axes)
        pooled = np.where(np.isfinite(pooled), pooled, 0.0)
    else:
        total = np.where(mask, res, 0.0).sum(axis=k_axes)
        if p.count_include_pad is False:
            count = mask.sum(axis=(1, 3, 5)).astype(np.float64)
        else:
            d, h, w = with_pad_all
            count = (d[:, None, None] * h[None, :, None] * w[None, None, :]).astype(np.float64)
        pooled = np.rint(total / np.maximum(count, 1.0))
    info = np.iinfo(data.dtype)
    pooled = np.clip(pooled, info.min, info.max).astype(data.dtype)
    return pooled.reshape(*data.shape[:2], *pooled.shape[5 - nd :])


def _compute(p: Any, data: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> list[np.ndarray]:
    return [pool_codes(p, data), lo.astype(F32), hi.astype(F32)]


def _check_pool_type(attrs: NodeAttrs) -> None:
    if attrs.parsed.pool_type not in ("max", "avg"):
        raise InferError(
            f"{OP}: pool_type must be 'max' or 'avg' for quantized data, got "
            f"{attrs.parsed.pool_type!r}"
        )


def _shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    _check_pool_type(attrs)
    head, out = in_shapes[:1], out_shapes[:1]
    infer_pool_shape(attrs, head, out)
    in_shapes[:1], out_shapes[:1] = head, out
    assign_range_shapes(OP, NAMES, in_shapes, out_shapes, 1, 1)
    return all_known(in_shapes, out_shapes)


def _type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    _check_pool_type(attrs)
    check_quantized(OP, "data", in_types[0])
    assign_range_types(OP, NAMES, in_types, out_types, 1, 1)
    if in_types[0] is None:
        return False
    return type_assign(out_types, 0, in_types[0], f"{OP}: output 0")


_kernel = host_compute(OP, _compute)
op = (
    register_op(OP)
    .describe(
        "Pooling operator for input and output data type of int8 or uint8. The input and "
        "output data comes with min and max thresholds for quantizing the float32 data "
        "into int8; they pass through. Supports pool_type 'max' and 'avg' (rounded to "
        "the nearest code).\n\n"
        ".. Note::\n    This operator only supports forward propagation. DO NOT use it in "
        "training.\n"
    )
    .set_attr_parser(PoolingParam)
    .set_num_inputs(3)
    .set_num_outputs(3)
    .set_attr(FListInputNames, lambda attrs: list(NAMES))
    .set_attr(FInferShape, _shape)
    .set_attr(FInferType, _type)
    .set_attr(FCompute_cpu, _kernel)
    .set_attr(FCompute_gpu, _kernel)
    .set_attr(FGradient, make_zero_grad_nodes)
    .add_argument("data", "NDArray-or-Symbol", "A ndarray/symbol of type `int8` or `uint8`")
    .add_argument("min_data", "NDArray-or-Symbol", "Minimum value of data.")
    .add_argument("max_data", "NDArray-or-Symbol", "Maximum value of data.")
    .add_arguments(PoolingParam.fields())
)
