"""Winograd convolution on the CPU: 3x3, stride 1, dilation 1, padding <= 2, any groups.

Why. ResNet-18 spends ~85% of its FLOPs in 3x3 stride-1 convolutions, and a direct or
im2col convolution on OpenBLAS cannot beat oneDNN's at equal FLOPs. Winograd's minimal
filtering F(m x m, 3 x 3) computes an m x m output tile from an a x a input tile
(a = m + 2) with a*a multiplies per (input, output) channel pair instead of 9*m*m:
2.25x fewer for F(2x2, 3x3), 4x fewer for F(4x4, 3x3) (Lavin & Gray, 2015).

How. With d an a x a input tile and g a 3 x 3 filter,

    Y = A^T [ (G g G^T) * (B^T d B) ] A          (* element-wise)

so for every one of the a*a transform-domain positions xi the sum over input channels is
a GEMM over tiles t (Fg x cg times cg x T):

    V[xi, c, t] = (B^T d_{c,t} B)[xi]            input transform   (numba, per chunk)
    U[xi, f, c] = (G g_{f,c} G^T)[xi]            weight transform  (cached across calls)
    M[xi]       = U[xi] @ V[xi]                  a*a GEMMs per group (np.matmul, batched)
    y[f, tile t] = A^T M[:, f, t] A              output transform, with bias, residual,
                                                 relu and req 'add' applied as it writes

Tiles run over (image, tile row, tile column) of a chunk of images, so the GEMMs are as
wide as the chunk; the chunk keeps V and M within the op's workspace (as _conv_cpu does).
Padding is handled in the input transform (rows and columns outside the image read 0),
and output tiles that overhang Ho x Wo are cropped in the output transform.

Accuracy. F(2x2) only adds and subtracts in B and A, float32 error stays near the direct
convolution's (~2e-7 of the largest output). F(4x4)'s transforms scale by up to 8 and
1/24: ~3e-6 forward and data gradient, ~1e-5 filter gradient (ResNet-18 layers; the tests
in tests/ops/test_conv_winograd.py bound them).

The transforms are serial numba loops: images innermost in blocks of several images (so
even 7x7 maps give long vector loops), the plane layout in blocks of one image (below).
The blocks (`_plan`) go to `_lanes` partitions where the BLAS can run one-thread GEMMs
(MKL): each runs its blocks start to end on one thread. One image is the exception where
numba and the BLAS share one OpenMP runtime (`_lanes.one_openmp`: MKL on GNU OpenMP): it
is one block, its plane transforms numba parallel loops (`_team`) between GEMMs on all
MKL threads, each team warm from the other (64 @ 56x56 F(4x4): 1.04 -> 0.74 ms; waking
a lane cost ~140 us a call). Otherwise each transform is split by channel ranges over
Python threads (`_split`) between GEMMs on all BLAS threads; numba's OpenMP workers
would fight OpenBLAS's own threads for the cores (see _im2col.py).
Backward data is the forward of dy with the flipped, transposed filter
and padding 2 - p (`backward_data`); the filter gradient is F(3x3, m x m) with the same
matrices (`weight_grad3x3`).

This module imports numba: _conv_cpu imports it on first use only.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
from numba import prange

from ... import input_stamps, kernel
from ...base import NNVMError
from ...kernel.cpu import cached_njit
from . import _blas, _lanes
from ._uindex import u as _u

#: output tile sizes this module implements: F(2x2, 3x3) and F(4x4, 3x3)
TILES = (2, 4)
#: a chunk takes whole images until its GEMMs have about this many tile columns
TARGET_TILES = 1024
#: most nonzeros in a row of B^T (input tiles) or A (dy tiles): `_lincomb`'s longest sum
MAX_TERMS = 4
_ZERO = np.float32(0)  # relu's zero: a literal 0 would make a float32 loop float64

# -- transform matrices (Lavin & Gray; the F(4x4) points 0, +-1, +-2) --------------------------

_BT = {
    2: [[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]],
    4: [
        [4, 0, -5, 0, 1, 0],
        [0, -4, -4, 1, 1, 0],
        [0, 4, -4, -1, 1, 0],
        [0, -2, -1, 2, 1, 0],
        [0, 2, -1, -2, 1, 0],
        [0, 4, 0, -5, 0, 1],
    ],
}
_G = {
    2: [[1, 0, 0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0, 0, 1]],
    4: [
        [1 / 4, 0, 0],
        [-1 / 6, -1 / 6, -1 / 6],
        [-1 / 6, 1 / 6, -1 / 6],
        [1 / 24, 1 / 12, 1 / 6],
        [1 / 24, -1 / 12, 1 / 6],
        [0, 0, 1],
    ],
}
_AT = {
    2: [[1, 1, 1, 0], [0, 1, -1, -1]],
    4: [
        [1, 1, 1, 1, 1, 0],
        [0, 1, -1, 2, -2, 0],
        [0, 1, 1, 4, 4, 0],
        [0, 1, -1, 8, -8, 1],
    ],
}


def matrices(m: int, dtype: Any) -> tuple[Any, Any, Any]:
    """(B^T, G, A^T) of F(m x m, 3 x 3); G in float64 (the weight transform is cached)."""
    if m not in TILES:
        raise NNVMError(f"Convolution: Winograd output tile must be one of {TILES}, got {m}")
    return (
        np.array(_BT[m], dtype=dtype),
        np.array(_G[m], dtype=np.float64),
        np.array(_AT[m], dtype=dtype),
    )


def supported(
    kernel_hw: tuple[int, ...], stride: tuple[int, ...], dilate: tuple[int, ...], pad: Any
) -> bool:
    """3x3 kernel, stride 1, dilation 1, padding 0..2 on each axis (2-D only: False for
    other lengths)."""
    return (
        tuple(kernel_hw) == (3, 3)
        and tuple(stride) == (1, 1)
        and tuple(dilate) == (1, 1)
        and all(0 <= p <= 2 for p in pad)
    )


# -- kernels ----------------------------------------------------------------------------------


# Layouts inside a block of nb images and `rows` tile rows (tile t = (ty*tw + tx)*nb + b,
# images innermost: every loop below then runs over tw*nb or more contiguous values, long
# enough for 16-lane vectors even on 7x7 maps, with no junk columns in the GEMMs):
#   xp[y, p, k, b]   one channel's padded rows (a per-thread buffer, in L1/L2 while its
#                    tile rows are transformed), column m*k + p of image b (k < tw + 1)
#   v[xi, c, t]  mm[xi, f, t]   transform-domain input and output, xi = k1*a + k2
#
# The input transform's rows are sums of a few rows times constants: `_lincomb` writes one
# in one pass over all its terms (nonzero coefficients only, in the matrix's order, the
# first product alone: the same bits as adding one term per pass, as this module did
# before), a unit-stride loop with one store and at most four loads. (The output transform
# keeps its term-per-pass loops: the same change there ran 4% slower for F(2x2) on 56x56
# maps and 3-13% faster for F(4x4), one thread; training forwards use F(2x2).)


@cached_njit(nogil=True, inline="always")
def _nonzeros(mat, stride0, stride1, modulus):  # pragma: no cover - numba
    # per row k of mat: the count n[k], the coefficients cf[k, q] and source offsets
    # off[k, q] = (j % modulus)*stride0 + (j // modulus)*stride1 of its nonzero columns j
    # (q < 6, zeros past n[k]: _lincomb reads four terms whatever n[k] is)
    rows, cols = mat.shape
    n = np.zeros(rows, np.int64)
    cf = np.zeros((rows, 6), mat.dtype)
    off = np.zeros((rows, 6), np.int64)
    for k in range(rows):
        for j in range(cols):
            if mat[k, j] != 0:
                cf[k, n[k]] = mat[k, j]
                off[k, n[k]] = (j % modulus) * stride0 + (j // modulus) * stride1
                n[k] += 1
    return n, cf, off


# Inlined at numba's IR level, with no early return and no loop over the terms: with
# returns inside its branches it compiled to ~45 ns per call here (10x the loop it runs),
# and a trailing `for q in range(4, n[k])` pass made the whole F(2x2) transform 4x slower.


@cached_njit(nogil=True, inline="always")
def _lincomb(dst, d, src, base, n, cf, off, k, length):  # pragma: no cover - numba
    # dst[d + z] = sum over q < n[k] of cf[k, q] * src[base + off[k, q] + z], z < length,
    # summed left to right with the first product alone (term-by-term accumulation's bits)
    nk = n[k]
    c0, s0 = cf[k, 0], base + off[k, 0]
    c1, s1 = cf[k, 1], base + off[k, 1]
    c2, s2 = cf[k, 2], base + off[k, 2]
    c3, s3 = cf[k, 3], base + off[k, 3]
    if nk == 1:
        for z in range(length):
            dst[_u(d + z)] = c0 * src[_u(s0 + z)]
    elif nk == 2:
        for z in range(length):
            dst[_u(d + z)] = c0 * src[_u(s0 + z)] + c1 * src[_u(s1 + z)]
    elif nk == 3:
        for z in range(length):
            dst[_u(d + z)] = c0 * src[_u(s0 + z)] + c1 * src[_u(s1 + z)] + c2 * src[_u(s2 + z)]
    else:  # 4: the most in a row of B^T or A (MAX_TERMS; a test checks the matrices)
        for z in range(length):
            dst[_u(d + z)] = (
                c0 * src[_u(s0 + z)] + c1 * src[_u(s1 + z)] + c2 * src[_u(s2 + z)]
            ) + c3 * src[_u(s3 + z)]


@cached_njit(nogil=True, inline="always")
def _pad_rows(x, xp, c, n0, nb, y0, pw, m, tw1, hb):  # pragma: no cover - numba
    # xp[y, p, k, b] = x[n0 + b, c, y0 + y, m*k + p - pw] for y < hb, 0 outside the image:
    # channel c's rows of the block, split into m column phases, images innermost
    n_c, height, width = x.shape[1], x.shape[2], x.shape[3]
    xf = x.reshape(-1)
    length = m * tw1 * nb
    for y in range(hb):
        yy = y0 + y
        row = y * length
        if yy < 0 or yy >= height:
            for z in range(length):
                xp[_u(row + z)] = 0
            continue
        src0 = (n0 * n_c + c) * height * width + yy * width - pw  # column 0 of image n0
        # columns k in [klo, khi) are inside the image in every phase (phase 0 starts
        # last, phase m-1 ends first): for one image and m = 2 one loop copies both phases,
        # constant strides that LLVM vectorises (64x56x56 at batch 32, one thread: 5.6 ->
        # 4.0 ms, near the time to read x; the same for m = 4 gained nothing)
        klo = min(tw1, max(0, -(-pw // m)))
        khi = min(tw1, max(klo, -((m - 1 - pw - width) // m)))
        if nb == 1 and m == 2:
            for k in range(klo, khi):
                xp[_u(row + k)] = xf[_u(src0 + 2 * k)]
                xp[_u(row + tw1 + k)] = xf[_u(src0 + 2 * k + 1)]
        else:
            khi = klo  # no interior loop: the per-phase loops below take every column
        for p in range(m):
            lo = min(tw1, max(0, -((p - pw) // m)))
            hi = min(tw1, max(lo, -((p - pw - width) // m)))
            dst = row + p * tw1 * nb
            for z in range(lo * nb):
                xp[_u(dst + z)] = 0
            for z in range(hi * nb, tw1 * nb):
                xp[_u(dst + z)] = 0
            for b in range(nb):
                src = src0 + p + b * n_c * height * width
                for k in range(lo, min(hi, klo)):
                    xp[_u(dst + k * nb + b)] = xf[_u(src + m * k)]
                for k in range(max(lo, khi), hi):
                    xp[_u(dst + k * nb + b)] = xf[_u(src + m * k)]


@kernel.cpu_kernel(parallel=False)
def _input_transform(x, v, bt, n0, nb, y0, pw, th, tw, m, c0, c1):
    # v[xi, c, (ty*tw + tx)*nb + b] = (B^T d B)[xi] for c in [c0, c1), d the kt x kt tile of
    # image n0 + b, channel c at rows y0 + m*ty.., columns m*tx - pw.. (0 outside the image).
    # Per channel: its padded rows into a small buffer (the padding copy never leaves the
    # cache), then per tile row B^T d on whole padded rows (s), then s B per column.
    # bt (a, kt): B^T for input tiles (kt = a), A (kt = m) for dy tiles (weight gradient).
    n_c = v.shape[1]
    a, kt = bt.shape[0], bt.shape[1]
    tw1 = tw + 1
    hb = m * th + kt - m  # rows the block's tiles read
    length = m * tw1 * nb
    span = tw * nb
    ntiles = th * span
    plane_v = n_c * ntiles
    vf = v.reshape(-1)
    xp = np.empty(hb * length, v.dtype)
    s = np.empty(a * length, v.dtype)  # s[k1, p, k, b] = (B^T d)[k1] on the tile row
    nr, cr, orow = _nonzeros(bt, length, length, kt)  # row terms: rows i of the tile row
    nc, cc, ocol = _nonzeros(bt, tw1 * nb, nb, m)  # column terms: phase j % m, shift j // m
    for c in range(c0, c1):
        _pad_rows(x, xp, c, n0, nb, y0, pw, m, tw1, hb)
        for ty in range(th):
            for k1 in range(a):
                _lincomb(s, k1 * length, xp, m * ty * length, nr, cr, orow, k1, length)
            dst0 = c * ntiles + ty * span
            for k1 in range(a):
                for k2 in range(a):
                    dst = (k1 * a + k2) * plane_v + dst0
                    _lincomb(vf, dst, s, k1 * length, nc, cc, ocol, k2, span)


@cached_njit(nogil=True, inline="always")
def _terms(dst, d, src, base, step, coefs, length):  # pragma: no cover - numba
    # dst[d + z] = sum over k of coefs[k] * src[base + k*step + z], z < length: nonzero
    # coefficients only, in order, one pass per term (the first product alone), which
    # the output transforms keep (one pass over all terms ran 4% slower for F(2x2))
    first = True
    for k in range(coefs.shape[0]):
        coef = coefs[k]
        if coef == 0:
            continue
        s = base + k * step
        if first:
            for z in range(length):
                dst[_u(d + z)] = coef * src[_u(s + z)]
            first = False
        else:
            for z in range(length):
                dst[_u(d + z)] += coef * src[_u(s + z)]


@cached_njit(nogil=True, inline="always")
def _store(of, rf, dst, j, m, wo, vals, s0, step, has_res, relu, add):  # pragma: no cover
    # output columns j, j + m, ... < wo of the row at dst (=|+=) vals[s0 + tx*step]
    # (+ the residual rf, relu): one column phase of an output transform's row
    for tx in range(-(-(wo - j) // m)):
        z = m * tx + j
        val = vals[_u(s0 + tx * step)]
        if has_res:
            val += rf[_u(dst + z)]
        if relu and val <= 0:
            val = _ZERO  # +0 for -inf and -0 too; NaN stays NaN, as MXNet's relu
        if add:
            of[_u(dst + z)] += val
        else:
            of[_u(dst + z)] = val


@kernel.cpu_kernel(parallel=False)
def _output_transform(
    mm, out, at, bias, has_bias, res, has_res, relu, add, n0, nb, ty0, th, tw, m, f0, f1,
):  # fmt: skip
    # out[n0+b, f, m*(ty0 + ty) + i, m*tx + j] (+)= (A^T M A)[i, j] (+ bias, residual,
    # relu), mm (a*a, F, th*tw*nb), out and res (N, F, Ho, Wo); overhangs dropped.
    n_f, ho, wo = out.shape[1], out.shape[2], out.shape[3]
    a = at.shape[1]
    span = tw * nb
    ntiles = th * span
    length = m * span
    mf = mm.reshape(-1)
    of = out.reshape(-1)
    rf = res.reshape(-1)
    plane_m = n_f * ntiles
    q = np.empty(a * length, out.dtype)  # q[k1, j, tx, b] = (M A)[k1, j] of tile (tx, b)
    r = np.empty(length, out.dtype)  # r[j, tx, b] = (A^T M A)[i, j]
    for t in range(f0 * th, f1 * th):  # output channels f0..f1-1
        f = t // th
        ty = t % th
        beta = bias[f] if has_bias else bias[0] - bias[0]
        src0 = f * ntiles + ty * span
        for k1 in range(a):
            for j in range(m):
                d = k1 * length + j * span
                _terms(q, d, mf, k1 * a * plane_m + src0, plane_m, at[j], span)
        for i in range(m):
            y = m * (ty0 + ty) + i
            if y >= ho:
                break
            for z in range(length):
                r[_u(z)] = beta
            for k1 in range(a):
                coef = at[i, k1]
                if coef != 0:
                    so = k1 * length
                    for z in range(length):
                        r[_u(z)] += coef * q[_u(so + z)]
            for b in range(nb):
                dst = ((n0 + b) * n_f + f) * ho * wo + y * wo
                for j in range(m):
                    _store(of, rf, dst, j, m, wo, r, j * span + b, nb, has_res, relu, add)


# Plane layout, for blocks of one image (batch 1, or maps too big for images to share a
# block). Tile rows are padded to tw1 = tw + 1 columns: tile t = ty*tw1 + tx, tx = tw a
# junk column the output transform skips. Then both transform stages are one unit-stride
# loop over the whole block (th*tw1 values) instead of one loop per tile row (tw values:
# 28 at 56x56, 7 at 14x14, too short for 16-lane vectors), at the price of 1/tw1 more
# GEMM columns. One channel's input is first copied into m x m phase planes,
# P[py, qx, r, k] = x[m*r + py - ph, m*k + qx - pw] (0 outside the image), so that tile
# row ty's input row i is plane i % m at row ty + i // m, and column j of tile tx is plane
# j % m at column tx + j // m: constant offsets in the flattened index.
#   R[k1, qx, t] = sum_i B^T[k1, i] P[i % m, qx, t + (i // m)*tw1]     (rows, per phase)
#   v[k1*a + k2, c, t] = sum_j B^T[k2, j] R[k1, j % m, t + j // m]      (columns)
# 64x56x56 F(2x2), one thread: 0.46 -> 0.32 ms; 128x28x28 0.38 -> 0.17; 256x14x14 0.30 ->
# 0.11. The sums run in the same order as the tile-row kernels'.


@cached_njit(nogil=True, inline="always")
def _phase_planes(x, pp, c, n0, y0, pw, m, rows1, tw1):  # pragma: no cover - numba
    # pp[(py*m + qx)*plane + r*tw1 + k] = x[n0, c, y0 + m*r + py, m*k + qx - pw], 0 outside
    height, width = x.shape[2], x.shape[3]
    xf = x.reshape(-1)
    plane = rows1 * tw1
    base = (n0 * x.shape[1] + c) * height * width
    for py in range(m):
        for r in range(rows1):
            yy = y0 + m * r + py
            for qx in range(m):
                d = (py * m + qx) * plane + r * tw1
                if yy < 0 or yy >= height:
                    for k in range(tw1):
                        pp[_u(d + k)] = 0
                    continue
                src = base + yy * width + qx - pw  # + m*k: column m*k + qx - pw
                klo = min(tw1, max(0, -((qx - pw) // m)))
                khi = min(tw1, max(klo, -((qx - pw - width) // m)))
                for k in range(klo):
                    pp[_u(d + k)] = 0
                for k in range(klo, khi):
                    pp[_u(d + k)] = xf[_u(src + m * k)]
                for k in range(khi, tw1):
                    pp[_u(d + k)] = 0


# Called, not inlined (as _output_plane_filters): once per thread, and inlined into the
# team twin's prange body numba's parfor passes went over all of it, 8.5 s a compile.
@cached_njit(nogil=True)
def _input_plane_channels(x, v, bt, n0, y0, pw, th, tw, m, c0, c1):  # pragma: no cover
    # v[xi, c, ty*(tw+1) + tx] = (B^T d B)[xi] for c in [c0, c1): the plane layout above,
    # tile rows y0 + m*ty.. of image n0 (y0 may be negative: padding rows)
    n_c = v.shape[1]
    a = bt.shape[0]
    tw1 = tw + 1
    rows1 = th + (a - 1) // m
    plane = rows1 * tw1  # >= th*tw1 + 1: the column stage reads one past the block
    ncols = th * tw1
    plane_v = n_c * ncols
    vf = v.reshape(-1)
    # the row stage also writes column ncols, which the column stage's last junk value
    # reads (as garbage it could be a denormal, and one slows MKL's GEMM 20x); for it the
    # last phase plane is read one past its end: a zero kept there
    pp = np.zeros(m * m * plane + 1, v.dtype)
    rr = np.empty(a * m * plane, v.dtype)
    nr, cr, orow = _nonzeros(bt, m * plane, tw1, m)  # row i: phase i % m, i // m rows on
    nc, cc, ocol = _nonzeros(bt, plane, 1, m)  # column j: phase j % m, j // m columns on
    for c in range(c0, c1):
        _phase_planes(x, pp, c, n0, y0, pw, m, rows1, tw1)
        for k1 in range(a):
            for qx in range(m):
                _lincomb(rr, (k1 * m + qx) * plane, pp, qx * plane, nr, cr, orow, k1, ncols + 1)
        for k1 in range(a):
            for k2 in range(a):
                dst = (k1 * a + k2) * plane_v + c * ncols
                _lincomb(vf, dst, rr, k1 * m * plane, nc, cc, ocol, k2, ncols)


@kernel.cpu_kernel(parallel=False)
def _input_transform_plane(x, v, bt, n0, y0, pw, th, tw, m, c0, c1):
    # channels c0..c1 of the plane-layout input transform, on this thread
    _input_plane_channels(x, v, bt, n0, y0, pw, th, tw, m, c0, c1)


@kernel.cpu_kernel
def _input_transform_plane_team(x, v, bt, n0, y0, pw, th, tw, m, c0, c1, parts):
    # the same as one parallel loop over `parts` channel ranges (numba's OpenMP team)
    for p in prange(parts):
        lo, hi = c0 + (c1 - c0) * p // parts, c0 + (c1 - c0) * (p + 1) // parts
        _input_plane_channels(x, v, bt, n0, y0, pw, th, tw, m, lo, hi)


@cached_njit(nogil=True)
def _output_plane_filters(
    mm, out, at, bias, has_bias, res, has_res, relu, add, n0, ty0, th, tw, m, f0, f1,
):  # fmt: skip  # pragma: no cover - numba
    # out[n0, f, m*(ty0 + ty) + i, m*tx + j] (+)= (A^T M A)[i, j] (+ bias, residual, relu)
    # for f in [f0, f1): mm (a*a, F, th*(tw+1)) in the plane layout, junk column skipped.
    # Per filter the whole block at once: q[k1, j] = (M A)[k1, j], then o[i, j] = A^T q,
    # each a unit-stride pass over th*(tw+1) values, then o's rows scattered to out.
    n_f, ho, wo = out.shape[1], out.shape[2], out.shape[3]
    a = at.shape[1]
    tw1 = tw + 1
    ncols = th * tw1
    plane_m = n_f * ncols
    mf = mm.reshape(-1)
    of = out.reshape(-1)
    rf = res.reshape(-1)
    q = np.empty(a * m * ncols, out.dtype)
    o = np.empty(m * m * ncols, out.dtype)
    for f in range(f0, f1):
        beta = bias[f] if has_bias else bias[0] - bias[0]
        for k1 in range(a):
            for j in range(m):
                d = (k1 * m + j) * ncols
                _terms(q, d, mf, k1 * a * plane_m + f * ncols, plane_m, at[j], ncols)
        for i in range(m):
            for j in range(m):
                d = (i * m + j) * ncols
                for z in range(ncols):
                    o[_u(d + z)] = beta
                for k1 in range(a):
                    coef = at[i, k1]
                    if coef != 0:
                        so = (k1 * m + j) * ncols
                        for z in range(ncols):
                            o[_u(d + z)] += coef * q[_u(so + z)]
        for ty in range(th):
            for i in range(m):
                y = m * (ty0 + ty) + i
                if y >= ho:
                    break
                dst = ((n0 * n_f + f) * ho + y) * wo
                for j in range(m):
                    src = (i * m + j) * ncols + ty * tw1
                    _store(of, rf, dst, j, m, wo, o, src, 1, has_res, relu, add)


@kernel.cpu_kernel(parallel=False)
def _output_transform_plane(
    mm, out, at, bias, has_bias, res, has_res, relu, add, n0, ty0, th, tw, m, f0, f1,
):  # fmt: skip
    # filters f0..f1 of the plane-layout output transform, on this thread
    _output_plane_filters(
        mm, out, at, bias, has_bias, res, has_res, relu, add, n0, ty0, th, tw, m, f0, f1
    )


@kernel.cpu_kernel
def _output_transform_plane_team(
    mm, out, at, bias, has_bias, res, has_res, relu, add, n0, ty0, th, tw, m, f0, f1, parts,
):  # fmt: skip
    # the same as one parallel loop over `parts` filter ranges (numba's OpenMP team)
    for p in prange(parts):
        lo, hi = f0 + (f1 - f0) * p // parts, f0 + (f1 - f0) * (p + 1) // parts
        _output_plane_filters(
            mm, out, at, bias, has_bias, res, has_res, relu, add, n0, ty0, th, tw, m, lo, hi
        )


@kernel.cpu_kernel(parallel=False)
def _weight_transform(w, u, g, flip, f0, f1):
    # u[xi, f, c] = (G w[f, c] G^T)[xi] for f in [f0, f1), w (F, cg, 3, 3); flip: w[f, c,
    # 2-i, 2-j] instead. The loops run over c innermost (u's contiguous axis), on a float64
    # copy of filter f's 9 taps per channel: vector loops where one filter at a time ran
    # scalar loops of 3 (512x512 F(4x4), one thread: 28 -> 7.7 ms; 14 -> 3.5 for F(2x2)).
    # Same sums in the same order as one filter at a time, so the same bits.
    cg = w.shape[1]
    a = g.shape[0]
    taps = np.empty((9, cg))  # taps[3*i + j, c] = w[f, c, i, j] (flipped: 8 - that)
    tmp = np.empty((a, 3, cg))  # tmp[k, j, c] = (G w[f, c])[k, j]
    for f in range(f0, f1):
        for c in range(cg):
            for ij in range(9):
                src = 8 - ij if flip else ij
                taps[ij, c] = w[f, c, src // 3, src % 3]
        for k in range(a):
            g0, g1, g2 = g[k, 0], g[k, 1], g[k, 2]
            for j in range(3):
                for c in range(cg):
                    tmp[k, j, c] = 0.0 + g0 * taps[j, c] + g1 * taps[3 + j, c] + g2 * taps[6 + j, c]
        for k1 in range(a):
            for k2 in range(a):
                g0, g1, g2 = g[k2, 0], g[k2, 1], g[k2, 2]
                xi = k1 * a + k2
                for c in range(cg):
                    u[xi, f, c] = 0.0 + tmp[k1, 0, c] * g0 + tmp[k1, 1, c] * g1 + tmp[k1, 2, c] * g2


@kernel.cpu_kernel(parallel=False)
def _weight_grad_back(acc, dw, g, add, f0, f1):
    # dw[f, c] (+)= G^T acc[:, f, c] G for f in [f0, f1): the 3x3 filter gradient from the
    # transform domain, acc (a*a, F, cg), dw (F, cg, 3, 3), g = G (a, 3) in float64. Loops
    # over c innermost (acc's contiguous axis), as _weight_transform; the same sums in the
    # same order as one filter at a time (512x512 F(4x4), one thread: 31 -> 10 ms)
    a = g.shape[0]
    cg = dw.shape[1]
    tmp = np.empty((3, a, cg))  # tmp[p, k2, c] = (G^T acc[:, f, c])[p, k2]
    r = np.empty((9, cg))  # r[3*p + q, c] = dw's new value
    for f in range(f0, f1):
        for p in range(3):
            for k2 in range(a):
                for c in range(cg):
                    tmp[p, k2, c] = 0.0
                for k1 in range(a):
                    coef = g[k1, p]
                    xi = k1 * a + k2
                    for c in range(cg):
                        tmp[p, k2, c] += coef * acc[xi, f, c]
        for p in range(3):
            for q in range(3):
                pq = 3 * p + q
                for c in range(cg):
                    r[pq, c] = 0.0
                for k2 in range(a):
                    coef = g[k2, q]
                    for c in range(cg):
                        r[pq, c] += tmp[p, k2, c] * coef
        for c in range(cg):
            for p in range(3):
                for q in range(3):
                    if add:
                        dw[f, c, p, q] += r[3 * p + q, c]
                    else:
                        dw[f, c, p, q] = r[3 * p + q, c]


# -- weight transform cache -------------------------------------------------------------------


class _Entry:
    __slots__ = ("lock", "snapshot", "stamp", "u")

    def __init__(self, snapshot: Any, u: Any, stamp: Any) -> None:
        self.snapshot = snapshot
        self.u = u
        self.stamp = stamp  # the input stamp the snapshot was last checked at, or None
        self.lock = threading.Lock()  # a check, or a re-transform in place, at a time


_cache: dict[tuple[Any, ...], _Entry] = {}
_cache_lock = threading.Lock()
#: most transformed weights kept (ResNet-18 has 16 3x3 stride-1 layers, x2 for backward)
CACHE_ENTRIES = 64
#: transforms made since import (tests check that a changed weight is re-transformed)
stats = {"transforms": 0, "hits": 0, "stamp_hits": 0}


@kernel.cpu_kernel(parallel=False)
def _equal(a, b):
    # a == b element by element (integer views: bitwise), stopping at the first difference
    # (a plain loop: numba does not compile all() over a generator)
    for i in range(a.size):  # noqa: SIM110
        if a[i] != b[i]:
            return False
    return True


def _same_bits(a: Any, b: Any) -> bool:
    """Bitwise equality (a NaN weight equals itself; -0.0 differs from 0.0): one pass, no
    temporaries. Still memory-bound: ~1.5 ms for ResNet's 9 MB 512x512x3x3 weights."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    as_int = np.dtype(f"u{a.dtype.itemsize}")
    flat_a = a.reshape(-1).view(as_int)
    flat_b = np.ascontiguousarray(b).reshape(-1).view(as_int)
    return bool(_equal(flat_a, flat_b))


def transformed_weights(w: Any, groups: int, m: int, transpose: bool = False) -> Any:
    """U (a*a, F', cg') of w (F, cg, 3, 3), cached across calls.

    transpose=True gives the backward-data filter: w' (C, Fg, 3, 3) with
    w'[g*cg + c, f] = w[g*Fg + f, c] flipped in both axes (a 3x3 conv of dy with w' is
    the data gradient). The cache is keyed on the weight buffer (its address, shape,
    dtype, strides) and checked against a bitwise snapshot of the weights it was made
    from, so a weight changed in place (an optimizer step, a new BatchNorm fold) is
    re-transformed. The check reads the weights once; the transform itself reads them
    and writes (a/3)^2 times as much, with ~80 multiplies per 3x3 filter. Inside a bound
    graph the check is skipped while the executor's stamp of the weight is the one the
    entry was last checked at (nnvmpy.input_stamps: the weight has not been written since).
    """
    stamp = input_stamps.of(w)
    key = (
        w.__array_interface__["data"][0],
        w.shape,
        w.strides,
        w.dtype.str,
        groups,
        m,
        transpose,
    )
    with _cache_lock:
        entry = _cache.get(key)
    if entry is None:
        wc = np.ascontiguousarray(w)
        u = _transform(wc, None, groups, m, transpose)
        with _cache_lock:
            if len(_cache) >= CACHE_ENTRIES:
                _cache.pop(next(iter(_cache)))
            _cache[key] = _Entry(wc.copy(), u, stamp)
        return u
    with entry.lock:
        if input_stamps.same(stamp, entry.stamp):
            stats["stamp_hits"] += 1
            return entry.u
        entry.stamp = stamp
        if _same_bits(entry.snapshot, w):
            stats["hits"] += 1
            return entry.u
        # the same buffer with new values (an optimizer step): into the entry's own arrays.
        # A fresh 38 MB U (512x512, F(4x4)) costs page faults worth 2-3 transforms, and no
        # operation still reads the old U: the engine ran the weight's writer after them
        wc = np.ascontiguousarray(w)
        _transform(wc, entry.u, groups, m, transpose)
        np.copyto(entry.snapshot, wc)
        return entry.u


def _transform(wc: Any, u: Any, groups: int, m: int, transpose: bool) -> Any:
    """U of the contiguous weights wc into u (a new array if None), as transformed_weights."""
    f, cg = int(wc.shape[0]), int(wc.shape[1])
    fg = f // groups
    if transpose:
        src = wc.reshape(groups, fg, cg, 3, 3).transpose(0, 2, 1, 3, 4)
        src = np.ascontiguousarray(src).reshape(groups * cg, fg, 3, 3)
    else:
        src = wc
    _, g, _ = matrices(m, wc.dtype)
    a = m + 2
    if u is None:
        u = np.empty((a * a, src.shape[0], src.shape[1]), wc.dtype)
    _split(src.shape[0], u.size, _weight_transform, src, u, g, transpose)
    stats["transforms"] += 1
    return u


def clear_cache() -> None:
    """Forget every transformed weight."""
    with _cache_lock:
        _cache.clear()


# -- the convolution --------------------------------------------------------------------------

#: conv3x3 deals its blocks to lanes while the transformed filter U is at most this many
#: times a block's scratch (V and M): each lane reads all of U
LANE_U_RATIO = 2.5
#: below this many values touched a transform runs on the calling thread alone
PARALLEL_CUTOFF = 1 << 17


def _split(n: int, work: int, fn: Any, *args: Any) -> None:
    """fn(*args, lo, hi) over channel ranges covering [0, n): one range per thread that
    nnvmpy.threads.region grants, the first on the calling thread, the others in the ufunc
    pool's threads (the kernels release the GIL). Python threads rather than a numba
    parallel region: these run between OpenBLAS calls, and numba's OpenMP workers would
    spin into the next GEMM (_im2col.py)."""
    if work < PARALLEL_CUTOFF or n < 2:
        fn(*args, 0, n)
        return
    from nnvmpy import threads
    from nnvmpy.ops._numpy_fast import _get_pool, _workers

    with threads.region(_workers()) as k:
        k = min(k, n)
        if k <= 1:
            fn(*args, 0, n)
            return
        step = -(-n // k)
        pool = _get_pool()
        futures = [pool.submit(fn, *(*args, lo, min(n, lo + step))) for lo in range(step, n, step)]
        fn(*args, 0, step)
        for fut in futures:
            fut.result()


def _team(n: int, work: int, fn: Any, *args: Any) -> None:
    """`_split`'s signature: a plane-layout transform as its numba parallel twin (one
    loop over the width nnvmpy.threads.region grants), where numba's team and the BLAS's
    threads are one OpenMP runtime (_lanes.one_openmp); else `_split`."""
    twin = _TEAM_TWINS.get(fn)
    if twin is None or work < PARALLEL_CUTOFF or n < 2 or not _lanes.one_openmp():
        _split(n, work, fn, *args)
        return
    from nnvmpy import threads

    with threads.region() as k:
        twin(*args, 0, n, min(k, n))


_TEAM_TWINS = {
    _input_transform_plane: _input_transform_plane_team,
    _output_transform_plane: _output_transform_plane_team,
}


def _block(
    n: int, th: int, tw: int, a: int, c: int, f: int, itemsize: int, budget: int, per_row: int
) -> tuple[int, int]:
    """(images, tile rows) per block: about TARGET_TILES tiles (GEMM width; V and M stay
    near the cache), scratch within `budget` bytes (per_row: values per tile row)."""
    rows = max(1, min(th, budget // max(1, per_row * itemsize), TARGET_TILES // max(1, tw)))
    if rows < th:
        return 1, rows
    by_memory = budget // max(1, per_row * th * itemsize)
    by_width = TARGET_TILES // max(1, th * tw)
    return max(1, min(n, by_memory, by_width)), th


def _blocks(n: int, nb: int, th: int, nty: int) -> Any:
    """(n0, images, ty0, tile rows) of every block."""
    for n0 in range(0, n, nb):
        for ty0 in range(0, th, nty):
            yield n0, min(nb, n - n0), ty0, min(nty, th - ty0)


def conv3x3(
    x: Any,
    w: Any,
    bias: Any,
    out: Any,
    pad: tuple[int, int],
    groups: int,
    add: bool,
    res: Any,
    budget: int,
    m: int = 2,
    residual: Any = None,
    relu: bool = False,
    transpose_w: bool = False,
) -> None:
    """out (N, F, Ho, Wo) (=|+=) relu?(conv3x3(x, w) + bias + residual), x (N, C, H, W).

    Stride 1, dilation 1, padding `pad` (each 0..2). w is (F, C/groups, 3, 3), or with
    transpose_w the forward filter (C', F/groups, 3, 3) of which this computes the data
    gradient (see `transformed_weights`). Scratch memory comes from `res` (kTempSpace),
    about `budget` bytes: the batch is cut into chunks of images.
    """
    n, c, height, width = (int(d) for d in x.shape)
    f, ho, wo = int(out.shape[1]), int(out.shape[2]), int(out.shape[3])
    ph, pw = pad
    if ho != height + 2 * ph - 2 or wo != width + 2 * pw - 2:
        raise NNVMError(
            f"Convolution (Winograd): output {out.shape} does not match a 3x3 stride-1 "
            f"convolution of input {x.shape} with padding {pad}"
        )
    a = m + 2
    th, tw = -(-ho // m), -(-wo // m)
    bt, _, at = matrices(m, x.dtype)
    u = transformed_weights(w, groups, m, transpose_w)
    # a block: images n0..n0+mb-1 whole, or tile rows ty0..ty0+nty-1 of one image
    blocks, block_size, n_parts = _plan(n, th, tw, a, c, f, x.itemsize, budget, u.nbytes)
    space = res.get_space((n_parts * block_size,), x.dtype)
    has_bias, has_res = bias is not None, residual is not None
    beta = bias if has_bias else np.zeros(1, x.dtype)
    resid = residual if has_res else out
    xc = np.ascontiguousarray(x)
    # lanes (n_parts > 1): each partition runs its blocks start to end on one thread, one-
    # thread GEMMs included, in its own scratch. Batch 1, 64x56x56 F(2x2): 1.55 ms with
    # the transforms split over threads between two-thread GEMMs, 1.38 on one thread alone
    split = n_parts == 1
    epilogue = (at, beta, has_bias, resid, has_res, relu, add)

    def work(p: int) -> None:
        scratch = space[p * block_size : (p + 1) * block_size]
        for blk in blocks[p::n_parts]:
            _forward_block(xc, u, out, scratch, blk, c, f, groups, m, bt, pad, tw, epilogue, split)

    _lanes.run(n_parts, work)


def _plan(
    n: int, th: int, tw: int, a: int, c: int, f: int, itemsize: int, budget: int, shared: int
) -> tuple[list[tuple[int, int, int, int]], int, int]:
    """(blocks, values of scratch a block, partitions) of a Winograd pass over n images
    of th x tw tiles. `shared`: the bytes every lane reads whole (U, or a filter-gradient
    accumulator). With lanes, a single image is cut into tile-row blocks, and blocks of
    whole images are sized so that their count is a multiple of the partitions (32 images
    of 28x28 in blocks of 5 left the lanes 4 blocks and 3: 128x28x28 F(4x4) 20.0 ->
    15.2 ms, 256x14x14 (blocks of 20 and 12) 18.6 -> 14.8). A batch in one block stays
    one: 512x7x7 at batch 32 ran slower as two blocks on lanes (17.3 -> 19.7 ms)."""
    per_row = a * a * (c + f) * (tw + 1)  # + 1: the plane layout's junk column
    nb, nty = _block(n, th, tw, a, c, f, itemsize, budget, per_row)
    want = _lanes.parts(n * th)  # partitions the thread budget can use (1 without MKL)
    if n == 1 and _lanes.one_openmp():
        want = 1  # one image whole: team transforms between all-thread GEMMs (_team)
    if want > 1 and nb == 1 and n * -(-th // nty) < want:  # one image: cut its tile rows
        cut = -(-th // want)
        if _lanes_pay(shared, a, c, f, cut, tw, itemsize):
            nty = cut
    elif want > 1 and 1 < nb < n:  # blocks of whole images: a multiple of `want` of them
        count = -(-n // nb)
        nb = -(-n // (-(-count // want) * want))
    blocks = list(_blocks(n, nb, th, nty))
    pay = _lanes_pay(shared, a, c, f, nty * nb, tw, itemsize)
    n_parts = _lanes.parts(len(blocks)) if pay else 1
    return blocks, a * a * (c + f) * nty * (tw + 1) * nb, n_parts


def _lanes_pay(shared: int, a: int, c: int, f: int, rows: int, tw: int, itemsize: int) -> bool:
    """Whether blocks of `rows` tile rows (or images x tile rows) should go to lanes:
    every lane reads all of U, which pays while U is not much bigger than a lane's own V
    and M (512x7x7 at batch 1: U 16 MB, V and M 0.6 MB a lane; lanes ran 4.4 ms, 2.1
    without; 128x28x28 F(4x4): U 2.4 MB, 1 MB a lane, 1.6 -> 1.0 ms)."""
    return shared <= LANE_U_RATIO * a * a * (c + f) * rows * (tw + 1) * itemsize


def _forward_block(
    xc: Any,
    u: Any,
    out: Any,
    scratch: Any,
    blk: tuple[int, int, int, int],
    c: int,
    f: int,
    groups: int,
    m: int,
    bt: Any,
    pad: tuple[int, int],
    tw: int,
    epilogue: tuple[Any, ...],
    split: bool,
) -> None:
    """conv3x3 on one block (images n0.. or tile rows ty0.. of image n0): input
    transform, a*a GEMMs per group, output transform. split: the transforms over the
    threads nnvmpy.threads.region grants (else on this thread alone)."""
    n0, mb, ty0, rows = blk
    a, cg, fg = m + 2, c // groups, f // groups
    run = _team if split else _direct
    v, mm = _block_views(scratch, blk, a, c, f, tw)
    _tiles(run, xc, v, bt, blk, m * ty0 - pad[0], pad[1], tw, m)
    # one 2-D matmul per (position, group): NumPy's batched matmul runs large stacks
    # far below BLAS speed (12 vs 85 GFLOP/s for 16 x 512^3, measured here); under
    # MKL one cblas_sgemm_batch_strided call per group does all a*a positions
    for g in range(groups):
        fs, cs = slice(g * fg, (g + 1) * fg), slice(g * cg, (g + 1) * cg)
        if _blas.routes_matmul(mm.dtype):
            _blas.matmul_stack(u[:, fs], v[:, cs], mm[:, fs])
            continue
        for xi in range(a * a):
            np.matmul(u[xi, fs], v[xi, cs], out=mm[xi, fs])
    work = mm.size
    if mb == 1:  # the plane layout
        run(f, work, _output_transform_plane, mm, out, *epilogue, n0, ty0, rows, tw, m)
    else:
        run(f, work, _output_transform, mm, out, *epilogue, n0, mb, ty0, rows, tw, m)


def _block_views(
    scratch: Any, blk: tuple[int, int, int, int], a: int, c: int, f: int, tw: int
) -> tuple[Any, Any]:
    """(V (a*a, c, cols), M or Dy (a*a, f, cols)) of one block in its scratch: blocks of
    one image in the plane layout (tw + 1 columns per tile row), images innermost else."""
    _, mb, _, rows = blk
    cols = rows * (tw + 1) if mb == 1 else mb * rows * tw
    v = scratch[: a * a * c * cols].reshape(a * a, c, cols)
    return v, scratch[a * a * c * cols : a * a * (c + f) * cols].reshape(a * a, f, cols)


def _tiles(
    run: Any, src: Any, dst: Any, bt: Any, blk: tuple[int, int, int, int], y0: int, pw: int,
    tw: int, m: int,
) -> None:  # fmt: skip
    """dst = the tile transform bt of the block's images of src (x tiles with B^T, or dy
    tiles with A), by the plane or the images-innermost kernel as _block_views laid it out."""
    n0, mb, _, rows = blk
    if mb == 1:
        run(dst.shape[1], dst.size, _input_transform_plane, src, dst, bt, n0, y0, pw, rows, tw, m)
    else:
        run(dst.shape[1], dst.size, _input_transform, src, dst, bt, n0, mb, y0, pw, rows, tw, m)


def _direct(n: int, work: int, fn: Any, *args: Any) -> None:
    """fn(*args, 0, n) on this thread: `_split`'s signature for lanes' blocks."""
    fn(*args, 0, n)


def weight_grad3x3(
    x: Any,
    dy: Any,
    dw: Any,
    pad: tuple[int, int],
    groups: int,
    add: bool,
    res: Any,
    budget: int,
    m: int = 2,
) -> None:
    """dw (F, C/groups, 3, 3) (=|+=) the filter gradient of a 3x3 stride-1 convolution.

    dw[f, c] = sum over images and output tiles of x's a x a tile correlated with dy's
    m x m tile: Winograd F(3x3, m x m), which by the transposition principle reuses the
    forward matrices, dW = G^T [(A dy A^T) * (B^T d B)] G. So per block the input
    transform of x is the forward's, dy takes the same kernel with A (a x m) in place of
    B^T, the a*a GEMMs Dy[xi] @ V[xi]^T sum over tiles, and one back-transform per filter
    ends it (in float64).
    """
    n, c, height, width = (int(d) for d in x.shape)
    f, ho, wo = int(dy.shape[1]), int(dy.shape[2]), int(dy.shape[3])
    ph, pw = pad
    if ho != height + 2 * ph - 2 or wo != width + 2 * pw - 2:
        raise NNVMError(
            f"Convolution (Winograd): output gradient {dy.shape} does not match a 3x3 "
            f"stride-1 convolution of input {x.shape} with padding {pad}"
        )
    cg = c // groups
    a = m + 2
    th, tw = -(-ho // m), -(-wo // m)
    bt, g64, at = matrices(m, x.dtype)
    a_dy = np.ascontiguousarray(at.T)  # A (a, m): the dy tile transform
    acc = np.empty((a * a, f, cg), x.dtype)
    # lanes as in conv3x3, each partition with its own accumulator (read once more at the
    # end, as U is by every lane in the forward), the partial sums added in order after
    blocks, block_size, n_parts = _plan(n, th, tw, a, c, f, x.itemsize, budget, acc.nbytes)
    space = res.get_space((n_parts * block_size,), x.dtype)
    accs = [acc] + [np.empty_like(acc) for _ in range(n_parts - 1)]
    xc, dyc = np.ascontiguousarray(x), np.ascontiguousarray(dy)
    split = n_parts == 1

    def work(p: int) -> None:
        scratch = space[p * block_size : (p + 1) * block_size]
        for i, blk in enumerate(blocks[p::n_parts]):
            _weight_grad_block(
                xc, dyc, scratch, blk, accs[p], i == 0, c, f, groups, m, bt, a_dy, pad, tw, split
            )

    _lanes.run(n_parts, work)
    for part in accs[1:]:
        acc += part
    _split(f, acc.size, _weight_grad_back, acc, dw, g64, add)


def _weight_grad_block(
    xc: Any,
    dyc: Any,
    scratch: Any,
    blk: tuple[int, int, int, int],
    acc: Any,
    first: bool,
    c: int,
    f: int,
    groups: int,
    m: int,
    bt: Any,
    a_dy: Any,
    pad: tuple[int, int],
    tw: int,
    split: bool,
) -> None:
    """weight_grad3x3 on one block: x's and dy's tile transforms, then acc[xi] (=|+=)
    Dy[xi] @ V[xi]^T per group (first: =). In the plane layout dy's junk column is 0
    (its tiles lie right of dy), so the junk tiles add nothing."""
    ty0 = blk[2]
    a, cg, fg = m + 2, c // groups, f // groups
    run = _team if split else _direct
    v, dyt = _block_views(scratch, blk, a, c, f, tw)
    _tiles(run, xc, v, bt, blk, m * ty0 - pad[0], pad[1], tw, m)
    _tiles(run, dyc, dyt, a_dy, blk, m * ty0, 0, tw, m)  # dy: no padding
    for gi in range(groups):
        fs, cs = slice(gi * fg, (gi + 1) * fg), slice(gi * cg, (gi + 1) * cg)
        if _blas.routes_matmul(acc.dtype):  # all positions in one call, beta = 1 after
            vt = v[:, cs].transpose(0, 2, 1)
            _blas.matmul_stack(dyt[:, fs], vt, acc[:, fs], 0.0 if first else 1.0)
            continue
        for xi in range(a * a):
            if first:
                np.matmul(dyt[xi, fs], v[xi, cs].T, out=acc[xi, fs])
            else:
                acc[xi, fs] += dyt[xi, fs] @ v[xi, cs].T


# -- entry points for _conv_cpu (ConvShape and 5-D arrays) -----------------------------------


def _budget(s: Any) -> int:
    from nnvmpy.ops.nn._conv_cpu import MAX_WORKSPACE_BYTES

    return min(s.workspace_mb << 20, MAX_WORKSPACE_BYTES)


def forward(
    s: Any, x: Any, w: Any, bias: Any, out: Any, add: bool, res: Any, epilogue: Any, m: int
) -> None:
    """_conv_cpu.forward's Winograd branch: out (=|+=) [relu?](conv + bias [+ residual])."""
    from nnvmpy.ops.nn._conv_cpu import planar

    residual, relu = epilogue if epilogue is not None else (None, False)
    conv3x3(
        planar(x), planar(w), bias, planar(out), (s.win.ph, s.win.pw), s.groups, add, res,
        _budget(s), m, None if residual is None else planar(residual), relu,
    )  # fmt: skip


def backward_weight(s: Any, dy: Any, x: Any, dw: Any, add: bool, res: Any, m: int) -> None:
    """dw (=|+=) the filter gradient (see `weight_grad3x3`)."""
    from nnvmpy.ops.nn._conv_cpu import planar

    pad = (s.win.ph, s.win.pw)
    weight_grad3x3(planar(x), planar(dy), planar(dw), pad, s.groups, add, res, _budget(s), m)


def backward_data(s: Any, dy: Any, w: Any, dx: Any, add: bool, res: Any, m: int) -> None:
    """dx (=|+=) the data gradient: dy convolved with the flipped, transposed filter,
    padding 2 - p (a 3x3 stride-1 convolution again)."""
    from nnvmpy.ops.nn._conv_cpu import planar

    pad = (2 - s.win.ph, 2 - s.win.pw)
    conv3x3(
        planar(dy), planar(w), None, planar(dx), pad, s.groups, add, res, _budget(s), m,
        transpose_w=True,
    )  # fmt: skip


__all__ = [
    "TILES",
    "backward_data",
    "backward_weight",
    "clear_cache",
    "conv3x3",
    "forward",
    "matrices",
    "supported",
    "transformed_weights",
    "weight_grad3x3",
]
