"""DeformablePSROIPooling's kernels for both devices (contrib_deformable_psroi_pooling.py
has the op: its parameters, checks, shape and type rules and compute functions; the
module docstring there gives the formulas these kernels follow).

Why a module of their own. With them the op's file was past the house limit of ~400
lines; they are what a reader compares with MXNet's kernels, and what the GPU-only parts
(_deformable_psroi_cuda.py: the table made on the device, the data gradient with
atomics) share with the CPU, so they stand apart from both the op's definition and the
GPU-only code.

Kernels (kernel.parallel_for, one body for both devices, over the per-roi table of ROW
columns the op makes): forward_bins one bin per item; data_grad_channels (the CPU's data
gradient) one input channel per item, walking the bins of every roi that read it (bins
of overlapping rois share pixels, so no two items write one pixel); trans_grad_cells one
trans cell per item, summing over the bins it shifts and their class's channels.
Positions and sums are float64 scalars, stored in the arrays' type (the CPU takes
float16 as float32 copies). They replaced one serial numba host loop in float64 that a
GPU context reached by copying to the host and back: 300 rois, 7 x 7 bins of 4 x 4
samples, 10 classes over 2 x 490 x 38 x 50 float32 on two cores, forward 27.1 -> 11.0
ms, forward and backward 110 -> 40 (MXNet 1.9.1's CPU op 47.5 and 112.5).
"""

from __future__ import annotations

from .. import kernel
from ..kernel import uindex
from ..kernel.launch import WRITE, store
from ._roi_sampling import zero_channel
from .nn._conv_cuda import unravel

ROW = 5  # a roi's table row: batch index, left, top, width, height (on the map)


@kernel.device_function
def cell(ph, pooled, part):
    """The trans cell row (column) of bin row (column) ph: floor(ph / P * Q)."""
    return int(ph / pooled * part)


@kernel.device_function
def group_of(ph, pooled, group):
    """The position-sensitive group row (column) of bin row (column) ph."""
    return min(max(ph * group // pooled, 0), group - 1)


@kernel.device_function
def bin_origin(table, trans, r, k, ph, pw, pairs, pooled, part, trans_std, no_trans):
    """(x, y, bin_w, bin_h, roi_w, roi_h): bin (ph, pw) of roi r's top-left corner, shifted
    by class k's trans cell, and the bin's and the roi's extents."""
    g = r * ROW
    roi_w = table[g + 3]
    roi_h = table[g + 4]
    bin_w = roi_w / pooled
    bin_h = roi_h / pooled
    tx = 0.0
    ty = 0.0
    if not no_trans:
        at = ((r * pairs + 2 * k) * part + cell(ph, pooled, part)) * part + cell(pw, pooled, part)
        tx = trans[uindex(at)] * trans_std
        ty = trans[uindex(at + part * part)] * trans_std
    return (
        pw * bin_w + table[g + 1] + tx * roi_w,
        ph * bin_h + table[g + 2] + ty * roi_h,
        bin_w,
        bin_h,
        roi_w,
        roi_h,
    )


@kernel.device_function
def sample(x0, y0, bin_w, bin_h, ih, iw, samples, height, width):
    """(inside, x, y): sample (ih, iw) of a bin from (x0, y0), clamped onto the map; not
    inside (skipped) beyond [-0.5, W - 0.5] x [-0.5, H - 0.5], or at NaN (a NaN roi or
    trans: no index is made from it)."""
    x = x0 + iw * bin_w / samples
    y = y0 + ih * bin_h / samples
    if not (x >= -0.5 and x <= width - 0.5 and y >= -0.5 and y <= height - 0.5):
        return False, 0.0, 0.0
    return True, min(max(x, 0.0), width - 1.0), min(max(y, 0.0), height - 1.0)


@kernel.device_function
def sample_count(x0, y0, bin_w, bin_h, samples, height, width):
    """How many of a bin's samples lie on the map (what it averages)."""
    n = 0
    for ih in range(samples):
        for iw in range(samples):
            inside, _x, _y = sample(x0, y0, bin_w, bin_h, ih, iw, samples, height, width)
            if inside:
                n += 1
    return n


@kernel.device_function
def neighbours(x, y, width):
    """(xl, xh, yl, yh, lx, ly) for x, y >= 0 on the map: floor and ceil neighbours."""
    xl = int(x)
    yl = int(y)
    xh = xl if x == xl else xl + 1
    yh = yl if y == yl else yl + 1
    return xl, xh, yl, yh, x - xl, y - yl


@kernel.parallel_for
def forward_bins(
    item, out, count, data, table, trans, n_batch, channels, height, width, out_dim,
    pooled, group, part, samples, pairs, trans_std, no_trans, mode, mode_count,
):  # fmt: skip
    """Bin item = ((r D + c) P + ph) P + pw: the mean of its samples and their count (0
    and 0 for a roi whose batch index is out of range)."""
    r, c, ph, pw = unravel(item, out_dim, pooled, pooled)
    b = int(table[r * ROW])
    total = 0.0
    n = 0
    if b >= 0 and b < n_batch:
        k = c // (out_dim // (1 if no_trans else pairs // 2))
        x0, y0, bin_w, bin_h, _rw, _rh = bin_origin(
            table, trans, r, k, ph, pw, pairs, pooled, part, trans_std, no_trans
        )
        ci = (c * group + group_of(ph, pooled, group)) * group + group_of(pw, pooled, group)
        base = (b * channels + ci) * height * width
        for ih in range(samples):
            for iw in range(samples):
                inside, x, y = sample(x0, y0, bin_w, bin_h, ih, iw, samples, height, width)
                if inside:
                    xl, xh, yl, yh, lx, ly = neighbours(x, y, width)
                    n += 1
                    total += (
                        (1 - lx) * (1 - ly) * data[uindex(base + yl * width + xl)]
                        + (1 - lx) * ly * data[uindex(base + yh * width + xl)]
                        + lx * (1 - ly) * data[uindex(base + yl * width + xh)]
                        + lx * ly * data[uindex(base + yh * width + xh)]
                    )
    store(out, item, total / n if n > 0 else 0.0, mode)
    store(count, item, n, mode_count)


@kernel.parallel_for
def data_grad_channels(
    ci, d_data, dy, table, trans, n_rois, n_batch, channels, height, width, out_dim,
    pooled, group, part, samples, pairs, trans_std, no_trans, mode,
):  # fmt: skip
    """Input channel ci (of every image): dy / count of each bin reading it, spread onto
    its samples' pixels with the bilinear weights. Only this item writes channel ci (the
    CPU's; the GPU's is _deformable_psroi_cuda.data_grad_bins)."""
    plane = height * width
    if mode == WRITE:
        zero_channel(d_data, ci, n_batch, channels, plane)
    c = ci // (group * group)
    if c >= out_dim:  # read by no output channel
        return
    gh = (ci // group) % group
    gw = ci % group
    k = c // (out_dim // (1 if no_trans else pairs // 2))
    for r in range(n_rois):
        b = int(table[r * ROW])
        if b < 0 or b >= n_batch:
            continue
        base = (b * channels + ci) * plane
        for ph in range(pooled):
            if group_of(ph, pooled, group) != gh:
                continue
            for pw in range(pooled):
                if group_of(pw, pooled, group) != gw:
                    continue
                x0, y0, bin_w, bin_h, _rw, _rh = bin_origin(
                    table, trans, r, k, ph, pw, pairs, pooled, part, trans_std, no_trans
                )
                n = sample_count(x0, y0, bin_w, bin_h, samples, height, width)
                if n == 0:
                    continue
                g = dy[uindex(((r * out_dim + c) * pooled + ph) * pooled + pw)] / n
                for ih in range(samples):
                    for iw in range(samples):
                        inside, x, y = sample(x0, y0, bin_w, bin_h, ih, iw, samples, height, width)
                        if inside:
                            xl, xh, yl, yh, lx, ly = neighbours(x, y, width)
                            d_data[uindex(base + yl * width + xl)] += (1 - lx) * (1 - ly) * g
                            d_data[uindex(base + yh * width + xl)] += (1 - lx) * ly * g
                            d_data[uindex(base + yl * width + xh)] += lx * (1 - ly) * g
                            d_data[uindex(base + yh * width + xh)] += lx * ly * g


@kernel.parallel_for
def trans_grad_cells(
    item, d_trans, dy, data, table, trans, n_rois, n_batch, channels, height, width,
    out_dim, pooled, group, part, samples, pairs, trans_std, mode,
):  # fmt: skip
    """Trans cell item = ((r K + k) Q + qh) Q + qw, both its x and y entries: the blend's
    slope at each sample of every bin of class k that the cell shifts, times trans_std,
    the roi's extent and the bin's dy / count (0 for rows past the rois)."""
    classes = pairs // 2
    r, k, qh, qw = unravel(item, classes, part, part)
    gx = 0.0
    gy = 0.0
    b = int(table[r * ROW]) if r < n_rois else -1
    if b >= 0 and b < n_batch:
        per_class = out_dim // classes
        plane = height * width
        for ph in range(pooled):
            if cell(ph, pooled, part) != qh:
                continue
            gh = group_of(ph, pooled, group)
            for pw in range(pooled):
                if cell(pw, pooled, part) != qw:
                    continue
                x0, y0, bin_w, bin_h, roi_w, roi_h = bin_origin(
                    table, trans, r, k, ph, pw, pairs, pooled, part, trans_std, False
                )
                n = sample_count(x0, y0, bin_w, bin_h, samples, height, width)
                if n == 0:
                    continue
                gw = group_of(pw, pooled, group)
                for ih in range(samples):
                    for iw in range(samples):
                        inside, x, y = sample(x0, y0, bin_w, bin_h, ih, iw, samples, height, width)
                        if not inside:
                            continue
                        xl, xh, yl, yh, lx, ly = neighbours(x, y, width)
                        for c in range(k * per_class, (k + 1) * per_class):
                            g = dy[uindex(((r * out_dim + c) * pooled + ph) * pooled + pw)] / n
                            base = (b * channels + (c * group + gh) * group + gw) * plane
                            v00 = data[uindex(base + yl * width + xl)]
                            v01 = data[uindex(base + yh * width + xl)]
                            v10 = data[uindex(base + yl * width + xh)]
                            v11 = data[uindex(base + yh * width + xh)]
                            slope_x = v11 * ly + v10 * (1 - ly) - v01 * ly - v00 * (1 - ly)
                            slope_y = v11 * lx + v01 * (1 - lx) - v10 * lx - v00 * (1 - lx)
                            gx += slope_x * trans_std * g * roi_w
                            gy += slope_y * trans_std * g * roi_h
    at = ((r * pairs + 2 * k) * part + qh) * part + qw
    store(d_trans, at, gx, mode)
    store(d_trans, at + part * part, gy, mode)


__all__ = [
    "ROW",
    "bin_origin",
    "cell",
    "data_grad_channels",
    "forward_bins",
    "group_of",
    "neighbours",
    "sample",
    "sample_count",
    "trans_grad_cells",
]
