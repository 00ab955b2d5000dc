"""OpCase rows for the sorting ops: sort, argsort, topk (every ret_typ, both directions,
axis=None, k < 1).

Inputs are shuffled grids (no ties, neighbours far apart next to the finite-difference
step), so sorted positions are unique; references are np.sort / np.argsort.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from op_db import Inputs, OpCase

X = (3, 4, 5)


def distinct(shape: tuple[int, ...]) -> Any:
    """A shuffled grid of multiples of 0.25 (exact in float16 and int after scaling)."""

    def make(rng: np.random.Generator, dtype: Any) -> Inputs:
        n = int(np.prod(shape))
        grid = (np.arange(n) - n // 2) * (1 if np.dtype(dtype).kind in "iu" else 0.25)
        return [rng.permutation(grid).reshape(shape).astype(dtype)]

    return make


def _rows(x: np.ndarray, axis: int | None) -> tuple[np.ndarray, int]:
    return (x.reshape(-1), 0) if axis is None else (x, axis)


def _order(x: np.ndarray, axis: int | None, ascending: bool) -> tuple[np.ndarray, int]:
    rows, ax = _rows(x, axis)
    order = np.argsort(rows, axis=ax)
    return (order if ascending else np.flip(order, axis=ax)), ax


def sort_ref(x, axis=-1, is_ascend=True):
    order, ax = _order(x, axis, is_ascend)
    return np.take_along_axis(_rows(x, axis)[0], order, axis=ax)


def argsort_ref(x, axis=-1, is_ascend=True, dtype="float32"):
    return _order(x, axis, is_ascend)[0]


def topk_ref(x, axis=-1, k=1, ret_typ="indices", is_ascend=False, dtype="float32"):
    order, ax = _order(x, axis, is_ascend)
    rows = _rows(x, axis)[0]
    k = rows.shape[ax] if k < 1 else k
    top = np.take(order, np.arange(k), axis=ax)
    values = np.take_along_axis(rows, top, axis=ax)
    if ret_typ == "mask":
        mask = np.zeros(rows.shape)
        np.put_along_axis(mask, top, 1, axis=ax)
        return mask.reshape(x.shape)
    return {"value": values, "indices": top, "both": [values, top]}[ret_typ]


FLOATS = (np.float32, np.float64, np.float16)

CASES = [
    OpCase("sort", [X], sort_ref, inputs=distinct(X), dtypes=(*FLOATS, np.int32)),
    OpCase("sort", [X], sort_ref, {"axis": 0, "is_ascend": False}, inputs=distinct(X), id="desc"),
    OpCase("sort", [X], sort_ref, {"axis": None}, inputs=distinct(X), id="flat"),
    OpCase("argsort", [X], argsort_ref, {"axis": 1}, inputs=distinct(X), grad=False,
           dtypes=(*FLOATS, np.int32)),
    OpCase("argsort", [X], argsort_ref, {"axis": None, "is_ascend": False, "dtype": "int32"},
           inputs=distinct(X), grad=False, id="flat-int32"),
    OpCase("topk", [X], topk_ref, {"k": 2}, inputs=distinct(X), grad=False, dtypes=FLOATS),
    OpCase("topk", [X], topk_ref, {"axis": 1, "k": 3, "ret_typ": "value", "is_ascend": True},
           inputs=distinct(X), id="value-asc", dtypes=FLOATS),
    OpCase("topk", [X], topk_ref, {"axis": 0, "k": 2, "ret_typ": "both", "dtype": "int64"},
           inputs=distinct(X), id="both"),
    OpCase("topk", [X], topk_ref, {"axis": 2, "k": 2, "ret_typ": "mask"}, inputs=distinct(X),
           grad=False, id="mask", dtypes=FLOATS),
    OpCase("topk", [X], topk_ref, {"axis": None, "k": 7, "ret_typ": "value"},
           inputs=distinct(X), id="flat"),
    OpCase("topk", [(2, 40)], topk_ref, {"k": 0, "ret_typ": "value"}, inputs=distinct((2, 40)),
           id="all"),
    OpCase("topk", [(2, 300)], topk_ref, {"k": 3, "ret_typ": "both", "is_ascend": True},
           inputs=distinct((2, 300)), id="partial"),
]  # fmt: skip
