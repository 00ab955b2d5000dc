"""IdentityAttachKLSparseReg's backward on the GPU (ops/nn/_kl_sparse_cuda.py) against
NumPy in float64.

The GPU path sums each channel on the reduction kernels (x seen as (outer, C, inner)
reduced to (1, C, 1)), updates moving_avg and the penalty a thread per channel and
writes dx a thread per element. The cases reach the thread kernel (inner 1, adjacent
channels; split into slices past 1024 rows on the simulator), the warp kernel (short
channel planes) and the block kernel, split (64-thread simulated blocks split past 2048
elements; on a GPU the slices are shortened so the same shapes split); one channel, one
element, 3-d and 4-d data; dx written, added and not requested (moving_avg updated
regardless); float16/32/64. Spies check the reductions and loops launched, that the
only scratch is float64 channel sums and that the CPU's channel loop never runs.
FCompute is called directly; a few thousand elements a case at most, every simulated
thread being a Python thread.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest
from fcompute_call import close_to
from launch_spies import (
    forbid_loop,
    spy_item_launches,
    spy_reduce_kernels,
    spy_reductions,
    spy_scratch,
)

import nnvmpy as nv
from nnvmpy import Op
from nnvmpy.attrs import fcompute
from nnvmpy.base import InferError, OpReqType
from nnvmpy.engine import engine_type
from nnvmpy.engine.base import RunContext
from nnvmpy.ops import _reduce_cuda
from nnvmpy.ops.nn import _kl_sparse_cuda as kl_cuda
from nnvmpy.ops.nn import kl_sparse as kl
from nnvmpy.resource import OpContext

pytestmark = pytest.mark.gpu

SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
OP = "_backward_IdentityAttachKLSparseReg"
W, A, N = OpReqType.kWriteTo, OpReqType.kAddTo, OpReqType.kNullOp
F16, F32, F64 = np.float16, np.float32, np.float64
DTYPES = [pytest.param(t, id=np.dtype(t).name) for t in (F16, F32, F64)]
PARAMS = {"sparseness_target": 0.2, "penalty": 0.01, "momentum": 0.8}

# id -> (x shape, dx req, reduction kernel, whether the sums split)
CASES: dict[str, tuple[tuple[int, ...], Any, str, bool]] = {
    "nc-thread": ((40, 24), W, "thread", False),
    "nc-thread-split": ((1100, 2), A, "thread", True),
    "nc-null": ((30, 5), N, "thread", False),
    "one-channel": ((50, 1), W, "warp", False),
    "one-element": ((1, 1), A, "thread", False),
    "nchw-warp": ((2, 3, 4, 5), W, "warp", False),
    "ncl-warp": ((3, 4, 7), A, "warp", False),
    "nchw-block": ((3, 2, 10, 15), W, "block", False),
    "nchw-block-split": ((1, 2, 50, 45), A, "block", True),
    "nchw-null-split": ((1, 1, 50, 45), N, "block", True),
}


@pytest.fixture
def spies(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[Any]]:
    """The reductions (target shapes) and their slices, the reduction kernels, the loops'
    item counts and the scratch allocated; the CPU's channel loop fails if launched."""
    seen = spy_reductions(monkeypatch, short_slices=not SIMULATOR)
    if not SIMULATOR:  # the simulator's 64-thread blocks: the same shapes, the same kernels
        monkeypatch.setattr(_reduce_cuda, "BLOCK", _reduce_cuda.SIM_BLOCK)
    seen["scratch"] = spy_scratch(monkeypatch)
    forbid_loop(monkeypatch, kl, "_kl_grad_channel", "the CPU's thread-per-channel loop ran")
    seen["items"] = spy_item_launches(monkeypatch, kl_cuda._kl_channel_loop, kl_cuda._kl_grad_loop)
    seen["kernels"] = spy_reduce_kernels(monkeypatch)
    return seen


def _inputs(shape: tuple[int, ...], dtype: Any) -> list[np.ndarray]:
    """dy, x (activations in (0.05, 0.95)), moving_avg (C,), dx's start."""
    rng = np.random.default_rng(sum(shape) + len(shape))
    arrays = [rng.normal(size=shape), rng.uniform(0.05, 0.95, shape)]
    arrays += [rng.uniform(0.2, 0.8, shape[1]), rng.normal(size=shape)]
    return [a.astype(dtype) for a in arrays]


def _reference(dy: np.ndarray, x: np.ndarray, avg: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(dx, moving_avg) in float64 with PARAMS: the mean over every axis but 1."""
    rho, penalty, momentum = (PARAMS[k] for k in ("sparseness_target", "penalty", "momentum"))
    axes = tuple(a for a in range(x.ndim) if a != 1)
    ma = momentum * avg.astype(F64) + (1 - momentum) * x.astype(F64).mean(axis=axes)
    reg = penalty * (-rho / ma + (1 - rho) / (1 - ma))
    shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    return dy.astype(F64) + reg.reshape(shape), ma


def _run(inputs: list[np.ndarray], start: np.ndarray, req: Any) -> tuple[np.ndarray, np.ndarray]:
    """FCompute<gpu> on copies of (dy, x, moving_avg); (dx, moving_avg) as host arrays."""
    from numba import cuda

    op = Op.get(OP)
    ins = [cuda.to_device(np.ascontiguousarray(a)) for a in inputs]
    dx = cuda.to_device(np.ascontiguousarray(start))
    opctx = OpContext(True, RunContext(nv.gpu(0), None), [])
    op.get_attr(fcompute("gpu"))(op.parse_attrs(PARAMS), opctx, ins, [req], [dx])
    return dx.copy_to_host(), ins[2].copy_to_host()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", list(CASES))
def test_backward_matches_numpy(case: str, dtype: Any, spies: dict[str, list[Any]]) -> None:
    shape, req, kernel, split = CASES[case]
    dy, x, avg, start = _inputs(shape, dtype)
    dx, new_avg = _run([dy, x, avg], start, req)
    want, want_avg = _reference(dy, x, avg)
    if req == A:
        want = want + start.astype(F64)
    elif req == N:
        want = start.astype(F64)
    close_to(dx, want, dtype, f"{case}: dx")
    close_to(new_avg, want_avg, dtype, f"{case}: moving_avg")
    C = shape[1]
    assert spies["calls"] == [(1, C, 1)]
    assert spies["items"] == ([C] if req == N else [C, x.size])
    launched = [k for k, _, _ in spies["kernels"]]
    assert launched[0] == kernel
    assert (len(launched) == 2) == split  # a split's second launch combines the slices
    assert any(s > 1 for s in spies["slices"]) == split
    # float64 channel sums (and a split's partial sums) only
    partials = [(s * C, np.dtype(F64)) for s in spies["slices"] if s > 1]
    assert spies["scratch"] == [(C, np.dtype(F64)), *partials]


def test_empty_data_launches_nothing(spies: dict[str, list[Any]]) -> None:
    dy = np.zeros((0, 3), F32)
    dx, new_avg = _run([dy, dy, np.full(3, 0.5, F32)], dy, W)
    assert dx.shape == (0, 3)
    assert (new_avg == 0.5).all()
    assert spies["items"] == []
    assert spies["calls"] == []


def test_executor_backward_and_bad_input_on_the_gpu() -> None:
    """Forward and backward of a bound symbol on the GPU; bad shapes refused as on the CPU."""
    rng = np.random.default_rng(3)
    x, dy = rng.uniform(0.05, 0.95, size=(64, 3, 2)), rng.normal(size=(64, 3, 2))
    with engine_type("NaiveEngine"):
        ctx = nv.gpu(0)
        sym = nv.sym.IdentityAttachKLSparseReg(nv.sym.var("x"), name="kl", **PARAMS)
        exe = sym.simple_bind(ctx, x=x.shape, type_dict={"x": F64})
        exe.aux_dict["kl_moving_avg"][:] = 0.5
        exe.forward(is_train=True, x=x)
        exe.backward(nv.nd.array(dy, ctx=ctx, dtype=F64))
        want, want_avg = _reference(dy, x, np.full(3, 0.5))
        np.testing.assert_allclose(exe.aux_dict["kl_moving_avg"].asnumpy(), want_avg, rtol=1e-12)
        np.testing.assert_allclose(exe.grad_dict["x"].asnumpy(), want, rtol=1e-12, atol=1e-14)
        with pytest.raises(InferError, match="IdentityAttachKLSparseReg"):
            nv.nd.IdentityAttachKLSparseReg(nv.nd.ones((3,), ctx=ctx), nv.nd.ones((3,), ctx=ctx))
