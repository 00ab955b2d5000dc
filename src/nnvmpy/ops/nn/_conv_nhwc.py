"""CPU Convolution forward over channels-last data: im2row + one GEMM per chunk of rows.

The ChannelsLast pass (passes/channels_last.py) hands these layers their data as
(N, H, W, C) and their weight packed (F, kh, kw, C). Then every output position is one
row of an (N*Ho*Wo, F) matrix, and its window is kh runs of kw*C contiguous input values
(one run per tap where the window crosses an edge or is dilated):

    col[r, (i*kw + j)*C + c] = x[n, oy*sh - ph + i*dh, ox*sw - pw + j*dw, c]   (0 in the pad)
    out[r0:r1] = col @ W^T                                                 (r = (n*Ho + oy)*Wo + ox)

Why. In NCHW a strided window is a gather of scattered scalars per channel plane (im2col
by stride phases); here it is a few memcpy-sized runs, and a 1x1 stride-1 layer needs no
copy at all (the input is the column matrix). Measured on this 2-core machine, ResNet-18
at batch 1 (MKL): 64->128 3x3/2 1.17 -> 0.91 ms, 128->256 3x3/2 1.09 -> 0.71, the 1x1/2
downsamples 0.39/0.34/0.58 -> 0.22/0.21/0.25. The 3x3 stride-1 layers Winograd serves
stay NCHW (the pass asks `pays`).

Rows are cut into chunks whose column matrix fits CHUNK_BYTES; the chunks are dealt to
_lanes' partitions (one-thread GEMMs) as the NCHW path's are, and the bias, a residual
and relu are applied to each chunk's rows right after its GEMM wrote them.

Imported on the first CPU launch (it imports numba).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import prange

from ... import kernel, threads
from ...kernel.cpu import cached_njit
from . import _blas, _lanes
from ._uindex import u as _u

#: a chunk's column matrix takes about this many bytes (a few L2s: wide enough for the
#: GEMM to run near its peak, small enough to be re-read from cache)
CHUNK_BYTES = 4 << 20
#: ... and at least this many rows (narrower GEMMs lose more than the cache saves)
MIN_ROWS = 256
_ZERO = np.float32(0)  # float32, so that a float32 v stays float32 (vectorises wider)


@cached_njit(nogil=True, inline="always")
def _rows(x, col, r0, t0, t1, kh, kw, sh, sw, ph, pw, dh, dw, ho, wo):  # pragma: no cover
    # col[t] = the window of output position r0 + t, for t in [t0, t1)
    height, width, c = x.shape[1], x.shape[2], x.shape[3]
    k = kh * kw * c
    run = kw * c
    xf = x.reshape(-1)
    cf = col.reshape(-1)
    plane = ho * wo
    for t in range(t0, t1):
        r = r0 + t
        n = r // plane
        q = r - n * plane
        oy = q // wo
        ox = q - oy * wo
        x0 = ox * sw - pw
        whole = dw == 1 and x0 >= 0 and x0 + kw <= width  # the kw taps are one run
        for i in range(kh):
            iy = oy * sh - ph + i * dh
            dst = t * k + i * run
            if iy < 0 or iy >= height:
                for e in range(run):
                    cf[_u(dst + e)] = 0
                continue
            row = (n * height + iy) * width
            if whole:
                src = (row + x0) * c
                for e in range(run):
                    cf[_u(dst + e)] = xf[_u(src + e)]
                continue
            for j in range(kw):
                ix = x0 + j * dw
                d = dst + j * c
                if ix < 0 or ix >= width:
                    for e in range(c):
                        cf[_u(d + e)] = 0
                else:
                    src = (row + ix) * c
                    for e in range(c):
                        cf[_u(d + e)] = xf[_u(src + e)]


@kernel.cpu_kernel(parallel=False)
def _im2row(x, col, r0, m, kh, kw, sh, sw, ph, pw, dh, dw, ho, wo):
    _rows(x, col, r0, 0, m, kh, kw, sh, sw, ph, pw, dh, dw, ho, wo)


@kernel.cpu_kernel
def _im2row_team(x, col, r0, m, kh, kw, sh, sw, ph, pw, dh, dw, ho, wo, parts):
    # _im2row as one parallel loop over `parts` ranges of rows
    for p in prange(parts):
        _rows(
            x, col, r0, m * p // parts, m * (p + 1) // parts, kh, kw, sh, sw, ph, pw, dh, dw, ho, wo
        )


@kernel.cpu_kernel(parallel=False)
def _epilogue(out, r0, r1, bias, has_bias, res, has_res, relu, add_to, acc):
    # out[r] (=|+=) relu?(acc[r - r0] + bias + res[r]) for rows [r0, r1) of out (R, F);
    # acc is out itself (rows r0..r1) unless add_to, when it is the chunk's GEMM result
    f = out.shape[1]
    of = out.reshape(-1)
    af = acc.reshape(-1)
    rf = res.reshape(-1)
    for r in range(r0, r1):
        base = r * f
        src = (r - r0) * f if add_to else base
        for q in range(f):
            v = af[_u(src + q)]
            if has_bias:
                v += bias[q]
            if has_res:
                v += rf[_u(base + q)]
            if relu and v <= 0:
                v = _ZERO  # +0 for -0 and -inf; NaN stays NaN, as relu
            if add_to:
                of[_u(base + q)] += v
            else:
                of[_u(base + q)] = v


def forward(
    x: Any,
    w: Any,
    bias: Any,
    out: Any,
    add: bool,
    res: Any,
    stride: tuple[int, int],
    pad: tuple[int, int],
    dilate: tuple[int, int],
    residual: Any = None,
    relu: bool = False,
) -> None:
    """out (=|+=) relu?(conv(x, w) + bias + residual) for x (N, H, W, C), w (F, kh, kw, C),
    out and residual (N, Ho, Wo, F), bias (F,) or None; all C-contiguous, one dtype.
    `res` is the temp-space resource (its get_space gives the column matrices)."""
    n, _h, _wd, c = x.shape
    f, kh, kw, _ = w.shape
    ho, wo = out.shape[1], out.shape[2]
    total, k = n * ho * wo, kh * kw * c
    if total == 0 or f == 0:
        return
    out2, w2 = out.reshape(total, f), w.reshape(f, k)
    dtype = out.dtype
    has_bias, has_res = bias is not None, residual is not None
    b = bias if has_bias else np.zeros(1, dtype)
    r2 = residual.reshape(total, f) if has_res else out2
    geometry = (kh, kw, *stride, *pad, *dilate, ho, wo)
    pointwise = (kh, kw, *stride, *pad) == (1, 1, 1, 1, 0, 0)
    per_row = (0 if pointwise else k) + (f if add else 0)
    rows = total if per_row == 0 else max(MIN_ROWS, CHUNK_BYTES // (per_row * dtype.itemsize))
    rows = min(rows, total)
    starts = range(0, total, rows)
    n_parts = _lanes.parts(len(starts))
    # a partition's scratch: the column matrix (not for 1x1/1), then the GEMM's block (add)
    col_size = 0 if pointwise else rows * k
    per_part = col_size + (rows * f if add else 0)
    space = res.get_space((max(1, n_parts * per_part),), dtype)
    team = n_parts == 1 and _lanes.one_openmp()

    def chunk(part: Any, r0: int) -> None:
        m = min(rows, total - r0)
        if pointwise:
            lhs = x.reshape(total, c)[r0 : r0 + m]
        else:
            lhs = part[: m * k].reshape(m, k)
            _fill(x, lhs, r0, m, geometry, team)
        if add:
            acc = part[col_size : col_size + m * f].reshape(m, f)
            _blas.matmul(lhs, w2.T, acc)
        else:
            acc = out2  # the epilogue reads rows r0.. of out itself
            _blas.matmul(lhs, w2.T, out2[r0 : r0 + m])
            if not (has_bias or has_res or relu):
                return
        _epilogue(out2, r0, r0 + m, b, has_bias, r2, has_res, relu, add, acc)

    def work(p: int) -> None:
        part = space[p * per_part : (p + 1) * per_part]
        for r0 in starts[p::n_parts]:
            chunk(part, r0)

    _lanes.run(n_parts, work)


def _fill(x: Any, col: Any, r0: int, m: int, geometry: tuple[int, ...], team: bool) -> None:
    """col = the windows of output rows r0..r0+m-1 (a team loop between all-thread GEMMs
    where numba and the BLAS share one OpenMP runtime, as _conv_cpu.to_columns)."""
    if team and m > 1:
        with threads.region() as width:
            parts = min(width, m)
            if parts > 1:
                _im2row_team(x, col, r0, m, *geometry, parts)
                return
    _im2row(x, col, r0, m, *geometry)
