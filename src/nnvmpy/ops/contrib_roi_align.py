"""ROIAlign: average of bilinear samples over each bin of each region (contrib).

`_contrib_ROIAlign(data (N, C, H, W), rois (R, 5), pooled_size=(PH, PW), spatial_scale,
sample_ratio=-1, position_sensitive=False, aligned=False)` -> (R, C', PH, PW). A roi row
is (batch index, x1, y1, x2, y2) in image coordinates; scaled by spatial_scale (and, when
aligned, shifted by -0.5 so pixel centres line up) it is cut into PH x PW bins. Each bin
averages a g_h x g_w grid of samples at the sub-bin centres, g = sample_ratio when > 0,
else ceil(bin size). A sample is bilinear in the four pixels around it: 0 when it lies
more than one pixel outside the map, clamped onto the border otherwise. Without
`aligned`, a roi is at least 1 x 1. With position_sensitive, C' = C / (PH PW) and bin
(ph, pw) of output channel c reads input channel (c PH + ph) PW + pw (R-FCN); else C' = C.
A roi whose batch index is negative gives zeros.

The gradient spreads each bin's dy back onto the sampled pixels with the same weights;
the rois get a zero gradient (as in MXNet). The sampling kernels (_roi_sampling.py, shared
with RROIAlign) run on either device; each roi's geometry is made by NumPy on the CPU
(roi_geometry) and by a thread per roi on a GPU (_geometry_rows: _roi_table_cuda.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import kernel
from ..base import InferError
from ..infer import shape_assign
from ..kernel import uindex
from ..kernel.unfused import product as host_product
from ..param import Parameter, field
from ..param import Shape as ShapeField
from ..registry import NodeAttrs
from ._roi_sampling import (
    GEOMETRY,
    ROI_ROW,
    batch_indices,
    check_roi_inputs,
    pooled_hw,
    register_roi_op,
    sample_grid,
)
from ._roi_table_cuda import at_least, batch_index, device_table, sample_grid_of

OP = "_contrib_ROIAlign"
_G = len(GEOMETRY)


class ROIAlignParam(Parameter):
    pooled_size = field(
        ShapeField, describe="ROI Align output roi feature map height and width: (h, w)"
    )
    spatial_scale = field(
        float,
        describe="Ratio of input feature map height (or w) to raw image height (or w). Equals "
        "the reciprocal of total stride in convolutional layers",
    )
    sample_ratio = field(
        int,
        default=-1,
        describe="Optional sampling ratio of ROI align, using adaptive size by default.",
    )
    position_sensitive = field(
        bool,
        default=False,
        describe="Whether to perform position-sensitive RoI pooling. PSRoIPooling is first "
        "proposaled by R-FCN and it can reduce the input channels by ph*pw times, where "
        "(ph, pw) is the pooled_size",
    )
    aligned = field(
        bool,
        default=False,
        describe="Center-aligned ROIAlign introduced in Detectron2. To enable, set aligned to "
        "True.",
    )


def _roi_align_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    p = attrs.parsed
    ph, pw = pooled_hw(OP, p.pooled_size)
    data, rois = in_shapes
    check_roi_inputs(OP, data, rois, ROI_ROW)
    if data is None or rois is None:
        return False
    channels = data[1]
    if p.position_sensitive and channels is not None:
        if channels % (ph * pw):
            raise InferError(
                f"{OP}: position_sensitive needs the {channels} channels of 'data' to be a "
                f"multiple of pooled height x width = {ph * pw}"
            )
        channels //= ph * pw
    return shape_assign(out_shapes, 0, (rois[0], channels, ph, pw), f"{OP}: output")


def roi_geometry(p: ROIAlignParam, rois: np.ndarray, pooled: tuple[int, int]) -> np.ndarray:
    """The rows of _roi_sampling.GEOMETRY for (batch, x1, y1, x2, y2) rois."""
    rois = rois.astype(np.float64)
    shift = 0.5 if p.aligned else 0.0
    x0 = rois[:, 1] * p.spatial_scale - shift
    y0 = rois[:, 2] * p.spatial_scale - shift
    roi_w = rois[:, 3] * p.spatial_scale - shift - x0
    roi_h = rois[:, 4] * p.spatial_scale - shift - y0
    if not p.aligned:  # a roi is at least one pixel
        roi_w, roi_h = np.maximum(roi_w, 1.0), np.maximum(roi_h, 1.0)
    bin_h, bin_w = roi_h / pooled[0], roi_w / pooled[1]
    if p.sample_ratio > 0:
        grid_h = grid_w = np.full(len(rois), float(p.sample_ratio))
    else:
        grid_h, grid_w = sample_grid(bin_h), sample_grid(bin_w)
    one, zero = np.ones(len(rois)), np.zeros(len(rois))
    batch = batch_indices(rois[:, 0])
    return np.stack([batch, x0, y0, bin_w, bin_h, grid_w, grid_h, one, zero, zero, zero], 1)


def roi_geometry_rows(p: ROIAlignParam, rois: np.ndarray) -> np.ndarray:
    """roi_geometry at the op's pooled size (register_roi_op's geometry)."""
    return roi_geometry(p, rois, pooled_hw(OP, p.pooled_size))


@kernel.parallel_for
def _geometry_rows(r, geo, rois, scale, shift, aligned, ratio, ph_n, pw_n):
    """Row r of roi_geometry, made on the device from roi r: the same float64 operations
    (host_product: no FMA may round a corner differently)."""
    k = r * 5
    x0 = host_product(float(rois[uindex(k + 1)]), scale) - shift
    y0 = host_product(float(rois[uindex(k + 2)]), scale) - shift
    roi_w = host_product(float(rois[uindex(k + 3)]), scale) - shift - x0
    roi_h = host_product(float(rois[uindex(k + 4)]), scale) - shift - y0
    if not aligned:
        roi_w = at_least(roi_w, 1.0)
        roi_h = at_least(roi_h, 1.0)
    bin_w = roi_w / pw_n
    bin_h = roi_h / ph_n
    g = r * _G
    geo[uindex(g)] = batch_index(float(rois[uindex(k)]))
    geo[uindex(g + 1)] = x0
    geo[uindex(g + 2)] = y0
    geo[uindex(g + 3)] = bin_w
    geo[uindex(g + 4)] = bin_h
    geo[uindex(g + 5)] = float(ratio) if ratio > 0 else sample_grid_of(bin_w)
    geo[uindex(g + 6)] = float(ratio) if ratio > 0 else sample_grid_of(bin_h)
    geo[uindex(g + 7)] = 1.0  # no rotation: cos 1, sin 0, about (0, 0)
    for c in range(8, 11):
        geo[uindex(g + c)] = 0.0


def device_geometry(ctx: Any, p: ROIAlignParam, rois: Any) -> Any:
    """roi_geometry_rows made on ctx's GPU from the rois there (no host copy), flat."""
    ph, pw = pooled_hw(OP, p.pooled_size)
    shift = 0.5 if p.aligned else 0.0
    args = (float(p.spatial_scale), shift, bool(p.aligned), int(p.sample_ratio), ph, pw)
    return device_table(ctx, _geometry_rows, rois, _G, *args)


register_roi_op(
    OP,
    param=ROIAlignParam,
    describe=(
        "This operator takes a 4D feature map as an input array and region proposals as "
        "`rois`, then align the feature map over sub-regions of input and produces a "
        "fixed-sized output array. This operator is typically used in Faster R-CNN & Mask "
        "R-CNN networks. If roi batchid is less than 0, it will be ignored, and the "
        "corresponding output will be set to 0.\n\n"
        "Different from ROI pooling, ROI Align removes the harsh quantization, properly "
        "aligning the extracted features with the input. RoIAlign computes the value of each "
        "sampling point by bilinear interpolation from the nearby grid points on the feature "
        "map. No quantization is performed on any coordinates involved in the RoI, its bins, "
        "or the sampling points. Then the feature map can be aggregated by avgpooling.\n\n"
        'References: He, Kaiming, et al. "Mask R-CNN." ICCV, 2017\n'
    ),
    infer_shape=_roi_align_shape,
    geometry=roi_geometry_rows,
    device_table=device_geometry,
    data_doc="Input data to the pooling operator, a 4D Feature maps",
    rois_doc="Bounding box coordinates, a 2D array, if batchid is less than 0, it will be ignored.",
)
