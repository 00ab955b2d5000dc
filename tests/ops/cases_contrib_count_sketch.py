"""OpCase rows for contrib_count_sketch.py: the reference loops over rows and features as
MXNet's GPU test does. h and s are integer-valued: only data is differentiated."""

from __future__ import annotations

from typing import Any

import numpy as np
from op_db import OpCase


def count_sketch_ref(
    data: np.ndarray, h: np.ndarray, s: np.ndarray, out_dim: int, processing_batch_size: int = 32
) -> np.ndarray:
    rows = data.reshape(-1, data.shape[-1])
    out = np.zeros((rows.shape[0], out_dim))
    for n in range(rows.shape[0]):
        for j in range(rows.shape[1]):
            out[n, int(h.reshape(-1)[j])] += rows[n, j] * s.reshape(-1)[j]
    return out.reshape((*data.shape[:-1], out_dim))


def _inputs(shape: tuple[int, ...], out_dim: int) -> Any:
    def make(rng: np.random.Generator, dtype: Any) -> list[np.ndarray]:
        d = shape[-1]
        return [
            rng.uniform(-10, 10, shape).astype(dtype),
            rng.integers(0, out_dim, (1, d)).astype(dtype),
            (rng.integers(0, 2, (1, d)) * 2 - 1).astype(dtype),
        ]

    return make


CASES = [
    OpCase(
        "_contrib_count_sketch",
        [(6, 9), (1, 9), (1, 9)],
        count_sketch_ref,
        params={"out_dim": 4},
        inputs=_inputs((6, 9), 4),
        grad_inputs=[0],
        check_op=False,  # check_op draws h outside [0, out_dim)
        atol=1e-4,
    ),
    OpCase(
        "_contrib_count_sketch",
        [(2, 3, 2, 5), (1, 5), (1, 5)],
        count_sketch_ref,
        params={"out_dim": 7, "processing_batch_size": 2},
        inputs=_inputs((2, 3, 2, 5), 7),
        grad_inputs=[0],
        check_op=False,
        atol=1e-4,
        id="4d",
    ),
]
