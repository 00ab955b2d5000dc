"""quantize_v2: float32 -> int8/uint8 with the range calibrated or found in the data.

`_contrib_quantize_v2(data, out_type='int8', min_calib_range=None, max_calib_range=None)`
-> (q, min_output, max_output). The range is (min_calib_range, max_calib_range) when both
are given, otherwise the data's own min and max. Then, as MXNet documents:

- int8 (zero stays zero): r = MaxAbs(min, max), q = sign(x) * min(|x| * 127 / r + 0.5,
  127), truncated; the range becomes (-r, r);
- uint8: q = (x - min) * 255 / (max - min) + 0.5, clipped to [0, 255] and truncated; the
  range passes through;
- auto: uint8 when min_calib_range >= 0 is given, int8 otherwise.

Data that is already int8/uint8 passes through unchanged, with the calibrated range, or
the type's own (-127, 127) / (0, 255) without one. Forward only.
"""

from __future__ import annotations

from typing import Any

import numpy as np

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
    OUT_TYPES,
    UINT8,
    all_known,
    calib_range_fields,
    calibrated,
    check_quantized,
    out_dtype,
)

OP = "_contrib_quantize_v2"


class QuantizeV2Param(Parameter):
    out_type = field(
        str,
        default="int8",
        enum=OUT_TYPES,
        describe="Output data type. `auto` can be specified to automatically determine "
        "output type according to min_calib_range.",
    )
    min_calib_range, max_calib_range = calib_range_fields(
        ". If present, it will be used to quantize the fp32 data into int8 or uint8."
    )


def _compute(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    """codes over the calibrated range or the data's own; 8-bit data passes through."""
    p, (data,) = attrs.parsed, inputs
    modes = [req_code(OP, r) for r in req]
    signed = out_dtype(p) == INT8
    if data.dtype in (INT8, UINT8):
        if calibrated(p):
            lo, hi = p.min_calib_range, p.max_calib_range
        else:
            lo, hi = (0.0, 255.0) if data.dtype == UINT8 else (-127.0, 127.0)
        bounds, signed = _kernels.fixed_range(ctx, lo, hi), False  # the range passes through
        if modes[0] != NULL:
            run_rows(ctx, OP, _kernels.copy_codes, data.size, data, outputs[0], modes[0])
        run_rows(ctx, OP, _kernels.quantized_range, 1, bounds, signed, *outputs[1:], *modes[1:])
        return
    if calibrated(p):
        lo, hi = float(F32.type(p.min_calib_range)), float(F32.type(p.max_calib_range))
        bounds = _kernels.fixed_range(ctx, lo, hi)
    else:
        bounds = _kernels.data_range(ctx, data)
    _kernels.quantize(ctx, OP, data, bounds, signed, outputs, modes)


def _shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    shape_assign(out_shapes, 0, in_shapes[0], f"{OP}: output 0")
    shape_assign(in_shapes, 0, out_shapes[0], f"{OP}: input 'data'")
    for j in (1, 2):
        shape_assign(out_shapes, j, (1,), f"{OP}: output {j}")
    return all_known(in_shapes, out_shapes)


def _type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    data = in_types[0]
    check_quantized(OP, "data", data, (F32, INT8, UINT8))
    if data is None:
        return False
    out = np.dtype(data) if np.dtype(data) in (INT8, UINT8) else out_dtype(attrs.parsed)
    type_assign(out_types, 0, out, f"{OP}: output 0")
    type_assign(out_types, 1, F32, f"{OP}: output 1 (min_output)")
    return type_assign(out_types, 2, F32, f"{OP}: output 2 (max_output)")


op = (
    register_op(OP)
    .describe(
        "Quantize a input tensor from float to `out_type`, with user-specified "
        "`min_calib_range` and `max_calib_range` or the input range collected at runtime."
        "\n\nWhen out_type is `uint8`: `out[i] = (in[i] - min_range) * 255 / (max_range - "
        "min_range) + 0.5`, clipped to [0, 255].\n\n"
        "When out_type is `int8` (zero stays zero): `out[i] = sign(in[i]) * min(abs(in[i]) "
        "* scale + 0.5, 127)`, where `scale = 127 / MaxAbs(min_range, max_range)`.\n\n"
        "When out_type is `auto`, the output type is uint8 if min_calib_range >= 0 is "
        "given, int8 otherwise. Input that is already int8/uint8 passes through.\n\n"
        ".. Note::\n    This operator only supports forward propagation. DO NOT use it in "
        "training.\n"
    )
    .set_attr_parser(QuantizeV2Param)
    .set_num_inputs(1)
    .set_num_outputs(3)
    .set_attr(FListInputNames, lambda attrs: ["data"])
    .set_attr(FInferShape, _shape)
    .set_attr(FInferType, _type)
    .set_attr(FCompute_cpu, _compute)
    .set_attr(FCompute_gpu, _compute)
    .set_attr(FGradient, make_zero_grad_nodes)
    .add_argument("data", "NDArray-or-Symbol", "A ndarray/symbol of type `float32`")
    .add_arguments(QuantizeV2Param.fields())
)
