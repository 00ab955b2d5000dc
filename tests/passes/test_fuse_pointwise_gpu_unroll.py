"""A fused group's GPU loop takes four elements a stride apart per pass (fusion/codegen.py):
every input of the four is loaded before any value is computed or stored, and indices
are unsigned. The arrays here are longer than four passes of the simulator's grid (4
blocks of 32 threads) and not a multiple of it, so both the unrolled passes and the
one-at-a-time tail run: forward and backward against NumPy, with gradients written and
added (an add-mode output), in float32 and float16.

Runs under NUMBA_ENABLE_CUDASIM=1 or on a GPU; skipped otherwise (tests/conftest.py).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy import sym

pytestmark = pytest.mark.gpu

N = 4 * 128 * 2 + 37  # two unrolled passes of the simulator's grid, then a tail
TOL = {np.float32: {"rtol": 1e-5, "atol": 1e-6}, np.float16: {"rtol": 2e-3, "atol": 2e-3}}


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("grad_req", ["write", "add"])
def test_unrolled_fused_loop_matches_numpy_forward_and_backward(
    fused_sources: list[str], dtype: Any, grad_req: str
) -> None:
    gpu = nv.gpu(0)
    x, y = sym.var("x"), sym.var("y")
    out = sym.relu(x * 2.0 + y) * y
    rng = np.random.default_rng(3)
    X, Y, D = (rng.uniform(-2, 2, N).astype(dtype) for _ in range(3))
    args = {"x": nv.nd.array(X, gpu, dtype=dtype), "y": nv.nd.array(Y, gpu, dtype=dtype)}
    start = {k: rng.uniform(-1, 1, N).astype(dtype) for k in args}
    grads = {k: nv.nd.array(v, gpu, dtype=dtype) for k, v in start.items()}
    exe = out.bind(gpu, args, args_grad=grads, grad_req=grad_req)
    assert exe._fused_groups
    exe.forward(is_train=True)
    exe.backward(nv.nd.array(D, gpu, dtype=dtype))
    x64, y64, d64 = (a.astype(np.float64) for a in (X, Y, D))
    pre = 2 * x64 + y64
    want = {
        "out": np.maximum(pre, 0) * y64,
        "x": d64 * y64 * (pre > 0) * 2,
        "y": d64 * (y64 * (pre > 0) + np.maximum(pre, 0)),
    }
    if grad_req == "add":
        for k in ("x", "y"):
            want[k] = want[k] + start[k].astype(np.float64)
    got = {"out": exe.outputs[0].asnumpy(), "x": grads["x"].asnumpy(), "y": grads["y"].asnumpy()}
    for name, value in got.items():
        np.testing.assert_allclose(value.astype(np.float64), want[name], **TOL[dtype], err_msg=name)
    gpu_sources = [s for s in fused_sources if "fused kernel (gpu)" in s]
    assert gpu_sources
    for source in gpu_sources:
        unrolled = source.split("while i + ")[1].split("while i < n")[0]
        loads = [m.start() for m in re.finditer(r"= (np\.float32\()?a\d+\[i\d?\]", unrolled)]
        stores = [m.start() for m in re.finditer(r"o\d+\[i\d?\] \+?=", unrolled)]
        assert loads, source
        assert stores, source
        assert max(loads) < min(stores), source
        assert {"[i]", "[i1]", "[i2]", "[i3]"} <= set(re.findall(r"\[i\d?\]", unrolled))
