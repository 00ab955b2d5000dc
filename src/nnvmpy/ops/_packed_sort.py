"""A stable argsort of 32-bit values through NumPy's unstable sort of 64-bit integers.
Imported on first use (it imports numba).

sort, argsort and topk need positions in the stable order (equal values by position).
NumPy has no fast stable sort for float32: kind="stable" is a timsort, 400 ms for 1000
rows of 8192, against 16 ms for np.sort's SIMD quicksort of the values alone. Here each
element becomes one uint64,

    order key << 32 | position in the row

where the order key is an unsigned 32-bit image of the value with the sort's order:
float bits with the sign bit flipped (all bits for negatives), -0 as +0, every NaN as
the largest key (NumPy's order: NaN last, NaNs tied); integers with the sign bit flipped.
Descending order takes the keys' complement. Equal keys then differ only in their
positions, so the plain (SIMD) sort of the uint64s puts equal values by position: the
stable order, in both directions, as sort.py's NumPy path gives it. The row chunks run on
the ufunc pool's threads (NumPy's sort releases the GIL).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .. import threads
from ..kernel.cpu import cached_njit

# a chunk of rows per part, so each part's uint64s (8 bytes an element) stay near L2
_PART_ELEMENTS = 1 << 16
_FLOAT, _SIGNED, _UNSIGNED = 0, 1, 2


@cached_njit(cache_tag="psort1", nogil=True)
def _pack(bits, kind, descending, packed):
    """packed[r, j] = key(bits[r, j]) << 32 | j, for the uint32 images of the values."""
    rows, n = bits.shape
    for r in range(rows):
        for j in range(n):
            b = np.uint32(bits[r, j])
            if kind == 0:  # float32 bits
                if (b & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000):
                    key = np.uint32(0xFFFFFFFF)  # NaN: after everything, all tied
                elif b == np.uint32(0x80000000):
                    key = np.uint32(0x80000000)  # -0: the key of +0
                elif b >> np.uint32(31):
                    key = ~b
                else:
                    key = b | np.uint32(0x80000000)
            elif kind == 1:  # int32
                key = b ^ np.uint32(0x80000000)
            else:
                key = b
            if descending:
                key = ~key
            packed[r, j] = (np.uint64(key) << np.uint64(32)) | np.uint64(j)


@cached_njit(cache_tag="psort1", nogil=True)
def _unpack(packed, positions):
    """positions[r, j] = the low 32 bits of packed[r, j]."""
    rows, n = packed.shape
    for r in range(rows):
        for j in range(n):
            positions[r, j] = np.int64(packed[r, j] & np.uint64(0xFFFFFFFF))


@cached_njit(cache_tag="psort1", nogil=True)
def _gather(x, positions, values):
    """values[r, j] = x[r, positions[r, j]]: a row stays in cache while it is read."""
    rows, n = positions.shape
    for r in range(rows):
        for j in range(n):
            values[r, j] = x[r, positions[r, j]]


def gather_rows(x: np.ndarray, positions: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """np.take_along_axis(x, positions, axis=-1) for positions in range along the last
    axis (31 ms for 1000 rows of 8192 float32 in NumPy, which checks and broadcasts
    every index; 4 here). `out`: a C-contiguous array of x's dtype and positions' shape
    to write into (an operator's output: no copy afterwards)."""
    n = x.shape[-1]
    # moved as unsigned integers of their size: bit for bit, float16 included (numba has
    # no float16 arrays)
    bits = np.dtype(f"u{x.dtype.itemsize}")
    rows = np.ascontiguousarray(x).reshape(-1, n).view(bits)
    where = np.ascontiguousarray(positions).reshape(rows.shape[0], -1)
    values = np.empty(where.shape, bits) if out is None else _rows_of(out, bits, where.shape)
    _in_parts(rows.shape[0], n, lambda lo, hi: _gather(rows[lo:hi], where[lo:hi], values[lo:hi]))
    return values.view(x.dtype).reshape(positions.shape)


def _rows_of(out: np.ndarray, dtype: np.dtype, shape: tuple[int, int]) -> np.ndarray:
    """out's memory as a (rows, n) array of `dtype` (a reshape of anything but C-order
    memory would write into a copy)."""
    if not out.flags.c_contiguous or out.dtype.itemsize != dtype.itemsize:
        raise ValueError(f"out must be C-contiguous with {dtype.itemsize}-byte elements")
    return out.view(dtype).reshape(shape)


def _images(x: np.ndarray) -> tuple[np.ndarray, int]:
    """x's rows as C-contiguous uint32 images, and how _pack reads them."""
    n = x.shape[-1]
    if x.dtype.kind == "f":
        return np.ascontiguousarray(x, np.float32).reshape(-1, n).view(np.uint32), _FLOAT
    if x.dtype.kind == "i":
        return np.ascontiguousarray(x, np.int32).reshape(-1, n).view(np.uint32), _SIGNED
    return np.ascontiguousarray(x, np.uint32).reshape(-1, n), _UNSIGNED


def argsort_rows(x: np.ndarray, ascending: bool, out: np.ndarray | None = None) -> np.ndarray:
    """int64 positions sorting x along its last axis, equal values by position in both
    directions: for 32-bit and smaller dtypes (sort.PACKED_SORT_DTYPES) and rows of
    fewer than 2**32 elements. `out`: a C-contiguous int64 array of x's shape to write
    into."""
    bits, kind = _images(x)
    rows, n = bits.shape
    if out is None:
        positions = np.empty((rows, n), np.int64)
    else:
        positions = _rows_of(out, np.dtype(np.int64), (rows, n))

    def sort_rows(lo: int, hi: int) -> None:
        packed = np.empty((hi - lo, n), np.uint64)
        _pack(bits[lo:hi], kind, not ascending, packed)
        packed.sort(axis=-1)
        _unpack(packed, positions[lo:hi])

    _in_parts(rows, n, sort_rows)
    return positions.reshape(x.shape)


def _in_parts(rows: int, row_length: int, work: Callable[[int, int], None]) -> None:
    """work(lo, hi) over [0, rows) in parts of about _PART_ELEMENTS elements; for large
    arrays on the lanes nnvmpy.threads.region grants (this thread and the ufunc pool's)."""
    per_part = max(1, _PART_ELEMENTS // max(row_length, 1))
    starts = range(0, rows, per_part)

    def lane(t: int, lanes: int) -> None:
        for lo in starts[t::lanes]:
            work(lo, min(lo + per_part, rows))

    if len(starts) < 2 or rows * row_length < threads.parallel_size():
        lane(0, 1)
        return
    from nnvmpy.ops._numpy_fast import _get_pool

    with threads.region() as width:
        lanes = max(1, min(width, len(starts)))
        futures = [_get_pool().submit(lane, t, lanes) for t in range(1, lanes)]
        try:
            lane(0, lanes)
        finally:
            for f in futures:
                f.result()
