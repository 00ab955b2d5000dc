"""The softmax family's GPU rows: a thread block per row near the last axis.

With a short stride between rows (inner < 32: the last axis, or nearly), threads next to
each other in softmax.py's row loops are a row apart and read uncoalesced, and a (64, 1000)
softmax is 64 threads. There one block takes each row (_block_rows.py): its threads
stride the row by blockDim.x (neighbours read neighbours for inner == 1), and
shared-memory trees combine what they found.

Forward, two passes over the row instead of three (max; sum of exp, kept in out; out
scaled): the first carries each thread's running max m and sum s of exp(v - m) together,
rescaling s when a new max comes (Milakov and Gimelshein's online softmax); the block then
takes the largest m and the sum of each thread's s * exp(m_t - m); the second pass writes
every element from x. That reads x twice and writes out once, where three passes read x
twice and out once and wrote out twice. Backward stays two passes (sum(dy * y); dx).

Loads in flight. A thread's loop waits on each load before its next one, and a row's
work is a few loads per thread (1000 / 128), so each pass takes four elements a stride
apart, loads all four and only then uses them (as the element-wise loops, kernel/
cuda_loop.py). Each thread still combines its elements in row order.

Special values are those of the row loops: a NaN anywhere makes the row NaN (it reaches
the sum), an infinite max gives NaN (inf - inf), and a row of -inf is NaN.
"""

from __future__ import annotations

import math

import numpy as np

from ... import kernel
from ...kernel.launch import ADD, cuda, gpu_kernel, uindex  # cuda: numba.cuda once built
from ._block_rows import BLOCK, block_max, block_sum


@kernel.device_function
def store_rounded(out, j, mode, v, half):
    """out[j] = v (WRITE) or out[j] + v (ADD, the sum in float64), rounded as the CPU does:
    to float32 first for a float16 out (`half`), where the CPU has float32 copies."""
    if mode == ADD:
        v = np.float64(out[j]) + v
    if half:
        out[j] = np.float32(v)
    else:
        out[j] = v


@kernel.device_function
def row_start(r, n, inner, length, use_len):
    """(flat index of row r's first element, elements of the row to use)."""
    o = r // inner
    return o * n * inner + (r - o * inner), length[r] if use_len else n


@kernel.device_function
def four(a, j, step):
    """a[j], a[j + step], a[j + 2 step], a[j + 3 step]: four loads issued together."""
    return a[uindex(j)], a[uindex(j + step)], a[uindex(j + 2 * step)], a[uindex(j + 3 * step)]


# --- forward -------------------------------------------------------------------------------


@kernel.device_function
def _online(m, s, v):
    """(m, s) after one more value v: the running max and the sum of exp(. - m).

    A new max rescales s; exp(v - v) rather than 1 keeps the NaN an infinite max gives in
    the two-pass form. v == m == -inf adds nothing (exp(nan) would): a row's -inf values
    count for nothing unless the whole row is -inf, which the second pass makes NaN."""
    if v > m:
        return v, s * math.exp(m - v) + math.exp(v - v)
    if m > -math.inf or v != v:  # v NaN: NaN reaches the sum
        return m, s + math.exp(v - m)
    return m, s


@kernel.device_function
def _softmax_put(out, j, xv, inv_t, m, inv_s, log_s, log, mode, half):
    """out[j] from x's value xv there, the row's max m and sum s = 1 / inv_s."""
    if mode == 1 and not log:
        e = math.exp(np.float64(xv) * inv_t - m)
        if half:  # rounded as the CPU's float32 copy is, then to float16
            out[j] = np.float32(np.float64(np.float32(e)) * inv_s)
        else:
            out[j] = e * inv_s
    else:
        v = (np.float64(xv) * inv_t - m) - log_s  # not x - (m + log_s): m may be large
        if not log:
            v = math.exp(v)
        store_rounded(out, j, mode, v, half)


@gpu_kernel
def _softmax_block_cuda(rows, out, x, n, inner, inv_t, log, mode, length, use_len, half):
    tid, nt = cuda.threadIdx.x, cuda.blockDim.x
    sh = cuda.shared.array(BLOCK, np.float64)
    step = nt * inner
    for r in range(cuda.blockIdx.x, rows, cuda.gridDim.x):
        base, m_n = row_start(r, n, inner, length, use_len)
        first = base + tid * inner
        m = -math.inf
        s = np.float64(0.0)
        k, j = tid, first
        while k + 3 * nt < m_n:  # four values a stride apart, all loaded before any is used
            x0, x1, x2, x3 = four(x, j, step)
            m, s = _online(m, s, np.float64(x0) * inv_t)
            m, s = _online(m, s, np.float64(x1) * inv_t)
            m, s = _online(m, s, np.float64(x2) * inv_t)
            m, s = _online(m, s, np.float64(x3) * inv_t)
            k += 4 * nt
            j += 4 * step
        while k < m_n:
            m, s = _online(m, s, np.float64(x[uindex(j)]) * inv_t)
            k += nt
            j += step
        row_max = block_max(sh, tid, nt, m)
        # a thread without elements adds 0 (0 * exp(-inf)); a row of -inf sums to NaN
        s = block_sum(sh, tid, nt, s * math.exp(m - row_max))
        if m_n > 0:
            inv_s, log_s = 1.0 / s, math.log(s)
            k, j = tid, first
            while k + 3 * nt < m_n:
                x0, x1, x2, x3 = four(x, j, step)
                _softmax_put(out, uindex(j), x0, inv_t, row_max, inv_s, log_s, log, mode, half)
                _softmax_put(out, uindex(j + step), x1, inv_t, row_max, inv_s, log_s, log,
                             mode, half)  # fmt: skip
                _softmax_put(out, uindex(j + 2 * step), x2, inv_t, row_max, inv_s, log_s, log,
                             mode, half)  # fmt: skip
                _softmax_put(out, uindex(j + 3 * step), x3, inv_t, row_max, inv_s, log_s, log,
                             mode, half)  # fmt: skip
                k += 4 * nt
                j += 4 * step
            while k < m_n:
                _softmax_put(out, uindex(j), x[uindex(j)], inv_t, row_max, inv_s, log_s, log,
                             mode, half)  # fmt: skip
                k += nt
                j += step
        if mode == 1:  # past the length: zero
            for k in range(m_n + tid, n, nt):
                out[uindex(base + k * inner)] = 0.0


# --- backward ------------------------------------------------------------------------------
# softmax:     dx_k = y_k (dy_k - sum_j dy_j y_j) / T
# log_softmax: dx_k = (dy_k - exp(y_k) sum_j dy_j) / T
# dy_j y_j and exp(y_k) in the arrays' precision, float32 for float16 ones (`half_in`).


@kernel.device_function
def grad_term(dyv, yv, log, half_in):
    """An element's term of the row sum from its dy and y: dy (log) or dy * y."""
    if log:
        return np.float64(dyv)
    if half_in:
        return np.float64(np.float32(dyv) * np.float32(yv))
    return np.float64(dyv * yv)


@kernel.device_function
def grad_put(dx, j, dyv, yv, inv_t, s, log, mode, half_in, half_out):
    """dx[j] from its dy and y and the row's sum s (see grad_term)."""
    if log:
        ey = np.float32(math.exp(np.float32(yv))) if half_in else math.exp(yv)
        v = inv_t * (np.float64(dyv) - np.float64(ey) * s)
    else:
        v = inv_t * np.float64(yv) * (np.float64(dyv) - s)
    store_rounded(dx, j, mode, v, half_out)


@gpu_kernel
def _softmax_grad_block_cuda(
    rows, dx, dy, y, n, inner, inv_t, log, mode, length, use_len, half_in, half_out
):
    tid, nt = cuda.threadIdx.x, cuda.blockDim.x
    sh = cuda.shared.array(BLOCK, np.float64)
    step = nt * inner
    for r in range(cuda.blockIdx.x, rows, cuda.gridDim.x):
        base, m_n = row_start(r, n, inner, length, use_len)
        first = base + tid * inner
        s = np.float64(0.0)
        k, j = tid, first
        while k + 3 * nt < m_n:  # as the forward: four of dy and y loaded, then summed
            d0, d1, d2, d3 = four(dy, j, step)
            y0, y1, y2, y3 = four(y, j, step)
            s += grad_term(d0, y0, log, half_in)
            s += grad_term(d1, y1, log, half_in)
            s += grad_term(d2, y2, log, half_in)
            s += grad_term(d3, y3, log, half_in)
            k += 4 * nt
            j += 4 * step
        while k < m_n:
            s += grad_term(dy[uindex(j)], y[uindex(j)], log, half_in)
            k += nt
            j += step
        s = block_sum(sh, tid, nt, s)
        k, j = tid, first
        while k + 3 * nt < m_n:  # all read before any dx is written: dx may be dy's memory
            d0, d1, d2, d3 = four(dy, j, step)
            y0, y1, y2, y3 = four(y, j, step)
            grad_put(dx, uindex(j), d0, y0, inv_t, s, log, mode, half_in, half_out)
            grad_put(dx, uindex(j + step), d1, y1, inv_t, s, log, mode, half_in, half_out)
            grad_put(dx, uindex(j + 2 * step), d2, y2, inv_t, s, log, mode, half_in, half_out)
            grad_put(dx, uindex(j + 3 * step), d3, y3, inv_t, s, log, mode, half_in, half_out)
            k += 4 * nt
            j += 4 * step
        while k < m_n:
            grad_put(dx, uindex(j), dy[uindex(j)], y[uindex(j)], inv_t, s, log, mode, half_in,
                     half_out)  # fmt: skip
            k += nt
            j += step
        if mode == 1:
            for k in range(m_n + tid, n, nt):
                dx[uindex(base + k * inner)] = 0.0


__all__ = ["grad_put", "grad_term", "row_start", "store_rounded"]
