"""_histogram and nd/sym.histogram against numpy.histogram, and their named errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.base import NNVMError, ParamError


def _data(shape: tuple[int, ...], dtype: str = "float64", seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).normal(0, 2, size=shape).astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("bins", [1, 3, 10])
def test_equal_width_bins_match_numpy(dtype: str, bins: int) -> None:
    x = _data((7, 11, 3), dtype)
    x.flat[:2] = [-2.5, 2.5]  # both ends of the range: the right one is inclusive
    counts, edges = nv.nd.histogram(nv.nd.array(x, dtype=dtype), bins=bins, range=(-2.5, 2.5))
    want_counts, want_edges = np.histogram(x, bins, range=(-2.5, 2.5))
    assert counts.dtype == np.int64
    assert edges.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(counts.asnumpy(), want_counts)
    np.testing.assert_allclose(edges.asnumpy(), want_edges, rtol=1e-6)


def test_many_elements_use_several_chunks() -> None:
    x = _data((100_003,), "float64", seed=1)
    counts, _ = nv.nd.histogram(nv.nd.array(x, dtype="float64"), bins=37, range=(-3.0, 4.0))
    np.testing.assert_array_equal(counts.asnumpy(), np.histogram(x, 37, range=(-3.0, 4.0))[0])


def test_empty_range_is_widened_by_half_as_numpy() -> None:
    x = np.array([1.0, 1.0, 0.7, 1.4, 3.0])
    counts, edges = nv.nd.histogram(nv.nd.array(x, dtype="float64"), bins=4, range=(1.0, 1.0))
    want_counts, want_edges = np.histogram(x, 4, range=(1.0, 1.0))
    np.testing.assert_array_equal(counts.asnumpy(), want_counts)
    np.testing.assert_allclose(edges.asnumpy(), want_edges)


def test_given_edges_match_numpy_including_nan_and_outside() -> None:
    x = _data((5, 8))
    x.flat[:5] = [np.nan, -1.0, 50.0, 0.5, 60.0]
    edges = np.array([-1.0, 0.5, 2.0, 4.5, 50.0])
    counts, out_edges = nv.nd.histogram(nv.nd.array(x, dtype="float64"), bins=nv.nd.array(edges))
    want_counts, _ = np.histogram(x[~np.isnan(x)], edges)
    np.testing.assert_array_equal(counts.asnumpy(), want_counts)
    np.testing.assert_allclose(out_edges.asnumpy(), edges)


def test_int_bins_without_range_use_numpy_with_a_warning() -> None:
    x = _data((20,))
    with pytest.warns(UserWarning, match="range is not specified"):
        counts, edges = nv.nd.histogram(nv.nd.array(x, dtype="float64"), bins=6)
    want_counts, want_edges = np.histogram(x, 6)
    np.testing.assert_array_equal(counts.asnumpy(), want_counts)
    np.testing.assert_allclose(edges.asnumpy(), want_edges, rtol=1e-6)


def test_symbol_forms_bind_and_match_numpy() -> None:
    x = _data((3, 4, 5))
    data, bins = nv.sym.Variable("data"), nv.sym.Variable("bins")
    s1 = nv.sym.histogram(a=data, bins=5, range=(-3.0, 3.0))
    assert s1.list_arguments() == ["data"]
    assert s1.infer_shape(data=x.shape)[1] == [(5,), (6,)]
    exe = s1.bind(nv.cpu(), args={"data": nv.nd.array(x, dtype="float64")})
    exe.forward(is_train=False)
    np.testing.assert_array_equal(exe.outputs[0].asnumpy(), np.histogram(x, 5, (-3.0, 3.0))[0])
    edges = np.array([-3.0, -1.0, 0.0, 2.5])
    s2 = nv.sym.histogram(a=data, bins=bins)
    assert s2.list_arguments() == ["data", "bins"]
    args = {"data": nv.nd.array(x, dtype="float64"), "bins": nv.nd.array(edges, dtype="float64")}
    exe = s2.bind(nv.cpu(), args=args)
    exe.forward(is_train=False)
    np.testing.assert_array_equal(exe.outputs[0].asnumpy(), np.histogram(x, edges)[0])


def test_gradient_through_histogram_is_zero() -> None:
    x = nv.nd.array(_data((6,)), dtype="float64")
    x.attach_grad()
    with nv.autograd.record():
        _counts, edges = nv.nd.histogram(x, bins=3, range=(-1.0, 1.0))
        y = (edges * 2).sum() + x.sum()
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), np.ones(6))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"bin_cnt": 0, "range": (0.0, 1.0)}, "'bin_cnt' must be >= 1"),
        ({"bin_cnt": 3, "range": (2.0, 1.0)}, "lower <= upper"),
        ({"bin_cnt": 3, "range": (0.0, 1.0, 2.0)}, "'range' must be"),
        ({"bin_cnt": 3, "range": (0.0, float("inf"))}, "finite"),
        ({"bin_cnt": 3}, "both be given"),
    ],
)
def test_bad_parameters_raise_param_error_naming_the_op(kwargs: dict, match: str) -> None:
    x = nv.nd.array([0.1, 0.2])
    with pytest.raises(ParamError, match=f"_histogram.*{match}"):
        nv.nd._internal._histogram(x, **kwargs)
    counts, _ = nv.nd.histogram(x, bins=2, range=(0.0, 1.0))  # still usable afterwards
    np.testing.assert_array_equal(counts.asnumpy(), [2, 0])


def test_front_end_errors() -> None:
    x = nv.nd.array([0.1, 0.2])
    with pytest.raises(ParamError, match="histogram: bins argument"):
        nv.nd.histogram(x, bins=2.5)
    with pytest.raises(ParamError, match="null range is not supported in symbol mode"):
        nv.sym.histogram(nv.sym.Variable("a"), bins=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ParamError, match="bins must be >= 1"):
            nv.nd.histogram(x, bins=0)
    with pytest.raises(NNVMError, match="_histogram: input 'bins' must be a 1-d array"):
        nv.nd.histogram(x, bins=nv.nd.array([[0.0, 1.0]]))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gpu_matches_numpy(dtype: str) -> None:
    x = _data((9, 13), dtype)
    on = nv.nd.array(x, ctx=nv.gpu(0), dtype=dtype)
    counts, edges = nv.nd.histogram(on, bins=7, range=(-3.0, 3.0))
    want_counts, want_edges = np.histogram(x, 7, range=(-3.0, 3.0))
    np.testing.assert_array_equal(counts.asnumpy(), want_counts)
    np.testing.assert_allclose(edges.asnumpy(), want_edges, rtol=1e-6)
    given = np.array([-4.0, -1.0, 0.0, 0.25, 3.0], dtype=dtype)
    counts, _ = nv.nd.histogram(on, bins=nv.nd.array(given, ctx=nv.gpu(0), dtype=dtype))
    np.testing.assert_array_equal(counts.asnumpy(), np.histogram(x, given)[0])
