"""Pooling windows, one body for both devices (kernel.parallel_for over flat arrays).

Window of output (y, z): rows [y*sh - ph, y*sh - ph + kh) clipped to the padded end `eh`
(H + bottom padding) for the avg divisor, and to [0, H) for the values it reads;
likewise for columns. Modes: 0 max, 1 avg, 2 sum, 3 lp.

    max  y = max over the window;  mask = h*W + w of the first maximum (-1 if empty)
    avg  y = sum / size, size = padded window (count_include_pad) or valid window
    sum  y = sum over the window
    lp   y = (sum x^p)^(1/p);      dx = dy * (x / y)^(p-1)

Forward: a work item is a chunk of consecutive outputs: a whole plane on the CPU (no
index divisions), one output on the GPU (coalesced). Backward gathers: the item of input
element (h, w) sums the gradients of every output window containing it (for max, only
those whose mask, or first maximum, is (h, w)), so no two items write the same element
and `req` is per element. The GPU runs it; the CPU keeps its scatter kernel
(_pool_cpu._pool_backward, one plane per task), 4-10x faster there than the gather's
per-element index arithmetic. Max pooling on the CPU has its own faster kernels too.
Arrays are flat (N*C planes of H*W, Ho*Wo); offsets are never negative, hence `uindex`.
"""

from __future__ import annotations

import math

from ... import kernel
from ...kernel import uindex


@kernel.device_function
def window(y, k, s, pad, end, size):
    """(start, padded end for the divisor, clipped start, clipped end) of output y."""
    start = y * s - pad
    stop = min(start + k, end)
    return start, stop, max(start, 0), min(stop, size)


@kernel.parallel_for
def pool_forward(
    item, x, out, mask, height, width, ho, wo, chunk,
    mode, kh, kw, sh, sw, ph, pw, eh, ew, include_pad, p, add, masked,
):  # fmt: skip
    # outputs [item * chunk, +chunk), walked in (plane, y, z) order; a chunk of one plane
    # (the CPU's) needs no division (64-bit divisions cost more than a small window)
    first = item * chunk
    t, y, z = item, 0, 0
    if chunk != ho * wo:
        row = first // wo
        z = first - row * wo
        t = row // ho
        y = row - t * ho
    hs, he, h0, h1 = window(y, kh, sh, ph, eh, height)
    for o in range(first, min(first + chunk, out.size)):
        plane = t * height * width
        ws, we, w0, w1 = window(z, kw, sw, pw, ew, width)
        if mode == 0:
            best = -math.inf
            arg = -1
            for h in range(h0, h1):
                for w in range(w0, w1):
                    v = x[uindex(plane + h * width + w)]
                    if arg < 0 or v > best:
                        best = v
                        arg = h * width + w
            val = best
            if masked:
                mask[uindex(o)] = arg
        else:
            acc = 0.0
            for h in range(h0, h1):
                for w in range(w0, w1):
                    v = x[uindex(plane + h * width + w)]
                    acc += v**p if mode == 3 else v
            if mode == 1:
                size = (he - hs) * (we - ws) if include_pad else (h1 - h0) * (w1 - w0)
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
                t += 1
            hs, he, h0, h1 = window(y, kh, sh, ph, eh, height)


@kernel.device_function
def first_max_at(x, plane, width, h0, h1, w0, w1, target, h, w):
    """Whether (h, w) is the first position of the window holding `target` (row-major)."""
    for hh in range(h0, h1):
        for ww in range(w0, w1):
            if x[uindex(plane + hh * width + ww)] == target:
                return hh == h and ww == w
    return False


@kernel.parallel_for
def pool_backward(
    idx, dy, x, out, mask, dx, height, width, ho, wo,
    mode, kh, kw, sh, sw, ph, pw, eh, ew, include_pad, p, add, use_mask,
):  # fmt: skip
    t = idx // (height * width)
    r = idx - t * (height * width)
    h = r // width
    w = r - h * width
    plane = t * height * width
    outs = t * ho * wo
    # outputs y whose window [y*sh - ph, y*sh - ph + kh) holds h
    y_lo = max(0, -((-(h + ph - kh + 1)) // sh))
    y_hi = min(ho - 1, (h + ph) // sh)
    z_lo = max(0, -((-(w + pw - kw + 1)) // sw))
    z_hi = min(wo - 1, (w + pw) // sw)
    acc = 0.0
    for y in range(y_lo, y_hi + 1):
        hs, he, h0, h1 = window(y, kh, sh, ph, eh, height)
        if h >= he:
            continue  # beyond the padded end: not part of this window
        for z in range(z_lo, z_hi + 1):
            o = outs + y * wo + z
            g = dy[uindex(o)]
            if mode == 0 and use_mask:
                if mask[uindex(o)] == r:
                    acc += g
                continue
            ws, we, w0, w1 = window(z, kw, sw, pw, ew, width)
            if w >= we:
                continue
            if mode == 0:  # no mask: is (h, w) the first position holding the maximum?
                if first_max_at(x, plane, width, h0, h1, w0, w1, out[uindex(o)], h, w):
                    acc += g
            elif mode == 1:
                size = (he - hs) * (we - ws) if include_pad else (h1 - h0) * (w1 - w0)
                acc += g / size
            elif mode == 3:
                v = out[uindex(o)]
                if v != 0:
                    acc += g * (x[uindex(idx)] / v) ** (p - 1)
            else:
                acc += g
    if add:
        dx[uindex(idx)] += acc
    else:
        dx[uindex(idx)] = acc


__all__ = ["pool_backward", "pool_forward"]
