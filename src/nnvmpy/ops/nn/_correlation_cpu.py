"""Correlation's forward on the CPU: shifted-row products of zero-padded copies.

correlation.py's one-body loop (an output element per item) serves the GPU; on the CPU
it walked the C channels of every output element one plane apart, with two bounds
checks per tap and a float64 sum, and ran 2-3x slower than MXNet. Here data1 and data2
are first copied into zero-padded planes (N, C, Hp, Wp), large enough that every tap
of every displacement lies inside (no bounds checks), and a task is one sample n and one
row ty of displacements (D of them, sharing the vertical offset): for each channel c,
window tap (h, w) and output row ti, the output rows of the D displacements add the
products of one row of data1 with D rows of data2 shifted by ox, contiguous when
stride1 is 1 (vector loops). The task's D*th*tw sums stay in cache, in out's dtype (as
MXNet sums), and reading each channel's two planes once serves D displacements.
Imported on the first CPU launch (it imports numba).
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ... import kernel
from ...kernel.cpu import cached_njit
from ._uindex import u as _u


@cached_njit(nogil=True, inline="always")
def _corr_rows(ap, bp, out, acc, geo, mult, add, r0, r1):  # pragma: no cover - numba
    # tasks r in [r0, r1), r = n*D + ty: out[n, ty*D + tx] for every tx (module doc)
    C, Hp, Wp, th, tw, D, radius, k, d, s1, s2 = geo
    plane = Hp * Wp
    per_t = th * tw
    norm = out.dtype.type(k * k * C)
    for r in range(r0, r1):
        n = r // D
        ty = r % D
        oy = (ty - radius) * s2
        for q in range(D * per_t):
            acc[q] = 0
        for c in range(C):
            base = (n * C + c) * plane
            for h in range(k):
                for w in range(k):
                    for ti in range(th):
                        ra = base + (ti * s1 + d + h) * Wp + d + w  # data1 at tj = 0
                        for tx in range(D):
                            rb = ra + oy * Wp + (tx - radius) * s2  # >= 0: d >= radius*s2
                            dst = tx * per_t + ti * tw
                            if s1 == 1:
                                if mult:
                                    for tj in range(tw):
                                        acc[_u(dst + tj)] += ap[_u(ra + tj)] * bp[_u(rb + tj)]
                                else:
                                    for tj in range(tw):
                                        acc[_u(dst + tj)] += abs(ap[_u(ra + tj)] - bp[_u(rb + tj)])
                            elif mult:
                                for tj in range(tw):
                                    acc[_u(dst + tj)] += ap[_u(ra + tj * s1)] * bp[_u(rb + tj * s1)]
                            else:
                                for tj in range(tw):
                                    acc[_u(dst + tj)] += abs(
                                        ap[_u(ra + tj * s1)] - bp[_u(rb + tj * s1)]
                                    )
        first = (n * D + ty) * D * per_t  # out[n, ty*D]
        if add:
            for q in range(D * per_t):
                out[_u(first + q)] += acc[q] / norm
        else:
            for q in range(D * per_t):
                out[_u(first + q)] = acc[q] / norm


@kernel.cpu_kernel(parallel=False)
def _corr_serial(ap, bp, out, geo, mult, add):
    # out (+)= Correlation of the padded flat inputs ap, bp (module doc), on this thread
    D, per_t = geo[5], geo[3] * geo[4]
    acc = np.empty(D * per_t, out.dtype)
    _corr_rows(ap, bp, out, acc, geo, mult, add, 0, out.size // (D * per_t))


@kernel.cpu_kernel
def _corr_team(ap, bp, out, geo, mult, add, parts):
    # the same over `parts` ranges of the (n, ty) tasks, in parallel
    D, per_t = geo[5], geo[3] * geo[4]
    tasks = out.size // (D * per_t)
    for p in prange(parts):
        acc = np.empty(D * per_t, out.dtype)
        _corr_rows(ap, bp, out, acc, geo, mult, add, tasks * p // parts, tasks * (p + 1) // parts)
