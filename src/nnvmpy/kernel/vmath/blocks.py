"""Block loops for float32 arrays: a light body where every argument of a block lies in
its range, the full body elsewhere.

A branch-free body computes every region of its function for every element and selects
one: gamma's float64 Stirling and reflection terms, erfinv's tail polynomial and sqrt.
On typical data only one region is ever picked. These loops look at a block of BLOCK
arguments first (a vectorised OR over their bits, ~0.03 ns per element in cache) and run
a body of that region alone when all of them are in it. The light bodies are the full
bodies' own expressions for the region, so the results are the same bits either way
(tests/kernel/test_vmath_blocks.py). One thread, in cache, 2026-11-30: gamma on (0.5, 4)
3.5 -> 0.6 ns per element (0.32 with gamma.py's K, 0.24 in its blocks below 4.5, which
take two of the four shifts), gammaln on x > 0 1.3 -> 0.8, erfinv on |y| <= 0.99 0.58 ->
0.29 (0.27 with f32.erfinv_c's shorter log).

Arrays larger than the caches stream from memory, and these loops are too slow to keep
the CPU's own prefetcher ahead: it follows demand misses, and a block's compute phase
issues none. So each block first asks for the lines AHEAD elements on
(`prefetch_ahead`), a block's worth, spread over the array as the loop goes: 10M gamma
on two threads 1.93 -> 1.63 ms (one thread: 0.373 -> 0.335 ns per element, in cache
0.32). One prefetch of a whole 2048-element block at once ran slower than none (0.44
ns per element): the misses queue behind each other. Hence BLOCK = 256 (16 lines).

Each loop is written out (not one loop taking the bodies as arguments): numba does not
cache a function whose arguments are other compiled functions, and gamma's body takes
seconds to compile.
"""

from __future__ import annotations

import numpy as np

from ._dispatch import _helper, and32, f32_bits, or32, pick, prefetch, sub32
from .f32 import ONE, erfinv_c, erfinv_central_poly, erfinv_f32
from .gamma import (
    LOW_MAX,
    SHIFT_MAX,
    _gamma_2t,
    _lgamma_mid,
    _lgamma_near,
    _lgamma_pos,
    _reduce,
    _reduce_low,
    gamma_f32,
    gammaln_f32,
)

F = np.float32
BLOCK = 256
AHEAD = 4096  # elements (16 KiB): ~1.3 us of gamma's loop ahead of the block in hand
LINE = 16  # float32 per 64-byte cache line
ALL_BITS = np.int32(-1)
ABS_BITS = np.int32(0x7FFFFFFF)  # a float32's bits less the sign
FINITE_MAX = np.int32(0x7F7FFFFF)  # bits of the largest finite float32
SMALLEST = np.int32(1)  # bits of the smallest positive float32 (a subnormal)
HALF_BITS = np.int32(F(0.5).view(np.int32))
GAMMA_NEAR_MAX = np.int32(np.nextafter(SHIFT_MAX, F(0)).view(np.int32))  # x < 6.5
GAMMA_LOW_MAX = np.int32(np.nextafter(LOW_MAX, F(0)).view(np.int32))  # x < 4.5
ERFINV_CENTRAL = F(0.99)  # -log(1 - y^2) < 5 below 0.9966: Giles' central polynomial
ERFINV_CENTRAL_BITS = np.int32(ERFINV_CENTRAL.view(np.int32))


@_helper
def any_outside(xs, mask, lo, hi):
    """Whether some x in xs has (bits(x) & mask) outside [lo, hi] (0 <= lo <= hi). With
    the sign bit masked off, [0, hi] is |x| <= x_hi; with it kept, [1, hi] is 0 < x <=
    x_hi (negative x have negative bits, NaN the largest). One word is ORed per element:
    b - lo and hi - b, whose sign bit is set when b lies below lo or above hi (for any
    int32 b: where one difference wraps around, the other is negative)."""
    flags = np.int32(0)
    for i in range(xs.size):
        b = and32(f32_bits(xs[i]), mask)
        flags = or32(flags, or32(sub32(b, lo), sub32(hi, b)))
    return flags < 0


@_helper
def prefetch_ahead(x, start):
    """Prefetch x[start + AHEAD : start + AHEAD + BLOCK], one call per cache line."""
    for i in range(start + AHEAD, min(start + AHEAD + BLOCK, x.size), LINE):
        prefetch(x, i)


@_helper(inline=True)
def gamma_near_f32(x):
    """gamma_f32 for 0 < x < 6.5: Gamma(2 + t), times p or over x (gamma_f32's `near`)."""
    t, f, p = _reduce(x)
    return _gamma_2t(t, f) * pick(x < ONE, ONE / x, p)


@_helper(inline=True)
def gamma_low_f32(x):
    """gamma_near_f32 for 0 < x < 4.5: two shifts, not four (the same bits)."""
    t, f, p = _reduce_low(x)
    return _gamma_2t(t, f) * pick(x < ONE, ONE / x, p)


@_helper
def erfinv_central_f32(y):
    """erfinv_f32 for |y| <= ERFINV_CENTRAL: its polynomial in w - 2.5, no tail branch."""
    a = abs(y)
    return erfinv_central_poly(erfinv_c((ONE - a) * (ONE + a))) * y


@_helper
def gamma_into(x, out):
    """out = gamma(x) over 1-D float32 arrays, blocks of 0 < x < 4.5 by gamma_low_f32, of
    0 < x < 6.5 by gamma_near_f32."""
    for start in range(0, x.size, BLOCK):
        prefetch_ahead(x, start)
        xs = x[start : start + BLOCK]
        ys = out[start : start + BLOCK]
        if not any_outside(xs, ALL_BITS, SMALLEST, GAMMA_LOW_MAX):
            for i in range(xs.size):
                ys[i] = gamma_low_f32(xs[i])
        elif not any_outside(xs, ALL_BITS, SMALLEST, GAMMA_NEAR_MAX):
            for i in range(xs.size):
                ys[i] = gamma_near_f32(xs[i])
        else:
            for i in range(xs.size):
                ys[i] = gamma_f32(xs[i])


@_helper
def _gammaln_mid_loop(xs, ys):
    """_lgamma_mid over a block, in a function of its own: the same loop written inside
    gammaln_into ran 0.37 ns per element in cache instead of 0.31 (probably its 39
    constants, hoisted out of the block loop, no longer fit the 32 vector registers)."""
    for i in range(xs.size):
        ys[i] = _lgamma_mid(xs[i])


@_helper
def gammaln_into(x, out):
    """out = gammaln(x) over 1-D float32 arrays: blocks of 0.5 <= x < 6.5 by the piecewise
    polynomial alone (_lgamma_mid), blocks of 0 < x < 6.5 by it and a log (_lgamma_near),
    blocks of finite x > 0 without the reflection (gammaln_f32's lgamma of the positive
    argument), the rest by the full body."""
    for start in range(0, x.size, BLOCK):
        prefetch_ahead(x, start)
        xs = x[start : start + BLOCK]
        ys = out[start : start + BLOCK]
        if not any_outside(xs, ALL_BITS, HALF_BITS, GAMMA_NEAR_MAX):
            _gammaln_mid_loop(xs, ys)
        elif not any_outside(xs, ALL_BITS, SMALLEST, GAMMA_NEAR_MAX):
            for i in range(xs.size):
                ys[i] = _lgamma_near(xs[i])
        elif not any_outside(xs, ALL_BITS, SMALLEST, FINITE_MAX):
            for i in range(xs.size):
                ys[i] = _lgamma_pos(xs[i])
        else:
            for i in range(xs.size):
                ys[i] = gammaln_f32(xs[i])


@_helper
def erfinv_into(x, out):
    """out = erfinv(x) over 1-D float32 arrays, blocks of |x| <= 0.99 by the central
    polynomial alone."""
    for start in range(0, x.size, BLOCK):
        prefetch_ahead(x, start)
        xs = x[start : start + BLOCK]
        ys = out[start : start + BLOCK]
        if any_outside(xs, ABS_BITS, 0, ERFINV_CENTRAL_BITS):
            for i in range(xs.size):
                ys[i] = erfinv_f32(xs[i])
        else:
            for i in range(xs.size):
                ys[i] = erfinv_central_f32(xs[i])
