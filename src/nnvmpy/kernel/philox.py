"""Philox-4x32-10: the counter-based generator behind every random op.

A counter-based generator is a keyed bijection: `philox4x32(counter, key)` maps a 128-bit
counter to 128 random bits, with no state carried from one call to the next (Salmon et
al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011; the constants and round
structure are Random123's). So element i of a launch can compute its own numbers from
(key, counter of i) on any thread, in any order, on either device, and get the same bits:
a seed gives the same samples whatever the engine, its threads or numba's threads.

How nnvmpy lays out the 128-bit counter of one random block:

    word 0, 1   the element's stream counter: the launch's first counter + i (64 bits)
    word 2      the block index j within that element (a sampler that needs more than
                one block of 4 words, e.g. a rejection loop, takes j = 0, 1, 2, ...)
    word 3      the substream: a sampler made of two (gamma then Poisson) gives each
                stage its own, so their blocks never overlap

The key is the device's seed (resource.py). A launch reserves as many stream counters as
it has elements (`Resource.take_counters`), so the next launch continues where it ended.

Everything here is a `kernel.device_function` (one body for the CPU and the GPU) working
on uint64 values that hold 32-bit words: numba types uint64 op int64 as float64, so
every constant is a np.uint64 and callers pass counters as np.uint64 (`kernel.uindex`).
"""

from __future__ import annotations

import numpy as np

from .device import device_function

_MASK32 = np.uint64(0xFFFFFFFF)
_M0 = np.uint64(0xD2511F53)  # round multipliers
_M1 = np.uint64(0xCD9E8D57)
_W0 = np.uint64(0x9E3779B9)  # key schedule increments (golden ratio, sqrt(3) - 1)
_W1 = np.uint64(0xBB67AE85)
_S32 = np.uint64(32)
_S5 = np.uint64(5)
_S6 = np.uint64(6)
_S26 = np.uint64(26)
_TWO_M53 = 1.0 / 9007199254740992.0  # 2**-53
ROUNDS = 10


@device_function
def philox4x32(c0, c1, c2, c3, k0, k1):
    """Philox-4x32-10 of counter (c0, c1, c2, c3) under key (k0, k1); four 32-bit words.

    Every argument and result is a np.uint64 below 2**32.
    """
    for r in range(ROUNDS):
        if r > 0:
            k0 = (k0 + _W0) & _MASK32
            k1 = (k1 + _W1) & _MASK32
        p0 = _M0 * c0  # < 2**64: both factors are below 2**32
        p1 = _M1 * c2
        c0, c1, c2, c3 = (
            (p1 >> _S32) ^ c1 ^ k0,
            p1 & _MASK32,
            (p0 >> _S32) ^ c3 ^ k1,
            p0 & _MASK32,
        )
    return c0, c1, c2, c3


@device_function
def block(k0, k1, counter, j, sub):
    """The four words of block j, substream sub, of the element with stream `counter`."""
    return philox4x32(counter & _MASK32, counter >> _S32, j, sub, k0, k1)


@device_function
def unit53(hi, lo):
    """A double in [0, 1) on the 2**-53 grid, from two 32-bit words."""
    return float(((hi >> _S5) << _S26) | (lo >> _S6)) * _TWO_M53


@device_function
def uniform_pair(k0, k1, counter, j, sub):
    """Two independent doubles in [0, 1) from one block."""
    w0, w1, w2, w3 = block(k0, k1, counter, j, sub)
    return unit53(w0, w1), unit53(w2, w3)


@device_function
def uniform_bits(k0, k1, counter, bits):
    """A double in [0, 1) on the 2**-bits grid (bits <= 53), from block 0.

    Samples a uniform for an output dtype of `bits` mantissa bits (24 for float32) so
    the value is exact in that dtype and never rounds up to 1.
    """
    w0, w1, _w2, _w3 = block(k0, k1, counter, np.uint64(0), np.uint64(0))
    return unit_bits(w0, w1, bits)


@device_function
def unit_bits(hi, lo, bits):
    """A double in [0, 1) on the 2**-bits grid (bits <= 53), from two 32-bit words."""
    x = ((hi << _S32) | lo) >> (np.uint64(64) - bits)
    return float(x) / float(np.uint64(1) << bits)


@device_function
def bits64(k0, k1, counter, j, sub):
    """64 random bits (a np.uint64) from block j."""
    w0, w1, _w2, _w3 = block(k0, k1, counter, j, sub)
    return (w0 << _S32) | w1


def seed_key(seed: int, device_id: int = 0) -> tuple[np.uint64, np.uint64]:
    """The Philox key of a device for a seed: the seed's 64 bits, device ids mixed in.

    cpu(0) and gpu(0) share a key, so one seed gives them the same numbers; devices with
    different ids get unrelated streams (data-parallel replicas draw different masks).
    """
    s = int(seed) % (1 << 64)
    k0 = s & 0xFFFFFFFF
    k1 = ((s >> 32) ^ (device_id * 0x9E3779B9)) & 0xFFFFFFFF
    return np.uint64(k0), np.uint64(k1)


__all__ = [
    "ROUNDS",
    "bits64",
    "block",
    "philox4x32",
    "seed_key",
    "uniform_bits",
    "uniform_pair",
    "unit53",
]
