"""float32 tan without libm calls, and the block loop that gives it every float32 argument.

A vectorised body cannot reduce every float32 argument modulo pi/2: beyond ~1e4 the
reduction needs more digits of pi than three float32 constants carry (Payne-Hanek, table
lookups), and a per-element branch to libm stops LLVM's vectoriser. So the work is split:

- `tan_near_f32(x)`: branch-free float32 tan for |x| <= TAN_NEAR_MAX (Cody-Waite
  reduction by pi/2 in three FMA steps, then Cephes tanf's polynomial on |r| <= pi/4 and
  -1/t in odd quadrants). Within 3 ulp there, 2.6 seen (tests/kernel/test_vmath_tan.py,
  also at the float32 arguments nearest every multiple of pi/2). Beyond that bound its
  value is not tan's: only `tan_into` calls it.
- `tan_into(x, out)`: the loop over an array, in blocks of BLOCK elements: a test of
  the block for arguments beyond the bound and (rarely) a scalar pass listing them,
  then the vectorised body over the block; listed ones get float64 tan afterwards, and
  from the block where more than FAR_LIMIT have turned up on, NumPy's float32 tan.

10M float32 in [-1.5, 1.5] on one thread (this machine, 2026-11-30): 0.2 ns per
element against NumPy's 0.40; arguments up to 1e6: NumPy's 1.7 ns.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ._dispatch import _helper, and32, bits_f32, f32_bits, madd, pick, xor32
from .blocks import ABS_BITS, BLOCK, any_outside, prefetch_ahead
from .f32 import F_INF, ONE, SIGN_BIT

F = np.float32
TWO_OVER_PI = F(2 / math.pi)
# pi/2 = PIO2_1 + PIO2_2 + PIO2_3 + 1.06e-23, each part the float32 nearest the rest (of
# pi/2 to 60 digits: math.pi / 2 is 6e-17 off, which made the third part 4% off and tan
# 35 ulp off next to its zeros and poles)
PI_OVER_2 = Fraction("1.57079632679489661923132169163975144209858469968755291048747")
PIO2_1 = F(PI_OVER_2)
PIO2_2 = F(PI_OVER_2 - Fraction(float(PIO2_1)))
PIO2_3 = F(PI_OVER_2 - Fraction(float(PIO2_1)) - Fraction(float(PIO2_2)))
TAN_NEAR_MAX = F(8192.0)
NEAR_MAX_BITS = np.int32(TAN_NEAR_MAX.view(np.int32))
FAR_LIMIT = 4096  # arguments beyond TAN_NEAR_MAX fixed one by one; more: NumPy's loop


@_helper
def tan_near_f32(x):
    """tan(x) for |x| <= TAN_NEAR_MAX, ±0, ±inf (NaN) and NaN; see the module."""
    a = abs(x)
    q = np.rint(a * TWO_OVER_PI)
    # each FMA rounds once: a - q PIO2_1 is exact (a and q PIO2_1 agree to within 1),
    # the next two carry the rest of q pi/2 to float32 precision of r
    r = madd(-q, PIO2_1, a)
    r = madd(-q, PIO2_2, r)
    r = madd(-q, PIO2_3, r)
    z = r * r
    p = F(9.38540185543e-3)
    p = madd(p, z, F(3.11992232697e-3))
    p = madd(p, z, F(2.44301354525e-2))
    p = madd(p, z, F(5.34112807005e-2))
    p = madd(p, z, F(1.33387994085e-1))
    p = madd(p, z, F(3.33331568548e-1))
    t = madd(p * z, r, r)
    odd = and32(np.int32(pick(a <= TAN_NEAR_MAX, q, ONE + ONE)), 1) != 0
    y = pick(odd, -ONE / t, t)
    # tan(-a) = -tan(a): flip the sign bit (keeps tan(-0) = -0); inf and NaN give NaN
    return bits_f32(xor32(f32_bits(y), and32(f32_bits(x), SIGN_BIT)))


@_helper
def tan_blocks(x, out, far_at, far_x):
    """out[i] = tan(x[i]) where |x[i]| <= TAN_NEAR_MAX (or inf, NaN); the others' indices
    and values go to far_at / far_x. Returns (count listed, stop): when more arguments
    are beyond the bound than the lists hold, the loop stops before the block where that
    happens and leaves x[stop:] and out[stop:] untouched (x may be out: an in-place call).

    Per block, `blocks.any_outside` (a vectorised OR over the bits) looks for arguments
    beyond the bound before anything is written, so their values are listed from x even
    when out is x. The blocks are slices: a loop over range(start, stop) kept numba's
    negative-index check and ran scalar (0.94 ns per element instead of 0.16)."""
    count = 0
    for start in range(0, x.size, BLOCK):
        prefetch_ahead(x, start)
        xs = x[start : start + BLOCK]
        ys = out[start : start + BLOCK]
        if any_outside(xs, ABS_BITS, 0, NEAR_MAX_BITS):
            listed = count
            for i in range(xs.size):
                a = abs(xs[i])
                if a > TAN_NEAR_MAX and a < F_INF:
                    if listed == far_at.size:
                        return count, start
                    far_at[listed] = start + i
                    far_x[listed] = xs[i]
                    listed += 1
            count = listed
        for i in range(xs.size):
            ys[i] = tan_near_f32(xs[i])
    return count, x.size


def tan_into(x: np.ndarray, out: np.ndarray) -> None:
    """out = tan(x) for C-contiguous float32 arrays of one shape (out may be x); see the
    module.

    The few arguments beyond TAN_NEAR_MAX get float64 tan, rounded (0.5 ulp); from the
    block where more than FAR_LIMIT have turned up (data of large arguments) on, the rest
    of the array goes to NumPy's float32 tan, whose SIMD loop reduces them (within 4
    ulp), rather than to libm one by one (~20 ns each: 12x slower than NumPy there)."""
    flat_x, flat_out = x.reshape(-1), out.reshape(-1)
    far_at = np.empty(FAR_LIMIT, np.int64)
    far_x = np.empty(FAR_LIMIT, np.float32)
    count, stop = tan_blocks.compiled("cpu")(flat_x, flat_out, far_at, far_x)
    tan_finish(flat_x, flat_out, count, stop, far_at, far_x)


def tan_finish(
    x: np.ndarray,
    out: np.ndarray,
    count: int,
    stop: int,
    far_at: np.ndarray,
    far_x: np.ndarray,
) -> None:
    """What tan_blocks(x, out, far_at, far_x) left, given its (count, stop): NumPy's
    float32 tan from stop on, float64 tan for the `count` arguments it listed."""
    with np.errstate(all="ignore"):
        if stop < x.size:
            np.tan(x[stop:], out=out[stop:])
        if count:
            out[far_at[:count]] = np.tan(far_x[:count].astype(np.float64))
