"""OpCase rows for contrib_arange_like.py, contrib_index_array.py and contrib_index_copy.py.

The references build their results from the definitions with plain NumPy loops and grids.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from op_db import OpCase


def arange_like_ref(
    data: np.ndarray, start: float = 0.0, step: float = 1.0, repeat: int = 1, axis: Any = None
) -> np.ndarray:
    n = data.size if axis is None else data.shape[axis]
    values = np.array([start + (i // repeat) * step for i in range(n)])
    return values.reshape(data.shape) if axis is None else values


def index_array_ref(data: np.ndarray, axes: Any = None) -> np.ndarray:
    chosen = range(data.ndim) if axes is None else [a % data.ndim for a in axes]
    out = np.zeros((*data.shape, len(chosen)), np.int64)
    for idx in np.ndindex(data.shape):
        out[idx] = [idx[a] for a in chosen]
    return out


def index_copy_ref(old: np.ndarray, index: np.ndarray, new: np.ndarray) -> np.ndarray:
    out = old.copy()
    for i, j in enumerate(index.astype(np.int64)):
        out[j] = new[i]
    return out


def _index_copy_inputs(rng: np.random.Generator, dtype: Any) -> list[np.ndarray]:
    return [
        rng.uniform(-1, 1, (6, 2, 3)).astype(dtype),
        rng.permutation(6)[:4].astype(np.int64),  # distinct rows: finite differences see all
        rng.uniform(-1, 1, (4, 2, 3)).astype(dtype),
    ]


CASES = [
    OpCase("_contrib_arange_like", shapes=[(3, 4)], reference=arange_like_ref),
    OpCase(
        "_contrib_arange_like",
        shapes=[(2, 3, 4)],
        params={"start": 1.5, "step": -0.5, "repeat": 3},
        reference=arange_like_ref,
        id="repeat",
    ),
    OpCase(
        "_contrib_arange_like",
        shapes=[(2, 3, 4)],
        params={"start": -2.0, "step": 3.0, "repeat": 2},
        reference=arange_like_ref,
        dtypes=(np.int32, np.int64),
        grad=False,
        id="int",
    ),
    OpCase(
        "_contrib_arange_like",
        shapes=[(2, 5, 3)],
        params={"start": 2.0, "axis": -2},
        reference=arange_like_ref,
        id="axis",
    ),
    # an int64 output: finite differences do not apply (zero gradient: test_contrib_index.py)
    OpCase("_contrib_index_array", shapes=[(3, 1, 4)], reference=index_array_ref, grad=False),
    OpCase(
        "_contrib_index_array",
        shapes=[(2, 3, 4, 2)],
        params={"axes": (3, -3)},
        reference=index_array_ref,
        grad=False,
        id="axes",
    ),
    OpCase(
        "_contrib_index_copy",
        shapes=[(6, 2, 3), (4,), (4, 2, 3)],
        reference=index_copy_ref,
        inputs=_index_copy_inputs,
        grad_inputs=[0, 2],
        low=0.0,  # check_op draws every input from [low, high]: the index too
        high=5.5,
    ),
]
