"""Winograd F(m x m, 3 x 3) forward over channels-last data (the ChannelsLast pass).

The same algorithm as _conv_winograd.py (its matrices, its weight transform), laid out
so that every loop runs along the channels, which are contiguous here:

    xp              = x zero-padded, (nb, th*m + 2, tw*m + 2, C)      per chunk of images
    V[t, xi, :]     = (B^T d_t B)[xi]                                 input transform
    M[xi]           = V[:, xi] (T x C) @ U[xi] (C x F)                a*a GEMMs, one call
    out[tile t, :]  = A^T M[:, t] A  (+ bias, + residual, relu)       output transform

V is tile-major (each tile's a*a rows of C values are contiguous), so the input transform
writes one contiguous block per tile (xi-major, its 36 scattered streams made it 2x
slower at batch 32); the GEMMs read V[:, xi] as matrices with a row stride of a*a*C. M
stays xi-major: MKL's strided batch refuses output matrices that interleave.

U (a*a, C, F) comes from the memoized `_ChannelsLastWeight` node (`weights`). Each
transform row is a linear combination of a tile's rows (B^T and A^T have at most four
nonzeros per row), computed one term at a time as a vector loop over the channels, so
there is no stride-phase gather: what channels-first Winograd pays most for on small
planes (the 28x28 and 14x14 transforms ran 2-3x above a copy of their output).

Why the padded copy: every tile then reads in bounds, with no edge branches; it costs
one copy of the chunk's input.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import prange

from ... import kernel, threads
from ...kernel.cpu import cached_njit
from . import _blas, _lanes
from ._uindex import u as _u

#: a chunk takes whole images while its scratch (padded input, V and M) fits this
CHUNK_BYTES = 16 << 20
_ZERO = np.float32(0)


def weights(w: np.ndarray, m: int, out: np.ndarray) -> None:
    """out (a*a, C, F) = U of w (F, C, 3, 3): the forward weight transform, transposed."""
    from nnvmpy.ops.nn._conv_winograd import _transform

    u = _transform(np.ascontiguousarray(w), None, 1, m, False)  # (a*a, F, C)
    np.copyto(out, u.transpose(0, 2, 1))


@cached_njit(nogil=True, inline="always")
def _bt(src, s0, step, dst, d0, dstep, length, m):  # pragma: no cover - numba
    # dst[d0 + i*dstep + z] = sum_q B^T[i, q] src[s0 + q*step + z] for z < length: one
    # column (or row) of an a x a tile, every channel z at once
    if m == 4:
        for z in range(length):
            x0 = src[_u(s0 + z)]
            x1 = src[_u(s0 + step + z)]
            x2 = src[_u(s0 + 2 * step + z)]
            x3 = src[_u(s0 + 3 * step + z)]
            x4 = src[_u(s0 + 4 * step + z)]
            x5 = src[_u(s0 + 5 * step + z)]
            p = x4 - x2
            q = x3 - x1
            dst[_u(d0 + z)] = 4 * x0 - 5 * x2 + x4
            dst[_u(d0 + dstep + z)] = (x3 + x4) - 4 * (x1 + x2)
            dst[_u(d0 + 2 * dstep + z)] = (x4 - x3) + 4 * (x1 - x2)
            dst[_u(d0 + 3 * dstep + z)] = p + 2 * q
            dst[_u(d0 + 4 * dstep + z)] = p - 2 * q
            dst[_u(d0 + 5 * dstep + z)] = 4 * x1 - 5 * x3 + x5
    else:
        for z in range(length):
            x0 = src[_u(s0 + z)]
            x1 = src[_u(s0 + step + z)]
            x2 = src[_u(s0 + 2 * step + z)]
            x3 = src[_u(s0 + 3 * step + z)]
            dst[_u(d0 + z)] = x0 - x2
            dst[_u(d0 + dstep + z)] = x1 + x2
            dst[_u(d0 + 2 * dstep + z)] = x2 - x1
            dst[_u(d0 + 3 * dstep + z)] = x1 - x3


@cached_njit(nogil=True, inline="always")
def _at(src, s0, step, dst, d0, dstep, length, m):  # pragma: no cover - numba
    # dst[d0 + i*dstep + z] = sum_q A^T[i, q] src[s0 + q*step + z] for i < m, z < length
    if m == 4:
        for z in range(length):
            x0 = src[_u(s0 + z)]
            x1 = src[_u(s0 + step + z)]
            x2 = src[_u(s0 + 2 * step + z)]
            x3 = src[_u(s0 + 3 * step + z)]
            x4 = src[_u(s0 + 4 * step + z)]
            x5 = src[_u(s0 + 5 * step + z)]
            p = x1 + x2
            q = x1 - x2
            r = x3 + x4
            t = x3 - x4
            dst[_u(d0 + z)] = x0 + p + r
            dst[_u(d0 + dstep + z)] = q + 2 * t
            dst[_u(d0 + 2 * dstep + z)] = p + 4 * r
            dst[_u(d0 + 3 * dstep + z)] = q + 8 * t + x5
    else:
        for z in range(length):
            x1 = src[_u(s0 + step + z)]
            x2 = src[_u(s0 + 2 * step + z)]
            dst[_u(d0 + z)] = src[_u(s0 + z)] + x1 + x2
            dst[_u(d0 + dstep + z)] = x1 - x2 - src[_u(s0 + 3 * step + z)]


@cached_njit(nogil=True, inline="always")
def _in_tiles(xp, v, tmp, m, tw, t0, t1):  # pragma: no cover - numba
    # v[t, xi, :] for tiles t in [t0, t1) of the padded chunk xp (nb, Hp, Wp, C)
    a = m + 2
    hp, wp, c = xp.shape[1], xp.shape[2], xp.shape[3]
    th = (hp - 2) // m
    xf = xp.reshape(-1)
    vf = v.reshape(-1)
    for t in range(t0, t1):
        b = t // (th * tw)
        q = t - b * th * tw
        ty = q // tw
        tx = q - ty * tw
        base = ((b * hp + ty * m) * wp + tx * m) * c
        for s in range(a):  # tmp[i, s] = sum_q B^T[i, q] d[q, s]
            _bt(xf, base + s * c, wp * c, tmp, s * c, a * c, c, m)
        for i in range(a):  # v[i*a + j, t] = sum_q B^T[j, q] tmp[i, q]
            _bt(tmp, i * a * c, c, vf, (t * a + i) * a * c, c, c, m)


@kernel.cpu_kernel(parallel=False)
def _input(xp, v, tmp, m, tw, t0, t1):
    _in_tiles(xp, v, tmp, m, tw, t0, t1)


@kernel.cpu_kernel
def _input_team(xp, v, tmp, m, tw, n_t, parts):
    # _input over `parts` ranges of tiles; tmp holds one scratch block per part
    size = tmp.shape[0] // parts
    for p in prange(parts):
        scratch = tmp[p * size : (p + 1) * size]
        _in_tiles(xp, v, scratch, m, tw, n_t * p // parts, n_t * (p + 1) // parts)


@cached_njit(nogil=True, inline="always")
def _out_tiles(
    mm, out, tmp, m, tw, n0, t0, t1, bias, has_bias, res, has_res, relu, add
):  # pragma: no cover - numba
    # out[n0 + image of t, tile t] (=|+=) relu?(A^T M[:, t] A + bias + res) for t in [t0, t1)
    a = m + 2
    ho, wo, f = out.shape[1], out.shape[2], out.shape[3]
    n_t = mm.shape[1]
    th = (ho + m - 1) // m
    mf = mm.reshape(-1)
    of = out.reshape(-1)
    rf = res.reshape(-1)
    row = tmp[m * a * f :]
    for t in range(t0, t1):
        b = t // (th * tw)
        q = t - b * th * tw
        ty = q // tw
        tx = q - ty * tw
        for s in range(a):  # tmp[i, s] = sum_q A^T[i, q] M[q*a + s, t]
            _at(mf, (s * n_t + t) * f, a * n_t * f, tmp, s * f, a * f, f, m)
        cols = min(m, wo - tx * m)
        for i in range(min(m, ho - ty * m)):
            _at(tmp, i * a * f, f, row, 0, f, f, m)  # row[j] = output (ty*m + i, tx*m + j)
            dst = (((n0 + b) * ho + ty * m + i) * wo + tx * m) * f
            for j in range(cols):
                d = dst + j * f
                for z in range(f):
                    val = row[j * f + z]
                    if has_bias:
                        val += bias[z]
                    if has_res:
                        val += rf[_u(d + z)]
                    if relu and val <= 0:
                        val = _ZERO
                    if add:
                        of[_u(d + z)] += val
                    else:
                        of[_u(d + z)] = val


@kernel.cpu_kernel(parallel=False)
def _output(mm, out, tmp, m, tw, n0, t0, t1, bias, has_bias, res, has_res, relu, add):
    _out_tiles(mm, out, tmp, m, tw, n0, t0, t1, bias, has_bias, res, has_res, relu, add)


@kernel.cpu_kernel
def _output_team(mm, out, tmp, m, tw, n0, n_t, parts, bias, has_bias, res, has_res, relu, add):
    size = tmp.shape[0] // parts
    for p in prange(parts):
        scratch = tmp[p * size : (p + 1) * size]
        lo, hi = n_t * p // parts, n_t * (p + 1) // parts
        _out_tiles(mm, out, scratch, m, tw, n0, lo, hi, bias, has_bias, res, has_res, relu, add)


@kernel.cpu_kernel(parallel=False)
def _pad(x, xp, n0, nb, ph, pw):
    # xp[b] = x[n0 + b] with ph rows above, pw columns left and zeros to xp's edges
    height, width, c = x.shape[1], x.shape[2], x.shape[3]
    hp, wp = xp.shape[1], xp.shape[2]
    xf = x.reshape(-1)
    pf = xp.reshape(-1)
    for b in range(nb):
        for r in range(hp):
            dst = (b * hp + r) * wp * c
            y = r - ph
            if y < 0 or y >= height:
                for z in range(wp * c):
                    pf[_u(dst + z)] = 0
                continue
            for z in range(pw * c):
                pf[_u(dst + z)] = 0
            src = ((n0 + b) * height + y) * width * c
            d = dst + pw * c
            for z in range(width * c):
                pf[_u(d + z)] = xf[_u(src + z)]
            for z in range((pw + width) * c, wp * c):
                pf[_u(dst + z)] = 0


def forward(
    x: Any,
    u: Any,
    bias: Any,
    out: Any,
    add: bool,
    res: Any,
    pad: tuple[int, int],
    m: int,
    residual: Any = None,
    relu: bool = False,
) -> None:
    """out (=|+=) relu?(conv3x3(x) + bias + residual) for x (N, H, W, C), U (a*a, C, F)
    from `weights`, out and residual (N, Ho, Wo, F): a stride-1 undilated 3x3 layer."""
    n, _, _, c = x.shape
    ho, wo, f = out.shape[1], out.shape[2], out.shape[3]
    if n == 0 or ho == 0 or wo == 0 or f == 0:
        return
    a = m + 2
    th, tw = -(-ho // m), -(-wo // m)
    hp, wp = th * m + 2, tw * m + 2
    dtype = out.dtype
    has_bias, has_res = bias is not None, residual is not None
    b = bias if has_bias else np.zeros(1, dtype)
    r = residual if has_res else out
    per_image = hp * wp * c + a * a * th * tw * (c + f)
    nb = max(1, min(n, CHUNK_BYTES // (per_image * dtype.itemsize)))
    starts = range(0, n, nb)
    n_parts = _lanes.parts(len(starts))
    team = n_parts == 1 and _lanes.one_openmp()
    most = threads.budget() if team else 1  # team loops: one scratch block per part
    scratch = a * a * max(c, f) + f  # one tile's rows, and one output row
    per_part = nb * per_image + most * scratch
    space = res.get_space((n_parts * per_part,), dtype)
    epi = (b, has_bias, r, has_res, relu, add)

    def chunk(part: Any, n0: int) -> None:
        k = min(nb, n - n0)
        n_t = k * th * tw
        xp = part[: k * hp * wp * c].reshape(k, hp, wp, c)
        rest = part[nb * hp * wp * c :]
        v = rest[: a * a * n_t * c].reshape(n_t, a * a, c)
        mm = rest[a * a * nb * th * tw * c :][: a * a * n_t * f].reshape(a * a, n_t, f)
        tmp = part[nb * per_image :]
        _pad(x, xp, n0, k, *pad)
        if not team or n_t < 2:
            _input(xp, v, tmp, m, tw, 0, n_t)
            _blas.matmul_stack(v.transpose(1, 0, 2), u, mm)
            _output(mm, out, tmp, m, tw, n0, 0, n_t, *epi)
            return
        with threads.region() as width:
            parts = max(1, min(width, most, n_t))
            _input_team(xp, v, tmp[: parts * scratch], m, tw, n_t, parts)
        _blas.matmul_stack(v.transpose(1, 0, 2), u, mm)
        with threads.region() as width:
            parts = max(1, min(width, most, n_t))
            _output_team(mm, out, tmp[: parts * scratch], m, tw, n0, n_t, parts, *epi)

    def work(p: int) -> None:
        part = space[p * per_part : (p + 1) * per_part]
        for n0 in starts[p::n_parts]:
            chunk(part, n0)

    _lanes.run(n_parts, work)
