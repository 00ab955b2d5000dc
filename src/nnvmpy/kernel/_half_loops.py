"""float16 <-> float32 conversion loops on the bits (imported by kernel/half.py on use).

NumPy converts float16 one element at a time (4M values: 10 ms to float16, 7 ms back,
where a float32 copy takes 0.7), and numba cannot load or store float16 on the CPU. These
loops work on the bit patterns as integers (uint16 and uint32 views), with selects in
place of branches, so LLVM vectorises them; numba's threads share the array. Results are
NumPy's bit for bit: round to nearest even, subnormals, signed zeros, infinities, NaN
payloads (top bits kept; a NaN whose kept payload would be 0 gets its last bit set, so
it stays a NaN). Each loop has a parallel build and a serial one (`*_serial`).
"""

from __future__ import annotations

import numpy as np
from numba import prange

from . import cpu_kernel
from .device import _Intrinsic


def f32_bits(x):
    """The bits of float32 x as an int32 (the CPU build: one LLVM bitcast)."""
    return np.int32(np.float32(x).view(np.int32))


f32_bits = _Intrinsic(f32_bits)  # type: ignore[assignment]


def _half_to_float_bits(h, f):
    # h: uint16 half bits -> f: uint32 float bits. Normal: rebias the exponent (112 =
    # 127 - 15); infinity / NaN: all-ones exponent, the payload shifted up; subnormal
    # m * 2^-24: the bits of float32(m) (exact) less 24 in the exponent field
    for i in prange(h.size):
        v = np.uint32(h[i])
        sign = (v & np.uint32(0x8000)) << np.uint32(16)
        e = (v >> np.uint32(10)) & np.uint32(0x1F)
        m = v & np.uint32(0x3FF)
        normal = ((e + np.uint32(112)) << np.uint32(23)) | (m << np.uint32(13))
        scaled = np.uint32(f32_bits(np.float32(m)) - np.int32(24 << 23))
        subnormal = scaled if m != np.uint32(0) else np.uint32(0)
        special = np.uint32(0x7F800000) | (m << np.uint32(13))
        body = normal if e != np.uint32(0) else subnormal
        body = special if e == np.uint32(31) else body
        f[i] = sign | body


def _float_to_half_bits(f, h):
    # f: uint32 float bits -> h: uint16 half bits, rounding to nearest even. A normal
    # half adds half an ulp (not on a tie whose last kept bit is even) and shifts; a
    # carry into the exponent is the right answer, up to infinity. A subnormal half
    # shifts the significand, implicit bit included, by 126 - e and rounds likewise.
    n = f.size
    for i in prange(n):
        u = f[i]
        sign = (u >> np.uint32(16)) & np.uint32(0x8000)
        a = u & np.uint32(0x7FFFFFFF)
        mant = a & np.uint32(0x7FFFFF)
        tie = (a & np.uint32(0x3FFF)) == np.uint32(0x1000)
        half_ulp = np.uint32(0) if tie else np.uint32(0x1000)
        normal = (a + half_ulp - np.uint32(0x38000000)) >> np.uint32(13)
        e = min(max(a >> np.uint32(23), np.uint32(102)), np.uint32(112))
        shift = np.uint32(126) - e  # 14..24
        sig = mant | np.uint32(0x800000)
        kept = sig >> shift
        lost = sig - (kept << shift)
        half_way = np.uint32(1) << (shift - np.uint32(1))
        odd = (kept & np.uint32(1)) == np.uint32(1)
        up = (lost > half_way) | ((lost == half_way) & odd)
        small = kept + (np.uint32(1) if up else np.uint32(0))
        payload = mant >> np.uint32(13)
        nan = (
            np.uint32(0x7C00)
            | payload
            | (np.uint32(1) if payload == np.uint32(0) else np.uint32(0))
        )
        body = np.uint32(0)  # below half the smallest subnormal: a signed zero
        body = small if a >= np.uint32(0x33000000) else body
        body = normal if a >= np.uint32(0x38800000) else body
        body = np.uint32(0x7C00) if a >= np.uint32(0x47800000) else body
        body = nan if a > np.uint32(0x7F800000) else body
        h[i] = np.uint16(sign | body)


half_to_float_bits = cpu_kernel(_half_to_float_bits)
half_to_float_bits_serial = cpu_kernel(_half_to_float_bits, parallel=False)
float_to_half_bits = cpu_kernel(_float_to_half_bits)
float_to_half_bits_serial = cpu_kernel(_float_to_half_bits, parallel=False)
