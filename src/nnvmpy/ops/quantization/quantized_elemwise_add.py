"""quantized_elemwise_add: the sum of two quantized tensors, in int32 or calibrated 8 bits.

Inputs lhs, rhs, lhs_min, lhs_max, rhs_min, rhs_max. Each code stands for code * step
(see _common). Without a calibrated range the result is int32 over the range
(-(R_l + R_r), R_l + R_r), R = MaxAbs of each input's range, which no sum can leave;
with min_calib_range/max_calib_range it is requantized to int8 (uint8 when
min_calib_range >= 0) over the calibrated range, as requantize would. The real sum is
formed in float64 and rounded to the nearest code (ties to even), saturating.

One body for both devices: a one-item kernel turns the four (1,) range inputs into the
coefficients on the op's device (a GPU's ranges never visit the host), then one item per
element.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import kernel
from ...attrs import FCompute_cpu, FCompute_gpu, FGradient, FInferShape, FInferType, FListInputNames
from ...graph.grad import make_zero_grad_nodes
from ...infer import shape_assign, type_assign
from ...kernel import uindex
from ...kernel.launch import NULL, req_code, run_rows, store
from ...kernel.unfused import product
from ...param import Parameter
from ...registry import NodeAttrs, register_op
from ._common import (
    INT8,
    INT32,
    UINT8,
    all_known,
    assign_range_shapes,
    assign_range_types,
    calib_range_fields,
    calibrated,
    check_quantized,
    steps,
)
from ._kernels import clamp_code, code_limits, coefficients, max_abs, range_out

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


@kernel.parallel_for
def add_coefficients(i, lhs_lo, lhs_hi, rhs_lo, rhs_hi, lhs_steps, rhs_steps, out_steps,
                     calib, calib_lo, calib_hi, coef):  # fmt: skip
    """coef = (a, b, scale, lo, hi): real = lhs a + rhs b (a, b: each input's step),
    code = rint(real scale), over the output range (lo, hi) (+-(R_l + R_r), or the
    calibrated one); scale = codes per MaxAbs(lo, hi), 0 for an empty range."""
    r_lhs = max_abs(np.float64(lhs_lo[0]), np.float64(lhs_hi[0]))
    r_rhs = max_abs(np.float64(rhs_lo[0]), np.float64(rhs_hi[0]))
    if calib:
        lo = calib_lo
        hi = calib_hi
        r = max_abs(lo, hi)
    else:
        r = r_lhs + r_rhs
        lo = -r
        hi = r
    coef[0] = r_lhs / lhs_steps
    coef[1] = r_rhs / rhs_steps
    coef[2] = out_steps / r if r > 0 else 0.0
    coef[3] = lo
    coef[4] = hi


@kernel.parallel_for
def add_codes(i, lhs, rhs, out, coef, lo, hi, nan, mode):
    """out[i] = the code of lhs[i]'s real value plus rhs[i]'s, in float64, rounded to the
    nearest (ties to even) and saturated (coef from add_coefficients). The products are
    rounded on their own (no FMA on a GPU: a sum by a code boundary took the next code)."""
    real = product(np.float64(lhs[uindex(i)]), coef[0]) + product(
        np.float64(rhs[uindex(i)]), coef[1]
    )
    store(out, i, clamp_code(np.rint(real * coef[2]), lo, hi, nan), mode)


def _compute(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    p = attrs.parsed
    modes = [req_code(OP, r) for r in req]
    lhs, rhs = inputs[:2]
    dtype = _out_dtype(p)
    calib = (p.min_calib_range, p.max_calib_range) if calibrated(p) else (0.0, 0.0)
    coef = coefficients(ctx, OP, add_coefficients, 5, *inputs[2:], steps(lhs.dtype),
                        steps(rhs.dtype), steps(dtype), calibrated(p), *calib)  # fmt: skip
    if modes[0] != NULL:
        run_rows(ctx, OP, add_codes, lhs.size, lhs, rhs, outputs[0], coef, *code_limits(dtype),
                 modes[0])  # fmt: skip
    run_rows(ctx, OP, range_out, 1, coef, 3, *outputs[1:], *modes[1:])


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
    .set_attr(FCompute_cpu, _compute)
    .set_attr(FCompute_gpu, _compute)
    .set_attr(FGradient, make_zero_grad_nodes)
    .add_argument("lhs", "NDArray-or-Symbol", "first input")
    .add_argument("rhs", "NDArray-or-Symbol", "second input")
    .add_argument("lhs_min", "NDArray-or-Symbol", "3rd input")
    .add_argument("lhs_max", "NDArray-or-Symbol", "4th input")
    .add_argument("rhs_min", "NDArray-or-Symbol", "5th input")
    .add_argument("rhs_max", "NDArray-or-Symbol", "6th input")
    .add_arguments(QuantizedAddParam.fields())
)
