"""GPU element-wise loops take a float scalar in the output's precision, as the CPU does.

kernel/cpu.py converts a Python float to float32 for a float32 out (MXNet's
`x op DType(scalar)`), and rounds it to float16 first for a float16 out. The GPU loop does
the same inside the compiled loop, so a float32 `x * 0.1` gives the CPU's bits. The probe
kernel tells the scalar's precision apart directly: `s - float64(0.1)` is 0 for a float64
0.1 and -1.49e-9 for a float32 one (on the simulator too, where NumPy 2's weak Python
floats would otherwise make the float32 product match by accident).

On a real GPU an adding loop may round differently: `out += x * s` contracts into one
fused multiply-add (NVVM's default), so there the add case is checked to the rounding of x * s; the
write case and the simulator (plain Python) stay bitwise.

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


@K.elementwise
def _scale(x, s):
    return x * s


@K.elementwise
def _shift_scale(x, s, t):
    return (x + t) * s


@K.elementwise
def _probe(x, s):
    return x * 0 + (s - np.float64(0.1)) * np.float64(1e9)


SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"


def _x(n: int, dtype: type = np.float32) -> np.ndarray:
    return np.random.default_rng(3).uniform(-10, 10, n).astype(dtype)


def _gpu_launch(kernel, out: np.ndarray, req: str, *args):
    dout = cuda.to_device(out)
    dargs = [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in args]
    kernel.launch(gpu(0), dout, req, *dargs)
    return dout.copy_to_host()


@pytest.mark.parametrize("req", ["write", "add"])
@pytest.mark.parametrize("s", [0.1, 1 / 3, np.float64(0.7)], ids=["0.1", "1/3", "np0.7"])
def test_float32_gpu_result_is_the_cpu_result_bitwise(req: str, s: float) -> None:
    x = _x(100)
    host = np.ones_like(x)
    _scale.launch(cpu(), host, req, x, s)
    got = _gpu_launch(_scale, np.ones_like(x), req, x, s)
    want = x * np.float32(s) + (np.float32(1) if req == "add" else np.float32(0))
    if req == "add" and not SIMULATOR:  # one fused multiply-add on the GPU: x * s unrounded
        bound = 2 * np.finfo(np.float32).eps * (np.abs(x * np.float32(s)) + 1)
        assert np.all(np.abs(got - host) <= bound)
        assert np.all(np.abs(got - want) <= bound)
        return
    np.testing.assert_array_equal(got, host)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_the_loop_sees_a_float32_scalar(dtype: type) -> None:
    x = np.zeros(8, dtype)
    got = _gpu_launch(_probe, np.empty_like(x), "write", x, 0.1)
    s = np.float32(np.float16(0.1)) if dtype is np.float16 else np.float32(0.1)
    want = np.float64(s) - 0.1  # -1.49e-9 (float32) or -2.44e-5 (float16 first): not 0
    np.testing.assert_array_equal(got, np.full(8, want * 1e9, dtype))
    assert got[0] != 0


def test_float16_rounds_the_scalar_to_float16_first() -> None:
    x = _x(50, np.float16)
    host = np.empty_like(x)
    _shift_scale.launch(cpu(), host, "write", x, 0.7, 0.3)
    got = _gpu_launch(_shift_scale, np.empty_like(x), "write", x, 0.7, 0.3)
    s, t = np.float32(np.float16(0.7)), np.float32(np.float16(0.3))
    np.testing.assert_array_equal(host, ((x.astype(np.float32) + t) * s).astype(np.float16))
    np.testing.assert_array_equal(got, host)


@pytest.mark.parametrize("dtype", [np.float64, np.int32])
def test_float64_and_integer_outputs_keep_the_python_float(dtype: type) -> None:
    x = np.arange(-5, 6).astype(dtype)
    got = _gpu_launch(_probe, np.empty_like(x), "write", x, 0.1)
    np.testing.assert_array_equal(got, np.zeros_like(x))  # 0.1 - 0.1: the float64 scalar
    scaled = _gpu_launch(_scale, np.empty_like(x), "write", x, 2.5)
    np.testing.assert_array_equal(scaled, (x * 2.5).astype(dtype))
