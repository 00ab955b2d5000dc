"""transpose on the CPU by cache tiles, parallel, for permutations that move the last axis.

NumPy copies a transposed view element by element in the output's order, so one side
walks memory a whole row apart: a (2048, 2048) float32 transpose took 23 ms, 4x MXNet's.
A permutation that keeps leading axes and swaps the two groups after them (the matrix
transpose, (0, 2, 1), NCHW <-> NHWC) is a batch of matrix transposes of the collapsed
(B, R, C) view; they run here in TILE x TILE tiles, whose reads and writes both stay in
cache, over numba's threads. Any other permutation that moves the last axis (swapaxes(1,
3) of NCHW: (0, 3, 2, 1)) is tiled over the two axes that are contiguous on either side:
the output axis that reads x's last axis, and the output's last axis; the rest are a
batch. Imported on the first large CPU transpose (it imports numba).
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from .. import kernel
from ..kernel.cpu import NATIVE_DTYPES
from .nn._uindex import u as _u

TILE = 16  # 16 rows: with rows 2^k bytes apart, more would share L1 cache sets
MIN_SIZE = 1 << 15  # below: NumPy's copy (the kernel's dispatch costs more than it saves)


def block_swap(shape: tuple[int, ...], axes: tuple[int, ...]) -> tuple[int, int, int] | None:
    """(B, R, C) when transposing `shape` by `axes` is out[b, c, r] = x[b, r, c] for the
    C-order view x as (B, R, C); None for any other permutation."""
    n = len(axes)
    k = 0
    while k < n and axes[k] == k:
        k += 1
    if n - k < 2:
        return None
    m = axes[k]
    if list(axes[k:]) != [*range(m, n), *range(k, m)]:
        return None
    return math.prod(shape[:k]), math.prod(shape[k:m]), math.prod(shape[m:])


def transpose_into(out: np.ndarray, x: np.ndarray, axes: tuple[int, ...], add: bool) -> bool:
    """out (+)= transpose(x, axes) by tiles when the permutation moves the last axis of a
    large native-dtype array; False (nothing done) otherwise (rows stay contiguous: a
    row-wise copy is as good)."""
    if x.size < MIN_SIZE or np.dtype(x.dtype) not in NATIVE_DTYPES or axes[-1] == len(axes) - 1:
        return False
    dims = block_swap(tuple(x.shape), axes)
    if dims is not None:
        b, r, c = dims
        _transpose_tiles(x.reshape(b, r, c), out.reshape(b, c, r), add)
        return True
    # any other permutation: tiles over the output axis reading x's last axis (k) and
    # the output's last axis; every other axis is a batch coordinate
    in_strides = [math.prod(x.shape[a + 1 :]) for a in range(x.ndim)]
    oshape = np.array([x.shape[a] for a in axes], np.int64)
    istride = np.array([in_strides[a] for a in axes], np.int64)
    ostride = np.array([math.prod(oshape[j + 1 :]) for j in range(len(axes))], np.int64)
    k = axes.index(x.ndim - 1)
    _permute_tiles(x.reshape(-1), out.reshape(-1), oshape, istride, ostride, k, add)
    return True


@kernel.cpu_kernel
def _transpose_tiles(x, out, add):
    # out[b, c, r] = x[b, r, c]: a task is one band of TILE rows of one matrix, walked in
    # TILE x TILE tiles, writing each output row's TILE elements in order
    nb, nr, nc = x.shape
    bands = (nr + TILE - 1) // TILE
    xf = x.reshape(-1)
    of = out.reshape(-1)
    for task in prange(nb * bands):
        b = task // bands
        r0 = (task - b * bands) * TILE
        r1 = min(r0 + TILE, nr)
        for c0 in range(0, nc, TILE):
            for c in range(c0, min(c0 + TILE, nc)):
                o = (b * nc + c) * nr
                src = b * nr * nc + c
                if add:
                    for r in range(r0, r1):
                        of[_u(o + r)] += xf[_u(src + r * nc)]
                else:
                    for r in range(r0, r1):
                        of[_u(o + r)] = xf[_u(src + r * nc)]


@kernel.cpu_kernel
def _permute_tiles(xf, of, oshape, istride, ostride, k, add):
    # of (+)= x permuted: output axis j has length oshape[j] and reads x with stride
    # istride[j]; axis k reads x contiguously, the last axis L is contiguous in of. A
    # task is one band of TILE coordinates of axis k at one coordinate of the other axes,
    # walked in TILE x TILE tiles of (k, L)
    d = oshape.size
    nl = oshape[d - 1]
    sl = istride[d - 1]
    nk = oshape[k]
    tk = ostride[k]
    bands = (nk + TILE - 1) // TILE
    nbatch = of.size // (nl * nk)
    for task in prange(nbatch * bands):
        b = task // bands
        k0 = (task - b * bands) * TILE
        k1 = min(k0 + TILE, nk)
        ob = 0
        xb = 0
        rem = b
        for j in range(d - 2, -1, -1):
            if j != k:
                q = rem // oshape[j]
                c = rem - q * oshape[j]
                rem = q
                ob += c * ostride[j]
                xb += c * istride[j]
        for l0 in range(0, nl, TILE):
            l1 = min(l0 + TILE, nl)
            for kk in range(k0, k1):
                o = ob + kk * tk
                src = xb + kk
                if add:
                    for i in range(l0, l1):
                        of[_u(o + i)] += xf[_u(src + i * sl)]
                else:
                    for i in range(l0, l1):
                        of[_u(o + i)] = xf[_u(src + i * sl)]


__all__ = ["MIN_SIZE", "TILE", "block_swap", "transpose_into"]
