"""Special functions: erf, erfinv, gamma, gammaln (MXNet's elemwise_unary_op_basic.cc).

erf, gamma and lgamma come from libm (math.*, on both devices); erfinv and the digamma
function that the gamma gradients need are written here as device functions, so one
body serves the CPU and the GPU kernels. Poles and values outside a domain give what C
gives (gamma(0) = inf, gamma(-1) = nan, gammaln(-1) = inf, erfinv(1) = inf,
erfinv(2) = nan); the explicit branches keep Python's math module (the CUDA simulator
runs kernels as Python) from raising there.
"""

from __future__ import annotations

import math

import numpy as np

from .. import kernel
from ._family import register_unary_math

elementwise = kernel.elementwise
device_function = kernel.device_function

NAN = math.nan
INF = math.inf
TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
SQRT_PI_OVER_TWO = math.sqrt(math.pi) / 2.0
GAMMA_OVERFLOW = 171.7  # gamma(x) > 1.8e308 beyond this


@device_function
def is_pole(x):  # 0, -1, -2, ...: the poles of gamma and digamma
    return x <= 0 and np.floor(x) == x


@device_function
def digamma(x):
    """psi(x) = d log gamma(x) / dx: reflection below 0, recurrence up to 10, then the
    asymptotic series ln x - 1/(2x) - sum B_2k / (2k x^2k) (error ~1e-16 there)."""
    if x != x or is_pole(x):
        return NAN
    acc = 0.0
    if x < 0:  # psi(x) = psi(1 - x) - pi / tan(pi x)
        acc = -math.pi / math.tan(math.pi * x)
        x = 1.0 - x
    while x < 10.0:  # psi(x) = psi(x + 1) - 1/x
        acc -= 1.0 / x
        x += 1.0
    f = 1.0 / (x * x)
    series = f * (
        -1.0 / 12
        + f
        * (
            1.0 / 120
            + f * (-1.0 / 252 + f * (1.0 / 240 + f * (-1.0 / 132 + f * (691.0 / 32760 - f / 12))))
        )
    )
    return acc + math.log(x) - 0.5 / x + series


@device_function
def erfinv(y):
    """The inverse of erf on (-1, 1): Giles' single-precision polynomial ("Approximating
    the erfinv function", GPU Computing Gems, 2011) refined by two Newton steps, which
    square the relative error each (1e-7 -> double precision). The steps solve
    erf(x) = |y| for |y| <= 0.5 and log(erfc(x)) = log(1 - |y|) beyond, where 1 - |y| is
    exact, erfc keeps the digits that erf(x) - y would cancel, and the log makes the
    equation nearly linear (Newton from a rough start near |y| = 1 still converges)."""
    if y != y or y < -1 or y > 1:
        return NAN
    if y == 1 or y == -1:
        return y * INF
    a = abs(y)
    w = -math.log((1.0 - a) * (1.0 + a))
    steps = 2 if w < 16.0 else 5  # beyond 1 - a ~ 1e-7 the polynomial is a rougher start
    if w < 5.0:
        w = w - 2.5
        p = 2.81022636e-08
        p = 3.43273939e-07 + p * w
        p = -3.5233877e-06 + p * w
        p = -4.39150654e-06 + p * w
        p = 0.00021858087 + p * w
        p = -0.00125372503 + p * w
        p = -0.00417768164 + p * w
        p = 0.246640727 + p * w
        p = 1.50140941 + p * w
    else:
        w = math.sqrt(w) - 3.0
        p = -0.000200214257
        p = 0.000100950558 + p * w
        p = 0.00134934322 + p * w
        p = -0.00367342844 + p * w
        p = 0.00573950773 + p * w
        p = -0.0076224613 + p * w
        p = 0.00943887047 + p * w
        p = 1.00167406 + p * w
        p = 2.83297682 + p * w
    x = p * a
    for _ in range(steps):
        slope = TWO_OVER_SQRT_PI * math.exp(-x * x)
        if slope > 0:
            if a <= 0.5:
                x -= (math.erf(x) - a) / slope
            else:  # Newton on log(erfc(x)) = log(1 - a): nearly linear in x
                c = math.erfc(x)
                if c > 0:
                    x += (math.log(c) - math.log(1.0 - a)) * c / slope
    return x if y >= 0 else -x


@elementwise
def _erf(x):
    return math.erf(x)


@elementwise
def _erf_grad(dy, x):  # 2 / sqrt(pi) e^(-x^2)
    return dy * TWO_OVER_SQRT_PI * math.exp(-x * x)


@elementwise
def _erf_grad2(g, dy, x):  # -2x * 2 / sqrt(pi) e^(-x^2)
    return -2 * g * dy * x * TWO_OVER_SQRT_PI * math.exp(-x * x)


@elementwise
def _erfinv(x):
    return erfinv(x)


@elementwise
def _erfinv_grad(dy, x):  # 1 / erf'(erfinv(x)) = sqrt(pi) / 2 e^(erfinv(x)^2)
    v = erfinv(x)
    return dy * SQRT_PI_OVER_TWO * math.exp(v * v)


@elementwise
def _gamma(x):
    if is_pole(x):
        return INF if x == 0 else NAN
    if x > GAMMA_OVERFLOW:
        return INF
    return math.gamma(x)


@elementwise
def _gamma_grad(dy, x):  # gamma(x) psi(x)
    if is_pole(x) or x > GAMMA_OVERFLOW:
        return dy * NAN
    return dy * math.gamma(x) * digamma(x)


@elementwise
def _gammaln(x):  # log |gamma(x)|
    if is_pole(x) or x == INF or x == -INF:
        return INF
    return math.lgamma(x)


@elementwise
def _gammaln_grad(dy, x):  # psi(x)
    return dy * digamma(x)


register_unary_math(
    "erf", _erf, "The Gauss error function, element-wise.", _erf_grad, "in", _erf_grad2
)
# The second derivatives of erfinv, gamma and gammaln need trigamma: their backward ops
# have no FGradient (as in MXNet).
register_unary_math("erfinv", _erfinv, "The inverse of erf, element-wise.", _erfinv_grad, "in")
register_unary_math("gamma", _gamma, "The gamma function, element-wise.", _gamma_grad, "in")
register_unary_math("gammaln", _gammaln, "log |gamma(x)|, element-wise.", _gammaln_grad, "in")
