"""L2Normalization's GPU path (l2_normalization.py has the formulas and the CPU's rows).

A thread per norm, as on the CPU, left an H200 idle wherever the norms are few or long:
mode='instance' of a (32, 512, 28, 28) batch is 32 threads summing 401k elements each,
twice; mode='spatial' is a thread per (sample, channel) whose neighbours are a whole plane
apart (no read coalesced); mode='channel' the same where the positions are few (inner
< 32, e.g. (N, C, 1)), and few threads where N * H * W is small and C long
((32, 2048, 7, 7): 1568 threads of 2048 elements).

Here x is seen as (outer, n, inner), norm r = o * inner + q summing x[o, :, q]:

- forward: the reduction kernels (ops/_reduce_cuda.py: coalesced, a warp, block or thread
  per norm as the layout reads best, long sums cut into slices over several blocks)
  take 'sumsq' of x down to (outer, 1, inner) in a float64 scratch; a thread per norm
  writes norm = sqrt(sum x^2 + eps) and keeps 1 / norm; then out = x / norm a thread per
  element. The sum of squares is never rooted and squared back ('nrm2' did that: one
  more rounding, which moved the norm by an ulp from the CPU's where eps is not small).
- backward: reduce_dot_gpu sums dy * y per norm straight from dy and y (no scratch of
  products, which took a write and a read of a whole array); then
  dx = (dy - y * sum(dy * y)) / norm a thread per element. dx may be dy's memory: every
  sum is taken before dx is written, and each element reads its dy before writing dx.
- channel norms that fill the device (inner >= 32, so a warp's threads read neighbouring
  elements, and rows > DIRECT_ROWS, past which reduce_gpu never splits a sum, so it
  would be this thread per norm too) take a thread per norm for the whole op, one
  launch each way: the reduction path reads and writes as much there, in three launches
  forward and two backward, with a scratch of the sums.

What is rounded where, on both paths and as on the CPU's row loops: every element is
loaded as float64, so squares and dy * y products are exact for float16 and float32
data (rounded once for float64) and summed in float64 (the CPU sums the same float64
terms in its own order); sqrt(sum + eps), 1 / norm and x / norm, and dx's
inv * dy - (sum * inv) * y with inv = 1 / the stored norm, are float64, each output
rounded once to its dtype. (The old backward rounded float16/float32 products to
float32 before summing; the CPU never did.)

Realistic sizes: the instance batch above sums on 512 blocks of 256 threads (16 slices a
norm, then a launch combining the slices), scales a thread per element; the spatial one a
block per norm (4096 blocks grid-striding over 16384 norms); the (32, 2048, 7, 7)
channel one 45 slices a norm, 70560 threads; a (32, 64, 56, 56) channel batch 100352
threads, one launch forward and one backward (was 3 and 3, with a 6.4M-element scratch
of products backward).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...kernel import device_function, parallel_for, scratch
from ...kernel.launch import NULL, store, uindex
from .. import _reduce_cuda

WARP = 32
DIRECT_ROWS = 1 << 16  # _reduce_cuda.SPLIT_THREADS / 2: more norms are never split


@device_function
def _norm_of(j, n, inner):
    """The norm (row) element j of an (outer, n, inner) array belongs to."""
    o = j // (n * inner)
    return o * inner + j % inner


@device_function
def _first(r, n, inner):
    """The flat index of norm r's first element."""
    o = r // inner
    return o * n * inner + (r - o * inner)


@parallel_for
def _l2_finish(r, sums, norm, eps, m_norm):
    """sums[r] (sum x^2) -> norm[r] = sqrt(sum x^2 + eps); sums[r] = 1 / it."""
    s = math.sqrt(sums[r] + eps)
    store(norm, r, s, m_norm)
    sums[r] = 1.0 / s


@parallel_for
def _l2_scale(j, out, x, inv, n, inner, m_out):
    store(out, j, x[j] * inv[uindex(_norm_of(j, n, inner))], m_out)


@parallel_for
def _l2_grad(j, dx, dy, y, norm, sdyy, n, inner, m_dx):
    r = uindex(_norm_of(j, n, inner))
    inv = 1.0 / np.float64(norm[r])
    store(dx, j, inv * dy[j] + (-sdyy[r] * inv) * y[j], m_dx)


# A thread per norm (DIRECT_ROWS): the same float64 operations as the kernels above, the
# sums in the CPU's order. np.float64 loads, as in _reduce_cuda._load: the simulator runs
# NumPy, where float16 plus a Python float stays float16.
@parallel_for
def _l2_forward_norm(r, out, norm, x, n, inner, eps, m_out, m_norm):
    base = _first(r, n, inner)
    s = 0.0
    for k in range(n):
        v = np.float64(x[uindex(base + k * inner)])
        s += v * v
    s = math.sqrt(s + eps)
    store(norm, r, s, m_norm)
    if m_out != NULL:
        inv = 1.0 / np.float64(s)
        for k in range(n):
            j = uindex(base + k * inner)
            store(out, j, x[j] * inv, m_out)


@parallel_for
def _l2_backward_norm(r, dx, dy, y, norm, n, inner, m_dx):
    base = _first(r, n, inner)
    t = 0.0
    for k in range(n):
        j = uindex(base + k * inner)
        t += np.float64(dy[j]) * np.float64(y[j])
    inv = 1.0 / np.float64(norm[r])
    for k in range(n):
        j = uindex(base + k * inner)
        store(dx, j, inv * dy[j] + (-t * inv) * y[j], m_dx)


def direct(layout: tuple[int, int, int]) -> bool:
    """Whether a thread per norm reads coalesced and fills the device (see the top)."""
    rows, _, inner = layout
    return inner >= WARP and rows > DIRECT_ROWS


def _view(a: Any, layout: tuple[int, int, int]) -> Any:
    rows, n, inner = layout
    return a.reshape((rows // inner, n, inner))


def forward_gpu(
    ctx: Any, outputs: list[Any], x: Any, layout: tuple[int, int, int], eps: float,
    modes: list[int],
) -> None:  # fmt: skip
    """out (modes[0]) = x / norm and norm (modes[1]) for x seen as layout (rows, n, inner),
    rows > 0; outputs and x flat or shaped."""
    rows, n, inner = layout
    m_out, m_norm = modes
    out, norm, x = (a.reshape(a.size) for a in (*outputs, x))
    if direct(layout):
        _l2_forward_norm.launch(ctx, rows, out, norm, x, n, inner, eps, m_out, m_norm)
        return
    inv = scratch.empty(ctx, rows, np.float64)  # n = 0: sums of nothing, 0
    small = (rows // inner, 1, inner)
    _reduce_cuda.reduce_gpu(
        ctx, inv, False, _view(x, layout), small, "sumsq", 1.0, "L2Normalization"
    )
    _l2_finish.launch(ctx, rows, inv, norm, eps, m_norm)
    if m_out != NULL:
        _l2_scale.launch(ctx, x.size, out, x, inv, n, inner, m_out)


def backward_gpu(
    ctx: Any, dx: Any, dy: Any, y: Any, norm: Any, layout: tuple[int, int, int], m_dx: int
) -> None:
    """dx (m_dx, not NULL) = (dy - y * sum(dy * y)) / norm, sums per norm of layout."""
    rows, n, inner = layout
    dx, dy, y, norm = (a.reshape(a.size) for a in (dx, dy, y, norm))
    if y.size == 0:
        return
    if direct(layout):
        _l2_backward_norm.launch(ctx, rows, dx, dy, y, norm, n, inner, m_dx)
        return
    sdyy = scratch.empty(ctx, rows, np.float64)
    small, name = (rows // inner, 1, inner), "_backward_L2Normalization"
    dyv, yv = _view(dy, layout), _view(y, layout)
    _reduce_cuda.reduce_dot_gpu(ctx, sdyy, False, dyv, yv, small, 1.0, name)
    _l2_grad.launch(ctx, y.size, dx, dy, y, norm, sdyy, n, inner, m_dx)


__all__ = ["DIRECT_ROWS", "backward_gpu", "direct", "forward_gpu"]
