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
float16 (GPU only) is read and written as it is; every product and sum is taken in
float64 (`np.float64(...)`: a bare 0.0 accumulator would stay float16 on the CUDA
simulator, where a Python float is weak) and rounded once at the store.

Two sums are long and have few outputs: a depthwise layer's weight gradient (288 weights
for 32 channels of 3x3, each a sum over every image and position) and any bias gradient.
On a GPU the first runs on slices of output rows into partial sums that a reduction adds
(`weight_grad_gpu`), the second on the reduction kernels (`bias_grad`), so that they
fill the device instead of running a thread per output.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import kernel
from ...kernel import scratch
from ...kernel.launch import ADD, WRITE, divmod_index, flat, run_rows, store


def geometry(s: Any) -> tuple[int, ...]:
    """The kernels' size arguments from a ConvShape: groups, input, output and window sizes."""
    w, d = s.win, s.depth
    return (
        s.groups, s.c, s.d, s.h, s.w, s.f, d.do, w.ho, w.wo,
        d.kd, w.kh, w.kw, d.sd, w.sh, w.sw, d.pd, w.ph, w.pw, d.dd, w.dh, w.dw,
    )  # fmt: skip


@kernel.device_function
def unravel(idx, d1, d2, d3):
    """(rest, i1, i2, i3): idx = ((rest*d1 + i1)*d2 + i2)*d3 + i3, the last index fastest
    (32-bit divisions where the sizes allow: divmod_index)."""
    r, i3 = divmod_index(idx, d3)
    r, i2 = divmod_index(r, d2)
    rest, i1 = divmod_index(r, d1)
    return rest, i1, i2, i3


@kernel.parallel_for
def conv_forward(
    idx, x, w, bias, out, has_bias, mode,
    groups, n_c, depth, height, width, n_f, do, ho, wo,
    kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw,
):  # fmt: skip
    r, v, y, z = unravel(idx, do, ho, wo)
    n, f = divmod_index(r, n_f)
    cg = n_c // groups
    c0 = (f // (n_f // groups)) * cg
    acc = np.float64(0.0)
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
                        acc += np.float64(x[xrow + col]) * w[wrow + j]
    if has_bias:
        acc += bias[f]
    store(out, idx, acc, mode)


@kernel.device_function
def _tap_hit(pos, pad, tap, dil, stride, size):
    """The output index whose window puts tap `tap` on input `pos`, or -1."""
    t = pos + pad - tap * dil
    if t < 0:
        return -1
    q, rem = divmod_index(t, stride)
    if rem != 0 or q >= size:
        return -1
    return q


@kernel.parallel_for
def conv_data_grad(
    idx, dy, w, bias, dx, has_bias, mode,
    groups, n_c, depth, height, width, n_f, do, ho, wo,
    kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw,
):  # fmt: skip
    r, u, h, col = unravel(idx, depth, height, width)
    n, c = divmod_index(r, n_c)
    cg = n_c // groups
    fg = n_f // groups
    g = c // cg
    cc = c - g * cg
    acc = np.float64(0.0)
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
                        np.float64(dy[(((n * n_f + f) * do + v) * ho + y) * wo + z])
                        * w[(((f * cg + cc) * kd + a) * kh + i) * kw + j]
                    )
    if has_bias:
        acc += bias[c]
    store(dx, idx, acc, mode)


@kernel.parallel_for
def conv_weight_grad(
    idx, dy, x, dwt, n_img, mode, per,
    groups, n_c, depth, height, width, n_f, do, ho, wo,
    kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw,
):  # fmt: skip
    # idx = s * nw + k: weight element k's sum over the output rows (n, v, y) numbered
    # s * per to (s + 1) * per - 1 (per >= N * Do * Ho: all of them, and idx = k)
    cg = n_c // groups
    nw = n_f * cg * kd * kh * kw
    s = idx // nw
    r, a, i, j = unravel(idx - s * nw, kd, kh, kw)
    cc = r % cg
    f = r // cg
    c = (f // (n_f // groups)) * cg + cc
    acc = np.float64(0.0)
    for row in range(s * per, min((s + 1) * per, n_img * do * ho)):
        t, y = divmod_index(row, ho)
        n, v = divmod_index(t, do)
        u = v * sd - pd + a * dd
        h = y * sh - ph + i * dh
        if u < 0 or u >= depth or h < 0 or h >= height:
            continue
        xrow = (((n * n_c + c) * depth + u) * height + h) * width
        grow = (((n * n_f + f) * do + v) * ho + y) * wo
        for z in range(wo):
            col = z * sw - pw + j * dw
            if col >= 0 and col < width:
                acc += np.float64(dy[grow + z]) * x[xrow + col]
    store(dwt, idx, acc, mode)


@kernel.parallel_for
def channel_sum(f, dy, db, n_img, n_f, inner, mode):
    """db[f] (=|+=) sum over images and positions of dy[n, f, :] (a bias gradient)."""
    acc = np.float64(0.0)
    for n in range(n_img):
        base = (n * n_f + f) * inner
        for p in range(inner):
            acc += np.float64(dy[base + p])
    store(db, f, acc, mode)


# -- GPU launchers: sums over images and positions split across the device ---------------

#: the weight gradient's sums are cut into slices of output rows until about this many
#: work items share them (a weight element each, per slice): an H100's or H200's threads
#: at full occupancy (132 SMs x 2048). A work item's loop waits on its loads in turn, so
#: only more items in flight hide the memory's latency; at 1 << 16 MobileNet's first
#: depthwise layer (batch 64) ran ~2 blocks per SM, each thread 3584 products in a row
WEIGHT_GRAD_ITEMS = 1 << 18


def weight_grad_slices(n_weights: int, rows: int) -> tuple[int, int]:
    """(slices, rows per slice) for conv_weight_grad on a GPU: one slice when there are
    weight elements enough to fill the device (a wide deconvolution's), more
    when few elements each sum a long range (a depthwise layer's 3x3 taps over every
    image: 288 work items for 32 channels, each summing N*H*W products)."""
    want = min(rows, -(-WEIGHT_GRAD_ITEMS // max(n_weights, 1)))
    if want <= 1:
        return 1, max(rows, 1)
    per = -(-rows // want)
    return -(-rows // per), per


def weight_grad_gpu(
    ctx: Any, name: str, dy: Any, x: Any, dwt: Any, n_img: int, mode: int,
    geo: tuple[int, ...],
) -> None:  # fmt: skip
    """dwt (=|+=) the weight gradient of the convolution `geo`: conv_weight_grad on
    slices of output rows into float64 partial sums, then their sum over the slices
    (_reduce_cuda), or in one pass when there is no need to slice."""
    from nnvmpy.ops import _reduce_cuda

    do, ho = geo[6], geo[7]
    rows = n_img * do * ho
    slices, per = weight_grad_slices(dwt.size, rows)
    if slices == 1:
        run_rows(ctx, name, conv_weight_grad, dwt.size, dy, x, dwt, n_img, mode, per, *geo)
        return
    part = scratch.empty(ctx, slices * dwt.size, np.float64)
    run_rows(ctx, name, conv_weight_grad, part.size, dy, x, part, n_img, WRITE, per, *geo)
    parts = part.reshape(slices, dwt.size)
    _reduce_cuda.reduce_gpu(ctx, dwt, mode == ADD, parts, (1, dwt.size), "sum", 1.0, name)


def bias_grad(
    ctx: Any, name: str, dy: Any, db: Any, n_img: int, n_f: int, inner: int, mode: int
) -> None:
    """db (=|+=) dy (N, F, inner) summed over images and positions. On a GPU on the
    reduction kernels, which read dy coalesced and split long sums across blocks: a
    thread per channel (channel_sum, the CPU's) would leave 64 threads summing 800k
    elements each for ResNet's first layer at batch 64."""
    if isinstance(db, np.ndarray):
        run_rows(ctx, name, channel_sum, n_f, dy, db, n_img, n_f, inner, mode)
        return
    from nnvmpy.ops import _reduce_cuda

    x = flat(dy).reshape(n_img, n_f, inner)
    _reduce_cuda.reduce_gpu(ctx, db, mode == ADD, x, (1, n_f, 1), "sum", 1.0, name)


__all__ = [
    "WEIGHT_GRAD_ITEMS",
    "bias_grad",
    "channel_sum",
    "conv_data_grad",
    "conv_forward",
    "conv_weight_grad",
    "geometry",
    "store",
    "unravel",
    "weight_grad_gpu",
    "weight_grad_slices",
]
