"""More unary math (MXNet's elemwise_unary_op_trig/_logexp/_pow/_basic): trig and hyperbolic
functions and their inverses, log2/log10, cbrt/rcbrt, degrees/radians, rounding, logical_not,
hard_sigmoid.

Each op is a kernel, its derivative kernel (dy, x) or (dy, y), and the second-derivative
kernel (g, dy, v) that makes the backward op differentiable (_second_order.py). The bodies
call kernel.vmath, so float32 loops are vectorised: every float32 array of the inverse
trigonometric and hyperbolic functions, log2/log10 and cbrt runs them
(_numpy_fast.numpy_but_float32: as fast as NumPy's SIMD loops on valid data, and ~12x
faster where NumPy's turn scalar on NaN / inf results); float32 tan runs vmath.trig's
block loop (a vectorised body for |x| <= 8192, NumPy for the rare larger arguments);
float64 arrays use NumPy's ufunc, split across the cores (`numpy_impl`,
_numpy_fast.threaded). Outside a
function's domain the result is NaN (or ±inf at a pole) on every device, as in C (vmath's
references hold the explicit branches that keep the CUDA simulator, which runs kernels as
Python, from raising math domain errors).
"""

from __future__ import annotations

import math

import numpy as np

from .. import kernel
from ..graph.grad import ElemwiseGradUseNone, make_zero_grad_nodes
from ..kernel import vmath
from ..param import Parameter, field
from ._family import ZERO, register_unary, register_unary_math
from ._numpy_fast import float32_parts, numpy_but_float32, threaded, vmath_parts
from ._second_order import ThirdDerivative, reciprocal_power, unary_chain

elementwise = kernel.elementwise
v_asin, v_acos, v_atan = vmath.asin, vmath.acos, vmath.atan
v_sinh, v_cosh, v_asinh, v_acosh, v_atanh = (
    vmath.sinh,
    vmath.cosh,
    vmath.asinh,
    vmath.acosh,
    vmath.atanh,
)
v_log2, v_log10, v_cbrt, v_rcbrt = vmath.log2, vmath.log10, vmath.cbrt, vmath.rcbrt

LN2 = math.log(2.0)
LN10 = math.log(10.0)
RAD_PER_DEG = math.pi / 180.0
DEG_PER_RAD = 180.0 / math.pi
NAN = math.nan
INF = math.inf


# -- trigonometric ---------------------------------------------------------------------------


_tan_parts = vmath_parts("tan_parts")  # tan_into over k parts in numba's threads


@elementwise(numpy_impl=float32_parts(threaded(np.tan), vmath.trig.tan_into, _tan_parts))
def _tan(x):
    return math.tan(x)


@elementwise
def _tan_grad(dy, y):  # d tan = 1 + tan^2 = 1 + y^2
    return dy * (1 + y * y)


@elementwise
def _tan_grad2(g, dy, y):  # d/dy [dy (1 + y^2)] = 2 y dy
    return 2 * g * dy * y


@numpy_but_float32(np.arcsin)
def _arcsin(x):
    return v_asin(x)


@elementwise
def _arcsin_grad(dy, x):  # 1 / sqrt(1 - x^2)
    return dy / math.sqrt(1 - x * x) if -1 < x < 1 else dy * NAN


@elementwise
def _arcsin_grad2(g, dy, x):  # x (1 - x^2)^-3/2
    w = 1 - x * x
    return g * dy * x / (w * math.sqrt(w)) if w > 0 else g * dy * NAN


@numpy_but_float32(np.arccos)
def _arccos(x):
    return v_acos(x)


@elementwise
def _arccos_grad(dy, x):  # -1 / sqrt(1 - x^2)
    return -dy / math.sqrt(1 - x * x) if -1 < x < 1 else dy * NAN


@elementwise
def _arccos_grad2(g, dy, x):  # -x (1 - x^2)^-3/2
    w = 1 - x * x
    return -g * dy * x / (w * math.sqrt(w)) if w > 0 else g * dy * NAN


@numpy_but_float32(np.arctan)
def _arctan(x):
    return v_atan(x)


@elementwise
def _arctan_grad(dy, x):  # 1 / (1 + x^2)
    return dy / (1 + x * x)


@elementwise
def _arctan_grad2(g, dy, x):  # -2x / (1 + x^2)^2
    w = 1 + x * x
    return -2 * g * dy * x / (w * w)


@elementwise
def _degrees(x):
    return x * DEG_PER_RAD


@elementwise
def _radians(x):
    return x * RAD_PER_DEG


# -- hyperbolic --------------------------------------------------------------------------------


@numpy_but_float32(np.sinh)
def _sinh(x):
    return v_sinh(x)


@elementwise
def _sinh_grad(dy, x):  # cosh
    return dy * v_cosh(x)


@elementwise
def _sinh_grad2(g, dy, x):  # sinh
    return g * dy * v_sinh(x)


@numpy_but_float32(np.cosh)
def _cosh(x):
    return v_cosh(x)


@elementwise
def _cosh_grad(dy, x):  # sinh
    return dy * v_sinh(x)


@elementwise
def _cosh_grad2(g, dy, x):  # cosh
    return g * dy * v_cosh(x)


@numpy_but_float32(np.arcsinh)
def _arcsinh(x):
    return v_asinh(x)


@elementwise
def _arcsinh_grad(dy, x):  # 1 / sqrt(x^2 + 1)
    return dy / math.sqrt(x * x + 1)


@elementwise
def _arcsinh_grad2(g, dy, x):  # -x (x^2 + 1)^-3/2
    w = x * x + 1
    return -g * dy * x / (w * math.sqrt(w))


@numpy_but_float32(np.arccosh)
def _arccosh(x):
    return v_acosh(x)


@elementwise
def _arccosh_grad(dy, x):  # 1 / sqrt(x^2 - 1)
    w = x * x - 1
    return dy / math.sqrt(w) if w >= 0 else dy * NAN


@elementwise
def _arccosh_grad2(g, dy, x):  # -x (x^2 - 1)^-3/2
    w = x * x - 1
    return -g * dy * x / (w * math.sqrt(w)) if w >= 0 else g * dy * NAN


@numpy_but_float32(np.arctanh)
def _arctanh(x):
    return v_atanh(x)


@elementwise
def _arctanh_grad(dy, x):  # 1 / (1 - x^2)
    return dy / (1 - x * x)


@elementwise
def _arctanh_grad2(g, dy, x):  # 2x / (1 - x^2)^2
    w = 1 - x * x
    return 2 * g * dy * x / (w * w)


# -- logarithms and roots ------------------------------------------------------------------------


@numpy_but_float32(np.log2)
def _log2(x):
    return v_log2(x)


@numpy_but_float32(np.log10)
def _log10(x):
    return v_log10(x)


@elementwise
def _log2_grad(dy, x):
    return dy / (x * LN2)


@elementwise
def _log2_grad2(g, dy, x):
    return -g * dy / (x * x * LN2)


@elementwise
def _log10_grad(dy, x):
    return dy / (x * LN10)


@elementwise
def _log10_grad2(g, dy, x):
    return -g * dy / (x * x * LN10)


@numpy_but_float32(np.cbrt)
def _cbrt(x):
    return v_cbrt(x)


@elementwise
def _cbrt_grad(dy, y):  # d x^(1/3) = 1 / (3 x^(2/3)) = 1 / (3 y^2)
    return dy / (3 * y * y)


@elementwise
def _cbrt_grad2(g, dy, y):  # d/dy [dy / (3 y^2)] = -2 dy / (3 y^3)
    return -2 * g * dy / (3 * y * y * y)


@elementwise
def _rcbrt(x):
    return v_rcbrt(x)


@elementwise
def _rcbrt_grad(dy, x):  # d x^(-1/3) = -1/3 x^(-4/3)
    return -dy / (3 * x * np.cbrt(x))


@elementwise
def _rcbrt_grad2(g, dy, x):  # 4/9 x^(-7/3)
    return 4 * g * dy / (9 * x * x * np.cbrt(x))


# -- rounding (piecewise constant: zero gradient) ---------------------------------------------


@elementwise
def _rint(x):  # MXNet's rint: the nearer integer, ties to the lower one (2.5 -> 2, -2.5 -> -3)
    # ceil(x - 0.5), in float64 so that x - 0.5 is exact; from 2**52 on x is an integer
    v = x * 1.0
    return v if abs(v) >= 4503599627370496.0 else np.ceil(v - 0.5)


@elementwise(numpy_impl=threaded(np.trunc))
def _trunc(x):
    return np.trunc(x)


@elementwise
def _logical_not(x):
    return 1 if x == 0 else 0


# -- hard_sigmoid -----------------------------------------------------------------------------


class HardSigmoidParam(Parameter):
    alpha = field(float, default=0.2, describe="Slope of hard sigmoid")
    beta = field(float, default=0.5, describe="Bias of hard sigmoid.")


@elementwise
def _hard_sigmoid(x, alpha, beta):  # max(0, min(1, alpha x + beta))
    v = alpha * x + beta
    return 1.0 if v > 1 else (0.0 if v < 0 else v)


@elementwise
def _hard_sigmoid_grad(dy, x, alpha, beta):  # alpha inside (0, 1), else 0
    v = alpha * x + beta
    return dy * alpha if 0 < v < 1 else dy * 0


# -- registrations ----------------------------------------------------------------------------

# h'' (grad3): what makes the second-order op differentiable, for third and higher orders
_GRAD3: dict[str, ThirdDerivative] = {
    "tan": 2.0,  # grad2's factor is 2y
    "sinh": unary_chain("cosh"),
    "cosh": unary_chain("sinh"),
    "log2": reciprocal_power(2.0 / LN2, 3),
    "log10": reciprocal_power(2.0 / LN10, 3),
    "cbrt": reciprocal_power(2.0, 4),  # grad2's factor is -2 / (3 y^3)
    "rcbrt": reciprocal_power(-28 / 27, 3, times="rcbrt"),  # d/dx [4/9 x^-7/3] = -28/27 x^-10/3
}

for _name, _fn, _grad, _use, _grad2, _doc in (
    ("tan", _tan, _tan_grad, "out", _tan_grad2, "Tangent, element-wise (radians)."),
    ("arcsin", _arcsin, _arcsin_grad, "in", _arcsin_grad2, "Inverse sine, in [-pi/2, pi/2]."),
    ("arccos", _arccos, _arccos_grad, "in", _arccos_grad2, "Inverse cosine, in [0, pi]."),
    ("arctan", _arctan, _arctan_grad, "in", _arctan_grad2, "Inverse tangent, in (-pi/2, pi/2)."),
    ("sinh", _sinh, _sinh_grad, "in", _sinh_grad2, "Hyperbolic sine, element-wise."),
    ("cosh", _cosh, _cosh_grad, "in", _cosh_grad2, "Hyperbolic cosine, element-wise."),
    ("arcsinh", _arcsinh, _arcsinh_grad, "in", _arcsinh_grad2, "Inverse hyperbolic sine."),
    ("arccosh", _arccosh, _arccosh_grad, "in", _arccosh_grad2, "Inverse hyperbolic cosine."),
    ("arctanh", _arctanh, _arctanh_grad, "in", _arctanh_grad2, "Inverse hyperbolic tangent."),
    ("log2", _log2, _log2_grad, "in", _log2_grad2, "Base-2 logarithm, element-wise."),
    ("log10", _log10, _log10_grad, "in", _log10_grad2, "Base-10 logarithm, element-wise."),
    ("cbrt", _cbrt, _cbrt_grad, "out", _cbrt_grad2, "Cube root, element-wise."),
    ("rcbrt", _rcbrt, _rcbrt_grad, "in", _rcbrt_grad2, "Reciprocal cube root: 1 / cbrt(x)."),
):
    register_unary_math(_name, _fn, _doc, _grad, _use, _grad2, grad3=_GRAD3.get(_name))

# linear maps: the gradient is the same map of dy (so it is differentiable again)
register_unary(
    "degrees", _degrees, "Radians to degrees: y = x * 180 / pi.", ElemwiseGradUseNone("degrees")
)
register_unary(
    "radians", _radians, "Degrees to radians: y = x * pi / 180.", ElemwiseGradUseNone("radians")
)

register_unary(
    "rint",
    _rint,
    "Rounds to the nearest integer; a tie goes to the lower one (MXNet: rint(2.5) = 2, "
    "rint(-2.5) = -3).",
    make_zero_grad_nodes,
)
register_unary("fix", _trunc, "Rounds toward zero.", make_zero_grad_nodes)
register_unary("trunc", _trunc, "Truncates toward zero: the integer part.", make_zero_grad_nodes)
register_unary(
    "logical_not", _logical_not, "1 where x == 0, else 0, in x's dtype.", make_zero_grad_nodes
)

register_unary_math(
    "hard_sigmoid",
    _hard_sigmoid,
    "Hard sigmoid: y = max(0, min(1, alpha * x + beta)), element-wise.",
    _hard_sigmoid_grad,
    "in",
    ZERO,
    HardSigmoidParam,
)
