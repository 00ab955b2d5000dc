"""OpCase rows for contrib_proposal.py (_contrib_Proposal and _contrib_MultiProposal).

The reference is a plain loop over cells, anchors and boxes in float64, written from
MXNet's documented RPN proposal semantics (Faster R-CNN's anchors, box decoding, +1 pixel
areas, greedy NMS, cyclic padding): an independent route to the op's numba kernels. The
ops are forward only (zero gradient; tested in test_contrib_proposal.py) and float32 only.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from op_db import OpCase


def anchors_ref(stride: int, scales: Any, ratios: Any) -> list[list[float]]:
    """Faster R-CNN's anchors around cell (0, 0): for each ratio, for each scale."""
    out = []
    centre = (stride - 1) / 2
    for r in ratios:
        base_w = math.floor(math.sqrt(math.floor(stride * stride / r)) + 0.5)
        base_h = math.floor(base_w * r + 0.5)
        for k in scales:
            w, h = base_w * k, base_h * k
            out.append([centre - (w - 1) / 2, centre - (h - 1) / 2, centre + (w - 1) / 2,
                        centre + (h - 1) / 2])  # fmt: skip
    return out


def _iou(a: Any, b: Any) -> float:
    iw = max(min(a[2], b[2]) - max(a[0], b[0]) + 1, 0.0)
    ih = max(min(a[3], b[3]) - max(a[1], b[1]) + 1, 0.0)
    inter = iw * ih
    union = (a[2] - a[0] + 1) * (a[3] - a[1] + 1) + (b[2] - b[0] + 1) * (b[3] - b[1] + 1) - inter
    return inter / union


def _image_ref(cls: np.ndarray, deltas: np.ndarray, info: Any, p: dict[str, Any]) -> list:
    """[(box, score)] * post of one image."""
    stride = p["feature_stride"]
    base = anchors_ref(stride, p["scales"], p["ratios"])
    num, (height, width) = len(base), cls.shape[1:]
    im_h, im_w, im_scale = (float(v) for v in info)
    min_size = p["rpn_min_size"] * im_scale
    dets = []
    for y in range(height):
        for x in range(width):
            for a, anchor in enumerate(base):
                sx, sy = x * stride, y * stride
                ax1, ay1, ax2, ay2 = anchor[0] + sx, anchor[1] + sy, anchor[2] + sx, anchor[3] + sy
                d = [float(deltas[4 * a + k, y, x]) for k in range(4)]
                if p["iou_loss"]:
                    box = [ax1 + d[0], ay1 + d[1], ax2 + d[2], ay2 + d[3]]
                else:
                    aw, ah = ax2 - ax1 + 1, ay2 - ay1 + 1
                    cx, cy = ax1 + (aw - 1) / 2 + d[0] * aw, ay1 + (ah - 1) / 2 + d[1] * ah
                    pw, ph = math.exp(d[2]) * aw, math.exp(d[3]) * ah
                    box = [
                        cx - (pw - 1) / 2,
                        cy - (ph - 1) / 2,
                        cx + (pw - 1) / 2,
                        cy + (ph - 1) / 2,
                    ]
                limits = (im_w - 1, im_h - 1, im_w - 1, im_h - 1)
                box = [max(min(v, hi), 0.0) for v, hi in zip(box, limits)]
                inside = y < int(im_h / stride) and x < int(im_w / stride)
                score = float(cls[num + a, y, x]) if inside else -1.0
                if box[2] - box[0] + 1 < min_size or box[3] - box[1] + 1 < min_size:
                    g = min_size / 2
                    box = [box[0] - g, box[1] - g, box[2] + g, box[3] + g]
                    score = -1.0
                dets.append((box, score))
    ranked = sorted(dets, key=lambda d: -d[1])  # sorted() is stable
    if p["rpn_pre_nms_top_n"] > 0:
        ranked = ranked[: p["rpn_pre_nms_top_n"]]
    post = p["rpn_post_nms_top_n"]
    kept: list = []
    for det in ranked:
        if len(kept) == post:
            break
        if all(_iou(k[0], det[0]) <= p["threshold"] for k in kept):
            kept.append(det)
    return [kept[i % len(kept)] for i in range(post)]


DEFAULTS = {
    "rpn_pre_nms_top_n": 6000,
    "rpn_post_nms_top_n": 300,
    "threshold": 0.7,
    "rpn_min_size": 16,
    "scales": (4.0, 8.0, 16.0, 32.0),
    "ratios": (0.5, 1.0, 2.0),
    "feature_stride": 16,
    "output_score": False,
    "iou_loss": False,
}


def proposal_ref(cls_prob: np.ndarray, bbox_pred: np.ndarray, im_info: np.ndarray, **params):
    """[rois (N * post, 5)] plus [scores (N * post, 1)] when output_score."""
    p = {**DEFAULTS, **params}
    rois, scores = [], []
    for b in range(cls_prob.shape[0]):
        for box, score in _image_ref(cls_prob[b], bbox_pred[b], im_info[b], p):
            rois.append([b, *box])
            scores.append([score])
    out = [np.array(rois)]
    return [*out, np.array(scores)] if p["output_score"] else out


def _inputs(batch: int, height: int, width: int, anchors: int, stride: int) -> Any:
    """Scores in (0, 1), small deltas, images a little smaller than the feature map."""

    def make(rng: np.random.Generator, dtype: Any) -> list[np.ndarray]:
        cls = rng.uniform(0, 1, size=(batch, 2 * anchors, height, width))
        deltas = rng.normal(0, 0.3, size=(batch, 4 * anchors, height, width))
        info = [
            [rng.integers(stride, height * stride + 1), rng.integers(stride, width * stride + 1),
             rng.uniform(0.5, 1.5)]
            for _ in range(batch)
        ]  # fmt: skip
        return [cls.astype(dtype), deltas.astype(dtype), np.array(info, dtype)]

    return make


_SMALL = {"scales": (1.0, 2.0), "ratios": (0.5, 1.0, 2.0), "feature_stride": 4, "rpn_min_size": 3}

CASES = [
    OpCase(
        "_contrib_MultiProposal",
        shapes=[(2, 12, 4, 5), (2, 24, 4, 5), (2, 3)],
        params={**_SMALL, "rpn_pre_nms_top_n": 50, "rpn_post_nms_top_n": 20, "output_score": True},
        reference=proposal_ref,
        inputs=_inputs(2, 4, 5, 6, 4),
        low=0.0,
        dtypes=(np.float32,),
        grad=False,
    ),
    OpCase(
        "_contrib_MultiProposal",
        shapes=[(3, 12, 3, 4), (3, 24, 3, 4), (3, 3)],
        params={**_SMALL, "rpn_post_nms_top_n": 30, "threshold": 0.3, "iou_loss": True},
        reference=proposal_ref,
        inputs=_inputs(3, 3, 4, 6, 4),
        low=0.0,
        dtypes=(np.float32,),
        grad=False,
        id="iou_loss-padded",
    ),
    OpCase(
        "_contrib_Proposal",
        shapes=[(1, 12, 4, 5), (1, 24, 4, 5), (1, 3)],
        params={**_SMALL, "rpn_post_nms_top_n": 15, "output_score": True},
        reference=proposal_ref,
        inputs=_inputs(1, 4, 5, 6, 4),
        low=0.0,
        dtypes=(np.float32,),
        grad=False,
    ),
]
