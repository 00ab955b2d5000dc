"""LRN's CPU kernels: a task is one sample's span of positions, each step a vector loop.

lrn.py's one-body loops (which the GPU runs: a thread per position, coalesced across
threads) give an item one position, so on the CPU each channel's value is `inner` elements
from the next and every power is a libm call: (16, 64, 56, 56) float32 took 34 ms, 11x
MXNet's 3.0. Here a task takes SPAN consecutive positions of one sample and, per channel,
sums the window's squares row by row (float64 sums of the float32 squares, as lrn.py),
then takes t^(-beta) as exp(-beta log t) through vmath: float32 vector code, libm for
float64. The formulas are lrn.py's (its module docstring); float32 results are within a
few ulps of its float64 power.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ... import kernel
from ...kernel import vmath
from ...kernel.launch import ADD, WRITE
from ._uindex import u as _u

v_exp, v_log = vmath.exp, vmath.log

#: positions per task: a window's rows (nsize x SPAN values) stay in L1
SPAN = 256


@kernel.device_function
def _put(dst, start, src, m, mode):
    """dst[start : start + m] = src[:m] (WRITE) or += (ADD); NULL leaves dst alone."""
    if mode == WRITE:
        for i in range(m):
            dst[_u(start + i)] = src[_u(i)]
    elif mode == ADD:
        for i in range(m):
            dst[_u(start + i)] += src[_u(i)]


@kernel.device_function
def _window_squares(s, x, base, lo, hi, inner, m):
    """s[:m] = sum over channels lo..hi-1 of x^2 at the task's positions (float64)."""
    for i in range(m):
        s[_u(i)] = 0.0
    for w in range(lo, hi):
        row = base + w * inner
        for i in range(m):
            v = x[_u(row + i)]
            s[_u(i)] += np.float64(v * v)


@kernel.cpu_kernel
def _lrn_forward(out, tmp, x, n_img, C, inner, nsize, salpha, knorm, nb, m_out, m_tmp):
    # nb: -beta in x's dtype (float32 keeps the power in float32 vector code)
    spans = (inner + SPAN - 1) // SPAN
    h = nsize // 2
    for task in prange(n_img * spans):
        n = task // spans
        p0 = (task - n * spans) * SPAN
        m = min(SPAN, inner - p0)
        base = n * C * inner + p0
        s = np.empty(m, np.float64)
        t = np.empty(m, x.dtype)
        y = np.empty(m, x.dtype)
        for c in range(C):
            _window_squares(s, x, base, max(c - h, 0), min(c - h + nsize, C), inner, m)
            j = base + c * inner
            for i in range(m):
                t[_u(i)] = knorm + salpha * s[_u(i)]
            for i in range(m):
                y[_u(i)] = x[_u(j + i)] * v_exp(nb * v_log(t[_u(i)]))
            _put(tmp, j, t, m, m_tmp)
            _put(out, j, y, m, m_out)


@kernel.cpu_kernel
def _lrn_backward(dx, dy, x, tmp, n_img, C, inner, nsize, salpha, nb, mode):
    # q_c = dy_c x_c t_c^(-beta-1) for every channel of the span first, then
    # dx_c = dy_c t_c^(-beta) - 2 beta salpha x_c sum of q over the windows holding c
    spans = (inner + SPAN - 1) // SPAN
    h = nsize // 2
    scale = -2.0 * np.float64(nb) * salpha
    for task in prange(n_img * spans):
        n = task // spans
        p0 = (task - n * spans) * SPAN
        m = min(SPAN, inner - p0)
        base = n * C * inner + p0
        q = np.empty(C * m, x.dtype)
        p = np.empty(C * m, x.dtype)  # t^(-beta)
        s = np.empty(m, np.float64)
        g = np.empty(m, x.dtype)
        for c in range(C):
            j = base + c * inner
            k = c * m
            for i in range(m):
                tv = tmp[_u(j + i)]
                pv = v_exp(nb * v_log(tv))
                p[_u(k + i)] = pv
                q[_u(k + i)] = dy[_u(j + i)] * x[_u(j + i)] * (pv / tv)
        for c in range(C):  # c is in W(w) for w in [c + h - nsize + 1, c + h]
            for i in range(m):
                s[_u(i)] = 0.0
            for w in range(max(c + h - nsize + 1, 0), min(c + h + 1, C)):
                k = w * m
                for i in range(m):
                    s[_u(i)] += q[_u(k + i)]
            j = base + c * inner
            k = c * m
            for i in range(m):
                g[_u(i)] = dy[_u(j + i)] * p[_u(k + i)] - scale * x[_u(j + i)] * s[_u(i)]
            _put(dx, j, g, m, mode)


def forward(out, tmp, x, C: int, inner: int, p, m_out: int, m_tmp: int) -> None:
    """LRN forward over flat C-contiguous arrays (lrn.py's _forward, on the CPU)."""
    n_img = x.size // (C * inner)
    nb = x.dtype.type(-p.beta)
    args = (n_img, C, inner, p.nsize, p.alpha / p.nsize, p.knorm, nb)
    _lrn_forward(out, tmp, x, *args, m_out, m_tmp)


def backward(dx, dy, x, tmp, C: int, inner: int, p, mode: int) -> None:
    """LRN backward over flat C-contiguous arrays (lrn.py's _backward, on the CPU)."""
    n_img = x.size // (C * inner)
    nb = x.dtype.type(-p.beta)
    _lrn_backward(dx, dy, x, tmp, n_img, C, inner, p.nsize, p.alpha / p.nsize, nb, mode)
