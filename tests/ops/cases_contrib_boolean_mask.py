"""OpCase rows for contrib_boolean_mask.py: the reference keeps slices one by one where the
mask is non-zero. The output shape depends on the mask's values, so check_op (shape
inference from shapes alone) does not apply, nor does the symbolic gradient check (a bound
graph cannot hold the op): tests/ndarray/test_boolean_mask.py checks the gradient
through autograd against finite differences."""

from __future__ import annotations

from typing import Any

import numpy as np
from op_db import OpCase


def boolean_mask_ref(data: np.ndarray, index: np.ndarray, axis: int = 0) -> np.ndarray:
    moved = np.moveaxis(data, axis, 0)
    kept = [moved[i] for i in range(len(index)) if index[i] != 0]
    stacked = np.array(kept).reshape((len(kept), *moved.shape[1:]))
    return np.moveaxis(stacked, 0, axis)


def _inputs(shape: tuple[int, ...], axis: int) -> Any:
    def make(rng: np.random.Generator, dtype: Any) -> list[np.ndarray]:
        mask = rng.integers(-1, 2, shape[axis]).astype(np.float32)  # -1, 0 and 1
        mask[0] = 1  # never empty
        return [rng.uniform(-1, 1, shape).astype(dtype), mask]

    return make


CASES = [
    OpCase(
        "_contrib_boolean_mask",
        [(6, 3), (6,)],
        boolean_mask_ref,
        inputs=_inputs((6, 3), 0),
        check_op=False,
        grad=False,
    ),
    OpCase(
        "_contrib_boolean_mask",
        [(2, 5, 3), (5,)],
        boolean_mask_ref,
        params={"axis": -2},
        inputs=_inputs((2, 5, 3), 1),
        dtypes=(np.float32, np.int32),
        check_op=False,
        grad=False,
        id="axis-2",
    ),
]
