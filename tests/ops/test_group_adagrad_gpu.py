"""_contrib_group_adagrad_update on the GPU (ops/optimizer/_group_adagrad_cuda.py) against
NumPy in float64.

The GPU path sums clip(rescale * grad, bound)^2 per row on the reduction kernels
(_reduce_cuda.reduce_clip_sq_gpu, no clipped copy stored), updates the history a thread
per row and writes the weights a thread per element. The cases reach the warp, block and
split block kernels (the simulator's blocks are 64 threads: a block per row from 128
columns, split into slices past 2048; a GPU's are made 64 too, so the same shapes take
the same kernels), with and without clipping, history (rows,) and (rows, 1), rows over
trailing axes, one row, one column, no columns (NaN history, as on the CPU), every
request (out over weight's memory too), float16/32/64. Spies check the loops launched,
the reduction kernels and slices, that the only scratch is float64 row sums (no
gradient-sized copy) and that the CPU's row loop never runs. FCompute is called
directly; a few thousand elements a case, every simulated thread being a Python thread.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest
from fcompute_call import close_to
from launch_spies import forbid_loop, spy_item_launches, spy_reduce_kernels, spy_scratch

import nnvmpy as nv
from nnvmpy import Op
from nnvmpy.attrs import fcompute
from nnvmpy.base import OpReqType
from nnvmpy.engine import engine_type
from nnvmpy.engine.base import RunContext
from nnvmpy.ops import _reduce_cuda
from nnvmpy.ops.optimizer import _group_adagrad_cuda as ga_cuda
from nnvmpy.ops.optimizer import group_adagrad as ga
from nnvmpy.resource import OpContext

pytestmark = pytest.mark.gpu

SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
OP = "_contrib_group_adagrad_update"
W, A, N, IN = (OpReqType.kWriteTo, OpReqType.kAddTo, OpReqType.kNullOp, OpReqType.kWriteInplace)
F16, F32, F64 = np.float16, np.float32, np.float64
DTYPES = [pytest.param(t, id=np.dtype(t).name) for t in (F16, F32, F64)]

# id -> (weight shape, history shape, req, params, reduction kernel, whether the sums split)
Case = tuple[tuple[int, ...], tuple[int, ...], Any, dict[str, float], str, bool]
CLIP = {"lr": 0.1, "rescale_grad": 2.0, "clip_gradient": 0.9, "epsilon": 1e-4}
PLAIN = {"lr": 0.05}
CASES: dict[str, Case] = {
    "warp-write": ((5, 7), (5, 1), W, CLIP, "warp", False),
    "warp-add-1d-history": ((6, 40), (6,), A, PLAIN, "warp", False),
    "block-inplace": ((3, 200), (3, 1), IN, CLIP, "block", False),
    "block-trailing-axes": ((4, 3, 50), (4,), A, CLIP, "block", False),
    "block-null": ((2, 300), (2, 1), N, CLIP, "block", False),
    "split-write": ((2, 2500), (2, 1), W, CLIP, "block", True),
    "split-inplace-noclip": ((1, 2300), (1,), IN, {"lr": 0.2, "rescale_grad": 0.5}, "block", True),
    "one-row-one-col": ((1, 1), (1, 1), W, CLIP, "thread", False),
    "one-col": ((300, 1), (300,), A, CLIP, "thread", False),
}


@pytest.fixture
def spies(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[Any]]:
    """The reductions asked for, their slices and kernels, the loops' item counts and the
    scratch allocated; the CPU's row loop fails if launched."""
    seen: dict[str, list[Any]] = {"calls": [], "slices": []}
    real_clip, real_slices = _reduce_cuda.reduce_clip_sq_gpu, _reduce_cuda._slices

    def clip_sq(ctx: Any, out: Any, add: bool, x: Any, small: Any, *rest: Any) -> None:
        seen["calls"].append((tuple(x.shape), tuple(small), rest))
        real_clip(ctx, out, add, x, small, *rest)

    def slices(*args: Any) -> int:
        seen["slices"].append(real_slices(*args))
        return seen["slices"][-1]

    monkeypatch.setattr(_reduce_cuda, "reduce_clip_sq_gpu", clip_sq)
    monkeypatch.setattr(_reduce_cuda, "_slices", slices)
    seen["scratch"] = spy_scratch(monkeypatch)
    forbid_loop(monkeypatch, ga, "group_adagrad_loop", "the CPU's thread-per-row loop ran")
    if not SIMULATOR:  # the simulator's 64-thread blocks, so the same shapes take the
        monkeypatch.setattr(_reduce_cuda, "BLOCK", _reduce_cuda.SIM_BLOCK)  # same kernels
    seen["items"] = spy_item_launches(monkeypatch, ga_cuda._ga_rate_loop, ga_cuda._ga_apply_loop)
    seen["kernels"] = spy_reduce_kernels(monkeypatch)
    return seen


def _inputs(shape: tuple[int, ...], hist: tuple[int, ...], dtype: Any) -> list[np.ndarray]:
    """weight, grad (some rows all zero, some beyond the clip), history, out's start."""
    rng = np.random.default_rng(sum(shape) + len(hist))
    grad = rng.uniform(-1, 1, shape)
    grad[::3] = 0.0
    arrays = [rng.uniform(-1, 1, shape), grad, rng.uniform(0.1, 1, hist)]
    return [a.astype(dtype) for a in (*arrays, rng.uniform(-1, 1, shape))]


def _reference(
    weight: np.ndarray, grad: np.ndarray, history: np.ndarray, lr: float,
    rescale_grad: float = 1.0, clip_gradient: float = -1.0, epsilon: float = 1e-5,
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """(new weight, new history) in float64, MXNet's documented rule."""
    rows = weight.shape[0]
    w, g = weight.astype(F64).reshape(rows, -1), grad.astype(F64).reshape(rows, -1) * rescale_grad
    if clip_gradient >= 0:
        g = np.clip(g, -clip_gradient, clip_gradient)
    h = history.astype(F64).reshape(rows, 1) + (g * g).mean(axis=1, keepdims=True)
    out = w - lr * g / np.sqrt(h + epsilon)
    return out.reshape(weight.shape), h.reshape(history.shape)


def _run(
    params: dict[str, float], inputs: list[np.ndarray], start: np.ndarray, req: Any
) -> tuple[np.ndarray, np.ndarray]:
    """FCompute<gpu> on copies of inputs; (output, history) as host arrays. kWriteInplace
    writes into weight's memory (the output is the weight afterwards)."""
    from numba import cuda

    op = Op.get(OP)
    ctx = nv.gpu(0)
    ins = [cuda.to_device(np.ascontiguousarray(a)) for a in inputs]
    out = ins[0] if req == IN else cuda.to_device(np.ascontiguousarray(start))
    opctx = OpContext(True, RunContext(ctx, None), [])
    op.get_attr(fcompute("gpu"))(op.parse_attrs(params), opctx, ins, [req], [out])
    return out.copy_to_host(), ins[2].copy_to_host()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", list(CASES))
def test_update_matches_numpy(case: str, dtype: Any, spies: dict[str, list[Any]]) -> None:
    shape, hist, req, params, kernel, split = CASES[case]
    weight, grad, history, start = _inputs(shape, hist, dtype)
    out, new_history = _run(params, [weight, grad, history], start, req)
    want, want_history = _reference(weight, grad, history, **params)
    if req == A:
        want = want + start.astype(F64)
    elif req == N:
        want = start.astype(F64)
    close_to(out, want, dtype, f"{case}: out")
    close_to(new_history, want_history, dtype, f"{case}: history")
    rows = shape[0]
    cols = weight.size // rows
    assert [c[:2] for c in spies["calls"]] == [((rows, cols), (rows, 1))]
    real = F64 if dtype == F64 else F32
    bound = params.get("clip_gradient", -1.0)
    rescale = params.get("rescale_grad", 1.0)
    assert spies["calls"][0][2][:2] == (float(real(rescale)), float(real(bound)))
    assert spies["items"] == ([rows] if req == N else [rows, rows * cols])
    launched = [k for k, _, _ in spies["kernels"]]
    assert launched[0] == kernel
    assert (len(launched) == 2) == split  # a split's second launch combines the slices
    assert any(s > 1 for s in spies["slices"]) == split
    # float64 row sums (and a split's partial sums) only: no copy of the clipped gradient
    partials = [(s * rows, np.dtype(F64)) for s in spies["slices"] if s > 1]
    assert spies["scratch"] == [(rows, np.dtype(F64)), *partials]


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # simulator
def test_no_columns_give_nan_history_as_on_the_cpu(spies: dict[str, list[Any]]) -> None:
    """cols = 0: the history grows by 0 / 0 on both devices; there is nothing to write."""
    weight, grad = np.zeros((3, 0), F32), np.zeros((3, 0), F32)
    history = np.array([0.5, 0.1, 0.0], F32)
    out, new_history = _run(CLIP, [weight, grad, history], np.zeros((3, 0), F32), W)
    assert out.shape == (3, 0)
    assert np.isnan(new_history).all()
    assert spies["items"] == [3]  # no elements: the element loop is not launched


def test_no_rows_launch_nothing(spies: dict[str, list[Any]]) -> None:
    weight = np.zeros((0, 4), F32)
    out, new_history = _run(CLIP, [weight, weight, np.zeros((0, 1), F32)], weight, W)
    assert out.shape == (0, 4)
    assert new_history.shape == (0, 1)
    assert spies["items"] == []
    assert spies["calls"] == []


def test_steps_through_the_engine_and_bad_input_is_refused() -> None:
    """nd calls on a GPU array, several steps in place, against NumPy, the reduction's
    parameters uploaded once; shape errors as on the CPU."""
    rng = np.random.default_rng(5)
    w0 = rng.normal(size=(4, 150))
    with engine_type("NaiveEngine"):
        ctx = nv.gpu(0)
        w = nv.nd.array(w0, ctx=ctx, dtype=F64)
        h = nv.nd.zeros((4, 1), ctx=ctx, dtype=F64)
        want_w, want_h = w0.copy(), np.zeros((4, 1))
        params = []  # the (rescale, bound) device array the reduction read, each step
        for _ in range(2):
            g = rng.normal(size=(4, 150))
            nv.nd.contrib.group_adagrad_update(
                w, nv.nd.array(g, ctx=ctx, dtype=F64), h, lr=0.05, clip_gradient=1.0, out=w
            )
            want_w, want_h = _reference(want_w, g, want_h, lr=0.05, clip_gradient=1.0)
            params.append(_reduce_cuda._clip_params[(0, 1.0, 1.0)])
        assert params[0] is params[1]  # cached by value: no upload per step
        np.testing.assert_array_equal(params[0].copy_to_host(), [1.0, 1.0])
        np.testing.assert_allclose(h.asnumpy(), want_h, rtol=1e-12)
        np.testing.assert_allclose(w.asnumpy(), want_w, rtol=1e-12)
        with pytest.raises(nv.NNVMError, match=f"{OP}: input 'history'"):
            nv.nd.contrib.group_adagrad_update(w, w, nv.nd.zeros((3, 1), ctx=ctx), lr=0.1)
