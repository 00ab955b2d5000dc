"""Direct convolution kernels, one body for both devices: the GPU's Deconvolution, and its
Convolution where im2col + GEMM does not pay (depthwise, tiny; _im2col_cuda.use_gemm).

Arrays are flat views of (N, C, D, H, W) data, (F, C/g, kd, kh, kw) weights and
(N, F, Do, Ho, Wo) outputs (1-D and 2-D convolutions have D = Do = kd = 1). With
v = out depth, y = out row, z = out column, and tap (a, i, j):

    forward      out[n, f, v, y, z] = sum_{c, a, i, j} x[n, c, v*sd-pd+a*dd, ..] w[f, c', a, i, j]
    data grad    dx[n, c, u, h, w]  = the same sum gathered from every (f, a, i, j) that read it
    weight grad  dw[f, c', a, i, j] = sum_{n, v, y, z} dy[n, f, v, y, z] x[n, c, v*sd-pd+a*dd, ...]
    bias grad    db[f]              = sum_{n, v, y, z} dy[n, f, v, y, z]

(taps in the padding read zero). Each work item owns the element it produces, so there
are no atomics and `req` holds per element. Deconvolution's forward is the data-gradient
body (with an optional bias: `has_bias`), its backward the forward body and the weight
gradient body with the roles of data and output gradient exchanged. `geometry` is the
tuple of 21 sizes every body takes (see `geometry`). Correctness first: no shared-memory
tiling. The CPU runs these bodies only in tests (its fast paths are _conv_cpu.py).
"""

from __future__ import annotations

from typing import Any

from ... import kernel
from ...kernel.launch import store


def geometry(s: Any) -> tuple[int, ...]:
    """The kernels' size arguments from a ConvShape: groups, input, output and window sizes."""
    w, d = s.win, s.depth
    return (
        s.groups, s.c, s.d, s.h, s.w, s.f, d.do, w.ho, w.wo,
        d.kd, w.kh, w.kw, d.sd, w.sh, w.sw, d.pd, w.ph, w.pw, d.dd, w.dh, w.dw,
    )  # fmt: skip


@kernel.device_function
def unravel(idx, d1, d2, d3):
    """(rest, i1, i2, i3): idx = ((rest*d1 + i1)*d2 + i2)*d3 + i3, the last index fastest."""
    i3 = idx % d3
    r = idx // d3
    i2 = r % d2
    r = r // d2
    return r // d1, r % d1, i2, i3


@kernel.parallel_for
def conv_forward(
    idx, x, w, bias, out, has_bias, mode,
    groups, n_c, depth, height, width, n_f, do, ho, wo,
    kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw,
):  # fmt: skip
    r, v, y, z = unravel(idx, do, ho, wo)
    f = r % n_f
    n = r // n_f
    cg = n_c // groups
    c0 = (f // (n_f // groups)) * cg
    acc = 0.0
    for c in range(cg):
        xvol = (n * n_c + c0 + c) * depth
        wvol = (f * cg + c) * kd
        for a in range(kd):
            u = v * sd - pd + a * dd
            if u < 0 or u >= depth:
                continue
            for i in range(kh):
                h = y * sh - ph + i * dh
                if h < 0 or h >= height:
                    continue
                xrow = ((xvol + u) * height + h) * width
                wrow = ((wvol + a) * kh + i) * kw
                for j in range(kw):
                    col = z * sw - pw + j * dw
                    if col >= 0 and col < width:
                        acc += x[xrow + col] * w[wrow + j]
    if has_bias:
        acc += bias[f]
    store(out, idx, acc, mode)


@kernel.device_function
def _tap_hit(pos, pad, tap, dil, stride, size):
    """The output index whose window puts tap `tap` on input `pos`, or -1."""
    t = pos + pad - tap * dil
    if t < 0 or t % stride != 0 or t // stride >= size:
        return -1
    return t // stride


@kernel.parallel_for
def conv_data_grad(
    idx, dy, w, bias, dx, has_bias, mode,
    groups, n_c, depth, height, width, n_f, do, ho, wo,
    kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw,
):  # fmt: skip
    r, u, h, col = unravel(idx, depth, height, width)
    c = r % n_c
    n = r // n_c
    cg = n_c // groups
    fg = n_f // groups
    g = c // cg
    cc = c - g * cg
    acc = 0.0
    for a in range(kd):
        v = _tap_hit(u, pd, a, dd, sd, do)
        if v < 0:
            continue
        for i in range(kh):
            y = _tap_hit(h, ph, i, dh, sh, ho)
            if y < 0:
                continue
            for j in range(kw):
                z = _tap_hit(col, pw, j, dw, sw, wo)
                if z < 0:
                    continue
                for f in range(g * fg, (g + 1) * fg):
                    acc += (
                        dy[(((n * n_f + f) * do + v) * ho + y) * wo + z]
                        * w[(((f * cg + cc) * kd + a) * kh + i) * kw + j]
                    )
    if has_bias:
        acc += bias[c]
    store(dx, idx, acc, mode)


@kernel.parallel_for
def conv_weight_grad(
    idx, dy, x, dwt, n_img, mode,
    groups, n_c, depth, height, width, n_f, do, ho, wo,
    kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw,
):  # fmt: skip
    cg = n_c // groups
    r, a, i, j = unravel(idx, kd, kh, kw)
    cc = r % cg
    f = r // cg
    c = (f // (n_f // groups)) * cg + cc
    acc = 0.0
    for n in range(n_img):
        for v in range(do):
            u = v * sd - pd + a * dd
            if u < 0 or u >= depth:
                continue
            for y in range(ho):
                h = y * sh - ph + i * dh
                if h < 0 or h >= height:
                    continue
                xrow = (((n * n_c + c) * depth + u) * height + h) * width
                grow = (((n * n_f + f) * do + v) * ho + y) * wo
                for z in range(wo):
                    col = z * sw - pw + j * dw
                    if col >= 0 and col < width:
                        acc += dy[grow + z] * x[xrow + col]
    store(dwt, idx, acc, mode)


@kernel.parallel_for
def channel_sum(f, dy, db, n_img, n_f, inner, mode):
    """db[f] (=|+=) sum over images and positions of dy[n, f, :] (a bias gradient)."""
    acc = 0.0
    for n in range(n_img):
        base = (n * n_f + f) * inner
        for p in range(inner):
            acc += dy[base + p]
    store(db, f, acc, mode)


__all__ = [
    "channel_sum",
    "conv_data_grad",
    "conv_forward",
    "conv_weight_grad",
    "geometry",
    "store",
    "unravel",
]
