"""vmath's gamma and gammaln for float32: float32 arithmetic, float64 only for gamma's
Stirling exponent and reflection.

Why not float64 throughout (as before): at 16 float32 lanes per AVX-512 vector a float64
Lanczos sum with two float64 logs and an exp cost 37-54 ns per element (it did not even
vectorise), 50x the ~0.7 ns a 10M-element op may spend per element and core.

How. gammaln on [0.5, 6.5) is (x - 1)(x - 2) R(x), R a degree-11 polynomial of its own
on each of [0.5, 1.25), [1.25, 2.75) and [2.75, 6.5) (tools/fit_vmath.py): both roots of
lgamma (1 and 2) are factored out, so the result keeps its relative accuracy next to them,
and no log is needed (it was lgamma(2 + t) = t (t + 1) S(t) after up to four shifts, plus
the log of the shifts' product: 0.56 -> 0.25 ns per element, one thread, in cache). Below
0.5, lgamma(x) = lgamma(1 + x) - log x. From 6.5 on, Stirling's series (x - 1/2)(log x -
1) - 1/2 + log(2 pi)/2 + 1/(12x) - 1/(360x^3) + 1/(1260x^5). Below 0, reflection:
lgamma(x) = log(pi / |sin(pi x)|) - lgamma(1 - x), sin(pi x) by exact reduction and a
Taylor polynomial.

gamma shifts its argument where its result is moderate (x < 6.5: into [1.5, 2.5) by up
to four steps Gamma(u) = (u - 1) Gamma(u - 1), the factors multiplied into P, then
Gamma(2 + t) * P, or / x below 1; -5.5 < x < 0: shifted up, see gamma_f32), with
Gamma(2 + t) = 1 + t (t + 1) K(t) from a degree-10 polynomial K (it was exp(t (t + 1)
S(t)) with lgamma's old S: 23 multiplies per 16 lanes against 12, and the multiply ports
bound the loop; K's term is at most 0.12, so the result rounds once near 1 and keeps
within 0.84 ulp). Beyond, exp(lgamma) would turn
lgamma's float32 rounding (up to 88 * 6e-8) into ~100 ulp, so there the exponent
(z - 1/2) log z - z and its exp are float64 (a log and an exp of ~10 terms each, no libm,
no float64 division), and the reflection multiplies 1 / Gamma(1 - x) in float64, so
results below FLT_MIN come out as the right subnormals.

Cost (tools/bench_vmath.py, one thread, in cache): gammaln ~2.2 ns per element, gamma
~5 ns (its float64 half: 16 lanes are two 8-lane halves, and the register pressure of a
body this size spills), against 37 and 54 ns before and scipy's 16 and 12 ns. On blocks
whose arguments all lie in (0, 6.5), vmath.blocks runs the near region alone: gamma 0.32
ns; gammaln 0.31 on [0.5, 6.5) (the polynomial pieces alone).

Accuracy over the float32 domain against scipy in float64 (3M random points per region,
tests/kernel/test_vmath.py checks 3.5 ulp): gamma within 3.45 ulp on (0, 6.5) (every
float32 there: the worst near 5.6, where three float32 products make P), 0.6 ulp on
[6.5, 35] (float64 there), 2.6 ulp on (-5.5, 0) (every float32), 3.0 ulp below;
gammaln for x > 0 within 2.45 ulp on [0.5, 6.5) (every float32; relative error also
next to the roots 1 and 2), 2.12 below (every fifth float32) and 2.01 above (every third),
and
below 0 within 3.3 ulp of the larger of the result and the reflection's terms
log(pi / |sin(pi x)|) and lgamma(1 - x), which cancel next to the negative roots (-2.457,
-2.747, ...) and the poles: there a float32 result is good to the terms' rounding (~1e-7
absolute), as C's lgammaf. Poles, infinities and NaN
as C's tgammaf/lgammaf (and MXNet): gamma(±0) = ±inf, gamma(-n) = nan, gamma(-inf) = nan,
gammaln(-n) = gammaln(±inf) = inf.
"""

from __future__ import annotations

import math

import numpy as np

from ._dispatch import _helper, and32, bits_f64, f64_bits, fma, madd, pick, vector_function
from .f32 import (
    F_INF,
    F_NAN,
    HALF,
    LN2_HI,
    LN2_LO,
    ONE,
    TWO,
    ZERO,
    _log1pm,
    _log_reduce,
    log_f32,
)

F = np.float32
NAN = math.nan
INF = math.inf

SHIFT_MAX = F(6.5)  # Stirling from here; below, at most four shifts reach [1.5, 2.5)
LOW_MAX = F(4.5)  # below, at most two shifts
F_PI = F(math.pi)
STIRLING_C = F(0.5 * math.log(2 * math.pi) - 0.5)
D_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)
D_PI = math.pi
D_LN2_HI, D_LN2_LO = 6.93147180369123816490e-01, 1.90821492927058770002e-10
D_SQRT_HALF = math.sqrt(0.5)

# lgamma(x) = (x - 1)(x - 2) R(x) on [0.5, 6.5) in three pieces, [0.5, 1.25), [1.25, 2.75)
# and [2.75, 6.5): R_k in s = x - (the piece's centre), highest power first
# (tools/fit_vmath.py; relative error of the fits <= 2.1e-9)
_CUT_LO, _CUT_HI = F(1.25), F(2.75)
_CENTRE0, _CENTRE1, _CENTRE2 = F(0.875), F(2.0), F(4.625)
_R0 = tuple(
    F(c)
    for c in (
        -0.30763919759498615,
        0.2775629741116839,
        -0.13465875821150436,
        0.1364519754220565,
        -0.15501797071011766,
        0.1533930032476685,
        -0.15418400605266805,
        0.1612940454960657,
        -0.1765658388047281,
        0.20906098162113448,
        -0.2903364373579227,
        0.6105508057011698,
    )
)
_R1 = tuple(
    F(c)
    for c in (
        -2.69032541605549e-05,
        5.6059795317238e-05,
        -7.602454519002095e-05,
        0.00017029281455301106,
        -0.000408195592285587,
        0.0009190984774401589,
        -0.002107712363065121,
        0.004998138450837596,
        -0.012384222092782175,
        0.03296502526337715,
        -0.1003173010672963,
        0.4227843349035975,
    )
)
_R2 = tuple(
    F(c)
    for c in (
        -2.4298082194604237e-09,
        1.1649151236482433e-08,
        -3.2468980654969495e-08,
        1.6891133747890407e-07,
        -9.703621920003838e-07,
        5.028126653657351e-06,
        -2.6443240496717285e-05,
        0.00014382927676287176,
        -0.0008121891945492122,
        0.004861283899497505,
        -0.0323101717662307,
        0.27631068500784883,
    )
)
# Gamma(2 + t) = 1 + t (t + 1) K(t) on [-1, 1/2]: K in v = t + 1/4, highest power first
# (tools/fit_vmath.py; Gamma(2 + t) evaluated in float32 within 0.84 ulp)
GAMMA_K = tuple(
    F(c)
    for c in (
        0.001514284425027733,
        -0.0030402144981517888,
        0.003099911184773316,
        -0.00492468418172007,
        0.009926249477722974,
        -0.01667046191074995,
        0.03169722641613971,
        -0.04211570482066629,
        0.11432828335557287,
        -0.06191725168642477,
        0.43166651313899473,
    )
)
(_K10, _K9, _K8, _K7, _K6, _K5, _K4, _K3, _K2, _K1, _K0) = GAMMA_K


@_helper(inline=True)
def _gamma_2t(t, f):
    """Gamma(2 + t) for -1 <= t <= 1/2, f = t + 1 (exact)."""
    v = t + F(0.25)
    k = _K10
    k = madd(k, v, _K9)
    k = madd(k, v, _K8)
    k = madd(k, v, _K7)
    k = madd(k, v, _K6)
    k = madd(k, v, _K5)
    k = madd(k, v, _K4)
    k = madd(k, v, _K3)
    k = madd(k, v, _K2)
    k = madd(k, v, _K1)
    k = madd(k, v, _K0)
    return madd(t * f, k, ONE)


@_helper(inline=True)
def _shift_down(u, p):
    """One step of _reduce: u >= 2.5 becomes u - 1, and p takes the factor u - 1 (exact)."""
    c = u >= F(2.5)
    return pick(c, u - ONE, u), pick(c, p * (u - ONE), p)


@_helper(inline=True)
def _reduced(x, u, p):
    """_reduce's result from the shifted u in [1.5, 2.5) (for x >= 1) and its product p."""
    small = x < ONE
    t = pick(small, x - ONE, u - TWO)  # exact differences
    f = pick(small, x, u - ONE)
    return t, f, pick(small, x, p)


@_helper(inline=True)
def _reduce(x):
    """For 0 < x < 6.5: (t, f, p), f = t + 1 exactly, with gamma(x) = Gamma(2 + t) p for
    x >= 1 (p the product of the shifts) and Gamma(2 + t) / x below (p = x there). Four
    steps, written out (a loop here kept LLVM from inlining the body); the first one's
    p * (u - 1) with p = 1 is u - 1 exactly."""
    u, p = _shift_down(x, ONE)  # u in [2.5, 6.5) -> [1.5, 2.5), p = (x - 1)(x - 2)...
    u, p = _shift_down(u, p)
    u, p = _shift_down(u, p)
    u, p = _shift_down(u, p)
    return _reduced(x, u, p)


@_helper(inline=True)
def _reduce_low(x):
    """_reduce for 0 < x < 4.5, where its last two steps change nothing: two steps, the
    same bits (the shifts were 0.18 of gamma's 0.31 ns per element in cache)."""
    u, p = _shift_down(x, ONE)
    u, p = _shift_down(u, p)
    return _reduced(x, u, p)


@_helper(inline=True)
def _stirling_series(x):
    """lgamma(x) - ((x - 1/2) log x - x + log(2 pi) / 2) for x >= 6.5 (< 1e-9 left)."""
    r = ONE / x
    z = r * r
    return r * (F(1 / 12) - z * (F(1 / 360) - z * F(1 / 1260)))


@_helper(inline=True)
def _sin_pi_poly(r):
    """(p, z): sin(pi r) = a + a z p with a = pi r, z = a^2, for |r| <= 1/2 (Taylor to
    (pi r)^15, next term < 1e-10)."""
    a = F_PI * r
    z = a * a
    p = F(-1 / 1307674368000)
    p = madd(p, z, F(1 / 6227020800))
    p = madd(p, z, F(-1 / 39916800))
    p = madd(p, z, F(1 / 362880))
    p = madd(p, z, F(-1 / 5040))
    p = madd(p, z, F(1 / 120))
    p = madd(p, z, F(-1 / 6))
    return p, z


@_helper(inline=True)
def _sin_pi(r):
    """sin(pi r) for |r| <= 1/2."""
    p, z = _sin_pi_poly(r)
    a = F_PI * r
    return madd(a * z, p, a)


@_helper(inline=True)
def _sin_pi_over_pi(r):
    """sin(pi r) / pi for |r| <= 1/2, without forming pi r: for subnormal r that product
    rounds to a whole multiple of the smallest subnormal (pi * 2^-149 -> 3 * 2^-149: 5%
    off, 6000 ulp in gammaln(-1e-45))."""
    p, z = _sin_pi_poly(r)
    return madd(r * z, p, r)


@_helper(inline=True)
def _log_parts(x):
    """(h, r) with log x = h + r for finite x > 0, h = e ln2_hi exact: Stirling needs
    log(x) - 1 = (h - 1) + r to ~1 ulp of itself (it is multiplied by x - 1/2), where
    log(x) rounded first and less 1 after carried up to 2.3 ulp of the difference."""
    e, m = _log_reduce(x)
    return e * LN2_HI, m + (_log1pm(m) + e * LN2_LO)


@_helper(inline=True)
def _lgamma_mid(x):
    """lgamma(x) for 0.5 <= x < 6.5: (x - 1)(x - 2) R(x), R the polynomial of x's piece.
    Two comparisons pick the piece's centre and coefficients: selects, which run beside
    the multiply-adds (the multiply ports bound these loops), so three degree-11 pieces
    cost about what one would. (x - 1) is exact and (x - 1)(x - 2) = (x - 1) x - 2 (x - 1)
    rounds once (fma; x - 2 is inexact below 1)."""
    upper = x >= _CUT_HI
    middle = x >= _CUT_LO
    s = x - pick(upper, _CENTRE2, pick(middle, _CENTRE1, _CENTRE0))
    p = pick(upper, _R2[0], pick(middle, _R1[0], _R0[0]))
    p = madd(p, s, pick(upper, _R2[1], pick(middle, _R1[1], _R0[1])))
    p = madd(p, s, pick(upper, _R2[2], pick(middle, _R1[2], _R0[2])))
    p = madd(p, s, pick(upper, _R2[3], pick(middle, _R1[3], _R0[3])))
    p = madd(p, s, pick(upper, _R2[4], pick(middle, _R1[4], _R0[4])))
    p = madd(p, s, pick(upper, _R2[5], pick(middle, _R1[5], _R0[5])))
    p = madd(p, s, pick(upper, _R2[6], pick(middle, _R1[6], _R0[6])))
    p = madd(p, s, pick(upper, _R2[7], pick(middle, _R1[7], _R0[7])))
    p = madd(p, s, pick(upper, _R2[8], pick(middle, _R1[8], _R0[8])))
    p = madd(p, s, pick(upper, _R2[9], pick(middle, _R1[9], _R0[9])))
    p = madd(p, s, pick(upper, _R2[10], pick(middle, _R1[10], _R0[10])))
    p = madd(p, s, pick(upper, _R2[11], pick(middle, _R1[11], _R0[11])))
    a = x - ONE
    return p * fma(a, x, -(a + a))


@_helper(inline=True)
def _lgamma_near(x):
    """_lgamma_pos for 0 < x < 6.5 alone (its expressions there, without Stirling's
    terms and their division): below 0.5, lgamma(1 + x) - log x (1 + x rounds, which
    moves lgamma(1 + x) by < 4e-8 against a result > 0.57)."""
    small = x < HALF
    q = _lgamma_mid(pick(small, x + ONE, x))
    h, r = _log_parts(x)
    return pick(small, q - (h + r), q)


@_helper(inline=True)
def _lgamma_pos(x):
    """lgamma(x) for finite x > 0 (x may be huge: then inf, as lgammaf)."""
    small = x < HALF
    stirling = x >= SHIFT_MAX
    q = _lgamma_mid(pick(small, x + ONE, pick(stirling, ONE, x)))
    h, r = _log_parts(x)
    near = pick(small, q - (h + r), q)
    far = (x - HALF) * ((h - ONE) + r) + (STIRLING_C + _stirling_series(pick(stirling, x, ONE)))
    return pick(stirling, far, near)


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


@vector_function(_gammaln_ref, inline=True)
def gammaln_f32(x):
    negative = x < ZERO
    xf = pick(abs(x) == F_INF, ONE, x)  # keep the arithmetic finite; fixed below
    z = pick(negative, ONE - xf, xf)
    lg = _lgamma_pos(z)
    r = xf - np.floor(xf + HALF)  # exact; x = n + r, |r| <= 1/2
    s = abs(_sin_pi_over_pi(r))  # log(pi / |sin(pi x)|) = -log(|sin(pi r)| / pi)
    refl = -log_f32(pick(s > ZERO, s, ONE)) - lg
    y = pick(negative, refl, lg)
    pole = (x <= ZERO) & (np.floor(x) == x)  # includes -inf
    y = pick(pole | (x == F_INF), F_INF, y)
    return pick(x != x, x, y)


@_helper(inline=True)
def _log_d(x):
    """log for float64 6.5 <= x <= 62 to ~1e-16 relative: atanh series in s = m/(2+m)."""
    bits = f64_bits(x)
    e = np.float64(((bits >> 52) & 0x7FF) - 1022)
    m = bits_f64((bits & 0xFFFFFFFFFFFFF) | 0x3FE0000000000000)  # [0.5, 1)
    low = m < D_SQRT_HALF
    e = pick(low, e - 1.0, e)
    m = pick(low, m + m - 1.0, m - 1.0)
    # s = m / (2 + m) without a float64 division (a 16-lane one costs ~30 cycles): a
    # float32 reciprocal, then one Newton correction in float64 (error 1e-7 -> 1e-14)
    inv = np.float64(ONE / (TWO + F(m)))
    s = m * inv
    s = madd(m - s * (2.0 + m), inv, s)
    z = s * s
    p = 1.0 / 13
    p = madd(p, z, 1.0 / 11)
    p = madd(p, z, 1.0 / 9)
    p = madd(p, z, 1.0 / 7)
    p = madd(p, z, 1.0 / 5)
    p = madd(p, z, 1.0 / 3)
    return madd(2.0 * s, z * p, 2.0 * s) + e * D_LN2_LO + e * D_LN2_HI


@_helper(inline=True)
def _exp_d(x):
    """exp for float64 |x| <= 700 to ~1e-15 relative: 2^k e^r, Taylor to r^11."""
    k = np.floor(x * 1.4426950408889634 + 0.5)
    r = (x - k * D_LN2_HI) - k * D_LN2_LO
    p = 1.0 / 39916800
    p = madd(p, r, 1.0 / 3628800)
    p = madd(p, r, 1.0 / 362880)
    p = madd(p, r, 1.0 / 40320)
    p = madd(p, r, 1.0 / 5040)
    p = madd(p, r, 1.0 / 720)
    p = madd(p, r, 1.0 / 120)
    p = madd(p, r, 1.0 / 24)
    p = madd(p, r, 1.0 / 6)
    p = madd(p, r, 0.5)
    y = madd(p * r, r, r) + 1.0
    return y * bits_f64((np.int64(k) + 1023) << 52)


@vector_function(_gamma_ref, inline=True)
def gamma_f32(x):
    """Three regions, all computed (branch-free), one picked:

    - 0 < x < 6.5: Gamma(2 + t) from the polynomial, times p or over x (_reduce);
    - -5.5 < x < 0: Gamma(x) = Gamma(u + 2) / (x (x + 1) ... (u - 1) u (u + 1)) with
      u = x + k in (-1, 0]: each x + j is exact (its magnitude only shrinks), so the
      argument of the polynomial carries no rounding (1 - x would: Gamma's slope turns
      its half ulp into up to 6 ulp), and the float64 product of the factors adds
      only their final rounding;
    - beyond: float64 Stirling for z = x or z = 1 - x (exact in float64, up to 61);
      reflection pi / (sin(pi x) Gamma(1 - x)) for x <= -5.5.
    gamma(x) overflows from 35.04 on (inf), underflows to 0 below -60 (non-integers)."""
    negative = x < ZERO
    xc = pick(x < F(36.0), x, F(36.0))
    xc = pick(xc > F(-60.0), xc, F(-60.0))
    # -5.5 < x < 0: shift up to u in (-1, 0], product of the factors in float64
    u = pick(negative & (xc > F(-5.5)), xc, F(-0.5))
    q = 1.0
    c = u <= -ONE
    q = pick(c, q * np.float64(u), q)
    u = pick(c, u + ONE, u)
    c = u <= -ONE
    q = pick(c, q * np.float64(u), q)
    u = pick(c, u + ONE, u)
    c = u <= -ONE
    q = pick(c, q * np.float64(u), q)
    u = pick(c, u + ONE, u)
    c = u <= -ONE
    q = pick(c, q * np.float64(u), q)
    u = pick(c, u + ONE, u)
    c = u <= -ONE
    q = pick(c, q * np.float64(u), q)
    u = pick(c, u + ONE, u)
    # 0 < x < 6.5, or the shifted u: Gamma(2 + t)
    t, f, p = _reduce(pick(negative | (xc >= SHIFT_MAX), ONE, xc))
    t = pick(negative, u, t)
    f = pick(negative, u + ONE, f)
    g2 = _gamma_2t(t, f)
    near = g2 * pick(xc < ONE, ONE / xc, p)
    near_neg = g2 / F(q * np.float64(u) * np.float64(f))  # the product is exact in float64
    # Stirling in float64: Gamma(z), or 1 / Gamma(z) for the reflection (no division)
    zd = pick(negative, 1.0 - np.float64(xc), np.float64(xc))  # exact, <= 61
    zd = pick(zd < 6.5, 6.5, zd)
    series = np.float64(_stirling_series(F(zd)))
    lg = (zd - 0.5) * _log_d(zd) - zd + (D_HALF_LOG_2PI + series)
    far = _exp_d(pick(negative, -lg, lg))
    r = xc - np.floor(xc + HALF)  # xc = n + r, sin(pi xc) = (-1)^n sin(pi r)
    odd = and32(np.int32(xc - r), 1) != 0
    s = _sin_pi(r)
    s = pick(odd, -s, s)
    refl = np.float64(F_PI / pick(s != ZERO, s, ONE)) * far  # pi / (sin(pi x) Gamma(1 - x))
    y = pick(negative, pick(xc > F(-5.5), near_neg, F(refl)), F(far))
    y = pick((xc > ZERO) & (xc < SHIFT_MAX), near, y)
    y = pick(x >= F(36.0), F_INF, y)
    y = pick((x <= F(-60.0)) & (np.floor(x) != x), ZERO, y)
    pole = (x <= ZERO) & (np.floor(x) == x)
    y = pick(pole, pick(x == ZERO, ONE / x, F_NAN), y)  # gamma(±0) = ±inf
    return pick(x != x, x, y)
