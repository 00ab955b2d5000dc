"""Special functions: erf, erfinv, gamma, gammaln (MXNet's elemwise_unary_op_basic.cc).

The functions come from kernel.vmath: vectorised float32 bodies on the CPU (10-40x
faster than libm's one call per element; float32 arrays of erfinv, gamma and gammaln run
vmath.blocks' loops, which skip the regions a block's arguments do not reach), libm
(and erfinv's double-precision Newton refinement) for other types and on the GPU.
The digamma function that the gamma gradients need is a device function here, one body
for both devices. Poles and values outside a domain give what C gives (gamma(±0) = ±inf,
gamma(-1) = nan, gammaln(-1) = inf, erfinv(1) = inf, erfinv(2) = nan).
"""

from __future__ import annotations

import math

import numpy as np

from .. import kernel
from ..kernel import vmath
from ..kernel.vmath.blocks import erfinv_into, gamma_into, gammaln_into
from ._family import register_unary_math
from ._numpy_fast import float32_blocks, vmath_parts

elementwise = kernel.elementwise
device_function = kernel.device_function
v_erf, v_erfinv, v_exp = vmath.erf, vmath.erfinv, vmath.exp
v_gamma, v_gammaln = vmath.gamma, vmath.gammaln
erfinv = vmath.erfinv  # the device function (double precision for doubles)

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


@elementwise
def _erf(x):
    return v_erf(x)


@elementwise
def _erf_grad(dy, x):  # 2 / sqrt(pi) e^(-x^2)
    return dy * TWO_OVER_SQRT_PI * v_exp(-x * x)


@elementwise
def _erf_grad2(g, dy, x):  # -2x * 2 / sqrt(pi) e^(-x^2)
    return -2 * g * dy * x * TWO_OVER_SQRT_PI * v_exp(-x * x)


# the block loops over k contiguous parts at once in numba's threads (float32_blocks)
_erfinv_parts = vmath_parts("erfinv_parts")
_gamma_parts = vmath_parts("gamma_parts")
_gammaln_parts = vmath_parts("gammaln_parts")


@float32_blocks(erfinv_into, _erfinv_parts)
def _erfinv(x):
    return v_erfinv(x)


@elementwise
def _erfinv_grad(dy, x):  # 1 / erf'(erfinv(x)) = sqrt(pi) / 2 e^(erfinv(x)^2)
    v = v_erfinv(x)
    return dy * SQRT_PI_OVER_TWO * v_exp(v * v)


@float32_blocks(gamma_into, _gamma_parts)
def _gamma(x):
    return v_gamma(x)


@elementwise
def _gamma_grad(dy, x):  # gamma(x) psi(x)
    if is_pole(x) or x > GAMMA_OVERFLOW:
        return dy * NAN
    return dy * math.gamma(x) * digamma(x)


@float32_blocks(gammaln_into, _gammaln_parts)
def _gammaln(x):  # log |gamma(x)|
    return v_gammaln(x)


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
