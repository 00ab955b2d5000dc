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
and the rois a zero gradient, as ROIAlign's. Host loops; on the GPU through
contrib_bbox.host_compute.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FListInputNames,
    TIsBackward,
)
from ..base import InferError
from ..graph.grad import make_grad_node
from ..infer import shape_assign, shape_str
from ..param import Parameter, field
from ..param import Shape as ShapeField
from ..registry import NodeAttrs, register_op
from ._roi_sampling import sample_backward, sample_forward
from .contrib_bbox import host_compute, same_float_type

OP = "_contrib_RROIAlign"
BACKWARD = "_backward_contrib_RROIAlign"


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


def pooled_hw(p: RROIAlignParam) -> tuple[int, int]:
    size = tuple(p.pooled_size)
    if len(size) != 2 or min(size) < 1:
        raise InferError(f"{OP}: pooled_size {size} must be two positive ints (h, w)")
    return size[0], size[1]


def _rroi_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    ph, pw = pooled_hw(attrs.parsed)
    data, rois = in_shapes
    if data is not None and len(data) != 4:
        raise InferError(f"{OP}: input 'data' has shape {shape_str(data)}; expected NCHW (4-D)")
    if rois is not None and (len(rois) != 2 or rois[1] not in (None, 6)):
        raise InferError(
            f"{OP}: input 'rois' has shape {shape_str(rois)}; expected (R, 6) rows of "
            "(batch index, centre x, centre y, width, height, angle in degrees)"
        )
    if data is None or rois is None:
        return False
    return shape_assign(out_shapes, 0, (rois[0], data[1], ph, pw), f"{OP}: output")


def rroi_geometry(p: RROIAlignParam, rois: np.ndarray) -> np.ndarray:
    """The rows of _roi_sampling.GEOMETRY for rotated rois."""
    rois = rois.astype(np.float64)
    ph, pw = pooled_hw(p)
    cx, cy = rois[:, 1] * p.spatial_scale, rois[:, 2] * p.spatial_scale
    roi_w = np.maximum(rois[:, 3] * p.spatial_scale, 1.0)
    roi_h = np.maximum(rois[:, 4] * p.spatial_scale, 1.0)
    theta = np.deg2rad(rois[:, 5])
    bin_h, bin_w = roi_h / ph, roi_w / pw
    if p.sampling_ratio > 0:
        grid_h = grid_w = np.full(len(rois), float(p.sampling_ratio))
    else:
        grid_h, grid_w = np.ceil(bin_h), np.ceil(bin_w)
    batch = np.trunc(rois[:, 0])
    columns = [batch, -roi_w / 2, -roi_h / 2, bin_w, bin_h, grid_w, grid_h]
    return np.stack([*columns, np.cos(theta), np.sin(theta), cx, cy], axis=1)


def rroi_align_np(p: RROIAlignParam, data: np.ndarray, rois: np.ndarray) -> list[np.ndarray]:
    shape = (rois.shape[0], data.shape[1], *pooled_hw(p))
    return [sample_forward(data, rroi_geometry(p, rois), shape, False)]


def rroi_align_grad_np(
    p: RROIAlignParam, dy: np.ndarray, data: np.ndarray, rois: np.ndarray
) -> list[np.ndarray]:
    dx = sample_backward(dy, rroi_geometry(p, rois), data.shape, False)
    return [dx, np.zeros(rois.shape)]


def _rroi_gradient(node: Any, ograds: list[Any]) -> list[Any]:
    return make_grad_node(BACKWARD, node, [ograds[0], *node.inputs])


_forward = host_compute(OP, rroi_align_np)
(
    register_op(OP)
    .describe(
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
    )
    .set_attr_parser(RROIAlignParam)
    .set_num_inputs(2)
    .set_num_outputs(1)
    .set_attr(FListInputNames, lambda attrs: ["data", "rois"])
    .set_attr(FInferShape, _rroi_shape)
    .set_attr(FInferType, same_float_type(OP, ("data", "rois")))
    .set_attr(FCompute_cpu, _forward)
    .set_attr(FCompute_gpu, _forward)
    .set_attr(FGradient, _rroi_gradient)
    .add_argument(
        "data", "NDArray-or-Symbol", "Input data to the pooling operator, a 4D Feature maps"
    )
    .add_argument("rois", "NDArray-or-Symbol", "Bounding box coordinates, a 2D array")
    .add_arguments(RROIAlignParam.fields())
)
_backward = host_compute(BACKWARD, rroi_align_grad_np)
(
    register_op(BACKWARD)
    .describe("Backward of RROIAlign: inputs (dy, data, rois), outputs (d data, d rois = 0).")
    .set_attr_parser(RROIAlignParam)
    .set_num_inputs(3)
    .set_num_outputs(2)
    .set_attr(TIsBackward, True)
    .set_attr(FCompute_cpu, _backward)
    .set_attr(FCompute_gpu, _backward)
)
