"""CPU Pooling forward over channels-last data (the ChannelsLast pass's Pooling twin).

The window rules are Pooling's (_pool_window.py): output (y, z) covers rows
[y*sh - ph, y*sh - ph + kh) clipped to the padded end `eh` for the average's divisor and to
[0, H) for the values read; max skips NaN (NaN only where the whole window is),
an empty window gives -inf (max) or 0 (avg); sums accumulate in float64. Here every step
of a window is one vector loop over the C contiguous channels of a position, instead of
one scalar loop per channel plane. Modes: 0 max, 1 avg, 2 sum.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from ... import kernel
from ...kernel.device import fmax as _fmax
from ._pool_window import window as _window
from ._uindex import u as _u


@kernel.cpu_kernel
def _pool(x, out, acc, mode, kh, kw, sh, sw, ph, pw, eh, ew, include_pad):
    # out (N, Ho, Wo, C) from x (N, H, W, C); acc: one float64 row of C per output row
    n, height, width, c = x.shape
    ho, wo = out.shape[1], out.shape[2]
    xf = x.reshape(-1)
    of = out.reshape(-1)
    for row in prange(n * ho):
        b = row // ho
        y = row - b * ho
        hs, he, h0, h1 = _window(y, kh, sh, ph, eh, height)
        a = acc[row * c : (row + 1) * c]
        for z in range(wo):
            ws, we, w0, w1 = _window(z, kw, sw, pw, ew, width)
            dst = ((b * ho + y) * wo + z) * c
            if h0 >= h1 or w0 >= w1:
                for e in range(c):
                    of[_u(dst + e)] = -math.inf if mode == 0 else 0.0
                continue
            if mode == 0:
                first = ((b * height + h0) * width + w0) * c
                for e in range(c):
                    of[_u(dst + e)] = xf[_u(first + e)]
                for h in range(h0, h1):
                    for w in range(w0, w1):
                        src = ((b * height + h) * width + w) * c
                        for e in range(c):
                            of[_u(dst + e)] = _fmax(of[_u(dst + e)], xf[_u(src + e)])
                continue
            for e in range(c):
                a[e] = 0.0
            for h in range(h0, h1):
                for w in range(w0, w1):
                    src = ((b * height + h) * width + w) * c
                    for e in range(c):
                        a[e] += xf[_u(src + e)]
            if mode != 1:
                for e in range(c):
                    of[_u(dst + e)] = a[e]
                continue
            size = (he - hs) * (we - ws) if include_pad else (h1 - h0) * (w1 - w0)
            for e in range(c):
                of[_u(dst + e)] = a[e] / size if size > 0 else 0.0


def forward(x: np.ndarray, out: np.ndarray, mode: int, window: tuple[int, ...],
            include_pad: bool) -> None:  # fmt: skip
    """out (N, Ho, Wo, C) = pooling of x (N, H, W, C); window = (kh, kw, sh, sw, ph, pw,
    eh, ew) as Pooling's `window` gives them for the 2-D axes."""
    n, ho, c = x.shape[0], out.shape[1], x.shape[3]
    if out.size == 0:
        return
    acc = np.empty(max(1, n * ho * c), np.float64)
    _pool(x, out, acc, mode, *window, include_pad)
