"""Proposal / MultiProposal on the op's device: decode, rank, suppress and emit as kernels.

The same five steps as the host (contrib_proposal.py's docstring), over all images at
once: one item per anchor decodes its box and score (float32, as MXNet); the negated
scores are sorted per image by the bitonic network (ascending: equal scores by anchor
order, NaN last, as the host's stable ranking); the first rpn_pre_nms_top_n become the
candidates (corners and +1-pixel areas); _nms_device.suppress keeps at most
rpn_post_nms_top_n of them greedily; one item per output row writes kept box
i % kept. The one array read back is im_info (three numbers an image), to raise the
host's error when the image is larger than the feature map covers.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import kernel
from ..base import NNVMError
from ..kernel.launch import NULL, is_gpu, run_rows, store
from ._bitonic import scratch_bytes, sort_rows
from ._host_staged import to_host
from ._index_kernels import device_empty, to_ctx
from ._nms_device import Alloc, suppress

_F32 = np.float32


@kernel.parallel_for
def _decode(t, dets, keys, fg_all, deltas_all, info, anchors, num, height, width, stride,
            min_size_px, iou_loss):  # fmt: skip
    """Anchor t = (image b, cell (y, x), anchor a): dets row [x1, y1, x2, y2, score] and
    its sort key (the negated score)."""
    per_image = height * width * num
    b = t // per_image
    i = t - b * per_image
    cell = i // num
    a = i - cell * num
    y = cell // width
    x = cell - y * width
    one = np.float32(1.0)
    half = np.float32(0.5)
    zero = np.float32(0.0)
    im_h = info[3 * b]
    im_w = info[3 * b + 1]
    xmax = im_w - one
    ymax = im_h - one
    min_size = np.float32(min_size_px) * info[3 * b + 2]
    grow = min_size / np.float32(2.0)
    real_h = int(im_h / np.float32(stride))
    real_w = int(im_w / np.float32(stride))
    sx = np.float32(x * stride)
    sy = np.float32(y * stride)
    ax1 = anchors[4 * a] + sx
    ay1 = anchors[4 * a + 1] + sy
    ax2 = anchors[4 * a + 2] + sx
    ay2 = anchors[4 * a + 3] + sy
    plane = height * width
    at = cell  # y * width + x
    d_base = (b * 4 * num + 4 * a) * plane + at
    d0 = deltas_all[d_base]
    d1 = deltas_all[d_base + plane]
    d2 = deltas_all[d_base + 2 * plane]
    d3 = deltas_all[d_base + 3 * plane]
    if iou_loss:
        x1, y1, x2, y2 = ax1 + d0, ay1 + d1, ax2 + d2, ay2 + d3
    else:
        aw = ax2 - ax1 + one
        ah = ay2 - ay1 + one
        cx = d0 * aw + (ax1 + half * (aw - one))
        cy = d1 * ah + (ay1 + half * (ah - one))
        pw = math.exp(d2) * aw
        ph = math.exp(d3) * ah
        x1 = cx - half * (pw - one)
        y1 = cy - half * (ph - one)
        x2 = cx + half * (pw - one)
        y2 = cy + half * (ph - one)
    x1 = max(min(x1, xmax), zero)
    y1 = max(min(y1, ymax), zero)
    x2 = max(min(x2, xmax), zero)
    y2 = max(min(y2, ymax), zero)
    score = fg_all[(b * 2 * num + num + a) * plane + at]  # the foreground half
    if y >= real_h or x >= real_w:
        score = np.float32(-1.0)
    if x2 - x1 + one < min_size or y2 - y1 + one < min_size:
        x1 -= grow
        y1 -= grow
        x2 += grow
        y2 += grow
        score = np.float32(-1.0)
    o = t * 5
    dets[o] = x1
    dets[o + 1] = y1
    dets[o + 2] = x2
    dets[o + 3] = y2
    dets[o + 4] = score
    keys[t] = -score


@kernel.parallel_for
def _candidates(t, boxes, ids, src, dets, order, p2, m, pre):
    """Candidate t = (image b, rank r < pre): corners and +1-pixel area."""
    b = t // pre
    r = t - b * pre
    i = order[b * p2 + r]
    src[t] = i
    d = (b * m + i) * 5
    one = np.float32(1.0)
    o = t * 5
    for c in range(4):
        boxes[o + c] = dets[d + c]
    boxes[o + 4] = (dets[d + 2] - dets[d] + one) * (dets[d + 3] - dets[d + 1] + one)
    ids[t] = 0


@kernel.parallel_for
def _emit(t, rois, scores, dets, kept, kept_count, src, m, pre, post, rmode, smode):
    """Output row t = (image b, row i): kept box i % kept of image b (zeros if none)."""
    b = t // post
    i = t - b * post
    count = kept_count[b]
    o = t * 5
    store(rois, o, b, rmode)
    if count == 0:
        for c in range(4):
            store(rois, o + 1 + c, 0, rmode)
        store(scores, t, 0, smode)
        return
    j = kept[b * pre + i % count]
    d = (b * m + src[b * pre + j]) * 5
    for c in range(4):
        store(rois, o + 1 + c, dets[d + c], rmode)
    store(scores, t, dets[d + 4], smode)


def _flat(a: Any) -> Any:
    return a.reshape(int(a.size)) if len(a.shape) != 1 else a


def decode(ctx: Any, p: Any, anchors: np.ndarray, inputs: list[Any]) -> Any:
    """dets (images, H * W * A, 5) on ctx's device: every anchor's clipped box and score
    (its rows flat on a GPU; the CPU's multi_proposal_np uses it too)."""
    dets, _ = _decode_with_keys(ctx, p, anchors, inputs)
    if is_gpu(ctx):
        return dets
    batches = int(inputs[0].shape[0])
    return dets[: int(dets.size) // 5 * 5].reshape(batches, -1, 5)


def _decode_with_keys(ctx: Any, p: Any, anchors: np.ndarray, inputs: list[Any]
                      ) -> tuple[Any, Any]:  # fmt: skip
    cls_prob, bbox_pred, im_info = inputs
    batches, _, height, width = (int(d) for d in cls_prob.shape)
    num = int(anchors.shape[0])
    m = height * width * num
    dets = device_empty(ctx, batches * m * 5, _F32)
    keys = device_empty(ctx, batches * m, _F32)
    if batches * m:
        run_rows(ctx, "Proposal", _decode, batches * m, dets, keys, _flat(cls_prob),
                 _flat(bbox_pred), _flat(im_info), to_ctx(ctx, anchors.reshape(-1)), num,
                 height, width, p.feature_stride, float(p.rpn_min_size),
                 bool(p.iou_loss))  # fmt: skip
    return dets, keys


def check_image_sizes(op: str, stride: int, im_info: np.ndarray, height: int, width: int
                      ) -> None:  # fmt: skip
    """NNVMError when an image (host im_info rows) is larger than the feature map covers."""
    for b, (im_h, im_w, _) in enumerate(np.asarray(im_info, _F32).reshape(-1, 3)):
        real_h, real_w = int(im_h / _F32(stride)), int(im_w / _F32(stride))
        if real_h > height or real_w > width:
            raise NNVMError(
                f"{op}: im_info of image {b} (height {im_h:g}, width {im_w:g}) / "
                f"feature_stride {stride} covers {real_h} x {real_w} cells; the feature "
                f"map has only {height} x {width}"
            )


def multi_proposal(ctx: Any, op: str, p: Any, anchors: np.ndarray, inputs: list[Any],
                   outputs: list[Any], modes: list[int]) -> None:  # fmt: skip
    """(rois, scores) of (Multi)Proposal for float32 inputs on ctx's device."""
    cls_prob, _, im_info = inputs
    if all(mode == NULL for mode in modes):
        return
    batches, _, height, width = (int(d) for d in cls_prob.shape)
    host_info = to_host(ctx, im_info) if is_gpu(ctx) else np.asarray(im_info)
    check_image_sizes(op, p.feature_stride, host_info, height, width)
    m = height * width * int(anchors.shape[0])
    post = p.rpn_post_nms_top_n
    if batches * m == 0:
        return
    alloc = Alloc(ctx)
    dets, keys = _decode_with_keys(ctx, p, anchors, inputs)
    space = alloc(scratch_bytes(batches, m, _F32), np.uint8)
    _, order, p2 = sort_rows(ctx, space, keys, (batches, m, 1), True)
    pre = min(m, p.rpn_pre_nms_top_n) if p.rpn_pre_nms_top_n > 0 else m
    boxes = alloc(batches * pre * 5, _F32)
    ids = alloc(batches * pre, _F32)
    src = alloc(batches * pre, np.int64)
    run_rows(ctx, op, _candidates, batches * pre, boxes, ids, src, dets, order, p2, m, pre)
    kept, kept_count = suppress(ctx, alloc, boxes, ids, src, (batches, pre), p.threshold,
                                False, True, post)  # fmt: skip
    rois, scores = (_flat(o) for o in outputs)
    run_rows(ctx, op, _emit, batches * post, rois, scores, dets, kept, kept_count, src, m,
             pre, post, modes[0], modes[1])  # fmt: skip


__all__ = ["multi_proposal"]
