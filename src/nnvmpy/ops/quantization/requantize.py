"""requantize: an int32 accumulator (quantized FC / conv output) back to 8 bits.

`_contrib_requantize(data, min_range, max_range, out_type='int8', min_calib_range=None,
max_calib_range=None)` -> (q, min_output, max_output). The int32 codes stand for
code * MaxAbs(min_range, max_range) / (2^31 - 1). The new range is the calibrated one
when min_calib_range and max_calib_range are given, otherwise the largest magnitude the
data actually holds; r = MaxAbs of it, then as quantize does:

- int8: q = sign(x) * min(|x| * 127 / r + 0.5, 127), truncated; range (-r, r);
- uint8: q = clip(x * 255 / r + 0.5, 0, 255), truncated; range (0, r);
- auto: uint8 when min_calib_range >= 0 is given, int8 otherwise.

Arithmetic in float32, as MXNet's kernel. Forward only.
"""

from __future__ import annotations

from typing import Any

from ...attrs import FCompute_cpu, FCompute_gpu, FGradient, FInferShape, FInferType, FListInputNames
from ...graph.grad import make_zero_grad_nodes
from ...infer import shape_assign, type_assign
from ...kernel.launch import NULL, req_code, run_rows
from ...param import Parameter, field
from ...registry import NodeAttrs, register_op
from . import _kernels
from ._common import (
    F32,
    INT8,
    INT32,
    OUT_TYPES,
    all_known,
    calib_range_fields,
    calibrated,
    check_quantized,
    out_dtype,
)

OP = "_contrib_requantize"
NAMES = ["data", "min_range", "max_range"]


class RequantizeParam(Parameter):
    out_type = field(
        str,
        default="int8",
        enum=OUT_TYPES,
        describe="Output data type. `auto`: uint8 when min_calib_range >= 0 is given, "
        "int8 otherwise.",
    )
    min_calib_range, max_calib_range = calib_range_fields(
        " obtained through calibration. If present, it will be used to requantize the int32 "
        "data into int8."
    )


def _compute(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    """int32 codes over (min_range, max_range) -> 8-bit codes over the new range."""
    p = attrs.parsed
    modes = [req_code(OP, r) for r in req]
    data, lo, hi = inputs
    signed = out_dtype(p) == INT8
    bounds = _kernels.range_of(ctx, lo, hi)
    if calibrated(p):
        data_bounds = _kernels.fixed_range(ctx, p.min_calib_range, p.max_calib_range)
    else:
        data_bounds = _kernels.data_range(ctx, data)
    coef = _kernels.coefficients(ctx, OP, _kernels.requantize_coefficients, 3, bounds,
                                 data_bounds, bool(calibrated(p)), signed)  # fmt: skip
    if modes[0] != NULL:
        run_rows(ctx, OP, _kernels.requantize_codes, data.size, data, outputs[0], coef, signed,
                 modes[0])  # fmt: skip
    run_rows(ctx, OP, _kernels.requantized_range, 1, coef, signed, *outputs[1:], *modes[1:])


def _shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    shape_assign(out_shapes, 0, in_shapes[0], f"{OP}: output 0")
    shape_assign(in_shapes, 0, out_shapes[0], f"{OP}: input 'data'")
    for i in (1, 2):
        shape_assign(in_shapes, i, (1,), f"{OP}: input {NAMES[i]!r}")
    for j in (1, 2):
        shape_assign(out_shapes, j, (1,), f"{OP}: output {j}")
    return all_known(in_shapes, out_shapes)


def _type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    check_quantized(OP, "data", in_types[0], (INT32,))
    type_assign(in_types, 0, INT32, f"{OP}: input 'data'")
    for i in (1, 2):
        type_assign(in_types, i, F32, f"{OP}: input {NAMES[i]!r}")
    type_assign(out_types, 0, out_dtype(attrs.parsed), f"{OP}: output 0")
    type_assign(out_types, 1, F32, f"{OP}: output 1 (min_output)")
    return type_assign(out_types, 2, F32, f"{OP}: output 2 (max_output)")


op = (
    register_op(OP)
    .describe(
        "Converts int32 codes (with the real range they stand for) to int8 codes: over "
        "min_calib_range / max_calib_range when given (calibrated, the cheaper and more "
        "accurate way), else over the largest magnitude actually present, found at run "
        "time.\n\n"
        ".. Note::\n    This operator only supports forward propagation. DO NOT use it in "
        "training.\n"
    )
    .set_attr_parser(RequantizeParam)
    .set_num_inputs(3)
    .set_num_outputs(3)
    .set_attr(FListInputNames, lambda attrs: list(NAMES))
    .set_attr(FInferShape, _shape)
    .set_attr(FInferType, _type)
    .set_attr(FCompute_cpu, _compute)
    .set_attr(FCompute_gpu, _compute)
    .set_attr(FGradient, make_zero_grad_nodes)
    .add_argument("data", "NDArray-or-Symbol", "A ndarray/symbol of type `int32`")
    .add_argument("min_range", "NDArray-or-Symbol", "The original minimum scalar value "
                  "in the form of float32 used for quantizing data into int32.")
    .add_argument("max_range", "NDArray-or-Symbol", "The original maximum scalar value "
                  "in the form of float32 used for quantizing data into int32.")
    .add_arguments(RequantizeParam.fields())
)  # fmt: skip
