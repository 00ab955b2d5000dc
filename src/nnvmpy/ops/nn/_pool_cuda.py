"""GPU Pooling: numba.cuda grid-stride kernels, one thread per element they produce.

Forward: a thread per output element, same window rules and modes as _pool_cpu.py
(0 max, 1 avg, 2 sum, 3 lp). Backward gathers instead of scattering: the thread of
input element (h, w) sums the gradients of every output window containing it (for max,
only those whose mask points at it), so there are no atomics and `req` is per element.
"""

from __future__ import annotations

import math
from typing import Any

from ... import kernel
from ...kernel.cuda import get_cuda

# numba.cuda, bound on the first launch; the kernels read it as a module global (the
# CUDA simulator swaps module globals that refer to numba.cuda for its fake).
cuda: Any = None


def bind_cuda() -> Any:
    global cuda
    if cuda is None:
        cuda = get_cuda("Pooling")
    return cuda


@kernel.cuda_kernel
def _pool_forward_cuda(
    x, out, mask, mode, kh, kw, sh, sw, ph, pw, eh, ew, include_pad, p, add, masked
):
    n_img, n_c, height, width = x.shape
    ho, wo = out.shape[2], out.shape[3]
    for idx in range(cuda.grid(1), n_img * n_c * ho * wo, cuda.gridsize(1)):
        z = idx % wo
        y = (idx // wo) % ho
        c = (idx // (wo * ho)) % n_c
        n = idx // (wo * ho * n_c)
        hs = y * sh - ph
        ws = z * sw - pw
        he = min(hs + kh, eh)
        we = min(ws + kw, ew)
        h0, h1 = max(hs, 0), min(he, height)
        w0, w1 = max(ws, 0), min(we, width)
        if mode == 0:
            best = -math.inf
            arg = -1
            for h in range(h0, h1):
                for w in range(w0, w1):
                    v = x[n, c, h, w]
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
                    v = x[n, c, h, w]
                    acc += v**p if mode == 3 else v
            if mode == 1:
                size = (he - hs) * (we - ws) if include_pad else (h1 - h0) * (w1 - w0)
                val = acc / size if size > 0 else 0.0
            elif mode == 3:
                val = acc ** (1.0 / p)
            else:
                val = acc
        if add:
            out[n, c, y, z] += val
        else:
            out[n, c, y, z] = val


@kernel.cuda_kernel
def _pool_backward_cuda(
    dy, x, out, mask, dx, mode, kh, kw, sh, sw, ph, pw, eh, ew, include_pad, p, add, use_mask
):
    n_img, n_c, height, width = dx.shape
    ho, wo = dy.shape[2], dy.shape[3]
    for idx in range(cuda.grid(1), n_img * n_c * height * width, cuda.gridsize(1)):
        w = idx % width
        h = (idx // width) % height
        c = (idx // (width * height)) % n_c
        n = idx // (width * height * n_c)
        # outputs y whose window [y*sh - ph, y*sh - ph + kh) holds h
        y_lo = max(0, -((-(h + ph - kh + 1)) // sh))
        y_hi = min(ho - 1, (h + ph) // sh)
        z_lo = max(0, -((-(w + pw - kw + 1)) // sw))
        z_hi = min(wo - 1, (w + pw) // sw)
        acc = 0.0
        for y in range(y_lo, y_hi + 1):
            hs = y * sh - ph
            he = min(hs + kh, eh)
            for z in range(z_lo, z_hi + 1):
                g = dy[n, c, y, z]
                if mode == 0 and use_mask:
                    if mask[n, c, y, z] == h * width + w:
                        acc += g
                    continue
                ws = z * sw - pw
                we = min(ws + kw, ew)
                if h >= he or w >= we:
                    continue  # beyond the padded end: not part of this window
                if mode == 0:  # no mask: is (h, w) the first position holding the maximum?
                    target = out[n, c, y, z]
                    first_h = -1
                    first_w = -1
                    for hh in range(max(hs, 0), min(he, height)):
                        for ww in range(max(ws, 0), min(we, width)):
                            if first_h < 0 and x[n, c, hh, ww] == target:
                                first_h = hh
                                first_w = ww
                    if first_h == h and first_w == w:
                        acc += g
                    continue
                if mode == 1:
                    if include_pad:
                        size = (he - hs) * (we - ws)
                    else:
                        size = (min(he, height) - max(hs, 0)) * (min(we, width) - max(ws, 0))
                    acc += g / size
                elif mode == 3:
                    r = out[n, c, y, z]
                    if r != 0:
                        acc += g * (x[n, c, h, w] / r) ** (p - 1)
                else:
                    acc += g
        if add:
            dx[n, c, h, w] += acc
        else:
            dx[n, c, h, w] = acc


__all__ = ["_pool_backward_cuda", "_pool_forward_cuda", "bind_cuda"]
