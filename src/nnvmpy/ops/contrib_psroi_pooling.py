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
Numba loops on the host; on the GPU through _host_staged.host_compute.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import kernel
from ..base import InferError
from ..infer import shape_assign
from ..param import Parameter, field
from ..registry import NodeAttrs
from ._roi_sampling import ROI_ROW, check_roi_inputs, register_roi_op, rounded_rois

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


@kernel.cpu_kernel(parallel=False)
def _psroi_loops(data, rois, dy, out, scale, group, backward):  # pragma: no cover - compiled
    """Forward (backward False): out (R, D, P, P) from data. Backward: data += spread dy.
    The rois' corners come rounded (_roi_sampling.rounded_rois)."""
    n_batch, _, height, width = data.shape
    n_rois, out_dim, pooled, _ = dy.shape if backward else out.shape
    for r in range(n_rois):
        b = int(rois[r, 0])
        if b < 0 or b >= n_batch:
            continue
        x0 = rois[r, 1] * scale
        y0 = rois[r, 2] * scale
        roi_w = max((rois[r, 3] + 1.0) * scale - x0, 0.1)
        roi_h = max((rois[r, 4] + 1.0) * scale - y0, 0.1)
        bin_h = roi_h / pooled
        bin_w = roi_w / pooled
        for ph in range(pooled):
            h0 = min(max(math.floor(ph * bin_h + y0), 0), height)
            h1 = min(max(math.ceil((ph + 1) * bin_h + y0), 0), height)
            gh = min(max(ph * group // pooled, 0), group - 1)
            for pw in range(pooled):
                w0 = min(max(math.floor(pw * bin_w + x0), 0), width)
                w1 = min(max(math.ceil((pw + 1) * bin_w + x0), 0), width)
                gw = min(max(pw * group // pooled, 0), group - 1)
                if h1 <= h0 or w1 <= w0:
                    continue
                area = (h1 - h0) * (w1 - w0)
                for c in range(out_dim):
                    ci = (c * group + gh) * group + gw
                    if backward:
                        g = dy[r, c, ph, pw] / area
                        for h in range(h0, h1):
                            for w in range(w0, w1):
                                data[b, ci, h, w] += g
                    else:
                        total = 0.0
                        for h in range(h0, h1):
                            for w in range(w0, w1):
                                total += data[b, ci, h, w]
                        out[r, c, ph, pw] = total / area


def psroi_pooling_np(p: PSROIPoolingParam, data: np.ndarray, rois: np.ndarray) -> list:
    out = np.zeros((rois.shape[0], p.output_dim, p.pooled_size, p.pooled_size))
    x = np.ascontiguousarray(data, np.float64)
    r = rounded_rois(rois)
    _psroi_loops(x, r, out, out, p.spatial_scale, _group(p), False)
    return [out]


def psroi_pooling_grad_np(
    p: PSROIPoolingParam, dy: np.ndarray, data: np.ndarray, rois: np.ndarray
) -> list:
    dx = np.zeros(data.shape)
    r = rounded_rois(rois)
    g = np.ascontiguousarray(dy, np.float64)
    _psroi_loops(dx, r, g, dx, p.spatial_scale, _group(p), True)
    return [dx, np.zeros(rois.shape)]


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
    forward=psroi_pooling_np,
    backward=psroi_pooling_grad_np,
    data_doc="Input data to the pooling operator, a 4D Feature maps",
    rois_doc=(
        "Bounding box coordinates, a 2D array of [[batch_index, x1, y1, x2, y2]]. (x1, y1) "
        "and (x2, y2) are top left and down right corners of designated region of interest. "
        "batch_index indicates the index of corresponding image in the input data"
    ),
)
