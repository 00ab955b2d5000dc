"""The roi ops' GPU backward: an item per dy element adding into d data atomically.

Why a module of its own. _roi_sampling.py holds what both devices run (the sampling
kernels, the roi ops' checks and registration); the GPU's backward takes another split,
so it lives here, imported where it is chosen (register_roi_op, and the backward
compute on a GPU context).

The split. The CPU's backward takes one input channel per item, walking every roi and
bin that reads that channel, so that no two items write one pixel (bins of overlapping
rois share pixels). Per channel, Mask R-CNN's FPN head (2 x 512 rois, 256 channels, 7x7
bins, 2x2 samples) is 256 threads of ~200k samples each: a fraction of one wave of an
H200's 132 SMs. Here, as MXNet's CUDA kernel does, an item is one dy element (roi,
channel, bin), ~13M items of 4 samples, adding into d data atomically (_atomic_grad.py
zeroes d data for a write request and gives float16 a float32 copy). Atomics add in no
fixed order, so the GPU's d data differs from the CPU's in rounding only.

    backward_bins_gpu(ctx, kernel, dx, dy, args, mode)
        # kernel(i, dx, dy, *args, mode) over the dy elements: roi_backward_bins for
        # ROIAlign and RROIAlign, PSROIPooling's own _psroi_backward_bins
"""

from __future__ import annotations

from typing import Any

from .. import kernel
from ..kernel import uindex
from ..kernel.launch import flat
from ._atomic_grad import atomic_target
from ._index_kernels import atomic_add
from ._roi_sampling import _G, sample_at


@kernel.parallel_for
def roi_backward_bins(item, dx, dy, geo, n_rois, n_batch, channels, height, width, c_out,
                      ph_n, pw_n, sensitive, mode):  # fmt: skip
    """dy element `item` = (r, c, ph, pw): dy / count spread onto its samples' pixels with
    atomic adds (GPU: bins of overlapping rois share pixels). dx starts zeroed for a write
    request (atomic_target), so `mode` is unused."""
    pw = item % pw_n
    t = item // pw_n
    ph = t % ph_n
    t = t // ph_n
    c = t % c_out
    r = t // c_out
    g = r * _G
    b = int(geo[g])
    if b < 0 or b >= n_batch:
        return
    ci = (c * ph_n + ph) * pw_n + pw if sensitive else c
    base = (b * channels + ci) * height * width
    grid_w = int(geo[g + 5])
    grid_h = int(geo[g + 6])
    d = dy[uindex(item)] / max(grid_h * grid_w, 1)
    step_h = geo[g + 4] / grid_h
    step_w = geo[g + 3] / grid_w
    for iy in range(grid_h):
        for ix in range(grid_w):
            ok, yl, xl, yh, xh, w1, w2, w3, w4 = sample_at(
                geo, g, ph, pw, iy, ix, step_h, step_w, height, width
            )
            if ok:
                atomic_add(dx, base + yl * width + xl, d * w1)
                atomic_add(dx, base + yl * width + xh, d * w2)
                atomic_add(dx, base + yh * width + xl, d * w3)
                atomic_add(dx, base + yh * width + xh, d * w4)


def backward_bins_gpu(
    ctx: Any, bins_kernel: Any, dx: Any, dy: Any, args: tuple[Any, ...], mode: int
) -> None:
    """dx (=|+=) the roi op's data gradient on ctx's GPU: bins_kernel(i, dx, dy, *args,
    mode) over the dy elements, adding atomically into dx (zeroed first for a write)."""
    with atomic_target(ctx, dx, mode) as acc:
        bins_kernel.launch(ctx, dy.size, acc, flat(dy), *args, mode)
