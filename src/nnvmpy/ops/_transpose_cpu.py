"""transpose on the CPU by cache tiles, parallel, for permutations that swap two blocks.

NumPy copies a transposed view element by element in the output's order, so one side
walks memory a whole row apart: a (2048, 2048) float32 transpose took 23 ms, 4x MXNet's.
A permutation that keeps leading axes and swaps the two groups after them (the matrix
transpose, (0, 2, 1), NCHW <-> NHWC) is a batch of matrix transposes of the collapsed
(B, R, C) view; they run here in TILE x TILE tiles, whose reads and writes both stay in
cache, over numba's threads. Imported on the first large CPU transpose (it imports numba).
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
    """out (+)= transpose(x, axes) by tiles when the permutation is a block swap of a
    large native-dtype array; False (nothing done) otherwise."""
    dims = block_swap(tuple(x.shape), axes)
    if dims is None or x.size < MIN_SIZE or np.dtype(x.dtype) not in NATIVE_DTYPES:
        return False
    b, r, c = dims
    _transpose_tiles(x.reshape(b, r, c), out.reshape(b, c, r), add)
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


__all__ = ["MIN_SIZE", "TILE", "block_swap", "transpose_into"]
