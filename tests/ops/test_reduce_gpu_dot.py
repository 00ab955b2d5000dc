"""reduce_dot_gpu and the 'sumsq' reducer (ops/_reduce_cuda.py) against NumPy.

reduce_dot_gpu sums x * y of two arrays of one shape on reduce_gpu's kernels, the product
taken in the loads (both as float64, nothing stored): L2Normalization's backward sums
dy * y with it instead of writing a scratch of products first. 'sumsq' is 'nrm2'
without the square root. Checked here: every layout reaches the kernel reduce_gpu
takes for it (warp, block, thread, and split into slices), with the same launches; the
values against NumPy for float16/32/64 inputs, write and add, a scale, float64 and
float32 outputs, size-1 and empty reductions; products exact for float16/float32 (a
float32 product would round); no scratch but a split's partials; sumsq of x equals
reduce_dot_gpu(x, x) bit for bit and nrm2 squared to rounding; bad input raises. Runs
under NUMBA_ENABLE_CUDASIM=1 or on a GPU (tests/conftest.py); tiny shapes, as every
simulated thread is a Python thread.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest
from launch_spies import split_reductions_early, spy_reduce_kernels

import nnvmpy as nv
from nnvmpy.base import NNVMError
from nnvmpy.engine.base import RunContext
from nnvmpy.kernel import scratch
from nnvmpy.ops import _reduce_cuda as red
from nnvmpy.resource import OpContext

pytestmark = [pytest.mark.gpu, pytest.mark.sim_barriers]

SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
F16, F32, F64 = np.float16, np.float32, np.float64
DTYPES = [pytest.param(t, id=np.dtype(t).name) for t in (F16, F32, F64)]

# id -> (x shape, target shape, kernels launched at the simulator's sizes)
LAYOUTS: dict[str, tuple[tuple[int, ...], tuple[int, ...], list[str]]] = {
    "reduced-inner-short": ((6, 40), (6, 1), ["warp"]),
    "reduced-inner-long": ((3, 300), (3, 1), ["block" if SIMULATOR else "warp"]),
    "every-axis": ((5, 7), (1, 1), ["warp"]),
    "kept-inner": ((150, 5), (1, 5), ["thread"]),
    "middle-axis": ((4, 50, 3), (4, 1, 3), ["thread"]),
    "middle-axis-inner-1": ((4, 50, 1), (4, 1, 1), ["warp"]),
    "two-axes-kept-inner": ((2, 7, 3, 5), (1, 7, 1, 5), ["thread"]),
    "size-1-axis": ((4, 1, 3), (4, 1, 3), ["thread"]),
    "empty": ((3, 0, 4), (3, 1, 4), ["thread"]),
}
# id -> (x shape, target shape, kernels launched with the split thresholds lowered)
SPLITS: dict[str, tuple[tuple[int, ...], tuple[int, ...], list[str]]] = {
    "kept-inner": ((300, 5), (1, 5), ["thread", "thread"]),
    "reduced-inner": ((2, 400), (2, 1), ["block", "thread"]),
    "every-axis": ((600,), (1,), ["block", "warp"]),
}


def _ctx() -> Any:
    return OpContext(True, RunContext(nv.gpu(0), None), [])


@pytest.fixture
def launches(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int, int]]:
    """(kernel, blocks, threads) of the reduce kernels launched, in order."""
    return spy_reduce_kernels(monkeypatch)


@pytest.fixture
def scratches(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, Any]]:
    """(size, dtype) of every scratch array taken."""
    seen: list[tuple[int, Any]] = []
    real = scratch.empty

    def empty(ctx: Any, size: int, dtype: Any) -> Any:
        seen.append((size, np.dtype(dtype)))
        return real(ctx, size, dtype)

    monkeypatch.setattr(scratch, "empty", empty)
    return seen


@pytest.fixture
def split_early(monkeypatch: pytest.MonkeyPatch) -> None:
    """Split thresholds low enough for SPLITS, and the simulator's block size on a GPU."""
    split_reductions_early(monkeypatch)


def _values(shape: tuple[int, ...], dtype: Any, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1.0, 1.0, shape).astype(dtype)


def _dot(
    x: np.ndarray, y: np.ndarray, small: tuple[int, ...], start: np.ndarray, add: bool,
    scale: float = 1.0,
) -> np.ndarray:  # fmt: skip
    """reduce_dot_gpu on device copies; out as a host array."""
    from numba import cuda

    out = cuda.to_device(start)
    xs, ys = cuda.to_device(x), cuda.to_device(y)
    red.reduce_dot_gpu(_ctx(), out, add, xs, ys, small, scale, "test_dot")
    return out.copy_to_host()


def _reduce(x: np.ndarray, small: tuple[int, ...], how: str, out_dtype: Any = F64) -> np.ndarray:
    from numba import cuda

    out = cuda.to_device(np.zeros(small, out_dtype))
    red.reduce_gpu(_ctx(), out, False, cuda.to_device(x), small, how, 1.0, "test_reduce")
    return out.copy_to_host()


def _reference(x: np.ndarray, y: np.ndarray, small: tuple[int, ...]) -> np.ndarray:
    axes = tuple(d for d, n in enumerate(small) if n == 1 and x.shape[d] != 1)
    return (x.astype(F64) * y.astype(F64)).sum(axis=axes, keepdims=True).reshape(small)


def _check_dot(shape: tuple[int, ...], small: tuple[int, ...], dtype: Any, seed: int) -> None:
    """Write and add (scaled), float64 and float32 outputs, against NumPy."""
    x, y = _values(shape, dtype, seed), _values(shape, dtype, seed + 1)
    want = _reference(x, y, small)
    got = _dot(x, y, small, np.full(small, 7.0), False)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)
    start = _values(small, F64, seed + 2)
    got = _dot(x, y, small, start, True, 0.5)
    np.testing.assert_allclose(got, start + 0.5 * want, rtol=1e-13, atol=1e-13)
    got32 = _dot(x, y, small, np.zeros(small, F32), False)
    assert got32.dtype == F32
    np.testing.assert_allclose(got32, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", list(LAYOUTS))
def test_each_layout_takes_reduce_gpus_kernel_and_matches_numpy(
    case: str, dtype: Any, launches: list[Any], scratches: list[Any]
) -> None:
    shape, small, kernels = LAYOUTS[case]
    _check_dot(shape, small, dtype, 1)
    assert [k for k, _, _ in launches] == kernels * 3, case
    assert scratches == [], case  # unsplit: no scratch at all, never the products
    # the launches reduce_gpu makes for a sum over the same layout
    dot_launches = list(launches)
    launches.clear()
    _reduce(_values(shape, dtype, 1), small, "sum")
    assert launches == dot_launches[: len(kernels)], case


@pytest.mark.usefixtures("split_early")
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", list(SPLITS))
def test_few_outputs_split_the_dot_into_slices(
    case: str, dtype: Any, launches: list[Any], scratches: list[Any]
) -> None:
    shape, small, kernels = SPLITS[case]
    _check_dot(shape, small, dtype, 2)
    assert [k for k, _, _ in launches] == kernels * 3, case
    # only the float64 partials of the slices, a (slices, outputs) array per call
    outputs = int(np.prod(small))
    assert len(scratches) == 3, scratches
    assert all(dt == F64 and size % outputs == 0 for size, dt in scratches), scratches
    assert all(size < int(np.prod(shape)) for size, _ in scratches), scratches


@pytest.mark.parametrize(
    ("dtype", "v"), [(F32, 1.0 + 2.0**-12), (F16, 1.0 + 2.0**-6)], ids=["float32", "float16"]
)
@pytest.mark.parametrize(("shape", "small"), [((2, 40), (2, 1)), ((40, 3), (1, 3))])
def test_products_are_exact_for_float16_and_float32(
    dtype: Any, v: float, shape: tuple[int, ...], small: tuple[int, ...]
) -> None:
    """v * v needs more bits than dtype has: a product rounded to dtype (the old
    L2Normalization scratch held float32 products) would lose its last term; float64
    keeps it, and the sum of 40 is exact too."""
    assert float(dtype(v * v)) != v * v
    x = np.full(shape, v, dtype)
    got = _dot(x, x, small, np.zeros(small), False)
    n = shape[0] if small[0] == 1 else shape[1]
    np.testing.assert_array_equal(got, np.full(small, n * (v * v)))


@pytest.mark.parametrize("case", ["reduced-inner-short", "kept-inner", "middle-axis", "empty"])
def test_sumsq_is_the_dot_of_x_with_itself_and_nrm2_squared(case: str) -> None:
    shape, small, _ = LAYOUTS[case]
    x = _values(shape, F32, 4)
    sumsq = _reduce(x, small, "sumsq")
    np.testing.assert_array_equal(sumsq, _dot(x, x, small, np.zeros(small), False))
    np.testing.assert_allclose(sumsq, _reference(x, x, small), rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(sumsq, _reduce(x, small, "nrm2") ** 2, rtol=1e-14, atol=0)


@pytest.mark.usefixtures("split_early")
@pytest.mark.parametrize("case", list(SPLITS))
def test_split_sumsq_adds_its_partials_without_a_root(case: str, launches: list[Any]) -> None:
    shape, small, kernels = SPLITS[case]
    x = _values(shape, F16, 5)
    got = _reduce(x, small, "sumsq", F32)
    assert [k for k, _, _ in launches] == kernels
    np.testing.assert_allclose(got, _reference(x, x, small), rtol=1e-6)


def test_large_float64_squares_sum_without_overflow() -> None:
    """Squares near 1e306 summed to near the float64 limit stay finite."""
    x = np.full((2, 150), 1.2e153) * np.random.default_rng(6).uniform(0.5, 1.0, (2, 150))
    want = (x * x).sum(axis=1, keepdims=True)
    assert np.isfinite(want).all()
    assert want.max() > 1e308
    np.testing.assert_allclose(_reduce(x, (2, 1), "sumsq"), want, rtol=1e-14)
    np.testing.assert_allclose(_dot(x, x, (2, 1), np.zeros((2, 1)), False), want, rtol=1e-14)


def test_bad_input_raises() -> None:
    from numba import cuda

    x = cuda.to_device(np.ones((3, 4)))
    out = cuda.to_device(np.zeros((3, 1)))
    with pytest.raises(ValueError, match="one shape"):
        red.reduce_dot_gpu(_ctx(), out, False, x, cuda.to_device(np.ones((4, 3))), (3, 1), 1.0)
    with pytest.raises(NNVMError, match="data2"):
        red.reduce_dot_gpu(_ctx(), out, False, x, np.ones((3, 4)), (3, 1), 1.0)
    with pytest.raises(KeyError):  # the dot is its own function, not a reducer name
        red.reduce_gpu(_ctx(), out, False, x, (3, 1), "dot", 1.0)
