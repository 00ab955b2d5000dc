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

Kernels: _deformable_psroi_kernels.py (kernel.parallel_for, one body for both devices,
over a per-roi table made by NumPy on the CPU): the forward a bin per item, the CPU's
data gradient an input channel per item, the trans gradient a trans cell per item. A GPU
makes the table with a thread per roi (no host round trip of the rois) and takes the
data gradient an item per dy element, adding atomically: _deformable_psroi_cuda.py. No
rois: no table is made (the kernels read none), and the gradients are still written.
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
    FListOutputNames,
    FNumVisibleOutputs,
    TIsBackward,
)
from ..base import InferError
from ..graph.grad import make_grad_node
from ..infer import shape_assign, shape_str
from ..kernel.launch import NULL, WRITE, flat, is_gpu, req_code
from ..param import Parameter, field
from ..registry import NodeAttrs, register_op
from ._deformable_psroi_kernels import data_grad_channels, forward_bins, trans_grad_cells
from ._index_kernels import device_empty, half_as_float32, zero
from ._roi_sampling import ROI_ROW, check_roi_inputs, rounded_rois, table_on
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


# --- the roi table --------------------------------------------------------------------------


def _roi_table(p: DeformablePSROIPoolingParam, rois: np.ndarray) -> np.ndarray:
    """Each roi's (batch index, x0, y0, width, height): rounded corners, x2 and y2 made
    inclusive, scaled (spatial_scale as MXNet's float32) and shifted by -0.5."""
    r = rounded_rois(rois)
    scale = float(np.float32(p.spatial_scale))
    x0, y0 = r[:, 1] * scale - 0.5, r[:, 2] * scale - 0.5
    width = np.maximum((r[:, 3] + 1.0) * scale - 0.5 - x0, 0.1)
    height = np.maximum((r[:, 4] + 1.0) * scale - 0.5 - y0, 0.1)
    return np.stack([r[:, 0], x0, y0, width, height], axis=1)


# --- compute ------------------------------------------------------------------------------


def _sizes(p: DeformablePSROIPoolingParam, trans: Any) -> tuple[Any, ...]:
    """The kernels' trailing parameters: group, part, samples, pairs, trans_std (as MXNet's
    float32), no_trans."""
    pairs = 2 if p.no_trans else trans.shape[1]
    std = float(np.float32(p.trans_std))
    return p.group_size, _part(p), p.sample_per_part, pairs, std, p.no_trans


def _table(ctx: Any, p: DeformablePSROIPoolingParam, rois: Any) -> Any:
    """_roi_table as a flat float64 array on ctx: made on a GPU from the rois there. No
    rois: a one-element scratch, no table made and no kernel launched (the kernels read
    no row: the forward has no bins, the gradients walk no roi)."""
    if rois.shape[0] == 0:
        return device_empty(ctx, 1, np.float64)
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
        forward_bins.launch(ctx, out.size, *args, work=out.size * p.sample_per_part**2)


def _data_grad(ctx: Any, d_data: Any, dy: Any, shared: tuple[Any, ...], mode: int) -> None:
    """d data (=|+=) its gradient; `shared` the kernels' arguments after dy. The GPU takes
    an item per dy element adding atomically (an item per input channel, the CPU's way,
    gave _deformable_psroi_kernels.py's benchmark 490 threads of 300 rois' samples each)."""
    if is_gpu(ctx):
        from nnvmpy.ops._deformable_psroi_cuda import data_grad_gpu

        data_grad_gpu(ctx, d_data, dy, shared, mode)
        return
    data_grad_channels.launch(ctx, d_data.shape[1], flat(d_data), flat(dy), *shared, mode,
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
            trans_grad_cells.launch(ctx, trans.size // 2, flat(grads[2]), flat(ins[0]),
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
