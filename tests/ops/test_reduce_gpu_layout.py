"""The GPU reductions' layouts against NumPy: which kernel reads x coalesced for each
layout, and that every layout gives NumPy's answer.

ops/_reduce_cuda.py maps by which side of x is contiguous: the reduced side (x's innermost dim
is reduced) takes a warp per output when short, a block per output when long; the kept
side takes a thread per output. With few outputs and a long reduction the block and
thread kernels cut the reduction into slices, and a second launch combines the partial
results. The shapes below reach each path under the simulator's sizes (64-thread
blocks: a warp per output below 128 reduced elements); the split tests lower the split
thresholds, which are module constants. Runs under NUMBA_ENABLE_CUDASIM=1 or on a GPU
(tests/conftest.py); kept tiny, as every simulated thread is a Python thread.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from launch_spies import split_reductions_early, spy_reduce_kernels

import nnvmpy as nv
from nnvmpy import nd, sym
from nnvmpy.engine import engine_type
from nnvmpy.ops import _reduce_cuda as red

pytestmark = pytest.mark.sim_barriers  # the GPU tests below are marked gpu one by one

SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
F16, F32, I32 = np.float16, np.float32, np.int32
F64 = np.float64
TOL: dict[Any, dict[str, float]] = {
    F16: {"rtol": 1e-3, "atol": 1e-3},
    F32: {"rtol": 1e-5, "atol": 1e-6},
    I32: {"rtol": 0, "atol": 0},
}

# id -> (shape, reduce parameters, kernels launched at the simulator's sizes)
LAYOUTS: dict[str, tuple[tuple[int, ...], dict[str, Any], list[str]]] = {
    "reduced-inner-short": ((6, 40), {"axis": -1}, ["warp"]),
    "reduced-inner-long": ((3, 300), {"axis": -1}, ["block"]),
    "every-axis": ((5, 7), {"axis": None}, ["warp"]),
    "kept-inner": ((150, 5), {"axis": 0}, ["thread"]),
    "middle-axis": ((4, 50, 3), {"axis": 1, "keepdims": True}, ["thread"]),
    "middle-axis-inner-1": ((4, 50, 1), {"axis": 1}, ["warp"]),
    "two-axes-short": ((4, 6, 5), {"axis": (0, 2)}, ["warp"]),
    "two-axes-long": ((3, 4, 50), {"axis": (0, 2), "keepdims": True}, ["block"]),
    "two-axes-exclude": ((4, 6, 5), {"axis": 1, "exclude": True}, ["warp"]),
    "two-axes-kept-inner": ((2, 7, 3, 5), {"axis": (0, 2)}, ["thread"]),
}
if not SIMULATOR:  # a GPU's blocks are 256 threads: a warp per output below 512
    for _case in ("reduced-inner-long", "two-axes-long"):
        LAYOUTS[_case] = (*LAYOUTS[_case][:2], ["warp"])

# id -> (shape, reduce parameters, kernels launched with the split thresholds lowered)
SPLITS: dict[str, tuple[tuple[int, ...], dict[str, Any], list[str]]] = {
    "kept-inner": ((300, 5), {"axis": 0}, ["thread", "thread"]),
    "kept-inner-two-axes": ((40, 3, 30, 2), {"axis": (0, 2)}, ["thread", "thread"]),
    "reduced-inner": ((2, 400), {"axis": -1}, ["block", "thread"]),
    "reduced-inner-two-axes": ((3, 2, 100), {"axis": (0, 2)}, ["block", "thread"]),
    "every-axis": ((600,), {"axis": None}, ["block", "warp"]),
}

# reducer -> (nd function, its parameters, NumPy reference over axes with keepdims)
Ref = Callable[[np.ndarray, tuple[int, ...]], np.ndarray]
REDUCERS: dict[str, tuple[str, dict[str, Any], Ref]] = {
    "sum": ("sum", {}, lambda v, a: v.sum(axis=a, keepdims=True)),
    "mean": ("mean", {}, lambda v, a: v.mean(axis=a, keepdims=True)),
    "prod": ("prod", {}, lambda v, a: v.prod(axis=a, keepdims=True)),
    "max": ("max", {}, lambda v, a: v.max(axis=a, keepdims=True)),
    "min": ("min", {}, lambda v, a: v.min(axis=a, keepdims=True)),
    "nansum": ("nansum", {}, lambda v, a: np.nansum(v, axis=a, keepdims=True)),
    "nanprod": ("nanprod", {}, lambda v, a: np.nanprod(v, axis=a, keepdims=True)),
    "norm1": ("norm", {"ord": 1}, lambda v, a: np.abs(v).sum(axis=a, keepdims=True)),
    "norm2": ("norm", {"ord": 2}, lambda v, a: np.sqrt((v * v).sum(axis=a, keepdims=True))),
}
BY_DTYPE = {
    F32: list(REDUCERS),
    F16: ["sum", "mean", "max", "nansum", "norm2"],
    I32: ["sum", "prod", "max", "min", "nansum"],  # values in {-1, 1}: products stay exact
}
NAMES = {F16: "float16", F32: "float32", I32: "int32"}


@pytest.fixture
def gpu() -> Iterator[Any]:
    """The simulator runs one kernel at a time; the naive engine keeps launches in order."""
    with engine_type("NaiveEngine"):
        yield nv.gpu(0)


@pytest.fixture
def launches(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int, int]]:
    """(kernel, blocks, threads) of the reduce kernels launched, in order; the kernel is
    'thread', 'warp' or 'block'."""
    return spy_reduce_kernels(monkeypatch)


@pytest.fixture
def split_early(monkeypatch: pytest.MonkeyPatch) -> None:
    """Split thresholds low enough for the shapes in SPLITS, and the simulator's block
    size on a GPU too (a warp per output below 128 elements)."""
    split_reductions_early(monkeypatch, block_slices=False)
    monkeypatch.setattr(red, "BLOCK_SLICE_MIN", 1)


def _values(shape: tuple[int, ...], dtype: Any, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == I32:
        return rng.choice(np.array([-1, 1], I32), shape)
    return rng.uniform(0.9, 1.1, shape).astype(dtype)


def _axes(ndim: int, params: dict[str, Any]) -> tuple[int, ...]:
    axis = params.get("axis")
    if axis is None:
        return tuple(range(ndim))
    named = {a % ndim for a in ((axis,) if isinstance(axis, int) else axis)}
    return tuple(d for d in range(ndim) if (d in named) != params.get("exclude", False))


def _reference(x: np.ndarray, reducer: str, params: dict[str, Any]) -> np.ndarray:
    """NumPy in float64, shaped as the op's output (MXNet's (1,) for a full reduction)."""
    axes = _axes(x.ndim, params)
    want = REDUCERS[reducer][2](x.astype(F64), axes)
    if not params.get("keepdims"):
        want = want.reshape([n for d, n in enumerate(x.shape) if d not in axes] or [1])
    return want


def _check(gpu: Any, x: np.ndarray, reducer: str, params: dict[str, Any]) -> None:
    fn, extra, _ = REDUCERS[reducer]
    got = getattr(nd, fn)(nd.array(x, ctx=gpu, dtype=x.dtype), **params, **extra).asnumpy()
    want = _reference(x, reducer, params)
    assert got.dtype == x.dtype, reducer
    assert got.shape == want.shape, reducer
    if x.dtype == I32:
        want = want.astype(I32)
    np.testing.assert_allclose(got.astype(F64), want, **TOL[x.dtype.type], err_msg=reducer)


def _norm_params(x: np.ndarray, params: dict[str, Any]) -> dict[str, Any]:
    """norm takes no `exclude`: the same axes, named."""
    return {"axis": _axes(x.ndim, params), "keepdims": params.get("keepdims", False)}


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", list(BY_DTYPE), ids=NAMES.get)
@pytest.mark.parametrize("case", list(LAYOUTS))
def test_each_layout_launches_its_kernel_and_matches_numpy(
    gpu: Any, launches: list[tuple[str, int, int]], case: str, dtype: Any
) -> None:
    shape, params, kernels = LAYOUTS[case]
    x = _values(shape, dtype, 1)
    for reducer in BY_DTYPE[dtype]:
        launches.clear()
        use = _norm_params(x, params) if REDUCERS[reducer][0] == "norm" else params
        _check(gpu, x, reducer, use)
        assert [name for name, _, _ in launches] == kernels, reducer


@pytest.mark.gpu
@pytest.mark.usefixtures("split_early")
@pytest.mark.parametrize("case", list(SPLITS))
def test_few_outputs_split_the_reduction_into_slices(
    gpu: Any, launches: list[tuple[str, int, int]], case: str
) -> None:
    shape, params, kernels = SPLITS[case]
    # every partial-result rule but nansum/nanprod (the NaN test splits those)
    f32 = ["sum", "mean", "prod", "max", "min", "norm1", "norm2"]
    for dtype, reducers in ((F32, f32), (F16, ["sum", "norm2"]), (I32, ["max"])):
        x = _values(shape, dtype, 2)
        for reducer in reducers:
            launches.clear()
            use = _norm_params(x, params) if REDUCERS[reducer][0] == "norm" else params
            _check(gpu, x, reducer, use)
            assert [name for name, _, _ in launches] == kernels, (reducer, dtype)


@pytest.mark.gpu
@pytest.mark.usefixtures("split_early")
@pytest.mark.parametrize(
    ("shape", "axis"),
    [((6, 40), -1), ((3, 300), -1), ((150, 5), 0), ((300, 5), 0), ((600,), None)],
    ids=["warp", "block", "thread", "thread-split", "block-split"],
)
def test_nan_propagates_through_max_min_and_sum_and_nan_reducers_skip_it(
    gpu: Any, shape: tuple[int, ...], axis: Any
) -> None:
    x = _values(shape, F32, 3)
    flat = x.reshape(-1)
    flat[::37] = np.nan  # some outputs see NaN, first, last or in between; others none
    if axis == 0:
        x[:, 1] = 1.0  # an output with no NaN
    for reducer in ("max", "min", "sum", "nansum", "nanprod"):
        _check(gpu, x, reducer, {"axis": axis})
    x[...] = np.nan  # nansum of nothing but NaN is 0, nanprod 1
    for reducer in ("nansum", "nanprod", "max"):
        _check(gpu, x, reducer, {"axis": axis})


@pytest.mark.gpu
@pytest.mark.usefixtures("split_early")
@pytest.mark.parametrize(
    ("small", "big"),
    [((6, 1), (6, 40)), ((3, 1), (3, 300)), ((1, 5), (150, 5)), ((1, 5), (300, 5))],
    ids=["warp", "block", "thread", "thread-split"],
)
def test_broadcast_to_gradient_adds_the_sum_over_broadcast_axes(
    gpu: Any, small: tuple[int, ...], big: tuple[int, ...]
) -> None:
    """reduce_to with req 'add': broadcast_to's gradient under grad_req='add'."""
    dy = _values(big, F32, 4)
    x = nd.array(np.zeros(small, F32), ctx=gpu)
    dx = nd.array(np.full(small, 0.25, F32), ctx=gpu)
    exe = sym.broadcast_to(sym.var("x"), shape=big).bind(
        gpu, {"x": x}, args_grad={"x": dx}, grad_req="add"
    )
    exe.forward(is_train=True)
    exe.backward(nd.array(dy, ctx=gpu))
    want = 0.25 + dy.astype(F64).sum(axis=small.index(1), keepdims=True)
    np.testing.assert_allclose(dx.asnumpy(), want, **TOL[F32])


@pytest.mark.gpu
def test_zero_size_reductions_give_the_identity_and_size_one_axes_copy(gpu: Any) -> None:
    x = np.zeros((3, 0), F32)
    got = nd.sum(nd.array(x, ctx=gpu), axis=1).asnumpy()
    np.testing.assert_array_equal(got, np.zeros(3, F32))
    got = nd.prod(nd.array(x, ctx=gpu), axis=1).asnumpy()
    np.testing.assert_array_equal(got, np.ones(3, F32))
    y = _values((4, 1, 3), F32, 5)
    got = nd.sum(nd.array(y, ctx=gpu), axis=1).asnumpy()
    np.testing.assert_array_equal(got, y[:, 0])


# -- the host side of the mapping ------------------------------------------------------------


def test_step_digits_are_the_step_in_the_reduced_dims_mixed_radix() -> None:
    # reduced dims (4, 5), strides (30, 1): 32 = 1*20 + 2*5 + 2 -> digits (2, 2) mod dims
    assert red._step_meta([4, 5, 30, 1], 32) == [4, 5, 30, 1, 2, 2, 1, 32]
    assert red._step_meta([300, 1], 64) == [300, 1, 64, 0, 64]
    assert red._step_meta([0, 1], 32) == [0, 1, 0, 0, 32]  # empty: nothing to step through


def test_slices_need_a_long_reduction_and_few_outputs(monkeypatch: pytest.MonkeyPatch) -> None:
    assert red._slices(1000, 1, 1, 1) == 1  # under SPLIT_MIN
    assert red._slices(1 << 20, 64, 1, 1) == 1024  # sqrt(total), within MAX_SLICES
    assert red._slices(1 << 20, 1 << 16, 1, 1) == 2  # SPLIT_THREADS // outputs
    assert red._slices(1 << 20, 1 << 17, 1, 1) == 1  # enough outputs already
    assert red._slices(1 << 20, 1, 256, 32) == 128  # a block slice: 32 elements a thread
    monkeypatch.setattr(red, "MAX_SLICES", 10)
    total = 100_000
    slices = red._slices(total, 1, 1, 1)
    chunk = -(-total // slices)
    assert slices <= 10
    assert (slices - 1) * chunk < total <= slices * chunk  # no empty slice
