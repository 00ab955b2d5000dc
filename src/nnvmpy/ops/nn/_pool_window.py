"""Pooling windows, one body for both devices (kernel.parallel_for over flat arrays).

Arrays are (N*C volumes of D*H*W, Do*Ho*Wo); 1-D and 2-D pooling run with D = Do = 1.
Window of output (v, y, z): rows [y*sh - ph, y*sh - ph + kh) clipped to the padded end
`eh` (H + bottom padding) for the avg divisor, and to [0, H) for the values it reads;
likewise for depth and columns. Modes: 0 max, 1 avg, 2 sum, 3 lp.

    max  y = max over the window, NaN skipped (NaN only if all of it is, -inf if empty);
         mask = (u*H + h)*W + w of the first maximum (-1 if empty or all NaN)
    avg  y = sum / size, size = padded window (count_include_pad) or valid window
    sum  y = sum over the window
    lp   y = (sum x^p)^(1/p);      dx = dy * (x / y)^(p-1)

Forward: a work item is a chunk of consecutive outputs: a whole volume on the CPU (no
index divisions), one output on the GPU (coalesced). Backward gathers: the item of input
element (h, w) sums the gradients of every output window containing it (for max, only
those whose mask, or first maximum, is (h, w)), so no two items write the same element
and `req` is per element. The GPU runs it; the CPU keeps its scatter kernel
(_pool_cpu._pool_backward, one plane per task), 4-10x faster there than the gather's
per-element index arithmetic; 3-D pooling runs the gather on the CPU too. Max pooling
on the CPU has its own faster (2-D) kernels as well.
Offsets into the flat arrays are never negative, hence `uindex`. Sums are float64 (a
GPU's float16 arrays too), rounded once at the store; max compares float16 as it is.
"""

from __future__ import annotations

import math

import numpy as np

from ... import kernel
from ...kernel import uindex


@kernel.device_function
def replaces(v, m):
    """Whether v replaces m as a window's running maximum: it is greater, or m is NaN.
    Max pooling skips NaN this way (C's fmax): a window is NaN only when all of it is."""
    return (v > m) | (m != m)


@kernel.device_function
def window(y, k, s, pad, end, size):
    """(start, padded end for the divisor, clipped start, clipped end) of output y."""
    start = y * s - pad
    stop = min(start + k, end)
    return start, stop, max(start, 0), min(stop, size)


@kernel.parallel_for
def pool_forward(
    item, x, out, mask, depth, height, width, do, ho, wo, chunk,
    mode, kd, kh, kw, sd, sh, sw, pd, ph, pw, ed, eh, ew, include_pad, p, add, masked,
):  # fmt: skip
    # outputs [item * chunk, +chunk), walked in (volume, v, y, z) order; a chunk of one
    # volume (the CPU's) needs no division (64-bit divisions cost more than a small window)
    first = item * chunk
    t, v, y, z = item, 0, 0, 0
    if chunk != do * ho * wo:
        row = first // wo
        z = first - row * wo
        plane = row // ho
        y = row - plane * ho
        t = plane // do
        v = plane - t * do
    ds, de, d0, d1 = window(v, kd, sd, pd, ed, depth)
    hs, he, h0, h1 = window(y, kh, sh, ph, eh, height)
    for o in range(first, min(first + chunk, out.size)):
        vol = t * depth * height * width
        ws, we, w0, w1 = window(z, kw, sw, pw, ew, width)
        if mode == 0:
            val = -math.inf  # an empty window (all padding)
            arg = -1
            if (d0 < d1) & (h0 < h1) & (w0 < w1):
                # start from the window's first element, typed as x: a Python -inf start
                # made every compare float64 on the GPU
                arg = (d0 * height + h0) * width + w0
                best = x[uindex(vol + arg)]
                for u in range(d0, d1):
                    for h in range(h0, h1):
                        row = (u * height + h) * width
                        for w in range(w0, w1):
                            xv = x[uindex(vol + row + w)]
                            if replaces(xv, best):
                                best = xv
                                arg = row + w
                val = best
                if best != best:
                    arg = -1  # all NaN: no position holds the maximum (backward finds none)
            if masked:
                mask[uindex(o)] = arg
        else:
            acc = np.float64(0.0)
            for u in range(d0, d1):
                for h in range(h0, h1):
                    row = vol + (u * height + h) * width
                    for w in range(w0, w1):
                        xs = np.float64(x[uindex(row + w)])  # float16: sum in float64
                        acc += xs**p if mode == 3 else xs
            if mode == 1:
                if include_pad:
                    size = (de - ds) * (he - hs) * (we - ws)
                else:
                    size = (d1 - d0) * (h1 - h0) * (w1 - w0)
                val = acc / size if size > 0 else 0.0
            elif mode == 3:
                val = acc ** (1.0 / p)
            else:
                val = acc
        if add:
            out[uindex(o)] += val
        else:
            out[uindex(o)] = val
        z += 1
        if z == wo:
            z = 0
            y += 1
            if y == ho:
                y = 0
                v += 1
                if v == do:
                    v = 0
                    t += 1
                ds, de, d0, d1 = window(v, kd, sd, pd, ed, depth)
            hs, he, h0, h1 = window(y, kh, sh, ph, eh, height)


@kernel.device_function
def first_max_at(x, vol, height, width, d0, d1, h0, h1, w0, w1, target, at):
    """Whether `at` is the first position of the window holding `target` (row-major)."""
    for uu in range(d0, d1):
        for hh in range(h0, h1):
            for ww in range(w0, w1):
                k = (uu * height + hh) * width + ww
                if x[uindex(vol + k)] == target:
                    return k == at
    return False


@kernel.device_function
def first_window(pos, pad, k, s):
    """The first output whose window [y*s - pad, y*s - pad + k) holds input `pos`."""
    return max(0, -((-(pos + pad - k + 1)) // s))


@kernel.parallel_for
def pool_backward(
    idx, dy, x, out, mask, dx, depth, height, width, do, ho, wo,
    mode, kd, kh, kw, sd, sh, sw, pd, ph, pw, ed, eh, ew, include_pad, p, add, use_mask,
):  # fmt: skip
    size = depth * height * width
    t = idx // size
    r = idx - t * size
    u = r // (height * width)
    h = (r // width) % height
    w = r % width
    vol = t * size
    outs = t * do * ho * wo
    acc = np.float64(0.0)
    for v in range(first_window(u, pd, kd, sd), min(do - 1, (u + pd) // sd) + 1):
        ds, de, d0, d1 = window(v, kd, sd, pd, ed, depth)
        if u >= de:
            continue  # beyond the padded end: not part of this window
        for y in range(first_window(h, ph, kh, sh), min(ho - 1, (h + ph) // sh) + 1):
            hs, he, h0, h1 = window(y, kh, sh, ph, eh, height)
            if h >= he:
                continue
            for z in range(first_window(w, pw, kw, sw), min(wo - 1, (w + pw) // sw) + 1):
                o = outs + (v * ho + y) * wo + z
                g = np.float64(dy[uindex(o)])
                if mode == 0 and use_mask:
                    if mask[uindex(o)] == r:
                        acc += g
                    continue
                ws, we, w0, w1 = window(z, kw, sw, pw, ew, width)
                if w >= we:
                    continue
                if mode == 0:  # no mask: is this the first position holding the maximum?
                    if first_max_at(
                        x, vol, height, width, d0, d1, h0, h1, w0, w1, out[uindex(o)], r
                    ):
                        acc += g
                elif mode == 1:
                    if include_pad:
                        n = (de - ds) * (he - hs) * (we - ws)
                    else:
                        n = (d1 - d0) * (h1 - h0) * (w1 - w0)
                    acc += g / n
                elif mode == 3:
                    val = out[uindex(o)]
                    if val != 0:
                        acc += g * (x[uindex(idx)] / val) ** (p - 1)
                else:
                    acc += g
    if add:
        dx[uindex(idx)] += acc
    else:
        dx[uindex(idx)] = acc


__all__ = ["pool_backward", "pool_forward"]
