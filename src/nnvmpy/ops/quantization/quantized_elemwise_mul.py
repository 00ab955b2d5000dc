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

One body for both devices: a one-item kernel turns the four (1,) range inputs into the
scale and the output range on the op's device (a GPU's ranges never visit the host),
then one item per element. A zero input range gives in_scale = inf, so float outputs
and calibrated codes are 0 (IEEE arithmetic, as MXNet's float kernel).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import kernel
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
from ...kernel import uindex
from ...kernel.launch import NULL, req_code, run_rows, store
from ...param import Parameter, field
from ...registry import NodeAttrs, register_op
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
)
from ._kernels import clamp_code, coefficients, max_abs, range_out

OP = "_contrib_quantized_elemwise_mul"
NAMES = ["lhs", "rhs", "lhs_min", "lhs_max", "rhs_min", "rhs_max"]
INT8_SCALE_RANGE = 127.5  # MXNet's kInt8Range: codes per MaxAbs when it rescales
_F32 = np.float32


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


# what mul_codes makes of the products
_INT32, _FLOAT, _CALIBRATED = 0, 1, 2


def _kind(p: Any) -> int:
    if p.enable_float_output:
        return _FLOAT
    return _CALIBRATED if calibrated(p) else _INT32


@kernel.parallel_for
def mul_coefficients(i, lhs_lo, lhs_hi, rhs_lo, rhs_hi, kind, calib_scale, calib_lo, calib_hi,
                     coef):  # fmt: skip
    """coef = (scale, lo, hi). scale (a float32 value): the real value of one product
    (float output) or the output codes per product (calibrated; calib_scale is
    127.5 / MaxAbs of the calibrated range in float32, negative for an empty range:
    scale 0). (lo, hi): the output range, +-INT32_MAX step_l step_r for int32 output."""
    r_lhs = max_abs(np.float64(lhs_lo[0]), np.float64(lhs_hi[0]))
    r_rhs = max_abs(np.float64(rhs_lo[0]), np.float64(rhs_hi[0]))
    # MXNet's in_scale, float32: codes per real unit of each input, multiplied
    in_scale = _F32(INT8_SCALE_RANGE / r_lhs) * _F32(INT8_SCALE_RANGE / r_rhs)
    if kind == _INT32:
        r = (r_lhs / 127.0) * (r_rhs / 127.0) * 2147483647.0
        coef[1] = -r
        coef[2] = r
    elif kind == _FLOAT:
        coef[0] = _F32(1.0) / in_scale
    else:
        coef[0] = _F32(calib_scale) / in_scale if calib_scale >= 0 else _F32(0.0)
        coef[1] = calib_lo
        coef[2] = calib_hi


@kernel.parallel_for
def mul_codes(i, lhs, rhs, out, coef, kind, mode):
    """out[i]: the exact int32 product of the codes, its real value (float32) or, calibrated,
    the float32 product times coef[0] truncated toward zero into -128..127."""
    product = int(lhs[uindex(i)]) * int(rhs[uindex(i)])
    if kind == _INT32:
        store(out, i, product, mode)
    elif kind == _FLOAT:
        store(out, i, _F32(product) * _F32(coef[0]), mode)
    else:
        store(out, i, clamp_code(_F32(product) * _F32(coef[0]), -128.0, 127.0, 0), mode)


def _compute(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    p = attrs.parsed
    modes = [req_code(OP, r) for r in req]
    kind = _kind(p)
    calib = (-1.0, 0.0, 0.0)
    if kind == _CALIBRATED:
        r = max(abs(p.min_calib_range), abs(p.max_calib_range))
        scale = float(np.float32(INT8_SCALE_RANGE / r)) if r > 0 else -1.0
        calib = (scale, p.min_calib_range, p.max_calib_range)
    coef = coefficients(ctx, OP, mul_coefficients, 3, *inputs[2:], kind, *calib)
    if modes[0] != NULL:
        lhs, rhs = inputs[:2]
        run_rows(ctx, OP, mul_codes, lhs.size, lhs, rhs, outputs[0], coef, kind, modes[0])
    if kind != _FLOAT:
        run_rows(ctx, OP, range_out, 1, coef, 1, *outputs[1:], *modes[1:])


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
    .set_attr(FCompute_cpu, _compute)
    .set_attr(FCompute_gpu, _compute)
    .set_attr(FGradient, make_zero_grad_nodes)
    .add_argument("lhs", "NDArray-or-Symbol", "first input")
    .add_argument("rhs", "NDArray-or-Symbol", "second input")
    .add_argument("lhs_min", "NDArray-or-Symbol", "Minimum value of first input.")
    .add_argument("lhs_max", "NDArray-or-Symbol", "Maximum value of first input.")
    .add_argument("rhs_min", "NDArray-or-Symbol", "Minimum value of second input.")
    .add_argument("rhs_max", "NDArray-or-Symbol", "Maximum value of second input.")
    .add_arguments(QuantizedMulParam.fields())
)
