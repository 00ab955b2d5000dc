"""bfloat16 operands for the CPU GEMMs: float32 -> bfloat16 bits as they are packed, and
the GEMM that multiplies them with float32 accumulation (issue 17, item 4).

numpy has no bfloat16, so the operands are its bits in uint16 arrays: bfloat16 is the
upper half of a float32, rounded here to nearest even (NaN kept a quiet NaN),

    bits(v) = (u + 0x7FFF + ((u >> 16) & 1)) >> 16        u = the float32's bits

and those bits widened back (`bits << 16`) are exactly the rounded float32 value. The
kernels round while they copy (weights once, in their packing order; a padded chunk of
images; a chunk of images before im2col copies its bits; FullyConnected's input rows),
so no float32 intermediate of the rounded operand is ever written.

`gemm` runs out (float32) = A @ B + beta * out on those bits: MKL's
cblas_gemm_bf16bf16f32 (AMX / AVX512-BF16 where the CPU has them) when the active BLAS
has it, else an emulation that widens the rounded operands to float32 and runs the
float32 GEMM. The products of two bfloat16 values are exact in float32 and both sum in
float32, so the two agree up to summation order. `path()` says which one runs and
`stats` counts the calls of each (tests and debug_str read them).

Serial kernels, as _im2col.py's: they run between BLAS calls (see there why).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import kernel
from ...kernel.bits import add32, and32, or32, sra32
from . import _blas
from ._uindex import u as _u

#: since import: GEMM calls per path ("mkl", "emulated"), weights packed ("packs")
stats = {"mkl": 0, "emulated": 0, "packs": 0}


def path() -> str:
    """'mkl' where MKL's bfloat16 GEMM runs, else 'emulated' (float32 GEMM on rounded values)."""
    return "mkl" if _blas.has_bf16() else "emulated"


@kernel.device_function
def _rne(u):
    # the bfloat16 bits of the float32 whose bits are u (uint32), in the low 16 bits of
    # the int32 returned (the kernels store it into uint16): round to nearest even; a NaN
    # keeps its sign and payload top bits and is made quiet (so it cannot become inf).
    # In int32 arithmetic that stays 32 bits wide (kernel.bits): numba computes uint32
    # expressions in int64, and the vectorised copy ran in 64-bit lanes, widening and
    # narrowing every 16 values (0.094 -> 0.042 ns per value in cache, one thread). The
    # sum cannot carry past bit 31 for non-NaN u, and the arithmetic shift differs from
    # the logical one only above bit 15, which the store drops: the same bits.
    s = np.int32(u)
    if and32(s, 0x7FFFFFFF) > 0x7F800000:
        return or32(sra32(s, 16), 0x40)
    return sra32(add32(add32(s, 0x7FFF), and32(sra32(s, 16), 1)), 16)


def f32_bits(x: Any) -> Any:
    """The uint32 view of a contiguous float32 array, flattened (what the kernels read)."""
    return np.ascontiguousarray(x, np.float32).reshape(-1).view(np.uint32)


@kernel.cpu_kernel(parallel=False)
def _round(src, dst):
    # dst[i] = bits(src[i]): src the uint32 view of float32 values, dst uint16
    for i in range(src.size):
        dst[_u(i)] = _rne(src[_u(i)])


@kernel.cpu_kernel(parallel=False)
def _round_permuted(src, dst, outer, mid, inner):
    # dst[o, k, m] = bits(src[o, m, k]) for src (outer, mid, inner): a weight (F, cg, taps)
    # packed channels last, (F, taps, cg)
    for o in range(outer):
        base = o * mid * inner
        for m in range(mid):
            for k in range(inner):
                dst[_u(base + k * mid + m)] = _rne(src[_u(base + m * inner + k)])


def round_to_bits(x: Any, out: Any | None = None) -> Any:
    """bfloat16 bits (uint16, x's shape) of float32 x, rounded to nearest even."""
    if out is None:
        out = np.empty(np.shape(x), np.uint16)
    _round(f32_bits(x), out.reshape(-1))
    return out


def pack_channels_last(w: Any, out: Any) -> None:
    """out (uint16, w.size values) = the bits of w (F, cg, *kernel) laid out (F, *kernel, cg):
    the order of a convolution's bfloat16 columns (_conv_bf16.py)."""
    f, cg = int(w.shape[0]), int(w.shape[1])
    taps = int(w.size) // max(1, f * cg)
    _round_permuted(f32_bits(w), out.reshape(-1), f, cg, taps)


def widen(bits: Any) -> Any:
    """float32 values of bfloat16 bits (exact)."""
    return (np.asarray(bits, np.uint16).astype(np.uint32) << 16).view(np.float32)


def gemm(a: Any, b: Any, out: Any, beta: float = 0.0) -> None:
    """out (float32, 2-D) = a @ b + beta * out for bfloat16 bits a (m, k), b (k, n): 2-D
    views with one unit stride each; float32 accumulation on either path."""
    if _blas.has_bf16():
        stats["mkl"] += 1
        _blas.matmul_bf16(a, b, out, beta)
        return
    stats["emulated"] += 1
    _blas.matmul(widen(a), widen(b), out, beta)


# -- padded images of a 2-D convolution, as bfloat16 bits (im2col copies bits with
#    _im2col._im2col: _conv_bf16.py rounds the images first) ------------------------------------


@kernel.cpu_kernel(parallel=False)
def _pad_images(x, xp, n0, nb, c0, cg, ph, pw, wp, plane, tail, kw, dw):
    # xp[c, b*plane + (h+ph)*wp + (w+pw)] = bits(x[n0+b, c0+c, h, w]), zero around it and in
    # the `tail` columns after the last image (_conv_shift.py's padded layout); then the
    # row block j (rows j*cg + c, j < kw) holds that row read j*dw columns later:
    # xp[j*cg + c, q] = xp[c, q + j*dw] for q < nb*plane.
    n_c, height, width = x.shape[1], x.shape[2], x.shape[3]
    ld = xp.shape[1]
    xf = x.reshape(-1)
    pf = xp.reshape(-1)
    used = nb * plane
    for c in range(cg):
        for b in range(nb):
            row = c * ld + b * plane
            src = ((n0 + b) * n_c + c0 + c) * height * width
            for p in range(ph * wp):
                pf[_u(row + p)] = 0
            for h in range(height):
                start = row + (h + ph) * wp
                for p in range(pw):
                    pf[_u(start + p)] = 0
                for w in range(width):
                    pf[_u(start + pw + w)] = _rne(xf[_u(src + h * width + w)])
                for p in range(pw + width, wp):
                    pf[_u(start + p)] = 0
            for p in range((ph + height) * wp, plane):
                pf[_u(row + p)] = 0
        end = c * ld + used
        for p in range(tail):
            pf[_u(end + p)] = 0
        for j in range(1, kw):
            dst = (j * cg + c) * ld
            src = c * ld + j * dw
            for q in range(used):
                pf[_u(dst + q)] = pf[_u(src + q)]


__all__ = [
    "f32_bits",
    "gemm",
    "pack_channels_last",
    "path",
    "round_to_bits",
    "stats",
    "widen",
]
