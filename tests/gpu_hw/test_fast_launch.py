"""kernel/cuda_fast.py on a real GPU: element-wise ops launched directly give the same
bits as numba-cuda's launches, and the direct path is really taken (they passed on an H200,
and NNVMPY_GPU_FAST_LAUNCH's default became 1)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.kernel import cuda_fast

pytestmark = [pytest.mark.gpu]

CASES: dict[str, Callable[[Any, Any], Any]] = {
    "plus scalar": lambda x, y: x + 1.5,
    "times": lambda x, y: x * y,
    "relu": lambda x, y: nv.nd.relu(x - y),
    "exp": lambda x, y: nv.nd.exp(x),
    "where": lambda x, y: nv.nd.where(x > y, x, y),
    "rpower scalar": lambda x, y: 2.0**x,
    "clip": lambda x, y: nv.nd.clip(x, -0.5, 0.5),
    # the other launchers: broadcast map, hand-written kernels, parallel_for bodies
    "broadcast add": lambda x, y: nv.nd.broadcast_add(x, nv.nd.sum(y, axis=0, keepdims=True)),
    "softmax": lambda x, y: nv.nd.softmax(x, axis=1),
    "take": lambda x, y: nv.nd.take(x, nv.nd.array([3, 0, 32], ctx=x.context), axis=0),
    # a 2-D block on a 3-D grid: the tiled GEMM (NNVMPY_CUPY=0), split-K's sum after it
    "dot, tiled kernel": lambda x, y: _without_cublas(nv.nd.dot, x, y, transpose_b=True),
}


def _without_cublas(op: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    with nv.test_utils.environment("NNVMPY_CUPY", "0"):
        out = op(*args, **kwargs)
        out.wait_to_read()
    return out


@pytest.fixture
def direct_launches(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts cuda.core launches made by cuda_fast (they still run)."""
    cuda_fast._import_numba()
    real = cuda_fast._numba["launch"]
    count: list[int] = []

    def counted(*args: Any) -> None:
        count.append(1)
        real(*args)

    monkeypatch.setitem(cuda_fast._numba, "launch", counted)
    return count


def _run(case: str, dtype: str, fast: bool) -> np.ndarray:
    cuda_fast.set_enabled(fast)
    try:
        rng = np.random.default_rng(3)
        gpu = nv.gpu(0)
        x = nv.nd.array(rng.standard_normal((33, 17)), ctx=gpu, dtype=dtype)
        y = nv.nd.array(rng.standard_normal((33, 17)), ctx=gpu, dtype=dtype)
        out = None
        for _ in range(3):  # the first launch per worker thread is numba's
            out = CASES[case](x, y)
        assert out is not None
        return out.asnumpy()
    finally:
        cuda_fast.set_enabled(None)


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_direct_launches_give_numbas_bits(case: str, dtype: str, direct_launches: list) -> None:
    want = _run(case, dtype, fast=False)
    assert not direct_launches
    got = _run(case, dtype, fast=True)
    assert direct_launches, "no launch took the direct path"
    np.testing.assert_array_equal(got.view(f"u{got.itemsize}"), want.view(f"u{want.itemsize}"))


def test_integer_outputs_and_out_arguments(direct_launches: list) -> None:
    for fast in (False, True, True):
        cuda_fast.set_enabled(fast)
        try:
            gpu = nv.gpu(0)
            a = nv.nd.array(np.arange(-40, 40), ctx=gpu, dtype=np.int32)
            acc = nv.nd.ones((80,), ctx=gpu, dtype=np.int32)
            nv.nd.elemwise_add(a, a, out=acc)
            got = (acc * 3).asnumpy()
        finally:
            cuda_fast.set_enabled(None)
        np.testing.assert_array_equal(got, 6 * np.arange(-40, 40))
    assert direct_launches
