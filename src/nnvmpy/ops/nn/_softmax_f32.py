"""softmax and log_softmax of contiguous float32 rows on the CPU, vectorised.

softmax.py's row loop computes in float64 with libm's exp, one call per element, and sums
in row order, a chain of dependent adds: 5.5 ns an element, 10x MXNet's time on
(4096, 1000). A row along the last axis, float32 in and out and written (not added), takes
this loop instead:

    m = max_j x_j t                      float32, 8 interleaved partial maxima
    e_j = exp(x_j t - m)                 vmath's float32 exp (1.5 ulp), kept in out
    s = sum_j e_j                        float64, 8 interleaved partial sums
    softmax_j = e_j / s,  log_softmax_j = (x_j t - m) - log s    rounded once to float32

(t = 1 / temperature.) Each step is a loop LLVM vectorises. A result is within a few
float32 ulps of the float64 path's; NaN, inf and all -inf rows give NaN rows as there.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ... import kernel
from ...kernel import vmath
from ...kernel.launch import run_rows
from ...kernel.launch import uindex as uidx

v_exp = vmath.exp


@kernel.device_function
def _row_max(x, base, n, t):
    """max of x[base : base + n] * t (n >= 1), as 8 partial maxima (a vector register)."""
    m0 = m1 = m2 = m3 = m4 = m5 = m6 = m7 = x[uidx(base)] * t
    k = 0
    while k + 8 <= n:
        j = base + k
        v0, v1 = x[uidx(j)] * t, x[uidx(j + 1)] * t
        v2, v3 = x[uidx(j + 2)] * t, x[uidx(j + 3)] * t
        v4, v5 = x[uidx(j + 4)] * t, x[uidx(j + 5)] * t
        v6, v7 = x[uidx(j + 6)] * t, x[uidx(j + 7)] * t
        m0, m1, m2, m3 = max(m0, v0), max(m1, v1), max(m2, v2), max(m3, v3)
        m4, m5, m6, m7 = max(m4, v4), max(m5, v5), max(m6, v6), max(m7, v7)
        k += 8
    m = max(max(max(m0, m1), max(m2, m3)), max(max(m4, m5), max(m6, m7)))
    for j in range(base + k, base + n):
        m = max(m, x[uidx(j)] * t)
    return m


@kernel.device_function
def _row_sum(a, base, n):
    """sum of a[base : base + n] in float64, as 8 interleaved partial sums."""
    s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = 0.0
    k = 0
    while k + 8 <= n:
        j = base + k
        s0, s1 = s0 + np.float64(a[uidx(j)]), s1 + np.float64(a[uidx(j + 1)])
        s2, s3 = s2 + np.float64(a[uidx(j + 2)]), s3 + np.float64(a[uidx(j + 3)])
        s4, s5 = s4 + np.float64(a[uidx(j + 4)]), s5 + np.float64(a[uidx(j + 5)])
        s6, s7 = s6 + np.float64(a[uidx(j + 6)]), s7 + np.float64(a[uidx(j + 7)])
        k += 8
    s = ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
    for j in range(base + k, base + n):
        s += np.float64(a[uidx(j)])
    return s


@kernel.device_function
def _row_dot(a, b, base, n):
    """sum of a[j] b[j] (each product in float32, as the general loop's) as _row_sum."""
    s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = 0.0
    k = 0
    while k + 8 <= n:
        j = base + k
        s0 += np.float64(a[uidx(j)] * b[uidx(j)])
        s1 += np.float64(a[uidx(j + 1)] * b[uidx(j + 1)])
        s2 += np.float64(a[uidx(j + 2)] * b[uidx(j + 2)])
        s3 += np.float64(a[uidx(j + 3)] * b[uidx(j + 3)])
        s4 += np.float64(a[uidx(j + 4)] * b[uidx(j + 4)])
        s5 += np.float64(a[uidx(j + 5)] * b[uidx(j + 5)])
        s6 += np.float64(a[uidx(j + 6)] * b[uidx(j + 6)])
        s7 += np.float64(a[uidx(j + 7)] * b[uidx(j + 7)])
        k += 8
    s = ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
    for j in range(base + k, base + n):
        s += np.float64(a[uidx(j)] * b[uidx(j)])
    return s


@kernel.parallel_for
def _softmax_row_f32(r, out, x, n, inv_t, log):
    # each pass reads x[j] before it writes out[j], so out may be x (in place)
    base = r * n
    t = np.float32(inv_t)  # x * t stays float32
    m = _row_max(x, base, n, t)
    if log:  # the exps go to a buffer: out may be x, whose values the last pass reads
        e = np.empty(n, np.float32)
        for k in range(n):
            e[uidx(k)] = v_exp(x[uidx(base + k)] * t - m)
        log_s = math.log(_row_sum(e, 0, n))
        for j in range(base, base + n):
            out[uidx(j)] = np.float64(x[uidx(j)] * t - m) - log_s
        return
    for j in range(base, base + n):
        out[uidx(j)] = v_exp(x[uidx(j)] * t - m)
    inv_s = 1.0 / _row_sum(out, base, n)
    for j in range(base, base + n):
        out[uidx(j)] = np.float64(out[uidx(j)]) * inv_s


@kernel.parallel_for
def _softmax_grad_row_f32(r, dx, dy, y, n, inv_t, log):
    # softmax: dx = t y (dy - sum dy y); log_softmax: dx = t (dy - e^y sum dy), as the
    # general loop (e^y here vmath's float32 exp); sums first, so dx may be dy
    base = r * n
    if log:
        s = _row_sum(dy, base, n)
        for j in range(base, base + n):
            dx[uidx(j)] = inv_t * (np.float64(dy[uidx(j)]) - np.float64(v_exp(y[uidx(j)])) * s)
        return
    s = _row_dot(dy, y, base, n)
    for j in range(base, base + n):
        dx[uidx(j)] = inv_t * np.float64(y[uidx(j)]) * (np.float64(dy[uidx(j)]) - s)


def softmax_grad_rows_f32(
    ctx: Any, name: str, dx: Any, dy: Any, y: Any, rows: int, n: int, inv_t: float, log: bool
) -> None:
    """dx from dy and y = (log_)softmax(x * inv_t), rows as in softmax_rows_f32."""
    run_rows(ctx, name, _softmax_grad_row_f32, rows, dx, dy, y, n, float(inv_t), log)


def softmax_rows_f32(
    ctx: Any, name: str, out: Any, x: Any, rows: int, n: int, inv_t: float, log: bool
) -> None:
    """out = (log_)softmax(x * inv_t) over rows of n contiguous float32 elements (CPU)."""
    run_rows(ctx, name, _softmax_row_f32, rows, out, x, n, float(inv_t), log)
