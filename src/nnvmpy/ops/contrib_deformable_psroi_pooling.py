"""DeformablePSROIPooling: position-sensitive roi pooling whose bins shift (Deformable R-FCN).

`_contrib_DeformablePSROIPooling(data (N, C, H, W), rois (R, 5), trans (R, 2K, Q, Q),
spatial_scale, output_dim D, group_size G, pooled_size P, part_size Q (0: P),
sample_per_part S=1, trans_std=0, no_trans=False)` -> output (R, D, P, P), and a hidden
second output top_count (R, D, P, P): how many samples each bin averaged.

A roi row (batch index, x1, y1, x2, y2) has its corners rounded (half away from zero),
x2 and y2 made inclusive (+1), scaled by spatial_scale and shifted by -0.5 (pixel
centres); its extent is at least 0.1 each way and is cut into P x P bins of size
(bw, bh). Output channel c belongs to class k = c // (D / K) (K = 1 without trans);
bin (ph, pw) reads input channel (c G + gh) G + gw, gh = floor(ph G / P),
gw = floor(pw G / P), and is shifted by trans_std * (trans[r, 2k, qh, qw] * roi width,
trans[r, 2k + 1, qh, qw] * roi height), qh = floor(ph Q / P), qw = floor(pw Q / P).
From the shifted bin corner the bin takes S x S samples (w + iw bw / S, h + ih bh / S);
a sample outside [-0.5, W - 0.5] x [-0.5, H - 0.5] is skipped, the others are clamped
onto the map and read bilinearly (floor and ceil neighbours). A bin averages its samples
(0 when none). A roi whose batch index is outside [0, N) gives zeros (MXNet reads out of
bounds). spatial_scale and trans_std are rounded to float32, as MXNet stores them.

Gradients, as MXNet's: `data` gets each bin's dy / count spread with the bilinear
weights; `trans` gets the bilinear blend's slope in x (y) at each sample, times
trans_std, roi width (height) and dy / count — the slope of the unclamped blend, so a
sample clamped onto the border still contributes; the rois get zero. Host loops (numba)
in float64; on the GPU through host staging (_host_staged.host_compute), as this contrib
op is rarely used.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import kernel
from ..attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FListInputNames,
    FListOutputNames,
    FNumVisibleOutputs,
    TIsBackward,
)
from ..base import InferError
from ..graph.grad import make_grad_node
from ..infer import shape_assign, shape_str
from ..param import Parameter, field
from ..registry import NodeAttrs, register_op
from ._host_staged import host_compute
from ._roi_sampling import ROI_ROW, check_roi_inputs, rounded_rois
from .contrib_bbox import same_float_type

OP = "_contrib_DeformablePSROIPooling"
BACKWARD = "_backward_contrib_DeformablePSROIPooling"


class DeformablePSROIPoolingParam(Parameter):
    spatial_scale = field(
        float,
        lower_bound=0.0,
        upper_bound=1.0,
        describe="Ratio of input feature map height (or w) to raw image height (or w). Equals "
        "the reciprocal of total stride in convolutional layers",
    )
    output_dim = field(int, lower_bound=1, describe="fix output dim")
    group_size = field(int, lower_bound=1, describe="fix group size")
    pooled_size = field(int, lower_bound=1, describe="fix pooled size")
    part_size = field(int, default=0, lower_bound=0, describe="fix part size")
    sample_per_part = field(int, default=1, lower_bound=0, describe="fix samples per part")
    trans_std = field(
        float, default=0.0, lower_bound=0.0, upper_bound=1.0, describe="fix transition std"
    )
    no_trans = field(bool, default=False, describe="Whether to disable trans parameter.")


def _part(p: DeformablePSROIPoolingParam) -> int:
    return p.part_size or p.pooled_size


def _input_names(attrs: NodeAttrs) -> list[str]:
    return ["data", "rois"] + ([] if attrs.parsed.no_trans else ["trans"])


def _check_trans(p: DeformablePSROIPoolingParam, trans: Any, rois: Any) -> None:
    """trans must be (>= R, 2K, Q, Q) with K dividing output_dim (MXNet reads it so)."""
    if trans is None:
        return
    q = _part(p)
    what = f"{OP}: input 'trans' has shape {shape_str(trans)}"
    if len(trans) != 4:
        raise InferError(f"{what}; expected 4-D (num_rois, 2 x classes, {q}, {q})")
    pairs = trans[1]
    if pairs is not None and (pairs == 0 or pairs % 2 or p.output_dim % (pairs // 2)):
        raise InferError(
            f"{what}; its axis 1 must be 2 x classes, an even count whose half divides "
            f"output_dim = {p.output_dim}"
        )
    if any(d is not None and d != q for d in trans[2:]):
        raise InferError(f"{what}; expected its last two axes to be part_size = {q}")
    if trans[0] is not None and rois is not None and rois[0] is not None and trans[0] < rois[0]:
        raise InferError(f"{what}; expected a row for each of the {rois[0]} rois")


def _shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    p = attrs.parsed
    data, rois = in_shapes[0], in_shapes[1]
    check_roi_inputs(OP, data, rois, ROI_ROW)
    need = p.output_dim * p.group_size * p.group_size
    if data is not None and data[1] is not None and data[1] < need:
        raise InferError(
            f"{OP}: input 'data' has {data[1]} channels; expected at least output_dim x "
            f"group_size^2 = {p.output_dim} x {p.group_size}^2 = {need}"
        )
    trans = None if p.no_trans else in_shapes[2]
    _check_trans(p, trans, rois)
    if rois is None:
        return False
    size = (rois[0], p.output_dim, p.pooled_size, p.pooled_size)
    shape_assign(out_shapes, 0, size, f"{OP}: output 'output'")
    shape_assign(out_shapes, 1, size, f"{OP}: output 'top_count'")
    return data is not None and (p.no_trans or trans is not None)


def _type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    return same_float_type(OP, _input_names(attrs))(attrs, in_types, out_types)


@kernel.cpu_kernel(parallel=False)
def _deformable_loops(
    data, rois, trans, dy, out, count, d_data, d_trans, scale, trans_std, group, part,
    samples, no_trans, backward
):  # pragma: no cover - compiled  # fmt: skip
    """Forward (backward False): out and count (R, D, P, P) from data. Backward: d_data
    and d_trans += the spread of dy (count is the forward's). The rois' corners come
    rounded (_roi_sampling.rounded_rois)."""
    n_batch, _, height, width = data.shape
    n_rois, out_dim, pooled, _ = out.shape
    classes = 1 if no_trans else trans.shape[1] // 2
    per_class = out_dim // classes
    for r in range(n_rois):
        b = int(rois[r, 0])
        if b < 0 or b >= n_batch:
            continue
        x0 = rois[r, 1] * scale - 0.5
        y0 = rois[r, 2] * scale - 0.5
        roi_w = max((rois[r, 3] + 1.0) * scale - 0.5 - x0, 0.1)
        roi_h = max((rois[r, 4] + 1.0) * scale - 0.5 - y0, 0.1)
        bin_w = roi_w / pooled
        bin_h = roi_h / pooled
        for c in range(out_dim):
            k = c // per_class
            for ph in range(pooled):
                qh = math.floor(ph / pooled * part)
                gh = min(max(ph * group // pooled, 0), group - 1)
                for pw in range(pooled):
                    qw = math.floor(pw / pooled * part)
                    gw = min(max(pw * group // pooled, 0), group - 1)
                    tx = 0.0 if no_trans else trans[r, 2 * k, qh, qw] * trans_std
                    ty = 0.0 if no_trans else trans[r, 2 * k + 1, qh, qw] * trans_std
                    w0 = pw * bin_w + x0 + tx * roi_w
                    h0 = ph * bin_h + y0 + ty * roi_h
                    ci = (c * group + gh) * group + gw
                    g = 0.0
                    if backward:
                        if count[r, c, ph, pw] <= 0:
                            continue
                        g = dy[r, c, ph, pw] / count[r, c, ph, pw]
                    total = 0.0
                    n = 0
                    for ih in range(samples):
                        for iw in range(samples):
                            w = w0 + iw * bin_w / samples
                            h = h0 + ih * bin_h / samples
                            if w < -0.5 or w > width - 0.5 or h < -0.5 or h > height - 0.5:
                                continue
                            w = min(max(w, 0.0), width - 1.0)
                            h = min(max(h, 0.0), height - 1.0)
                            xl = math.floor(w)
                            xh = math.ceil(w)
                            yl = math.floor(h)
                            yh = math.ceil(h)
                            lx = w - xl
                            ly = h - yl
                            v00 = data[b, ci, yl, xl]
                            v01 = data[b, ci, yh, xl]
                            v10 = data[b, ci, yl, xh]
                            v11 = data[b, ci, yh, xh]
                            n += 1
                            if not backward:
                                total += (
                                    (1 - lx) * (1 - ly) * v00
                                    + (1 - lx) * ly * v01
                                    + lx * (1 - ly) * v10
                                    + lx * ly * v11
                                )
                                continue
                            d_data[b, ci, yl, xl] += (1 - lx) * (1 - ly) * g
                            d_data[b, ci, yh, xl] += (1 - lx) * ly * g
                            d_data[b, ci, yl, xh] += lx * (1 - ly) * g
                            d_data[b, ci, yh, xh] += lx * ly * g
                            if no_trans:
                                continue
                            slope_x = v11 * ly + v10 * (1 - ly) - v01 * ly - v00 * (1 - ly)
                            slope_y = v11 * lx + v01 * (1 - lx) - v10 * lx - v00 * (1 - lx)
                            d_trans[r, 2 * k, qh, qw] += slope_x * trans_std * g * roi_w
                            d_trans[r, 2 * k + 1, qh, qw] += slope_y * trans_std * g * roi_h
                    if not backward:
                        count[r, c, ph, pw] = n
                        out[r, c, ph, pw] = total / n if n > 0 else 0.0


def _run(p: DeformablePSROIPoolingParam, data: np.ndarray, rois: np.ndarray, trans: Any,
         dy: Any) -> tuple[np.ndarray, ...]:  # fmt: skip
    """(out, count) when dy is None, else (out, count, d data, d trans), all float64."""
    size = (rois.shape[0], p.output_dim, p.pooled_size, p.pooled_size)
    out, count = np.zeros(size), np.zeros(size)
    x = np.ascontiguousarray(data, np.float64)
    r = rounded_rois(rois)
    t = np.zeros((1, 2, 1, 1)) if p.no_trans else np.ascontiguousarray(trans, np.float64)
    # MXNet keeps both as float32 parameters
    scale, std = float(np.float32(p.spatial_scale)), float(np.float32(p.trans_std))
    args = (scale, std, p.group_size, _part(p), p.sample_per_part, p.no_trans)
    _deformable_loops(x, r, t, out, out, count, out, t, *args, False)
    if dy is None:
        return out, count
    d_data, d_trans = np.zeros(x.shape), np.zeros(t.shape)
    g = np.ascontiguousarray(dy, np.float64)
    _deformable_loops(x, r, t, g, out, count, d_data, d_trans, *args, True)
    return out, count, d_data, d_trans


def deformable_psroi_pooling_np(
    p: DeformablePSROIPoolingParam, data: np.ndarray, rois: np.ndarray, *trans: np.ndarray
) -> list[np.ndarray]:
    """[output, top_count] for host arrays (trans absent when no_trans)."""
    out, count = _run(p, data, rois, trans[0] if trans else None, None)
    return [out, count]


def deformable_psroi_pooling_grad_np(
    p: DeformablePSROIPoolingParam,
    dy: np.ndarray,
    data: np.ndarray,
    rois: np.ndarray,
    *trans: np.ndarray,
) -> list[np.ndarray]:
    """[d data, d rois (zero), d trans (unless no_trans)]."""
    _, _, d_data, d_trans = _run(p, data, rois, trans[0] if trans else None, dy)
    return [d_data, np.zeros(rois.shape)] + ([] if p.no_trans else [d_trans])


def _gradient(node: Any, ograds: list[Any]) -> list[Any]:
    """One backward node reads dy of the output (top_count has no gradient) and the inputs."""
    return make_grad_node(BACKWARD, node, [ograds[0], *node.inputs])


_forward = host_compute(OP, deformable_psroi_pooling_np)
(
    register_op(OP)
    .describe(
        "Performs deformable position-sensitive region-of-interest pooling on inputs.\n"
        "The DeformablePSROIPooling operation is described in https://arxiv.org/abs/1703.06211 "
        ".batch_size will change to the number of region bounding boxes after "
        "DeformablePSROIPooling"
    )
    .set_attr_parser(DeformablePSROIPoolingParam)
    .set_num_inputs(lambda attrs: 2 if attrs.parsed.no_trans else 3)
    .set_num_outputs(2)
    .set_attr(FListInputNames, _input_names)
    .set_attr(FListOutputNames, lambda attrs: ["output", "top_count"])
    .set_attr(FNumVisibleOutputs, lambda attrs: 1)
    .set_attr(FInferShape, _shape)
    .set_attr(FInferType, _type)
    .set_attr(FCompute_cpu, _forward)
    .set_attr(FCompute_gpu, _forward)
    .set_attr(FGradient, _gradient)
    .add_argument(
        "data", "NDArray-or-Symbol", "Input data to the pooling operator, a 4D Feature maps"
    )
    .add_argument(
        "rois",
        "NDArray-or-Symbol",
        "Bounding box coordinates, a 2D array of [[batch_index, x1, y1, x2, y2]]. (x1, y1) "
        "and (x2, y2) are top left and down right corners of designated region of interest. "
        "batch_index indicates the index of corresponding image in the input data",
    )
    .add_argument("trans", "NDArray-or-Symbol", "transition parameter")
    .add_arguments(DeformablePSROIPoolingParam.fields())
)
_backward = host_compute(BACKWARD, deformable_psroi_pooling_grad_np)
(
    register_op(BACKWARD)
    .describe(
        "Backward of DeformablePSROIPooling: inputs (dy, data, rois[, trans]), outputs "
        "(d data, d rois = 0[, d trans])."
    )
    .set_attr_parser(DeformablePSROIPoolingParam)
    .set_num_inputs(lambda attrs: 3 if attrs.parsed.no_trans else 4)
    .set_num_outputs(lambda attrs: 2 if attrs.parsed.no_trans else 3)
    .set_attr(TIsBackward, True)
    .set_attr(FCompute_cpu, _backward)
    .set_attr(FCompute_gpu, _backward)
)
