"""Correlation's gradient on a GPU: one work item per input element, gathering.

Why. The CPU's backward (correlation.py) takes one (sample, channel) plane per item and
walks every displacement and output position, adding into its own planes only: FlowNet's
correlation (8 images of 256 channels, 441 displacements over 48 x 64 positions) gave a
GPU 2048 threads of ~1.4M steps each. Here an item is one element (n, c, y, x) of d data1
and d data2 and gathers the outputs that read it: output (t, ti, tj) reads data1 at
(ti s1 + d - pad + h, tj s1 + d - pad + w) for the window tap (h, w), and data2 there
displaced by t's offset (oy, ox). So, per displacement t and tap (h, w), element (y, x)
of data1 is read by at most one output, at ti = (y - d + pad - h) / s1 when that divides
and lies in [0, top_h) (tj likewise), paired with data2 at (y + oy, x + ox); element
(y, x) of data2 by the output at ti = (y - oy - d + pad - h) / s1, paired with data1 at
(y - oy, x - ox). That is 6.3M items of D^2 k^2 steps for FlowNet, each writing only its
own element: deterministic, no atomics, no zeroing pass. Sums are float64 (float16 too).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...kernel import device_function, parallel_for
from ...kernel.launch import NULL, store, uindex
from .correlation import _at


@device_function
def _tap(r, s1, n):
    """The output index o with o * s1 == r and 0 <= o < n, or -1."""
    if r < 0:
        return -1
    o = r // s1
    if o * s1 != r or o >= n:
        return -1
    return o


@device_function
def _gather(dy, first, y, x, va, vb, th, tw, k, s1, o, mult, of_b):
    """Sum over the k x k taps of one displacement's outputs reading element (y, x) (of
    data2 if of_b, else data1): dy times d f / d (that element). `first`: the
    displacement's first dy element; va, vb the pair's values."""
    s = np.float64(0.0)
    for h in range(k):
        ti = _tap(y - o - h, s1, th)
        if ti < 0:
            continue
        for w in range(k):
            tj = _tap(x - o - w, s1, tw)
            if tj < 0:
                continue
            g = np.float64(dy[uindex(first + ti * tw + tj)])
            if mult:
                s += g * (va if of_b else vb)
            elif va >= vb:
                s += -g if of_b else g
            else:
                s += g if of_b else -g
    return s


@parallel_for
def _corr_grad_gather(
    i, ga, gb, dy, a, b, C, H, W, th, tw, D, radius, k, d, s1, s2, pad, mult, m_a, m_b
):
    """Element i = (n, c, y, x) of d data1 (ga) and d data2 (gb), as the req modes say."""
    HW = H * W
    nc = i // HW
    e = i - nc * HW
    y = e // W
    x = e - y * W
    n = nc // C
    base = nc * HW
    o = d - pad
    va = np.float64(a[uindex(i)])
    vb = np.float64(b[uindex(i)])
    sa = np.float64(0.0)
    sb = np.float64(0.0)
    for t in range(D * D):
        ox = (t % D - radius) * s2
        oy = (t // D - radius) * s2
        first = (n * D * D + t) * th * tw
        if m_a != NULL:
            vbt = np.float64(_at(b, base, y + oy, x + ox, H, W))
            sa += _gather(dy, first, y, x, va, vbt, th, tw, k, s1, o, mult, False)
        if m_b != NULL:
            vat = np.float64(_at(a, base, y - oy, x - ox, H, W))
            sb += _gather(dy, first, y - oy, x - ox, vat, vb, th, tw, k, s1, o, mult, True)
    scale = 1.0 / (k * k * C)
    store(ga, i, sa * scale, m_a)
    store(gb, i, sb * scale, m_b)


def correlation_grad_gpu(
    ctx: Any, arrays: list[Any], scalars: tuple[Any, ...], m_a: int, m_b: int
) -> None:
    """d data1 and d data2 of Correlation on a GPU: arrays = flat (ga, gb, dy, a, b),
    scalars as correlation._scalars gives them, m_a and m_b the two write modes."""
    a = arrays[3]
    _corr_grad_gather.launch(ctx, a.size, *arrays, *scalars, m_a, m_b)
