"""GPU Convolution: direct numba.cuda kernels, one thread per element it produces.

    forward      y[n, f, y, z]   = sum_{c in grp(f), i, j} x[n, c, hy+i*dh, hz+j*dw] w[f, c', i, j]
    data grad    dx[n, c, h, w]  = the same sum gathered from every (f, i, j) that read (h, w)
    weight grad  dw[f, c', i, j] = sum_{n, y, z} dy[n, f, y, z] x[n, c, hy + i*dh, hz + j*dw]

with hy = y*sh - ph, hz = z*sw - pw (taps in the padding read zero).
    bias grad    db[f]          = sum_{n, y, z} dy[n, f, y, z]

Each thread owns its output element, so there are no atomics and `req` is honoured per
element. Every kernel is a grid-stride loop (any launch size covers the work, which the
CUDA simulator relies on). Correctness first: no shared-memory tiling yet.
"""

from __future__ import annotations

from typing import Any

from ... import kernel
from ...kernel.cuda import get_cuda

# numba.cuda, bound on the first launch; the kernels must read it as a module global
# (the CUDA simulator swaps module globals that refer to numba.cuda for its fake).
cuda: Any = None


def bind_cuda() -> Any:
    """numba.cuda, imported on first use (a clear NNVMError when no GPU can run it)."""
    global cuda
    if cuda is None:
        cuda = get_cuda("Convolution")
    return cuda


@kernel.cuda_kernel
def _conv_forward_cuda(x, w, bias, out, has_bias, add, groups, kh, kw, sh, sw, ph, pw, dh, dw):
    n_img, n_f, ho, wo = out.shape
    height, width = x.shape[2], x.shape[3]
    cg = w.shape[1]
    fg = n_f // groups
    for idx in range(cuda.grid(1), n_img * n_f * ho * wo, cuda.gridsize(1)):
        z = idx % wo
        y = (idx // wo) % ho
        f = (idx // (wo * ho)) % n_f
        n = idx // (wo * ho * n_f)
        c0 = (f // fg) * cg
        acc = 0.0
        for c in range(cg):
            for i in range(kh):
                h = y * sh - ph + i * dh
                if h >= 0 and h < height:
                    for j in range(kw):
                        col = z * sw - pw + j * dw
                        if col >= 0 and col < width:
                            acc += x[n, c0 + c, h, col] * w[f, c, i, j]
        if has_bias:
            acc += bias[f]
        if add:
            out[n, f, y, z] += acc
        else:
            out[n, f, y, z] = acc


@kernel.cuda_kernel
def _conv_backward_data_cuda(dy, w, dx, add, groups, kh, kw, sh, sw, ph, pw, dh, dw):
    n_img, n_c, height, width = dx.shape
    n_f, ho, wo = dy.shape[1], dy.shape[2], dy.shape[3]
    cg = w.shape[1]
    fg = n_f // groups
    for idx in range(cuda.grid(1), n_img * n_c * height * width, cuda.gridsize(1)):
        col = idx % width
        h = (idx // width) % height
        c = (idx // (width * height)) % n_c
        n = idx // (width * height * n_c)
        g = c // cg
        cc = c - g * cg
        acc = 0.0
        for i in range(kh):
            ty = h + ph - i * dh
            if ty < 0 or ty % sh != 0 or ty // sh >= ho:
                continue
            y = ty // sh
            for j in range(kw):
                tz = col + pw - j * dw
                if tz < 0 or tz % sw != 0 or tz // sw >= wo:
                    continue
                z = tz // sw
                for f in range(g * fg, (g + 1) * fg):
                    acc += dy[n, f, y, z] * w[f, cc, i, j]
        if add:
            dx[n, c, h, col] += acc
        else:
            dx[n, c, h, col] = acc


@kernel.cuda_kernel
def _conv_backward_weight_cuda(dy, x, dwt, add, groups, kh, kw, sh, sw, ph, pw, dh, dw):
    n_f, cg = dwt.shape[0], dwt.shape[1]
    n_img, ho, wo = dy.shape[0], dy.shape[2], dy.shape[3]
    height, width = x.shape[2], x.shape[3]
    fg = n_f // groups
    for idx in range(cuda.grid(1), n_f * cg * kh * kw, cuda.gridsize(1)):
        j = idx % kw
        i = (idx // kw) % kh
        cc = (idx // (kw * kh)) % cg
        f = idx // (kw * kh * cg)
        c = (f // fg) * cg + cc
        acc = 0.0
        for n in range(n_img):
            for y in range(ho):
                h = y * sh - ph + i * dh
                if h < 0 or h >= height:
                    continue
                for z in range(wo):
                    col = z * sw - pw + j * dw
                    if col >= 0 and col < width:
                        acc += dy[n, f, y, z] * x[n, c, h, col]
        if add:
            dwt[f, cc, i, j] += acc
        else:
            dwt[f, cc, i, j] = acc


@kernel.cuda_kernel
def _conv_backward_bias_cuda(dy, db, add):
    n_img, n_f, ho, wo = dy.shape
    for f in range(cuda.grid(1), n_f, cuda.gridsize(1)):
        acc = 0.0
        for n in range(n_img):
            for y in range(ho):
                for z in range(wo):
                    acc += dy[n, f, y, z]
        if add:
            db[f] += acc
        else:
            db[f] = acc


__all__ = [
    "_conv_backward_bias_cuda",
    "_conv_backward_data_cuda",
    "_conv_backward_weight_cuda",
    "_conv_forward_cuda",
    "bind_cuda",
]
