"""OpCase rows for contrib_adaptive_avg_pool.py: the reference averages every output
window with explicit loops (the op uses separable window matrices)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from op_db import OpCase


def adaptive_avg_pool_ref(x: np.ndarray, output_size: Any = ()) -> np.ndarray:
    size = (output_size,) if isinstance(output_size, int) else tuple(output_size)
    oh, ow = (1, 1) if not size else (size[0], size[-1])
    n, c, h, w = x.shape
    out = np.zeros((n, c, oh, ow))
    for i in range(oh):
        r0, r1 = math.floor(i * h / oh), math.ceil((i + 1) * h / oh)
        for j in range(ow):
            c0, c1 = math.floor(j * w / ow), math.ceil((j + 1) * w / ow)
            out[:, :, i, j] = x[:, :, r0:r1, c0:c1].mean(axis=(2, 3))
    return out


CASES = [
    OpCase(
        "_contrib_AdaptiveAvgPooling2D",
        shapes=[(2, 3, 7, 5)],
        params={"output_size": (3, 2)},
        reference=adaptive_avg_pool_ref,
    ),
    OpCase(
        "_contrib_AdaptiveAvgPooling2D",
        shapes=[(1, 2, 4, 3)],
        params={"output_size": 5},  # larger than the input: overlapping windows
        reference=adaptive_avg_pool_ref,
        dtypes=(np.float16, np.float32, np.float64),
        id="upsample",
    ),
    OpCase(
        "_contrib_AdaptiveAvgPooling2D",
        shapes=[(2, 2, 3, 4)],
        reference=adaptive_avg_pool_ref,
        id="global",
    ),
    OpCase(  # a GPU sums 1x1 bins on the reduction kernels: planes of 1200 in slices
        "_contrib_AdaptiveAvgPooling2D",
        shapes=[(1, 2, 40, 30)],
        params={"output_size": 1},
        reference=adaptive_avg_pool_ref,
        dtypes=(np.float16, np.float32, np.float64),
        grad=False,  # finite differences over 2400 inputs; "global" covers the gradient
        id="global-long",
    ),
]
