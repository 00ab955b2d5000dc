"""gelqf and syevd on a GPU with a thread block per matrix, where a thread per matrix
(factor.py's gelqf_mat / syevd_mat) leaves the device idle.

Why. factor.py's kernels are one thread per matrix, serial over the whole factorization:
a single 512 x 512 syevd is one thread doing sweeps of O(n^3) rotations (seconds to
minutes on an H200), while 131 SMs wait. Here each matrix takes a block:

- gelqf (Householder LQ): for each row i the norm of its tail is a block-wide shared-memory
  sum; every thread works out the reflector (beta = -copysign(...), tau, as gelqf_mat
  does); the rows below are updated `g` lanes a row (_lanes: a warp each where the rows
  are many, more lanes where they are few), each row's dot product with the reflector a
  tree over its lanes. Q is formed backwards from the reflectors the same way.
- syevd (Jacobi): the rotations of a sweep are taken in round-robin order (the circle
  method, _pair): each of the n - 1 rounds (n rounded up to even) has n/2 pairs (p, q)
  that share no index, so their parameters come from the matrix as the round found it,
  exactly as one after another would see them. Per round: the pairs' (cos, sin) go to
  float64 scratch, then W J (columns p, q of every row), then J^T W and J^T U (rows p and
  q), with a barrier between. This parallel order is as convergent as the cyclic one
  (Brent-Luk); the convergence test (off-diagonal energy <= tol * total, at each sweep's
  start), max_sweeps, the ascending order (syevd_mat's selection sort, first smallest:
  one thread, O(n^2) compares, next to the sweeps' O(n^3)) and the sign of each row
  (its first entry of largest magnitude positive) are syevd_mat's.

The rotation order differs from syevd_mat's, and gelqf's sums are trees: results agree
with the thread-per-matrix kernels and with LAPACK to rounding, not bit for bit.

Which path (by_block): a block per matrix on a GPU for matrices of MIN_SIZE columns or
more while the batch is under MATRICES_PER_SM per SM (below that many matrices a thread
per matrix cannot give an SM its 2048 resident threads); else a thread per matrix. The
constants are module globals read at each call, so tests can force either path.

A single big matrix is one SM's work: its sweeps are bound by that SM's bandwidth to L2
(a 512 x 512 float64 syevd is about 0.3 s, not minutes); spreading one matrix over the
whole device would take a launch per round.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...kernel import device_function, scratch
from ...kernel.launch import cuda, gpu_kernel  # cuda: numba.cuda once built
from ...kernel.launch import is_gpu as _on_gpu  # not `is_gpu`: tests patch that name
from ..nn._block_rows import block_sum

SHARED = 256  # float64 slots of a block's shared tree: the most threads a block may have
THREADS = 256  # threads of a block at most on a GPU (a power of two, <= SHARED)
SIM_THREADS = 32  # the same under the simulator, where every thread is a Python thread
LANES = 32  # a row of gelqf's update takes a warp at least (coalesced reads of the row)
SIM_LANES = 4  # the same under the simulator (fewer barriers per row)
MIN_SIZE = 8  # matrices with fewer columns keep a thread each: a block would mostly idle
MATRICES_PER_SM = 2048  # from this many matrices per SM a thread per matrix fills the GPU


# --- gelqf -----------------------------------------------------------------------------------


@device_function
def _lanes(nt, rows, cols, min_lanes):
    """Threads per row of a row update: as few as let a pass cover every row (at least
    min_lanes), and no more than cols needs (a power of two)."""
    g = nt
    while g > min_lanes and g * rows > nt:
        g //= 2
    while g > 1 and g // 2 >= cols:
        g //= 2
    return g


@device_function
def _reflect_rows(sh, q, qb, n, i, m, t, formed, tid, nt, min_lanes):
    """Rows i+1 .. m-1 of the matrix at qb: x <- x - w v, w = t (x . v), v = (1, row i's
    tail); `formed` (forming Q): x_i is 0 in the dot product and becomes -w."""
    g = _lanes(nt, m - i - 1, n - i - 1, min_lanes)
    slot = tid // g
    lane = tid - slot * g
    v = qb + i * n
    for r0 in range(i + 1, m, nt // g):
        r = r0 + slot
        row = qb + r * n
        s = 0.0
        if r < m:
            if lane == 0 and not formed:
                s = q[row + i]
            for c in range(i + 1 + lane, n, g):
                s += q[row + c] * q[v + c]
        sh[tid] = s
        cuda.syncthreads()
        step = g // 2
        while step > 0:
            if lane < step:
                sh[tid] += sh[tid + step]
            cuda.syncthreads()
            step //= 2
        if r < m:
            w = sh[tid - lane] * t
            for c in range(i + 1 + lane, n, g):
                q[row + c] -= w * q[v + c]
            if lane == 0:
                q[row + i] = -w if formed else q[row + i] - w
        cuda.syncthreads()  # sh is read before the next pass writes it


@gpu_kernel
def _gelqf_block_cuda(batch, q, lo, a, tau, m, n, min_lanes):
    # a block per m x n matrix z: gelqf_mat's Householder LQ, Q into q, L into lo
    tid, nt = cuda.threadIdx.x, cuda.blockDim.x
    sh = cuda.shared.array(SHARED, np.float64)
    for z in range(cuda.blockIdx.x, batch, cuda.gridDim.x):
        qb = z * m * n
        for e in range(tid, m * n, nt):
            q[qb + e] = a[qb + e]
        cuda.syncthreads()
        for i in range(m):  # reflect row i onto beta e_i; v (v_i = 1) stays in the row
            row = qb + i * n
            alpha = q[row + i]
            s = 0.0
            for c in range(i + 1 + tid, n, nt):
                s += q[row + c] * q[row + c]
            xnorm2 = block_sum(sh, tid, nt, s)
            t = 0.0
            if xnorm2 > 0.0:
                beta = -math.copysign(math.sqrt(alpha * alpha + xnorm2), alpha)
                t = (beta - alpha) / beta
                f = 1.0 / (alpha - beta)
                for c in range(i + 1 + tid, n, nt):
                    q[row + c] *= f
                if tid == 0:
                    q[row + i] = beta
            if tid == 0:
                tau[z * m + i] = t
            cuda.syncthreads()
            if t != 0.0:
                _reflect_rows(sh, q, qb, n, i, m, t, False, tid, nt, min_lanes)
        for e in range(tid, m * m, nt):
            r = e // m
            c = e - r * m
            lo[z * m * m + e] = q[qb + r * n + c] if c <= r else 0.0
        cuda.syncthreads()
        for i in range(m - 1, -1, -1):  # Q = H_{m-1} ... H_0 restricted to m rows
            tq = tau[z * m + i]
            _reflect_rows(sh, q, qb, n, i, m, tq, True, tid, nt, min_lanes)
            row = qb + i * n
            for c in range(tid, n, nt):
                if c > i:
                    q[row + c] *= -tq
                elif c == i:
                    q[row + c] = 1.0 - tq
                else:
                    q[row + c] = 0.0
            cuda.syncthreads()


# --- syevd -----------------------------------------------------------------------------------


@device_function
def _pair(rnd, j, size):
    """Pair j (p < q) of round rnd among `size` (even) indices: index 0 stays, the others
    turn (the circle method); every pair once in size - 1 rounds."""
    m1 = size - 1
    a = 0 if j == 0 else 1 + (j - 1 + rnd) % m1
    b = 1 + (size - 2 - j + rnd) % m1
    return (a, b) if a < b else (b, a)


@device_function
def _rotations(w, rot, base, rb, n, half, size, rnd, tid, nt):
    """(cos, sin) of round rnd's rotations into rot; cos 0: no rotation (a pair with the
    padding index, or one already zero, which syevd_mat skips too)."""
    for j in range(tid, half, nt):
        p, q = _pair(rnd, j, size)
        cs = 0.0
        sn = 0.0
        if q < n:
            apq = w[base + p * n + q]
            if apq != 0.0:
                theta = (w[base + q * n + q] - w[base + p * n + p]) / (2.0 * apq)
                t = 1.0 / (abs(theta) + math.sqrt(theta * theta + 1.0))
                if theta < 0.0:
                    t = -t
                cs = 1.0 / math.sqrt(t * t + 1.0)
                sn = t * cs
        rot[rb + 2 * j] = cs
        rot[rb + 2 * j + 1] = sn


@device_function
def _rotate_columns(w, rot, base, rb, n, half, size, rnd, tid, nt):
    """W J: columns p and q of every row, for each pair; a warp on neighbouring pairs."""
    for e in range(tid, n * half, nt):
        k = e // half
        j = e - k * half
        sn = rot[rb + 2 * j + 1]
        if sn != 0.0:
            p, q = _pair(rnd, j, size)
            cs = rot[rb + 2 * j]
            x = w[base + k * n + p]
            y = w[base + k * n + q]
            w[base + k * n + p] = cs * x - sn * y
            w[base + k * n + q] = sn * x + cs * y


@device_function
def _rotate_rows(w, u, rot, base, rb, n, half, size, rnd, tid, nt):
    """J^T W and J^T U: rows p and q, a thread per column; W's (p, q) and (q, p) become 0."""
    for e in range(tid, half * n, nt):
        j = e // n
        k = e - j * n
        cs = rot[rb + 2 * j]
        if cs != 0.0:
            p, q = _pair(rnd, j, size)
            sn = rot[rb + 2 * j + 1]
            if sn != 0.0:
                x = w[base + p * n + k]
                y = w[base + q * n + k]
                w[base + p * n + k] = cs * x - sn * y
                w[base + q * n + k] = sn * x + cs * y
                x = u[base + p * n + k]
                y = u[base + q * n + k]
                u[base + p * n + k] = cs * x - sn * y
                u[base + q * n + k] = sn * x + cs * y
            if k == q:
                w[base + p * n + q] = 0.0
            elif k == p:
                w[base + q * n + p] = 0.0


@device_function
def _order(u, lam, w, rot, base, rb, ln, n, tid, nt):
    """lam = W's diagonal, ascending (syevd_mat's selection sort: one thread), U's rows
    with it, each signed so that its first entry of largest magnitude is positive; W is
    the scratch of the reordering."""
    for k in range(tid, n, nt):
        lam[ln + k] = w[base + k * n + k]
    cuda.syncthreads()
    if tid == 0:
        for k in range(n):
            rot[rb + k] = k  # row k of the result is row rot[k] of U
        for i in range(n - 1):
            best = i
            for j in range(i + 1, n):
                if lam[ln + j] < lam[ln + best]:
                    best = j
            if best != i:
                v = lam[ln + i]
                lam[ln + i] = lam[ln + best]
                lam[ln + best] = v
                v = rot[rb + i]
                rot[rb + i] = rot[rb + best]
                rot[rb + best] = v
    cuda.syncthreads()
    for i in range(tid, n, nt):  # rot[i] = +-(source row + 1), negative: negate the row
        src = int(rot[rb + i])
        row = base + src * n
        best = 0
        biggest = abs(u[row])
        for k in range(1, n):
            if abs(u[row + k]) > biggest:
                biggest = abs(u[row + k])
                best = k
        rot[rb + i] = -(src + 1.0) if u[row + best] < 0.0 else src + 1.0
    cuda.syncthreads()
    for e in range(tid, n * n, nt):
        i = e // n
        code = rot[rb + i]
        v = u[base + (int(abs(code)) - 1) * n + (e - i * n)]
        w[base + e] = -v if code < 0.0 else v
    cuda.syncthreads()
    for e in range(tid, n * n, nt):
        u[base + e] = w[base + e]
    cuda.syncthreads()


@gpu_kernel
def _syevd_block_cuda(batch, u, lam, a, w, rot, n, tol, max_sweeps):
    # a block per n x n matrix z (lower triangle of a): Jacobi in round-robin order, the
    # eigenvectors into u's rows, the eigenvalues into lam; w and rot (2 * ceil(n / 2)
    # float64 a matrix) are scratch
    tid, nt = cuda.threadIdx.x, cuda.blockDim.x
    sh = cuda.shared.array(SHARED, np.float64)
    half = (n + 1) // 2
    size = 2 * half  # n, and a padding index when n is odd
    for z in range(cuda.blockIdx.x, batch, cuda.gridDim.x):
        base = z * n * n
        rb = z * size
        for e in range(tid, n * n, nt):
            r = e // n
            c = e - r * n
            if c <= r:
                v = a[base + e]
                w[base + e] = v
                w[base + c * n + r] = v
        cuda.syncthreads()  # a is read before u (which may be a) is written
        for e in range(tid, n * n, nt):
            u[base + e] = 1.0 if e // n == e % n else 0.0
        for _ in range(max_sweeps):
            off = 0.0
            total = 0.0
            for e in range(tid, n * n, nt):
                v = w[base + e]
                total += v * v
                if e // n != e % n:
                    off += v * v
            off = block_sum(sh, tid, nt, off)
            total = block_sum(sh, tid, nt, total)
            if off <= tol * total:
                break
            for rnd in range(size - 1):
                _rotations(w, rot, base, rb, n, half, size, rnd, tid, nt)
                cuda.syncthreads()
                _rotate_columns(w, rot, base, rb, n, half, size, rnd, tid, nt)
                cuda.syncthreads()
                _rotate_rows(w, u, rot, base, rb, n, half, size, rnd, tid, nt)
                cuda.syncthreads()
        _order(u, lam, w, rot, base, rb, z * n, n, tid, nt)


# --- the rule and the launches ---------------------------------------------------------------


def by_block(ctx: Any, name: str, batch: int, n: int) -> bool:
    """Whether `batch` matrices of n columns take a block each on ctx's device: a GPU,
    n >= MIN_SIZE, and fewer than MATRICES_PER_SM matrices per SM."""
    if not _on_gpu(ctx) or n < MIN_SIZE:
        return False
    from nnvmpy.kernel.cuda import context_sm_count

    return batch < MATRICES_PER_SM * context_sm_count(ctx, name)


def block_threads(items: int) -> int:
    """Threads of a block whose steps have `items` work items: a power of two from 32 up
    to THREADS (SIM_THREADS under the simulator)."""
    from nnvmpy.kernel.cuda import simulated

    limit = SIM_THREADS if simulated() else THREADS
    return min(limit, max(32, 1 << (items - 1).bit_length()))


def gelqf_gpu(
    ctx: Any, name: str, q: Any, lo: Any, a: Any, tau: Any, batch: int, m: int, n: int
) -> bool:
    """Q into q and L into lo for `batch` m x n matrices a (tau: (batch, m) scratch), a
    block each; False (nothing launched) where by_block says a thread per matrix."""
    if not by_block(ctx, name, batch, n):
        return False
    from nnvmpy.kernel.cuda import launch_blocks, simulated

    lanes = SIM_LANES if simulated() else LANES
    args = (batch, q, lo, a, tau, m, n, lanes)
    launch_blocks(ctx, name, _gelqf_block_cuda, batch, block_threads(m * n), args)
    return True


def syevd_gpu(
    ctx: Any, name: str, u: Any, lam: Any, a: Any, w: Any, batch: int, n: int, tol: float,
    max_sweeps: int,
) -> bool:  # fmt: skip
    """Eigenvectors into u's rows and ascending eigenvalues into lam for `batch` n x n
    matrices a (lower triangles; w: a's shape, scratch), a block each; False (nothing
    launched) where by_block says a thread per matrix."""
    if not by_block(ctx, name, batch, n):
        return False
    from nnvmpy.kernel.cuda import launch_blocks

    half = (n + 1) // 2
    rot = scratch.empty(ctx, batch * 2 * half, np.float64)
    args = (batch, u, lam, a, w, rot, n, float(tol), int(max_sweeps))
    launch_blocks(ctx, name, _syevd_block_cuda, batch, block_threads(n * half), args)
    return True


__all__ = ["by_block", "gelqf_gpu", "syevd_gpu"]
