"""Arithmetic between an array and a Python scalar (the `scalar` parameter).

Every op also answers to MXNet's CamelCase alias (`_PlusScalar` is `_plus_scalar`). As
in MXNet (`x op DType(scalar)`), a float32 array meets the scalar as float32 on the CPU
(kernel/cpu.py converts it inside the loop), so `_mod_scalar(x, 0.1)` is NumPy's
`x % np.float32(0.1)` and the loop runs at float32 vector width.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import kernel
from ..graph.grad import (
    ElemwiseGradUseIn,
    ElemwiseGradUseNone,
    ElemwiseGradUseOut,
    make_zero_grad_nodes,
)
from ..kernel import vmath
from ..registry import register_op
from ._family import ScalarParam, register_backward, register_scalar
from ._mod import floor_mod, integer_gradients_are_zero

elementwise = kernel.elementwise
v_hypot = vmath.hypot


@elementwise
def _plus(x, s):
    return x + s


@elementwise
def _minus(x, s):
    return x - s


@elementwise
def _rminus(x, s):
    return s - x


@elementwise
def _mul(x, s):
    return x * s


@elementwise
def _div(x, s):
    return x / s


@elementwise
def _rdiv(x, s):
    return s / x


@elementwise
def _rdiv_grad(dy, x, s):  # d(s/x) = -s/x^2
    return -s * dy / (x * x)


@elementwise
def _power(x, s):
    return x**s


@elementwise
def _power_grad(dy, x, s):  # d(x^s) = s x^(s-1)
    return dy * s * x ** (s - 1)


@elementwise
def _rpower(x, s):
    return s**x


@elementwise
def _rpower_grad(dy, y, s):  # d(s^x) = s^x log(s) = y log(s)
    return dy * y * math.log(s)


@elementwise
def _maximum(x, s):  # NaN on either side propagates, as MXNet's maximum
    return x if x >= s or x != x else x * 0 + s


@elementwise
def _maximum_grad(dy, x, s):
    return dy if x >= s else dy * 0


@elementwise
def _minimum(x, s):
    return x if x <= s or x != x else x * 0 + s


@elementwise
def _minimum_grad(dy, x, s):
    return dy if x <= s else dy * 0


@elementwise
def _mod(x, s):  # x mod s with the sign of s (Python's %); 0 where s == 0, as MXNet
    return floor_mod(x, s)


@elementwise
def _mod_grad(dy, x, s):  # d(x mod s)/dx = 1 (away from the jumps)
    return dy


@elementwise
def _rmod(x, s):
    return floor_mod(s, x)


@elementwise
def _rmod_grad(dy, x, s):  # d(s mod x)/dx = -floor(s / x)
    return -dy * np.floor(s / x) if x != 0 else dy * 0


@elementwise
def _hypot(x, s):  # as _hypot in elemwise_binary.py: no overflow in x^2 + s^2
    return v_hypot(x, s)


@elementwise
def _hypot_grad(dy, x, s):  # x / hypot(x, s)
    return dy * x / v_hypot(x, s)


@elementwise
def _equal(x, s):
    return 1 if x == s else 0


@elementwise
def _greater(x, s):
    return 1 if x > s else 0


@elementwise
def _lesser(x, s):
    return 1 if x < s else 0


# name, CamelCase alias, kernel, what it returns, FGradient
_OPS: list[tuple[str, str, Any, str, Any]] = [
    ("_plus_scalar", "_PlusScalar", _plus, "x + scalar", ElemwiseGradUseNone("_copy")),
    ("_minus_scalar", "_MinusScalar", _minus, "x - scalar", ElemwiseGradUseNone("_copy")),
    ("_rminus_scalar", "_RMinusScalar", _rminus, "scalar - x", ElemwiseGradUseNone("negative")),
    # d(x*s) = s dy and d(x/s) = dy/s: the forward op with the same scalar is the gradient
    ("_mul_scalar", "_MulScalar", _mul, "x * scalar", ElemwiseGradUseNone("_mul_scalar")),
    ("_div_scalar", "_DivScalar", _div, "x / scalar", ElemwiseGradUseNone("_div_scalar")),
    (
        "_rdiv_scalar",
        "_RDivScalar",
        _rdiv,
        "scalar / x",
        ElemwiseGradUseIn("_backward_rdiv_scalar"),
    ),
    (
        "_power_scalar",
        "_PowerScalar",
        _power,
        "x ^ scalar",
        ElemwiseGradUseIn("_backward_power_scalar"),
    ),
    (
        "_rpower_scalar",
        "_RPowerScalar",
        _rpower,
        "scalar ^ x",
        ElemwiseGradUseOut("_backward_rpower_scalar"),
    ),
    (
        "_maximum_scalar",
        "_MaximumScalar",
        _maximum,
        "max(x, scalar)",
        ElemwiseGradUseIn("_backward_maximum_scalar"),
    ),
    (
        "_minimum_scalar",
        "_MinimumScalar",
        _minimum,
        "min(x, scalar)",
        ElemwiseGradUseIn("_backward_minimum_scalar"),
    ),
    (
        "_mod_scalar",
        "_ModScalar",
        _mod,
        "x mod scalar (sign of scalar; 0 where it is 0)",
        ElemwiseGradUseIn("_backward_mod_scalar"),
    ),
    (
        "_rmod_scalar",
        "_RModScalar",
        _rmod,
        "scalar mod x (sign of x; 0 where x is 0)",
        ElemwiseGradUseIn("_backward_rmod_scalar"),
    ),
    (
        "_hypot_scalar",
        "_HypotScalar",
        _hypot,
        "sqrt(x^2 + scalar^2)",
        ElemwiseGradUseIn("_backward_hypot_scalar"),
    ),
]


def _np_rpower(x: np.ndarray, s: float, out: np.ndarray) -> np.ndarray:
    return np.power(s, x, out=out)


# pow through NumPy's SIMD loop on the CPU: numba calls libm's pow once per element
_NUMPY = {"_power_scalar": np.power, "_rpower_scalar": _np_rpower}
for _name, _alias, _fn, _what, _grad in _OPS:
    register_scalar(_name, _fn, f"y = {_what}, element-wise.", _grad, _NUMPY.get(_name))
    register_op(_name).add_alias(_alias)

for _name, _fn in (
    ("_backward_rdiv_scalar", _rdiv_grad),
    ("_backward_power_scalar", _power_grad),
    ("_backward_rpower_scalar", _rpower_grad),
    ("_backward_maximum_scalar", _maximum_grad),
    ("_backward_minimum_scalar", _minimum_grad),
    ("_backward_mod_scalar", _mod_grad),
    ("_backward_rmod_scalar", _rmod_grad),
    ("_backward_hypot_scalar", _hypot_grad),
):
    register_backward(_name, _fn, 2, ScalarParam, ("scalar",))
integer_gradients_are_zero("_backward_mod_scalar")
integer_gradients_are_zero("_backward_rmod_scalar")

register_scalar("_equal_scalar", _equal, "y = 1 where x == scalar, else 0", make_zero_grad_nodes)
register_scalar("_greater_scalar", _greater, "y = 1 where x > scalar, else 0", make_zero_grad_nodes)
register_scalar("_lesser_scalar", _lesser, "y = 1 where x < scalar, else 0", make_zero_grad_nodes)
