"""OpCase rows for rnn_param_concat.py: np.concatenate is the reference."""

from __future__ import annotations

from typing import Any

import numpy as np
from op_db import OpCase


def _concat(*xs: np.ndarray, dim: int = 1, **_: Any) -> np.ndarray:
    return np.concatenate(xs, axis=dim)


CASES = [
    OpCase("_rnn_param_concat", [(12,), (8,), (4,)], _concat, params={"num_args": 3, "dim": 0}),
    OpCase(
        "_rnn_param_concat",
        [(2, 3), (2, 1)],
        _concat,
        params={"num_args": 2, "dim": -1},
        id="last_axis",
    ),
]
