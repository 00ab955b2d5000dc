"""OpCase rows for contrib_bilinear_resize.py: the reference interpolates every output
pixel from its four neighbours (the op uses separable interpolation matrices)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from op_db import OpCase


def _source(o: int, n_in: int, n_out: int, align_corners: bool) -> tuple[int, int, float]:
    """(lower row, upper row, weight of the upper row) that output position o samples."""
    if n_out == 1:
        s = 0.0
    elif align_corners:
        s = o * (n_in - 1) / (n_out - 1)
    else:
        s = max((o + 0.5) * n_in / n_out - 0.5, 0.0)
    lo = math.floor(s)
    return lo, min(lo + 1, n_in - 1), s - lo


def bilinear_resize_ref(
    x: np.ndarray,
    like: Any = None,
    height: int = 1,
    width: int = 1,
    align_corners: bool = True,
    mode: str = "size",
    **scales: Any,
) -> np.ndarray:
    n, c, h, w = x.shape
    if mode == "like":
        oh, ow = like.shape[2:]
    elif mode == "to_odd_up":
        oh, ow = h + (h % 2 == 0), w + (w % 2 == 0)
    else:
        oh, ow = height, width
    out = np.zeros((n, c, oh, ow))
    for i in range(oh):
        r0, r1, a = _source(i, h, oh, align_corners)
        for j in range(ow):
            c0, c1, b = _source(j, w, ow, align_corners)
            top = (1 - b) * x[:, :, r0, c0] + b * x[:, :, r0, c1]
            bottom = (1 - b) * x[:, :, r1, c0] + b * x[:, :, r1, c1]
            out[:, :, i, j] = (1 - a) * top + a * bottom
    return out


CASES = [
    OpCase(
        "_contrib_BilinearResize2D",
        shapes=[(2, 2, 4, 5)],
        params={"height": 7, "width": 3},
        reference=bilinear_resize_ref,
    ),
    OpCase(
        "_contrib_BilinearResize2D",
        shapes=[(1, 2, 5, 3)],
        params={"height": 2, "width": 6, "align_corners": False},
        reference=bilinear_resize_ref,
        dtypes=(np.float16, np.float32, np.float64),
        id="centers",
    ),
    OpCase(
        "_contrib_BilinearResize2D",
        shapes=[(1, 2, 3, 4), (2, 1, 5, 2)],
        params={"mode": "like"},
        reference=bilinear_resize_ref,
        id="like",
    ),
    OpCase(
        "_contrib_BilinearResize2D",
        shapes=[(1, 1, 4, 3)],
        params={"mode": "to_odd_up"},
        reference=bilinear_resize_ref,
        id="to_odd_up",
    ),
]
