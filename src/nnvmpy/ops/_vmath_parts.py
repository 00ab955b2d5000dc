"""vmath's float32 block loops over k contiguous parts of an array at once, in numba's
threads (a prange over the parts, inside the caller's threads.region): what
_numpy_fast.float32_parts runs for large arrays of erfinv, gamma, gammaln and tan.

A prange starts in ~2.5 us on this machine where the ufunc pool's Python threads took
40-50 us per call. One kernel per loop: numba does not cache a function that takes the
loop as an argument. Imported on first use (it imports numba; `import nnvmpy` must not).
"""

from __future__ import annotations

import numpy as np
from numba import prange

from .. import kernel
from ..kernel.vmath import trig
from ..kernel.vmath.blocks import erfinv_into, gamma_into, gammaln_into
from ..kernel.vmath.trig import tan_blocks


@kernel.cpu_kernel
def erfinv_parts(x, out, parts):
    n = x.size
    for p in prange(parts):
        lo, hi = n * p // parts, n * (p + 1) // parts
        erfinv_into(x[lo:hi], out[lo:hi])


@kernel.cpu_kernel
def gamma_parts(x, out, parts):
    n = x.size
    for p in prange(parts):
        lo, hi = n * p // parts, n * (p + 1) // parts
        gamma_into(x[lo:hi], out[lo:hi])


@kernel.cpu_kernel
def gammaln_parts(x, out, parts):
    n = x.size
    for p in prange(parts):
        lo, hi = n * p // parts, n * (p + 1) // parts
        gammaln_into(x[lo:hi], out[lo:hi])


@kernel.cpu_kernel
def _tan_blocks_parts(x, out, far_at, far_x, counts, stops):
    """trig.tan_blocks over len(counts) contiguous parts at once, each with its own row of
    far_at / far_x; counts[p], stops[p]: its results (stops in x's indices)."""
    n = x.size
    parts = counts.size
    for p in prange(parts):
        lo, hi = n * p // parts, n * (p + 1) // parts
        count, stop = tan_blocks(x[lo:hi], out[lo:hi], far_at[p], far_x[p])
        counts[p] = count
        stops[p] = lo + stop


def tan_parts(x: np.ndarray, out: np.ndarray, parts: int) -> None:
    """trig.tan_into over `parts` parts of flat float32 x at once: tan_blocks in a prange,
    then each part finished as tan_into finishes (trig.tan_finish)."""
    n = x.size
    far_at = np.empty((parts, trig.FAR_LIMIT), np.int64)
    far_x = np.empty((parts, trig.FAR_LIMIT), np.float32)
    counts, stops = np.empty(parts, np.int64), np.empty(parts, np.int64)
    _tan_blocks_parts(x, out, far_at, far_x, counts, stops)
    for p in range(parts):
        lo, hi = n * p // parts, n * (p + 1) // parts
        trig.tan_finish(x[lo:hi], out[lo:hi], counts[p], stops[p] - lo, far_at[p], far_x[p])
