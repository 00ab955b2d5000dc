"""quantized_elemwise_add: the sum of two quantized tensors, in int32 or calibrated 8 bits.

Inputs lhs, rhs, lhs_min, lhs_max, rhs_min, rhs_max. Each code stands for code * step
(see _common). Without a calibrated range the result is int32 over the range
(-(R_l + R_r), R_l + R_r), R = MaxAbs of each input's range, which no sum can leave;
with min_calib_range/max_calib_range it is requantized to int8 (uint8 when
min_calib_range >= 0) over the calibrated range, as requantize would. Codes are rounded
to the nearest.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...attrs import FCompute_cpu, FCompute_gpu, FGradient, FInferShape, FInferType, FListInputNames
from ...graph.grad import make_zero_grad_nodes
from ...infer import shape_assign, type_assign
from ...param import Parameter
from ...registry import NodeAttrs, register_op
from .._host_staged import host_compute
from ._common import (
    F32,
    INT8,
    INT32,
    UINT8,
    all_known,
    assign_range_shapes,
    assign_range_types,
    calib_range_fields,
    calibrated,
    check_quantized,
    max_abs,
    steps,
)

OP = "_contrib_quantized_elemwise_add"
NAMES = ["lhs", "rhs", "lhs_min", "lhs_max", "rhs_min", "rhs_max"]


class QuantizedAddParam(Parameter):
    min_calib_range, max_calib_range = calib_range_fields(
        " obtained through calibration. If present, it will be used to requantize the int32 sum."
    )


def _out_dtype(p: Any) -> np.dtype:
    if not calibrated(p):
        return INT32
    return UINT8 if p.min_calib_range >= 0 else INT8


def add_np(p: Any, lhs: np.ndarray, rhs: np.ndarray, *ranges: np.ndarray) -> list[np.ndarray]:
    rl, rr = max_abs(ranges[0], ranges[1]), max_abs(ranges[2], ranges[3])
    real = lhs.astype(np.float64) * (rl / steps(lhs.dtype)) + rhs * (rr / steps(rhs.dtype))
    dtype = _out_dtype(p)
    if calibrated(p):
        lo, hi = p.min_calib_range, p.max_calib_range
        r = max(abs(lo), abs(hi))
    else:
        r = rl + rr
        lo, hi = -r, r
    scale = steps(dtype) / r if r > 0 else 0.0
    info = np.iinfo(dtype)
    out = np.clip(np.rint(real * scale), info.min, info.max).astype(dtype)
    return [out, np.array([lo], F32), np.array([hi], F32)]


def _shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    for i in (0, 1):
        shape_assign(in_shapes, i, out_shapes[0], f"{OP}: input {NAMES[i]!r}")
        shape_assign(out_shapes, 0, in_shapes[i], f"{OP}: output 0")
    shape_assign(in_shapes, 0, in_shapes[1], f"{OP}: input 'lhs' (must match 'rhs')")
    assign_range_shapes(OP, NAMES, in_shapes, out_shapes, 2, 1)
    return all_known(in_shapes, out_shapes)


def _type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    for i in (0, 1):
        check_quantized(OP, NAMES[i], in_types[i])
    assign_range_types(OP, NAMES, in_types, out_types, 2, 1)
    type_assign(out_types, 0, _out_dtype(attrs.parsed), f"{OP}: output 0")
    return in_types[0] is not None and in_types[1] is not None


_kernel = host_compute(OP, add_np)
op = (
    register_op(OP)
    .describe(
        "Element-wise sum of two int8/uint8 arrays, each with its own float32 (min, max) "
        "range: both are brought to a common scale and summed exactly in int32, with the "
        "real range of the int32 codes as the last two outputs; given min_calib_range / "
        "max_calib_range the sum is requantized to int8 (uint8 if min_calib_range >= 0) "
        "over that range instead.\n\n"
        ".. Note::\n    This operator only supports forward propagation. DO NOT use it in "
        "training.\n"
    )
    .set_attr_parser(QuantizedAddParam)
    .set_num_inputs(6)
    .set_num_outputs(3)
    .set_attr(FListInputNames, lambda attrs: list(NAMES))
    .set_attr(FInferShape, _shape)
    .set_attr(FInferType, _type)
    .set_attr(FCompute_cpu, _kernel)
    .set_attr(FCompute_gpu, _kernel)
    .set_attr(FGradient, make_zero_grad_nodes)
    .add_argument("lhs", "NDArray-or-Symbol", "first input")
    .add_argument("rhs", "NDArray-or-Symbol", "second input")
    .add_argument("lhs_min", "NDArray-or-Symbol", "3rd input")
    .add_argument("lhs_max", "NDArray-or-Symbol", "4th input")
    .add_argument("rhs_min", "NDArray-or-Symbol", "5th input")
    .add_argument("rhs_max", "NDArray-or-Symbol", "6th input")
    .add_arguments(QuantizedAddParam.fields())
)
