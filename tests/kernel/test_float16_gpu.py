"""float16 element-wise loops on the GPU compute in float32 and round once, as the CPU does.

kernel/cpu.py runs float16 arrays through float32 copies (numba has no float16 on the
CPU): every intermediate value is a float32, and the result is rounded to float16 once.
The GPU loop widens float16 arguments on load and rounds on the store (kernel/cuda.py's
make_loop), so the two devices agree bit for bit on the simulator. On a real GPU, NVVM
may contract `x * y + x` into one fused multiply-add and libdevice's expf differs from
the CPU's in the last float32 bit, so there the check is one float16 ulp.

Runs under NUMBA_ENABLE_CUDASIM=1 or on a GPU; skipped otherwise (tests/conftest.py).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import nnvmpy.kernel as K
from nnvmpy.base import cpu, gpu

cuda = pytest.importorskip("numba.cuda")

pytestmark = pytest.mark.gpu

SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
F16, F32 = np.float16, np.float32


@K.elementwise
def _mul_add(x, y):
    return x * y + x


@K.elementwise
def _exp_scale(x, s):
    return np.exp(x) * s - x


def _gpu_launch(kernel, out: np.ndarray, req: str, *args):
    dout = cuda.to_device(out)
    dargs = [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in args]
    kernel.launch(gpu(0), dout, req, *dargs)
    return dout.copy_to_host()


def _values(n: int, seed: int, low: float = -4, high: float = 4) -> np.ndarray:
    return np.random.default_rng(seed).uniform(low, high, n).astype(F16)


def _assert_same(got: np.ndarray, want: np.ndarray) -> None:
    """Bitwise on the simulator; within one float16 ulp on a GPU (FMA, libdevice)."""
    if SIMULATOR:
        np.testing.assert_array_equal(got, want)
        return
    ulps = np.abs(got.view(np.int16).astype(np.int32) - want.view(np.int16).astype(np.int32))
    assert ulps.max() <= 1, f"{ulps.max()} float16 ulps apart"


@pytest.mark.parametrize("req", ["write", "add"])
def test_float16_arrays_compute_in_float32_and_round_once(req: str) -> None:
    x, y, out0 = _values(2000, 1), _values(2000, 2), _values(2000, 3)
    wide = x.astype(F32) * y.astype(F32) + x.astype(F32)
    want = ((out0.astype(F32) + wide) if req == "add" else wide).astype(F16)
    in_half = x * y + x  # float16 arithmetic: two roundings to 11 bits
    if req == "add":
        in_half = out0 + in_half
    assert np.count_nonzero(in_half != want) > 20  # the inputs tell the two apart
    host = out0.copy()
    _mul_add.launch(cpu(), host, req, x, y)
    np.testing.assert_array_equal(host, want)
    _assert_same(_gpu_launch(_mul_add, out0.copy(), req, x, y), want)


def test_float16_math_functions_and_scalars_run_in_float32() -> None:
    x = _values(1000, 4, -3, 3)
    host = np.empty_like(x)
    _exp_scale.launch(cpu(), host, "write", x, 0.3)
    s = F32(F16(0.3))  # the scalar rounded to float16 first (MXNet's half_t(scalar))
    want = (np.exp(x.astype(F32)) * s - x.astype(F32)).astype(F16)
    np.testing.assert_array_equal(host, want)
    _assert_same(_gpu_launch(_exp_scale, np.empty_like(x), "write", x, 0.3), host)


def test_float16_inputs_into_a_float32_output_are_widened_exactly() -> None:
    x, y = _values(500, 5), _values(500, 6)
    want = x.astype(F32) * y.astype(F32) + x.astype(F32)
    host = np.empty(500, F32)
    _mul_add.launch(cpu(), host, "write", x, y)
    np.testing.assert_array_equal(host, want)
    got = _gpu_launch(_mul_add, np.empty(500, F32), "write", x, y)
    if SIMULATOR:
        np.testing.assert_array_equal(got, want)
    else:  # one fused multiply-add: within a float32 ulp of the product's size
        np.testing.assert_allclose(got, want, rtol=0, atol=2e-6 * np.abs(want).max())
