"""The distributions, as device functions of (parameters, Philox stream), and their loops.

Each sampler turns the Philox blocks of one element (kernel/philox.py) into one sample, in
float64; the loop stores it in the output's dtype. A rejection sampler walks the blocks
j = 0, 1, 2, ... of its substream, so its n-th attempt always sees the same bits and the
sample depends only on (seed, stream counter, element), never on the thread.

    uniform(low, high)       low + (high - low) u
    normal(mu, sigma)        Box-Muller
    gamma(alpha, beta)       Marsaglia & Tsang (2000); alpha < 1 via gamma(alpha + 1) u^(1/alpha)
    exponential(lam)         -log(1 - u) / lam
    poisson(lam)             Knuth's product of uniforms below 12, Hörmann's PTRS (1993)
                             transformed rejection up to 1e12, a rounded normal above
    negative_binomial(k, p)  poisson(gamma(k, (1 - p) / p))     (MXNet's mixture)
    generalized_negative_binomial(mu, alpha)
                             poisson(gamma(1 / alpha, alpha mu)), poisson(mu) at alpha 0

Parameters outside a distribution's domain (only per-row `_sample_*` inputs can carry
them: scalar parameters are checked when parsed) give NaN, as NumPy's formulas would;
the degenerate ends give the limit (sigma 0 -> mu, lam 0 -> 0, beta 0 -> 0).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...kernel import device_function, parallel_for
from ...kernel.launch import store, uindex
from ...kernel.philox import bits64, block, uniform_pair, unit53, unit_bits

UNIFORM, NORMAL, GAMMA, EXPONENTIAL, POISSON, NEGATIVE_BINOMIAL, GENERALIZED_NEGATIVE_BINOMIAL = (
    range(7)
)

_U0 = np.uint64(0)
_U1 = np.uint64(1)
_U2 = np.uint64(2)
_SUB_GAMMA = np.uint64(0)  # gamma's attempts; _SUB_GAMMA + 1: its alpha < 1 boost
_SUB_POISSON = np.uint64(2)
_TWO_PI = 2.0 * math.pi
_NAN = math.nan
_INF = math.inf
_MAX_ATTEMPTS = 1 << 20  # a rejection loop gives up (NaN) rather than hang a kernel
_KNUTH_BELOW = 12.0
_PTRS_BELOW = 1e12


@device_function
def std_normal(k0, k1, counter, j, sub):
    """A standard normal from block j (Box-Muller: 1 - u is in (0, 1], log never sees 0)."""
    u, v = uniform_pair(k0, k1, counter, j, sub)
    return box_muller(u, v)


@device_function
def box_muller(u, v):
    """A standard normal from two uniforms in [0, 1)."""
    return math.sqrt(-2.0 * math.log(1.0 - u)) * math.cos(_TWO_PI * v)


@device_function(cpu_inline=False)
def gamma(k0, k1, counter, alpha, beta):
    """Gamma with shape alpha and scale beta (mean alpha * beta)."""
    if not (alpha >= 0.0 and beta >= 0.0):
        return _NAN
    if alpha == 0.0 or beta == 0.0:
        return 0.0
    a = alpha if alpha >= 1.0 else alpha + 1.0
    d = a - 1.0 / 3.0
    c = 1.0 / math.sqrt(9.0 * d)
    j = _U0
    g = _NAN
    for _ in range(_MAX_ATTEMPTS):
        x = std_normal(k0, k1, counter, j, _SUB_GAMMA)
        u, _v = uniform_pair(k0, k1, counter, j + _U1, _SUB_GAMMA)
        j += _U2
        t = 1.0 + c * x
        if t <= 0.0:
            continue
        v = t * t * t
        w = 1.0 - u  # in (0, 1]
        if w < 1.0 - 0.0331 * x * x * x * x or math.log(w) < 0.5 * x * x + d * (
            1.0 - v + math.log(v)
        ):
            g = d * v
            break
    if alpha < 1.0:
        u, _v = uniform_pair(k0, k1, counter, _U0, _SUB_GAMMA + _U1)
        g *= math.pow(u, 1.0 / alpha)
    return g * beta


@device_function(cpu_inline=False)
def poisson(k0, k1, counter, lam):
    """Poisson with mean lam, as a float."""
    if not lam >= 0.0:
        return _NAN
    if lam == 0.0 or lam == _INF:
        return lam
    sub = _SUB_POISSON
    if lam < _KNUTH_BELOW:
        limit = math.exp(-lam)
        prod = 1.0
        k = 0.0
        j = _U0
        for _ in range(_MAX_ATTEMPTS):
            u, v = uniform_pair(k0, k1, counter, j, sub)
            j += _U1
            prod *= u
            if prod <= limit:
                return k
            k += 1.0
            prod *= v
            if prod <= limit:
                return k
            k += 1.0
        return _NAN
    if lam >= _PTRS_BELOW:  # skewness below 1e-6: a rounded normal is exact to float64
        z = std_normal(k0, k1, counter, _U0, sub)
        return max(float(math.floor(lam + math.sqrt(lam) * z + 0.5)), 0.0)
    return _ptrs(k0, k1, counter, lam, sub)


@device_function(cpu_inline=False)
def _ptrs(k0, k1, counter, lam, sub):
    """Hörmann's transformed rejection with squeeze (PTRS), for lam >= 10."""
    slam = math.sqrt(lam)
    loglam = math.log(lam)
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    vr = 0.9277 - 3.6224 / (b - 2.0)
    j = _U0
    for _ in range(_MAX_ATTEMPTS):
        u, v = uniform_pair(k0, k1, counter, j, sub)
        j += _U1
        u -= 0.5
        v = 1.0 - v  # in (0, 1]: log(v) is finite
        us = 0.5 - abs(u)
        if us <= 0.0:
            continue
        k = float(math.floor((2.0 * a / us + b) * u + lam + 0.43))
        if us >= 0.07 and v <= vr:
            return k
        if k < 0.0 or (us < 0.013 and v > us):
            continue
        lhs = math.log(v) + math.log(inv_alpha) - math.log(a / (us * us) + b)
        if lhs <= -lam + k * loglam - math.lgamma(k + 1.0):
            return k
    return _NAN


@device_function
def is_direct(dist):
    """Whether `dist` is a formula of uniforms (no rejection loop): uniform, normal,
    exponential. Their loops below compile in a fraction of the time of the full one,
    which every initializer's first draw would otherwise pay."""
    return dist in (UNIFORM, NORMAL, EXPONENTIAL)


@device_function
def draw_direct(dist, a, b, k0, k1, counter, bits):
    """One sample of uniform, normal or exponential (a, b), as a float64: the values of
    uniform_bits, std_normal and uniform_pair on block 0, from one Philox call site (each
    site inlined is most of a loop's compile time)."""
    w0, w1, w2, w3 = block(k0, k1, counter, _U0, _U0)
    if dist == UNIFORM:
        return a + (b - a) * unit_bits(w0, w1, bits)
    u = unit53(w0, w1)
    if dist == NORMAL:
        if not b >= 0.0:
            return _NAN
        return a + b * box_muller(u, unit53(w2, w3))
    if dist == EXPONENTIAL:
        if not a > 0.0:
            return _INF if a == 0.0 else _NAN
        return -math.log(1.0 - u) / a
    return _NAN


@device_function
def draw(dist, a, b, k0, k1, counter, bits):
    """One sample of distribution `dist` with parameters (a, b), as a float64.

    The gamma and Poisson samplers appear once each, the mixtures feeding one into the
    other. On the CPU they are called, not inlined (cpu_inline=False): inlined, each
    Philox call site in them was typed and lowered again, and this loop took 24 s to
    compile per dtype (3 s now); a sample costs ~10% more (Poisson at lam 30: ~40%, its
    set-up no longer hoisted out of the loop), still ahead of MXNet's CPU samplers.
    """
    if is_direct(dist):
        return draw_direct(dist, a, b, k0, k1, counter, bits)
    if dist == POISSON:
        return poisson(k0, k1, counter, a)
    # gamma, and the Poisson-gamma mixtures: lam ~ gamma(shape, scale), then Poisson(lam)
    shape, scale = a, b  # GAMMA
    if dist == NEGATIVE_BINOMIAL:
        if not (a >= 0.0 and b >= 0.0 and b <= 1.0):
            return _NAN
        if b == 0.0:
            return _INF  # never a success: infinitely many failures
        shape, scale = a, (1.0 - b) / b
    elif dist == GENERALIZED_NEGATIVE_BINOMIAL:
        if not (a >= 0.0 and b >= 0.0):
            return _NAN
        shape, scale = (1.0 / b, b * a) if b > 0.0 else (1.0, 0.0)  # alpha 0: Poisson(mu)
    elif dist != GAMMA:
        return _NAN
    lam = gamma(k0, k1, counter, shape, scale)
    if dist == GAMMA:
        return lam
    if dist == GENERALIZED_NEGATIVE_BINOMIAL and b == 0.0:
        lam = a
    return poisson(k0, k1, counter, lam)


@parallel_for
def sample_loop(i, out, mode, dist, a, b, k0, k1, first, bits):
    """out[i] ~ dist(a, b): scalar parameters (the _random_* ops)."""
    store(out, i, draw(dist, a, b, k0, k1, first + uindex(i), bits), mode)


@parallel_for
def sample_rows_loop(i, out, mode, dist, p1, p2, per_row, k0, k1, first, bits):
    """out[i] ~ dist(p1[r], p2[r]), r = i // per_row: element i's row of parameters."""
    r = i // per_row
    value = draw(dist, float(p1[r]), float(p2[r]), k0, k1, first + uindex(i), bits)
    store(out, i, value, mode)


@parallel_for
def direct_sample_loop(i, out, mode, dist, a, b, k0, k1, first, bits):
    """sample_loop for the distributions is_direct names: the same samples."""
    store(out, i, draw_direct(dist, a, b, k0, k1, first + uindex(i), bits), mode)


@parallel_for
def direct_sample_rows_loop(i, out, mode, dist, p1, p2, per_row, k0, k1, first, bits):
    """sample_rows_loop for the distributions is_direct names: the same samples."""
    r = i // per_row
    value = draw_direct(dist, float(p1[r]), float(p2[r]), k0, k1, first + uindex(i), bits)
    store(out, i, value, mode)


def sampler_loops(dist: int) -> tuple[Any, Any]:
    """(scalar-parameter loop, per-row loop) that draw `dist`: the direct ones when they
    can (same samples, a fraction of the compile time)."""
    if is_direct(dist):
        return direct_sample_loop, direct_sample_rows_loop
    return sample_loop, sample_rows_loop


@parallel_for
def randint_loop(i, out, mode, low, span, k0, k1, first):
    """out[i] uniform on the integers [low, low + span) (64 bits modulo span: bias < 2^-40)."""
    x = bits64(k0, k1, first + uindex(i), _U0, _U0)
    store(out, i, low + np.int64(x % span), mode)


@parallel_for
def keys_loop(i, keys, k0, k1, first):
    """keys[i] = 64 random bits of stream counter first + i (shuffle sorts rows by them)."""
    keys[i] = bits64(k0, k1, first + uindex(i), _U0, _U0)


__all__ = [
    "EXPONENTIAL",
    "GAMMA",
    "GENERALIZED_NEGATIVE_BINOMIAL",
    "NEGATIVE_BINOMIAL",
    "NORMAL",
    "POISSON",
    "UNIFORM",
    "direct_sample_loop",
    "direct_sample_rows_loop",
    "draw",
    "draw_direct",
    "gamma",
    "is_direct",
    "keys_loop",
    "poisson",
    "randint_loop",
    "sample_loop",
    "sample_rows_loop",
    "sampler_loops",
    "std_normal",
    "store",
]
