"""quantize_asym: float32 -> uint8 with a scale and a shift (contrib, asymmetric quantization).

`_contrib_quantize_asym(data, min_calib_range=None, max_calib_range=None)` -> (output,
scale, shift). The range [lo, hi] is (min_calib_range, max_calib_range) when both are
given, else the data's own minimum and maximum. In float32, as MXNet computes them:

    scale = 255 / (hi - lo),   shift = 255 - hi * scale,
    output = trunc(data * scale + shift + 0.5)   (uint8)

so lo maps to 0 and hi to 255; scale and shift are (1,) float32 outputs. Values outside
the range saturate to 0 or 255, as MXNet's oneDNN kernel (the one MXNet 1.9.1 runs on the
CPU) does; its plain C++ kernel leaves the overflowing cast undefined. A constant tensor
(hi == lo) gives scale = inf and every output 0, as MXNet's does.

Forward only, as in MXNet: the gradient is zero. One body for both devices: the range
as a (lo, hi) pair on the device (quantization/_kernels: calibrated, or the data's
min and max by blocks, NaN propagating), a one-item kernel for scale and shift, then an
element kernel (x * scale + shift in float32, + 0.5 in float64, clipped and truncated;
NaN gives 0).
"""

from __future__ import annotations

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
    FListOutputNames,
)
from ..base import InferError
from ..graph.grad import make_zero_grad_nodes
from ..infer import dtype_str, shape_assign, shape_is_known, type_assign
from ..kernel.launch import NULL, req_code, run_rows, store, uindex
from ..param import Parameter
from ..registry import NodeAttrs, register_op
from .quantization._common import calib_range_fields, calibrated
from .quantization._kernels import clip_code, coefficients, data_range, fixed_range

OP = "_contrib_quantize_asym"
_F32 = np.dtype(np.float32)
_U8 = np.dtype(np.uint8)


class QuantizeAsymParam(Parameter):
    min_calib_range, max_calib_range = calib_range_fields(
        ". If present, it will be used to quantize the fp32 data."
    )


def _quantize_asym_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    shape_assign(in_shapes, 0, out_shapes[0], f"{OP}: input 'data'")
    shape_assign(out_shapes, 0, in_shapes[0], f"{OP}: output 'output'")
    shape_assign(out_shapes, 1, (1,), f"{OP}: output 'scale'")
    shape_assign(out_shapes, 2, (1,), f"{OP}: output 'shift'")
    return all(shape_is_known(s) for s in [*in_shapes, *out_shapes])


def _quantize_asym_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    data = in_types[0]
    if data is not None and np.dtype(data) != _F32:
        raise InferError(f"{OP}: input 'data' has dtype {dtype_str(data)}; expected float32")
    type_assign(in_types, 0, _F32, f"{OP}: input 'data'")
    type_assign(out_types, 0, _U8, f"{OP}: output 'output'")
    type_assign(out_types, 1, _F32, f"{OP}: output 'scale'")
    return type_assign(out_types, 2, _F32, f"{OP}: output 'shift'")


@kernel.parallel_for
def _coefficients(i, bounds, coef):
    """coef = (scale, shift) in float32 arithmetic: 255 / (hi - lo), 255 - hi * scale."""
    lo = np.float32(bounds[0])
    hi = np.float32(bounds[1])
    scale = np.float32(255.0) / (hi - lo)
    coef[0] = scale
    coef[1] = np.float32(255.0) - hi * scale


@kernel.parallel_for
def _codes(i, x, q, coef, mode):
    v = float(x[uindex(i)] * np.float32(coef[0]) + np.float32(coef[1])) + 0.5
    store(q, i, clip_code(v, 255.0), mode)


@kernel.parallel_for
def _scale_shift(i, coef, scale, shift, scale_mode, shift_mode):
    store(scale, 0, np.float32(coef[0]), scale_mode)
    store(shift, 0, np.float32(coef[1]), shift_mode)


def _quantize_asym(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    modes = [req_code(OP, r) for r in req]
    if all(m == NULL for m in modes):
        return
    p, data = attrs.parsed, inputs[0]
    if calibrated(p):
        bounds = fixed_range(ctx, p.min_calib_range, p.max_calib_range)
    else:
        bounds = data_range(ctx, data)
    coef = coefficients(ctx, OP, _coefficients, 2, bounds)
    if modes[0] != NULL and data.size:
        run_rows(ctx, OP, _codes, int(data.size), data, outputs[0], coef, modes[0])
    run_rows(ctx, OP, _scale_shift, 1, coef, outputs[1], outputs[2], modes[1], modes[2])


(
    register_op(OP)
    .describe(
        "Quantize a float32 tensor to uint8 with a scale and a shift.\n\n"
        "`out[i] = in[i] * scale + shift + 0.5` (truncated), where "
        "`scale = 255 / (max_range - min_range)` and `shift = 255 - max_range * scale`; "
        "the range is (min_calib_range, max_calib_range) when both are given, else the "
        "data's minimum and maximum. Values outside the range saturate to 0 or 255. The "
        "outputs `scale` and `shift` are (1,) float32 arrays.\n\n"
        ".. Note::\n    This operator only supports forward propagation. DO NOT use it in "
        "training."
    )
    .set_attr_parser(QuantizeAsymParam)
    .set_num_inputs(1)
    .set_num_outputs(3)
    .set_attr(FListInputNames, lambda attrs: ["data"])
    .set_attr(FListOutputNames, lambda attrs: ["output", "scale", "shift"])
    .set_attr(FInferShape, _quantize_asym_shape)
    .set_attr(FInferType, _quantize_asym_type)
    .set_attr(FCompute_cpu, _quantize_asym)
    .set_attr(FCompute_gpu, _quantize_asym)
    .set_attr(FGradient, make_zero_grad_nodes)
    .add_argument("data", "NDArray-or-Symbol", "A ndarray/symbol of type `float32`")
    .add_arguments(QuantizeAsymParam.fields())
)
