"""CPU-only Pooling kernels, parallel over the N*C planes (a plane is one task).

Faster on the CPU than the one-body kernels of _pool_window.py, which the GPU runs (and
the CPU too, for the forward of avg, sum and lp pooling): max pooling and the backward.

Window of output (y, z): rows [y*sh - ph, y*sh - ph + kh) clipped to the padded end `eh`
(H + bottom padding) for the avg divisor, and to [0, H) for the values it reads;
likewise for columns. Modes: 0 max, 1 avg, 2 sum, 3 lp.

    max  y = max over the window;  mask = h*W + w of the first maximum (-1 if empty)
    avg  y = sum / size, size = padded window (count_include_pad) or valid window
    sum  y = sum over the window
    lp   y = (sum x^p)^(1/p);      dx = dy * (x / y)^(p-1)

Max pooling has its own forward kernels (separable: row maxima first), a few times faster
than scanning each window; when no window is padded or clipped (LeNet's 2x2/2),
_max_pool_inside takes each output row as the max of kh*kw strided input rows instead
(_max_pool_2x2 and _max_pool_backward_2x2: the same with the 2x2 window written out;
_max_pool_plane when the window is the whole plane, global max pooling).
3x3 windows (ResNet's 3x3/2 stem pooling) have their own pair, padded or not
(_max_pool_3x3, _max_pool_backward_3x3): a window clipped by padding repeats a valid row
or column instead of branching, so every window takes the written-out nine-element path.
Backward scatters each output gradient into its window; one plane per task, so no two
tasks write the same element (the GPU's gather recomputes the windows per input element:
4-10x slower on the CPU). Imported on the first CPU launch (it imports numba).
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ... import kernel
from ...kernel.device import fmax as _fmax
from ._pool_window import replaces as _replaces
from ._pool_window import window as _window
from ._uindex import u as _u

# The max-pooling kernels work on the flat (contiguous) arrays with unsigned indices (see
# _im2col._u): numba's negative-index checks cost more than the comparisons otherwise.


@kernel.cpu_kernel
def _max_pool_forward(x, out, mask, kh, kw, sh, sw, ph, pw, add, masked):
    # separable: row maxima over each column window, then the max of those over each row
    # window; strict > keeps the first maximum in row-major order, as the mask promises.
    # NaN is skipped at both steps (_replaces), so the value is the window's (module doc)
    n_img, n_c, height, width = x.shape
    ho, wo = out.shape[2], out.shape[3]
    xf = x.reshape(-1)
    of = out.reshape(-1)
    mf = mask.reshape(-1)
    for t in prange(n_img * n_c):
        src = t * height * width
        dst = t * ho * wo
        rmax = np.empty(height * wo, x.dtype)
        rarg = np.empty(height * wo, np.int64)
        for h in range(height):
            row = src + h * width
            for z in range(wo):
                w0 = max(z * sw - pw, 0)
                w1 = min(z * sw - pw + kw, width)
                k = h * wo + z
                if w0 >= w1:
                    rmax[_u(k)] = -np.inf
                    rarg[_u(k)] = -1
                    continue
                best = xf[_u(row + w0)]
                arg = w0
                for w in range(w0 + 1, w1):
                    v = xf[_u(row + w)]
                    if _replaces(v, best):
                        best = v
                        arg = w
                rmax[_u(k)] = best
                rarg[_u(k)] = arg
        for y in range(ho):
            h0 = max(y * sh - ph, 0)
            h1 = min(y * sh - ph + kh, height)
            for z in range(wo):
                best = -np.inf
                best_h = -1
                if h0 < h1:
                    best = rmax[_u(h0 * wo + z)]
                    best_h = h0
                    for h in range(h0 + 1, h1):
                        v = rmax[_u(h * wo + z)]
                        if _replaces(v, best):
                            best = v
                            best_h = h
                    if best != best:
                        best_h = -1  # all NaN: no position holds the maximum
                o = dst + y * wo + z
                if add:
                    of[_u(o)] += best
                else:
                    of[_u(o)] = best
                if masked:
                    arg = -1 if best_h < 0 else rarg[_u(best_h * wo + z)]
                    mf[_u(o)] = -1 if arg < 0 else best_h * width + arg


@kernel.cpu_kernel
def _max_pool_values(x, out, kh, kw, sh, sw, ph, pw, add):
    # _max_pool_forward without the mask: branch-free maxima, the window loops outside so
    # the loops over output columns vectorise (the mask is unread in inference and in
    # training too, since backward finds the maxima again)
    n_img, n_c, height, width = x.shape
    ho, wo = out.shape[2], out.shape[3]
    xf = x.reshape(-1)
    of = out.reshape(-1)
    # output columns whose window lies inside the row: [z_in, z_end)
    z_in = min(wo, -(-pw // sw))
    z_end = max(z_in, min(wo, (width - kw + pw) // sw + 1))
    for t in prange(n_img * n_c):
        src = t * height * width
        rmax = np.empty(height * wo, x.dtype)
        for h in range(height):
            row = src + h * width
            r = h * wo
            for z in range(wo):
                if z < z_in or z >= z_end:  # a clipped window at either end
                    w0 = max(z * sw - pw, 0)
                    w1 = min(z * sw - pw + kw, width)
                    best = xf[_u(row + w0)] if w0 < w1 else -np.inf
                    for w in range(w0 + 1, w1):
                        best = _fmax(best, xf[_u(row + w)])
                    rmax[_u(r + z)] = best
            for z in range(z_in, z_end):
                rmax[_u(r + z)] = xf[_u(row + z * sw - pw)]
            for j in range(1, kw):
                for z in range(z_in, z_end):
                    v = xf[_u(row + z * sw - pw + j)]
                    rmax[_u(r + z)] = _fmax(rmax[_u(r + z)], v)
        best_row = np.empty(wo, x.dtype)
        for y in range(ho):
            h0 = max(y * sh - ph, 0)
            h1 = min(y * sh - ph + kh, height)
            if h0 >= h1:
                best_row[:] = -np.inf
            else:
                for z in range(wo):
                    best_row[_u(z)] = rmax[_u(h0 * wo + z)]
                for h in range(h0 + 1, h1):
                    for z in range(wo):
                        best_row[_u(z)] = _fmax(best_row[_u(z)], rmax[_u(h * wo + z)])
            o = (t * ho + y) * wo
            if add:
                for z in range(wo):
                    of[_u(o + z)] += best_row[_u(z)]
            else:
                for z in range(wo):
                    of[_u(o + z)] = best_row[_u(z)]


@kernel.cpu_kernel
def _sum_pool_values(x, out, kh, kw, sh, sw, ph, pw, average, rows, cols, add):
    # sum and avg pooling, separable: per output row, the column sums of its window's
    # input rows (contiguous vector adds, float64) into a zero-padded buffer, then each
    # output's sum of kw of those; avg divides by rows[y] * cols[x], the window's counted
    # extent along each axis (padded or not). Summing rows first (strided reads along
    # every input row) was 2x slower; the one-body kernel, scanning every window, 4-5x.
    n_img, n_c, height, width = x.shape
    ho, wo = out.shape[2], out.shape[3]
    xf = x.reshape(-1)
    of = out.reshape(-1)
    for t in prange(n_img * n_c):
        src = t * height * width
        col = np.zeros(width + 2 * pw + (wo + 1) * sw + kw)  # zeros stay in the padding
        inside = col[pw : pw + width]
        hs = np.empty(wo)
        for y in range(ho):
            h0 = max(y * sh - ph, 0)
            h1 = min(y * sh - ph + kh, height)
            if h1 <= h0:  # a window wholly in the padding
                inside[:] = 0.0
            else:
                first = xf[src + h0 * width : src + (h0 + 1) * width]
                for w in range(width):
                    inside[_u(w)] = np.float64(first[_u(w)])
                for h in range(h0 + 1, h1):
                    seg = xf[src + h * width : src + (h + 1) * width]
                    for w in range(width):
                        inside[_u(w)] += np.float64(seg[_u(w)])
            for z in range(wo):
                hs[_u(z)] = col[_u(z * sw)]
            for j in range(1, kw):
                for z in range(wo):
                    hs[_u(z)] += col[_u(z * sw + j)]
            o = (t * ho + y) * wo
            for z in range(wo):
                v = hs[_u(z)]
                if average:
                    size = rows[_u(y)] * cols[_u(z)]
                    v = v / size if size > 0 else 0.0
                if add:
                    of[_u(o + z)] += v
                else:
                    of[_u(o + z)] = v


@kernel.cpu_kernel
def _sum_pool_backward(dy, dx, kh, kw, sh, sw, ph, pw, average, rows, cols, add):
    # _sum_pool_values's passes transposed: each output row's gradients (over the divisor)
    # spread along its windows into a row of input columns, which is then added to the
    # input rows of the window's; float64 throughout, one rounding at the store
    n_img, n_c, height, width = dx.shape
    ho, wo = dy.shape[2], dy.shape[3]
    dyf = dy.reshape(-1)
    dxf = dx.reshape(-1)
    z_in = min(wo, -(-pw // sw))
    z_end = max(z_in, min(wo, (width - kw + pw) // sw + 1))
    for t in prange(n_img * n_c):
        acc = np.zeros(height * width)
        g = np.empty(wo)
        spread = np.empty(width)
        for y in range(ho):
            h0 = max(y * sh - ph, 0)
            h1 = min(y * sh - ph + kh, height)
            o = (t * ho + y) * wo
            for z in range(wo):
                v: float = np.float64(dyf[_u(o + z)])
                if average:
                    size = rows[_u(y)] * cols[_u(z)]
                    v = v / size if size > 0 else 0.0
                g[_u(z)] = v
            spread[:] = 0.0
            for z in range(wo):
                if z < z_in or z >= z_end:  # a clipped window at either end
                    for w in range(max(z * sw - pw, 0), min(z * sw - pw + kw, width)):
                        spread[_u(w)] += g[_u(z)]
            for j in range(kw):
                for z in range(z_in, z_end):
                    spread[_u(z * sw - pw + j)] += g[_u(z)]
            for h in range(h0, h1):
                for w in range(width):
                    acc[_u(h * width + w)] += spread[_u(w)]
        base = t * height * width
        if add:
            for i in range(height * width):
                dxf[_u(base + i)] += acc[_u(i)]
        else:
            for i in range(height * width):
                dxf[_u(base + i)] = acc[_u(i)]


@kernel.cpu_kernel
def _max_pool_inside(x, out, kh, kw, sh, sw, add):
    # _max_pool_values when every window lies inside the image (no padding, no clipped
    # window at the end): no separable pass, each output row is the max of kh*kw strided
    # input rows taken into a local row (no aliasing with x, so the loops vectorise):
    # 2.6x faster on LeNet's 2x2/2 pools (64x20x24x24: 993 -> 376 us), 1.9x on 3x3/2
    n_img, n_c, height, width = x.shape
    ho, wo = out.shape[2], out.shape[3]
    xf = x.reshape(-1)
    of = out.reshape(-1)
    for t in prange(n_img * n_c):
        acc = np.empty(wo, x.dtype)
        for y in range(ho):
            src = (t * height + y * sh) * width
            for z in range(wo):
                acc[_u(z)] = xf[_u(src + z * sw)]
            for i in range(kh):
                for j in range(kw):
                    if i + j > 0:
                        row = src + i * width + j
                        for z in range(wo):
                            acc[_u(z)] = _fmax(acc[_u(z)], xf[_u(row + z * sw)])
            o = (t * ho + y) * wo
            if add:
                for z in range(wo):
                    of[_u(o + z)] += acc[_u(z)]
            else:
                for z in range(wo):
                    of[_u(o + z)] = acc[_u(z)]


@kernel.cpu_kernel
def _max_pool_plane(x, out, add):
    # a window that is the whole plane (global max pooling): _max_pool_inside's rows are
    # one value wide there, a scalar chain of maxima. Here 16 running maxima take 16
    # consecutive values each step (a loop LLVM vectorises; not with fastmath, whose float64
    # variant aborts in LLVM 20's loop vectorizer), then fold into one.
    # (32, 64, 56, 56) float32, 2 threads: 12 -> ~1 ms
    n_planes = out.size
    size = x.size // n_planes
    xf = x.reshape(-1)
    of = out.reshape(-1)
    for t in prange(n_planes):
        base = t * size
        acc = np.empty(16, x.dtype)
        for k in range(16):
            acc[_u(k)] = xf[_u(base)]
        full = size - size % 16
        for i in range(0, full, 16):
            step = xf[base + i : base + i + 16]  # a view: indexed through it, it vectorises
            for k in range(16):
                acc[_u(k)] = _fmax(acc[_u(k)], step[_u(k)])
        best = acc[0]
        for k in range(1, 16):
            best = _fmax(best, acc[_u(k)])
        for i in range(full, size):
            best = _fmax(best, xf[_u(base + i)])
        if add:
            of[_u(t)] += best
        else:
            of[_u(t)] = best


@kernel.cpu_kernel
def _max_pool_2x2(x, out, sh, sw, add):
    # _max_pool_inside for a 2x2 window, the four loads written out: 1.8x faster again on
    # LeNet's 64x20x24x24 (386 -> 210 us), 3.7x on its 64x50x8x8, whose 4-wide rows leave
    # the generic loops little to vectorise
    n_img, n_c, height, width = x.shape
    ho, wo = out.shape[2], out.shape[3]
    xf = x.reshape(-1)
    of = out.reshape(-1)
    for t in prange(n_img * n_c):
        for y in range(ho):
            a = (t * height + y * sh) * width
            b = a + width
            o = (t * ho + y) * wo
            for z in range(wo):
                p = z * sw
                top = _fmax(xf[_u(a + p)], xf[_u(a + p + 1)])
                m = _fmax(top, _fmax(xf[_u(b + p)], xf[_u(b + p + 1)]))
                if add:
                    of[_u(o + z)] += m
                else:
                    of[_u(o + z)] = m


@kernel.cpu_kernel
def _max_pool_backward(dy, x, out, dx, kh, kw, sh, sw, ph, pw, add):
    # each output gradient goes to the first position of its window holding the maximum
    # (the one forward picked), found again by comparing x with the output value
    n_img, n_c, height, width = dx.shape
    ho, wo = dy.shape[2], dy.shape[3]
    dyf = dy.reshape(-1)
    xf = x.reshape(-1)
    of = out.reshape(-1)
    dxf = dx.reshape(-1)
    for t in prange(n_img * n_c):
        plane = t * height * width
        if not add:
            for p in range(height * width):
                dxf[_u(plane + p)] = 0
        for y in range(ho):
            h0 = max(y * sh - ph, 0)
            h1 = min(y * sh - ph + kh, height)
            for z in range(wo):
                w0 = max(z * sw - pw, 0)
                w1 = min(z * sw - pw + kw, width)
                o = t * ho * wo + y * wo + z
                target = of[_u(o)]
                # scan the window backwards with selects, not branches: the last match
                # seen is the first in row-major order, and random data mispredicts less
                pos = -1
                for h in range(h1 - 1, h0 - 1, -1):
                    row = plane + h * width
                    for w in range(w1 - 1, w0 - 1, -1):
                        pos = row + w if xf[_u(row + w)] == target else pos
                if pos >= 0:
                    dxf[_u(pos)] += dyf[_u(o)]


@kernel.cpu_kernel
def _max_pool_backward_2x2(dy, x, out, dx, sh, sw, add):
    # _max_pool_backward for 2x2 windows that all lie inside the image (no padding): the
    # four compares written out, no window loops. Loops with a run-time trip count of 2
    # cost numba 3x here (LeNet's 64x20x24x24 pooling: 1450 -> 500 us)
    n_img, n_c, height, width = dx.shape
    ho, wo = dy.shape[2], dy.shape[3]
    dyf = dy.reshape(-1)
    xf = x.reshape(-1)
    of = out.reshape(-1)
    dxf = dx.reshape(-1)
    for t in prange(n_img * n_c):
        plane = t * height * width
        if not add:
            for p in range(height * width):
                dxf[_u(plane + p)] = 0
        for y in range(ho):
            for z in range(wo):
                o = (t * ho + y) * wo + z
                target = of[_u(o)]
                a = plane + y * sh * width + z * sw
                b = a + width
                # selects from the last position to the first: the first maximum wins
                pos = b + 1 if xf[_u(b + 1)] == target else -1
                pos = b if xf[_u(b)] == target else pos
                pos = a + 1 if xf[_u(a + 1)] == target else pos
                pos = a if xf[_u(a)] == target else pos
                if pos >= 0:
                    dxf[_u(pos)] += dyf[_u(o)]


@kernel.device_function
def _clamped3(start, size):
    """The three rows (or columns) of a 3-wide window from `start`, clamped into [0, size):
    one clipped by padding repeats a valid one (the middle stays between the other two)."""
    i0 = min(max(start, 0), size - 1)
    i2 = min(max(start + 2, 0), size - 1)
    return i0, min(max(start + 1, i0), i2), i2


@kernel.cpu_kernel
def _max_pool_3x3(x, out, sh, sw, ph, pw, add):
    # 3x3 max pooling (ResNet's stem: 3x3/2, pad 1) when no window is empty: per output
    # row, the max of its three input rows over the whole width (contiguous: vectorises),
    # then the max of three entries of that row per output. A window clipped by padding
    # takes a row or column of the window twice instead (max is idempotent), so padded
    # windows need no branch. 2.4x faster than _max_pool_values on 32x64x112x112.
    n_img, n_c, height, width = x.shape
    ho, wo = out.shape[2], out.shape[3]
    xf = x.reshape(-1)
    of = out.reshape(-1)
    for t in prange(n_img * n_c):
        vmax = np.empty(width, x.dtype)
        for y in range(ho):
            r0, r1, r2 = _clamped3(y * sh - ph, height)
            a = (t * height + r0) * width
            b = (t * height + r1) * width
            c = (t * height + r2) * width
            for w in range(width):
                m = _fmax(xf[_u(a + w)], xf[_u(b + w)])
                vmax[_u(w)] = _fmax(m, xf[_u(c + w)])
            o = (t * ho + y) * wo
            for z in range(wo):
                c0, c1, c2 = _clamped3(z * sw - pw, width)
                m = _fmax(vmax[_u(c0)], vmax[_u(c1)])
                m = _fmax(m, vmax[_u(c2)])
                if add:
                    of[_u(o + z)] += m
                else:
                    of[_u(o + z)] = m


@kernel.cpu_kernel
def _max_pool_backward_3x3(dy, x, out, dx, sh, sw, ph, pw, add):
    # _max_pool_backward for 3x3 windows, none empty: the nine compares written out (a
    # window clipped by padding repeats a valid row or column, as in _max_pool_3x3; the
    # repeat is compared before the original, so the first maximum still wins). Per output
    # row, the positions are found first (a loop without stores to dx, over a table of
    # window columns) and scattered after: 70 -> 33 ms on 32x64x112x112 (one thread), of
    # which ~10 zero dx. Loops with run-time trip counts of 3 cost numba ~3x here
    n_img, n_c, height, width = dx.shape
    ho, wo = dy.shape[2], dy.shape[3]
    dyf = dy.reshape(-1)
    xf = x.reshape(-1)
    of = out.reshape(-1)
    dxf = dx.reshape(-1)
    for t in prange(n_img * n_c):
        plane = t * height * width
        if not add:
            for p in range(height * width):
                dxf[_u(plane + p)] = 0
        cols = np.empty(3 * wo, np.int64)  # each output column's window columns, clamped
        for z in range(wo):
            c0, c1, c2 = _clamped3(z * sw - pw, width)
            cols[_u(3 * z)] = c0
            cols[_u(3 * z + 1)] = c1
            cols[_u(3 * z + 2)] = c2
        pos = np.empty(wo, np.int64)
        for y in range(ho):
            r0, r1, r2 = _clamped3(y * sh - ph, height)
            a = plane + r0 * width
            b = plane + r1 * width
            c = plane + r2 * width
            o = (t * ho + y) * wo
            for z in range(wo):
                target = of[_u(o + z)]
                c0 = cols[_u(3 * z)]
                c1 = cols[_u(3 * z + 1)]
                c2 = cols[_u(3 * z + 2)]
                # selects from the last position to the first: the first maximum wins
                p = c + c2 if xf[_u(c + c2)] == target else -1
                p = c + c1 if xf[_u(c + c1)] == target else p
                p = c + c0 if xf[_u(c + c0)] == target else p
                p = b + c2 if xf[_u(b + c2)] == target else p
                p = b + c1 if xf[_u(b + c1)] == target else p
                p = b + c0 if xf[_u(b + c0)] == target else p
                p = a + c2 if xf[_u(a + c2)] == target else p
                p = a + c1 if xf[_u(a + c1)] == target else p
                p = a + c0 if xf[_u(a + c0)] == target else p
                pos[_u(z)] = p
            for z in range(wo):
                p = pos[_u(z)]
                if p >= 0:
                    dxf[_u(p)] += dyf[_u(o + z)]


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
            hs, he, h0, h1 = _window(y, kh, sh, ph, eh, height)
            for z in range(wo):
                g = dy[n, c, y, z]
                if mode == 0 and use_mask:
                    a = mask[n, c, y, z]
                    if a >= 0:
                        plane[a // width, a % width] += g
                    continue
                ws, we, w0, w1 = _window(z, kw, sw, pw, ew, width)
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


__all__ = [
    "_max_pool_2x2",
    "_max_pool_3x3",
    "_max_pool_backward",
    "_max_pool_backward_2x2",
    "_max_pool_backward_3x3",
    "_max_pool_forward",
    "_max_pool_inside",
    "_max_pool_values",
    "_pool_backward",
    "_sum_pool_backward",
    "_sum_pool_values",
]
