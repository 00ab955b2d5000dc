"""multi_sum_sq, multi_lars, all_finite, multi_all_finite and reset_arrays against NumPy."""

from __future__ import annotations

import os
from collections.abc import Iterator

import numpy as np
import pytest

import nnvmpy as nv
import optimizer_formulas as F

SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"


@pytest.fixture
def dev(ctx: nv.Context) -> Iterator[nv.Context]:
    if ctx.device_type == "gpu" and SIMULATOR:
        with nv.engine.engine_type("NaiveEngine"):
            yield ctx
    else:
        yield ctx


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_multi_sum_sq_matches_numpy(dev: nv.Context, dtype: type) -> None:
    rng = np.random.default_rng(0)
    big = 5000 if SIMULATOR and dev.device_type == "gpu" else 70_000  # > one CPU chunk
    xs = [rng.normal(size=s).astype(dtype) for s in [(3, 4), (big,), (1,), (0,)]]
    got = nv.nd.multi_sum_sq(*[nv.nd.array(x, ctx=dev, dtype=dtype) for x in xs], num_arrays=4)
    want = [np.sum(x.astype(np.float64) ** 2) for x in xs]
    assert got.dtype == np.float32
    assert got.shape == (4,)
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6)


def test_multi_sum_sq_counts_its_inputs() -> None:
    xs = [nv.nd.ones((2,)), nv.nd.ones((3,))]
    np.testing.assert_array_equal(nv.nd.multi_sum_sq(*xs).asnumpy(), [2.0, 3.0])
    s = nv.sym.multi_sum_sq(nv.sym.Variable("a"), nv.sym.Variable("b"), num_arrays=2)
    assert s.infer_shape(a=(2, 3), b=(4,))[1] == [(2,)]


def test_multi_lars_with_sums_of_squares(dev: nv.Context) -> None:
    rng = np.random.default_rng(1)
    ws = [rng.normal(size=(5, 3)) for _ in range(3)] + [np.zeros((2,))]
    gs = [rng.normal(size=w.shape) for w in ws]
    w_sq = nv.nd.multi_sum_sq(*[nv.nd.array(w, ctx=dev) for w in ws], num_arrays=4)
    g_sq = nv.nd.multi_sum_sq(*[nv.nd.array(g, ctx=dev) for g in gs], num_arrays=4)
    lrs = np.array([0.1, 0.2, 0.3, 0.4], np.float32)
    wds = np.array([0.01, 0.0, 0.1, 0.0], np.float32)
    got = nv.nd.multi_lars(nv.nd.array(lrs, ctx=dev), w_sq, g_sq, nv.nd.array(wds, ctx=dev),
                           eta=0.9, eps=1e-6, rescale_grad=0.5)  # fmt: skip
    want = F.lars(lrs, np.array([np.sum(w * w) for w in ws]), np.array([np.sum(g * g) for g in gs]),
                  wds, eta=0.9, eps=1e-6, rescale_grad=0.5)  # fmt: skip
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5)
    assert got.asnumpy()[3] == pytest.approx(0.4)  # no weights: the lr is left alone


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
def test_all_finite_finds_any_non_finite_value(dev: nv.Context, bad: float) -> None:
    x = np.zeros((50, 7), np.float32)
    assert nv.nd.all_finite(nv.nd.array(x, ctx=dev)).asnumpy().tolist() == [1.0]
    x[31, 2] = bad
    assert nv.nd.all_finite(nv.nd.array(x, ctx=dev)).asnumpy().tolist() == [0.0]
    ok = nv.nd.array(np.ones(3), ctx=dev)
    flag = nv.nd.multi_all_finite(ok, nv.nd.array(x, ctx=dev), ok, num_arrays=3)
    assert flag.asnumpy().tolist() == [0.0]


def test_large_finite_values_are_finite_and_summed_in_float64() -> None:
    x = np.full(1000, 1e38, np.float32)  # x * x overflows float32, not float64
    assert nv.nd.all_finite(nv.nd.array(x)).asnumpy().tolist() == [1.0]
    y = np.full(100_000, 1e-3, np.float32)  # float32 sums would drift by ~1e-4 relative
    got = nv.nd.multi_sum_sq(nv.nd.array(y), num_arrays=1).asnumpy()[0]
    assert got == pytest.approx(100_000 * np.float64(np.float32(1e-3)) ** 2, rel=1e-6)


def test_float64_values_whose_square_overflows_are_finite(dev: nv.Context) -> None:
    x = np.array([1e200, -1.7e308, 3.0], np.float64)  # x * x is inf for the first two
    assert nv.nd.all_finite(nv.nd.array(x, ctx=dev, dtype=np.float64)).asnumpy().tolist() == [1.0]
    x[2] = np.inf
    assert nv.nd.all_finite(nv.nd.array(x, ctx=dev, dtype=np.float64)).asnumpy().tolist() == [0.0]


def test_all_finite_without_init_output_only_clears_the_flag() -> None:
    """init_output=False carries a flag across calls (AMP checks gradients one by one)."""
    flag = nv.nd.array([1.0])
    nv.nd.all_finite(nv.nd.array([1.0, 2.0]), init_output=False, out=flag)
    assert flag.asnumpy().tolist() == [1.0]
    nv.nd.all_finite(nv.nd.array([1.0, np.nan]), init_output=False, out=flag)
    assert flag.asnumpy().tolist() == [0.0]
    nv.nd.multi_all_finite(nv.nd.array([1.0]), num_arrays=1, init_output=False, out=flag)
    assert flag.asnumpy().tolist() == [0.0]  # a later finite array does not set it back
    nv.nd.multi_all_finite(nv.nd.array([1.0]), num_arrays=1, out=flag)
    assert flag.asnumpy().tolist() == [1.0]


def test_reset_arrays_zeroes_its_inputs_in_place(dev: nv.Context) -> None:
    a = nv.nd.array(np.arange(6.0).reshape(2, 3), ctx=dev)
    b = nv.nd.array(np.ones(4), ctx=dev, dtype=np.float16)
    keep = nv.nd.array(np.ones(2), ctx=dev)
    assert nv.nd.reset_arrays(a, b, num_arrays=2) == []
    np.testing.assert_array_equal(a.asnumpy(), 0)
    np.testing.assert_array_equal(b.asnumpy(), 0)
    np.testing.assert_array_equal(keep.asnumpy(), 1)


def test_bad_counts_are_named_errors() -> None:
    x = nv.nd.ones((2,))
    with pytest.raises(nv.NNVMError, match=r"multi_sum_sq: expects 3 inputs, got 2"):
        nv.nd.multi_sum_sq(x, x, num_arrays=3)
    with pytest.raises(nv.ParamError, match=r"multi_lars.*missing.*'eta'"):
        nv.nd.multi_lars(x, x, x, x, eps=0.1)
    with pytest.raises(nv.InferError, match=r"multi_lars.*'weights_sum_sq'"):
        nv.nd.multi_lars(x, nv.nd.ones((3,)), x, x, eta=1.0, eps=0.1)
    assert nv.nd.multi_sum_sq(x, x).asnumpy().tolist() == [2.0, 2.0]
