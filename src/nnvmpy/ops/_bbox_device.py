"""box_iou, box_encode, box_decode and bipartite_matching on the op's device.

The host versions (contrib_bbox.py) are NumPy expressions and one numba walk; on a GPU
their arrays used to be staged through the host. Here:

- box_iou: one item per (lhs box, rhs box) pair;
- box_encode: one item per sample (its matched reference, clipped to [0, M) as the host
  clips, NaN as 0), four targets and four mask entries;
- box_decode: one item per box;
- bipartite_matching: the scores of each batch sorted by the bitonic network (_bitonic:
  ascending on the score or its negation, equal scores by position and NaN last, as the
  host's stable argsort), then one item per batch walks its pairs greedily, as the host.

Each takes (ctx, params, inputs, outputs, write modes). The element formulas compute
in float64 and store in the output's dtype (the host computes in the data's dtype:
results agree to its rounding, the IoU of float32 boxes within an ulp or two). Math on
values the simulator's Python would reject (log of non-positive numbers, division by
zero) is written out as the IEEE result.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import kernel
from ..kernel.launch import NULL, WRITE, log_ieee, run_rows, store, uindex
from ._bitonic import key_dtype, scratch_bytes, sort_rows
from ._index_kernels import device_empty

NAN = math.nan
INF = math.inf


@kernel.device_function
def _box(boxes, i, center):
    """(left, top, right, bottom, area) of box i of boxes (flat, 4 per box), float64;
    an area with a negative side is 0."""
    a = float(boxes[uindex(4 * i)])
    b = float(boxes[uindex(4 * i + 1)])
    c = float(boxes[uindex(4 * i + 2)])
    d = float(boxes[uindex(4 * i + 3)])
    if center:
        w = c
        h = d
        left, top, right, bottom = a - c / 2, b - d / 2, a + c / 2, b + d / 2
    else:
        w = c - a
        h = d - b
        left, top, right, bottom = a, b, c, d
    area = 0.0 if (w < 0 or h < 0) else w * h
    return left, top, right, bottom, area


@kernel.parallel_for
def _iou(t, out, lhs, rhs, nb, center):
    i = t // nb
    j = t - i * nb
    al, at, ar, ab, aa = _box(lhs, i, center)
    bl, bt, br, bb, ba = _box(rhs, j, center)
    iw = min(ar, br) - max(al, bl)
    ih = min(ab, bb) - max(at, bt)
    iw = iw if iw > 0 else 0.0
    ih = ih if ih > 0 else 0.0
    inter = iw * ih
    out[t] = inter / (aa + ba - inter) if inter > 0 else 0.0


@kernel.device_function
def _centre(boxes, i):
    """(x, y, width, height) of corner box i, float64."""
    left = float(boxes[uindex(4 * i)])
    top = float(boxes[uindex(4 * i + 1)])
    w = float(boxes[uindex(4 * i + 2)]) - left
    h = float(boxes[uindex(4 * i + 3)]) - top
    return left + w / 2, top + h / 2, w, h


@kernel.device_function
def _ratio(a, b):
    """a / b with IEEE results for b = 0 (the simulator's Python floats would raise)."""
    if b != 0:
        return a / b
    if a != a or a == 0:
        return NAN
    return math.copysign(1.0, a) * math.copysign(1.0, b) * INF


@kernel.parallel_for
def _encode(t, targets, masks, samples, matches, anchors, refs, means, stds, n, m):
    b = t // n
    mt = matches[t]
    r = 0 if not mt >= 0 else (m - 1 if mt >= m - 1 else int(mt))
    positive = samples[t] > 0.5
    o = 4 * t
    if not positive:
        for c in range(4):
            targets[o + c] = 0
            masks[o + c] = 0
        return
    rx, ry, rw, rh = _centre(refs, b * m + r)
    ax, ay, aw, ah = _centre(anchors, t)
    targets[o] = (_ratio(rx - ax, aw) - means[0]) / stds[0]
    targets[o + 1] = (_ratio(ry - ay, ah) - means[1]) / stds[1]
    targets[o + 2] = (log_ieee(_ratio(rw, aw)) - means[2]) / stds[2]
    targets[o + 3] = (log_ieee(_ratio(rh, ah)) - means[3]) / stds[3]
    for c in range(4):
        masks[o + c] = 1


@kernel.parallel_for
def _decode(t, out, data, anchors, n, std0, std1, std2, std3, clip, corner):
    i = t - (t // n) * n
    if corner:
        ax, ay, aw, ah = _centre(anchors, i)
    else:
        ax = float(anchors[4 * i])
        ay = float(anchors[4 * i + 1])
        aw = float(anchors[4 * i + 2])
        ah = float(anchors[4 * i + 3])
    o = 4 * t
    x = float(data[o]) * std0 * aw + ax
    y = float(data[o + 1]) * std1 * ah + ay
    ew = float(data[o + 2]) * std2
    eh = float(data[o + 3]) * std3
    if clip > 0:
        ew = ew if ew < clip else clip
        eh = eh if eh < clip else clip
    hw = math.exp(ew) * aw / 2
    hh = math.exp(eh) * ah / 2
    out[o] = x - hw
    out[o + 1] = y - hh
    out[o + 2] = x + hw
    out[o + 3] = y + hh


@kernel.parallel_for
def _match_keys(t, keys, data, negate):
    v = data[uindex(t)]
    keys[t] = -v if negate else v


@kernel.parallel_for
def _greedy_match(b, rows, cols, keys, order, p2, nrow, ncol, threshold, ascend, topk):
    """Batch b: pairs in sorted order, matched while both are free and the score passes."""
    for r in range(nrow):
        rows[b * nrow + r] = -1
    for c in range(ncol):
        cols[b * ncol + c] = -1
    count = 0
    size = nrow * ncol
    for t in range(size):
        j = order[b * p2 + t]
        r = j // ncol
        c = j - r * ncol
        if rows[b * nrow + r] != -1 or cols[b * ncol + c] != -1:
            continue
        s = keys[b * p2 + t]
        s = -s if not ascend else s  # the key is the negated score when descending
        if not ((not ascend and s > threshold) or (ascend and s < threshold)):
            break  # sorted: every later score is worse
        rows[b * nrow + r] = c
        cols[b * ncol + c] = r
        count += 1
        if topk > 0 and count > topk:
            break


@kernel.parallel_for
def _emit_markers(i, out, markers, mode):
    store(out, i, markers[i], mode)


def _flat(a: Any) -> Any:
    return a.reshape(int(a.size)) if len(a.shape) != 1 else a


def box_iou(ctx: Any, p: Any, inputs: list[Any], outputs: list[Any], modes: list[int]
            ) -> None:  # fmt: skip
    """out (+)= the IoU of every lhs box with every rhs box."""
    (lhs, rhs), (out,), (mode,) = inputs, outputs, modes
    na, nb = int(lhs.size) // 4, int(rhs.size) // 4
    if mode == NULL or na * nb == 0:
        return
    if mode != WRITE:  # an add request: IoUs into scratch, then added
        tmp = device_empty(ctx, na * nb, out.dtype)
        run_rows(ctx, "box_iou", _iou, na * nb, tmp, _flat(lhs), _flat(rhs), nb,
                 p.format == "center")  # fmt: skip
        run_rows(ctx, "box_iou", _emit_markers, na * nb, _flat(out), tmp, mode)
        return
    run_rows(ctx, "box_iou", _iou, na * nb, _flat(out), _flat(lhs), _flat(rhs), nb,
             p.format == "center")  # fmt: skip


def box_encode(ctx: Any, p: Any, inputs: list[Any], outputs: list[Any], modes: list[int]
               ) -> None:  # fmt: skip
    """(targets, masks) of box_encode, each written as its mode says."""
    samples, matches, anchors, refs, means, stds = (_flat(a) for a in inputs)
    shape = tuple(int(d) for d in inputs[0].shape)
    n, m = shape[1], int(inputs[3].shape[1])
    count = int(samples.size)
    if count == 0 or all(mode == NULL for mode in modes):
        return
    direct = all(mode == WRITE for mode in modes)
    targets, masks = (
        (_flat(o) for o in outputs)
        if direct
        else (device_empty(ctx, 4 * count, o.dtype) for o in outputs)
    )
    run_rows(ctx, "box_encode", _encode, count, targets, masks, samples, matches, anchors,
             refs, means, stds, n, m)  # fmt: skip
    if not direct:
        for out, tmp, mode in zip(outputs, (targets, masks), modes):
            run_rows(ctx, "box_encode", _emit_markers, 4 * count, _flat(out), tmp, mode)


def box_decode(ctx: Any, p: Any, inputs: list[Any], outputs: list[Any], modes: list[int]
               ) -> None:  # fmt: skip
    """out (+)= the corner boxes data decodes to against anchors (1, N, 4)."""
    (data, anchors), (out,), (mode,) = inputs, outputs, modes
    count = int(data.size) // 4
    if mode == NULL or count == 0:
        return
    n = int(anchors.size) // 4
    dst = _flat(out) if mode == WRITE else device_empty(ctx, 4 * count, out.dtype)
    run_rows(ctx, "box_decode", _decode, count, dst, _flat(data), _flat(anchors), n,
             float(p.std0), float(p.std1), float(p.std2), float(p.std3), float(p.clip),
             p.format == "corner")  # fmt: skip
    if mode != WRITE:
        run_rows(ctx, "box_decode", _emit_markers, 4 * count, _flat(out), dst, mode)


def bipartite_matching(ctx: Any, p: Any, inputs: list[Any], outputs: list[Any],
                       modes: list[int]) -> None:  # fmt: skip
    """(row markers, column markers) of bipartite_matching, as the host's greedy walk."""
    (data,) = inputs
    shape = tuple(int(d) for d in data.shape)
    nrow, ncol = shape[-2], shape[-1]
    size = nrow * ncol
    batches = int(data.size) // size if size else 0
    if batches * size == 0 or all(mode == NULL for mode in modes):
        return
    kdt = key_dtype(data.dtype)
    keys = device_empty(ctx, batches * size, kdt)
    run_rows(ctx, "bipartite_matching", _match_keys, batches * size, keys, _flat(data),
             not p.is_ascend)  # fmt: skip
    space = device_empty(ctx, scratch_bytes(batches, size, kdt), np.uint8)
    sorted_keys, order, p2 = sort_rows(ctx, space, keys, (batches, size, 1), True)
    rows = device_empty(ctx, batches * nrow, np.int64)
    cols = device_empty(ctx, batches * ncol, np.int64)
    run_rows(ctx, "bipartite_matching", _greedy_match, batches, rows, cols, sorted_keys, order,
             p2, nrow, ncol, float(p.threshold), bool(p.is_ascend), int(p.topk))  # fmt: skip
    for out, markers, mode in zip(outputs, (rows, cols), modes):
        run_rows(ctx, "bipartite_matching", _emit_markers, int(out.size), _flat(out), markers,
                 mode)  # fmt: skip


__all__ = ["bipartite_matching", "box_decode", "box_encode", "box_iou"]
