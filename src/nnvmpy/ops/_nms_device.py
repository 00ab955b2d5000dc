"""box_nms on the op's device: rank, suppress and emit without leaving it.

The host version (contrib_bbox.box_nms_np) filters, sorts and walks the boxes one batch
at a time. Here every step is a kernel over all batches at once:

1. keys: a box's score where it is valid (score > valid_thresh, class != background),
   -inf elsewhere, and per batch the number of valid boxes;
2. rank: the keys sorted descending per batch by the bitonic network (_bitonic: equal
   scores by position, as the host's stable sort), so a batch's valid boxes come first;
3. candidates: the first K = min(N, topk) ranked boxes of each batch as corners, area
   and class id in the compute dtype (float32 for float16, as the host computes);
4. overlaps: one 64-bit word per (batch, candidate i, block of 64 candidates j): bit j
   set when a later candidate j of i's class (or any, with force_suppress) has IoU > the
   threshold with i; all words in parallel;
5. suppression: one item per batch walks its candidates in rank order, keeping a box no
   kept box has marked and or-ing its word row into the removed set: K * K / 64 word
   operations per batch instead of the host's K^2 / 2 IoUs;
6. emit: the kept rows in order (re-encoded when out_format differs), -1 rows after
   them, and the record of each output row's input box.

The gradient routes each output row of dy back to the input row its record names.
Arrays in between come from the device's allocator (the op requests no temp space).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import kernel
from ..kernel import like
from ..kernel.launch import ADD, NULL, WRITE, run_rows, store, uindex
from ._bitonic import key_dtype, scratch_bytes, sort_rows
from ._index_kernels import device_empty

WORD = 64  # candidates per overlap word


@kernel.parallel_for
def _keys(t, keys, data, width, score_index, id_index, background_id, valid_thresh, neg_inf):
    """keys[t]: row t's score where it is a valid box, -inf elsewhere (NaN never valid).
    The thresholds come rounded to the data's type: compared in it, as the host does."""
    s = data[uindex(t * width + score_index)]
    ok = s > like(s, valid_thresh)
    if id_index >= 0:
        ok = ok and data[uindex(t * width + id_index)] != like(s, background_id)
    keys[t] = s if ok else like(s, neg_inf)


@kernel.parallel_for
def _count_valid(b, counts, keys, n, neg_inf):
    invalid = like(keys[b * n], neg_inf)  # in the keys' type
    c = 0
    for i in range(n):
        if keys[b * n + i] != invalid:
            c += 1
    counts[b] = c


@kernel.parallel_for
def _candidates(t, boxes, ids, src, data, order, counts, p2, n, k, width, cs, id_index, center):
    """Candidate t = (batch b, rank r < k): its corners and area (boxes row of 5), class id
    and input row within the batch (-1 past the batch's valid boxes)."""
    b = t // k
    r = t - b * k
    if r >= counts[b] or r >= n:
        src[t] = -1
        return
    i = order[b * p2 + r]
    src[t] = i
    row = (b * n + i) * width
    zero = like(boxes[0], 0.0)  # typed like boxes; not boxes[0] * 0: scratch may hold NaN
    two = like(zero, 2)
    a = zero + data[uindex(row + cs)]
    c2 = zero + data[uindex(row + cs + 1)]
    c3 = zero + data[uindex(row + cs + 2)]
    c4 = zero + data[uindex(row + cs + 3)]
    if center:
        hw = c3 / two
        hh = c4 / two
        left, top, right, bottom = a - hw, c2 - hh, a + hw, c2 + hh
        w, h = c3, c4
    else:
        left, top, right, bottom = a, c2, c3, c4
        w, h = c3 - a, c4 - c2
    o = t * 5
    boxes[o] = left
    boxes[o + 1] = top
    boxes[o + 2] = right
    boxes[o + 3] = bottom
    boxes[o + 4] = zero if (w < zero or h < zero) else w * h
    ids[t] = zero + data[uindex(row + id_index)] if id_index >= 0 else zero


@kernel.device_function
def _suppresses(boxes, i, j, thresh, pixel):
    """Candidate i's box overlaps j's by IoU > thresh (NaN, as 0 / 0, does not).

    box_nms (pixel False) forms the intersection in float64, as its host loop does;
    Proposal (pixel True: float32 boxes whose sides count one pixel more) all in float32
    against the threshold rounded to float32, as MXNet's proposal kernel."""
    oi = i * 5
    oj = j * 5
    iw = min(boxes[oi + 2], boxes[oj + 2]) - max(boxes[oi], boxes[oj])
    ih = min(boxes[oi + 3], boxes[oj + 3]) - max(boxes[oi + 1], boxes[oj + 1])
    if pixel:
        one = np.float32(1.0)
        zero = np.float32(0.0)
        inter32 = max(iw + one, zero) * max(ih + one, zero)
        return inter32 / (boxes[oi + 4] + boxes[oj + 4] - inter32) > np.float32(thresh)
    inter = max(iw, 0.0) * max(ih, 0.0)
    return inter / (boxes[oi + 4] + boxes[oj + 4] - inter) > thresh


@kernel.parallel_for
def _overlaps(t, mask, boxes, ids, src, k, words, thresh, use_ids, pixel):
    """Word t = (batch b, candidate i, block w): bit j - 64 w for each later candidate j
    of the block that i would suppress."""
    q = t // words
    w = t - q * words
    b = q // k
    i = q - b * k
    bits = np.uint64(0)
    if src[q] >= 0:
        lo = w * WORD
        start = i + 1 if i + 1 > lo else lo
        end = lo + WORD if lo + WORD < k else k
        for j in range(start, end):
            c = b * k + j
            if src[c] < 0:
                break
            if use_ids and ids[c] != ids[q]:
                continue
            if _suppresses(boxes, q, c, thresh, pixel):
                bits |= np.uint64(1) << np.uint64(j - lo)
    mask[t] = bits


@kernel.parallel_for
def _walk(b, kept, kept_count, removed, mask, src, k, words, limit):
    """Batch b: greedy suppression in rank order, stopping once `limit` boxes are kept;
    kept[b, :count] are the kept ranks."""
    for w in range(words):
        removed[b * words + w] = np.uint64(0)
    count = 0
    for i in range(k):
        q = b * k + i
        if src[q] < 0:
            break
        w = i // WORD
        if (removed[b * words + w] >> np.uint64(i - w * WORD)) & np.uint64(1) == np.uint64(0):
            kept[b * k + count] = i
            count += 1
            if count >= limit:
                break
            for v in range(w, words):
                removed[b * words + v] |= mask[q * words + v]
    kept_count[b] = count


@kernel.parallel_for
def _emit(t, out, record, data, kept, kept_count, src, n, k, width, cs, convert, to_center,
          omode, rmode):  # fmt: skip
    """Output row t = (batch b, row r): the r-th kept box of b, or -1s; its record.
    Values are converted to the data's type (out and record share it) before a store:
    an int64 added to a float32 was a float64 addition."""
    b = t // n
    r = t - b * n
    base = t * width
    one = like(data[0], 1)
    if r >= kept_count[b]:
        for c in range(width):
            store(out, base + c, -one, omode)
        store(record, t, -one, rmode)
        return
    i = src[b * k + kept[b * k + r]]
    row = (b * n + i) * width
    store(record, t, like(one, b * n + i), rmode)
    a = data[uindex(row + cs)]
    c2 = data[uindex(row + cs + 1)]
    c3 = data[uindex(row + cs + 2)]
    c4 = data[uindex(row + cs + 3)]
    v0, v1, v2, v3 = a, c2, c3, c4
    two = like(a, 2)
    if convert and a >= like(a, 0):  # the host skips rows whose first coordinate is < 0 too
        if to_center:
            v0, v1, v2, v3 = (a + c3) / two, (c2 + c4) / two, c3 - a, c4 - c2
        else:
            v0, v1, v2, v3 = a - c3 / two, c2 - c4 / two, a + c3 / two, c2 + c4 / two
    for c in range(width):
        store(out, base + c, data[uindex(row + c)], omode)
    if convert and a >= like(a, 0) and omode != 0:  # rewrite the coordinates (after the raw copy)
        _put(out, base + cs, v0, a, omode)
        _put(out, base + cs + 1, v1, c2, omode)
        _put(out, base + cs + 2, v2, c3, omode)
        _put(out, base + cs + 3, v3, c4, omode)


@kernel.device_function
def _put(out, i, value, raw, mode):
    """out[i] holds raw (written) or old + raw (added): make it value or old + value."""
    if mode == ADD:
        out[i] = out[i] - raw + value
    else:
        out[i] = value


@kernel.parallel_for
def _copy_all(t, out, record, data, width, omode, rmode):
    """topk = 0: every row unchanged, its record its own index (in the data's type, which
    record shares: an int64 added to a float32 record was a float64 addition)."""
    for c in range(width):
        store(out, t * width + c, data[uindex(t * width + c)], omode)
    store(record, t, like(data[uindex(t * width)], t), rmode)


@kernel.parallel_for
def _route_grad(t, d_data, dy, record, width, mode):
    """Output row t of dy to the input row its record names (rows are distinct)."""
    s = int(record[t]) if record[t] >= 0 else -1
    if s >= 0:
        for c in range(width):
            store(d_data, s * width + c, dy[uindex(t * width + c)], mode)


@kernel.parallel_for
def _fill(i, out, value):
    out[uindex(i)] = value


class Alloc:
    """Scratch arrays on ctx's device: alloc(size, dtype) (see _index_kernels.device_empty)."""

    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx

    def __call__(self, size: int, dtype: Any) -> Any:
        return device_empty(self.ctx, size, dtype)


def _flat(a: Any) -> Any:
    return a.reshape(int(a.size)) if len(a.shape) != 1 else a


def suppress(ctx: Any, alloc: Any, boxes: Any, ids: Any, src: Any, sizes: tuple[int, int],
             thresh: float, use_ids: bool, pixel: bool, limit: int) -> tuple[Any, Any]:  # fmt: skip
    """Greedy NMS of every batch's ranked candidates: boxes (batches, k, 5) as
    [left, top, right, bottom, area], ids (batches, k), src (batches, k) (-1 past a batch's
    candidates). Returns (kept ranks (batches, k), kept count per batch)."""
    batches, k = sizes
    words = -(-k // WORD)
    mask = alloc(batches * k * words, np.uint64)
    run_rows(ctx, "nms", _overlaps, batches * k * words, mask, boxes, ids, src, k, words,
             float(thresh), use_ids, pixel)  # fmt: skip
    kept = alloc(batches * k, np.int64)
    kept_count = alloc(batches, np.int64)
    removed = alloc(batches * words, np.uint64)
    run_rows(ctx, "nms", _walk, batches, kept, kept_count, removed, mask, src, k, words, limit)
    return kept, kept_count


def box_nms(ctx: Any, p: Any, data: Any, out: Any, record: Any, modes: list[int]) -> None:
    """box_nms of data (..., N, W) into out and record (..., N, 1), on data's device;
    modes: the write modes of out and record (NULL, WRITE or ADD)."""
    shape = tuple(int(d) for d in data.shape)
    n, width = shape[-2], shape[-1]
    batches = int(data.size) // (n * width) if n * width else 0
    omode, rmode = modes
    if batches * n == 0 or (omode == NULL and rmode == NULL):
        return
    x, o, rec = _flat(data), _flat(out), _flat(record)
    topk = n if p.topk < 0 else min(n, p.topk)
    if topk < 1:
        run_rows(ctx, "box_nms", _copy_all, batches * n, o, rec, x, width, omode, rmode)
        return
    alloc = Alloc(ctx)
    kdt = key_dtype(data.dtype)
    neg_inf = -np.inf  # scalars go in as Python floats (run_rows flattens NumPy scalars)
    keys = alloc(batches * n, kdt)
    # the host compares in the data's dtype: the thresholds rounded to it first
    as_data = data.dtype.type
    run_rows(ctx, "box_nms", _keys, batches * n, keys, x, width, p.score_index, p.id_index,
             float(as_data(p.background_id)), float(as_data(p.valid_thresh)), neg_inf)  # fmt: skip
    counts = alloc(batches, np.int64)
    run_rows(ctx, "box_nms", _count_valid, batches, counts, keys, n, neg_inf)
    space = alloc(scratch_bytes(batches, n, kdt), np.uint8)
    _, order, p2 = sort_rows(ctx, space, keys.reshape(batches, n), (batches, n, 1), False)
    k = topk
    boxes = alloc(batches * k * 5, kdt)
    ids = alloc(batches * k, kdt)
    src = alloc(batches * k, np.int64)
    run_rows(ctx, "box_nms", _candidates, batches * k, boxes, ids, src, x, order, counts, p2,
             n, k, width, p.coord_start, p.id_index, p.in_format == "center")  # fmt: skip
    use_ids = p.id_index >= 0 and not p.force_suppress
    kept, kept_count = suppress(ctx, alloc, boxes, ids, src, (batches, k), p.overlap_thresh,
                                use_ids, False, k)  # fmt: skip
    convert = p.in_format != p.out_format
    run_rows(ctx, "box_nms", _emit, batches * n, o, rec, x, kept, kept_count, src, n, k, width,
             p.coord_start, convert, p.out_format == "center", omode, rmode)  # fmt: skip


def box_nms_grad(ctx: Any, dy: Any, record: Any, d_data: Any, mode: int) -> None:
    """d_data (+)= dy's rows moved back to the input rows their records name."""
    if mode == NULL or int(d_data.size) == 0:
        return
    shape = tuple(int(d) for d in dy.shape)
    width = shape[-1]
    rows = int(dy.size) // width
    g = _flat(d_data)
    if mode == WRITE:
        run_rows(ctx, "box_nms", _fill, int(g.size), g, 0)
    run_rows(ctx, "box_nms", _route_grad, rows, g, _flat(dy), _flat(record), width, mode)


__all__ = ["WORD", "Alloc", "box_nms", "box_nms_grad", "suppress"]
