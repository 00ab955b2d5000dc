"""The element-wise quantization kernels: float <-> 8-bit codes, one body for both devices.

quantize, dequantize, quantize_v2 and requantize map every element with the same rule
given a real range, and the range itself may come from (1,) arrays on the device, from
calibrated parameters, or from the data's own min and max. So a range is always a
(lo, hi) pair in a small float64 array on the op's device (`bounds`), made by

- `range_of(ctx, lo, hi)`: the first entries of two (1,) range inputs (a kernel copies
  them, so a GPU's range never visits the host);
- `ranges_of(ctx, ranges)`: the same for several inputs' pairs, in one array;
- `fixed_range(ctx, lo, hi)`: two numbers (calibrated parameters);
- `data_range(ctx, x)`: the data's min and max (blocks of BLOCK elements per item, then
  one item over the blocks; NaN propagates, as NumPy's min and max; an empty array gives
  (0, 0)), exact for float32 and int32 data,

and a one-item kernel turns the range into the few coefficients the element kernel reads
(quantize divides once per call, not per element). Rounding follows the documented
formulas: a value is clipped to the code range, then truncated; NaN becomes code 0.
quantize / quantize_v2 / dequantize compute in float64, requantize in float32, as
MXNet's kernels.

They replaced NumPy on the host (staged through it on a GPU). 1M elements, two cores,
before -> after (MXNet 1.9.1 in the same sitting): quantize 6.5 -> 0.26 ms (0.23),
dequantize 4.3 -> 0.25 (0.13), quantize_v2 calibrated 9.2 -> 0.25 (0.19), with the range
found in the data 9.7 -> 0.54 (1.28), requantize 2.0 -> 0.55 (1.68).

The other quantized ops that rescale codes (elemwise add / mul, concat, pooling,
embedding, batch_norm) keep their bodies in their own files and share from here
`clamp_code` (NumPy's clip-then-cast, NaN as x86 casts it), `range_out` (an output
range computed on the device, as float32) and `row_chunks` (items of a row loop).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ... import kernel
from ...kernel import uindex
from ...kernel.bits import pick
from ...kernel.launch import NULL, flat, is_gpu, run_rows, store
from .._index_kernels import to_ctx

BLOCK = 1 << 14  # elements per partial min/max item
CHUNK = 1 << 12  # elements per CPU item of a row loop (row_chunks)
INT32_MAX = 2147483647.0
_F32 = np.float32


# -- rules ---------------------------------------------------------------------------------


@kernel.device_function
def clip_code(v, top):
    """v clipped to [0, top] and truncated to an int32; NaN gives 0 (v and top of one
    float type). Selects (kernel.bits.pick) and an int32 conversion: written as
    conditional expressions (branches to numba) in a body inlined at numba's IR level,
    the code loops stayed scalar (one thread, int8 codes: quantize 0.87 -> 0.13 ns per
    element, requantize 3.5 -> 0.11), and int() converts to int64 lanes."""
    c = pick(v > 0.0, v, top - top)
    return np.int32(pick(c < top, c, top))


@kernel.device_function
def signed_code(x, scale, half, top):
    """sign(x) min(|x| scale + 1/2, top), truncated (zero stays zero; NaN gives 0); `half`
    is 0.5 in the arithmetic's type. Negated before the truncation, which is symmetric:
    the same codes as clip_code's negated, in selects only (see there)."""
    c = abs(x) * scale + half
    c = pick(c > 0.0, c, top - top)
    c = pick(c < top, c, top)
    return np.int32(pick(x < 0, -c, c))


@kernel.device_function
def clamp_code(v, lo, hi, nan):
    """v clipped to [lo, hi] and truncated, `nan` for NaN: NumPy's clip-then-cast, whose
    NaN gives 0 in 8 bits and lo (INT32_MIN) in int32 on x86 (`code_limits`). Selects
    only: the simulator cannot convert NaN."""
    c = v if v > lo else lo
    c = c if c < hi else hi
    return int(c if v == v else nan)


@kernel.device_function
def max_abs(lo, hi):
    """max(|lo|, |hi|), NaN when lo is (as Python's max(nan, h))."""
    a = abs(lo)
    b = abs(hi)
    return b if b > a else a


def code_limits(dtype: Any) -> tuple[float, float, int]:
    """clamp_code's (lo, hi, nan) for integer codes of `dtype`."""
    info = np.iinfo(dtype)
    return float(info.min), float(info.max), int(info.min) if info.bits == 32 else 0


# -- ranges --------------------------------------------------------------------------------


@kernel.parallel_for
def _copy_range(i, lo, hi, bounds):
    bounds[0] = lo[0]
    bounds[1] = hi[0]


@kernel.device_function
def _with_nan(lo, hi, nan):
    """(lo, hi), both NaN if a NaN was seen (NumPy's min and max propagate it)."""
    if nan or lo != lo or hi != hi:
        return np.nan, np.nan
    return np.float64(lo), np.float64(hi)


@kernel.parallel_for
def _block_min_max(b, x, n, block, partial):
    """partial[2b], partial[2b + 1]: min and max of block b of x (NaN if any). Selects and
    a NaN flag, no branches: the loop vectorises."""
    start = b * block
    lo = x[start]
    hi = x[start]
    nan = False
    for i in range(start + 1, min(start + block, n)):
        v = x[i]
        nan |= v != v
        lo = v if v < lo else lo
        hi = v if v > hi else hi
    partial[2 * b], partial[2 * b + 1] = _with_nan(lo, hi, nan)


@kernel.parallel_for
def _merge_min_max(i, partial, blocks, bounds):
    lo = partial[0]
    hi = partial[1]
    nan = False
    for b in range(blocks):
        v = partial[2 * b]
        nan |= v != v
        lo = v if v < lo else lo
        v = partial[2 * b + 1]
        hi = v if v > hi else hi
    bounds[0], bounds[1] = _with_nan(lo, hi, nan)


def range_of(ctx: Any, lo: Any, hi: Any) -> Any:
    """bounds from two (1,) range inputs."""
    bounds = to_ctx(ctx, np.zeros(2))
    _copy_range.launch(ctx, 1, flat(lo), flat(hi), bounds)
    return bounds


def ranges_of(ctx: Any, ranges: Sequence[Any]) -> Any:
    """bounds of several inputs, (lo_0, hi_0, lo_1, hi_1, ...), from their (1,) range
    inputs in that order."""
    bounds = to_ctx(ctx, np.zeros(len(ranges)))
    for k in range(0, len(ranges), 2):
        _copy_range.launch(ctx, 1, flat(ranges[k]), flat(ranges[k + 1]), bounds[k : k + 2])
    return bounds


def fixed_range(ctx: Any, lo: float, hi: float) -> Any:
    return to_ctx(ctx, np.array([lo, hi], np.float64))


def data_range(ctx: Any, x: Any) -> Any:
    """bounds = (min, max) of x; (0, 0) when x is empty."""
    n = x.size
    if n == 0:
        return fixed_range(ctx, 0.0, 0.0)
    blocks = -(-n // BLOCK)
    partial = to_ctx(ctx, np.zeros(2 * blocks))
    bounds = to_ctx(ctx, np.zeros(2))
    _block_min_max.launch(ctx, blocks, flat(x), n, BLOCK, partial, work=n)
    _merge_min_max.launch(ctx, 1, partial, blocks, bounds)
    return bounds


# -- float64 rules: quantize, quantize_v2, dequantize --------------------------------------


@kernel.parallel_for
def quantize_coefficients(i, bounds, signed, coef):
    """coef = (offset, scale) of the codes over bounds: q = (x - offset) scale + 0.5,
    clipped (int8: |x| scale + 0.5 with x's sign); an empty range maps all to 0."""
    lo = bounds[0]
    hi = bounds[1]
    if signed:
        r = max_abs(lo, hi)
        coef[0] = 0.0
        coef[1] = 127.0 / r if r > 0 else 0.0
    else:
        width = hi - lo
        coef[0] = lo
        coef[1] = 255.0 / width if width > 0 else 0.0


@kernel.parallel_for
def quantize_codes(i, x, q, coef, signed, mode):
    """q[i]: the int8 (signed) or uint8 code of x[i], float64 (coef from
    quantize_coefficients)."""
    v = np.float64(x[uindex(i)])
    if signed:
        code = signed_code(v, coef[1], 0.5, 127.0)
    else:
        code = clip_code((v - coef[0]) * coef[1] + 0.5, 255.0)
    store(q, i, code, mode)


@kernel.parallel_for
def quantized_range(i, bounds, signed, lo_out, hi_out, mode_lo, mode_hi):
    """The codes' range: (-r, r) for int8 codes, the range itself for uint8 (float32)."""
    lo = bounds[0]
    hi = bounds[1]
    if signed:
        r = max_abs(lo, hi)
        lo = -r
        hi = r
    store(lo_out, 0, lo, mode_lo)
    store(hi_out, 0, hi, mode_hi)


@kernel.parallel_for
def dequantize_coefficients(i, bounds, signed, coef):
    """coef = (lo, hi - lo) for uint8 codes, (0, MaxAbs(lo, hi)) for int8."""
    lo = bounds[0]
    hi = bounds[1]
    coef[0] = 0.0 if signed else lo
    coef[1] = max_abs(lo, hi) if signed else hi - lo


@kernel.parallel_for
def dequantize_codes(i, q, out, coef, signed, mode):
    """out[i] = q[i] r / 127 (int8) or lo + q[i] (hi - lo) / 255 (uint8), float64."""
    v = np.float64(q[uindex(i)])
    if signed:
        store(out, i, v * coef[1] / 127.0, mode)
    else:
        store(out, i, coef[0] + v * coef[1] / 255.0, mode)


@kernel.parallel_for
def copy_codes(i, x, out, mode):
    """8-bit data passed through (quantize_v2 of int8/uint8 data)."""
    store(out, i, x[uindex(i)], mode)


@kernel.parallel_for
def relu_codes(i, x, out, mode):
    """max(code, 0): the code of max(x, 0) under a symmetric range (quantized_act)."""
    v = x[uindex(i)]
    store(out, i, v if v > 0 else 0, mode)


@kernel.parallel_for
def range_out(i, coef, k, lo_out, hi_out, mode_lo, mode_hi):
    """The output range (coef[k], coef[k + 1]), rounded to float32 before an add request
    adds it (as NumPy's `out += value.astype(float32)`)."""
    store(lo_out, 0, _F32(coef[k]), mode_lo)
    store(hi_out, 0, _F32(coef[k + 1]), mode_hi)


@kernel.parallel_for
def pass_range(i, lo, hi, lo_out, hi_out, mode_lo, mode_hi):
    """The input range, unchanged, as the output range."""
    store(lo_out, 0, lo[0], mode_lo)
    store(hi_out, 0, hi[0], mode_hi)


# -- float32 rules: requantize -------------------------------------------------------------


@kernel.parallel_for
def requantize_coefficients(i, bounds, data_bounds, calibrated, signed, coef):
    """coef = (scale_in, scale, r), float32 values: an int32 code's real value, the new
    codes per real unit, and the new real range r (the calibrated one, else the data's
    largest magnitude)."""
    scale_in = _F32(max_abs(bounds[0], bounds[1]) / INT32_MAX)
    r = _F32(max_abs(data_bounds[0], data_bounds[1]))
    if not calibrated:
        r = r * scale_in
    top = _F32(127.0) if signed else _F32(255.0)
    coef[0] = scale_in
    coef[1] = _F32(top / r) if r > 0 else _F32(0.0)
    coef[2] = r


@kernel.parallel_for
def requantize_codes(i, x, q, coef, signed, mode):
    """q[i]: x[i] (int32 codes) as 8-bit codes, in float32 arithmetic (coef from
    requantize_coefficients)."""
    v = _F32(x[uindex(i)]) * _F32(coef[0])
    scale = _F32(coef[1])
    if signed:
        code = signed_code(v, scale, _F32(0.5), _F32(127.0))
    else:
        code = clip_code(v * scale + _F32(0.5), _F32(255.0))
    store(q, i, code, mode)


@kernel.parallel_for
def requantized_range(i, coef, signed, lo_out, hi_out, mode_lo, mode_hi):
    """(-r, r) for int8 codes, (0, r) for uint8."""
    r = coef[2]
    store(lo_out, 0, -r if signed else 0.0, mode_lo)
    store(hi_out, 0, r, mode_hi)


def row_chunks(ctx: Any, width: int) -> tuple[int, int]:
    """(chunk, chunks per row) for a loop over rows of `width` elements: one element per
    item on the GPU (coalesced), up to CHUNK on the CPU (one index division per item)."""
    chunk = 1 if is_gpu(ctx) else max(1, min(width, CHUNK))
    return chunk, -(-width // chunk)


def coefficients(ctx: Any, name: str, prologue: Any, size: int, *args: Any) -> Any:
    """A float64 array of `size` coefficients on ctx's device, filled by the one-item
    kernel `prologue(0, *args, coef)`."""
    coef = to_ctx(ctx, np.zeros(size))
    run_rows(ctx, name, prologue, 1, *args, coef)
    return coef


def quantize(ctx: Any, op: str, data: Any, bounds: Any, signed: bool, outputs: list[Any],
             modes: list[int]) -> None:  # fmt: skip
    """Op `op`'s outputs (codes, min, max) for float data over the range `bounds`."""
    if modes[0] != NULL:
        coef = coefficients(ctx, op, quantize_coefficients, 2, bounds, signed)
        run_rows(ctx, op, quantize_codes, data.size, data, outputs[0], coef, signed, modes[0])
    run_rows(ctx, op, quantized_range, 1, bounds, signed, *outputs[1:], *modes[1:])


__all__ = [
    "BLOCK",
    "CHUNK",
    "clamp_code",
    "code_limits",
    "coefficients",
    "copy_codes",
    "data_range",
    "dequantize_codes",
    "dequantize_coefficients",
    "fixed_range",
    "max_abs",
    "pass_range",
    "quantize",
    "quantize_codes",
    "quantize_coefficients",
    "quantized_range",
    "range_of",
    "range_out",
    "ranges_of",
    "relu_codes",
    "requantize_codes",
    "requantize_coefficients",
    "requantized_range",
    "row_chunks",
]
