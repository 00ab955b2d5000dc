"""Region proposal ops of Faster R-CNN's RPN (MXNet's proposal.cc / multi_proposal.cc).

_contrib_MultiProposal(cls_prob (N, 2A, H, W), bbox_pred (N, 4A, H, W), im_info (N, 3))
-> rois (N * post, 5) rows [batch index, x1, y1, x2, y2], and score (N * post, 1),
visible only when output_score. _contrib_Proposal is the same for one image (N = 1) and
outputs (post, 5) / (post, 1). A = len(scales) * len(ratios), post = rpn_post_nms_top_n.

Per image, everything in float32 as MXNet computes it:

1. Anchors: the base box [0, 0, s - 1, s - 1] (s = feature_stride), centre c = (s - 1) / 2.
   For each ratio r (outer) and scale k (inner): sr = floor(s * s / r),
   w = floor(sqrt(sr) + 0.5) * k, h = floor(w / k * r + 0.5) * k, anchor
   [c - (w - 1) / 2, c - (h - 1) / 2, c + (w - 1) / 2, c + (h - 1) / 2]. Feature cell
   (y, x) shifts them by (x * s, y * s); box i = (y * W + x) * A + a.
2. Decode: with anchor width aw = x2 - x1 + 1 and centre x1 + (aw - 1) / 2 (y alike),
   centre += dx * aw, width = exp(dw) * aw, box = centre -+ (width - 1) / 2. With
   iou_loss the four deltas are added to the anchor's corners instead. x is clipped to
   [0, im_w - 1], y to [0, im_h - 1].
3. Score: cls_prob[n, A + a, y, x] (the foreground half); -1 for cells outside the real
   image (y >= int(im_h / s) or x >= int(im_w / s)). A box narrower or lower than
   m = rpn_min_size * im_scale is grown by m / 2 on every side and scored -1.
4. Sort by descending score (ties keep box order), keep the first rpn_pre_nms_top_n
   (all when <= 0), then greedy NMS: walking in that order, a kept box suppresses every
   later box whose IoU (areas with the +1 pixel convention) is > threshold; stop once
   post boxes are kept.
5. Output row i is kept box i, or kept box i % kept when fewer than post survive.

Forward only: the gradient of every input is zero, as in MXNet. float32 only (MXNet's
"Unsupported data type"). The CPU runs the numba loops below; a GPU the same steps as
device kernels (_proposal_device).
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
)
from ..base import Context, InferError, ParamError
from ..engine.base import RunContext
from ..graph.grad import make_zero_grad_nodes
from ..infer import shape_assign, shape_is_known, shape_str, type_assign
from ..kernel.launch import req_code
from ..param import FloatTuple, Parameter, field
from ..registry import NodeAttrs, register_op
from ..resource import OpContext
from . import _proposal_device
from ._host_staged import host_compute
from ._ranking import top_order

_F32 = np.float32
INPUTS = ("cls_prob", "bbox_pred", "im_info")


class ProposalParam(Parameter):
    rpn_pre_nms_top_n = field(
        int,
        default=6000,
        describe="Number of top scoring boxes to keep before applying NMS to RPN proposals",
    )
    rpn_post_nms_top_n = field(
        int,
        default=300,
        describe="Number of top scoring boxes to keep after applying NMS to RPN proposals",
    )
    threshold = field(float, default=0.7, describe="NMS value, below which to suppress.")
    rpn_min_size = field(int, default=16, describe="Minimum height or width in proposal")
    scales = field(
        FloatTuple,
        default=(4.0, 8.0, 16.0, 32.0),
        describe="Used to generate anchor windows by enumerating scales",
    )
    ratios = field(
        FloatTuple,
        default=(0.5, 1.0, 2.0),
        describe="Used to generate anchor windows by enumerating ratios",
    )
    feature_stride = field(
        int,
        default=16,
        describe="The size of the receptive field each unit in the convolution layer of the "
        "rpn,for example the product of all stride's prior to this layer.",
    )
    output_score = field(bool, default=False, describe="Add score to outputs")
    iou_loss = field(bool, default=False, describe="Usage of IoU Loss")


def _check_param(op: str, p: ProposalParam) -> None:
    if p.rpn_post_nms_top_n < 1:
        raise ParamError(f"{op}: rpn_post_nms_top_n must be >= 1, got {p.rpn_post_nms_top_n}")
    if p.feature_stride < 1:
        raise ParamError(f"{op}: feature_stride must be >= 1, got {p.feature_stride}")
    for name in ("scales", "ratios"):
        values = getattr(p, name)
        if len(values) == 0 or min(values) <= 0:
            raise ParamError(
                f"{op}: parameter '{name}' must hold at least one value, all > 0, got "
                f"{tuple(values)}"
            )


def num_anchors(p: ProposalParam) -> int:
    return len(p.scales) * len(p.ratios)


def base_anchors(stride: int, scales: Any, ratios: Any) -> np.ndarray:
    """(len(ratios) * len(scales), 4) float32 anchors around cell (0, 0); ratio-major."""
    side = _F32(stride)
    centre = _F32(0.5) * (side - _F32(1))
    half = _F32(0.5)
    rows = []
    for r in np.asarray(ratios, _F32):
        sr = np.floor(side * side / r)
        for k in np.asarray(scales, _F32):
            w = np.floor(np.sqrt(sr) + half) * k
            h = np.floor(w / k * r + half) * k
            hw, hh = half * (w - _F32(1)), half * (h - _F32(1))
            rows.append([centre - hw, centre - hh, centre + hw, centre + hh])
    return np.array(rows, _F32).reshape(-1, 4)


# --- kernels (float32 throughout: numba's float32 exp is the C library's expf) ----------------


@kernel.cpu_kernel(parallel=False)
def _nms(boxes, thresh, limit, keep):  # pragma: no cover - compiled
    """Greedy NMS over boxes (k, >= 4) sorted by score; fills keep, returns how many."""
    k = boxes.shape[0]
    one = np.float32(1.0)
    zero = np.float32(0.0)
    area = np.empty(k, np.float32)
    for i in range(k):
        area[i] = (boxes[i, 2] - boxes[i, 0] + one) * (boxes[i, 3] - boxes[i, 1] + one)
    gone = np.zeros(k, np.bool_)
    count = 0
    for i in range(k):
        if gone[i]:
            continue
        keep[count] = i
        count += 1
        if count >= limit:
            break
        for j in range(i + 1, k):
            if gone[j]:
                continue
            iw = max(min(boxes[i, 2], boxes[j, 2]) - max(boxes[i, 0], boxes[j, 0]) + one, zero)
            ih = max(min(boxes[i, 3], boxes[j, 3]) - max(boxes[i, 1], boxes[j, 1]) + one, zero)
            inter = iw * ih
            if inter / (area[i] + area[j] - inter) > thresh:
                gone[j] = True
    return count


# --- the computation --------------------------------------------------------------------------


def multi_proposal_np(
    op: str, p: ProposalParam, cls_prob: Any, bbox_pred: Any, im_info: Any
) -> list[np.ndarray]:
    """(rois (N * post, 5), scores (N * post, 1)) of float32 inputs; see the docstring.

    The boxes are decoded by the device kernel (_proposal_device.decode, run here on the
    CPU: one parallel item per anchor); ranking and the greedy NMS, which stops once
    `post` boxes are kept, stay on the host (on a GPU the suppression runs in parallel
    instead: _proposal_device)."""
    batch, _, height, width = cls_prob.shape
    _proposal_device.check_image_sizes(op, p.feature_stride, im_info, height, width)
    anchors = base_anchors(p.feature_stride, p.scales, p.ratios)
    cpu = OpContext(False, RunContext(Context("cpu", 0)), [])
    dets = _proposal_device.decode(cpu, p, anchors, [cls_prob, bbox_pred, im_info])
    post = p.rpn_post_nms_top_n
    rois = np.empty((batch, post, 5), _F32)
    scores = np.empty((batch, post, 1), _F32)
    for b in range(batch):
        order = top_order(dets[b, :, 4], p.rpn_pre_nms_top_n if p.rpn_pre_nms_top_n > 0 else None)
        ranked = np.ascontiguousarray(dets[b, order])
        keep = np.zeros(post, np.int64)
        count = _nms(ranked, _F32(p.threshold), post, keep) if len(ranked) else 0
        rois[b, :, 0] = b
        if count == 0:
            rois[b, :, 1:] = 0
            scores[b, :, 0] = 0
            continue
        rows = ranked[keep[np.arange(post) % count]]
        rois[b, :, 1:] = rows[:, :4]
        scores[b, :, 0] = rows[:, 4]
    return [rois.reshape(-1, 5), scores.reshape(-1, 1)]


# --- registration -----------------------------------------------------------------------------


def _shape_fn(op: str, single: bool) -> Any:
    def infer(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
        p = attrs.parsed
        _check_param(op, p)
        cls = in_shapes[0]
        if cls is None:
            return False
        if len(cls) != 4:
            raise InferError(
                f"{op}: input 'cls_prob' has shape {shape_str(cls)}; expected 4-D "
                "(batch, 2 * num_anchors, height, width)"
            )
        num = num_anchors(p)
        if cls[1] is not None and cls[1] != 2 * num:
            raise InferError(
                f"{op}: input 'cls_prob' has {cls[1]} channels; expected 2 * num_anchors = "
                f"{2 * num} (len(scales) * len(ratios) = {num} anchors)"
            )
        n, h, w = cls[0], cls[2], cls[3]
        shape_assign(in_shapes, 0, (n, 2 * num, h, w), f"{op}: input 'cls_prob'")
        shape_assign(in_shapes, 1, (n, 4 * num, h, w), f"{op}: input 'bbox_pred'")
        shape_assign(in_shapes, 2, (n, 3), f"{op}: input 'im_info'")
        if single and n not in (None, 1):
            raise InferError(
                f"{op}: input 'cls_prob' has batch size {n}; Proposal takes one image "
                "(use MultiProposal for a batch)"
            )
        post = p.rpn_post_nms_top_n
        rows = None if n is None else n * post
        shape_assign(out_shapes, 0, (rows, 5), f"{op}: output 'output'")
        shape_assign(out_shapes, 1, (rows, 1), f"{op}: output 'score'")
        return all(shape_is_known(s) for s in in_shapes)

    return infer


def _type_fn(op: str) -> Any:
    def infer(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
        for i, name in enumerate(INPUTS):
            t = in_types[i]
            if t is not None and np.dtype(t) != _F32:
                raise InferError(
                    f"{op}: input '{name}' has dtype {np.dtype(t)}; only float32 is supported"
                )
            type_assign(in_types, i, np.dtype(_F32), f"{op}: input '{name}'")
        for j in range(len(out_types)):
            type_assign(out_types, j, np.dtype(_F32), f"{op}: output {j}")
        return True

    return infer


_DESCRIBE = (
    "Generate region proposals via RPN\n\n"
    "cls_prob (N, 2 * A, H, W), bbox_pred (N, 4 * A, H, W), im_info (N, 3) rows "
    "[height, width, scale], A = len(scales) * len(ratios). Outputs the rois (N * "
    "rpn_post_nms_top_n, 5) rows [batch index, x1, y1, x2, y2] and, with output_score, their "
    "scores (N * rpn_post_nms_top_n, 1).\n"
)


def _gpu_compute(op: str) -> Any:
    def compute(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any],
                outputs: list[Any]) -> None:  # fmt: skip
        p = attrs.parsed
        anchors = base_anchors(p.feature_stride, p.scales, p.ratios)
        modes = [req_code(op, r) for r in req]
        _proposal_device.multi_proposal(ctx, op, p, anchors, inputs, outputs, modes)

    return compute


def _register(op: str, single: bool) -> None:
    compute = host_compute(op, lambda p, c, b, i: multi_proposal_np(op, p, c, b, i))
    (
        register_op(op)
        .describe(_DESCRIBE + ("Proposal takes one image (N = 1).\n" if single else ""))
        .set_attr_parser(ProposalParam)
        .set_num_inputs(3)
        .set_num_outputs(2)
        .set_attr(FListInputNames, lambda attrs: list(INPUTS))
        .set_attr(FListOutputNames, lambda attrs: ["output", "score"])
        .set_attr(FNumVisibleOutputs, lambda attrs: 2 if attrs.parsed.output_score else 1)
        .set_attr(FInferShape, _shape_fn(op, single))
        .set_attr(FInferType, _type_fn(op))
        .set_attr(FCompute_cpu, compute)
        .set_attr(FCompute_gpu, _gpu_compute(op))
        .set_attr(FGradient, make_zero_grad_nodes)
        .add_argument("cls_prob", "NDArray-or-Symbol", "Score of how likely proposal is object.")
        .add_argument(
            "bbox_pred", "NDArray-or-Symbol", "BBox Predicted deltas from anchors for proposals"
        )
        .add_argument("im_info", "NDArray-or-Symbol", "Image size and scale.")
        .add_arguments(ProposalParam.fields())
    )


_register("_contrib_MultiProposal", single=False)
_register("_contrib_Proposal", single=True)
