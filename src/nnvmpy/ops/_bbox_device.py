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
in the data's type, as MXNet's kernels (DType) and the host's NumPy expressions do, with
the float parameters rounded to it once (`_wide`, `kernel.like`): a float32 formula with
a Python float in it computed in float64 on a GPU (1/2 to 1/64 of the float32 rate).
float16 data computes in float64 and rounds once at the store. Math on values the
simulator's Python would reject (log of non-positive numbers, division by zero) is
written out as the IEEE result.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import kernel
from ..kernel import like
from ..kernel.launch import NULL, WRITE, run_rows, store, uindex
from ._bitonic import key_dtype, scratch_bytes, sort_rows
from ._index_kernels import device_empty

NAN = math.nan
INF = math.inf
#: -0.0 as a NumPy float64: v + like(v, NEG_ZERO) is v in float32 and float64 and v
#: widened to float64 for float16, in Python (the simulator) as compiled
NEG_ZERO = np.float64(-0.0)


@kernel.device_function
def _wide(v):
    """v in the type the formulas compute in: float32 and float64 as they are (x + -0.0
    is x, signed zeros included), float16 as float64."""
    return v + like(v, NEG_ZERO)


@kernel.device_function
def _log(x):
    """math.log in x's type, with the IEEE results where Python's raises: log(0) = -inf,
    log(x < 0) = NaN (launch.log_ieee's branches return float64, which made a float32
    formula float64)."""
    if x > like(x, 0):
        return math.log(x)
    return like(x, -INF) if x == like(x, 0) else like(x, NAN)


@kernel.device_function
def _box(boxes, i, center):
    """(left, top, right, bottom, area) of box i of boxes (flat, 4 per box), in the
    compute type (_wide); an area with a negative side is 0, as MXNet's BoxArea."""
    a = _wide(boxes[uindex(4 * i)])
    b = _wide(boxes[uindex(4 * i + 1)])
    c = _wide(boxes[uindex(4 * i + 2)])
    d = _wide(boxes[uindex(4 * i + 3)])
    zero, two = like(a, 0), like(a, 2)
    if center:
        w = c
        h = d
        left, top, right, bottom = a - c / two, b - d / two, a + c / two, b + d / two
    else:
        w = c - a
        h = d - b
        left, top, right, bottom = a, b, c, d
    area = zero if (w < zero or h < zero) else w * h
    return left, top, right, bottom, area


@kernel.parallel_for
def _iou(t, out, lhs, rhs, nb, center):
    i = t // nb
    j = t - i * nb
    al, at, ar, ab, aa = _box(lhs, i, center)
    bl, bt, br, bb, ba = _box(rhs, j, center)
    iw = min(ar, br) - max(al, bl)
    ih = min(ab, bb) - max(at, bt)
    zero = like(iw, 0)
    iw = iw if iw > zero else zero
    ih = ih if ih > zero else zero
    inter = iw * ih
    out[t] = inter / (aa + ba - inter) if inter > zero else zero


@kernel.device_function
def _centre(boxes, i):
    """(x, y, width, height) of corner box i, in the compute type (_wide)."""
    left = _wide(boxes[uindex(4 * i)])
    top = _wide(boxes[uindex(4 * i + 1)])
    w = _wide(boxes[uindex(4 * i + 2)]) - left
    h = _wide(boxes[uindex(4 * i + 3)]) - top
    two = like(left, 2)
    return left + w / two, top + h / two, w, h


@kernel.device_function
def _ratio(a, b):
    """a / b with IEEE results for b = 0 (the simulator's Python floats would raise)."""
    zero = like(a, 0)
    if b != zero:
        return a / b
    if a != a or a == zero:
        return like(a, NAN)
    inf = math.copysign(like(a, INF), a)
    return -inf if math.copysign(like(b, 1), b) < zero else inf


@kernel.device_function
def _ref_row(match, m):
    """The reference row a match names: truncated, clipped to [0, m) as the host clips,
    NaN as 0 (compared in the match's type: m - 1 < 2^24 is exact in float32)."""
    if not match >= like(match, 0):
        return 0
    return m - 1 if match >= like(match, m - 1) else int(match)


@kernel.parallel_for
def _encode(t, targets, masks, samples, matches, anchors, refs, means, stds, n, m):
    b = t // n
    r = _ref_row(matches[t], m)
    positive = samples[t] > like(samples[t], 0.5)
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
    targets[o + 2] = (_log(_ratio(rw, aw)) - means[2]) / stds[2]
    targets[o + 3] = (_log(_ratio(rh, ah)) - means[3]) / stds[3]
    for c in range(4):
        masks[o + c] = 1


@kernel.parallel_for
def _decode(t, out, data, anchors, n, std0, std1, std2, std3, clip, clipping, corner):
    """Box t: the parameters rounded to the data's type, as the host and MXNet (DType)."""
    i = t - (t // n) * n
    if corner:
        ax, ay, aw, ah = _centre(anchors, i)
    else:
        ax = _wide(anchors[uindex(4 * i)])
        ay = _wide(anchors[uindex(4 * i + 1)])
        aw = _wide(anchors[uindex(4 * i + 2)])
        ah = _wide(anchors[uindex(4 * i + 3)])
    o = 4 * t
    d0 = _wide(data[uindex(o)])
    x = d0 * like(d0, std0) * aw + ax
    y = _wide(data[uindex(o + 1)]) * like(d0, std1) * ah + ay
    ew = _wide(data[uindex(o + 2)]) * like(d0, std2)
    eh = _wide(data[uindex(o + 3)]) * like(d0, std3)
    if clipping:  # clip > 0, decided on the host: no float64 compare per box
        limit = like(d0, clip)
        ew = ew if ew < limit else limit
        eh = eh if eh < limit else limit
    two = like(d0, 2)
    hw = math.exp(ew) * aw / two
    hh = math.exp(eh) * ah / two
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
    """Batch b: pairs in sorted order, matched while both are free and the score passes
    (threshold: in the keys' type, rounded on the host so that the comparison is exact)."""
    limit = like(keys[b * p2], threshold)  # exact: the host rounded it (_key_threshold)
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
        if not ((not ascend and s > limit) or (ascend and s < limit)):
            break  # sorted: every later score is worse
        rows[b * nrow + r] = c
        cols[b * ncol + c] = r
        count += 1
        if topk > 0 and count > topk:
            break


@kernel.parallel_for
def _emit_markers(i, out, markers, mode):
    """out[i] (+)= markers[i], converted to out's type first (an int64 added to a float32
    would be a float64 addition)."""
    store(out, i, like(out[uindex(i)], markers[i]), mode)


def _key_threshold(threshold: float, key_type: Any, ascend: bool) -> float:
    """threshold rounded to the sort keys' type toward the side that keeps the kernel's
    comparison of keys with it exact: a key passes `s > t` (descending) iff it passes
    `s > t` rounded down, `s < t` (ascending) iff `s < t` rounded up. The host compares
    the data with the float64 threshold; so does this, in the keys' type."""
    t = np.dtype(key_type).type(threshold)
    if not ascend and float(t) > threshold:  # compared in float64 (NumPy would round it)
        t = np.nextafter(t, t.dtype.type(-np.inf))
    elif ascend and float(t) < threshold:
        t = np.nextafter(t, t.dtype.type(np.inf))
    return float(t)


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
             p.clip > 0, p.format == "corner")  # fmt: skip
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
             p2, nrow, ncol, _key_threshold(p.threshold, kdt, p.is_ascend), bool(p.is_ascend),
             int(p.topk))  # fmt: skip
    for out, markers, mode in zip(outputs, (rows, cols), modes):
        run_rows(ctx, "bipartite_matching", _emit_markers, int(out.size), _flat(out), markers,
                 mode)  # fmt: skip


__all__ = ["bipartite_matching", "box_decode", "box_encode", "box_iou"]
