"""clip: limit the values of an array to [a_min, a_max] (MXNet's matrix_op clip).

As MXNet: x > a_max gives a_max, else x < a_min gives a_min, else x (so with
a_min > a_max every element becomes one of the two bounds); NaN stays NaN. The gradient
passes where a_min <= x <= a_max and is zero outside.
"""

from __future__ import annotations

from .. import kernel
from ..param import Parameter, field
from ._family import ZERO, register_unary_math


class ClipParam(Parameter):
    a_min = field(float, describe="Minimum value")
    a_max = field(float, describe="Maximum value")


@kernel.elementwise
def _clip(x, a_min, a_max):
    if x > a_max:
        return x * 0 + a_max
    return x * 0 + a_min if x < a_min else x


@kernel.elementwise
def _clip_grad(dy, x, a_min, a_max):
    return dy if a_min <= x <= a_max else dy * 0


register_unary_math(
    "clip",
    _clip,
    "Clips (limits) the values in an array to [a_min, a_max].",
    _clip_grad,
    "in",
    ZERO,
    ClipParam,
)
