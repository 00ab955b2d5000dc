"""OpCase rows for contrib_bbox.py and contrib_multibox.py (and _contrib_quadratic).

The references are plain loops over boxes in float64, written from MXNet's documented
semantics: an independent route to the ops' vectorised NumPy / numba code. These ops have
zero (or index-copy) gradients, which finite differences cannot check: their gradients are
tested in test_contrib_compat_bbox.py.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from op_db import OpCase

# -- references --------------------------------------------------------------------------------


def _corner(box: Any, fmt: str) -> tuple[float, float, float, float]:
    a, b, c, d = (float(v) for v in box)
    if fmt == "corner":
        return a, b, c, d
    return a - c / 2, b - d / 2, a + c / 2, b + d / 2


def _area(box: Any, fmt: str) -> float:
    a, b, c, d = (float(v) for v in box)
    w, h = (c - a, d - b) if fmt == "corner" else (c, d)
    return 0.0 if w < 0 or h < 0 else w * h


def iou_ref(a: Any, b: Any, fmt: str = "corner") -> float:
    al, at, ar, ab = _corner(a, fmt)
    bl, bt, br, bb = _corner(b, fmt)
    inter = max(0.0, min(ar, br) - max(al, bl)) * max(0.0, min(ab, bb) - max(at, bt))
    if inter <= 0:
        return 0.0
    return inter / (_area(a, fmt) + _area(b, fmt) - inter)


def box_iou_ref(lhs: np.ndarray, rhs: np.ndarray, format: str = "corner") -> np.ndarray:
    a, b = lhs.reshape(-1, 4), rhs.reshape(-1, 4)
    out = np.array([[iou_ref(x, y, format) for y in b] for x in a])
    return out.reshape(lhs.shape[:-1] + rhs.shape[:-1])


def box_nms_ref(
    data: np.ndarray,
    overlap_thresh: float = 0.5,
    valid_thresh: float = 0.0,
    topk: int = -1,
    coord_start: int = 2,
    score_index: int = 1,
    id_index: int = -1,
    background_id: int = -1,
    force_suppress: bool = False,
    in_format: str = "corner",
    out_format: str = "corner",
) -> np.ndarray:
    """Greedy NMS: a box is kept when no earlier kept box of its class overlaps it too much."""
    n, width = data.shape[-2:]
    x = data.reshape(-1, n, width)
    out = -np.ones_like(x)
    cs = coord_start
    for b, rows in enumerate(x):
        cand = [
            i
            for i in range(n)
            if rows[i, score_index] > valid_thresh
            and (id_index < 0 or rows[i, id_index] != background_id)
        ]
        cand = sorted(cand, key=lambda i: -rows[i, score_index])  # sorted() is stable
        if topk >= 0:
            cand = cand[:topk]
        kept: list[int] = []
        for i in cand:
            if not any(
                (force_suppress or id_index < 0 or int(rows[k, id_index]) == int(rows[i, id_index]))
                and iou_ref(rows[k, cs : cs + 4], rows[i, cs : cs + 4], in_format) > overlap_thresh
                for k in kept
            ):
                kept.append(i)
        for j, i in enumerate(kept):
            out[b, j] = rows[i]
            if in_format != out_format and rows[i, cs] >= 0:
                a, bb, c, d = rows[i, cs : cs + 4]
                out[b, j, cs : cs + 4] = (
                    [(a + c) / 2, (bb + d) / 2, c - a, d - bb]
                    if out_format == "center"
                    else [a - c / 2, bb - d / 2, a + c / 2, bb + d / 2]
                )
    if topk == 0:
        return data
    return out.reshape(data.shape)


def bipartite_ref(
    data: np.ndarray, threshold: float, is_ascend: bool = False, topk: int = -1
) -> list[np.ndarray]:
    nr, nc = data.shape[-2:]
    x = data.reshape(-1, nr, nc)
    rows, cols = -np.ones((len(x), nr)), -np.ones((len(x), nc))
    for b, s in enumerate(x):
        pairs = sorted(
            ((float(s[r, c]), r, c) for r in range(nr) for c in range(nc)),
            key=lambda t: t[0] if is_ascend else -t[0],
        )
        count = 0
        for v, r, c in pairs:
            if rows[b, r] >= 0 or cols[b, c] >= 0:
                continue
            if not (v < threshold if is_ascend else v > threshold):
                break
            rows[b, r], cols[b, c] = c, r
            count += 1
            if 0 < topk < count:  # MXNet stops after the match that exceeds topk
                break
    return [rows.reshape(data.shape[:-1]), cols.reshape((*data.shape[:-2], nc))]


def _centre(box: Any) -> tuple[float, float, float, float]:
    x0, y0, x1, y1 = (float(v) for v in box)
    return (x0 + x1) / 2, (y0 + y1) / 2, x1 - x0, y1 - y0


def box_encode_ref(samples, matches, anchors, refs, means, stds) -> list[np.ndarray]:
    targets, masks = np.zeros(anchors.shape), np.zeros(anchors.shape)
    for b in range(samples.shape[0]):
        for i in range(samples.shape[1]):
            if samples[b, i] > 0.5:
                ax, ay, aw, ah = _centre(anchors[b, i])
                gx, gy, gw, gh = _centre(refs[b, int(matches[b, i])])
                t = [(gx - ax) / aw, (gy - ay) / ah, math.log(gw / aw), math.log(gh / ah)]
                targets[b, i] = [(t[k] - means[k]) / stds[k] for k in range(4)]
                masks[b, i] = 1
    return [targets, masks]


def box_decode_ref(
    data, anchors, std0=1.0, std1=1.0, std2=1.0, std3=1.0, clip=-1.0, format="center"
) -> np.ndarray:
    out = np.zeros(data.shape)
    for b in range(data.shape[0]):
        for i in range(data.shape[1]):
            a = anchors[0, i]
            ax, ay, aw, ah = _centre(a) if format == "corner" else a
            d = data[b, i]
            ew, eh = d[2] * std2, d[3] * std3
            if clip > 0:
                ew, eh = min(ew, clip), min(eh, clip)
            x, y = d[0] * std0 * aw + ax, d[1] * std1 * ah + ay
            hw, hh = math.exp(ew) * aw / 2, math.exp(eh) * ah / 2
            out[b, i] = [x - hw, y - hh, x + hw, y + hh]
    return out


def multibox_prior_ref(
    data, sizes=(1.0,), ratios=(1.0,), clip=False, steps=(-1.0, -1.0), offsets=(0.5, 0.5)
) -> np.ndarray:
    h, w = data.shape[2:]
    step_y = steps[0] if steps[0] > 0 else 1 / h
    step_x = steps[1] if steps[1] > 0 else 1 / w
    shapes = [(s, ratios[0]) for s in sizes] + [(sizes[0], r) for r in ratios[1:]]
    out = []
    for r in range(h):
        for c in range(w):
            cy, cx = (r + offsets[0]) * step_y, (c + offsets[1]) * step_x
            for s, q in shapes:
                hw, hh = s * h / w * math.sqrt(q) / 2, s / math.sqrt(q) / 2
                box = [cx - hw, cy - hh, cx + hw, cy + hh]
                out.append([min(max(v, 0.0), 1.0) for v in box] if clip else box)
    return np.array(out)[None]


def multibox_target_ref(
    anchor,
    label,
    cls_pred,
    overlap_threshold=0.5,
    ignore_label=-1.0,
    negative_mining_ratio=-1.0,
    negative_mining_thresh=0.5,
    minimum_negative_samples=0,
    variances=(0.1, 0.1, 0.2, 0.2),
):
    anchors = anchor.reshape(-1, 4)
    na, nb = len(anchors), label.shape[0]
    loc, mask, cls = np.zeros((nb, na, 4)), np.zeros((nb, na, 4)), np.full((nb, na), ignore_label)
    for b in range(nb):
        gts = []
        for row in label[b]:
            if row[0] == -1:
                break
            gts.append(row)
        if not gts:
            continue
        ious = [[iou_ref(a, g[1:5]) for g in gts] for a in anchors]
        match = [-1] * na
        pos = [False] * na
        done = [False] * len(gts)
        while not all(done):
            best, pair = 1e-6, None
            for j in range(na):
                for k in range(len(gts)):
                    if not pos[j] and not done[k] and ious[j][k] > best:
                        best, pair = ious[j][k], (j, k)
            if pair is None:
                break
            pos[pair[0]], done[pair[1]], match[pair[0]] = True, True, pair[1]
        best_iou = [-1.0] * na
        for j in range(na):
            if not pos[j]:
                match[j] = int(np.argmax(ious[j]))
                best_iou[j] = ious[j][match[j]]
        if overlap_threshold > 0:
            for j in range(na):
                pos[j] = pos[j] or best_iou[j] > overlap_threshold
        neg = [not p for p in pos]
        if negative_mining_ratio > 0:
            count = min(int(sum(pos) * negative_mining_ratio), na - sum(pos))
            cand = [j for j in range(na) if not pos[j] and best_iou[j] < negative_mining_thresh]
            p = cls_pred[b]
            prob = {
                j: math.exp(p[0, j] - p[:, j].max()) / np.exp(p[:, j] - p[:, j].max()).sum()
                for j in cand
            }
            chosen = sorted(cand, key=lambda j: prob[j])[: max(count, 0)]
            neg = [j in chosen for j in range(na)]
        for j in range(na):
            if pos[j]:
                g = gts[match[j]]
                ax, ay, aw, ah = _centre(anchors[j])
                gx, gy, gw, gh = _centre(g[1:5])
                loc[b, j] = [
                    (gx - ax) / aw / variances[0],
                    (gy - ay) / ah / variances[1],
                    math.log(gw / aw) / variances[2],
                    math.log(gh / ah) / variances[3],
                ]
                mask[b, j], cls[b, j] = 1, g[0] + 1
            elif neg[j]:
                cls[b, j] = 0
    return [loc.reshape(nb, -1), mask.reshape(nb, -1), cls]


def multibox_detection_ref(
    cls_prob,
    loc_pred,
    anchor,
    clip=True,
    threshold=0.01,
    nms_threshold=0.5,
    force_suppress=False,
    nms_topk=-1,
    variances=(0.1, 0.1, 0.2, 0.2),
    background_id=0,
) -> np.ndarray:
    nb, nc, na = cls_prob.shape
    out = -np.ones((nb, na, 6))
    for b in range(nb):
        rows = []
        for i in range(na):
            probs = [cls_prob[b, c, i] for c in range(1, nc)]
            c = int(np.argmax(probs))
            if probs[c] >= threshold:
                x0, y0, x1, y1 = anchor[0, i]
                aw, ah = x1 - x0, y1 - y0
                d = loc_pred[b, 4 * i : 4 * i + 4]
                x, y = (
                    d[0] * variances[0] * aw + (x0 + x1) / 2,
                    d[1] * variances[1] * ah + (y0 + y1) / 2,
                )
                hw = math.exp(d[2] * variances[2]) * aw / 2
                hh = math.exp(d[3] * variances[3]) * ah / 2
                box = [x - hw, y - hh, x + hw, y + hh]
                rows.append([c, probs[c]] + [min(max(v, 0), 1) if clip else v for v in box])
        if rows and 0 < nms_threshold <= 1:
            ranked = sorted(rows, key=lambda row: -row[1])
            keep = len(rows) if nms_topk <= 0 else min(nms_topk, len(rows))
            rows = [list(r) for r in ranked[:keep]] + [[-1.0, *r[1:]] for r in rows[keep:]]
            for i, ri in enumerate(rows):
                for rj in rows[i + 1 :]:
                    same = force_suppress or ri[0] == rj[0]
                    if (
                        ri[0] >= 0
                        and rj[0] >= 0
                        and same
                        and iou_ref(ri[2:], rj[2:]) >= nms_threshold
                    ):
                        rj[0] = -1
        for j, row in enumerate(rows):
            out[b, j] = row
    return out


def _detect_inputs(rng: np.random.Generator, dtype: Any) -> list[np.ndarray]:
    prob = rng.permutation(2 * 3 * 9).reshape(2, 3, 9) / 54  # distinct scores
    loc = rng.uniform(-0.5, 0.5, (2, 36))
    anchors = (_boxes(rng, (1, 9)) * 0.6).astype(dtype)
    return [prob.astype(dtype), loc.astype(dtype), anchors]


# MultiBoxPrior and MultiBoxTarget's regression targets compute in float32 (as MXNet does)
F32_MATH = {np.float64: (1e-4, 1e-5)}

# -- inputs ------------------------------------------------------------------------------------


def _boxes(rng: np.random.Generator, shape: tuple[int, ...], fmt: str = "corner") -> np.ndarray:
    xy = rng.uniform(0, 1, size=(*shape, 2))
    wh = rng.uniform(0.1, 0.6, size=(*shape, 2))
    return np.concatenate([xy, xy + wh if fmt == "corner" else wh], axis=-1)


def _nms_inputs(fmt: str) -> Any:
    def make(rng: np.random.Generator, dtype: Any) -> list[np.ndarray]:
        data = np.empty((2, 7, 6))
        data[..., 0] = rng.integers(-1, 2, size=(2, 7))  # class ids -1 (background), 0, 1
        data[..., 1] = rng.permutation(14).reshape(2, 7) / 14  # distinct scores
        data[..., 2:] = _boxes(rng, (2, 7), fmt)
        return [data.astype(dtype)]

    return make


def _distinct_scores(rng: np.random.Generator, dtype: Any) -> list[np.ndarray]:
    return [(rng.permutation(2 * 4 * 5).reshape(2, 4, 5) / 40).astype(dtype)]


def _encode_inputs(rng: np.random.Generator, dtype: Any) -> list[np.ndarray]:
    samples = rng.choice([-1.0, 0.0, 1.0], size=(2, 5))
    matches = rng.integers(0, 3, size=(2, 5)).astype(float)
    means, stds = rng.uniform(-0.2, 0.2, 4), rng.uniform(0.5, 1.5, 4)
    values = (samples, matches, _boxes(rng, (2, 5)), _boxes(rng, (2, 3)), means, stds)
    return [v.astype(dtype) for v in values]


def _decode_inputs(rng: np.random.Generator, dtype: Any) -> list[np.ndarray]:
    return [rng.uniform(-1, 1, (2, 5, 4)).astype(dtype), _boxes(rng, (1, 5)).astype(dtype)]


def _target_inputs(rng: np.random.Generator, dtype: Any) -> list[np.ndarray]:
    anchors = _boxes(rng, (1, 12)) * 0.7
    label = -np.ones((2, 3, 5))
    label[0, :2, 0] = [0, 2]
    label[0, :2, 1:] = _boxes(rng, (2,)) * 0.7
    label[1, 0, 0] = 1
    label[1, 0, 1:] = anchors[0, 3] + 0.01  # a near-copy of anchor 3: a sure match
    cls_pred = rng.uniform(0, 3, (2, 3, 12))
    return [x.astype(dtype) for x in (anchors, label, cls_pred)]


def _nms_case(id_: str, fmt: str = "corner", **params: Any) -> OpCase:
    return OpCase(
        "_contrib_box_nms",
        shapes=[(2, 7, 6)],
        params={"in_format": fmt, **params},
        reference=box_nms_ref,
        inputs=_nms_inputs(fmt),
        grad=False,
        id=id_,
    )


CASES = [
    OpCase(
        "_contrib_box_iou",
        shapes=[(2, 3, 4), (5, 4)],
        reference=box_iou_ref,
        inputs=lambda rng, dt: [_boxes(rng, (2, 3)).astype(dt), _boxes(rng, (5,)).astype(dt)],
        grad=False,
    ),
    OpCase(
        "_contrib_box_iou",
        shapes=[(3, 4), (2, 2, 4)],
        params={"format": "center"},
        reference=box_iou_ref,
        grad=False,
        id="center",
        inputs=lambda rng, dt: [
            _boxes(rng, (3,), "center").astype(dt),
            _boxes(rng, (2, 2), "center").astype(dt),
        ],
    ),
    _nms_case("default", overlap_thresh=0.3),
    _nms_case("classes", id_index=0, background_id=-1, overlap_thresh=0.2, valid_thresh=0.1),
    _nms_case("force-topk", id_index=0, force_suppress=True, topk=4, out_format="center"),
    _nms_case("center-in", "center", id_index=0, background_id=0, out_format="corner"),
    _nms_case("topk0", topk=0),
    OpCase(
        "_contrib_box_non_maximum_suppression",
        shapes=[(2, 7, 6)],
        reference=box_nms_ref,
        params={"overlap_thresh": 0.3},
        inputs=_nms_inputs("corner"),
        grad=False,
    ),
    OpCase(
        "_contrib_bipartite_matching",
        shapes=[(2, 4, 5)],
        params={"threshold": 0.3},
        reference=bipartite_ref,
        inputs=_distinct_scores,
        grad=False,
    ),
    OpCase(
        "_contrib_bipartite_matching",
        shapes=[(2, 4, 5)],
        reference=bipartite_ref,
        params={"threshold": 0.6, "is_ascend": True, "topk": 1},
        inputs=_distinct_scores,
        grad=False,
        id="ascend-topk",
    ),
    OpCase(
        "_contrib_box_encode",
        shapes=[(2, 5), (2, 5), (2, 5, 4), (2, 3, 4), (4,), (4,)],
        reference=box_encode_ref,
        inputs=_encode_inputs,
        grad=False,
        check_op=False,
    ),
    OpCase(
        "_contrib_box_decode",
        shapes=[(2, 5, 4), (1, 5, 4)],
        reference=box_decode_ref,
        params={"std0": 0.5, "std1": 0.7, "std2": 0.4, "std3": 0.9, "clip": 0.3},
        inputs=_decode_inputs,
        grad=False,
    ),
    OpCase(
        "_contrib_box_decode",
        shapes=[(2, 5, 4), (1, 5, 4)],
        reference=box_decode_ref,
        params={"format": "corner"},
        inputs=_decode_inputs,
        grad=False,
        id="corner",
    ),
    OpCase(
        "_contrib_MultiBoxPrior",
        shapes=[(1, 2, 3, 4)],
        reference=multibox_prior_ref,
        params={"sizes": (0.5, 0.25), "ratios": (1.0, 2.0, 0.5)},
        grad=False,
        tols=F32_MATH,
    ),
    OpCase(
        "_contrib_MultiBoxPrior",
        shapes=[(2, 1, 4, 2)],
        reference=multibox_prior_ref,
        params={
            "sizes": (0.7,),
            "ratios": (3.0, 0.4),
            "clip": True,
            "steps": (0.2, 0.3),
            "offsets": (0.2, 0.7),
        },
        grad=False,
        id="clip-steps",
        tols=F32_MATH,
    ),
    OpCase(
        "_contrib_MultiBoxTarget",
        shapes=[(1, 12, 4), (2, 3, 5), (2, 3, 12)],
        reference=multibox_target_ref,
        inputs=_target_inputs,
        grad=False,
        tols=F32_MATH,
    ),
    OpCase(
        "_contrib_MultiBoxTarget",
        shapes=[(1, 12, 4), (2, 3, 5), (2, 3, 12)],
        reference=multibox_target_ref,
        inputs=_target_inputs,
        grad=False,
        tols=F32_MATH,
        params={
            "overlap_threshold": 0.05,
            "negative_mining_ratio": 2.0,
            "negative_mining_thresh": 0.5,
            "ignore_label": 7.0,
        },
        id="mining",
    ),
    OpCase(
        "_contrib_MultiBoxDetection",
        shapes=[(2, 3, 9), (2, 36), (1, 9, 4)],
        reference=multibox_detection_ref,
        inputs=_detect_inputs,
        params={"threshold": 0.2, "nms_threshold": 0.3},
        grad=False,
    ),
    OpCase(
        "_contrib_MultiBoxDetection",
        shapes=[(2, 3, 9), (2, 36), (1, 9, 4)],
        reference=multibox_detection_ref,
        inputs=_detect_inputs,
        params={"clip": False, "nms_threshold": 0.2, "force_suppress": True, "nms_topk": 3},
        grad=False,
        id="force-topk",
    ),
    OpCase(
        "_contrib_quadratic",
        shapes=[(3, 4)],
        params={"a": 2.0, "b": -1.0, "c": 0.5},
        reference=lambda x, a, b, c: a * x * x + b * x + c,
    ),
]
