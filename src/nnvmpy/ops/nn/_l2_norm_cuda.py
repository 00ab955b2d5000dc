"""L2Normalization's GPU path (l2_normalization.py has the formulas and the CPU's rows).

A thread per norm, as on the CPU, left an H200 idle wherever the norms are few or long:
mode='instance' of a (32, 512, 28, 28) batch is 32 threads summing 401k elements each,
twice; mode='spatial' is a thread per (sample, channel) whose neighbours are a whole plane
apart (no read coalesced); mode='channel' the same where the positions are few (inner
< 32, e.g. (N, C, 1)), and few threads where N * H * W is small and C long
((32, 2048, 7, 7): 1568 threads of 2048 elements).

Here x is seen as (outer, n, inner), norm r = o * inner + q summing x[o, :, q]:

- forward: the reduction kernels (ops/_reduce_cuda.py: coalesced, a warp, block or thread
  per norm as the layout reads best, long sums cut into slices over several blocks,
  float64 accumulation) take 'nrm2' of x down to (outer, 1, inner) in a float64 scratch;
  a thread per norm writes norm = sqrt(s^2 + eps) (MXNet's sqrt(sum x^2 + eps): 'nrm2' ends
  in a square root, which is squared back in float64) and keeps 1 / norm; then out = x / norm
  a thread per element.
- backward: dy * y a thread per element into scratch (products rounded once, from float64,
  to float32 for float16/float32 data), summed in float64 by the same kernels to
  sum(dy * y) per norm; then dx = (dy - y * sum(dy * y)) / norm a thread per element. dx may
  be dy's memory: each element reads its dy before writing dx.

The instance batch above now sums on 512 blocks of 256 threads (16 slices a norm, then a
launch combining the slices) and scales a thread per element; the spatial one a block per
norm (4096 blocks grid-striding over 16384 norms); the (32, 2048, 7, 7) channel one 45
slices a norm, 70560 threads. Channel norms that already fill the device (many positions,
C < 1024) keep a thread each, reading coalesced.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...kernel import device_function, parallel_for, scratch
from ...kernel.launch import NULL, store, uindex
from .._reduce_cuda import reduce_gpu


@device_function
def _norm_of(j, n, inner):
    """The norm (row) element j of an (outer, n, inner) array belongs to."""
    o = j // (n * inner)
    return o * inner + j % inner


@parallel_for
def _l2_finish(r, sums, norm, eps, m_norm):
    """sums[r] ('nrm2': sqrt(sum x^2)) -> norm[r] = sqrt(sum x^2 + eps); sums[r] = 1 / it."""
    s = math.sqrt(sums[r] * sums[r] + eps)
    store(norm, r, s, m_norm)
    sums[r] = 1.0 / s


@parallel_for
def _l2_scale(j, out, x, inv, n, inner, m_out):
    store(out, j, x[j] * inv[uindex(_norm_of(j, n, inner))], m_out)


@parallel_for
def _l2_dot_terms(j, t, dy, y):
    # float64 product (as the CPU's row sums), rounded once to t's dtype
    t[j] = np.float64(dy[j]) * y[j]


@parallel_for
def _l2_grad(j, dx, dy, y, norm, sdyy, n, inner, m_dx):
    r = uindex(_norm_of(j, n, inner))
    inv = 1.0 / np.float64(norm[r])
    store(dx, j, inv * dy[j] + (-sdyy[r] * inv) * y[j], m_dx)


def _sums(ctx: Any, name: str, a: Any, layout: tuple[int, int, int], red: str) -> Any:
    """A float64 scratch of a's per-norm `red` ('nrm2' or 'sum') over (outer, n, inner)."""
    rows, n, inner = layout
    outer = rows // inner
    sums = scratch.empty(ctx, rows, np.float64)
    reduce_gpu(ctx, sums, False, a.reshape((outer, n, inner)), (outer, 1, inner), red, 1.0, name)
    return sums


def forward_gpu(
    ctx: Any, outputs: list[Any], x: Any, layout: tuple[int, int, int], eps: float,
    modes: list[int],
) -> None:  # fmt: skip
    """out (modes[0]) = x / norm and norm (modes[1]) for x seen as layout (rows, n, inner),
    rows > 0; outputs and x flat or shaped."""
    rows, n, inner = layout
    m_out, m_norm = modes
    out, norm, x = (a.reshape(a.size) for a in (*outputs, x))
    inv = _sums(ctx, "L2Normalization", x, layout, "nrm2")  # n = 0: sums of nothing, 0
    _l2_finish.launch(ctx, rows, inv, norm, eps, m_norm)
    if m_out != NULL:
        _l2_scale.launch(ctx, x.size, out, x, inv, n, inner, m_out)


def backward_gpu(
    ctx: Any, dx: Any, dy: Any, y: Any, norm: Any, layout: tuple[int, int, int], m_dx: int
) -> None:
    """dx (m_dx, not NULL) = (dy - y * sum(dy * y)) / norm, sums per norm of layout."""
    _, n, inner = layout
    dx, dy, y, norm = (a.reshape(a.size) for a in (dx, dy, y, norm))
    if y.size == 0:
        return
    terms = scratch.empty(ctx, y.size, np.float64 if y.dtype == np.float64 else np.float32)
    _l2_dot_terms.launch(ctx, y.size, terms, dy, y)
    sdyy = _sums(ctx, "_backward_L2Normalization", terms, layout, "sum")
    _l2_grad.launch(ctx, y.size, dx, dy, y, norm, sdyy, n, inner, m_dx)


__all__ = ["backward_gpu", "forward_gpu"]
