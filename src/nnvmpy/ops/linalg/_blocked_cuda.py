"""A thread block per matrix for the GPU factorizations: potrf, potri and the LU of
inverse / det / slogdet (cholesky.py and inverse.py choose it; their thread-per-matrix
kernels stay for small matrices).

Why. potrf_mat, potri_mat and lu_mat are a thread per matrix: a 1024 x 1024 Cholesky is
one thread doing ~3.6e8 dependent flops (seconds), while an H200 has 132 SMs of 2048
threads; and a thread per matrix reads matrices n * n apart, so no load is coalesced.
From MIN_ORDER columns (by_block) each matrix takes a block instead (the grid capped as
every grid-stride launch is, striding over the batch), which steps through the matrix
with a barrier per step and splits each step over its threads:

- potrf, right-looking by columns: the diagonal's sqrt (one thread), the column scaled
  (threads over rows), the trailing lower triangle updated (threads over its entries,
  folded so none idles and neighbours touch neighbours);
- LU with partial pivoting, by columns: the pivot is a block-wide argmax tree in shared
  memory, the row swap, the column scaling and the trailing update are split over
  threads;
- potri: X = L^-1 by rows (row r of X from rows < r: threads over its columns, L's
  strict triangle mirrored into the other one first so that X can overwrite it), then
  the lower triangle of X^T X (threads over entries) and its mirror.

Every entry is computed from the same terms, in the same order and in the same types as
the thread-per-matrix kernel computes it (potrf and LU accumulate in the data's dtype,
potri in float64), so results agree with them (on the simulator bit for bit, but for an
ulp in float32 potrf, where the simulator's NumPy rounds the serial kernel's quotient to
float32) and with NumPy/LAPACK to the existing tolerances. The pivot is the serial
scan's: the first row of largest |value|, NaNs skipped, except that a NaN on the
diagonal is kept (the scan starts there and nothing beats it); the tree orders
candidates by (|value| descending, row ascending), and gives a NaN diagonal the value
+inf, so it wins there too. Failures set the same flags.

One block on one SM still serves a single matrix: a 1024 x 1024 factorization has 256
threads instead of one (a blocked multi-block factorization would be the next step).
Under the simulator blocks have at most SIM_THREADS threads (each is a Python thread).
The constants are module globals read at each call, so tests can send tiny shapes here.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...kernel import device_function
from ...kernel.launch import cuda, gpu_kernel  # cuda: numba.cuda once built

THREADS = 256  # threads of a block at most on a GPU (a power of two: the pivot tree halves it)
SIM_THREADS = 32  # the same under the simulator, where every thread is a Python thread
MIN_ORDER = 32  # from n = 32 columns a matrix takes a block: a chain of n^3/3 steps and
# reads n * n apart cost more than a block's barriers, however many matrices there are
SHARED_POTRF = 2  # potrf's shared slots: the failure flag, the diagonal's sqrt


def by_block(a: Any, n: int) -> bool:
    """Whether the matrices of order n of the device array `a` take a block each (a NumPy
    array is the tests' GPU code compiled for the CPU: a thread each)."""
    return not isinstance(a, np.ndarray) and n >= MIN_ORDER


def block_threads(n: int) -> int:
    """blockDim.x for matrices of order n: the power of two >= n * n, at most THREADS
    (SIM_THREADS under the simulator)."""
    from nnvmpy.kernel.cuda import simulated

    limit = SIM_THREADS if simulated() else THREADS
    return min(limit, 1 << (n * n - 1).bit_length())


def _launch(ctx: Any, op: str, k: Any, batch: int, n: int, *args: Any) -> None:
    """k(batch, n, *args) on a block of block_threads(n) per matrix: kernel/cuda.py's
    launch_blocks (arrays flattened, the grid capped; k strides over the rest)."""
    from nnvmpy.kernel.cuda import launch_blocks

    launch_blocks(ctx, op, k, batch, block_threads(n), (batch, n, *args))


# -- shared pieces ----------------------------------------------------------------------------


@device_function
def _lf(base, n, r, c, lower):
    """Flat index of (r, c) of the lower form of a factor: the transpose when upper."""
    if lower:
        return base + r * n + c
    return base + c * n + r


@device_function
def _fold(e, m, lower):
    """Entry e of the lower triangle (diagonal included) of order m as (r, c, valid):
    rows t and m - 1 - t share m + 1 slots (the middle row of an odd m once, its second
    copy invalid). Neighbouring e are neighbouring in memory: along a row when lower,
    along a column (the stored row of the transpose) when not."""
    t = e // (m + 1)
    s = e - t * (m + 1)
    if s <= t:
        u, v, ok = t, s, True
    else:
        u, v, ok = m - 1 - t, s - t - 1, 2 * t != m - 1
    if lower:
        return u, v, ok
    return m - 1 - v, m - 1 - u, ok


# -- potrf ------------------------------------------------------------------------------------


@device_function
def _potrf_one(out, a, flags, z, n, lower, tid, nt, sh):
    base = z * n * n
    for e in range(tid, n * n, nt):  # the factor's triangle of a; zeros in the other
        p = e // n
        q = e - p * n
        if (q <= p) if lower else (q >= p):
            out[base + e] = a[base + e]
        else:
            out[base + e] = 0.0
    if tid == 0:
        flags[z] = 0.0
    cuda.syncthreads()
    for j in range(n):
        if tid == 0:
            s = out[_lf(base, n, j, j, lower)]
            if s > 0.0:
                d = math.sqrt(s)
                out[_lf(base, n, j, j, lower)] = d
                sh[0] = 0.0
                sh[1] = d  # unrounded, as potrf_mat divides by it
            else:  # also NaN
                flags[z] = 1.0
                sh[0] = 1.0
        cuda.syncthreads()
        if sh[0] != 0.0:
            return  # every thread: the failure is flagged
        d = sh[1]
        for r in range(j + 1 + tid, n, nt):
            out[_lf(base, n, r, j, lower)] = out[_lf(base, n, r, j, lower)] / d
        cuda.syncthreads()
        m = n - j - 1
        for e in range(tid, (m + 1) // 2 * (m + 1), nt):
            u, v, ok = _fold(e, m, lower)
            if ok:
                r = j + 1 + u
                c = j + 1 + v
                out[_lf(base, n, r, c, lower)] -= (
                    out[_lf(base, n, r, j, lower)] * out[_lf(base, n, c, j, lower)]
                )
        cuda.syncthreads()


@gpu_kernel
def _potrf_block_cuda(batch, n, out, a, flags, lower):
    # a block per matrix z: out = its Cholesky factor; flags[z] = 1 where it fails
    tid, nt = cuda.threadIdx.x, cuda.blockDim.x
    sh = cuda.shared.array(SHARED_POTRF, np.float64)
    for z in range(cuda.blockIdx.x, batch, cuda.gridDim.x):
        _potrf_one(out, a, flags, z, n, lower, tid, nt, sh)
        cuda.syncthreads()  # every thread has read sh before the next matrix writes it


def potrf_blocks(
    ctx: Any, op: str, batch: int, n: int, out: Any, a: Any, lower: bool, flags: Any
) -> None:
    """potrf_mat's results and flags (cholesky.py), a block per matrix."""
    _launch(ctx, op, _potrf_block_cuda, batch, n, out, a, flags, lower)


# -- potri ------------------------------------------------------------------------------------


@device_function
def _potri_one(out, a, flags, z, n, lower, tid, nt):
    base = z * n * n
    for e in range(tid, n * n, nt):  # L's triangle, its strict part mirrored too
        p = e // n
        q = e - p * n
        r, c = (p, q) if lower else (q, p)
        if c <= r:
            x = a[base + e]
            out[base + e] = x
            if c < r:
                out[_lf(base, n, c, r, lower)] = x
    if tid == 0:
        flags[z] = 0.0
    cuda.syncthreads()
    lane = tid % 32
    for r in range(n):  # row r of X = L^-1 over L's row r (its copy: the other triangle)
        d = out[_lf(base, n, r, r, lower)]
        if d == 0.0:
            if tid == 0:
                flags[z] = 1.0
            return  # every thread
        for c in range(tid, r, nt):
            s = 0.0
            for q in range(c - lane, r):  # a warp's threads take the same q: coalesced
                if q >= c:
                    s += out[_lf(base, n, q, r, lower)] * out[_lf(base, n, q, c, lower)]
            out[_lf(base, n, r, c, lower)] = -s / d
        cuda.syncthreads()  # every thread has read d
        if tid == 0:
            out[_lf(base, n, r, r, lower)] = 1.0 / d
        cuda.syncthreads()
    m = n - 1  # X^T X below the diagonal, into the other triangle (L's copy is spent)
    for e in range(tid, (m + 1) // 2 * (m + 1), nt):
        u, v, ok = _fold(e, m, lower)
        if ok:
            r = u + 1
            s = 0.0
            for q in range(r, n):
                s += out[_lf(base, n, q, r, lower)] * out[_lf(base, n, q, v, lower)]
            out[_lf(base, n, v, r, lower)] = s
    cuda.syncthreads()  # X's diagonal is read above
    for r in range(tid, n, nt):
        s = 0.0
        for q in range(r, n):
            s += out[_lf(base, n, q, r, lower)] * out[_lf(base, n, q, r, lower)]
        out[_lf(base, n, r, r, lower)] = s
    cuda.syncthreads()  # X's strict triangle is read above
    for e in range(tid, n * n, nt):
        p = e // n
        q = e - p * n
        r, c = (p, q) if lower else (q, p)
        if c < r:
            out[base + e] = out[_lf(base, n, c, r, lower)]


@gpu_kernel
def _potri_block_cuda(batch, n, out, a, flags, lower):
    # a block per matrix z: out = (L L^T)^-1 from its factor L; flags[z] = 1 when singular
    tid, nt = cuda.threadIdx.x, cuda.blockDim.x
    for z in range(cuda.blockIdx.x, batch, cuda.gridDim.x):
        _potri_one(out, a, flags, z, n, lower, tid, nt)
        cuda.syncthreads()


def potri_blocks(
    ctx: Any, op: str, batch: int, n: int, out: Any, a: Any, lower: bool, flags: Any
) -> None:
    """potri_mat's results and flags (cholesky.py), a block per matrix."""
    _launch(ctx, op, _potri_block_cuda, batch, n, out, a, flags, lower)


# -- LU ---------------------------------------------------------------------------------------


@device_function
def _pivot(lu, base, n, j, tid, nt, shv, shp):
    """Row of column j's pivot (rows >= j), as lu_mat's scan picks it (every thread gets
    it): each thread scans its rows, a shared tree picks among the threads."""
    best = -1.0
    at = -1
    for r in range(j + tid, n, nt):
        v = abs(lu[base + r * n + j])
        if r == j and v != v:
            v = math.inf  # the scan starts at a NaN diagonal: nothing replaces it
        if v > best:  # NaN never
            best = v
            at = r
    shv[tid] = best
    shp[tid] = at
    cuda.syncthreads()
    step = nt // 2
    while step > 0:
        if tid < step:
            k = shp[tid + step]
            i = shp[tid]
            if k >= 0 and (
                i < 0 or shv[tid + step] > shv[tid] or (shv[tid + step] == shv[tid] and k < i)
            ):
                shv[tid] = shv[tid + step]
                shp[tid] = k
        cuda.syncthreads()
        step //= 2
    return shp[0]  # rewritten only after the barriers of this column's later steps


@device_function
def _lu_one(lu, a, piv, flags, z, n, tid, nt, shv, shp):
    base = z * n * n
    for e in range(tid, n * n, nt):
        lu[base + e] = a[base + e]
    if tid == 0:
        flags[z] = 0.0
    cuda.syncthreads()
    for j in range(n):
        p = _pivot(lu, base, n, j, tid, nt, shv, shp)
        if tid == 0:
            piv[z * n + j] = p
        if p != j:
            for c in range(tid, n, nt):
                v = lu[base + j * n + c]
                lu[base + j * n + c] = lu[base + p * n + c]
                lu[base + p * n + c] = v
        cuda.syncthreads()
        d = lu[base + j * n + j]
        if d == 0.0:  # every thread: no elimination below a zero pivot
            if tid == 0:
                flags[z] = 1.0
            continue
        for r in range(j + 1 + tid, n, nt):
            lu[base + r * n + j] = lu[base + r * n + j] / d
        cuda.syncthreads()
        m = n - j - 1
        for e in range(tid, m * m, nt):
            i = e // m
            r = j + 1 + i
            c = j + 1 + (e - i * m)
            lu[base + r * n + c] -= lu[base + r * n + j] * lu[base + j * n + c]
        cuda.syncthreads()


@gpu_kernel
def _lu_block_cuda(batch, n, lu, a, piv, flags):
    # a block per matrix z: P A = L U into lu (L unit lower), pivots in piv, flags[z] = 1
    # when singular
    tid, nt = cuda.threadIdx.x, cuda.blockDim.x
    shv = cuda.shared.array(THREADS, np.float64)
    shp = cuda.shared.array(THREADS, np.int64)
    for z in range(cuda.blockIdx.x, batch, cuda.gridDim.x):
        _lu_one(lu, a, piv, flags, z, n, tid, nt, shv, shp)
        cuda.syncthreads()


def lu_blocks(ctx: Any, op: str, batch: int, n: int, lu: Any, a: Any, piv: Any, flags: Any) -> None:
    """lu_mat's factors, pivots and flags (inverse.py), a block per matrix."""
    _launch(ctx, op, _lu_block_cuda, batch, n, lu, a, piv, flags)


__all__ = [
    "MIN_ORDER",
    "SIM_THREADS",
    "THREADS",
    "block_threads",
    "by_block",
    "lu_blocks",
    "potrf_blocks",
    "potri_blocks",
]
