"""Numba CPU kernels for Pooling, parallel over the N*C planes (a plane is one task).

Window of output (y, z): rows [y*sh - ph, y*sh - ph + kh) clipped to the padded end `eh`
(H + bottom padding) for the avg divisor, and to [0, H) for the values it reads;
likewise for columns. Modes: 0 max, 1 avg, 2 sum, 3 lp.

    max  y = max over the window;  mask = h*W + w of the first maximum (-1 if empty)
    avg  y = sum / size, size = padded window (count_include_pad) or valid window
    sum  y = sum over the window
    lp   y = (sum x^p)^(1/p);      dx = dy * (x / y)^(p-1)

Max pooling has its own forward kernel (separable: row maxima first), a few times faster
than scanning each window. Backward scatters each output gradient into its window; one
plane per task, so no two tasks write the same element. Imported on the first CPU launch
(it imports numba).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import prange

from ... import kernel


@numba.njit(cache=True, nogil=True)
def _bounds(y, k, s, pad, end, size):
    # start, padded end (for the divisor), clipped start and end (for the values)
    start = y * s - pad
    stop = min(start + k, end)
    return start, stop, max(start, 0), min(stop, size)


@kernel.cpu_kernel
def _pool_forward(x, out, mask, mode, kh, kw, sh, sw, ph, pw, eh, ew, include_pad, p, add, masked):
    n_img, n_c, height, width = x.shape
    ho, wo = out.shape[2], out.shape[3]
    for t in prange(n_img * n_c):
        n = t // n_c
        c = t % n_c
        src = x[n, c]
        dst = out[n, c]
        for y in range(ho):
            hs, he, h0, h1 = _bounds(y, kh, sh, ph, eh, height)
            for z in range(wo):
                ws, we, w0, w1 = _bounds(z, kw, sw, pw, ew, width)
                if mode == 0:
                    best = -np.inf
                    arg = -1
                    for h in range(h0, h1):
                        for w in range(w0, w1):
                            v = src[h, w]
                            if arg < 0 or v > best:
                                best = v
                                arg = h * width + w
                    val = best
                    if masked:
                        mask[n, c, y, z] = arg
                else:
                    acc = 0.0
                    for h in range(h0, h1):
                        for w in range(w0, w1):
                            acc += src[h, w] ** p if mode == 3 else src[h, w]
                    if mode == 1:
                        size = (he - hs) * (we - ws) if include_pad else (h1 - h0) * (w1 - w0)
                        val = acc / size if size > 0 else 0.0
                    elif mode == 3:
                        val = acc ** (1.0 / p)
                    else:
                        val = acc
                if add:
                    dst[y, z] += val
                else:
                    dst[y, z] = val


@kernel.cpu_kernel
def _max_pool_forward(x, out, mask, kh, kw, sh, sw, ph, pw, add, masked):
    # separable: row maxima over each column window, then the max of those over each row
    # window; strict > keeps the first maximum in row-major order, as the mask promises
    n_img, n_c, height, width = x.shape
    ho, wo = out.shape[2], out.shape[3]
    for t in prange(n_img * n_c):
        n = t // n_c
        c = t % n_c
        src = x[n, c]
        rmax = np.empty((height, wo), x.dtype)
        rarg = np.empty((height, wo), np.int64)
        for h in range(height):
            row = src[h]
            for z in range(wo):
                w0 = max(z * sw - pw, 0)
                w1 = min(z * sw - pw + kw, width)
                if w0 >= w1:
                    rmax[h, z] = -np.inf
                    rarg[h, z] = -1
                    continue
                best = row[w0]
                arg = w0
                for w in range(w0 + 1, w1):
                    if row[w] > best:
                        best = row[w]
                        arg = w
                rmax[h, z] = best
                rarg[h, z] = arg
        best_row = np.empty(wo, x.dtype)
        best_h = np.empty(wo, np.int64)
        for y in range(ho):
            h0 = max(y * sh - ph, 0)
            h1 = min(y * sh - ph + kh, height)
            if h0 >= h1:
                best_row[:] = -np.inf
                best_h[:] = -1
            else:
                best_row[:] = rmax[h0]
                best_h[:] = h0
                for h in range(h0 + 1, h1):
                    r = rmax[h]
                    for z in range(wo):
                        if r[z] > best_row[z]:
                            best_row[z] = r[z]
                            best_h[z] = h
            dst = out[n, c, y]
            for z in range(wo):
                if add:
                    dst[z] += best_row[z]
                else:
                    dst[z] = best_row[z]
            if masked:
                msk = mask[n, c, y]
                for z in range(wo):
                    h = best_h[z]
                    msk[z] = -1 if h < 0 or rarg[h, z] < 0 else h * width + rarg[h, z]


@kernel.cpu_kernel
def _pool_backward(
    dy, x, out, mask, dx, mode, kh, kw, sh, sw, ph, pw, eh, ew, include_pad, p, add, use_mask
):
    n_img, n_c, height, width = dx.shape
    ho, wo = dy.shape[2], dy.shape[3]
    for t in prange(n_img * n_c):
        n = t // n_c
        c = t % n_c
        plane = dx[n, c]
        if not add:
            plane[:, :] = 0
        for y in range(ho):
            hs, he, h0, h1 = _bounds(y, kh, sh, ph, eh, height)
            for z in range(wo):
                g = dy[n, c, y, z]
                if mode == 0 and use_mask:
                    a = mask[n, c, y, z]
                    if a >= 0:
                        plane[a // width, a % width] += g
                    continue
                ws, we, w0, w1 = _bounds(z, kw, sw, pw, ew, width)
                if mode == 0:  # no mask: the first position holding the maximum, as forward
                    target = out[n, c, y, z]
                    found = False
                    for h in range(h0, h1):
                        for w in range(w0, w1):
                            if not found and x[n, c, h, w] == target:
                                plane[h, w] += g
                                found = True
                    continue
                if mode == 1:
                    size = (he - hs) * (we - ws) if include_pad else (h1 - h0) * (w1 - w0)
                    g = g / size if size > 0 else 0.0
                for h in range(h0, h1):
                    for w in range(w0, w1):
                        if mode == 3:
                            r = out[n, c, y, z]
                            if r != 0:
                                plane[h, w] += g * (x[n, c, h, w] / r) ** (p - 1)
                        else:
                            plane[h, w] += g


__all__ = ["_max_pool_forward", "_pool_backward", "_pool_forward"]
