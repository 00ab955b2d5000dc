"""prelu's gamma gradient on the GPU against NumPy: the terms dy * x (x <= 0) a thread per
element, then summed to gamma's shape by the reduction kernels (ops/_reduce_cuda.py).

The shapes are long enough that the sums split into slices at the simulator's sizes
(64-thread blocks: a block per output splits past 2048 reduced elements, a thread per
output past 1024; on a GPU the tests shorten the block's slices, BLOCK_SLICE_MIN, so
that the same shapes split) and reach the warp, block and thread kernels. gamma takes
each layout prelu accepts, (1,), (C,), (1, C), (N, C), (N, 1) and a 1-d x's own shape,
and each output every request, dx in dy's memory too. Runs under NUMBA_ENABLE_CUDASIM=1
or on a GPU (tests/conftest.py); kept to a few thousand elements, as every simulated
thread is a Python thread.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest
from launch_spies import spy_reductions

import nnvmpy as nv
from nnvmpy import Op
from nnvmpy.attrs import fcompute
from nnvmpy.base import OpReqType
from nnvmpy.engine.base import RunContext
from nnvmpy.resource import OpContext

pytestmark = pytest.mark.gpu

SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
W, A, N, IN = (OpReqType.kWriteTo, OpReqType.kAddTo, OpReqType.kNullOp, OpReqType.kWriteInplace)
F16, F32, F64 = np.float16, np.float32, np.float64

# id -> (x shape, gamma shape, (dx req, dgamma req), whether the sum splits (simulator))
CASES: dict[str, tuple[tuple[int, ...], tuple[int, ...], tuple[Any, Any], bool]] = {
    "gamma-1-write": ((4, 2, 20, 20), (1,), (W, W), True),
    "gamma-1-add": ((4, 2, 20, 20), (1,), (A, A), True),
    "gamma-c-block": ((4, 2, 24, 24), (2,), (N, W), True),
    "gamma-c-add-inplace": ((4, 2, 24, 24), (2,), (IN, A), True),
    "gamma-c-thread": ((1100, 2), (2,), (W, A), True),
    "gamma-1c-warp": ((3, 5, 7), (1, 5), (A, W), False),
    "gamma-nc-null": ((2, 3, 40), (2, 3), (W, N), False),
    "gamma-n1": ((3, 2, 30), (3, 1), (W, W), False),
    "x-1d-gamma-1": ((2100,), (1,), (W, A), True),
    "x-1d-own-shape": ((50,), (50,), (A, W), False),
}
TOL = {F16: 2e-3, F32: 1e-5, F64: 1e-11}


@pytest.fixture
def reductions(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[Any]]:
    """The reductions launched and the slices of their sums (launch_spies.py)."""
    return spy_reductions(monkeypatch, short_slices=not SIMULATOR)


def _inputs(xs: tuple[int, ...], gs: tuple[int, ...], dtype: Any) -> list[np.ndarray]:
    """dy, x (a third of it exactly 0 or positive), gamma, and the outputs' start values."""
    rng = np.random.default_rng(sum(xs) + len(gs))
    x = rng.uniform(-1, 1, xs)
    x.reshape(-1)[::7] = 0.0
    arrays = [rng.uniform(-1, 1, xs), x, rng.uniform(0.1, 0.4, gs)]
    arrays += [rng.uniform(-1, 1, xs), rng.uniform(-1, 1, gs)]
    return [a.astype(dtype) for a in arrays]


def _reference(dy: np.ndarray, x: np.ndarray, gamma: np.ndarray) -> tuple[Any, Any]:
    """(dx, dgamma) in float64: gamma broadcast over x's axes 0 and 1 (MXNet's rule)."""
    dy, x, gamma = (a.astype(F64) for a in (dy, x, gamma))
    lead = min(x.ndim, 2)  # gamma's last axes line up with x's first two: (C,) is (1, C)
    g = gamma.reshape((1,) * (lead - gamma.ndim) + gamma.shape)
    g = g.reshape(g.shape + (1,) * (x.ndim - lead))
    dx = np.where(x > 0, dy, g * dy)
    terms = np.where(x <= 0, dy * x, 0.0)
    summed = tuple(a for a in range(x.ndim) if g.shape[a] == 1)
    return dx, terms.sum(axis=summed).reshape(gamma.shape)


def _backward_gpu(arrays: list[np.ndarray], reqs: tuple[Any, Any]) -> list[np.ndarray]:
    """_backward_LeakyReLU's FCompute<gpu> as the executor calls it; an in-place dx is
    written over dy's memory."""
    from numba import cuda

    dy, x, gamma, dx, dgamma = (cuda.to_device(a) for a in arrays)
    if reqs[0] == IN:
        dx = dy
    op = Op.get("_backward_LeakyReLU")
    attrs = op.parse_attrs({"act_type": "prelu"})
    ctx = OpContext(True, RunContext(nv.gpu(0), None), [])
    op.get_attr(fcompute("gpu"))(attrs, ctx, [dy, x, gamma], list(reqs), [dx, dgamma])
    return [dx.copy_to_host(), dgamma.copy_to_host()]


def _check(got: np.ndarray, want: np.ndarray, start: np.ndarray, req: Any, dtype: Any) -> None:
    assert got.dtype == dtype
    assert got.shape == want.shape
    if req == N:
        np.testing.assert_array_equal(got, start)
        return
    want = want + (start.astype(F64) if req == A else 0.0)
    tol = TOL[dtype] * max(np.abs(want).max(), 1.0)
    np.testing.assert_allclose(got.astype(F64), want, rtol=TOL[dtype], atol=tol)


@pytest.mark.parametrize("dtype", [F16, F32, F64], ids=["float16", "float32", "float64"])
@pytest.mark.parametrize("case", list(CASES))
def test_prelu_gradients_match_numpy(
    case: str, dtype: Any, reductions: dict[str, list[Any]]
) -> None:
    xs, gs, reqs, split = CASES[case]
    arrays = _inputs(xs, gs, dtype)
    dx, dgamma = _backward_gpu(arrays, reqs)
    want_dx, want_dgamma = _reference(*arrays[:3])
    _check(dx, want_dx, arrays[3], reqs[0], dtype)
    _check(dgamma, want_dgamma, arrays[4], reqs[1], dtype)
    calls, slices = reductions["calls"], reductions["slices"]
    assert len(calls) == (reqs[1] != N), f"{case}: dgamma was not summed by the reductions"
    assert (max(slices, default=1) > 1) == split, f"{case}: slices {slices}"
