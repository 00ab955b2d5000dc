"""Triangular solves on the GPU with a thread block per (matrix, group of right-hand
sides): linalg.trsm (_batched._trsm_gpu, also the potrf/potri/gelqf gradients) and the
A^-1 of inverse / det / slogdet from an LU (inverse.py).

Why. _kernels.trsm_vec and inverse.lu_inverse_col are a thread per right-hand side, each
a serial substitution of n^2 / 2 dependent steps (the inverse: two of them): a 512 x 512
inverse, or a trsm with 512 right-hand sides, is 512 threads (two blocks: 2 of an
H200's 132 SMs, a 500th of its resident threads) each taking ~1.3e5 steps in a row. From
_blocked_cuda.MIN_ORDER columns (its by_block, the rule the factorizations follow) a
block takes W right-hand sides of one matrix instead; the grid covers batch x groups.

The split. W is a power of two, GROUP (32) at most and no more than the right-hand sides
need; it is halved, down to MIN_GROUP (8), while batch * groups would leave an SM with
fewer than BLOCKS_PER_SM blocks (SMs as kernel/cuda.context_sm_count counts them: 2
under the simulator). A block's threads are (row lane, column) pairs, the column
fastest (_lanes): on the left side neighbouring threads read and write neighbouring
memory (the right side's vectors are rows, n apart). 512 right-hand sides of one 512 x
512 matrix: 64 blocks of 8 columns x 32 row lanes (256 threads) instead of 512 threads.

Inside a block, a right-looking substitution with one barrier per step: at step k (in
solve order, r_k = k forward, n - 1 - k backward) every later row r does
x[r] -= T[r, r_k] * (x[r_k] / T[r_k, r_k]), each thread recomputing the quotient from
the undivided x[r_k] (unit-diagonal triangles skip the division), the rows spread over
the row lanes afresh each step; row lane 0 divides the row finished one step earlier
(nobody reads it any more) and at the last step the last row too. Forward substitution
subtracts in trsm_vec's order; backward substitution in the reverse order (results differ
by rounding). Partial sums live in x in the data's dtype: trsm_vec accumulates float32
solves in float64 (its alpha is a float64), so float32 results differ from it by
float32 rounding (lu_inverse_col already accumulates in the dtype).

inverse: one launch, a block per (matrix, group of columns): each thread finds where the
pivots' swaps take the one of e_c (O(n) reads of the pivots, no writes: lu_inverse_col
swaps a whole column) and writes its entries of P e_c; a barrier; the unit-lower solve
with L, then the solve with U (a substitution's last barrier follows its last write).

Under the simulator blocks have at most SIM_THREADS threads (each is a Python thread,
and every barrier a polling round: a block solve of order n costs n of them per item,
where the thread kernels had none). The constants are module globals read at each call,
so tests can change them.
"""

from __future__ import annotations

from typing import Any

from ...kernel import device_function
from ...kernel.launch import cuda, gpu_kernel  # cuda: numba.cuda once built
from ._kernels import tri_at

THREADS = 256  # threads of a block at most on a GPU
SIM_THREADS = 32  # the same under the simulator, where every thread is a Python thread
GROUP = 32  # right-hand sides of a block at most (a warp's columns on the left side)
MIN_GROUP = 8  # the fewest while the SMs lack blocks (fewer: short coalesced runs)
BLOCKS_PER_SM = 2  # groups are narrowed until batch * groups gives each SM this many


def _pow2(n: int) -> int:
    """The power of two >= n (n >= 1)."""
    return 1 << (n - 1).bit_length()


def group_size(ctx: Any, op: str, batch: int, nvec: int) -> int:
    """W, the right-hand sides of a block: a power of two, at most GROUP and the power
    of two >= nvec, halved down to MIN_GROUP while batch * groups < BLOCKS_PER_SM * SMs."""
    from nnvmpy.kernel.cuda import context_sm_count

    w = min(GROUP, _pow2(nvec))
    target = BLOCKS_PER_SM * context_sm_count(ctx, op)
    while w > MIN_GROUP and batch * -(-nvec // w) < target:
        w //= 2
    return w


def block_threads(w: int, n: int) -> int:
    """blockDim.x for groups of w right-hand sides of order n: w times the power of two
    >= n row lanes, at most THREADS (SIM_THREADS under the simulator), at least w."""
    from nnvmpy.kernel.cuda import simulated

    limit = SIM_THREADS if simulated() else THREADS
    return max(w, min(limit, w * _pow2(n)))


# -- a block's threads ------------------------------------------------------------------------


@device_function
def _lanes(w):
    """(row, col, rows): the thread's row lane and column in a block of (row lane, column)
    pairs over w columns, the column fastest, and the block's count of row lanes."""
    tid = cuda.threadIdx.x
    row = tid // w
    return row, tid - row * w, cuda.blockDim.x // w


@device_function
def _item(i, groups, w, col):
    """(z, j): item i's matrix (groups items a matrix) and the thread's column of it, j
    (may be past the last: the caller checks)."""
    z = i // groups
    return z, (i - z * groups) * w + col


# -- the substitution -------------------------------------------------------------------------


@device_function
def _substitute(x, xb, xs, t, tb, n, lower, transposed, unit, ok, row, rows):
    """x <- N^-1 x for the thread's column (entry r at x[xb + r * xs]; ok: the column
    exists), N the triangle of the n x n matrix at t[tb] (transposed when `transposed`),
    lower or upper, unit-diagonal when `unit`. Every thread of the block calls it: a
    barrier per step, the last one after every write."""
    for k in range(n):
        rk = k if lower else n - 1 - k
        if ok:
            if k + 1 + row < n:  # rows beyond k for this lane: the last step has none
                v = x[xb + rk * xs]
                if not unit:
                    v = v / tri_at(t, tb, n, rk, rk, transposed)
                for m in range(k + 1 + row, n, rows):
                    r = m if lower else n - 1 - m
                    x[xb + r * xs] -= tri_at(t, tb, n, r, rk, transposed) * v
            if row == 0 and not unit:
                if k > 0:  # the row finished at step k - 1: read by no one now
                    rp = rk - 1 if lower else rk + 1
                    x[xb + rp * xs] = x[xb + rp * xs] / tri_at(t, tb, n, rp, rp, transposed)
                if k == n - 1:  # the last row: nobody loads it at the last step
                    x[xb + rk * xs] = x[xb + rk * xs] / tri_at(t, tb, n, rk, rk, transposed)
        cuda.syncthreads()


# -- trsm -------------------------------------------------------------------------------------


@gpu_kernel
def _trsm_block_cuda(items, n, x, b, t, nvec, groups, w, right, lower, transposed, alpha):
    # item i = (matrix z, group g): x = N^-1 (alpha b) for vectors g*w .. g*w + w - 1 of z
    row, col, rows = _lanes(w)
    for i in range(cuda.blockIdx.x, items, cuda.gridDim.x):
        z, j = _item(i, groups, w, col)
        ok = j < nvec
        if right:
            xb = (z * nvec + j) * n
            xs = 1
        else:
            xb = z * n * nvec + j
            xs = nvec
        if ok:
            for r in range(row, n, rows):  # x may be b: each entry read, then written
                x[xb + r * xs] = alpha * b[xb + r * xs]
        cuda.syncthreads()
        _substitute(x, xb, xs, t, z * n * n, n, lower, transposed, False, ok, row, rows)


def trsm_blocks(
    ctx: Any, op: str, batch: int, n: int, nvec: int, x: Any, b: Any, t: Any, right: bool,
    lower: bool, transposed: bool, alpha: float,
) -> None:  # fmt: skip
    """trsm_vec's solves (same arguments: lower = the solved triangle's type, after
    `transposed`; x may be b), a block per (matrix, group of right-hand sides)."""
    from nnvmpy.kernel.cuda import launch_blocks

    w = group_size(ctx, op, batch, nvec)
    groups = -(-nvec // w)
    items = batch * groups  # a block each
    args = (items, n, x, b, t, nvec, groups, w, bool(right), bool(lower), bool(transposed),
            float(alpha))  # fmt: skip
    launch_blocks(ctx, op, _trsm_block_cuda, items, block_threads(w, n), args)


# -- inverse from an LU -----------------------------------------------------------------------


@gpu_kernel
def _lu_inverse_block_cuda(items, n, out, lu, piv, groups, w):
    # item i = (matrix z, group g): columns g*w .. g*w + w - 1 of A^-1 = U^-1 L^-1 P
    row, col, rows = _lanes(w)
    for i in range(cuda.blockIdx.x, items, cuda.gridDim.x):
        z, c = _item(i, groups, w, col)
        ok = c < n
        xb = z * n * n + c
        if ok:
            pos = c  # where lu_inverse_col's swaps take the one of e_c
            for j in range(n):
                p = int(piv[z * n + j])
                if pos == j:
                    pos = p
                elif pos == p:
                    pos = j
            for r in range(row, n, rows):
                out[xb + r * n] = 1.0 if r == pos else 0.0
        cuda.syncthreads()
        _substitute(out, xb, n, lu, z * n * n, n, True, False, True, ok, row, rows)
        _substitute(out, xb, n, lu, z * n * n, n, False, False, False, ok, row, rows)


def lu_inverse_blocks(ctx: Any, op: str, batch: int, n: int, out: Any, lu: Any, piv: Any) -> None:
    """lu_inverse_col's A^-1 from the LU factors and pivots (inverse.py), a block per
    (matrix, group of columns)."""
    from nnvmpy.kernel.cuda import launch_blocks

    w = group_size(ctx, op, batch, n)
    groups = -(-n // w)
    items = batch * groups  # a block each
    args = (items, n, out, lu, piv, groups, w)
    launch_blocks(ctx, op, _lu_inverse_block_cuda, items, block_threads(w, n), args)


__all__ = [
    "BLOCKS_PER_SM",
    "GROUP",
    "MIN_GROUP",
    "SIM_THREADS",
    "THREADS",
    "block_threads",
    "group_size",
    "lu_inverse_blocks",
    "trsm_blocks",
]
