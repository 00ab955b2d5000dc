"""SSD's multibox contrib ops (MXNet's multibox_prior.cc / multibox_target.cc).

MultiBoxPrior(data (N, C, H, W)) -> anchors (1, H*W*K, 4), K = len(sizes) + len(ratios) - 1,
as [xmin, ymin, xmax, ymax] relative to the feature map (computed in float32, as MXNet):

    centre of cell (r, c):  cy = (r + offsets[0]) * step_y,  cx = (c + offsets[1]) * step_x
                            (step_y = steps[0] if > 0 else 1 / H; step_x likewise with W)
    anchor of size s, ratio q:  half width  s * H / W * sqrt(q) / 2,  half height s / sqrt(q) / 2

The anchors of a cell are every size with ratios[0], then sizes[0] with each later ratio;
`clip` clamps the coordinates to [0, 1]. Zero gradient.

MultiBoxTarget(anchor (1, A, 4), label (B, L, >= 5), cls_pred (B, C, A)) -> loc_target
(B, A*4), loc_mask (B, A*4), cls_target (B, A). The labels of a batch row are
[class, xmin, ymin, xmax, ymax, ...] up to the first row whose class is -1. Per batch:

1. IoU of every anchor with every label (0 where the union is 0).
2. Greedy matching: while a label is unmatched, the largest IoU (> 1e-6) between an
   unmatched anchor and an unmatched label matches them (first such pair, anchor-major).
3. If overlap_threshold > 0, every other anchor takes its best label, and is positive
   when that IoU > overlap_threshold.
4. negative_mining_ratio > 0: of the anchors that are not positive and whose best IoU <
   negative_mining_thresh, the int(positives * ratio) (at most A - positives) with the
   lowest softmax probability of class 0 are negatives. Otherwise every anchor that is
   not positive is negative.
5. Positive anchors: cls_target = label class + 1, loc_mask = 1, loc_target =
   ((gx - ax) / aw / v0, (gy - ay) / ah / v1, log(gw / aw) / v2, log(gh / ah) / v3) from the
   centres and sizes of the anchor (a) and its label (g). Negatives: cls_target 0, mask 0.
   The others keep cls_target = ignore_label, loc_target = loc_mask = 0.

MultiBoxDetection(cls_prob (B, C, A), loc_pred (B, A*4), anchor (1, A, 4)) -> (B, A, 6)
rows [class, score, xmin, ymin, xmax, ymax], as MXNet's CPU kernel computes them:

1. Each anchor takes its best class >= 1 (class 0 is the background; the first maximum
   wins); it is a detection when that probability >= threshold. Detections are written
   in anchor order as [class - 1, score, box], the box decoded from loc_pred as
   box_decode does (corner anchors, `variances`), clamped to [0, 1] when `clip`.
2. If 0 < nms_threshold <= 1: the detections are sorted by descending score (ties keep
   anchor order); only the first nms_topk (when > 0) keep their place, the rows after
   them keep their unsorted contents with class -1. Then each detection still valid
   marks class -1 on every later one (of its class unless force_suppress) whose IoU with
   it is >= nms_threshold. Rows past the detections are all -1.

MXNet's CPU kernel accepts `background_id` but always treats class 0 as the background;
so does this one. Zero gradient for every input. On the CPU the three ops run the NumPy
functions below (`host_compute`); on a GPU _multibox_device's kernels, which repeat their
arithmetic (equal results but for the rounding of exp and log).
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
)
from ..base import InferError, NNVMError, ParamError
from ..graph.grad import make_zero_grad_nodes
from ..infer import shape_assign, shape_is_known, shape_str
from ..kernel.launch import req_code
from ..param import FloatTuple, Parameter, field
from ..registry import NodeAttrs, register_op
from ._host_staged import host_compute
from ._multibox_device import multibox_detection, multibox_prior
from ._multibox_target_device import multibox_target
from ._ranking import top_order
from .contrib_bbox import same_float_type

_PRIOR = "_contrib_MultiBoxPrior"
_TARGET = "_contrib_MultiBoxTarget"
_F32 = np.float32


# --- MultiBoxPrior ----------------------------------------------------------------------------


class MultiBoxPriorParam(Parameter):
    sizes = field(
        FloatTuple, default=(1.0,), describe="List of sizes of generated MultiBoxPriores."
    )
    ratios = field(
        FloatTuple, default=(1.0,), describe="List of aspect ratios of generated MultiBoxPriores."
    )
    clip = field(bool, default=False, describe="Whether to clip out-of-boundary boxes.")
    steps = field(
        FloatTuple,
        default=(-1.0, -1.0),
        describe="Priorbox step across y and x, -1 for auto calculation.",
    )
    offsets = field(
        FloatTuple,
        default=(0.5, 0.5),
        describe="Priorbox center offsets, y and x respectively",
    )


def _check_prior_param(p: MultiBoxPriorParam) -> None:
    for name in ("sizes", "ratios"):
        values = getattr(p, name)
        if len(values) == 0 or min(values) <= 0:
            raise ParamError(
                f"{_PRIOR}: parameter '{name}' must hold at least one value, all > 0, got "
                f"{tuple(values)}"
            )
    for name in ("steps", "offsets"):
        if len(getattr(p, name)) != 2:
            raise ParamError(
                f"{_PRIOR}: parameter '{name}' must be (y, x), got {tuple(getattr(p, name))}"
            )


def _num_anchors(p: MultiBoxPriorParam) -> int:
    return len(p.sizes) + len(p.ratios) - 1


def _prior_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    p = attrs.parsed
    _check_prior_param(p)
    s = in_shapes[0]
    if s is None:
        return False
    if len(s) != 4:
        raise InferError(
            f"{_PRIOR}: input 'data' has shape {shape_str(s)}; expected 4-D (batch, channel, "
            "height, width)"
        )
    if s[2] is None or s[3] is None:
        return False
    shape_assign(out_shapes, 0, (1, s[2] * s[3] * _num_anchors(p), 4), f"{_PRIOR}: output")
    return shape_is_known(s)


def prior_table(p: MultiBoxPriorParam, height: int, width: int) -> np.ndarray:
    """float32 [step_y, step_x, offset_y, offset_x, 0, 1, K half widths, K half heights]:
    the numbers every anchor is computed from (the host's and the device's)."""
    _check_prior_param(p)
    step_y = _F32(p.steps[0]) if p.steps[0] > 0 else _F32(1) / _F32(height)
    step_x = _F32(p.steps[1]) if p.steps[1] > 0 else _F32(1) / _F32(width)
    sizes = np.array(p.sizes, _F32)
    ratios = np.sqrt(np.array(p.ratios, _F32))
    size = np.concatenate([sizes, np.full(len(ratios) - 1, sizes[0], _F32)])
    ratio = np.concatenate([np.full(len(sizes), ratios[0], _F32), ratios[1:]])
    half_w = size * _F32(height) / _F32(width) * ratio / _F32(2)
    half_h = size / ratio / _F32(2)
    head = np.array([step_y, step_x, _F32(p.offsets[0]), _F32(p.offsets[1]), 0, 1], _F32)
    return np.concatenate([head, half_w, half_h])


def multibox_prior_np(p: MultiBoxPriorParam, data: np.ndarray) -> list[np.ndarray]:
    """The anchors of MultiBoxPrior for data (N, C, H, W), in data's dtype."""
    height, width = data.shape[2], data.shape[3]
    table = prior_table(p, height, width)
    k = _num_anchors(p)
    half_w, half_h = table[6 : 6 + k], table[6 + k :]
    cy = (np.arange(height, dtype=_F32) + table[2]) * table[0]
    cx = (np.arange(width, dtype=_F32) + table[3]) * table[1]
    y = cy[:, None, None]
    x = cx[None, :, None]
    boxes = np.stack(np.broadcast_arrays(x - half_w, y - half_h, x + half_w, y + half_h), axis=-1)
    if p.clip:
        boxes = np.clip(boxes, _F32(0), _F32(1))
    return [boxes.reshape(1, -1, 4).astype(data.dtype)]


def _prior_gpu(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    p = attrs.parsed
    shape = tuple(int(d) for d in inputs[0].shape)  # the simulator's shapes do not slice
    height, width = shape[2], shape[3]
    table = prior_table(p, height, width)
    sizes = (height, width, _num_anchors(p))
    multibox_prior(ctx, table, sizes, p.clip, outputs[0], req_code(_PRIOR, req[0]))


_prior_compute = host_compute(_PRIOR, multibox_prior_np)
(
    register_op(_PRIOR)
    .describe("Generate prior(anchor) boxes from data, sizes and ratios.")
    .set_attr_parser(MultiBoxPriorParam)
    .set_num_inputs(1)
    .set_num_outputs(1)
    .set_attr(FListInputNames, lambda attrs: ["data"])
    .set_attr(FInferShape, _prior_shape)
    .set_attr(FInferType, same_float_type(_PRIOR, ("data",)))
    .set_attr(FCompute_cpu, _prior_compute)
    .set_attr(FCompute_gpu, _prior_gpu)
    .set_attr(FGradient, make_zero_grad_nodes)
    .add_argument("data", "NDArray-or-Symbol", "Input data.")
    .add_arguments(MultiBoxPriorParam.fields())
)


# --- MultiBoxTarget ---------------------------------------------------------------------------


class MultiBoxTargetParam(Parameter):
    overlap_threshold = field(
        float,
        default=0.5,
        describe="Anchor-GT overlap threshold to be regarded as a positive match.",
    )
    ignore_label = field(float, default=-1.0, describe="Label for ignored anchors.")
    negative_mining_ratio = field(
        float,
        default=-1.0,
        describe="Max negative to positive samples ratio, use -1 to disable mining",
    )
    negative_mining_thresh = field(
        float, default=0.5, describe="Threshold used for negative mining."
    )
    minimum_negative_samples = field(int, default=0, describe="Minimum number of negative samples.")
    variances = field(
        FloatTuple,
        default=(0.1, 0.1, 0.2, 0.2),
        describe="Variances to be encoded in box regression target.",
    )


def _target_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    anchor, label, pred = in_shapes
    if anchor is None or label is None or pred is None:
        return False
    if len(anchor) != 3 or anchor[0] != 1 or anchor[2] != 4 or not anchor[1]:
        raise InferError(
            f"{_TARGET}: input 'anchor' has shape {shape_str(anchor)}; expected (1, num_anchors,"
            " 4): anchors [xmin, ymin, xmax, ymax] shared by the batch"
        )
    if len(label) != 3 or not label[1] or (label[2] is not None and label[2] < 5):
        raise InferError(
            f"{_TARGET}: input 'label' has shape {shape_str(label)}; expected (batch, "
            "num_labels > 0, label_width >= 5)"
        )
    if len(pred) != 3 or (pred[2] is not None and anchor[1] is not None and pred[2] != anchor[1]):
        raise InferError(
            f"{_TARGET}: input 'cls_pred' has shape {shape_str(pred)}; expected (batch, "
            f"num_classes, {anchor[1]}) for {anchor[1]} anchors"
        )
    batch, num = label[0], anchor[1]
    loc = (batch, None if num is None else num * 4)
    shape_assign(out_shapes, 0, loc, f"{_TARGET}: output 'loc_target'")
    shape_assign(out_shapes, 1, loc, f"{_TARGET}: output 'loc_mask'")
    shape_assign(out_shapes, 2, (batch, num), f"{_TARGET}: output 'cls_target'")
    return all(shape_is_known(s) for s in in_shapes)


def _check_variances(op: str, p: Any) -> None:
    if len(p.variances) != 4:
        raise ParamError(
            f"{op}: parameter 'variances' must hold 4 values, got {tuple(p.variances)}"
        )


def _overlaps(anchors: np.ndarray, gts: np.ndarray) -> np.ndarray:
    """IoU (A, G) of corner boxes in their dtype; 0 where the union is 0."""
    a = anchors[:, None, :]
    g = gts[None, :, :]
    zero = np.zeros((), anchors.dtype)
    iw = np.maximum(zero, np.minimum(a[..., 2], g[..., 2]) - np.maximum(a[..., 0], g[..., 0]))
    ih = np.maximum(zero, np.minimum(a[..., 3], g[..., 3]) - np.maximum(a[..., 1], g[..., 1]))
    inter = iw * ih
    area_a = (a[..., 2] - a[..., 0]) * (a[..., 3] - a[..., 1])
    area_g = (g[..., 2] - g[..., 0]) * (g[..., 3] - g[..., 1])
    union = area_a + area_g - inter
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(union == 0, zero, inter / np.where(union == 0, 1, union))


def _match(ious: np.ndarray, threshold: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Steps 2 and 3: (positive flags, best label per anchor, its IoU)."""
    num_a, num_g = ious.shape
    positive = np.zeros(num_a, bool)
    best = np.full(num_a, -1, np.int64)
    best_iou = np.full(num_a, -1.0, np.float32)
    free = ious.astype(np.float32)
    gt_done = np.zeros(num_g, bool)
    while not gt_done.all():
        k = int(np.argmax(free))  # first maximum, anchor-major as MXNet scans
        j, g = divmod(k, num_g)
        if not free[j, g] > 1e-6:
            break
        positive[j], gt_done[g] = True, True
        best[j], best_iou[j] = g, free[j, g]
        free[j, :] = -1
        free[:, g] = -1
    rest = ~positive
    all_best = np.argmax(ious, axis=1)
    best[rest] = all_best[rest]
    best_iou[rest] = ious[rest, all_best[rest]].astype(np.float32)
    if threshold > 0:
        positive |= rest & (best_iou > threshold)
    return positive, best, best_iou


def _background_prob(pred: np.ndarray) -> np.ndarray:
    """softmax over classes (axis 0) of pred (C, A), class 0's probability, in pred's dtype."""
    shifted = pred - pred.max(axis=0)
    e = np.exp(shifted)
    return e[0] / e.sum(axis=0)


def _negatives(p: MultiBoxTargetParam, positive: np.ndarray, best_iou: np.ndarray,
               pred: np.ndarray) -> np.ndarray:  # fmt: skip
    """Step 4: negative flags."""
    num_a = len(positive)
    if p.negative_mining_ratio <= 0:
        return ~positive
    if not p.negative_mining_thresh > 0:
        raise NNVMError(
            f"{_TARGET}: negative_mining_thresh must be > 0 when negative mining is on "
            f"(negative_mining_ratio={p.negative_mining_ratio}), got {p.negative_mining_thresh}"
        )
    num_pos = int(positive.sum())
    count = min(int(num_pos * p.negative_mining_ratio), num_a - num_pos)
    negative = np.zeros(num_a, bool)
    if count <= 0:
        return negative
    cand = np.flatnonzero(~positive & (best_iou < p.negative_mining_thresh))
    if len(cand) < count:
        raise NNVMError(
            f"{_TARGET}: negative mining wants {count} negatives but only {len(cand)} anchors "
            f"have an overlap below negative_mining_thresh={p.negative_mining_thresh}"
        )
    prob = _background_prob(pred[:, cand]).astype(np.float32)
    negative[cand[np.argsort(prob, kind="stable")[:count]]] = True
    return negative


def _encode(anchors: np.ndarray, gts: np.ndarray, variances: Any) -> np.ndarray:
    """Step 5's regression targets (n, 4) in float32 for matched anchor / label corner pairs."""
    a, g = anchors.astype(_F32), gts.astype(_F32)
    aw, ah = a[:, 2] - a[:, 0], a[:, 3] - a[:, 1]
    gw, gh = g[:, 2] - g[:, 0], g[:, 3] - g[:, 1]
    ax, ay = (a[:, 0] + a[:, 2]) * _F32(0.5), (a[:, 1] + a[:, 3]) * _F32(0.5)
    gx, gy = (g[:, 0] + g[:, 2]) * _F32(0.5), (g[:, 1] + g[:, 3]) * _F32(0.5)
    v = [_F32(x) for x in variances]
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.stack(
            [(gx - ax) / aw / v[0], (gy - ay) / ah / v[1],
             np.log(gw / aw) / v[2], np.log(gh / ah) / v[3]], axis=1,
        )  # fmt: skip


def multibox_target_np(
    p: MultiBoxTargetParam, anchor: np.ndarray, label: np.ndarray, cls_pred: np.ndarray
) -> list[np.ndarray]:
    """(loc_target, loc_mask, cls_target) of MultiBoxTarget; see the module docstring."""
    _check_variances(_TARGET, p)
    dtype = anchor.dtype
    anchors = anchor.reshape(-1, 4)
    batches, num_a = label.shape[0], anchors.shape[0]
    loc = np.zeros((batches, num_a, 4), dtype)
    mask = np.zeros((batches, num_a, 4), dtype)
    cls = np.full((batches, num_a), p.ignore_label, dtype)
    for b in range(batches):
        classes = label[b, :, 0]
        invalid = np.flatnonzero(classes == -1)
        num_gt = int(invalid[0]) if len(invalid) else label.shape[1]
        if num_gt == 0:
            continue
        gts = label[b, :num_gt, 1:5]
        positive, best, best_iou = _match(_overlaps(anchors, gts), p.overlap_threshold)
        negative = _negatives(p, positive, best_iou, cls_pred[b]) & ~positive
        pos = np.flatnonzero(positive)
        cls[b, pos] = classes[best[pos]] + 1
        mask[b, pos] = 1
        loc[b, pos] = _encode(anchors[pos], gts[best[pos]], p.variances)
        cls[b, negative] = 0
    return [loc.reshape(batches, -1), mask.reshape(batches, -1), cls]


def _target_gpu(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    p = attrs.parsed
    _check_variances(_TARGET, p)
    multibox_target(ctx, p, inputs, outputs, [req_code(_TARGET, r) for r in req])


_target_compute = host_compute(_TARGET, multibox_target_np)
(
    register_op(_TARGET)
    .describe("Compute Multibox training targets")
    .set_attr_parser(MultiBoxTargetParam)
    .set_num_inputs(3)
    .set_num_outputs(3)
    .set_attr(FListInputNames, lambda attrs: ["anchor", "label", "cls_pred"])
    .set_attr(FListOutputNames, lambda attrs: ["loc_target", "loc_mask", "cls_target"])
    .set_attr(FInferShape, _target_shape)
    .set_attr(FInferType, same_float_type(_TARGET, ("anchor", "label", "cls_pred")))
    .set_attr(FCompute_cpu, _target_compute)
    .set_attr(FCompute_gpu, _target_gpu)
    .set_attr(FGradient, make_zero_grad_nodes)
    .add_argument("anchor", "NDArray-or-Symbol", "Generated anchor boxes.")
    .add_argument("label", "NDArray-or-Symbol", "Object detection labels.")
    .add_argument("cls_pred", "NDArray-or-Symbol", "Class predictions.")
    .add_arguments(MultiBoxTargetParam.fields())
)


# --- MultiBoxDetection ------------------------------------------------------------------------

_DETECT = "_contrib_MultiBoxDetection"


class MultiBoxDetectionParam(Parameter):
    clip = field(bool, default=True, describe="Clip out-of-boundary boxes.")
    threshold = field(float, default=0.01, describe="Threshold to be a positive prediction.")
    background_id = field(int, default=0, describe="Background id.")
    nms_threshold = field(float, default=0.5, describe="Non-maximum suppression threshold.")
    force_suppress = field(
        bool, default=False, describe="Suppress all detections regardless of class_id."
    )
    variances = field(
        FloatTuple,
        default=(0.1, 0.1, 0.2, 0.2),
        describe="Variances to be decoded from box regression output.",
    )
    nms_topk = field(
        int, default=-1, describe="Keep maximum top k detections before nms, -1 for no limit."
    )


def _detect_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    prob = in_shapes[0]
    if prob is None:
        return False
    if len(prob) != 3 or (prob[1] is not None and prob[1] < 2):
        raise InferError(
            f"{_DETECT}: input 'cls_prob' has shape {shape_str(prob)}; expected (batch, "
            "num_classes >= 2 (class 0: background), num_anchors)"
        )
    batch, num = prob[0], prob[2]
    shape_assign(
        in_shapes, 1, (batch, None if num is None else num * 4), f"{_DETECT}: input 'loc_pred'"
    )
    shape_assign(in_shapes, 2, (1, num, 4), f"{_DETECT}: input 'anchor'")
    shape_assign(out_shapes, 0, (batch, num, 6), f"{_DETECT}: output")
    return all(shape_is_known(s) for s in in_shapes)


@kernel.cpu_kernel(parallel=False)
def _suppress_rows(rows, count, thresh, force):  # pragma: no cover - compiled
    """Mark class -1 on rows[j] (j < count) that overlap an earlier valid row by >= thresh."""
    for i in range(count):
        if rows[i, 0] < 0:
            continue
        for j in range(i + 1, count):
            if rows[j, 0] < 0 or not (force or rows[i, 0] == rows[j, 0]):
                continue
            iw = max(0.0, min(rows[i, 4], rows[j, 4]) - max(rows[i, 2], rows[j, 2]))
            ih = max(0.0, min(rows[i, 5], rows[j, 5]) - max(rows[i, 3], rows[j, 3]))
            inter = iw * ih
            union = (
                (rows[i, 4] - rows[i, 2]) * (rows[i, 5] - rows[i, 3])
                + (rows[j, 4] - rows[j, 2]) * (rows[j, 5] - rows[j, 3])
                - inter
            )
            iou = 0.0 if union <= 0 else inter / union
            if iou >= thresh:
                rows[j, 0] = -1


def _decode_rows(anchors: np.ndarray, loc: np.ndarray, variances: Any, clip: bool) -> np.ndarray:
    """Corner boxes (n, 4) from anchors (n, 4) and offsets (n, 4), in their dtype."""
    dt = anchors.dtype.type
    aw, ah = anchors[:, 2] - anchors[:, 0], anchors[:, 3] - anchors[:, 1]
    ax, ay = (anchors[:, 0] + anchors[:, 2]) / dt(2), (anchors[:, 1] + anchors[:, 3]) / dt(2)
    v = [dt(x) for x in variances]
    x, y = loc[:, 0] * v[0] * aw + ax, loc[:, 1] * v[1] * ah + ay
    hw, hh = np.exp(loc[:, 2] * v[2]) * aw / dt(2), np.exp(loc[:, 3] * v[3]) * ah / dt(2)
    boxes = np.stack([x - hw, y - hh, x + hw, y + hh], axis=1)
    return np.clip(boxes, dt(0), dt(1)) if clip else boxes


def multibox_detection_np(
    p: MultiBoxDetectionParam, cls_prob: np.ndarray, loc_pred: np.ndarray, anchor: np.ndarray
) -> list[np.ndarray]:
    """The detections of MultiBoxDetection; see the module docstring."""
    _check_variances(_DETECT, p)
    batches, _, num = cls_prob.shape
    anchors = anchor.reshape(-1, 4)
    out = np.full((batches, num, 6), -1, cls_prob.dtype)
    nms = 0 < p.nms_threshold <= 1
    for b in range(batches):
        fg = cls_prob[b, 1:]
        best = np.argmax(fg, axis=0)  # first maximum: the lowest class wins ties
        score = fg[best, np.arange(num)]
        hit = np.flatnonzero((score > -1) & (score >= p.threshold))  # MXNet starts at -1
        count = len(hit)
        rows = out[b]
        rows[:count, 0] = best[hit]
        rows[:count, 1] = score[hit]
        loc = loc_pred[b].reshape(-1, 4)[hit]
        rows[:count, 2:] = _decode_rows(anchors[hit], loc, p.variances, p.clip)
        if count == 0 or not nms:
            continue
        keep = count if p.nms_topk <= 0 else min(count, p.nms_topk)
        rows[:keep] = rows[top_order(rows[:count, 1], keep)]
        rows[keep:count, 0] = -1  # past nms_topk: out, and no part in the suppression
        work = _compute_dtype(rows[:keep])
        _suppress_rows(work, keep, p.nms_threshold, p.force_suppress)
        rows[:keep, 0] = work[:, 0]
    return [out]


def _compute_dtype(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, np.float32 if a.dtype == np.float16 else a.dtype)


def _detect_gpu(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    p = attrs.parsed
    _check_variances(_DETECT, p)
    cls_prob, loc_pred, anchor = inputs
    multibox_detection(ctx, p, cls_prob, loc_pred, anchor, outputs[0], req_code(_DETECT, req[0]))


_detect_compute = host_compute(_DETECT, multibox_detection_np)
(
    register_op(_DETECT)
    .describe("Convert multibox detection predictions.")
    .set_attr_parser(MultiBoxDetectionParam)
    .set_num_inputs(3)
    .set_num_outputs(1)
    .set_attr(FListInputNames, lambda attrs: ["cls_prob", "loc_pred", "anchor"])
    .set_attr(FInferShape, _detect_shape)
    .set_attr(FInferType, same_float_type(_DETECT, ("cls_prob", "loc_pred", "anchor")))
    .set_attr(FCompute_cpu, _detect_compute)
    .set_attr(FCompute_gpu, _detect_gpu)
    .set_attr(FGradient, make_zero_grad_nodes)
    .add_argument("cls_prob", "NDArray-or-Symbol", "Class probabilities.")
    .add_argument("loc_pred", "NDArray-or-Symbol", "Location regression predictions.")
    .add_argument("anchor", "NDArray-or-Symbol", "Multibox prior anchor boxes")
    .add_arguments(MultiBoxDetectionParam.fields())
)
