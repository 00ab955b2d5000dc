"""NumPy references for the quantized ops whose FCompute was host NumPy until issue 16:
quantized_elemwise_add / _mul, quantized_concat, quantized_pooling, quantized_embedding and
quantized_batch_norm. Moved here unchanged from the op modules: each takes the op's parsed
parameters and its inputs, and returns one array per output, as the ops' kernels must.

Results are what NumPy gives on x86: a NaN cast to int8 / uint8 becomes 0, to int32
INT32_MIN. mul_np divides by Python floats, so a zero input range (with a float or
calibrated output) raises ZeroDivisionError here, where the kernels compute with IEEE
infinities; embedding_np raises IndexError for a NaN index, which the kernels map to row 0.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nnvmpy.base import NNVMError
from nnvmpy.kernel.launch import normalize_axis
from nnvmpy.ops.nn._geometry import as_5d, pool_out_size
from nnvmpy.ops.nn.pooling import window
from nnvmpy.ops.quantization._common import (
    F32,
    INT8,
    INT32,
    UINT8,
    calibrated,
    int32_range,
    max_abs,
    step_size,
    steps,
)
from nnvmpy.ops.quantization.quantized_concat import out_dtype

INT8_SCALE_RANGE = 127.5  # MXNet's kInt8Range: codes per MaxAbs when it rescales
_SCALE_RANGE = {INT8: 127.5, UINT8: 255.5}  # MXNet's kInt8Range / kUint8Range


# -- quantized_elemwise_add -------------------------------------------------------------------


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


# -- quantized_elemwise_mul -------------------------------------------------------------------


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


# -- quantized_concat -------------------------------------------------------------------------


def concat_np(p: Any, *inputs: np.ndarray) -> list[np.ndarray]:
    n = int(p.num_args)
    data, ranges = inputs[:n], inputs[n:]
    lows, highs = [ranges[2 * i] for i in range(n)], [ranges[2 * i + 1] for i in range(n)]
    lo = min(float(x.reshape(-1)[0]) for x in lows)
    hi = max(float(x.reshape(-1)[0]) for x in highs)
    dtype = out_dtype([d.dtype for d in data])
    out_step = max(abs(lo), abs(hi)) / steps(dtype)
    info = np.iinfo(dtype)
    parts = []
    for x, a, b in zip(data, lows, highs):
        step = max_abs(a, b) / steps(x.dtype)
        if step == out_step or out_step == 0:
            parts.append(x.astype(dtype) if x.dtype == dtype else np.clip(x, info.min, info.max))
            continue
        scaled = np.rint(x.astype(np.float64) * (step / out_step))
        parts.append(np.clip(scaled, info.min, info.max))
    axis = p.dim % data[0].ndim
    out = np.concatenate([part.astype(dtype) for part in parts], axis=axis)
    return [out, np.array([lo], F32), np.array([hi], F32)]


# -- quantized_pooling ------------------------------------------------------------------------


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


def pooling_np(p: Any, data: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> list[np.ndarray]:
    return [pool_codes(p, data), lo.astype(F32), hi.astype(F32)]


# -- quantized_embedding ----------------------------------------------------------------------


def embedding_np(
    p: Any, data: np.ndarray, weight: np.ndarray, *ranges: np.ndarray
) -> list[np.ndarray]:
    rows = np.clip(np.rint(data.astype(np.float64)), 0, p.input_dim - 1).astype(np.int64)
    return [weight[rows], ranges[0].astype(F32), ranges[1].astype(F32)]


# -- quantized_batch_norm ---------------------------------------------------------------------

BN_OP = "_contrib_quantized_batch_norm"


def batch_norm_np(p: Any, data: np.ndarray, gamma, beta, mean, var, lo, hi) -> list[np.ndarray]:
    if not calibrated(p):
        raise NNVMError(
            f"{BN_OP}: min_calib_range and max_calib_range are required (the int8 output's "
            f"range); calibrate the model first"
        )
    axis = normalize_axis(BN_OP, p.axis, data.shape)
    shape = [1] * data.ndim
    shape[axis] = -1

    def per_channel(v: np.ndarray) -> np.ndarray:
        return v.astype(np.float64).reshape(shape)

    x = data.astype(np.float64) * (max_abs(lo, hi) / _SCALE_RANGE[np.dtype(data.dtype)])
    invstd = 1.0 / np.sqrt(per_channel(var) + p.eps)
    y = (x - per_channel(mean)) * invstd * per_channel(gamma) + per_channel(beta)
    r = max(abs(p.min_calib_range), abs(p.max_calib_range))
    scale = _SCALE_RANGE[INT8] / r if r > 0 else 0.0
    codes = np.clip(np.rint(y * scale), -128, 127).astype(np.int8)
    return [codes, np.array([p.min_calib_range], F32), np.array([p.max_calib_range], F32)]
