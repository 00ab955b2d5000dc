"""kernel.half: float16 <-> float32 on the bits, NumPy's results bit for bit.

Every float16 pattern up; down, every exponent of both signs with the mantissas that
decide rounding (ties on even and odd last bits, one below and above), random ones, the
subnormal and overflow edges and NaN payloads; then the paths that use it (nd.cast, a
float16 element-wise op, a float16 layer through float32 copies) at sizes that take the
NumPy, serial and threaded conversions.
"""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy import threads
from nnvmpy.kernel import half


def _float_patterns() -> np.ndarray:
    rng = np.random.default_rng(0)
    mantissas = [0, 1, 0xFFF, 0x1000, 0x1001, 0x1FFF, 0x2000, 0x2FFF, 0x3000, 0x3001]
    mantissas += [0x400000, 0x7FE000, 0x7FEFFF, 0x7FF000, 0x7FF001, 0x7FFFFF]
    mantissas += list(rng.integers(0, 1 << 23, 200))
    exponents = np.arange(256, dtype=np.uint32)
    bits = (exponents[:, None] << 23) | np.array(mantissas, dtype=np.uint32)[None, :]
    bits = bits.ravel()
    low = np.arange(0x33000000 - 4096, 0x38800000 + 4096, 97, dtype=np.uint32)  # subnormals
    edge = np.arange(0x477FE000 - 4096, 0x47800000 + 4096, dtype=np.uint32)  # to infinity
    bits = np.concatenate([bits, low, edge])
    return np.concatenate([bits, bits | np.uint32(0x80000000)])


def _pad(bits: np.ndarray, n: int) -> np.ndarray:
    """bits repeated to n values: large enough for the numba loops (MIN_SIZE)."""
    return np.resize(bits, max(n, bits.size))


@pytest.mark.parametrize("parallel", [False, True])
def test_every_half_converts_up_as_numpy(parallel: bool) -> None:
    h = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    if parallel:
        h = np.tile(h, max(1, -(-threads.parallel_size() // h.size)))
    got = half.to_float32(h)
    want = h.astype(np.float32)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    into = np.empty(h.shape, np.float32)
    assert half.to_float32(h, into) is into
    np.testing.assert_array_equal(into.view(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize("parallel", [False, True])
def test_floats_round_down_as_numpy(parallel: bool) -> None:
    bits = _float_patterns()
    if parallel:
        bits = _pad(bits, 2 * threads.parallel_size())
    x = bits.view(np.float32)
    out = np.empty(x.shape, np.float16)
    half.store(out, x)
    with np.errstate(over="ignore"):
        want = x.astype(np.float16)
    np.testing.assert_array_equal(out.view(np.uint16), want.view(np.uint16))


def test_small_and_strided_arrays_take_numpy() -> None:
    x = np.linspace(-70000, 70000, 301, dtype=np.float32)
    out = np.empty(301, np.float16)
    with np.errstate(over="ignore"):
        half.store(out, x)
        np.testing.assert_array_equal(out, x.astype(np.float16))
    wide = np.arange(2 * half.MIN_SIZE, dtype=np.float16)[::2]
    np.testing.assert_array_equal(half.to_float32(wide), wide.astype(np.float32))


@pytest.mark.parametrize("n", [300, half.MIN_SIZE + 3, 1 << 20])
def test_cast_and_float16_ops_agree_with_numpy(n: int) -> None:
    """nd.cast both ways, an element-wise float16 op (float32 copies in kernel/cpu.py)
    and a float16 layer (Pooling, through run_via_float32), written and added."""
    rng = np.random.default_rng(n)
    x = (rng.standard_normal(n) * 3000).astype(np.float32)
    x[:4] = [np.nan, np.inf, -0.0, 1e-7]
    h = nv.nd.cast(nv.nd.array(x), dtype="float16").asnumpy()
    np.testing.assert_array_equal(h.view(np.uint16), x.astype(np.float16).view(np.uint16))
    back = nv.nd.cast(nv.nd.array(h, dtype="float16"), dtype="float32").asnumpy()
    np.testing.assert_array_equal(back.view(np.uint32), h.astype(np.float32).view(np.uint32))
    hx = nv.nd.array(h, dtype="float16")
    with np.errstate(invalid="ignore"):
        want = (h.astype(np.float32) * 2.5).astype(np.float16)
    np.testing.assert_array_equal((hx * 2.5).asnumpy(), want)
    acc = nv.nd.array(h, dtype="float16")
    acc += hx
    np.testing.assert_array_equal(acc.asnumpy(), (h.astype(np.float32) * 2).astype(np.float16))
    planes = h[: n - n % 4].reshape(1, -1, 2, 2)
    pooled = nv.nd.Pooling(nv.nd.array(planes, dtype="float16"), kernel=(2, 2), pool_type="sum")
    want = planes.astype(np.float32).sum(axis=(2, 3), keepdims=True).astype(np.float16)
    np.testing.assert_array_equal(pooled.asnumpy(), want)
