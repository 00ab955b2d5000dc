"""Arithmetic between an array and a Python scalar (the `scalar` parameter)."""

from __future__ import annotations

import math

from .. import kernel
from ..graph.grad import (
    ElemwiseGradUseIn,
    ElemwiseGradUseNone,
    ElemwiseGradUseOut,
    make_zero_grad_nodes,
)
from ._family import ScalarParam, register_backward, register_scalar

elementwise = kernel.elementwise


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
def _maximum(x, s):
    return x if x >= s else x * 0 + s


@elementwise
def _maximum_grad(dy, x, s):
    return dy if x >= s else dy * 0


@elementwise
def _minimum(x, s):
    return x if x <= s else x * 0 + s


@elementwise
def _minimum_grad(dy, x, s):
    return dy if x <= s else dy * 0


@elementwise
def _equal(x, s):
    return 1 if x == s else 0


@elementwise
def _greater(x, s):
    return 1 if x > s else 0


@elementwise
def _lesser(x, s):
    return 1 if x < s else 0


register_scalar("_plus_scalar", _plus, "y = x + scalar", ElemwiseGradUseNone("_copy"))
register_scalar("_minus_scalar", _minus, "y = x - scalar", ElemwiseGradUseNone("_copy"))
register_scalar("_rminus_scalar", _rminus, "y = scalar - x", ElemwiseGradUseNone("negative"))
# d(x*s) = s dy and d(x/s) = dy/s: the forward op with the same scalar is the gradient
register_scalar("_mul_scalar", _mul, "y = x * scalar", ElemwiseGradUseNone("_mul_scalar"))
register_scalar("_div_scalar", _div, "y = x / scalar", ElemwiseGradUseNone("_div_scalar"))

register_scalar("_rdiv_scalar", _rdiv, "y = scalar / x", ElemwiseGradUseIn("_backward_rdiv_scalar"))
register_backward("_backward_rdiv_scalar", _rdiv_grad, 2, ScalarParam, ("scalar",))

register_scalar(
    "_power_scalar", _power, "y = x ^ scalar", ElemwiseGradUseIn("_backward_power_scalar")
)
register_backward("_backward_power_scalar", _power_grad, 2, ScalarParam, ("scalar",))

register_scalar(
    "_rpower_scalar", _rpower, "y = scalar ^ x", ElemwiseGradUseOut("_backward_rpower_scalar")
)
register_backward("_backward_rpower_scalar", _rpower_grad, 2, ScalarParam, ("scalar",))

register_scalar(
    "_maximum_scalar", _maximum, "y = max(x, scalar)", ElemwiseGradUseIn("_backward_maximum_scalar")
)
register_backward("_backward_maximum_scalar", _maximum_grad, 2, ScalarParam, ("scalar",))

register_scalar(
    "_minimum_scalar", _minimum, "y = min(x, scalar)", ElemwiseGradUseIn("_backward_minimum_scalar")
)
register_backward("_backward_minimum_scalar", _minimum_grad, 2, ScalarParam, ("scalar",))

register_scalar("_equal_scalar", _equal, "y = 1 where x == scalar, else 0", make_zero_grad_nodes)
register_scalar("_greater_scalar", _greater, "y = 1 where x > scalar, else 0", make_zero_grad_nodes)
register_scalar("_lesser_scalar", _lesser, "y = 1 where x < scalar, else 0", make_zero_grad_nodes)
