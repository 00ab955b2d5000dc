"""Element-wise unary math: a kernel, its derivative kernel, and one registration line each.

Backward ops take (dy, x) when the gradient needs the input (ElemwiseGradUseIn) and
(dy, y) when it needs the output (ElemwiseGradUseOut); the math is in the comment.
"""

from __future__ import annotations

import math

import numpy as np

from .. import kernel
from ..graph.grad import (
    ElemwiseGradUseIn,
    ElemwiseGradUseNone,
    ElemwiseGradUseOut,
    make_zero_grad_nodes,
)
from ._family import register_backward, register_unary

elementwise = kernel.elementwise


def _np_sigmoid(x: np.ndarray, out: np.ndarray) -> np.ndarray:
    """1 / (1 + e^-x) with NumPy's vectorised exp (out may be x)."""
    np.negative(x, out=out)
    np.exp(out, out=out)
    out += 1
    return np.reciprocal(out, out=out)


@elementwise
def _identity(x):
    return x


@elementwise
def _relu(x):
    return x if x > 0 else x * 0


@elementwise
def _relu_grad(dy, y):  # dx = dy * (y > 0)
    return dy if y > 0 else dy * 0


@elementwise(numpy_impl=_np_sigmoid)
def _sigmoid(x):
    return 1.0 / (1.0 + math.exp(-x))


@elementwise
def _sigmoid_grad(dy, y):  # dx = dy * y * (1 - y)
    return dy * y * (1 - y)


@elementwise(numpy_impl=np.tanh)
def _tanh(x):
    return math.tanh(x)


@elementwise
def _tanh_grad(dy, y):  # dx = dy * (1 - y^2)
    return dy * (1 - y * y)


@elementwise(numpy_impl=np.exp)
def _exp(x):
    return math.exp(x)


@elementwise
def _mul(dy, y):  # exp: dx = dy * y
    return dy * y


@elementwise(numpy_impl=np.log)
def _log(x):
    return math.log(x)


@elementwise
def _div(dy, x):  # log: dx = dy / x
    return dy / x


@elementwise
def _sqrt(x):
    return math.sqrt(x)


@elementwise
def _sqrt_grad(dy, y):  # dx = dy / (2 sqrt(x)) = dy * 0.5 / y
    return dy * 0.5 / y


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
    return 2 * x * dy


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


@elementwise(numpy_impl=np.sin)
def _sin(x):
    return math.sin(x)


@elementwise
def _sin_grad(dy, x):
    return dy * math.cos(x)


@elementwise(numpy_impl=np.cos)
def _cos(x):
    return math.cos(x)


@elementwise
def _cos_grad(dy, x):
    return -dy * math.sin(x)


@elementwise(numpy_impl=np.log1p)
def _log1p(x):
    return math.log1p(x)


@elementwise
def _log1p_grad(dy, x):  # dx = dy / (1 + x)
    return dy / (1 + x)


@elementwise(numpy_impl=np.expm1)
def _expm1(x):
    return math.expm1(x)


@elementwise
def _expm1_grad(dy, y):  # dx = dy * (y + 1)
    return dy * (y + 1)


@elementwise
def _softsign(x):
    return x / (1 + abs(x))


@elementwise
def _softsign_grad(dy, x):  # dx = dy / (1 + |x|)^2
    return dy / ((1 + abs(x)) * (1 + abs(x)))


@elementwise
def _softrelu(x):  # log(1 + e^x), stable for large x
    return x + math.log1p(math.exp(-x)) if x > 0 else math.log1p(math.exp(x))


@elementwise
def _softrelu_grad(dy, y):  # dx = dy * sigmoid(x) = dy * (1 - e^-y)
    return dy * -math.expm1(-y)


@elementwise
def _floor(x):
    return math.floor(x)


@elementwise
def _ceil(x):
    return math.ceil(x)


@elementwise
def _round(x):  # half away from zero, as MXNet
    return math.floor(x + 0.5) if x >= 0 else -math.floor(-x + 0.5)


register_unary(
    "relu", _relu, "Rectified linear unit: y = max(x, 0).", ElemwiseGradUseOut("_backward_relu")
)
register_backward("_backward_relu", _relu_grad, 2)

register_unary(
    "sigmoid", _sigmoid, "y = 1 / (1 + exp(-x))", ElemwiseGradUseOut("_backward_sigmoid")
)
register_backward("_backward_sigmoid", _sigmoid_grad, 2)

register_unary(
    "tanh", _tanh, "Hyperbolic tangent, element-wise.", ElemwiseGradUseOut("_backward_tanh")
)
register_backward("_backward_tanh", _tanh_grad, 2)

register_unary("exp", _exp, "y = e^x", ElemwiseGradUseOut("_backward_exp"))
register_backward("_backward_exp", _mul, 2)

register_unary("log", _log, "Natural logarithm, element-wise.", ElemwiseGradUseIn("_backward_log"))
register_backward("_backward_log", _div, 2)

register_unary("sqrt", _sqrt, "Square root, element-wise.", ElemwiseGradUseOut("_backward_sqrt"))
register_backward("_backward_sqrt", _sqrt_grad, 2)

register_unary("rsqrt", _rsqrt, "y = 1 / sqrt(x)", ElemwiseGradUseIn("_backward_rsqrt"))
register_backward("_backward_rsqrt", _rsqrt_grad, 2)

register_unary("square", _square, "y = x^2", ElemwiseGradUseIn("_backward_square"))
register_backward("_backward_square", _square_grad, 2)

register_unary("abs", _abs, "Absolute value, element-wise.", ElemwiseGradUseIn("_backward_abs"))
register_backward("_backward_abs", _abs_grad, 2)

register_unary("negative", _negative, "y = -x", ElemwiseGradUseNone("negative"))

register_unary("reciprocal", _reciprocal, "y = 1 / x", ElemwiseGradUseIn("_backward_reciprocal"))
register_backward("_backward_reciprocal", _reciprocal_grad, 2)

register_unary("sin", _sin, "Sine, element-wise.", ElemwiseGradUseIn("_backward_sin"))
register_backward("_backward_sin", _sin_grad, 2)

register_unary("cos", _cos, "Cosine, element-wise.", ElemwiseGradUseIn("_backward_cos"))
register_backward("_backward_cos", _cos_grad, 2)

register_unary("log1p", _log1p, "y = log(1 + x)", ElemwiseGradUseIn("_backward_log1p"))
register_backward("_backward_log1p", _log1p_grad, 2)

register_unary("expm1", _expm1, "y = e^x - 1", ElemwiseGradUseOut("_backward_expm1"))
register_backward("_backward_expm1", _expm1_grad, 2)

register_unary("softsign", _softsign, "y = x / (1 + |x|)", ElemwiseGradUseIn("_backward_softsign"))
register_backward("_backward_softsign", _softsign_grad, 2)

register_unary(
    "softrelu", _softrelu, "y = log(1 + e^x) (softplus)", ElemwiseGradUseOut("_backward_softrelu")
)
register_backward("_backward_softrelu", _softrelu_grad, 2)

# Piecewise-constant functions: the gradient is zero everywhere it exists.
register_unary("sign", _sign, "y = -1, 0 or 1 by the sign of x.", make_zero_grad_nodes)
register_unary("floor", _floor, "Largest integer <= x.", make_zero_grad_nodes)
register_unary("ceil", _ceil, "Smallest integer >= x.", make_zero_grad_nodes)
register_unary("round", _round, "Round half away from zero.", make_zero_grad_nodes)

register_unary("_copy", _identity, "y = x (a copy).", ElemwiseGradUseNone("_copy"))
register_unary("identity", _identity, "y = x (a copy).", ElemwiseGradUseNone("_copy"))
