"""MultiBoxPrior and MultiBoxDetection on the op's device (MultiBoxTarget:
_multibox_target_device.py).

The host versions (contrib_multibox.multibox_*_np) are NumPy expressions and numba walks
per batch; here every step is a kernel over all batches at once, repeating the host's
arithmetic (operation order and dtype), so results equal the host's bit for bit except
where a device's exp or log rounds differently from NumPy's:

- MultiBoxPrior: one item per anchor (cell, shape), from the host's own float32 steps,
  offsets and half sizes (contrib_multibox.prior_table, 2 K + 6 floats sent along).
- MultiBoxDetection:
  1. classify: one item per anchor: its best foreground class (the first maximum; a NaN
     wins, as np.argmax, and is never a detection) and its key: the score where it is a
     detection (> -1 and >= threshold, compared in the data's dtype), -inf elsewhere;
  2. anchor order: the detections counted per (batch, block of anchors), one item per
     batch scanning its block counts, each block listing its detections in order;
  3. with NMS: the keys sorted descending per batch by the bitonic network (equal scores
     by anchor, as the host's stable ranking); the first min(count, nms_topk) become
     candidates (decoded corners and area in float32 for float16, as the host's
     suppression) that _nms_device.suppress walks: IoU >= threshold here, so its
     strict test gets the float64 just below;
  4. emit: one item per output row: a ranked row (class -1 when suppressed), an unsorted
     row past nms_topk (class -1), a detection in anchor order without NMS, or -1s.
Constants of the data's dtype come in small tables (a Python float would make numba
compute in float64). A float16 output with an add request gets a float16 scratch array
written, then added: the host rounds float32 results to float16 before adding.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import kernel
from ..kernel.launch import ADD, NULL, WRITE, run_rows, store, uindex
from ._bitonic import key_dtype, scratch_bytes, sort_rows
from ._index_kernels import device_empty, to_ctx
from ._nms_device import Alloc, suppress

BLOCK = 256  # anchors per counting item
_PRIOR = "_contrib_MultiBoxPrior"
_DETECT = "_contrib_MultiBoxDetection"
_TARGET = "_contrib_MultiBoxTarget"
_HALF = np.dtype(np.float16)


@kernel.device_function
def _clip(v, lo, hi):
    """np.clip's value: NaN and -0.0 stay as they are."""
    return lo if v < lo else (hi if v > hi else v)


# --- MultiBoxPrior --------------------------------------------------------------------------


@kernel.parallel_for
def _prior(t, out, table, width, k, clip, mode):
    """Anchor t = (row r, column c, shape s): [xmin, ymin, xmax, ymax] in float32.
    table: step_y, step_x, offset_y, offset_x, 0, 1, K half widths, K half heights."""
    cell = t // k
    s = t - cell * k
    r = cell // width
    c = cell - r * width
    cy = (np.float32(r) + table[2]) * table[0]
    cx = (np.float32(c) + table[3]) * table[1]
    hw = table[6 + s]
    hh = table[6 + k + s]
    x0, y0, x1, y1 = cx - hw, cy - hh, cx + hw, cy + hh
    if clip:
        x0, y0 = _clip(x0, table[4], table[5]), _clip(y0, table[4], table[5])
        x1, y1 = _clip(x1, table[4], table[5]), _clip(y1, table[4], table[5])
    store(out, 4 * t, x0, mode)
    store(out, 4 * t + 1, y0, mode)
    store(out, 4 * t + 2, x1, mode)
    store(out, 4 * t + 3, y1, mode)


@kernel.parallel_for
def _add(i, out, values):
    out[uindex(i)] += values[uindex(i)]


class Targets:
    """The arrays and modes a kernel writes for outputs given with their modes: a float16
    output with an add request gets a float16 scratch array written instead, added by
    `finish()` (the host rounds its float32 results to float16, then adds in float16)."""

    def __init__(self, ctx: Any, outputs: list[Any], modes: list[int]) -> None:
        self.ctx = ctx
        self.arrays: list[Any] = []
        self.modes: list[int] = []
        self._late: list[tuple[Any, Any]] = []
        for out, mode in zip(outputs, modes):
            flat = out.reshape(int(out.size))
            if mode == ADD and np.dtype(out.dtype) == _HALF:
                tmp = device_empty(ctx, int(out.size), _HALF)
                self._late.append((flat, tmp))
                flat, mode = tmp, WRITE
            self.arrays.append(flat)
            self.modes.append(mode)

    def finish(self, name: str) -> None:
        for out, tmp in self._late:
            run_rows(self.ctx, name, _add, int(out.size), out, tmp)


def multibox_prior(ctx: Any, table: np.ndarray, sizes: tuple[int, int, int], clip: bool,
                   out: Any, mode: int) -> None:  # fmt: skip
    """The anchors of H x W cells and K shapes into out (1, H * W * K, 4); table: the
    host's float32 numbers (contrib_multibox.prior_table)."""
    height, width, k = sizes
    rows = height * width * k
    if mode == NULL or rows == 0:
        return
    dev_table = to_ctx(ctx, np.ascontiguousarray(table, np.float32))
    targets = Targets(ctx, [out], [mode])
    (o,), (m,) = targets.arrays, targets.modes
    run_rows(ctx, _PRIOR, _prior, rows, o, dev_table, width, k, clip, m)
    targets.finish(_PRIOR)


# --- MultiBoxDetection ----------------------------------------------------------------------


@kernel.parallel_for
def _classify(t, keys, best, prob, classes, n, thresh, neg_inf):
    """Anchor t = (batch b, anchor a): best foreground class, its score as key if a
    detection (score > -1 and >= thresh), -inf if not."""
    b = t // n
    base = b * classes * n + (t - b * n)
    top = 0
    s = prob[uindex(base + n)]
    if s == s:
        for j in range(2, classes):
            v = prob[uindex(base + j * n)]
            if v != v:  # np.argmax stops at the first NaN
                s = v
                top = j - 1
                break
            if v > s:
                s = v
                top = j - 1
    best[t] = top
    keys[t] = s if (s > -1 and s >= thresh) else neg_inf


@kernel.parallel_for
def _count_hits(t, counts, keys, n, nblocks, neg_inf):
    """counts[t]: the detections of block t = (batch b, block of BLOCK anchors)."""
    b = t // nblocks
    lo = (t - b * nblocks) * BLOCK
    hi = min(lo + BLOCK, n)
    c = 0
    for a in range(lo, hi):
        if keys[b * n + a] != neg_inf:
            c += 1
    counts[t] = c


@kernel.parallel_for
def _scan_hits(b, counts, totals, nblocks):
    """Batch b: its block counts to exclusive prefix sums, its detections to totals[b]."""
    total = 0
    for blk in range(nblocks):
        c = counts[b * nblocks + blk]
        counts[b * nblocks + blk] = total
        total += c
    totals[b] = total


@kernel.parallel_for
def _list_hits(t, hits, counts, keys, n, nblocks, neg_inf):
    """Block t's detections to hits[b, position]: the batch's anchors in anchor order."""
    b = t // nblocks
    lo = (t - b * nblocks) * BLOCK
    hi = min(lo + BLOCK, n)
    p = counts[t]
    for a in range(lo, hi):
        if keys[b * n + a] != neg_inf:
            hits[b * n + p] = a
            p += 1


@kernel.device_function
def _decode(anchors, loc, consts, b, a, n, clip):
    """Anchor a's box in batch b from its offsets, in the data's dtype as the host
    computes it; consts: v0, v1, v2, v3, 2, 0, 1 in that dtype."""
    o = 4 * a
    a0 = anchors[uindex(o)]
    a1 = anchors[uindex(o + 1)]
    a2 = anchors[uindex(o + 2)]
    a3 = anchors[uindex(o + 3)]
    d = 4 * (b * n + a)
    two = consts[4]
    aw = a2 - a0
    ah = a3 - a1
    ax = (a0 + a2) / two
    ay = (a1 + a3) / two
    x = loc[uindex(d)] * consts[0] * aw + ax
    y = loc[uindex(d + 1)] * consts[1] * ah + ay
    hw = math.exp(loc[uindex(d + 2)] * consts[2]) * aw / two
    hh = math.exp(loc[uindex(d + 3)] * consts[3]) * ah / two
    x0, y0, x1, y1 = x - hw, y - hh, x + hw, y + hh
    if clip:
        lo = consts[5]
        hi = consts[6]
        x0, y0, x1, y1 = _clip(x0, lo, hi), _clip(y0, lo, hi), _clip(x1, lo, hi), _clip(y1, lo, hi)
    return x0, y0, x1, y1


@kernel.parallel_for
def _candidates(t, boxes, ids, src, order, totals, best, anchors, loc, consts, p2, n, k, clip):
    """Candidate t = (batch b, rank r < k): the r-th ranked detection's corners and area
    (boxes row of 5, compute dtype) and class; src: its anchor, -1 past the detections."""
    b = t // k
    r = t - b * k
    if r >= totals[b]:
        src[t] = -1
        return
    a = order[b * p2 + r]
    src[t] = a
    x0, y0, x1, y1 = _decode(anchors, loc, consts, b, a, n, clip)
    o = t * 5
    boxes[o] = x0
    boxes[o + 1] = y0
    boxes[o + 2] = x1
    boxes[o + 3] = y1
    # the area of the stored (compute dtype) corners, as the host's suppression loop
    boxes[o + 4] = (boxes[o + 2] - boxes[o]) * (boxes[o + 3] - boxes[o + 1])
    ids[t] = best[b * n + a]


@kernel.device_function
def _is_kept(kept, base, count, r):
    """Rank r is among the ascending ranks kept[base : base + count]."""
    lo = 0
    hi = count
    while lo < hi:
        mid = (lo + hi) // 2
        if kept[base + mid] < r:
            lo = mid + 1
        else:
            hi = mid
    return lo < count and kept[base + lo] == r


@kernel.parallel_for
def _emit(t, out, keys, best, hits, totals, order, kept, kept_count, anchors, loc, consts,
          p2, n, k, nms, clip, mode):  # fmt: skip
    """Output row t = (batch b, row j): [class, score, box] of the detection that goes
    there, or -1s past the batch's detections."""
    b = t // n
    j = t - b * n
    base = 6 * t
    count = totals[b]
    if j >= count:
        for c in range(6):
            store(out, base + c, -1, mode)
        return
    if nms and j < min(count, k):
        a = order[b * p2 + j]
        cls = float(best[b * n + a]) if _is_kept(kept, b * k, kept_count[b], j) else -1.0
    else:
        a = hits[b * n + j]
        cls = -1.0 if nms else float(best[b * n + a])
    store(out, base, cls, mode)
    store(out, base + 1, keys[b * n + a], mode)
    x0, y0, x1, y1 = _decode(anchors, loc, consts, b, a, n, clip)
    store(out, base + 2, x0, mode)
    store(out, base + 3, y0, mode)
    store(out, base + 4, x1, mode)
    store(out, base + 5, y1, mode)


def _anchor_order(ctx: Any, keys: Any, batches: int, n: int) -> tuple[Any, Any]:
    """(hits (batches, n): each batch's detections in anchor order, totals (batches))."""
    nblocks = -(-n // BLOCK)
    counts = device_empty(ctx, batches * nblocks, np.int64)
    hits = device_empty(ctx, batches * n, np.int64)
    totals = device_empty(ctx, batches, np.int64)
    run_rows(ctx, _DETECT, _count_hits, batches * nblocks, counts, keys, n, nblocks, -math.inf)
    run_rows(ctx, _DETECT, _scan_hits, batches, counts, totals, nblocks)
    run_rows(ctx, _DETECT, _list_hits, batches * nblocks, hits, counts, keys, n, nblocks,
             -math.inf)  # fmt: skip
    return hits, totals


def multibox_detection(ctx: Any, p: Any, cls_prob: Any, loc_pred: Any, anchor: Any, out: Any,
                       mode: int) -> None:  # fmt: skip
    """MultiBoxDetection of cls_prob (B, C, A), loc_pred (B, 4 A), anchor (1, A, 4) into
    out (B, A, 6) on their device; p: MultiBoxDetectionParam (variances checked)."""
    batches, classes, n = (int(d) for d in cls_prob.shape)
    if mode == NULL or batches * n == 0:
        return
    dtype = np.dtype(cls_prob.dtype)
    kdt = key_dtype(dtype)
    with np.errstate(over="ignore"):  # NumPy compares the scores with it in their dtype
        thresh = float(dtype.type(p.threshold))
    prob, loc, anchors = (a.reshape(int(a.size)) for a in (cls_prob, loc_pred, anchor))
    keys = device_empty(ctx, batches * n, kdt)
    best = device_empty(ctx, batches * n, np.int64)
    run_rows(ctx, _DETECT, _classify, batches * n, keys, best, prob, classes, n, thresh,
             -math.inf)  # fmt: skip
    hits, totals = _anchor_order(ctx, keys, batches, n)
    consts = to_ctx(ctx, np.array([*p.variances, 2, 0, 1], dtype))
    nms = 0 < p.nms_threshold <= 1
    k = n if p.nms_topk <= 0 else min(n, p.nms_topk)
    order, p2, kept, kept_count = hits, n, hits, totals  # placeholders without NMS
    if nms:
        space = device_empty(ctx, scratch_bytes(batches, n, kdt), np.uint8)
        _, order, p2 = sort_rows(ctx, space, keys, (batches, n, 1), False)
        boxes = device_empty(ctx, batches * k * 5, kdt)
        ids = device_empty(ctx, batches * k, kdt)
        src = device_empty(ctx, batches * k, np.int64)
        run_rows(ctx, _DETECT, _candidates, batches * k, boxes, ids, src, order, totals, best,
                 anchors, loc, consts, p2, n, k, p.clip)  # fmt: skip
        # the host suppresses at IoU >= threshold (a float64 IoU), suppress() at IoU >
        # its threshold: the float64 just below gives the same decisions
        below = float(np.nextafter(p.nms_threshold, -math.inf))
        kept, kept_count = suppress(ctx, Alloc(ctx), boxes, ids, src, (batches, k), below,
                                    not p.force_suppress, False, k)  # fmt: skip
    run_rows(ctx, _DETECT, _emit, batches * n, out.reshape(int(out.size)), keys, best, hits,
             totals, order, kept, kept_count, anchors, loc, consts, p2, n, k, nms, p.clip,
             mode)  # fmt: skip


__all__ = ["Targets", "multibox_detection", "multibox_prior"]
