"""vmath's gamma and gammaln for float32, computed in float64 (vectorised exp/log)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._dispatch import _helper, bits_f64, f64_bits, madd, pick, vector_function
from .f32 import F_INF, F_NAN, ONE, ZERO

F = np.float32
NAN = math.nan
INF = math.inf

# ---------------------------------------------------------------- gamma (in float64)
D_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)
D_LN2_HI, D_LN2_LO = 6.93147180369123816490e-01, 1.90821492927058770002e-10
D_SQRT_HALF = math.sqrt(0.5)
D_PI = math.pi
# Lanczos (g = 7, n = 9) as one rational function: sum p_k / (z + k) = N(z) / D(z)
_LANCZOS_G = 7.0
_LANCZOS_P = (
    0.99999999999980993,
    676.5203681218851,
    -1259.1392167224028,
    771.32342877765313,
    -176.61502916214059,
    12.507343278686905,
    -0.13857109526572012,
    9.9843695780195716e-6,
    1.5056327351493116e-7,
)


def _lanczos_rational() -> tuple[tuple[float, ...], tuple[float, ...]]:
    from numpy.polynomial import polynomial as P

    den: Any = np.array([1.0])
    for k in range(1, 9):
        den = P.polymul(den, [k, 1.0])
    num = _LANCZOS_P[0] * den
    for k in range(1, 9):
        others: Any = np.array([1.0])
        for j in range(1, 9):
            if j != k:
                others = P.polymul(others, [j, 1.0])
        num = P.polyadd(num, _LANCZOS_P[k] * others)
    return tuple(float(c) for c in num[::-1]), tuple(float(c) for c in den[::-1])


(_N8, _N7, _N6, _N5, _N4, _N3, _N2, _N1, _N0), (_D8, _D7, _D6, _D5, _D4, _D3, _D2, _D1, _D0) = (
    _lanczos_rational()
)


@_helper
def _log_d(x):
    """log for finite x > 0 in float64 to ~1e-15 (atanh series in s = m / (2 + m))."""
    bits = f64_bits(x)
    e = np.float64(((bits >> 52) & 0x7FF) - 1022)
    m = bits_f64((bits & 0xFFFFFFFFFFFFF) | 0x3FE0000000000000)  # [0.5, 1)
    low = m < D_SQRT_HALF
    e = pick(low, e - 1.0, e)
    m = pick(low, m + m - 1.0, m - 1.0)
    s = m / (2.0 + m)
    z = s * s
    p = 1.0 / 17
    p = madd(p, z, 1.0 / 15)
    p = madd(p, z, 1.0 / 13)
    p = madd(p, z, 1.0 / 11)
    p = madd(p, z, 1.0 / 9)
    p = madd(p, z, 1.0 / 7)
    p = madd(p, z, 1.0 / 5)
    p = madd(p, z, 1.0 / 3)
    return 2.0 * s * (1.0 + z * p) + e * D_LN2_LO + e * D_LN2_HI


@_helper
def _sinpi_abs(x):
    """|sin(pi x)| in float64: exact reduction to r in [-1/2, 1/2], Taylor to r^17."""
    r = x - np.floor(x + 0.5)
    t = D_PI * r
    z = t * t
    p = 1.0 / 355687428096000
    p = madd(p, z, -1.0 / 1307674368000)
    p = madd(p, z, 1.0 / 6227020800)
    p = madd(p, z, -1.0 / 39916800)
    p = madd(p, z, 1.0 / 362880)
    p = madd(p, z, -1.0 / 5040)
    p = madd(p, z, 1.0 / 120)
    p = madd(p, z, -1.0 / 6)
    return abs(t + t * z * p)


@_helper
def _lgamma_pos(x):
    """log gamma(x) for finite x >= 1/2: Stirling's series from 10, Lanczos below."""
    v = pick(x < 10.0, x, 1.0)
    z = v - 1.0
    num = _N8
    den = _D8
    num = madd(num, z, _N7)
    den = madd(den, z, _D7)
    num = madd(num, z, _N6)
    den = madd(den, z, _D6)
    num = madd(num, z, _N5)
    den = madd(den, z, _D5)
    num = madd(num, z, _N4)
    den = madd(den, z, _D4)
    num = madd(num, z, _N3)
    den = madd(den, z, _D3)
    num = madd(num, z, _N2)
    den = madd(den, z, _D2)
    num = madd(num, z, _N1)
    den = madd(den, z, _D1)
    num = madd(num, z, _N0)
    den = madd(den, z, _D0)
    t = z + _LANCZOS_G + 0.5
    lanczos = D_HALF_LOG_2PI + (z + 0.5) * _log_d(t) - t + _log_d(num / den)
    w = pick(x >= 10.0, x, 10.0)
    r = 1.0 / w
    r2 = r * r
    series = r * (1.0 / 12 - r2 * (1.0 / 360 - r2 * (1.0 / 1260 - r2 / 1680)))
    stirling = (w - 0.5) * _log_d(w) - w + D_HALF_LOG_2PI + series
    return pick(x < 10.0, lanczos, stirling)


@_helper
def _lgamma_d(x):
    """log |gamma(x)| for finite x, reflection below 1/2: pi / |sin(pi x)| / gamma(1 - x)."""
    reflect = x < 0.5
    u = pick(reflect, 1.0 - x, x)
    lg = _lgamma_pos(u)
    s = _sinpi_abs(x)
    refl = _log_d(pick(s > 0.0, D_PI / s, 1.0)) - lg
    return pick(reflect, refl, lg)


def _gammaln_ref(x):
    if x != x:
        return x
    if x == INF or x == -INF or (x <= 0 and np.floor(x) == x):
        return INF
    return math.lgamma(x)


def _gamma_ref(x):
    if x != x:
        return x
    if x <= 0 and np.floor(x) == x:
        return math.copysign(INF, x) if x == 0 else NAN
    if x > 171.7:
        return INF
    if x == -INF:
        return NAN
    return math.gamma(x)


@vector_function(_gammaln_ref)
def gammaln_f32(x):
    a = abs(x)
    infinite = a == F_INF
    d = np.float64(pick(infinite, ONE, x))
    y = F(_lgamma_d(d))
    pole = (x <= ZERO) & (np.floor(x) == x)
    y = pick(pole | infinite, F_INF, y)
    return pick(x != x, x, y)


@vector_function(_gamma_ref)
def gamma_f32(x):
    """sign * exp(log |gamma(x)|) in float64; overflow (x > 35.04) rounds to inf."""
    xc = pick(x < F(40.0), x, F(40.0))
    xc = pick(xc > F(-60.0), xc, F(-60.0))
    d = np.float64(xc)
    lg = _lgamma_d(d)
    k = np.floor(d)
    negative = (d < 0.0) & ((k - 2.0 * np.floor(0.5 * k)) != 0.0)  # gamma < 0: floor odd
    e = _exp_d(lg)
    y = F(pick(negative, -e, e))
    y = pick(x >= F(40.0), F_INF, y)
    y = pick((x <= F(-60.0)) & (np.floor(x) != x), ZERO, y)
    pole = (x <= ZERO) & (np.floor(x) == x)
    y = pick(pole, pick(x == ZERO, ONE / x, F_NAN), y)  # gamma(±0) = ±inf
    return pick(x != x, x, y)


@_helper
def _exp_d(x):
    """exp for |x| <= 700 in float64 to ~1e-15: 2^k e^r, Taylor to r^13 on |r| <= ln2/2."""
    k = np.floor(x * 1.4426950408889634 + 0.5)
    r = (x - k * D_LN2_HI) - k * D_LN2_LO
    p = 1.0 / 6227020800
    p = madd(p, r, 1.0 / 479001600)
    p = madd(p, r, 1.0 / 39916800)
    p = madd(p, r, 1.0 / 3628800)
    p = madd(p, r, 1.0 / 362880)
    p = madd(p, r, 1.0 / 40320)
    p = madd(p, r, 1.0 / 5040)
    p = madd(p, r, 1.0 / 720)
    p = madd(p, r, 1.0 / 120)
    p = madd(p, r, 1.0 / 24)
    p = madd(p, r, 1.0 / 6)
    p = madd(p, r, 0.5)
    y = (p * r + 1.0) * r + 1.0
    return y * bits_f64((np.int64(k) + 1023) << 52)
