"""topk on the CPU for small k and data without NaN: one pass over each row, keeping its
k first elements in order. Imported on first use (it imports numba).

argpartition moves every element of a row; here an element is compared with the row's
current k-th first and, for random data, almost always passes by (about k ln(n / k)
insertions a row). The comparisons run 16 at a time as a vectorised minimum (maximum)
of a chunk: only a chunk holding a candidate takes the scalar insertion. That test
does not see NaN, so sort.py sends arrays with NaN to NumPy. Order as sort.py's: equal
values by position (an element later in the row never passes an equal one), so the
positions are those of the stable sort's first k.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from .. import kernel
from ..kernel.cpu import cached_njit

CHUNK = 16  # elements tested at once against the k-th value


@cached_njit(cache_tag="topk1", inline="always")
def _beats(v, t, ascending):
    """Whether v comes strictly before t in the order (NaN largest; equal: neither)."""
    if ascending:
        return (v < t) | ((t != t) & (v == v))
    return (v > t) | ((v != v) & (t == t))


@cached_njit(cache_tag="topk1", inline="always")
def _insert(values, positions, count, k, v, i, ascending):
    """Put v (row position i) into the first `count` (<= k) kept elements, after those it
    does not beat; the k-th drops out when all k are kept. Returns the new count."""
    j = min(count, k - 1)
    while j > 0 and _beats(v, values[j - 1], ascending):
        values[j] = values[j - 1]
        positions[j] = positions[j - 1]
        j -= 1
    values[j] = v
    positions[j] = i
    return min(count + 1, k)


@cached_njit(cache_tag="topk1", inline="always")
def _chunk_has_candidate(row, i, last, ascending):
    """Whether some element of row[i : i + CHUNK] (no NaN in it) comes before last: its
    minimum (maximum) against last, a reduction LLVM vectorises; a test written as an OR
    of comparisons ran one element at a time (0.8 ns per element instead of 0.14)."""
    chunk = row[i : i + CHUNK]  # a slice: row[i + j] keeps numba's negative-index test
    m = chunk[0]
    if ascending:
        for j in range(1, CHUNK):
            m = min(m, chunk[j])
        return m < last
    for j in range(1, CHUNK):
        m = max(m, chunk[j])
    return m > last


@cached_njit(cache_tag="topk1", inline="always")
def _row(row, k, ascending, values, positions):
    n = row.size
    count = 0
    for i in range(k):
        count = _insert(values, positions, count, k, row[i], i, ascending)
    i = k
    while i + CHUNK <= n:
        if _chunk_has_candidate(row, i, values[k - 1], ascending):
            for j in range(i, i + CHUNK):
                if _beats(row[j], values[k - 1], ascending):
                    _insert(values, positions, k, k, row[j], j, ascending)
        i += CHUNK
    for j in range(i, n):
        if _beats(row[j], values[k - 1], ascending):
            _insert(values, positions, k, k, row[j], j, ascending)


def _top_rows(x, k, ascending, out):
    """out[r] = positions of the k first elements of row x[r] (1 <= k <= row length)."""
    for r in prange(x.shape[0]):
        values = np.empty(k, x.dtype)
        _row(x[r], k, ascending, values, out[r])


_parallel = kernel.cpu_kernel(_top_rows)
_serial = kernel.cpu_kernel(_top_rows, parallel=False)


def top_rows(x: np.ndarray, k: int, ascending: bool, parallel: bool) -> np.ndarray:
    """int64 positions (rows, k) of the k first elements of each row of the C-contiguous
    2-D x, in order; parallel: across numba's threads (a prange), else on this thread."""
    out = np.empty((x.shape[0], k), np.int64)
    (_parallel if parallel else _serial)(x, k, ascending, out)
    return out
