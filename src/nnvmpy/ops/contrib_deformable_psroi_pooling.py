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
sample clamped onto the border still contributes; the rois get zero.

Kernels (kernel.parallel_for, one body for both devices, over a per-roi table made by
NumPy on the CPU): the forward one bin per item; the CPU's data gradient one input
channel per item, walking the bins of every roi that read it (bins of overlapping rois
share pixels, so no two items write one pixel); the trans gradient one trans cell per
item, summing over the bins it shifts and their class's channels. A GPU makes the table
with a thread per roi (no host round trip of the rois) and takes the data gradient an
item per dy element, adding atomically: _deformable_psroi_cuda.py. Positions and sums
are float64 scalars, stored in the arrays' type (the CPU takes float16 as float32
copies). They replaced one serial numba host loop in float64 that a GPU context reached
by copying to the host and back: 300 rois, 7 x 7 bins of 4 x 4 samples, 10 classes over
2 x 490 x 38 x 50 float32 on two cores, forward 27.1 -> 11.0 ms, forward and backward
110 -> 40 (MXNet 1.9.1's CPU op 47.5 and 112.5).
"""

from __future__ import annotations

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
from ..kernel import uindex
from ..kernel.launch import NULL, WRITE, flat, is_gpu, req_code, store
from ..param import Parameter, field
from ..registry import NodeAttrs, register_op
from ._index_kernels import half_as_float32, zero
from ._roi_sampling import ROI_ROW, check_roi_inputs, rounded_rois, table_on, zero_channel
from .contrib_bbox import same_float_type
from .nn._conv_cuda import unravel

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


# --- kernels ------------------------------------------------------------------------------

_ROW = 5  # a roi's table row: batch index, left, top, width, height (on the map)


def _roi_table(p: DeformablePSROIPoolingParam, rois: np.ndarray) -> np.ndarray:
    """Each roi's (batch index, x0, y0, width, height): rounded corners, x2 and y2 made
    inclusive, scaled (spatial_scale as MXNet's float32) and shifted by -0.5."""
    r = rounded_rois(rois)
    scale = float(np.float32(p.spatial_scale))
    x0, y0 = r[:, 1] * scale - 0.5, r[:, 2] * scale - 0.5
    width = np.maximum((r[:, 3] + 1.0) * scale - 0.5 - x0, 0.1)
    height = np.maximum((r[:, 4] + 1.0) * scale - 0.5 - y0, 0.1)
    return np.stack([r[:, 0], x0, y0, width, height], axis=1)


@kernel.device_function
def _cell(ph, pooled, part):
    """The trans cell row (column) of bin row (column) ph: floor(ph / P * Q)."""
    return int(ph / pooled * part)


@kernel.device_function
def _group_of(ph, pooled, group):
    """The position-sensitive group row (column) of bin row (column) ph."""
    return min(max(ph * group // pooled, 0), group - 1)


@kernel.device_function
def _bin_origin(table, trans, r, k, ph, pw, pairs, pooled, part, trans_std, no_trans):
    """(x, y, bin_w, bin_h, roi_w, roi_h): bin (ph, pw) of roi r's top-left corner, shifted
    by class k's trans cell, and the bin's and the roi's extents."""
    g = r * _ROW
    roi_w = table[g + 3]
    roi_h = table[g + 4]
    bin_w = roi_w / pooled
    bin_h = roi_h / pooled
    tx = 0.0
    ty = 0.0
    if not no_trans:
        at = ((r * pairs + 2 * k) * part + _cell(ph, pooled, part)) * part + _cell(pw, pooled, part)
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
def _sample(x0, y0, bin_w, bin_h, ih, iw, samples, height, width):
    """(inside, x, y): sample (ih, iw) of a bin from (x0, y0), clamped onto the map; not
    inside (skipped) beyond [-0.5, W - 0.5] x [-0.5, H - 0.5], or at NaN (a NaN roi or
    trans: no index is made from it)."""
    x = x0 + iw * bin_w / samples
    y = y0 + ih * bin_h / samples
    if not (x >= -0.5 and x <= width - 0.5 and y >= -0.5 and y <= height - 0.5):
        return False, 0.0, 0.0
    return True, min(max(x, 0.0), width - 1.0), min(max(y, 0.0), height - 1.0)


@kernel.device_function
def _count(x0, y0, bin_w, bin_h, samples, height, width):
    """How many of a bin's samples lie on the map (what it averages)."""
    n = 0
    for ih in range(samples):
        for iw in range(samples):
            inside, _x, _y = _sample(x0, y0, bin_w, bin_h, ih, iw, samples, height, width)
            if inside:
                n += 1
    return n


@kernel.device_function
def _neighbours(x, y, width):
    """(xl, xh, yl, yh, lx, ly) for x, y >= 0 on the map: floor and ceil neighbours."""
    xl = int(x)
    yl = int(y)
    xh = xl if x == xl else xl + 1
    yh = yl if y == yl else yl + 1
    return xl, xh, yl, yh, x - xl, y - yl


@kernel.parallel_for
def _dpsroi_forward(
    item, out, count, data, table, trans, n_batch, channels, height, width, out_dim,
    pooled, group, part, samples, pairs, trans_std, no_trans, mode, mode_count,
):  # fmt: skip
    """Bin item = ((r D + c) P + ph) P + pw: the mean of its samples and their count (0
    and 0 for a roi whose batch index is out of range)."""
    r, c, ph, pw = unravel(item, out_dim, pooled, pooled)
    b = int(table[r * _ROW])
    total = 0.0
    n = 0
    if b >= 0 and b < n_batch:
        k = c // (out_dim // (1 if no_trans else pairs // 2))
        x0, y0, bin_w, bin_h, _rw, _rh = _bin_origin(
            table, trans, r, k, ph, pw, pairs, pooled, part, trans_std, no_trans
        )
        ci = (c * group + _group_of(ph, pooled, group)) * group + _group_of(pw, pooled, group)
        base = (b * channels + ci) * height * width
        for ih in range(samples):
            for iw in range(samples):
                inside, x, y = _sample(x0, y0, bin_w, bin_h, ih, iw, samples, height, width)
                if inside:
                    xl, xh, yl, yh, lx, ly = _neighbours(x, y, width)
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
def _dpsroi_data_grad(
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
        b = int(table[r * _ROW])
        if b < 0 or b >= n_batch:
            continue
        base = (b * channels + ci) * plane
        for ph in range(pooled):
            if _group_of(ph, pooled, group) != gh:
                continue
            for pw in range(pooled):
                if _group_of(pw, pooled, group) != gw:
                    continue
                x0, y0, bin_w, bin_h, _rw, _rh = _bin_origin(
                    table, trans, r, k, ph, pw, pairs, pooled, part, trans_std, no_trans
                )
                n = _count(x0, y0, bin_w, bin_h, samples, height, width)
                if n == 0:
                    continue
                g = dy[uindex(((r * out_dim + c) * pooled + ph) * pooled + pw)] / n
                for ih in range(samples):
                    for iw in range(samples):
                        inside, x, y = _sample(x0, y0, bin_w, bin_h, ih, iw, samples, height, width)
                        if inside:
                            xl, xh, yl, yh, lx, ly = _neighbours(x, y, width)
                            d_data[uindex(base + yl * width + xl)] += (1 - lx) * (1 - ly) * g
                            d_data[uindex(base + yh * width + xl)] += (1 - lx) * ly * g
                            d_data[uindex(base + yl * width + xh)] += lx * (1 - ly) * g
                            d_data[uindex(base + yh * width + xh)] += lx * ly * g


@kernel.parallel_for
def _dpsroi_trans_grad(
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
    b = int(table[r * _ROW]) if r < n_rois else -1
    if b >= 0 and b < n_batch:
        per_class = out_dim // classes
        plane = height * width
        for ph in range(pooled):
            if _cell(ph, pooled, part) != qh:
                continue
            gh = _group_of(ph, pooled, group)
            for pw in range(pooled):
                if _cell(pw, pooled, part) != qw:
                    continue
                x0, y0, bin_w, bin_h, roi_w, roi_h = _bin_origin(
                    table, trans, r, k, ph, pw, pairs, pooled, part, trans_std, False
                )
                n = _count(x0, y0, bin_w, bin_h, samples, height, width)
                if n == 0:
                    continue
                gw = _group_of(pw, pooled, group)
                for ih in range(samples):
                    for iw in range(samples):
                        inside, x, y = _sample(x0, y0, bin_w, bin_h, ih, iw, samples, height, width)
                        if not inside:
                            continue
                        xl, xh, yl, yh, lx, ly = _neighbours(x, y, width)
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


# --- compute ------------------------------------------------------------------------------


def _sizes(p: DeformablePSROIPoolingParam, trans: Any) -> tuple[Any, ...]:
    """The kernels' trailing parameters: group, part, samples, pairs, trans_std (as MXNet's
    float32), no_trans."""
    pairs = 2 if p.no_trans else trans.shape[1]
    std = float(np.float32(p.trans_std))
    return p.group_size, _part(p), p.sample_per_part, pairs, std, p.no_trans


def _table(ctx: Any, p: DeformablePSROIPoolingParam, rois: Any) -> Any:
    """_roi_table as a flat float64 array on ctx: made on a GPU from the rois there."""
    if is_gpu(ctx):
        from nnvmpy.ops._deformable_psroi_cuda import roi_table_gpu

        return roi_table_gpu(ctx, p, rois)
    return table_on(ctx, _roi_table, p, rois)


def _forward(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    p = attrs.parsed
    modes = [req_code(OP, r) for r in req]
    out = outputs[0]
    if all(m == NULL for m in modes) or out.size == 0:
        return
    data, rois = inputs[:2]
    table = _table(ctx, p, rois)
    with half_as_float32(ctx, outputs, modes, inputs) as (outs, ins):
        trans = ins[1] if p.no_trans else ins[2]  # a stand-in the kernel never reads
        args = (flat(outs[0]), flat(outs[1]), flat(ins[0]), table, flat(trans), *data.shape,
                p.output_dim, p.pooled_size, *_sizes(p, trans), *modes)  # fmt: skip
        _dpsroi_forward.launch(ctx, out.size, *args, work=out.size * p.sample_per_part**2)


def _data_grad(ctx: Any, d_data: Any, dy: Any, shared: tuple[Any, ...], mode: int) -> None:
    """d data (=|+=) its gradient; `shared` the kernels' arguments after dy. The GPU takes
    an item per dy element adding atomically (an item per input channel, the CPU's way,
    gave the module docstring's benchmark 490 threads of 300 rois' samples each)."""
    if is_gpu(ctx):
        from nnvmpy.ops._deformable_psroi_cuda import data_grad_gpu

        data_grad_gpu(ctx, d_data, dy, shared, mode)
        return
    _dpsroi_data_grad.launch(ctx, d_data.shape[1], flat(d_data), flat(dy), *shared, mode,
                             work=dy.size + d_data.size)  # fmt: skip


def _backward(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    """(dy, data, rois[, trans]) -> (d data, d rois = 0[, d trans]); no table is made when
    neither d data nor d trans is asked for."""
    p = attrs.parsed
    modes = [req_code(BACKWARD, r) for r in req]
    if modes[1] == WRITE:
        zero(ctx, outputs[1])
    if modes[0] == NULL and (p.no_trans or modes[2] == NULL):
        return
    dy, data, rois = inputs[:3]
    table = _table(ctx, p, rois)
    with half_as_float32(ctx, outputs, modes, inputs) as (grads, ins):
        trans = ins[2] if p.no_trans else ins[3]  # a stand-in the kernels never read
        *sizes, no_trans = _sizes(p, trans)
        shared = (table, flat(trans), rois.shape[0], *data.shape, p.output_dim, p.pooled_size,
                  *sizes)  # fmt: skip
        if modes[0] != NULL:
            _data_grad(ctx, grads[0], ins[0], (*shared, no_trans), modes[0])
        if not no_trans and modes[2] != NULL:
            _dpsroi_trans_grad.launch(ctx, trans.size // 2, flat(grads[2]), flat(ins[0]),
                                      flat(ins[1]), *shared, modes[2], work=dy.size)  # fmt: skip


def _gradient(node: Any, ograds: list[Any]) -> list[Any]:
    """One backward node reads dy of the output (top_count has no gradient) and the inputs."""
    return make_grad_node(BACKWARD, node, [ograds[0], *node.inputs])


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
