"""MultiBoxTarget on the op's device (the host version: contrib_multibox.multibox_target_np),
every step a kernel over all batches at once, repeating the host's arithmetic:

  1. the labels of each batch (up to its first class -1), the IoU of every (anchor,
     label) pair in the data's dtype and as a float32 key;
  2. greedy matching: the keys sorted descending per batch (equal ones anchor-major, NaN
     first), one item per batch taking each pair whose anchor and label are both free:
     the host's repeated argmax, in one pass;
  3. one item per other anchor: its best label, positive above overlap_threshold;
  4. negative mining: per batch the numbers of positives and candidates (read back, the
     one copy to the host, to raise the host's errors), the candidates' background
     probabilities sorted ascending, the first ones marked;
  5. emit: one item per anchor: regression targets (float32), mask and class.

A float16 output with an add request gets a float16 scratch array written, then added
(_multibox_device.Targets), as the host rounds its results to float16 before adding.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import kernel
from ..base import NNVMError
from ..kernel.launch import NULL, log_ieee, run_rows, store, uindex
from ._bitonic import key_dtype, scratch_bytes, sort_rows
from ._index_kernels import device_empty, to_ctx
from ._multibox_device import Targets
from .nn._layer_util import host_copy

_TARGET = "_contrib_MultiBoxTarget"


# --- MultiBoxTarget -------------------------------------------------------------------------


@kernel.device_function
def _nmin(a, b):
    """np.minimum: NaN when either is."""
    return a if (a < b or a != a) else b


@kernel.device_function
def _nmax(a, b):
    """np.maximum: NaN when either is."""
    return a if (a > b or a != a) else b


@kernel.parallel_for
def _count_labels(b, gcount, label, m, width):
    """gcount[b]: batch b's labels, the rows before its first of class -1."""
    g = 0
    while g < m and label[uindex((b * m + g) * width)] != -1:
        g += 1
    gcount[b] = g


@kernel.parallel_for
def _pair_ious(t, ious, keys, pos, anchors, label, gcount, n, m, width, zeros, neg_inf):
    """Pair t = (batch b, anchor j, label g): the IoU in the data's dtype (0 where the
    union is 0; zeros[0] is 0 in that dtype) and as float32 key, -inf past the batch's
    labels; clears pos[b, j]."""
    q = t // m
    g = t - q * m
    b = q // n
    o = 4 * (q - b * n)
    if g == 0:
        pos[q] = 0
    if g >= gcount[b]:
        keys[t] = neg_inf
        return
    zero = zeros[0]
    r = (b * m + g) * width + 1
    a0 = anchors[uindex(o)]
    a1 = anchors[uindex(o + 1)]
    a2 = anchors[uindex(o + 2)]
    a3 = anchors[uindex(o + 3)]
    g0 = label[uindex(r)]
    g1 = label[uindex(r + 1)]
    g2 = label[uindex(r + 2)]
    g3 = label[uindex(r + 3)]
    iw = _nmax(zero, _nmin(a2, g2) - _nmax(a0, g0))
    ih = _nmax(zero, _nmin(a3, g3) - _nmax(a1, g1))
    inter = iw * ih
    union = (a2 - a0) * (a3 - a1) + (g2 - g0) * (g3 - g1) - inter
    iou = zero if union == 0 else inter / union
    ious[t] = iou
    keys[t] = iou


@kernel.parallel_for
def _greedy(b, pos, best, best_iou, done, keys, order, gcount, p2, n, m, eps):
    """Batch b: its pairs by descending IoU (equal ones anchor-major, NaN first), each
    matching its anchor and label while both are free, until every label is matched or
    the IoU is not > eps: the host's repeated argmax."""
    for g in range(m):
        done[b * m + g] = 0
    need = gcount[b]
    matched = 0
    r = 0
    while matched < need and r < n * m:
        s = order[b * p2 + r]
        r += 1
        v = keys[b * n * m + s]
        if not v > eps:
            break
        j = s // m
        g = s - j * m
        if pos[b * n + j] != 0 or done[b * m + g] != 0:
            continue
        pos[b * n + j] = 1
        done[b * m + g] = 1
        best[b * n + j] = g
        best_iou[b * n + j] = v
        matched += 1


@kernel.parallel_for
def _best_labels(t, pos, best, best_iou, ious, gcount, n, m, thresh, use_thresh):
    """Anchor t = (batch b, anchor j) not matched: its best label (the first maximum, a
    NaN first, as np.argmax) and float32 IoU; positive when that is > thresh."""
    b = t // n
    count = gcount[b]
    if count == 0 or pos[t] != 0:
        return
    base = t * m
    top = 0
    s = ious[base]
    if s == s:
        for g in range(1, count):
            v = ious[base + g]
            if v != v:
                s = v
                top = g
                break
            if v > s:
                s = v
                top = g
    best[t] = top
    best_iou[t] = s
    if use_thresh and best_iou[t] > thresh:
        pos[t] = 1


@kernel.parallel_for
def _mining_counts(b, stats, pos, best_iou, gcount, n, ratio, thresh):
    """Batch b's (labels, negatives wanted, candidates below thresh)."""
    num_pos = 0
    cand = 0
    if gcount[b] > 0:
        for j in range(n):
            if pos[b * n + j] != 0:
                num_pos += 1
            elif best_iou[b * n + j] < thresh:
                cand += 1
    stats[3 * b] = gcount[b]
    stats[3 * b + 1] = min(int(num_pos * ratio), n - num_pos)
    stats[3 * b + 2] = cand


@kernel.device_function
def _background(pred, base, n, classes, one):
    """Softmax over classes of pred[b, :, j] (from base, n apart): class 0's, in the data's
    dtype (exp rounded to it, the sum in class order, as NumPy reduces axis 0)."""
    top = pred[uindex(base)]
    for c in range(1, classes):
        top = _nmax(top, pred[uindex(base + c * n)])
    first = math.exp(pred[uindex(base)] - top) * one
    total = first
    for c in range(1, classes):
        total = total + math.exp(pred[uindex(base + c * n)] - top) * one
    return first / total


@kernel.parallel_for
def _mining_keys(t, keys, neg, pos, best_iou, pred, gcount, n, classes, thresh, ones, inf):
    """Anchor t = (batch b, anchor j): its background probability as float32 key where it
    is a mining candidate (NaN as 2: after every probability), +inf where it is not;
    ones[0] is 1 in the data's dtype."""
    b = t // n
    neg[t] = 0
    if gcount[b] == 0 or pos[t] != 0 or not best_iou[t] < thresh:
        keys[t] = inf
        return
    prob = _background(pred, b * classes * n + t - b * n, n, classes, ones[0])
    keys[t] = 2.0 if prob != prob else prob


@kernel.parallel_for
def _mark_negatives(t, neg, order, stats, p2, n):
    """Rank t = (batch b, rank r): the r-th lowest probability is a negative if r < the
    batch's wanted negatives."""
    b = t // n
    r = t - b * n
    if r < stats[3 * b + 1]:
        neg[b * n + order[b * p2 + r]] = 1


@kernel.parallel_for
def _emit_targets(t, loc, mask, cls, pos, neg, best, anchors, label, gcount, n, m, width,
                  mining, ignore, v0, v1, v2, v3, lmode, mmode, cmode):  # fmt: skip
    """Anchor t = (batch b, anchor j): its regression targets (float32, as the host),
    mask and class."""
    b = t // n
    count = gcount[b]
    positive = count > 0 and pos[t] != 0
    c = ignore
    if positive:
        r = (b * m + best[t]) * width
        c = float(label[uindex(r)]) + 1.0
        o = 4 * (t - b * n)
        a0 = np.float32(anchors[uindex(o)])
        a1 = np.float32(anchors[uindex(o + 1)])
        a2 = np.float32(anchors[uindex(o + 2)])
        a3 = np.float32(anchors[uindex(o + 3)])
        g0 = np.float32(label[uindex(r + 1)])
        g1 = np.float32(label[uindex(r + 2)])
        g2 = np.float32(label[uindex(r + 3)])
        g3 = np.float32(label[uindex(r + 4)])
        half = np.float32(0.5)
        aw = a2 - a0
        ah = a3 - a1
        gw = g2 - g0
        gh = g3 - g1
        dx = (g0 + g2) * half - (a0 + a2) * half
        dy = (g1 + g3) * half - (a1 + a3) * half
        store(loc, 4 * t, dx / aw / np.float32(v0), lmode)
        store(loc, 4 * t + 1, dy / ah / np.float32(v1), lmode)
        # log_ieee may widen to float64: the quotient rounds to float32 as the host's
        store(loc, 4 * t + 2, np.float32(log_ieee(gw / aw) / np.float32(v2)), lmode)
        store(loc, 4 * t + 3, np.float32(log_ieee(gh / ah) / np.float32(v3)), lmode)
        for k in range(4):
            store(mask, 4 * t + k, 1, mmode)
    else:
        if count > 0 and (neg[t] != 0 if mining else True):
            c = 0.0
        for k in range(4):
            store(loc, 4 * t + k, 0, lmode)
            store(mask, 4 * t + k, 0, mmode)
    store(cls, t, c, cmode)


def _match(ctx: Any, p: Any, anchors: Any, labels: Any, sizes: tuple[int, int, int, int]
           ) -> tuple[Any, ...]:  # fmt: skip
    """Steps 1 to 3: (labels per batch, positive flags, best label and its float32 IoU per
    anchor, the sort's scratch space)."""
    batches, n, m, width = sizes
    dtype = np.dtype(anchors.dtype)
    kdt = key_dtype(dtype)
    gcount = device_empty(ctx, batches, np.int64)
    run_rows(ctx, _TARGET, _count_labels, batches, gcount, labels, m, width)
    pairs = batches * n * m
    ious = device_empty(ctx, pairs, kdt)
    keys = ious if kdt == np.float32 else device_empty(ctx, pairs, np.float32)
    pos = device_empty(ctx, batches * n, np.int8)
    run_rows(ctx, _TARGET, _pair_ious, pairs, ious, keys, pos, anchors, labels, gcount, n, m,
             width, to_ctx(ctx, np.zeros(1, dtype)), -math.inf)  # fmt: skip
    space = device_empty(ctx, scratch_bytes(batches, n * m, np.float32), np.uint8)
    _, order, p2 = sort_rows(ctx, space, keys, (batches, n * m, 1), False)
    best = device_empty(ctx, batches * n, np.int64)
    best_iou = device_empty(ctx, batches * n, np.float32)
    done = device_empty(ctx, batches * m, np.int8)
    eps = float(np.float32(1e-6))  # NumPy compares the float32 IoUs with it in float32
    run_rows(ctx, _TARGET, _greedy, batches, pos, best, best_iou, done, keys, order, gcount,
             p2, n, m, eps)  # fmt: skip
    thresh = float(np.float32(p.overlap_threshold))
    run_rows(ctx, _TARGET, _best_labels, batches * n, pos, best, best_iou, ious, gcount, n, m,
             thresh, p.overlap_threshold > 0)  # fmt: skip
    return gcount, pos, best, best_iou, space


def _check_mining(p: Any, stats: np.ndarray) -> None:
    """The host's errors, from each batch's (labels, negatives wanted, candidates)."""
    for labels, count, cand in stats.reshape(-1, 3).tolist():
        if labels == 0:
            continue
        if not p.negative_mining_thresh > 0:
            raise NNVMError(
                f"{_TARGET}: negative_mining_thresh must be > 0 when negative mining is on "
                f"(negative_mining_ratio={p.negative_mining_ratio}), got "
                f"{p.negative_mining_thresh}"
            )
        if count > 0 and cand < count:
            raise NNVMError(
                f"{_TARGET}: negative mining wants {count} negatives but only {cand} anchors "
                f"have an overlap below negative_mining_thresh={p.negative_mining_thresh}"
            )


def _mining(ctx: Any, p: Any, matched: tuple[Any, ...], preds: Any, sizes: tuple[int, int, int]
            ) -> Any:  # fmt: skip
    """Step 4 with negative mining: the negative flags (batches * n)."""
    batches, n, classes = sizes
    gcount, pos, _, best_iou, space = matched
    thresh = float(np.float32(p.negative_mining_thresh))  # NumPy compares in float32
    stats = device_empty(ctx, 3 * batches, np.int64)
    run_rows(ctx, _TARGET, _mining_counts, batches, stats, pos, best_iou, gcount, n,
             float(p.negative_mining_ratio), thresh)  # fmt: skip
    _check_mining(p, host_copy(ctx, stats))  # the one read-back
    keys = device_empty(ctx, batches * n, np.float32)
    neg = device_empty(ctx, batches * n, np.int8)
    one = to_ctx(ctx, np.ones(1, preds.dtype))
    run_rows(ctx, _TARGET, _mining_keys, batches * n, keys, neg, pos, best_iou, preds, gcount,
             n, classes, thresh, one, math.inf)  # fmt: skip
    _, order, p2 = sort_rows(ctx, space, keys, (batches, n, 1), True)
    run_rows(ctx, _TARGET, _mark_negatives, batches * n, neg, order, stats, p2, n)
    return neg


def multibox_target(ctx: Any, p: Any, inputs: list[Any], outputs: list[Any], modes: list[int]
                    ) -> None:  # fmt: skip
    """MultiBoxTarget of anchor (1, A, 4), label (B, L, W), cls_pred (B, C, A) into
    loc_target, loc_mask (B, 4 A) and cls_target (B, A), written as `modes` say."""
    n = int(inputs[0].shape[1])
    batches, m, width = (int(d) for d in inputs[1].shape)
    if all(mode == NULL for mode in modes) or batches * n == 0:
        return
    anchors, labels, preds = (a.reshape(int(a.size)) for a in inputs)
    matched = _match(ctx, p, anchors, labels, (batches, n, m, width))
    gcount, pos, best, _, _ = matched
    mining = p.negative_mining_ratio > 0
    neg = pos  # unused without mining: every anchor not positive is negative
    if mining:
        neg = _mining(ctx, p, matched, preds, (batches, n, int(inputs[2].shape[1])))
    with np.errstate(over="ignore"):
        ignore = float(anchors.dtype.type(p.ignore_label))  # np.full rounds it so
    targets = Targets(ctx, outputs, modes)
    loc, mask, cls = targets.arrays
    run_rows(ctx, _TARGET, _emit_targets, batches * n, loc, mask, cls, pos, neg, best, anchors,
             labels, gcount, n, m, width, mining, ignore, *map(float, p.variances),
             *targets.modes)  # fmt: skip
    targets.finish(_TARGET)


__all__ = ["multibox_target"]
