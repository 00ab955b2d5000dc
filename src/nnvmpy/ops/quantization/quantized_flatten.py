"""quantized_flatten: Flatten for int8/uint8 data, (N, d1, d2, ...) -> (N, d1*d2*...)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._passthrough import register_passthrough

OP = "_contrib_quantized_flatten"


def flat_shape(shape: tuple[int, ...]) -> tuple[int, ...]:
    """As Flatten: the first axis is kept and the rest collapse (a 1-D input gets (N, 1))."""
    return (shape[0], math.prod(shape[1:])) if shape else (1, 1)


def _flatten(p: Any, data: np.ndarray) -> np.ndarray:
    return data.reshape(flat_shape(data.shape)).copy()


register_passthrough(
    OP,
    "Flatten a quantized (int8 or uint8) input into a 2-D array, keeping the first "
    "axis; the min/max range passes through unchanged.\n",
    _flatten,
    flat_shape,
)
