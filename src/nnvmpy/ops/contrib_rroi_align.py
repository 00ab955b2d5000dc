"""RROIAlign: ROIAlign over rotated regions (contrib).

`_contrib_RROIAlign(data (N, C, H, W), rois (R, 6), pooled_size=(PH, PW), spatial_scale,
sampling_ratio=-1)` -> (R, C, PH, PW). A roi row is (batch index, centre x, centre y,
width, height, angle in degrees); scaled by spatial_scale, width and height at least 1,
its grid of PH x PW bins is laid around the centre and turned by the angle: grid point
(xx, yy) relative to the centre samples the map at
(xx cos t + yy sin t + cx, yy cos t - xx sin t + cy). Each bin averages g_h x g_w bilinear
samples (g = sampling_ratio when > 0, else ceil(bin size)); see _roi_sampling.py.
A roi whose batch index is negative gives zeros.

MXNet registers no gradient for it; here `data` gets the exact one (the samples' weights)
and the rois a zero gradient, as ROIAlign's. The sampling kernels run on either device;
each roi's geometry is made by NumPy on the CPU (rroi_geometry) and by a thread per roi
on a GPU (_geometry_rows, cos and sin in float64: _roi_table_cuda.py).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import kernel
from ..infer import shape_assign
from ..kernel import uindex
from ..kernel.unfused import product as host_product
from ..param import Parameter, field
from ..param import Shape as ShapeField
from ..registry import NodeAttrs
from ._roi_sampling import (
    GEOMETRY,
    batch_indices,
    check_roi_inputs,
    pooled_hw,
    register_roi_op,
    sample_grid,
)
from ._roi_table_cuda import at_least, batch_index, device_table, sample_grid_of

OP = "_contrib_RROIAlign"
_G = len(GEOMETRY)
_RADIANS = np.pi / 180.0  # a degree: np.deg2rad(x) is x * this
_ROW = ("batch index", "centre x", "centre y", "width", "height", "angle in degrees")


class RROIAlignParam(Parameter):
    pooled_size = field(ShapeField, describe="RROI align output shape (h,w) ")
    spatial_scale = field(
        float,
        describe="Ratio of input feature map height (or width) to raw image height (or width). "
        "Equals the reciprocal of total stride in convolutional layers",
    )
    sampling_ratio = field(
        int,
        default=-1,
        describe="Optional sampling ratio of RROI align, using adaptive size by default.",
    )


def _rroi_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    ph, pw = pooled_hw(OP, attrs.parsed.pooled_size)
    data, rois = in_shapes
    check_roi_inputs(OP, data, rois, _ROW)
    if data is None or rois is None:
        return False
    return shape_assign(out_shapes, 0, (rois[0], data[1], ph, pw), f"{OP}: output")


def rroi_geometry(p: RROIAlignParam, rois: np.ndarray) -> np.ndarray:
    """The rows of _roi_sampling.GEOMETRY for rotated rois."""
    rois = rois.astype(np.float64)
    ph, pw = pooled_hw(OP, p.pooled_size)
    cx, cy = rois[:, 1] * p.spatial_scale, rois[:, 2] * p.spatial_scale
    roi_w = np.maximum(rois[:, 3] * p.spatial_scale, 1.0)
    roi_h = np.maximum(rois[:, 4] * p.spatial_scale, 1.0)
    theta = np.deg2rad(rois[:, 5])
    bin_h, bin_w = roi_h / ph, roi_w / pw
    if p.sampling_ratio > 0:
        grid_h = grid_w = np.full(len(rois), float(p.sampling_ratio))
    else:
        grid_h, grid_w = sample_grid(bin_h), sample_grid(bin_w)
    batch = batch_indices(rois[:, 0])
    columns = [batch, -roi_w / 2, -roi_h / 2, bin_w, bin_h, grid_w, grid_h]
    return np.stack([*columns, np.cos(theta), np.sin(theta), cx, cy], axis=1)


@kernel.parallel_for
def _geometry_rows(r, geo, rois, scale, ratio, ph_n, pw_n):
    """Row r of rroi_geometry, made on the device from roi r in float64 (cos and sin
    CUDA's, within an ulp or two of NumPy's)."""
    k = r * 6
    roi_w = at_least(host_product(float(rois[uindex(k + 3)]), scale), 1.0)
    roi_h = at_least(host_product(float(rois[uindex(k + 4)]), scale), 1.0)
    theta = host_product(float(rois[uindex(k + 5)]), _RADIANS)
    bin_w = roi_w / pw_n
    bin_h = roi_h / ph_n
    g = r * _G
    geo[uindex(g)] = batch_index(float(rois[uindex(k)]))
    geo[uindex(g + 1)] = -roi_w / 2
    geo[uindex(g + 2)] = -roi_h / 2
    geo[uindex(g + 3)] = bin_w
    geo[uindex(g + 4)] = bin_h
    geo[uindex(g + 5)] = float(ratio) if ratio > 0 else sample_grid_of(bin_w)
    geo[uindex(g + 6)] = float(ratio) if ratio > 0 else sample_grid_of(bin_h)
    geo[uindex(g + 7)] = math.cos(theta)
    geo[uindex(g + 8)] = math.sin(theta)
    geo[uindex(g + 9)] = host_product(float(rois[uindex(k + 1)]), scale)
    geo[uindex(g + 10)] = host_product(float(rois[uindex(k + 2)]), scale)


def device_geometry(ctx: Any, p: RROIAlignParam, rois: Any) -> Any:
    """rroi_geometry made on ctx's GPU from the rois there (no host copy), flat."""
    ph, pw = pooled_hw(OP, p.pooled_size)
    args = (float(p.spatial_scale), int(p.sampling_ratio), ph, pw)
    return device_table(ctx, _geometry_rows, rois, _G, *args)


register_roi_op(
    OP,
    param=RROIAlignParam,
    describe=(
        "Performs Rotated ROI Align on the input array.\n\n"
        "This operator takes a 4D feature map as an input array and region proposals as "
        "`rois`, then align the feature map over sub-regions of input and produces a "
        "fixed-sized output array.\n\n"
        "Different from ROI Align, RROI Align uses rotated rois, which is suitable for text "
        "detection. RRoIAlign computes the value of each sampling point by bilinear "
        "interpolation from the nearby grid points on the rotated feature map. No "
        "quantization is performed on any coordinates involved in the RoI, its bins, or the "
        "sampling points. Then the feature map can be aggregated by avgpooling.\n\n"
        'References: Ma, Jianqi, et al. "Arbitrary-Oriented Scene Text Detection via '
        'Rotation Proposals." IEEE Transactions on Multimedia, 2018.\n'
    ),
    infer_shape=_rroi_shape,
    geometry=rroi_geometry,
    device_table=device_geometry,
    data_doc="Input data to the pooling operator, a 4D Feature maps",
    rois_doc="Bounding box coordinates, a 2D array",
)
