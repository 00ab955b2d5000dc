"""quantized_flatten: Flatten for int8/uint8 data, (N, d1, d2, ...) -> (N, d1*d2*...)."""

from __future__ import annotations

import math

from ._kernels import copy_codes
from ._passthrough import register_passthrough

OP = "_contrib_quantized_flatten"


def flat_shape(shape: tuple[int, ...]) -> tuple[int, ...]:
    """As Flatten: the first axis is kept and the rest collapse (a 1-D input gets (N, 1))."""
    return (shape[0], math.prod(shape[1:])) if shape else (1, 1)


register_passthrough(
    OP,
    "Flatten a quantized (int8 or uint8) input into a 2-D array, keeping the first "
    "axis; the min/max range passes through unchanged.\n",
    copy_codes,  # the same codes in the same (row-major) order
    flat_shape,
)
