"""OpCase rows for contrib_quantize_asym.py: the reference applies the documented formula
element by element in float32 scalars (MXNet's precision), saturating to [0, 255]. The op
is forward-only (zero gradient, uint8 output): test_contrib_quantize_asym.py checks that."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from op_db import OpCase


def quantize_asym_ref(
    data: np.ndarray, min_calib_range: Any = None, max_calib_range: Any = None
) -> list[np.ndarray]:
    x = [np.float32(v) for v in data.ravel()]
    if min_calib_range is not None and max_calib_range is not None:
        lo, hi = np.float32(min_calib_range), np.float32(max_calib_range)
    else:
        lo, hi = min(x), max(x)
    scale = np.float32(255.0) / np.float32(hi - lo)
    shift = np.float32(255.0) - np.float32(hi * scale)
    q = []
    for v in x:
        y = float(np.float32(np.float32(v * scale) + shift)) + 0.5
        q.append(math.trunc(min(max(y, 0.0), 255.0)))
    out = np.array(q, np.uint8).reshape(data.shape)
    return [out, np.array([scale], np.float32), np.array([shift], np.float32)]


CASES = [
    OpCase(
        "_contrib_quantize_asym",
        shapes=[(3, 4, 5)],
        reference=quantize_asym_ref,
        low=-1.5,
        high=2.5,
        dtypes=(np.float32,),
        grad=False,
    ),
    OpCase(
        "_contrib_quantize_asym",
        shapes=[(4, 6)],
        params={"min_calib_range": -0.75, "max_calib_range": 1.5},  # some values saturate
        reference=quantize_asym_ref,
        low=-1.5,
        high=2.5,
        dtypes=(np.float32,),
        grad=False,
        id="calibrated",
    ),
]
