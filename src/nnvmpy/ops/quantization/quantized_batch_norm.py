"""quantized_batch_norm: inference BatchNorm from int8/uint8 codes to calibrated int8 codes.

Inputs data (int8 or uint8), gamma, beta, moving_mean, moving_var (float32, (C,); the last
two auxiliary states, as BatchNorm's), min_data, max_data. Outputs (output int8,
min_output, max_output). BatchNorm's parameters; min_calib_range/max_calib_range are
required, as in MXNet 1.9.1 ("calib_mode=None" is not supported), and become the output
range:

    x = code * MaxAbs(min_data, max_data) / 127.5     (255.5 for uint8 data)
    y = (x - moving_mean) / sqrt(moving_var + eps) * gamma + beta
    output = saturate(round(y * 127.5 / MaxAbs(min_calib_range, max_calib_range)))

127.5 and 255.5 are MXNet's kInt8Range/kUint8Range, which its kernel scales by; the
moving statistics are always used. As MXNet's kernel, gamma applies even with
fix_gamma=True (a model trained with fix_gamma keeps gamma at 1). With uint8 data MXNet's
MKL-DNN kernel may differ from this formula by one code. Computed in float64, rounded to
the nearest code (ties to even); NaN (a negative moving_var + eps) gives code 0.

One body for both devices: a kernel over the channels computes 1 / sqrt(var + eps) and
the data's step from the (1,) range inputs on the op's device (a GPU's ranges never
visit the host), then a chunk of a channel row per item on the CPU, one element per
item on the GPU.
"""

from __future__ import annotations

import math
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
    FMutateInputs,
)
from ...base import NNVMError
from ...graph.grad import make_zero_grad_nodes
from ...infer import shape_assign, type_assign
from ...kernel import uindex
from ...kernel.launch import NULL, normalize_axis, req_code, run_rows, split_axis, store
from ...registry import NodeAttrs, register_op
from .._index_kernels import to_ctx
from ..nn.batch_norm import BatchNormParam
from ._common import (
    F32,
    INT8,
    UINT8,
    all_known,
    assign_range_shapes,
    assign_range_types,
    calib_range_fields,
    calibrated,
    check_quantized,
)
from ._kernels import clamp_code, max_abs, range_out, row_chunks

OP = "_contrib_quantized_batch_norm"
NAMES = ["data", "gamma", "beta", "moving_mean", "moving_var", "min_data", "max_data"]
OUTPUTS = ["output", "min_output", "max_output"]
_SCALE_RANGE = {INT8: 127.5, UINT8: 255.5}  # MXNet's kInt8Range / kUint8Range


class QuantizedBatchNormParam(BatchNormParam):
    min_calib_range, max_calib_range = calib_range_fields(
        " obtained through calibration: the range of the int8 output (required)."
    )


@kernel.parallel_for
def bn_coefficients(c, var, lo, hi, eps, data_steps, channels, coef):
    """coef[c] = 1 / sqrt(var[c] + eps) (NaN for a negative sum); coef[channels] = the real
    value of one data code, MaxAbs(min_data, max_data) / data_steps."""
    v = np.float64(var[c]) + eps
    # math.sqrt (numba-cuda lowers no np.sqrt); a negative sum gives NaN, as np.sqrt does,
    # without calling it (the simulator's math.sqrt raises there)
    coef[c] = 1.0 / np.float64(math.sqrt(v)) if v >= 0 else np.nan
    if c == 0:
        coef[channels] = max_abs(np.float64(lo[0]), np.float64(hi[0])) / data_steps


@kernel.parallel_for
def bn_codes(t, x, out, gamma, beta, mean, coef, channels, inner, chunk, nchunk, scale, mode):
    """Item t: `chunk` elements of row (o, c) of x viewed as (outer, channels, inner):
    y = (code step - mean) invstd gamma + beta in float64, then rint(y scale) saturated to
    int8 (NaN: 0)."""
    row = t // nchunk
    k0 = (t - row * nchunk) * chunk
    c = row % channels
    step = coef[channels]
    invstd = coef[c]
    m = np.float64(mean[c])
    g = np.float64(gamma[c])
    b = np.float64(beta[c])
    base = row * inner
    for k in range(k0, min(k0 + chunk, inner)):
        v = np.float64(x[uindex(base + k)]) * step
        y = (v - m) * invstd * g + b
        store(out, base + k, clamp_code(np.rint(y * scale), -128.0, 127.0, 0), mode)


def _compute(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    p = attrs.parsed
    if not calibrated(p):
        raise NNVMError(
            f"{OP}: min_calib_range and max_calib_range are required (the int8 output's "
            f"range); calibrate the model first"
        )
    modes = [req_code(OP, r) for r in req]
    data, gamma, beta, mean, var, lo, hi = inputs
    shape = tuple(data.shape)
    outer, channels, inner = split_axis(shape, normalize_axis(OP, p.axis, shape))
    # (invstd per channel, data step, the output range: the calibrated one)
    coef = to_ctx(ctx, np.r_[np.zeros(channels + 1), p.min_calib_range, p.max_calib_range])
    run_rows(ctx, OP, bn_coefficients, channels, var, lo, hi, p.eps,
             _SCALE_RANGE[np.dtype(data.dtype)], channels, coef)  # fmt: skip
    if modes[0] != NULL:
        r = max(abs(p.min_calib_range), abs(p.max_calib_range))
        scale = _SCALE_RANGE[INT8] / r if r > 0 else 0.0
        chunk, nchunk = row_chunks(ctx, inner)
        run_rows(ctx, OP, bn_codes, outer * channels * nchunk, data, outputs[0], gamma, beta,
                 mean, coef, channels, inner, chunk, nchunk, scale, modes[0])  # fmt: skip
    run_rows(ctx, OP, range_out, 1, coef, channels + 1, *outputs[1:], *modes[1:])


def _shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    shape_assign(in_shapes, 0, out_shapes[0], f"{OP}: input 'data'")
    shape_assign(out_shapes, 0, in_shapes[0], f"{OP}: output 'output'")
    data = in_shapes[0]
    if data is not None:
        axis = normalize_axis(OP, attrs.parsed.axis, data)
        for i in range(1, 5):
            shape_assign(in_shapes, i, (data[axis],), f"{OP}: input {NAMES[i]!r}")
    assign_range_shapes(OP, NAMES, in_shapes, out_shapes, 5, 1)
    return all_known(in_shapes, out_shapes)


def _type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    check_quantized(OP, "data", in_types[0])
    for i in range(1, 5):
        type_assign(in_types, i, F32, f"{OP}: input {NAMES[i]!r}")
    assign_range_types(OP, NAMES, in_types, out_types, 5, 1)
    type_assign(out_types, 0, INT8, f"{OP}: output 'output'")
    return in_types[0] is not None


(
    register_op(OP)
    .describe(
        "Inference BatchNorm on quantized data: the int8 (or uint8) "
        "input with its float32 (min_data, max_data) range is normalised with the moving "
        "statistics, scaled by gamma and shifted by beta, and quantized to int8 over the "
        "calibrated (min_calib_range, max_calib_range), which is also returned as the "
        "output's range.\n\n"
        "Forward only: it has no gradient and is meant for inference graphs."
    )
    .set_attr_parser(QuantizedBatchNormParam)
    .set_num_inputs(7)
    .set_num_outputs(3)
    .set_attr(FListInputNames, lambda attrs: list(NAMES))
    .set_attr(FListOutputNames, lambda attrs: list(OUTPUTS))
    .set_attr(FMutateInputs, lambda attrs: [3, 4])
    .set_attr(FInferShape, _shape)
    .set_attr(FInferType, _type)
    .set_attr(FCompute_cpu, _compute)
    .set_attr(FCompute_gpu, _compute)
    .set_attr(FGradient, make_zero_grad_nodes)
    .add_argument("data", "NDArray-or-Symbol", "Input data.")
    .add_argument("gamma", "NDArray-or-Symbol", "gamma.")
    .add_argument("beta", "NDArray-or-Symbol", "beta.")
    .add_argument("moving_mean", "NDArray-or-Symbol", "moving_mean.")
    .add_argument("moving_var", "NDArray-or-Symbol", "moving_var.")
    .add_argument("min_data", "NDArray-or-Symbol", "Minimum value of data.")
    .add_argument("max_data", "NDArray-or-Symbol", "Maximum value of data.")
    .add_arguments(QuantizedBatchNormParam.fields())
)
