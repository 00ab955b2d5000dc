"""vmath's float32 bodies: exp/log, hyperbolic, inverse trigonometric, roots, erf."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..device import DeviceFunction, for_device, like
from ._dispatch import (
    _helper,
    add32,
    and32,
    bits_f32,
    f32_bits,
    fma,
    madd,
    or32,
    pick,
    shl32,
    sra32,
    sub32,
    vector_function,
)

F = np.float32
NAN = math.nan
INF = math.inf


# ---------------------------------------------------------------- constants
ZERO, HALF, ONE, TWO, THREE = F(0), F(0.5), F(1), F(2), F(3)
THIRD = F(1 / 3)
SIGN_BIT = np.int32(-(2**31))  # a float32's sign bit, as int32
F_INF, F_NAN = F(INF), F(NAN)
F_PI, F_PI_2, F_PI_4 = F(math.pi), F(math.pi / 2), F(math.pi / 4)
LOG2E, LOG10E, LOG10_2 = F(1 / math.log(2)), F(1 / math.log(10)), F(math.log10(2))
LN2_HI, LN2_LO = F(0.693359375), F(-2.12194440e-4)  # ln 2 = HI + LO, HI exact in 9 bits
LN2 = F(math.log(2))
# the logs split x > 0 as 2^e (1 + m) with 2/3 <= 1 + m < 4/3: x's bits less those of 2/3
# (rounded up) carry e in their exponent field, and x's bits less that field give 1 + m
LOG_SPLIT = np.int32(0x3F2AAAAB)
EXPONENT_FIELD = np.int32(-8388608)  # 0xFF800000: sign and exponent bits
RCBRT_MAGIC = np.int32(0x54A21D2A)  # bits of a first guess at a^(-1/3), less bits(a) / 3
# log(1 + m) = m - m^2/2 + m^3 P(m) for |m| <= 1/3 (tools/fit_vmath.py; relative error
# 4.6e-9), highest power first
LOG_P = tuple(
    F(c)
    for c in (
        -0.128916498208637,
        0.139844752351165,
        -0.1218426216648002,
        0.14005861477610024,
        -0.16680488011849573,
        0.20010406317877483,
        -0.2499979763176655,
        0.33333215978780145,
    )
)
(_P7, _P6, _P5, _P4, _P3, _P2, _P1, _P0) = LOG_P
# log(1 + m) = m + m^2 Q(m) for |m| <= 1/3 to 4.3e-8 *absolute* error (tools/fit_vmath.py):
# erfinv's w = -log(1 - y^2), whose absolute error reaches the result scaled by 0.3 at most
ERFINV_LOG_Q = tuple(
    F(c)
    for c in (
        -0.15918424220797767,
        0.17194327994786138,
        -0.16307486689667838,
        0.1978434130848914,
        -0.2501433946724192,
        0.33338042980077126,
        -0.4999983202007827,
    )
)
(_Q6, _Q5, _Q4, _Q3, _Q2, _Q1, _Q0) = ERFINV_LOG_Q
MIN_NORMAL = F(1.17549435e-38)
EXP_MAX, EXP_MIN = F(88.72283), F(-103.972084)  # expf overflows above / is 0 below
EXP2_MAX, EXP2_MIN = F(130), F(-160)  # 2^t rounds to inf above, to 0 below
ROUND_MAGIC = F(12582912.0)  # 1.5 * 2^23: (t + it) - it rounds |t| < 2^22 to an integer
BIG = F(1e8)  # above: asinh/acosh(x) = log(2x) to float32 precision
TWO_OVER_SQRT_PI = F(2 / math.sqrt(math.pi))
SQRT_PI_OVER_TWO = F(math.sqrt(math.pi) / 2)
D_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


# ---------------------------------------------------------------- typed constants
# The references run on the GPU for every type (and on the CPU for all but float32):
# their constants are `like(x, c)`, c in x's float type, or a float32 x's GPU code would
# compute in float64 (numba types a Python float constant as float64).
def _one_ref(x):
    return like(x, 1)


def _zero_ref(x):
    return like(x, 0)


@vector_function(_one_ref)
def one_f32(x):
    """1 in x's type: `one(x) + abs(x)` stays float32 for a float32 x, where numba makes
    `1 + abs(x)` a float64 (half the vector width, float64 division). A Python call gets
    the int 1, which NumPy's promotion rules treat as taking the other operand's type."""
    return ONE


@vector_function(_zero_ref)
def zero_f32(x):
    """0 in x's type, for a select such as relu's `x if not x <= 0 else zero(x)`: `x - x`
    is no zero for an infinite x, and numba makes `x * 0` a float64."""
    return ZERO


# ---------------------------------------------------------------- exp / log
def _exp_ref(x):
    if x > like(x, 709.78):
        return like(x, INF)
    return math.exp(x)


@vector_function(_exp_ref)
def exp_f32(x):
    """2^k e^r, |r| <= ln2/2 (Cephes expf's polynomial); 2^k applied in two halves so
    results down to the smallest subnormal are right."""
    xc = pick(x < EXP_MIN, EXP_MIN, x)
    xc = pick(xc > EXP_MAX, EXP_MAX, xc)
    k = np.floor(xc * LOG2E + HALF)
    r = xc - k * LN2_HI - k * LN2_LO
    y = _exp_p(r) * r * r + r + ONE
    y = _times_2k(y, k)
    y = pick(x > EXP_MAX, F_INF, y)
    y = pick(x < EXP_MIN, ZERO, y)
    return pick(x != x, x, y)


def _expm1_ref(x):
    if x > like(x, 709.78):
        return like(x, INF)
    return math.expm1(x)


EXPM1_MIN = F(-17.5)  # below: e^x is under half an ulp of 1, and e^x - 1 rounds to -1


@vector_function(_expm1_ref)
def expm1_f32(x):
    """e^x - 1 = 2^k (e^r - 1) + (2^k - 1) with |r| <= ln2/2 and e^r - 1 = r + r^2 P(r)
    (expf's polynomial): near 0 (k = 0) that is r + r^2 P(r) itself, with no cancellation
    against 1. At k = 128 (x within 0.35 of expf's overflow) 2^k is applied as 2^127 * 2."""
    xc = pick(x < EXPM1_MIN, EXPM1_MIN, x)
    xc = pick(xc > EXP_MAX, EXP_MAX, xc)
    k = np.floor(madd(xc, LOG2E, HALF))
    r = madd(k, -LN2_LO, madd(k, -LN2_HI, xc))
    em1 = madd(_exp_p(r) * r, r, r)
    top = k > F(127.0)
    two_k = bits_f32(shl32(add32(np.int32(pick(top, F(127.0), k)), 127), 23))
    y = madd(two_k, em1, two_k - ONE) * pick(top, TWO, ONE)
    y = pick(x > EXP_MAX, F_INF, y)
    y = pick(x < EXPM1_MIN, -ONE, y)
    y = pick(x == ZERO, x, y)  # -0 keeps its sign (r + r^2 P(r) gives +0)
    return pick(x != x, x, y)


@_helper
def _exp_core(x):
    """e^x for -87 <= x <= 88 (or NaN): exp_f32 less its clamps, special cases and
    two-step scaling, for bodies whose argument is known to stay in range (~13 vector
    operations against exp_f32's ~30; sinh 0.64 -> 0.49 ns per element, cosh 0.52 ->
    0.34, erf 0.78 -> 0.62 in cache)."""
    k = np.floor(madd(x, LOG2E, HALF))
    r = madd(k, -LN2_LO, madd(k, -LN2_HI, x))
    y = madd(_exp_p(r) * r, r, r) + ONE
    return y * bits_f32(shl32(add32(np.int32(k), 127), 23))


@_helper
def _exp_p(r):
    """P(r) of e^r = 1 + r + r^2 P(r) for |r| <= ln2/2 (Cephes expf's polynomial)."""
    p = F(1.9875691500e-4)
    p = madd(p, r, F(1.3981999507e-3))
    p = madd(p, r, F(8.3334519073e-3))
    p = madd(p, r, F(4.1665795894e-2))
    p = madd(p, r, F(1.6666665459e-1))
    return madd(p, r, F(5.0000001201e-1))


@_helper
def _times_2k(y, k):
    """y 2^k for an integral float32 k in [-160, 130], in two halves: each factor is a
    normal float32, and results down to the smallest subnormal (and up to inf) round
    right."""
    ki = np.int32(k)
    h = sra32(ki, 1)
    return y * bits_f32(shl32(add32(h, 127), 23)) * bits_f32(shl32(add32(sub32(ki, h), 127), 23))


def _exp2_split_ref(x, hi, lo):
    t = x * (hi + lo)
    return INF if t > 1024 else 2.0**t


@vector_function(_exp2_split_ref)
def exp2_split_f32(x, hi, lo):
    """2^(x (hi + lo)) for float32 x and a float32 pair hi + lo: s^x = 2^(x log2 s) for a
    scalar s, with hi = log2 s rounded and lo the rest. x hi is split exactly by an fma,
    so rounding the exponent costs no accuracy: exp's polynomial and scaling on a 48-bit
    exponent, within 1.5 ulp of s^x (tests/kernel/test_vmath.py)."""
    t = x * hi
    tc = pick(t > EXP2_MAX, EXP2_MAX, pick(t < EXP2_MIN, EXP2_MIN, t))
    low = pick(tc == t, fma(x, hi, -t) + x * lo, ZERO)  # inf - inf where t overflowed
    k = (tc + ROUND_MAGIC) - ROUND_MAGIC
    r = ((tc - k) + low) * LN2
    y = _times_2k(madd(_exp_p(r) * r, r, r) + ONE, k)
    return pick(t != t, t, y)


@_helper
def _odd(x, y):
    """y (computed from |x|, so its sign bit is clear) with x's sign; f(±0) = ±0 for odd
    f. The sign bit is copied (two integer operations where two compares, a negation and
    two selects ran: erf 0.61 -> 0.55 ns per element in cache)."""
    return bits_f32(or32(f32_bits(y), and32(f32_bits(x), SIGN_BIT)))


@_helper
def _log_reduce(x):
    """x > 0 finite -> (e, m): x = 2^e (1 + m), 2/3 <= 1 + m < 4/3."""
    small = x < MIN_NORMAL
    xs = pick(small, x * F(8388608.0), x)  # 2^23: subnormals become normal
    bits = f32_bits(xs)
    split = sub32(bits, LOG_SPLIT)
    e = F(sra32(split, 23)) - pick(small, F(23), ZERO)
    m = bits_f32(sub32(bits, and32(split, EXPONENT_FIELD))) - ONE
    return e, m


@_helper
def _log_q(m):
    """q with log(1 + m) = m + m^2 q for |m| <= 1/3: q = m P(m) - 1/2 (LOG_P)."""
    p = _P7
    p = madd(p, m, _P6)
    p = madd(p, m, _P5)
    p = madd(p, m, _P4)
    p = madd(p, m, _P3)
    p = madd(p, m, _P2)
    p = madd(p, m, _P1)
    p = madd(p, m, _P0)
    return madd(p, m, -HALF)


@_helper
def _log1pm(m):
    """log(1 + m) - m for |m| <= 1/3: the part added to m."""
    return m * m * _log_q(m)


@_helper
def _log1p_of(m):
    """log(1 + m) for |m| <= 1/3."""
    return madd(m * m, _log_q(m), m)


@_helper
def _log_of(e, m):
    """e log 2 + log(1 + m): the small terms first, e ln2_hi (exact) last. One multiply-add
    per term (the old `p m z - z/2` form and its adds cost ~20% of the log: 0.42 -> 0.33 ns
    per element in cache, with the split at 2/3 and one coefficient less)."""
    return madd(e, LN2_HI, madd(m * m, _log_q(m), madd(e, LN2_LO, m)))


@_helper
def _log_special(x, y):
    y = pick(x < ZERO, F_NAN, y)
    y = pick(x == ZERO, -F_INF, y)
    y = pick(x == F_INF, F_INF, y)
    return pick(x != x, x, y)


@_helper
def _log_core(x):
    """log x for normal finite x > 0: log_f32 less its subnormal scaling and special
    cases, for bodies whose argument is known to be in range."""
    bits = f32_bits(x)
    split = sub32(bits, LOG_SPLIT)
    return _log_of(F(sra32(split, 23)), bits_f32(sub32(bits, and32(split, EXPONENT_FIELD))) - ONE)


def _log_ref(x):
    if x != x or x < like(x, 0):
        return like(x, NAN)
    return like(x, -INF) if x == like(x, 0) else math.log(x)


def _log2_ref(x):
    if x != x or x < like(x, 0):
        return like(x, NAN)
    return like(x, -INF) if x == like(x, 0) else math.log2(x)


def _log10_ref(x):
    if x != x or x < like(x, 0):
        return like(x, NAN)
    return like(x, -INF) if x == like(x, 0) else math.log10(x)


@vector_function(_log_ref)
def log_f32(x):
    e, m = _log_reduce(x)
    return _log_special(x, _log_of(e, m))


@vector_function(_log2_ref)
def log2_f32(x):
    e, m = _log_reduce(x)
    y = madd(_log1p_of(m), LOG2E, e)
    return _log_special(x, y)


@vector_function(_log10_ref)
def log10_f32(x):
    e, m = _log_reduce(x)
    y = madd(_log1p_of(m), LOG10E, e * LOG10_2)
    return _log_special(x, y)


def _log1p_ref(x):
    if x != x or x < like(x, -1):
        return like(x, NAN)
    return like(x, -INF) if x == like(x, -1) else math.log1p(x)


@vector_function(_log1p_ref)
def log1p_f32(x):
    """log(u) * x / (u - 1) with u = 1 + x rounded: the quotient corrects u's rounding."""
    u = x + ONE
    d = u - ONE
    lu = log_f32(u)
    y = lu * (x / d)
    y = pick(d == ZERO, x, y)
    return pick(u == F_INF, lu, y)


# ---------------------------------------------------------------- hyperbolic
def _sinh_ref(x):
    if abs(x) > like(x, 710.47):
        return like(x, INF) if x > like(x, 0) else like(x, -INF)
    return math.sinh(x)


def _cosh_ref(x):
    if abs(x) > like(x, 710.47):
        return like(x, INF)
    return math.cosh(x)


@_helper
def _half_exp(a):
    """(e^a / 2, e^-a / 2) for a >= 0 with one exp: beyond 88, e^a overflows float32 while
    e^a / 2 (up to cosh's limit, 89.4) does not, so there e^(a/2) is squared instead."""
    a = pick(a > F(90.0), F(90.0), a)  # overflows all the same; keeps inf finite
    big = a > F(88.0)
    e = _exp_core(pick(big, HALF * a, a))
    return pick(big, (HALF * e) * e, HALF * e), HALF / e


@vector_function(_sinh_ref)
def sinh_f32(x):
    a = abs(x)
    z = a * a  # |x| <= 1: Taylor to x^11 (next term < 2e-10)
    p = F(1 / 39916800)
    p = madd(p, z, F(1 / 362880))
    p = madd(p, z, F(1 / 5040))
    p = madd(p, z, F(1 / 120))
    p = madd(p, z, F(1 / 6))
    small = madd(a * z, p, a)
    up, down = _half_exp(a)
    y = pick(a <= ONE, small, up - down)
    return _odd(x, y)


@vector_function(_cosh_ref)
def cosh_f32(x):
    up, down = _half_exp(abs(x))
    return up + down


def _tanh_ref(x):
    return math.tanh(x)


def _sigmoid_ref(x):
    if x < like(x, -700.0):  # e^-x would overflow (Python's math raises); e^x/(1 + e^x) ~ e^x
        return math.exp(x)
    one = like(x, 1.0)
    return one / (one + math.exp(-x))


@vector_function(_tanh_ref)
def tanh_f32(x):
    """Cephes tanhf's odd polynomial below 0.625; 1 - 2 / (e^(2|x|) + 1) above (1 once
    e^(2|x|) overflows)."""
    a = abs(x)
    z = a * a
    p = F(-5.70498872745e-3)
    p = madd(p, z, F(2.06390887954e-2))
    p = madd(p, z, F(-5.37397155531e-2))
    p = madd(p, z, F(1.33314422036e-1))
    p = madd(p, z, F(-3.33332819422e-1))
    small = madd(p * z, a, a)
    large = ONE - TWO / (exp_f32(a + a) + ONE)
    y = pick(a < F(0.625), small, large)
    y = _odd(x, y)
    return pick(x != x, x, y)


@vector_function(_sigmoid_ref)
def sigmoid_f32(x):
    """1 / (1 + e^-x); for x < 0 as e^x / (1 + e^x), which keeps small results' digits."""
    e = exp_f32(-abs(x))
    y = ONE / (ONE + e)
    y = pick(x < ZERO, e * y, y)
    return pick(x != x, x, y)


def _asinh_ref(x):
    return math.asinh(x)


@vector_function(_asinh_ref)
def asinh_f32(x):
    """Cephes asinhf: an odd polynomial below 1/2; log(a + sqrt(a^2 + 1)) above, where the
    log's argument is at least 1.6 (no cancellation); log(a) + log 2 beyond 1e8, where a^2
    + 1 rounds to a^2 (and would overflow from 1.8e19). One sqrt and one reduced log, no
    division (log1p(a + a^2 / (1 + sqrt(1 + a^2))) took two divisions and a full log1p:
    1.13 -> 0.85 ns per element in cache, loaded machine, single thread)."""
    a = abs(x)
    z = a * a
    p = F(2.0122003309e-2)
    p = madd(p, z, F(-4.2699340972e-2))
    p = madd(p, z, F(7.4847586088e-2))
    p = madd(p, z, F(-1.6666288134e-1))
    small = madd(p * z, a, a)
    big = a > BIG
    # below 1/2 `large` is not used, and its log's argument a + sqrt(a^2 + 1) >= 1 stays
    # a normal float there too: no select needed to keep it in range
    r = pick(big, ZERO, np.sqrt(madd(a, a, ONE)))
    u = a + r
    # u's rounding error (exact: Fast2Sum, r >= a) over u, where 1 / u = r - a
    du = pick(big, ZERO, (a - (u - r)) * (r - a))
    large = _log_core(u) + (pick(big, LN2, ZERO) + du)
    y = pick(a >= HALF, large, small)  # NaN takes `small`, which is NaN
    y = pick(a == F_INF, F_INF, y)
    return _odd(x, y)


def _acosh_ref(x):
    return math.acosh(x) if x >= 1 else NAN


@vector_function(_acosh_ref)
def acosh_f32(x):
    """Cephes acoshf: sqrt(z) times a polynomial in z = x - 1 (exact) below 1/2, log(x +
    sqrt(z (x + 1))) above, log(x) + log 2 beyond 1e8; the two branches share one sqrt.
    No division (log1p(t + sqrt(2t + t^2)) took one and a full log1p: 0.95 -> 0.77 ns
    per element in cache, loaded machine, single thread)."""
    z = x - ONE
    far = z >= HALF  # false for NaN, which then takes `near`: sqrt(NaN) * p
    big = x > BIG
    # below 1, and for -inf, sqrt(z) is NaN, as acosh: no select for the domain
    s = np.sqrt(pick(far, pick(big, ZERO, z * (x + ONE)), z))
    p = F(1.7596881071e-3)
    p = madd(p, z, F(-7.5272886713e-3))
    p = madd(p, z, F(2.6454905019e-2))
    p = madd(p, z, F(-1.1784741703e-1))
    p = madd(p, z, F(1.4142135263e0))
    # log(x + s) where `far` picks it (x + s >= 2, normal); elsewhere its value is unused
    large = _log_core(x + s) + pick(big, LN2, ZERO)
    y = pick(far, large, p * s)
    return pick(x == F_INF, F_INF, y)


def _atanh_ref(x):
    if x != x or x < -1 or x > 1:
        return NAN
    if x == 1 or x == -1:
        return x * INF
    return math.atanh(x)


@vector_function(_atanh_ref)
def atanh_f32(x):
    """Cephes atanhf: an odd polynomial below 1/2, log((1 + a) / (1 - a)) / 2 above, where
    the log's argument is at least 3 (no cancellation: 1 - a is exact, 1 + a and the
    quotient round once each) and a normal float below 1 (its overflow-free _log_core).
    One division and one reduced log, where 0.5 log1p(2a / (1 - a)) took two divisions and
    a full log1p: 0.97 -> 0.75 ns per element in cache (loaded machine, single thread)."""
    a = abs(x)
    z = a * a
    p = F(1.81740078349e-1)
    p = madd(p, z, F(8.24370301058e-2))
    p = madd(p, z, F(1.46691431730e-1))
    p = madd(p, z, F(1.99782164500e-1))
    p = madd(p, z, F(3.33337300303e-1))
    small = madd(p * z, a, a)
    large = HALF * _log_core(pick(a < ONE, (ONE + a) / (ONE - a), TWO))
    y = pick(a < HALF, small, large)
    y = pick(a == ONE, F_INF, y)
    y = pick(a > ONE, F_NAN, y)
    y = _odd(x, y)
    return pick(x != x, x, y)


# ---------------------------------------------------------------- inverse trigonometric
def _atan_ref(x):
    return math.atan(x)


def _asin_ref(x):
    return math.asin(x) if -1 <= x <= 1 else NAN


def _acos_ref(x):
    return math.acos(x) if -1 <= x <= 1 else NAN


@_helper
def _atan_poly(t):
    """atan(t) for |t| <= tan(pi/8) (Cephes atanf's polynomial)."""
    z = t * t
    p = F(8.05374449538e-2)
    p = madd(p, z, -F(1.38776856032e-1))
    p = madd(p, z, F(1.99777106478e-1))
    p = madd(p, z, -F(3.33329491539e-1))
    return p * z * t + t


@vector_function(_atan_ref)
def atan_f32(x):
    a = abs(x)
    big = a > F(2.414213562373095)  # tan(3 pi / 8)
    mid = a > F(0.4142135623730950)  # tan(pi / 8)
    t = pick(big, -ONE / a, pick(mid, (a - ONE) / (a + ONE), a))
    base = pick(big, F_PI_2, pick(mid, F_PI_4, ZERO))
    y = base + _atan_poly(t)
    return _odd(x, y)


@_helper
def _asin_poly(a):
    """asin(a) for 0 <= a <= 0.5 (Cephes asinf's polynomial)."""
    z = a * a
    p = F(4.2163199048e-2)
    p = madd(p, z, F(2.4181311049e-2))
    p = madd(p, z, F(4.5470025998e-2))
    p = madd(p, z, F(7.4953002686e-2))
    p = madd(p, z, F(1.6666752422e-1))
    return p * z * a + a


@vector_function(_asin_ref)
def asin_f32(x):
    """asin(a) = pi/2 - 2 asin(sqrt((1 - a) / 2)) above a = 1/2."""
    a = abs(x)
    y = _asin_poly(a)
    y = pick(a > HALF, F_PI_2 - TWO * _asin_poly(np.sqrt(HALF * (ONE - a))), y)
    y = pick(a > ONE, F_NAN, y)
    return _odd(x, y)


@vector_function(_acos_ref)
def acos_f32(x):
    a = abs(x)
    outer = TWO * _asin_poly(np.sqrt(HALF * (ONE - a)))  # acos(a) for a > 1/2
    inner = _asin_poly(a)
    y = F_PI_2 - pick(x < ZERO, -inner, inner)
    y = pick(a > HALF, pick(x < ZERO, F_PI - outer, outer), y)
    return pick(a > ONE, F_NAN, y)


# ---------------------------------------------------------------- roots
#: -0.0 as a float64: x + like(x, NEG_ZERO) is x for float32 and float64 (signed zeros
#: included), and x widened to float64 for float16 and integers
NEG_ZERO = np.float64(-0.0)
cuda: Any = None  # numba.cuda in the GPU build of _cuda_cbrt (bound by for_device)


def _cuda_cbrt(x):
    return cuda.cbrt(x + like(x, NEG_ZERO))


class _TypedCbrt(DeviceFunction):
    """np.cbrt, but on a GPU CUDA's cbrtf for float32 (cbrt for float64, float16 and
    integers, widened, as before): numba-cuda's np.cbrt (kernel/_gpu_numpy) computes in
    float64, which made float32 cbrt and rcbrt kernels double-precision (1/2 to 1/64 of
    the float32 rate). The simulator keeps np.cbrt (its cuda.cbrt is a ** (1/3), NaN for
    a < 0)."""

    def _build(self, device: str) -> Any:
        if device == "gpu":
            from nnvmpy.kernel.cuda import _state, get_cuda

            gpu = get_cuda(self.__name__)
            if not _state["simulator"]:
                return gpu.jit(device=True)(for_device(_cuda_cbrt, "gpu"))
        return super()._build(device)


def _cbrt_same(x):
    return np.cbrt(x)


#: cbrt in x's own float type on every device
_cbrt_typed = _TypedCbrt(_cbrt_same)


def _cbrt_ref(x):
    return _cbrt_typed(x)


def _rcbrt_ref(x):
    if x == like(x, 0):
        return math.copysign(like(x, INF), x)
    return like(x, 1) / _cbrt_typed(x)


@_helper
def _rcbrt_abs(a):
    """a^(-1/3) for finite a > 0, no division: a bit-level first guess (4%), then three
    Newton steps y += y (1 - a y^3) / 3 (2e-3, 1e-5, then float32 rounding). The guess
    divides the bits by 3 in float32 (its two roundings move the guess by < 1e-5):
    an int32 `// 3` has no vector instruction and cost a quarter of the body (0.64 ->
    0.49 ns per element in cache, one thread)."""
    small = a < MIN_NORMAL
    s = pick(small, a * F(16777216.0), a)  # 2^24: the result scales by 2^-8
    y = bits_f32(sub32(RCBRT_MAGIC, np.int32(F(f32_bits(s)) * THIRD)))
    y = madd(y * THIRD, madd(-(s * y) * y, y, ONE), y)
    y = madd(y * THIRD, madd(-(s * y) * y, y, ONE), y)
    y = madd(y * THIRD, madd(-(s * y) * y, y, ONE), y)
    return pick(small, y * F(256.0), y)


@vector_function(_cbrt_ref)
def cbrt_f32(x):
    a = abs(x)
    r = _rcbrt_abs(a)
    y = (a * r) * r
    y = pick(x < ZERO, -y, y)
    # ±0, ±inf and NaN are their own cube roots (x itself keeps the sign of zero)
    return pick((a == ZERO) | (a == F_INF) | (x != x), x, y)


@vector_function(_rcbrt_ref)
def rcbrt_f32(x):
    a = abs(x)
    y = _rcbrt_abs(a)
    y = pick(a == F_INF, ZERO, y)
    y = pick(x < ZERO, -y, y)
    # ±0 -> ±inf, the sign from the bits (no division: one per element cost 40% here)
    y = pick(a == ZERO, pick(f32_bits(x) < 0, -F_INF, F_INF), y)
    return pick(x != x, x, y)


def _hypot_ref(x, y):
    return math.hypot(x, y)


HYPOT_BIG, HYPOT_SMALL = F(2.0**60), F(2.0**-60)  # squares of these stay normal floats
HYPOT_DOWN, HYPOT_UP = F(2.0**-100), F(2.0**100)  # scaled operands lie in 2^[-49, 40]


@vector_function(_hypot_ref)
def hypot_f32(x, y):
    """sqrt(x^2 + y^2) in float32, < 1.5 ulp: operands beyond 2^+-60 are first scaled by
    an exact power of two, so the squares neither overflow nor underflow (float32 sqrt
    and multiplies, 16 lanes; a float64 sqrt costs ~4x as much per element)."""
    a, b = abs(x), abs(y)
    m = pick(a > b, a, b)
    s = pick(m > HYPOT_BIG, HYPOT_DOWN, pick(m < HYPOT_SMALL, HYPOT_UP, F(1.0)))
    inv = pick(m > HYPOT_BIG, HYPOT_UP, pick(m < HYPOT_SMALL, HYPOT_DOWN, F(1.0)))
    p, q = a * s, b * s
    r = np.sqrt(madd(p, p, q * q)) * inv
    return pick((a == F_INF) | (b == F_INF), F_INF, r)


# ---------------------------------------------------------------- erf and its inverse
def _erf_ref(x):
    return math.erf(x)


# log(erfc(x)) on [0.875, 3.95] as a polynomial in x, highest power first (fit_vmath.py)
LOG_ERFC_X = tuple(
    F(c)
    for c in (
        0.0001946096280556952,
        -0.0030344338993341983,
        0.022207629796667225,
        -0.10392170788676368,
        -0.6371620428539995,
        -1.127704624309888,
        -0.00018494451601604872,
    )
)
(_L6, _L5, _L4, _L3, _L2, _L1, _L0) = LOG_ERFC_X
# erf(x) / x on [0, 0.875] as a polynomial in z = x^2, highest power first (fit_vmath.py)
ERF_Z = tuple(
    F(c)
    for c in (
        -0.0006218503338270993,
        0.005035122163314637,
        -0.026793452586471023,
        0.1128251045290693,
        -0.37612555839143885,
        1.128379158338835,
    )
)
(_R5, _R4, _R3, _R2, _R1, _R0) = ERF_Z


@vector_function(_erf_ref)
def erf_f32(x):
    """A polynomial in x^2 below 0.875; 1 - e^P(x) up to 3.95 (P fits log(erfc(x))), where
    erf = 1 in float32. Both are computed (branch-free): 12 multiply-adds and one exp, no
    division (the erfcx(1/x) form before it took a division and 16: 0.60 -> 0.53 ns per
    element in cache on a loaded machine, single thread, old and new interleaved)."""
    a = abs(x)
    z = a * a
    q = _R5  # erf(a) = a (R0 + z Q(z)) below 0.875 (a fit: 6 terms, not Taylor's 11)
    q = madd(q, z, _R4)
    q = madd(q, z, _R3)
    q = madd(q, z, _R2)
    q = madd(q, z, _R1)
    small = madd(a * z, q, a * _R0)
    # from 3.95 on erf is 1 in float32: clamped there, 1 - e^P(3.95) = 1 - 2.3e-8 rounds
    # to 1 (and e^P stays in _exp_core's range)
    t = pick(a < F(3.95), a, F(3.95))
    g = _L6
    g = madd(g, t, _L5)
    g = madd(g, t, _L4)
    g = madd(g, t, _L3)
    g = madd(g, t, _L2)
    g = madd(g, t, _L1)
    g = madd(g, t, _L0)
    large = ONE - _exp_core(g)
    y = pick(a >= F(0.875), large, small)  # NaN takes `small`, which is NaN
    return _odd(x, y)


def _erfinv_ref(y):
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
        slope = D_TWO_OVER_SQRT_PI * math.exp(-x * x)
        if slope > 0:
            if a <= 0.5:
                x -= (math.erf(x) - a) / slope
            else:  # Newton on log(erfc(x)) = log(1 - a): nearly linear in x
                c = math.erfc(x)
                if c > 0:
                    x += (math.log(c) - math.log(1.0 - a)) * c / slope
    return x if y >= 0 else -x


@_helper
def erfinv_c(q):
    """c = w - 2.5 with w = -log q, for normal q in (0, 1]: to 1e-7 absolute in w beyond
    the float32 roundings of log q and c, which is all erfinv's polynomials need (an
    absolute error d in w moves erfinv by at most 0.3 d, relatively: the body stays
    within 3.8 ulp over every float32). With log_f32's full relative precision the light
    body took 23 multiplies per 16 elements, here 20; the two multiply ports are what
    bounds it (0.317 -> 0.272 ns per element in cache)."""
    bits = f32_bits(q)
    split = sub32(bits, LOG_SPLIT)
    m = bits_f32(sub32(bits, and32(split, EXPONENT_FIELD))) - ONE
    p = _Q6
    p = madd(p, m, _Q5)
    p = madd(p, m, _Q4)
    p = madd(p, m, _Q3)
    p = madd(p, m, _Q2)
    p = madd(p, m, _Q1)
    p = madd(p, m, _Q0)
    log_q = madd(F(sra32(split, 23)), LN2, madd(m * m, p, m))
    return F(-2.5) - log_q


@_helper
def erfinv_central_poly(c):
    """Giles' polynomial for w = -log(1 - y^2) < 5, in c = w - 2.5: erfinv(y) = p y."""
    p = F(2.81022636e-08)
    p = madd(p, c, F(3.43273939e-07))
    p = madd(p, c, F(-3.5233877e-06))
    p = madd(p, c, F(-4.39150654e-06))
    p = madd(p, c, F(0.00021858087))
    p = madd(p, c, F(-0.00125372503))
    p = madd(p, c, F(-0.00417768164))
    p = madd(p, c, F(0.246640727))
    return madd(p, c, F(1.50140941))


@vector_function(_erfinv_ref)
def erfinv_f32(y):
    """Giles' single-precision polynomials ("Approximating the erfinv function", GPU
    Computing Gems, 2011) in w = -log(1 - y^2)."""
    a = abs(y)
    c = erfinv_c(pick(a < ONE, (ONE - a) * (ONE + a), ONE))  # q >= 1.2e-7: normal
    w = c + F(2.5)
    p = erfinv_central_poly(c)
    s = np.sqrt(w) - THREE
    q = F(-0.000200214257)
    q = madd(q, s, F(0.000100950558))
    q = madd(q, s, F(0.00134934322))
    q = madd(q, s, F(-0.00367342844))
    q = madd(q, s, F(0.00573950773))
    q = madd(q, s, F(-0.0076224613))
    q = madd(q, s, F(0.00943887047))
    q = madd(q, s, F(1.00167406))
    q = madd(q, s, F(2.83297682))
    x = pick(w < F(5.0), p, q) * a
    x = pick(a == ONE, F_INF, x)
    x = pick(a > ONE, F_NAN, x)
    x = _odd(y, x)
    return pick(y != y, y, x)
