"""OpCase row for ops/optimizer/group_adagrad.py: the reference walks the rows one by one
with MXNet's documented rule. The op updates `history` in place, so check_op (which runs
it repeatedly on the same inputs) does not apply; test_contrib_group_adagrad.py checks the
history, several steps, lazy rows and the errors."""

from __future__ import annotations

from typing import Any

import numpy as np
from op_db import OpCase


def group_adagrad_ref(
    weight: np.ndarray,
    grad: np.ndarray,
    history: np.ndarray,
    lr: float,
    rescale_grad: float = 1.0,
    clip_gradient: float = -1.0,
    epsilon: float = 1e-5,
) -> np.ndarray:
    out = np.empty(weight.shape)
    for r in range(weight.shape[0]):
        g = grad[r] * rescale_grad
        if clip_gradient >= 0:
            g = np.minimum(np.maximum(g, -clip_gradient), clip_gradient)
        h = float(history.reshape(-1)[r]) + float(np.mean(g * g))
        out[r] = weight[r] - lr * g / np.sqrt(h + epsilon)
    return out


def _inputs(rng: np.random.Generator, dtype: Any) -> list[np.ndarray]:
    return [
        rng.uniform(-1, 1, (4, 3, 2)).astype(dtype),
        rng.uniform(-1, 1, (4, 3, 2)).astype(dtype),
        rng.uniform(0.1, 1, (4, 1)).astype(dtype),
    ]


CASES = [
    OpCase(
        "_contrib_group_adagrad_update",
        [(4, 3, 2), (4, 3, 2), (4, 1)],
        group_adagrad_ref,
        params={"lr": 0.1, "rescale_grad": 2.0, "clip_gradient": 0.9, "epsilon": 1e-4},
        inputs=_inputs,
        dtypes=(np.float32, np.float64, np.float16),
        tols={np.float16: (2e-3, 2e-3)},
        grad=False,
        check_op=False,
    ),
]
