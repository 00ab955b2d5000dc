"""Sorting rows on the GPU: a segmented bitonic sort of (key, index) pairs in scratch memory.

The data, viewed as (outer, n, inner), has rows = outer * inner rows of n keys (elements
`inner` apart). Each row is copied into a scratch row of P = next power of two >= n
slots, with its positions 0..n-1 as indices; slots past n are padding that sorts last.
Then the bitonic network runs, one launch per (block size, distance) stage,
log2(P) * (log2(P) + 1) / 2 launches; every launch compare-exchanges all rows' pairs at
once. Keys compare as NumPy sorts them (NaN last) and ties by index, so the order is
total: the result equals a stable sort, the same on every device.

`select` then writes the k first elements of every row: values, positions or a mask
(one work item per selected element). The bodies are kernel.parallel_for loops and so
run on the CPU too (the tests check the network there against np.argsort); the CPU ops
sort with NumPy, which is faster.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import kernel
from ..kernel import scratch as _scratch
from ..kernel.launch import NULL, WRITE, flat
from ..kernel.launch import uindex as uidx
from ._index_kernels import zero

_ALIGN = 16  # bytes: the index block starts aligned after the key block


@kernel.device_function
def key_less(a, b):
    """a sorts before b in ascending order; NaN sorts last, as in NumPy."""
    return a < b or (b != b and a == a)


@kernel.device_function
def before(ka, ia, kb, ib, n, ascending):
    """(ka, ia) comes before (kb, ib): padding (index >= n) last, equal keys by index."""
    if ia >= n:
        return False
    if ib >= n:
        return True
    if ascending:
        if key_less(ka, kb):
            return True
        if key_less(kb, ka):
            return False
    else:
        if key_less(kb, ka):
            return True
        if key_less(ka, kb):
            return False
    return ia < ib


@kernel.parallel_for
def load_rows(t, keys, idx, data, p2, n, inner):
    # slot t = r * P + p of row r = o * inner + i holds (data[o, p, i], p); p >= n pads
    r = t // p2
    p = t - r * p2
    if p < n:
        o = r // inner
        keys[t] = data[uidx((o * n + p) * inner + r - o * inner)]
        idx[t] = p
    else:
        idx[t] = p2


@kernel.parallel_for
def merge_step(t, keys, idx, half, n, block, dist, ascending):
    # pair t of a row: slots lo and lo + dist, ordered up or down by their block of `block`
    r = t // half
    q = t - r * half
    lo = 2 * dist * (q // dist) + q % dist
    a = r * 2 * half + lo
    b = a + dist
    if (lo & block) == 0:
        swap = before(keys[b], idx[b], keys[a], idx[a], n, ascending)
    else:
        swap = before(keys[a], idx[a], keys[b], idx[b], n, ascending)
    if swap:
        kt = keys[a]
        keys[a] = keys[b]
        keys[b] = kt
        it = idx[a]
        idx[a] = idx[b]
        idx[b] = it


def padded(n: int) -> int:
    """P: the smallest power of two >= n (1 for n <= 1)."""
    return 1 << max(n - 1, 0).bit_length()


def key_dtype(dtype: Any) -> np.dtype:
    """Keys are compared in the data's dtype; float16 in float32 (exact, and portable)."""
    dtype = np.dtype(dtype)
    return np.dtype(np.float32) if dtype == np.float16 else dtype


def scratch_bytes(rows: int, n: int, dtype: Any) -> int:
    size = rows * padded(n)
    return -(-size * key_dtype(dtype).itemsize // _ALIGN) * _ALIGN + size * 8


def sort_rows(ctx: Any, space: Any, data: Any, sizes: tuple[int, int, int], ascending: bool
              ) -> tuple[Any, Any, int]:  # fmt: skip
    """Sort every row of data (outer, n, inner); returns (keys, indices, P), row r's order
    being indices[r * P : r * P + n]. `space` is a uint8 scratch array of scratch_bytes."""
    outer, n, inner = sizes
    rows, p2 = outer * inner, padded(n)
    kdt = key_dtype(data.dtype)
    key_bytes = -(-rows * p2 * kdt.itemsize // _ALIGN) * _ALIGN
    keys = space[: rows * p2 * kdt.itemsize].view(kdt)
    idx = space[key_bytes : key_bytes + rows * p2 * 8].view(np.int64)
    load_rows.launch(ctx, rows * p2, keys, idx, flat(data), p2, n, inner)
    half = p2 // 2
    block = 2
    while block <= p2:
        dist = block // 2
        while dist >= 1:
            merge_step.launch(ctx, rows * half, keys, idx, half, n, block, dist, ascending)
            dist //= 2
        block *= 2
    return keys, idx, p2


def scratch(ctx: Any, requested: Any, nbytes: int) -> Any:
    """A uint8 scratch array of nbytes on ctx's device (the op's kTempSpace resource)."""
    if requested:
        return requested[0].get_space((max(nbytes, 1),), np.uint8)
    return _scratch.empty(ctx, max(nbytes, 1), np.uint8)


# --- writing the selection ------------------------------------------------------------------


@kernel.parallel_for
def emit_selected(t, val, ind, data, idx, p2, n, inner, k, vmode, imode):
    # item t = (row r, rank p < k): the p-th element of row r, at (o, p, i) of the outputs
    r = t // k
    p = t - r * k
    o = r // inner
    i = r - o * inner
    s = idx[r * p2 + p]
    dst = (o * k + p) * inner + i
    if vmode != 0:
        v = data[uidx((o * n + s) * inner + i)]
        if vmode == 2:
            val[dst] += v
        else:
            val[dst] = v
    if imode != 0:
        if imode == 2:
            ind[dst] += s
        else:
            ind[dst] = s


@kernel.parallel_for
def emit_mask(t, mask, idx, p2, n, inner, k):
    # item t = (row r, rank p < k): mask[o, idx, i] += 1 (the mask was zeroed for a write)
    r = t // k
    p = t - r * k
    o = r // inner
    mask[uidx((o * n + idx[r * p2 + p]) * inner + r - o * inner)] += 1


Slot = tuple[Any, int]  # (output array or None, write mode)


def select(ctx: Any, data: Any, sizes: tuple[int, int, int], k: int, ascending: bool,
           value: Slot, indices: Slot, mask: Slot) -> None:  # fmt: skip
    """Write the k first elements of each sorted row of data (outer, n, inner) along n:
    their values and positions (outer, k, inner), or a mask of data's shape."""
    outer, n, inner = sizes
    rows = outer * inner
    if rows * k == 0:
        return
    space = scratch(ctx, getattr(ctx, "requested", None), scratch_bytes(rows, n, data.dtype))
    _, idx, p2 = sort_rows(ctx, space, data, sizes, ascending)
    out, mode = mask
    if out is not None and mode != NULL:
        if mode == WRITE:
            zero(ctx, out)
        emit_mask.launch(ctx, rows * k, flat(out), idx, p2, n, inner, k)
    (val, vmode), (ind, imode) = value, indices
    if vmode == NULL and imode == NULL:
        return
    # an output not written is a 1-element placeholder of a dtype the body types with
    val = flat(val) if val is not None else _placeholder(ctx, data.dtype)
    ind = flat(ind) if ind is not None else _placeholder(ctx, np.int64)
    emit_selected.launch(ctx, rows * k, val, ind, flat(data), idx, p2, n, inner, k, vmode, imode)


def _placeholder(ctx: Any, dtype: Any) -> Any:
    return _scratch.empty(ctx, 1, dtype)
