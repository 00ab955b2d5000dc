"""float32 tan without libm calls, and the block loop that gives it every float32 argument.

A vectorised body cannot reduce every float32 argument modulo pi/2: beyond ~1e4 the
reduction needs more digits of pi than three float32 constants carry (Payne-Hanek, table
lookups), and a per-element branch to libm stops LLVM's vectoriser. So the work is split:

- `tan_near_f32(x)`: branch-free float32 tan for |x| <= TAN_NEAR_MAX (Cody-Waite
  reduction by pi/2 in three FMA steps, then Cephes tanf's polynomial on |r| <= pi/4 and
  -1/t in odd quadrants). Within 3 ulp there, 2.6 seen (tests/kernel/test_vmath_tan.py,
  also at the float32 arguments nearest every multiple of pi/2). Beyond that bound its
  value is not tan's: only `tan_into` calls it.
- `tan_into(x, out)`: the loop over an array, in blocks of BLOCK elements: the vectorised
  body over the block while flagging arguments beyond the bound, then (rarely) a scalar
  pass over that block that lists them; listed ones get float64 tan afterwards, and an
  array with more than FAR_LIMIT of them goes to NumPy's float32 tan whole.

10M float32 in [-1.5, 1.5] on one thread (this machine, 2026-11-30): 0.18 ns per
element against NumPy's 0.40; arguments up to 1e6: NumPy's 1.7 ns plus our 0.2.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ._dispatch import _helper, and32, bits_f32, f32_bits, madd, or32, pick, sub32, xor32
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
INF_BITS = np.int32(F_INF.view(np.int32))
BLOCK = 2048  # elements per block: its arguments are still in L1 for the scalar pass
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
def _tan_blocks(x, out, far):
    """out[i] = tan(x[i]) where |x[i]| <= TAN_NEAR_MAX (or inf, NaN); the indices of the
    other arguments go to `far` (as many as fit), their count is returned.

    Per block, the vectorised loop also ORs together a word whose sign bit is set for
    an argument with TAN_NEAR_MAX < |x| < inf (from the bits: an int32 compare-and-count
    reduction cost 0.07 ns per element more); the blocks are slices, so the loop index
    starts at 0 and numba needs no wraparound check for negative indices (a loop over
    range(start, stop) ran scalar: 0.94 ns per element instead of 0.16)."""
    count = 0
    for start in range(0, x.size, BLOCK):
        xs = x[start : start + BLOCK]
        ys = out[start : start + BLOCK]
        flags = np.int32(0)
        for i in range(xs.size):
            v = xs[i]
            ys[i] = tan_near_f32(v)
            b = f32_bits(abs(v))
            flags = or32(flags, and32(sub32(NEAR_MAX_BITS, b), sub32(b, INF_BITS)))
        if flags < 0:
            for i in range(xs.size):
                a = abs(xs[i])
                if a > TAN_NEAR_MAX and a < F_INF:
                    if count < far.size:
                        far[count] = start + i
                    count += 1
    return count


def tan_into(x: np.ndarray, out: np.ndarray) -> None:
    """out = tan(x) for C-contiguous float32 arrays of one shape; see the module.

    The few arguments beyond TAN_NEAR_MAX get float64 tan, rounded (0.5 ulp); when more
    than FAR_LIMIT are (data of large arguments), the whole array goes to NumPy's
    float32 tan instead, whose SIMD loop reduces them (within 4 ulp), rather than to
    libm one by one (~20 ns each: 12x slower than NumPy there)."""
    flat_x, flat_out = x.reshape(-1), out.reshape(-1)
    far = np.empty(FAR_LIMIT, np.int64)
    count = _tan_blocks.compiled("cpu")(flat_x, flat_out, far)
    if count == 0:
        return
    with np.errstate(all="ignore"):
        if count <= FAR_LIMIT:
            at = far[:count]
            flat_out[at] = np.tan(flat_x[at].astype(np.float64))
        else:
            np.tan(flat_x, out=flat_out)
