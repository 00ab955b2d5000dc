"""PSROIPooling: position-sensitive average pooling of regions (R-FCN), contrib.

`_contrib_PSROIPooling(data (N, C, H, W), rois (R, 5), spatial_scale, output_dim,
pooled_size, group_size=0)` -> (R, output_dim, P, P), P = pooled_size, G = group_size or
P, C = output_dim G G. A roi row (batch index, x1, y1, x2, y2) has its corners rounded
(half away from zero), x2 and y2 made inclusive (+1), then scaled; its extent is at least
0.1. Bin (ph, pw) covers rows [floor(ph h / P + y1), ceil((ph + 1) h / P + y1)) clipped to
the map, columns likewise, and output channel c of it averages input channel
(c G + gh) G + gw with gh = floor(ph G / P), gw = floor(pw G / P). An empty bin gives 0.
(MXNet's docstring says max pooling; the op averages, as R-FCN does.)

The gradient spreads each bin's dy evenly over its pixels; the rois get a zero gradient.
Kernels for both devices (_roi_sampling.roi_kernel_computes): forward one bin of every
output channel per item, backward one input channel per item on the CPU (race-free: only
its item writes a channel) and one dy element per item on the GPU, adding atomically
(_atomic_grad.py: a GPU wants far more items than channels). They replace a serial host
loop, which the GPU reached by copying the feature map to the host and back. The rounded
rois are made by NumPy on the CPU and by a thread per roi on a GPU (_roi_table_cuda.py).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import kernel
from ..base import InferError
from ..infer import shape_assign
from ..kernel import uindex
from ..kernel.launch import WRITE, store
from ..param import Parameter, field
from ..registry import NodeAttrs
from ._index_kernels import atomic_add
from ._roi_sampling import ROI_ROW, check_roi_inputs, register_roi_op, rounded_rois, zero_channel
from ._roi_table_cuda import device_table, rounded_rows

OP = "_contrib_PSROIPooling"


class PSROIPoolingParam(Parameter):
    spatial_scale = field(
        float,
        describe="Ratio of input feature map height (or w) to raw image height (or w). Equals "
        "the reciprocal of total stride in convolutional layers",
    )
    output_dim = field(int, lower_bound=1, describe="fix output dim")
    pooled_size = field(int, lower_bound=1, describe="fix pooled size")
    group_size = field(int, default=0, lower_bound=0, describe="fix group size")


def _group(p: PSROIPoolingParam) -> int:
    return p.group_size or p.pooled_size


def _psroi_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    p = attrs.parsed
    data, rois = in_shapes
    check_roi_inputs(OP, data, rois, ROI_ROW)
    g = _group(p)
    if data is not None and data[1] is not None and data[1] != p.output_dim * g * g:
        raise InferError(
            f"{OP}: input 'data' has {data[1]} channels; expected output_dim x group_size^2 = "
            f"{p.output_dim} x {g}^2 = {p.output_dim * g * g}"
        )
    if rois is None:
        return False
    size = (rois[0], p.output_dim, p.pooled_size, p.pooled_size)
    return shape_assign(out_shapes, 0, size, f"{OP}: output") and data is not None


@kernel.device_function
def _bin(rois, r, ph, pw, pooled, group, scale, height, width, n_batch):
    """(b, h0, h1, w0, w1, gh, gw): bin (ph, pw) of roi r (rows of rounded corners) covers
    rows [h0, h1) and columns [w0, w1) of image b (-1: out of range) and reads the
    channel group (gh, gw)."""
    k = r * 5
    b = int(rois[k])
    if b < 0 or b >= n_batch:
        b = -1
    x0 = rois[k + 1] * scale
    y0 = rois[k + 2] * scale
    bin_h = max((rois[k + 4] + 1.0) * scale - y0, 0.1) / pooled
    bin_w = max((rois[k + 3] + 1.0) * scale - x0, 0.1) / pooled
    # int(): numba-cuda's math.floor/ceil return floats
    h0 = min(max(int(math.floor(ph * bin_h + y0)), 0), height)  # noqa: RUF046
    h1 = min(max(int(math.ceil((ph + 1) * bin_h + y0)), 0), height)  # noqa: RUF046
    w0 = min(max(int(math.floor(pw * bin_w + x0)), 0), width)  # noqa: RUF046
    w1 = min(max(int(math.ceil((pw + 1) * bin_w + x0)), 0), width)  # noqa: RUF046
    gh = min(max(ph * group // pooled, 0), group - 1)
    gw = min(max(pw * group // pooled, 0), group - 1)
    return b, h0, h1, w0, w1, gh, gw


@kernel.parallel_for
def _psroi_forward(item, out, data, rois, n_batch, channels, height, width, out_dim, pooled,
                   _pw, group, scale, mode):  # fmt: skip
    # bin `item` = (r, ph, pw) of every output channel: the mean of its pixels (0 if empty)
    pw = item % pooled
    t = item // pooled
    ph = t % pooled
    r = t // pooled
    b, h0, h1, w0, w1, gh, gw = _bin(rois, r, ph, pw, pooled, group, scale, height, width,
                                     n_batch)  # fmt: skip
    first = (r * out_dim * pooled + ph) * pooled + pw
    for c in range(out_dim):
        v = 0.0
        if b >= 0 and h0 < h1 and w0 < w1:
            base = (b * channels + (c * group + gh) * group + gw) * height * width
            for h in range(h0, h1):
                for w in range(w0, w1):
                    v += data[uindex(base + h * width + w)]
            v = v / ((h1 - h0) * (w1 - w0))
        store(out, first + c * pooled * pooled, v, mode)


@kernel.parallel_for
def _psroi_backward(ci, dx, dy, rois, n_rois, n_batch, channels, height, width, out_dim,
                    pooled, _pw, group, scale, mode):  # fmt: skip
    # input channel ci (of every image): the bins of output channel ci // G^2 whose group
    # is ci's spread dy / area evenly over their pixels; only this item writes channel ci
    plane = height * width
    if mode == WRITE:
        zero_channel(dx, ci, n_batch, channels, plane)
    c = ci // (group * group)
    gh = (ci // group) % group
    gw = ci % group
    # the bins of group (gh, gw): ph * G // P == gh for ph in [ceil(gh P / G), ...)
    ph0 = (gh * pooled + group - 1) // group
    ph1 = ((gh + 1) * pooled + group - 1) // group
    pw0 = (gw * pooled + group - 1) // group
    pw1 = ((gw + 1) * pooled + group - 1) // group
    for r in range(n_rois):
        for ph in range(ph0, ph1):
            for pw in range(pw0, pw1):
                b, h0, h1, w0, w1, bh, bw = _bin(rois, r, ph, pw, pooled, group, scale, height,
                                                 width, n_batch)  # fmt: skip
                if b < 0 or bh != gh or bw != gw or h0 >= h1 or w0 >= w1:
                    continue
                g = dy[uindex(((r * out_dim + c) * pooled + ph) * pooled + pw)]
                g = g / ((h1 - h0) * (w1 - w0))
                base = (b * channels + ci) * plane
                for h in range(h0, h1):
                    for w in range(w0, w1):
                        dx[uindex(base + h * width + w)] += g


@kernel.parallel_for
def _psroi_backward_bins(item, dx, dy, rois, n_rois, n_batch, channels, height, width, out_dim,
                         pooled, _pw, group, scale, mode):  # fmt: skip
    # dy element `item` = (r, c, ph, pw): dy / area added atomically (GPU) onto each pixel of
    # its bin in channel (c G + gh) G + gw; dx starts zeroed for a write (mode is unused)
    pw = item % pooled
    t = item // pooled
    ph = t % pooled
    t = t // pooled
    c = t % out_dim
    r = t // out_dim
    b, h0, h1, w0, w1, gh, gw = _bin(rois, r, ph, pw, pooled, group, scale, height, width,
                                     n_batch)  # fmt: skip
    if b < 0 or h0 >= h1 or w0 >= w1:
        return
    g = dy[uindex(item)] / ((h1 - h0) * (w1 - w0))
    base = (b * channels + (c * group + gh) * group + gw) * height * width
    for h in range(h0, h1):
        for w in range(w0, w1):
            atomic_add(dx, base + h * width + w, g)


def _table(p: PSROIPoolingParam, rois: np.ndarray) -> np.ndarray:
    return rounded_rois(rois)


def _device_table(ctx: Any, p: PSROIPoolingParam, rois: Any) -> Any:
    """_table made on ctx's GPU from the rois there (no host copy), flat."""
    return device_table(ctx, rounded_rows, rois, 5)


def _extra(p: PSROIPoolingParam) -> tuple[Any, ...]:
    return (_group(p), float(p.spatial_scale))


register_roi_op(
    OP,
    param=PSROIPoolingParam,
    describe=(
        "Performs position-sensitive region-of-interest pooling on inputs (R-FCN). Resize "
        "bounding box coordinates by spatial_scale and crop input feature maps accordingly. "
        "Each bin of the cropped region is average-pooled from its own group of channels "
        "to a fixed size output indicated by pooled_size. batch_size will change to the "
        "number of region bounding boxes after PSROIPooling"
    ),
    infer_shape=_psroi_shape,
    kernels=(_table, _psroi_forward, _psroi_backward, _extra, _psroi_backward_bins),
    device_table=_device_table,
    data_doc="Input data to the pooling operator, a 4D Feature maps",
    rois_doc=(
        "Bounding box coordinates, a 2D array of [[batch_index, x1, y1, x2, y2]]. (x1, y1) "
        "and (x2, y2) are top left and down right corners of designated region of interest. "
        "batch_index indicates the index of corresponding image in the input data"
    ),
)
