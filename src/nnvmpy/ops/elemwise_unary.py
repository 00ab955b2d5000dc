"""Element-wise unary math: a kernel, its derivative kernel, and one registration line each.

Backward ops take (dy, x) when the gradient needs the input (ElemwiseGradUseIn) and
(dy, y) when it needs the output (ElemwiseGradUseOut); the math is in the comment.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import kernel
from ..attrs import FCompute_cpu, FCompute_gpu
from ..graph.grad import ElemwiseGradUseNone, make_zero_grad_nodes
from ..kernel import vmath
from ..registry import NodeAttrs, Op
from ._family import ZERO, register_unary, register_unary_math
from ._numpy_fast import numpy_but_float32, threaded
from ._second_order import reciprocal_power, unary_chain

elementwise = kernel.elementwise
v_one = vmath.one  # 1 in x's type: numba makes float32 + 1 a float64
v_zero = vmath.zero
v_sigmoid, v_tanh, v_exp, v_expm1, v_log, v_log1p = (
    vmath.sigmoid,
    vmath.tanh,
    vmath.exp,
    vmath.expm1,
    vmath.log,
    vmath.log1p,
)


def _np_sigmoid(x: np.ndarray, out: np.ndarray) -> np.ndarray:
    """1 / (1 + e^-x) with NumPy's vectorised exp (out may be x)."""
    np.negative(x, out=out)
    np.exp(out, out=out)
    out += 1
    return np.reciprocal(out, out=out)


@elementwise
def _identity(x):
    return x


# MXNet's relu: NaN stays NaN, everything else <= 0 (-inf and -0 too) becomes +0. The zero
# is x's own type (numba makes float32 * 0 a float64, which turned fused float32 chains into
# float64 ones); `x - x` was one but made relu(-inf) a NaN
@elementwise
def _relu(x):
    return x if not x <= 0 else v_zero(x)


@elementwise
def _relu_grad(dy, y):  # dx = dy * (y > 0), and NaN where y is (MXNet's relu_grad)
    return dy if y > 0 else (y if y != y else dy - dy)


@elementwise(numpy_impl=threaded(_np_sigmoid))
def _sigmoid(x):
    return v_sigmoid(x)


@elementwise
def _sigmoid_grad(dy, y):  # dx = dy * y * (1 - y)
    return dy * y * (v_one(y) - y)


@elementwise(numpy_impl=threaded(np.tanh))
def _tanh(x):
    return v_tanh(x)


@elementwise
def _tanh_grad(dy, y):  # dx = dy * (1 - y^2)
    return dy * (v_one(y) - y * y)


@elementwise(numpy_impl=threaded(np.exp))
def _exp(x):
    return v_exp(x)


@elementwise
def _mul(dy, y):  # exp: dx = dy * y
    return dy * y


@elementwise(numpy_impl=threaded(np.log))
def _log(x):
    return v_log(x)


@elementwise
def _div(dy, x):  # log: dx = dy / x
    return dy / x


@elementwise
def _sqrt(x):
    return math.sqrt(x)


@elementwise
def _sqrt_grad(dy, y):  # dx = dy / (2 sqrt(x)) = dy * 0.5 / y
    return dy / (y + y)


@elementwise
def _rsqrt(x):
    return 1.0 / math.sqrt(x)


@elementwise
def _rsqrt_grad(dy, x):  # d(x^-1/2) = -0.5 x^-3/2
    return -0.5 * dy / (x * math.sqrt(x))


@elementwise
def _square(x):
    return x * x


@elementwise
def _square_grad(dy, x):  # dx = 2 x dy
    return (x + x) * dy


@elementwise
def _abs(x):
    return abs(x)


@elementwise
def _abs_grad(dy, x):  # dx = sign(x) dy
    return dy if x > 0 else (-dy if x < 0 else dy * 0)


@elementwise
def _negative(x):
    return -x


@elementwise
def _sign(x):
    return 1 if x > 0 else (-1 if x < 0 else 0)


@elementwise
def _reciprocal(x):
    return 1.0 / x


@elementwise
def _reciprocal_grad(dy, x):  # d(1/x) = -1/x^2
    return -dy / (x * x)


@elementwise(numpy_impl=threaded(np.sin))
def _sin(x):
    return math.sin(x)


@elementwise
def _sin_grad(dy, x):
    return dy * math.cos(x)


@elementwise(numpy_impl=threaded(np.cos))
def _cos(x):
    return math.cos(x)


@elementwise
def _cos_grad(dy, x):
    return -dy * math.sin(x)


@numpy_but_float32(np.log1p)
def _log1p(x):
    return v_log1p(x)


@elementwise
def _log1p_grad(dy, x):  # dx = dy / (1 + x)
    return dy / (v_one(x) + x)


@elementwise(numpy_impl=threaded(np.expm1))
def _expm1(x):
    return v_expm1(x)


@elementwise
def _expm1_grad(dy, y):  # dx = dy * (y + 1)
    return dy * (y + v_one(y))


@elementwise
def _softsign(x):
    return x / (v_one(x) + abs(x))


@elementwise
def _softsign_grad(dy, x):  # dx = dy / (1 + |x|)^2
    return dy / ((v_one(x) + abs(x)) * (v_one(x) + abs(x)))


@elementwise
def _softrelu(x):  # log(1 + e^x) = max(x, 0) + log(1 + e^-|x|), stable for large |x|
    tail = v_log1p(v_exp(-abs(x)))  # for every x: the max below stays a select
    return (x if x > 0 else v_zero(x)) + tail


@elementwise
def _softrelu_grad(dy, y):  # dx = dy * sigmoid(x) = dy * (1 - e^-y)
    return dy * -v_expm1(-y)


# np.floor, not math.floor: numba's math.floor returns an int64 (NaN and huge values
# would not survive the round trip)
@elementwise(numpy_impl=threaded(np.floor))
def _floor(x):
    return np.floor(x)


@elementwise(numpy_impl=threaded(np.ceil))
def _ceil(x):
    return np.ceil(x)


@elementwise
def _round(x):  # half away from zero, as MXNet
    return np.floor(x + 0.5) if x >= 0 else -np.floor(-x + 0.5)


# -- second derivatives: grad2(g, dy, v) = g * d(backward)/dv (see _second_order.py) -------


@elementwise
def _sigmoid_grad2(g, dy, y):  # d/dy [dy y (1 - y)] = dy (1 - 2y)
    return g * dy * (1 - 2 * y)


@elementwise
def _tanh_grad2(g, dy, y):  # d/dy [dy (1 - y^2)] = -2 y dy
    return -2 * g * dy * y


@elementwise
def _dy_grad2(g, dy, y):  # exp, expm1: d/dy [dy (y + c)] = dy
    return g * dy


@elementwise
def _log_grad2(g, dy, x):  # d/dx [dy / x] = -dy / x^2
    return -g * dy / (x * x)


@elementwise
def _sqrt_grad2(g, dy, y):  # d/dy [0.5 dy / y] = -0.5 dy / y^2
    return -0.5 * g * dy / (y * y)


@elementwise
def _rsqrt_grad2(g, dy, x):  # d/dx [-0.5 dy x^-3/2] = 0.75 dy x^-5/2
    return 0.75 * g * dy / (x * x * math.sqrt(x))


@elementwise
def _square_grad2(g, dy, x):  # d/dx [2 x dy] = 2 dy
    return 2 * g * dy


@elementwise
def _reciprocal_grad2(g, dy, x):  # d/dx [-dy / x^2] = 2 dy / x^3
    return 2 * g * dy / (x * x * x)


@elementwise
def _sin_grad2(g, dy, x):  # d/dx [dy cos x] = -dy sin x
    return -g * dy * math.sin(x)


@elementwise
def _cos_grad2(g, dy, x):  # d/dx [-dy sin x] = -dy cos x
    return -g * dy * math.cos(x)


@elementwise
def _log1p_grad2(g, dy, x):  # d/dx [dy / (1 + x)] = -dy / (1 + x)^2
    return -g * dy / ((1 + x) * (1 + x))


@elementwise
def _softsign_grad2(g, dy, x):  # d/dx [dy / (1 + |x|)^2] = -2 sign(x) dy / (1 + |x|)^3
    a = 1 + abs(x)
    s = 1 if x > 0 else (-1 if x < 0 else 0)
    return -2 * s * g * dy / (a * a * a)


@elementwise
def _softrelu_grad2(g, dy, y):  # d/dy [dy (1 - e^-y)] = dy e^-y
    return g * dy * v_exp(-y)


register_unary_math("relu", _relu, "Rectified linear unit: y = max(x, 0).", _relu_grad, "out", ZERO)
# grad3 (h'', for third and higher orders): d/dv of grad2's factor, built from ops
_log_grad3 = reciprocal_power(2.0, 3)  # d/dx [-1/x^2] = 2/x^3
_sqrt_grad3 = reciprocal_power(1.0, 3)  # d/dy [-0.5/y^2] = 1/y^3
_recip_grad3 = reciprocal_power(-6.0, 4)  # d/dx [2/x^3] = -6/x^4
_sin_grad3 = unary_chain("cos", "negative")  # d/dx [-sin x] = -cos x
_cos_grad3 = unary_chain("sin")  # d/dx [-cos x] = sin x
_log1p_grad3 = reciprocal_power(2.0, 3, shift=1.0)  # d/dx [-1/(1+x)^2] = 2/(1+x)^3
_rsqrt_grad3 = reciprocal_power(-1.875, 3, times="rsqrt")  # d/dx [0.75 x^-5/2] = -15/8 x^-7/2

register_unary_math(
    "sigmoid", _sigmoid, "y = 1 / (1 + exp(-x))", _sigmoid_grad, "out", _sigmoid_grad2, grad3=-2.0
)
register_unary_math(
    "tanh", _tanh, "Hyperbolic tangent, element-wise.", _tanh_grad, "out", _tanh_grad2, grad3=-2.0
)
register_unary_math("exp", _exp, "y = e^x", _mul, "out", _dy_grad2, grad3=ZERO)
register_unary_math(
    "log", _log, "Natural logarithm, element-wise.", _div, "in", _log_grad2, grad3=_log_grad3
)
register_unary_math(
    "sqrt", _sqrt, "Square root, element-wise.", _sqrt_grad, "out", _sqrt_grad2, grad3=_sqrt_grad3
)
register_unary_math(
    "rsqrt", _rsqrt, "y = 1 / sqrt(x)", _rsqrt_grad, "in", _rsqrt_grad2, grad3=_rsqrt_grad3
)
register_unary_math("square", _square, "y = x^2", _square_grad, "in", _square_grad2, grad3=ZERO)
register_unary_math("abs", _abs, "Absolute value, element-wise.", _abs_grad, "in", ZERO)
register_unary("negative", _negative, "y = -x", ElemwiseGradUseNone("negative"))
register_unary_math(
    "reciprocal",
    _reciprocal,
    "y = 1 / x",
    _reciprocal_grad,
    "in",
    _reciprocal_grad2,
    grad3=_recip_grad3,
)
register_unary_math(
    "sin", _sin, "Sine, element-wise.", _sin_grad, "in", _sin_grad2, grad3=_sin_grad3
)
register_unary_math(
    "cos", _cos, "Cosine, element-wise.", _cos_grad, "in", _cos_grad2, grad3=_cos_grad3
)
register_unary_math(
    "log1p", _log1p, "y = log(1 + x)", _log1p_grad, "in", _log1p_grad2, grad3=_log1p_grad3
)
register_unary_math("expm1", _expm1, "y = e^x - 1", _expm1_grad, "out", _dy_grad2, grad3=ZERO)
register_unary_math(
    "softsign", _softsign, "y = x / (1 + |x|)", _softsign_grad, "in", _softsign_grad2
)
register_unary_math(
    "softrelu", _softrelu, "y = log(1 + e^x) (softplus)", _softrelu_grad, "out", _softrelu_grad2
)

# Piecewise-constant functions: the gradient is zero everywhere it exists.
register_unary("sign", _sign, "y = -1, 0 or 1 by the sign of x.", make_zero_grad_nodes)
register_unary("floor", _floor, "Largest integer <= x.", make_zero_grad_nodes)
register_unary("ceil", _ceil, "Smallest integer >= x.", make_zero_grad_nodes)
register_unary("round", _round, "Round half away from zero.", make_zero_grad_nodes)

register_unary("_copy", _identity, "y = x (a copy).", ElemwiseGradUseNone("_copy"))
Op.get("_copy").add_alias("identity")


def _copy_compute(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    """A copy of any dtype the element-wise kernels take, and of bool (its bytes as uint8):
    a bool array is copied whenever one is assigned (`x[:] = y`, executor arguments)."""
    x, out = inputs[0], outputs[0]
    if out.dtype == np.bool_ and x.dtype == np.bool_:
        x, out = x.view(np.uint8), out.view(np.uint8)
    _identity.launch(ctx, out, req[0], x)


Op.get("_copy").set_attr(FCompute_cpu, _copy_compute, plevel=11).set_attr(
    FCompute_gpu, _copy_compute, plevel=11
)
