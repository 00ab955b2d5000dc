"""Philox-4x32-10 against Random123's known-answer vectors, on every device build."""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.kernel import parallel_for
from nnvmpy.kernel.philox import philox4x32, seed_key, uniform_bits, unit53

U = np.uint64
# Random123's kat_vectors for philox4x32_10: (counter, key) -> output
KAT = [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    (
        (0xFFFFFFFF,) * 4,
        (0xFFFFFFFF, 0xFFFFFFFF),
        (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD),
    ),
    (
        (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344),
        (0xA4093822, 0x299F31D0),
        (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1),
    ),
]


@parallel_for
def _philox_rows(i, out, ctr, key):
    w0, w1, w2, w3 = philox4x32(
        ctr[4 * i], ctr[4 * i + 1], ctr[4 * i + 2], ctr[4 * i + 3], key[2 * i], key[2 * i + 1]
    )
    out[4 * i] = w0
    out[4 * i + 1] = w1
    out[4 * i + 2] = w2
    out[4 * i + 3] = w3


def _kat_arrays() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    ctr = np.array([c for c, _, _ in KAT], dtype=np.uint64).ravel()
    key = np.array([k for _, k, _ in KAT], dtype=np.uint64).ravel()
    want = np.array([w for _, _, w in KAT], dtype=np.uint64).ravel()
    return ctr, key, want


@pytest.mark.parametrize(("counter", "key", "want"), KAT)
def test_python_body_matches_random123(counter, key, want) -> None:
    got = philox4x32(*map(U, counter), *map(U, key))
    assert tuple(int(w) for w in got) == want


def test_compiled_cpu_body_matches_random123() -> None:
    ctr, key, want = _kat_arrays()
    out = np.zeros_like(want)
    _philox_rows.launch(nv.cpu(), len(KAT), out, ctr, key)
    np.testing.assert_array_equal(out, want)


@pytest.mark.gpu
def test_gpu_body_matches_random123() -> None:
    from numba import cuda

    ctr, key, want = _kat_arrays()
    out = cuda.to_device(np.zeros_like(want))
    _philox_rows.launch(nv.gpu(0), len(KAT), out, cuda.to_device(ctr), cuda.to_device(key))
    np.testing.assert_array_equal(out.copy_to_host(), want)


def test_unit_interval_ends() -> None:
    top = U(0xFFFFFFFF)
    assert unit53(U(0), U(0)) == 0.0
    assert unit53(top, top) == 1.0 - 2.0**-53  # the largest double below 1
    for bits, dtype in ((24, np.float32), (11, np.float16)):
        # the largest draw on a 2**-bits grid stays below 1 in that dtype
        u = uniform_bits(U(0), U(0), U(0), U(bits))
        assert 0.0 <= u < 1.0
        assert float(dtype(u)) == u
        assert dtype(1.0 - 2.0**-bits) < 1


def test_seed_key_takes_64_bits_and_the_device_id() -> None:
    assert seed_key(5) == (U(5), U(0))
    assert seed_key(5 + (3 << 32)) == (U(5), U(3))
    assert seed_key(-1) == (U(0xFFFFFFFF), U(0xFFFFFFFF))  # two's complement, as c_int64
    assert seed_key(5, 0) != seed_key(5, 1)
