"""A fused group's float parameters on the GPU are float32 in a float32 group, as on the CPU.

fusion/compute.py passes float parameters to a float32 group's CPU loop as float32
(MXNet's `x * DType(scalar)`); the GPU loop gets Python floats and converts them before
its grid-stride loop, so `x * 0.1` has the CPU's bits. On the simulator NumPy 2's weak
Python floats compute in float32 either way, so the generated source is checked too.

On a real GPU `x * 0.1 + y` contracts into a fused multiply-add (NVVM's default), so
there the results are checked to a few roundings of the terms (|x|, |y| <= 10); on the
simulator (plain Python) bitwise.

Runs under NUMBA_ENABLE_CUDASIM=1 or on a GPU; skipped otherwise (tests/conftest.py).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy import sym

pytestmark = pytest.mark.gpu
SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"


def _same(on_gpu: np.ndarray, on_cpu: np.ndarray) -> None:
    if SIMULATOR:
        np.testing.assert_array_equal(on_gpu, on_cpu)
    else:  # fused multiply-adds on the device: roundings of terms up to ~10 skipped
        atol = 8 * np.finfo(on_cpu.dtype).eps * 10
        np.testing.assert_allclose(on_gpu, on_cpu, rtol=0, atol=atol)


def _run(ctx: Any, dtype: Any) -> np.ndarray:
    x, y = sym.var("x"), sym.var("y")
    s = (x * 0.1 + y) * (1 / 3) - 0.7
    rng = np.random.default_rng(5)
    X, Y = (rng.uniform(-10, 10, (4, 25)).astype(dtype) for _ in range(2))
    args = {"x": nv.nd.array(X, ctx, dtype=dtype), "y": nv.nd.array(Y, ctx, dtype=dtype)}
    exe = s.bind(ctx, args)
    assert exe._fused_groups
    exe.forward()
    return exe.outputs[0].asnumpy()


def test_float32_group_gpu_equals_cpu_bitwise_with_float32_parameters(
    fused_sources: list[str],
) -> None:
    on_cpu = _run(nv.cpu(), np.float32)
    on_gpu = _run(nv.gpu(0), np.float32)
    _same(on_gpu, on_cpu)
    gpu_source = next(src for src in fused_sources if "(gpu)" in src)
    assert "p0 = np.float32(r0)" in gpu_source  # converted once, before the loop
    assert gpu_source.count("np.float32(r") == 3


def test_float64_group_keeps_python_float_parameters(fused_sources: list[str]) -> None:
    on_cpu = _run(nv.cpu(), np.float64)
    on_gpu = _run(nv.gpu(0), np.float64)
    _same(on_gpu, on_cpu)
    gpu_source = next(src for src in fused_sources if "(gpu)" in src)
    assert "np.float32(r" not in gpu_source
