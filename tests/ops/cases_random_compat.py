"""OpCase rows of the random ops added for MXNet compatibility, at a point of their domain.

_sample_unique_zipfian with range_max 1 has one class: every row is [0, 0, ...] cut to
num_sampled = 1, reached in one trial. The distribution itself (class frequencies, number
of trials, uniqueness) is tested in test_random_compat.py.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from op_db import OpCase


def one_class(shape: Any, **_: Any) -> list[np.ndarray]:
    return [np.zeros(shape), np.ones(shape[0])]


CASES: list[OpCase] = [
    OpCase(
        "_sample_unique_zipfian",
        [],
        one_class,
        params={"range_max": 1, "shape": (3, 1)},
        dtypes=(np.dtype(np.int64),),
        grad=False,
        gpu=False,  # as in MXNet: a CPU op
    )
]
