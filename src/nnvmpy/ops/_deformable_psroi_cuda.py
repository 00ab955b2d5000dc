"""DeformablePSROIPooling's GPU-only parts: the per-roi table made on the device, and the
data gradient as an item per dy element adding atomically.

Why a module of their own. The op's kernels for both devices (forward, the CPU's data
gradient, the trans gradient) and the device functions they share are in
_deformable_psroi_kernels.py, the op's definition in contrib_deformable_psroi_pooling.py;
what only a GPU runs lives here, imported by the op's compute functions when the context
is a GPU.

The table. Each roi's (batch index, x0, y0, width, height) row was made by NumPy on the
host (_roi_table), so every GPU forward and backward copied the rois down, waited on the
stream and uploaded the table back. `table_rows` (a thread per roi) writes the host's row
with the same float64 operations in the same order, `host_product` keeping NVVM from
fusing a corner's product and sum into an FMA (_roi_table_cuda.py).

The data gradient. The CPU takes an input channel per item, walking the bins of every
roi that read it, so that no two items write one pixel: the op's benchmark (300 rois,
7 x 7 bins over 490 channels) gave a GPU 490 threads of 300 rois' samples each. Here, as
MXNet's CUDA kernel does, an item is one dy element (roi, channel, bin): 300 x 10 x 49 =
147k items of S x S samples each, adding into d data atomically (_atomic_grad.py zeroes
d data for a write request and gives float16 a float32 copy). Atomics add in no fixed
order, so the GPU's d data differs from the CPU's in rounding only.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import kernel
from ..kernel import uindex
from ..kernel.launch import flat
from ..kernel.unfused import product as host_product
from ._atomic_grad import atomic_target
from ._deformable_psroi_kernels import ROW, bin_origin, group_of, neighbours, sample, sample_count
from ._index_kernels import atomic_add
from ._roi_table_cuda import at_least, batch_index, device_table, rounded_corner
from .contrib_deformable_psroi_pooling import DeformablePSROIPoolingParam
from .nn._conv_cuda import unravel


@kernel.parallel_for
def table_rows(r, table, rois, scale):
    """Row r of _roi_table, made on the device from roi r: the same float64 operations in
    the same order (host_product: no FMA may round a corner differently from NumPy)."""
    k = r * 5
    x0 = host_product(rounded_corner(float(rois[uindex(k + 1)])), scale) - 0.5
    y0 = host_product(rounded_corner(float(rois[uindex(k + 2)])), scale) - 0.5
    x1 = host_product(rounded_corner(float(rois[uindex(k + 3)])) + 1.0, scale) - 0.5
    y1 = host_product(rounded_corner(float(rois[uindex(k + 4)])) + 1.0, scale) - 0.5
    g = r * ROW
    table[uindex(g)] = batch_index(float(rois[uindex(k)]))
    table[uindex(g + 1)] = x0
    table[uindex(g + 2)] = y0
    table[uindex(g + 3)] = at_least(x1 - x0, 0.1)
    table[uindex(g + 4)] = at_least(y1 - y0, 0.1)


def roi_table_gpu(ctx: Any, p: DeformablePSROIPoolingParam, rois: Any) -> Any:
    """_roi_table made on ctx's GPU from the rois there (no host copy), flat."""
    scale = float(np.float32(p.spatial_scale))
    return device_table(ctx, table_rows, rois, ROW, scale)


@kernel.parallel_for
def data_grad_bins(
    item, d_data, dy, table, trans, n_rois, n_batch, channels, height, width, out_dim,
    pooled, group, part, samples, pairs, trans_std, no_trans, mode,
):  # fmt: skip
    """dy element item = ((r D + c) P + ph) P + pw (the GPU's data gradient): its dy /
    count spread onto its samples' pixels with the bilinear weights, atomically (bins of
    overlapping rois share pixels). d_data starts zeroed for a write request
    (atomic_target), so `mode` is unused."""
    r, c, ph, pw = unravel(item, out_dim, pooled, pooled)
    b = int(table[r * ROW])
    if b < 0 or b >= n_batch:
        return
    k = c // (out_dim // (1 if no_trans else pairs // 2))
    x0, y0, bin_w, bin_h, _rw, _rh = bin_origin(
        table, trans, r, k, ph, pw, pairs, pooled, part, trans_std, no_trans
    )
    n = sample_count(x0, y0, bin_w, bin_h, samples, height, width)
    if n == 0:
        return
    g = dy[uindex(item)] / n
    ci = (c * group + group_of(ph, pooled, group)) * group + group_of(pw, pooled, group)
    base = (b * channels + ci) * height * width
    for ih in range(samples):
        for iw in range(samples):
            inside, x, y = sample(x0, y0, bin_w, bin_h, ih, iw, samples, height, width)
            if inside:
                xl, xh, yl, yh, lx, ly = neighbours(x, y, width)
                atomic_add(d_data, base + yl * width + xl, (1 - lx) * (1 - ly) * g)
                atomic_add(d_data, base + yh * width + xl, (1 - lx) * ly * g)
                atomic_add(d_data, base + yl * width + xh, lx * (1 - ly) * g)
                atomic_add(d_data, base + yh * width + xh, lx * ly * g)


def data_grad_gpu(ctx: Any, d_data: Any, dy: Any, shared: tuple[Any, ...], mode: int) -> None:
    """d data (=|+=) its gradient on ctx's GPU, an item per dy element; `shared` the
    kernel's arguments after dy (as the CPU's _dpsroi_data_grad takes them)."""
    with atomic_target(ctx, d_data, mode) as acc:
        data_grad_bins.launch(ctx, dy.size, acc, flat(dy), *shared, mode)
