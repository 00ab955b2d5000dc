"""quantized_elemwise_mul: the product of two int8 tensors, in int32, int8 or float32.

Inputs lhs, rhs (int8 only, as MXNet 1.9.1), lhs_min, lhs_max, rhs_min, rhs_max. The
product of the codes is exact in int32; what the op returns depends on its parameters:

- default: the int32 products, with the int32 range (-R, R), R = INT32_MAX times the
  product of the two inputs' steps (MaxAbs / 127, see _common) — outputs (out, min, max);
- min_calib_range/max_calib_range: requantized to int8 over the calibrated range, the
  given range returned as (min, max);
- enable_float_output: the real products in float32, and no range outputs (one output).

MXNet's kernel scales by 127.5 / MaxAbs (its kInt8Range) where it leaves int32, and casts
to int8 by truncating toward zero; both are kept here so the values agree. Unlike MXNet,
whose cast wraps around, a product outside the calibrated range saturates at -128..127.
Host NumPy, staged through host memory on the GPU.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FListInputNames,
    FListOutputNames,
)
from ...graph.grad import make_zero_grad_nodes
from ...infer import shape_assign, type_assign
from ...param import Parameter, field
from ...registry import NodeAttrs, register_op
from .._host_staged import host_compute
from ._common import (
    F32,
    INT8,
    INT32,
    all_known,
    assign_range_shapes,
    assign_range_types,
    calib_range_fields,
    calibrated,
    check_quantized,
    int32_range,
    max_abs,
    step_size,
)

OP = "_contrib_quantized_elemwise_mul"
NAMES = ["lhs", "rhs", "lhs_min", "lhs_max", "rhs_min", "rhs_max"]
INT8_SCALE_RANGE = 127.5  # MXNet's kInt8Range: codes per MaxAbs when it rescales


class QuantizedMulParam(Parameter):
    min_calib_range, max_calib_range = calib_range_fields(
        " obtained through calibration. If present, it will be used to requantize the int8 "
        "output data."
    )
    enable_float_output = field(bool, default=False, describe="Whether to enable float32 output")


def _out_dtype(p: Any) -> np.dtype:
    if p.enable_float_output:
        return F32
    return INT8 if calibrated(p) else INT32


def _num_outputs(attrs: NodeAttrs) -> int:
    return 1 if attrs.parsed.enable_float_output else 3


def mul_np(p: Any, lhs: np.ndarray, rhs: np.ndarray, *ranges: np.ndarray) -> list[np.ndarray]:
    product = lhs.astype(np.int32) * rhs.astype(np.int32)
    if not p.enable_float_output and not calibrated(p):
        step = step_size(INT8, ranges[0], ranges[1]) * step_size(INT8, ranges[2], ranges[3])
        return [product, *int32_range(step)]
    in_scale = np.float32(INT8_SCALE_RANGE / max_abs(ranges[0], ranges[1])) * np.float32(
        INT8_SCALE_RANGE / max_abs(ranges[2], ranges[3])
    )
    if p.enable_float_output:
        return [product.astype(np.float32) * (np.float32(1.0) / in_scale)]
    lo, hi = p.min_calib_range, p.max_calib_range
    r = max(abs(lo), abs(hi))
    scale = np.float32(INT8_SCALE_RANGE / r) / in_scale if r > 0 else np.float32(0.0)
    codes = np.clip(np.trunc(product.astype(np.float32) * scale), -128, 127).astype(np.int8)
    return [codes, np.array([lo], F32), np.array([hi], F32)]


def _shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    for i in (0, 1):
        shape_assign(in_shapes, i, out_shapes[0], f"{OP}: input {NAMES[i]!r}")
        shape_assign(out_shapes, 0, in_shapes[i], f"{OP}: output 0")
    shape_assign(in_shapes, 0, in_shapes[1], f"{OP}: input 'lhs' (must match 'rhs')")
    assign_range_shapes(OP, NAMES, in_shapes, out_shapes, 2, 1)
    return all_known(in_shapes, out_shapes)


def _type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    for i in (0, 1):
        check_quantized(OP, NAMES[i], in_types[i], allowed=(INT8,))
        type_assign(in_types, i, INT8, f"{OP}: input {NAMES[i]!r}")
    assign_range_types(OP, NAMES, in_types, out_types, 2, 1)
    type_assign(out_types, 0, _out_dtype(attrs.parsed), f"{OP}: output 0")
    return True


_kernel = host_compute(OP, mul_np)
(
    register_op(OP)
    .describe(
        "Element-wise product of two int8 arrays, each with its own float32 (min, max) "
        "range. By default the exact int32 products are returned with the real range of "
        "the int32 codes as the last two outputs; given min_calib_range / max_calib_range "
        "the products are requantized to int8 over that range; with enable_float_output "
        "the real products are returned in float32 (one output).\n\n"
        ".. Note::\n    This operator only supports forward propagation. DO NOT use it in "
        "training.\n"
    )
    .set_attr_parser(QuantizedMulParam)
    .set_num_inputs(6)
    .set_num_outputs(_num_outputs)
    .set_attr(FListInputNames, lambda attrs: list(NAMES))
    .set_attr(
        FListOutputNames,
        lambda attrs: ["output", "min_output", "max_output"][: _num_outputs(attrs)],
    )
    .set_attr(FInferShape, _shape)
    .set_attr(FInferType, _type)
    .set_attr(FCompute_cpu, _kernel)
    .set_attr(FCompute_gpu, _kernel)
    .set_attr(FGradient, make_zero_grad_nodes)
    .add_argument("lhs", "NDArray-or-Symbol", "first input")
    .add_argument("rhs", "NDArray-or-Symbol", "second input")
    .add_argument("lhs_min", "NDArray-or-Symbol", "Minimum value of first input.")
    .add_argument("lhs_max", "NDArray-or-Symbol", "Maximum value of first input.")
    .add_argument("rhs_min", "NDArray-or-Symbol", "Minimum value of second input.")
    .add_argument("rhs_max", "NDArray-or-Symbol", "Maximum value of second input.")
    .add_arguments(QuantizedMulParam.fields())
)
