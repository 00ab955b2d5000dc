"""nv.test_utils comparisons, inputs and scaffolding, against NumPy and hand-computed cases.

The symbol checks (check_symbolic_*, check_numeric_gradient, check_consistency, check_op)
are in test_test_utils_symbolic.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from typing import Any

import numpy as np
import pytest
from scipy import stats

import nnvmpy as nv
from nnvmpy import test_utils as tu

# -- tolerances ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("dtype", "rtol", "atol"),
    [(np.float16, 1e-2, 1e-1), (np.float32, 1e-4, 1e-3), (np.float64, 1e-5, 1e-20)],
)
def test_default_tolerances_follow_the_dtype(dtype: Any, rtol: float, atol: float) -> None:
    # a value of 1000: tolerance atol + rtol * 1000, checked just inside and just outside
    tol = atol + rtol * 1000
    b = np.array([1000.0], dtype=dtype)
    inside = np.array([1000.0 + 0.6 * tol], dtype=dtype)
    outside = np.array([1000.0 + 3 * tol], dtype=dtype)
    tu.assert_almost_equal(inside, b)
    with pytest.raises(AssertionError, match="exceeds tolerance"):
        tu.assert_almost_equal(outside, b)
    assert tu.get_rtol(None, dtype) == rtol
    assert tu.get_atol(None, dtype) == atol


def test_the_looser_dtype_of_the_two_sides_sets_the_tolerance() -> None:
    assert tu.get_tols(np.zeros(2, np.float16), np.zeros(2, np.float64), None, None) == (1e-2, 1e-1)
    assert tu.get_tols(np.zeros(2, np.float32), 1.0, None, None) == (1e-4, 1e-3)  # a float is f64
    assert tu.get_tols(np.zeros(2), np.zeros(2), 0.5, {np.float64: 0.25}) == (0.5, 0.25)
    # float16 vs float64 differing by 0.05 at 1.0: inside 1e-1 + 1e-2 * 1
    tu.assert_almost_equal(np.array([1.05], np.float16), np.array([1.0]))
    with pytest.raises(AssertionError):
        tu.assert_almost_equal(np.array([1.05]), np.array([1.0]))


def test_integers_and_bools_compare_exactly() -> None:
    assert tu.get_tols(np.arange(3), np.arange(3), None, None) == (0, 0)
    tu.assert_almost_equal(np.arange(3), np.arange(3))
    with pytest.raises(AssertionError, match="differ in 1 of 3 elements"):
        tu.assert_almost_equal(np.array([0, 1, 2]), np.array([0, 1, 3]))
    tu.assert_almost_equal(np.array([True, False]), np.array([True, False]))
    with pytest.raises(AssertionError):
        tu.assert_almost_equal(np.array([True, False]), np.array([True, True]))


def test_tolerance_tables_are_mxnets() -> None:
    eps = tu.default_numeric_eps()
    assert eps[np.dtype(np.float32)] == 2.0**-9
    assert eps[np.dtype(np.float64)] == 2.0**-14
    assert eps[np.dtype(np.float16)] == 2.0**-6
    assert tu.default_rtols()[np.dtype(np.int32)] == 0
    assert tu.get_tolerance(np.zeros(1, np.float32), None, tu.default_atols()) == 1e-3
    assert tu.get_tolerance(np.zeros(1), 0.3, tu.default_atols()) == 0.3
    assert tu.effective_dtype(nv.nd.zeros((2,), dtype=np.float16)) == np.float16
    assert tu.get_etol() == 0
    assert tu.get_etol(0.1) == 0.1
    with pytest.raises(nv.NNVMError, match="get_tolerance: tol expects a number"):
        tu.get_tolerance(np.zeros(1), "big", tu.default_atols())


# -- assert_almost_equal -------------------------------------------------------------------------


def test_assert_almost_equal_takes_ndarrays_numpy_and_scalars() -> None:
    a = np.array([1.0, 2.0, 3.0])
    tu.assert_almost_equal(nv.nd.array(a), a)
    tu.assert_almost_equal(a, nv.nd.array(a))
    tu.assert_almost_equal(nv.nd.array(a), nv.nd.array(a))
    tu.assert_almost_equal(2.0, np.float32(2.0))
    tu.assert_almost_equal(np.array([2.0, 2.0]), 2.0)  # a scalar broadcasts


def test_assert_almost_equal_broadcasts_unless_told_not_to() -> None:
    rows = np.tile(np.array([1.0, 2.0, 3.0]), (2, 1))
    tu.assert_almost_equal(rows, np.array([1.0, 2.0, 3.0]))
    with pytest.raises(AssertionError, match=r"a.shape = \(2, 3\) and b.shape = \(3,\)"):
        tu.assert_almost_equal(rows, np.array([1.0, 2.0, 3.0]), use_broadcast=False)
    with pytest.raises(AssertionError, match=r"shapes differ: a \(2,\) vs b \(3,\)"):
        tu.assert_almost_equal(np.zeros(2), np.zeros(3))


def test_assert_almost_equal_treats_nan_as_mxnet_does() -> None:
    nan = np.array([1.0, np.nan])
    tu.assert_almost_equal(nan, nan.copy(), equal_nan=True)
    with pytest.raises(AssertionError, match="differ in 1 of 2"):
        tu.assert_almost_equal(nan, nan.copy())
    with pytest.raises(AssertionError, match=r"maximum error inf at \(1,\): a=nan, b=2.0"):
        tu.assert_almost_equal(nan, np.array([1.0, 2.0]), equal_nan=True)
    inf = np.array([np.inf, -np.inf])
    tu.assert_almost_equal(inf, inf.copy())  # equal infinities are equal


def test_assert_almost_equal_names_the_worst_elements_first() -> None:
    a = np.zeros((3, 4))
    b = a.copy()
    b[1, 2], b[2, 0] = 0.5, 0.1
    with pytest.raises(AssertionError) as info:
        tu.assert_almost_equal(a, b, rtol=1e-5, atol=1e-8, names=("got", "want"))
    message = str(info.value)
    assert "rtol=1.000000e-05, atol=1.000000e-08" in message
    assert "got and want differ in 2 of 12 elements" in message
    # violation = |a - b| / (atol + rtol |b|), computed here independently
    worst = 0.5 / (1e-8 + 1e-5 * 0.5)
    assert f"maximum error {worst:.6g} at (1, 2): got=0.0, want=0.5" in message
    lines = [line.strip() for line in message.splitlines()]
    assert lines[1].startswith("1: error")
    assert "(1, 2)" in lines[1]
    assert lines[2].startswith("2: error")
    assert "(2, 0)" in lines[2]
    with pytest.raises(AssertionError) as info:
        tu.assert_almost_equal(a, b, rtol=1e-5, atol=1e-8, mismatches=(1, 10))
    assert "2: error" not in str(info.value)  # only the worst one listed


def test_find_max_violation_matches_a_numpy_argmax() -> None:
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=(4, 5)), rng.normal(size=(4, 5))
    ratio = np.abs(a - b) / (1e-3 + 1e-2 * np.abs(b))
    idx, value = tu.find_max_violation(a, b, rtol=1e-2, atol=1e-3)
    assert idx == np.unravel_index(np.argmax(ratio), ratio.shape)
    assert value == pytest.approx(ratio.max(), rel=1e-6)


def test_almost_equal_uses_mxnets_float64_defaults() -> None:
    one = np.ones(3, np.float32)
    assert tu.almost_equal(one, one * (1 + 1e-6))
    assert not tu.almost_equal(one, one * (1 + 1e-4))  # rtol 1e-5 whatever the dtype
    assert tu.almost_equal(one, one * (1 + 1e-4), rtol=1e-3)
    assert tu.almost_equal(nv.nd.array(one), one)
    assert not tu.almost_equal(np.zeros(2), np.zeros(3))
    with pytest.raises(AssertionError):
        tu.almost_equal(np.zeros((2, 1)), np.zeros(2), use_broadcast=False)


def test_same_is_exact_equality() -> None:
    a = np.array([1.0, 2.0])
    assert tu.same(a, a.copy())
    assert tu.same(nv.nd.array(a), a)
    assert not tu.same(a, a + 1e-12)
    assert not tu.same(a, a[:1])
    assert not tu.same(np.array([np.nan]), np.array([np.nan]))


def test_assert_allclose_defaults_to_numpys() -> None:
    tu.assert_allclose(np.array([1.0]), np.array([1.0 + 5e-8]))
    with pytest.raises(AssertionError):
        tu.assert_allclose(np.array([1.0]), np.array([1.0 + 5e-7]))
    tu.assert_allclose(np.array([np.nan]), np.array([np.nan]))


def test_assert_almost_equal_with_err_allows_a_fraction_of_mismatches() -> None:
    a = np.arange(10.0)
    b = a.copy()
    b[3] += 1  # 1 of 10 elements off
    tu.assert_almost_equal_with_err(a, b, etol=0.2)
    with pytest.raises(AssertionError, match=r"0\.1 of the elements differ, more than etol=0\.05"):
        tu.assert_almost_equal_with_err(a, b, etol=0.05)
    with pytest.raises(AssertionError):
        tu.assert_almost_equal_with_err(a, b)  # etol 0: every element must match


def test_ignore_nan_comparisons_skip_positions_nan_on_either_side() -> None:
    a = np.array([1.0, np.nan, 3.0, 4.0])
    b = np.array([1.0, 2.0, np.nan, 4.0])
    assert tu.almost_equal_ignore_nan(a, b)
    tu.assert_almost_equal_ignore_nan(a, b)
    assert not tu.almost_equal_ignore_nan(a, b + 1)
    with pytest.raises(AssertionError):
        tu.assert_almost_equal_ignore_nan(a, b + 1)
    assert np.isnan(a[1])  # the inputs are not changed


def test_assert_exception() -> None:
    def boom(x: int, scale: int = 1) -> None:
        raise ValueError(x * scale)

    tu.assert_exception(boom, ValueError, 1, scale=2)
    with pytest.raises(AssertionError, match="len did not raise ValueError"):
        tu.assert_exception(len, ValueError, [1])
    with pytest.raises(ValueError, match="3"):  # the wrong kind of error is not swallowed
        tu.assert_exception(boom, KeyError, 3)


def test_collapse_sum_like_matches_numpy_sums() -> None:
    a = np.random.default_rng(0).normal(size=(2, 3, 4))
    np.testing.assert_allclose(tu.collapse_sum_like(a, (3, 1)), a.sum(axis=(0, 2))[:, None])
    np.testing.assert_allclose(tu.collapse_sum_like(a, (1, 3, 4)), a.sum(axis=0, keepdims=True))
    np.testing.assert_allclose(tu.collapse_sum_like(a, (4,)), a.sum(axis=(0, 1)))
    assert tu.collapse_sum_like(np.zeros((0, 3)), (3,)).shape == (3,)
    with pytest.raises(nv.NNVMError, match=r"collapse_sum_like: shape \(2,\) does not broadcast"):
        tu.collapse_sum_like(a, (2,))


# -- inputs --------------------------------------------------------------------------------------


def test_random_arrays_are_seeded_standard_normal_float32() -> None:
    np.random.seed(7)  # noqa: NPY002 - the helpers draw from the global generator
    x, y = tu.random_arrays((200, 50), ())
    np.random.seed(7)  # noqa: NPY002 - the helpers draw from the global generator
    again = tu.random_arrays((200, 50))
    assert x.dtype == np.float32
    assert x.shape == (200, 50)
    assert y.shape == ()
    np.testing.assert_array_equal(x, again)
    assert stats.kstest(x.reshape(-1), "norm").pvalue > 1e-3


def test_random_uniform_arrays_stay_in_range() -> None:
    (a, b) = tu.random_uniform_arrays((1000,), (3, 2), low=-2.0, high=5.0, dtype=np.float64)
    assert a.dtype == np.float64
    assert b.shape == (3, 2)
    assert a.min() >= -2.0
    assert a.max() < 5.0
    assert stats.kstest(a, "uniform", args=(-2.0, 7.0)).pvalue > 1e-3
    with pytest.raises(nv.NNVMError, match="expects low <= high"):
        tu.random_uniform_arrays((2,), low=1.0, high=0.0)


def test_random_sample_draws_distinct_elements() -> None:
    population = list("abcdefgh")
    picked = tu.random_sample(population, 5)
    assert len(picked) == 5
    assert len(set(picked)) == 5
    assert set(picked) <= set(population)
    assert sorted(tu.random_sample(population, 8)) == sorted(population)
    assert tu.random_sample(population, 0) == []
    with pytest.raises(nv.NNVMError, match=r"random_sample: k expects an int in \[0, 8\]"):
        tu.random_sample(population, 9)


def test_rand_ndarray_is_a_dense_normal_ndarray() -> None:
    np.random.seed(1)  # noqa: NPY002 - the helpers draw from the global generator
    arr = tu.rand_ndarray((30, 40))
    assert isinstance(arr, nv.nd.NDArray)
    assert arr.shape == (30, 40)
    assert arr.dtype == np.float32
    assert arr.context == nv.cpu()
    assert stats.kstest(arr.asnumpy().reshape(-1), "norm").pvalue > 1e-3
    assert tu.rand_ndarray((2, 3), dtype=np.float64).dtype == np.float64
    doubled = tu.rand_ndarray((4,), modifier_func=lambda v: 2 * v)
    assert doubled.shape == (4,)


def test_rand_ndarray_rejects_sparse_and_negative_shapes() -> None:
    with pytest.raises(nv.NNVMError, match="rand_ndarray: stype 'csr' is not supported"):
        tu.rand_ndarray((2, 3), stype="csr")
    with pytest.raises(nv.NNVMError, match="rand_ndarray: a shape cannot have negative"):
        tu.rand_ndarray((2, -3))
    assert tu.rand_ndarray((2,)).shape == (2,)  # and still works afterwards


def test_random_shapes_stay_within_their_bounds() -> None:
    np.random.seed(0)  # noqa: NPY002 - the helpers draw from the global generator
    shapes = [tu.rand_shape_nd(3, dim=4) for _ in range(300)]
    dims = np.array(shapes)
    assert dims.shape == (300, 3)
    assert dims.min() == 1
    assert dims.max() == 4
    zero = np.array([tu.rand_shape_nd(2, dim=2, allow_zero_size=True) for _ in range(200)])
    assert zero.min() == 0
    assert zero.max() == 2
    two = np.array([tu.rand_shape_2d(3, 5) for _ in range(200)])
    assert two[:, 0].max() == 3
    assert two[:, 1].max() == 5
    assert two.min() == 1
    three = np.array([tu.rand_shape_3d(1, 2, 3) for _ in range(200)])
    assert three.max(axis=0).tolist() == [1, 2, 3]
    assert three.min() == 1
    assert tu.rand_shape_nd(0) == ()
    x, y = tu.rand_coord_2d(0, 2, 5, 6)
    assert x in (0, 1)
    assert y == 5


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: tu.rand_shape_nd(-1), "rand_shape_nd: num_dim must be >= 0, got -1"),
        (lambda: tu.rand_shape_nd(2, dim=0), "rand_shape_nd: dim must be >= 1, got 0"),
        (lambda: tu.rand_shape_2d(2.5), "rand_shape_2d: dim0 expects an int, got 2.5"),
        (lambda: tu.rand_shape_3d(1, 1, -2), "rand_shape_3d: dim2 must be >= 1"),
        (lambda: tu.rand_coord_2d(3, 3, 0, 1), "rand_coord_2d: expects x_low < x_high"),
    ],
)
def test_random_shape_errors_are_named(call: Any, message: str) -> None:
    with pytest.raises(nv.NNVMError, match=message):
        call()


@pytest.mark.parametrize(
    ("axis", "keepdims"), [(None, False), (1, True), ((0, 2), False), ([2, 0], True), (-1, False)]
)
def test_np_reduce_matches_numpy_multi_axis_reductions(axis: Any, keepdims: bool) -> None:
    dat = np.random.default_rng(0).normal(size=(2, 3, 4))
    np_axis = tuple(axis) if isinstance(axis, list) else axis
    for fn in (np.sum, np.max, np.mean):
        got = tu.np_reduce(dat, axis, keepdims, fn)
        np.testing.assert_allclose(got, fn(dat, axis=np_axis, keepdims=keepdims))


def test_np_reduce_applies_one_axis_reducers_highest_axis_first() -> None:
    dat = np.random.default_rng(1).normal(size=(3, 4))
    assert tu.np_reduce(dat, 1, True, np.argmax).tolist() == dat.argmax(axis=1)[:, None].tolist()
    with pytest.raises(nv.NNVMError, match="np_reduce: axis 2 is out of range for an array of 2"):
        tu.np_reduce(dat, 2, False, np.sum)


def test_assign_each_applies_a_python_function() -> None:
    x = np.array([[1.0, -2.0], [3.0, 0.5]])
    np.testing.assert_array_equal(tu.assign_each(x, abs), np.abs(x))
    np.testing.assert_array_equal(tu.assign_each(x, None), x)
    np.testing.assert_array_equal(tu.assign_each2(x, x, lambda a, b: a * b), x * x)
    with pytest.raises(nv.NNVMError, match="assign_each2: shapes"):
        tu.assign_each2(x, x[0], max)


# -- default context -----------------------------------------------------------------------------


def test_default_context_is_per_thread_and_scoped() -> None:
    assert tu.default_context() == nv.cpu(0)
    seen: list[nv.Context] = []

    def other() -> None:
        tu.set_default_context(nv.cpu(5))
        seen.append(tu.default_context())
        with nv.gpu(3):
            seen.append(tu.default_context())
        seen.append(nv.current_context())

    thread = threading.Thread(target=other)
    thread.start()
    thread.join()
    assert seen == [nv.cpu(5), nv.gpu(3), nv.cpu(5)]
    assert tu.default_context() == nv.cpu(0)  # this thread's default is untouched
    with pytest.raises(nv.NNVMError, match="set_default_context: expected a Context"):
        tu.set_default_context("cpu")  # type: ignore[arg-type]
    assert tu.default_dtype() == np.float32


# -- scaffolding ---------------------------------------------------------------------------------


def test_environment_sets_and_restores_variables() -> None:
    name, other = "NNVMPY_TU_ENV_A", "NNVMPY_TU_ENV_B"
    os.environ[other] = "kept"
    try:
        with tu.environment(name, "1"):
            assert os.environ[name] == "1"
            with tu.environment({name: "2", other: None}):
                assert os.environ[name] == "2"
                assert other not in os.environ
            assert os.environ[name] == "1"
            assert os.environ[other] == "kept"
        assert name not in os.environ
        with pytest.raises(RuntimeError), tu.environment(name, "x"):
            raise RuntimeError("inside")
        assert name not in os.environ  # restored on an exception too
        with pytest.raises(nv.NNVMError, match="environment: expects str names and str-or-None"):
            tu.environment(name, 3).__enter__()
        with pytest.raises(nv.NNVMError, match="environment: expects one dict or"):
            tu.environment(name, "1", "2").__enter__()
    finally:
        os.environ.pop(other, None)


def test_set_env_var_returns_the_previous_value() -> None:
    name = "NNVMPY_TU_SET_ENV"
    try:
        assert tu.set_env_var(name, "a", default_val="none") == "none"
        assert tu.set_env_var(name, "b") == "a"
        assert os.environ[name] == "b"
    finally:
        os.environ.pop(name, None)
    assert tu.is_cd_run() == (os.environ.get("CD_JOB") == "1")


def test_discard_stderr_silences_file_descriptor_2() -> None:
    code = (
        "import os, sys\n"
        "from nnvmpy.test_utils import discard_stderr\n"
        "os.write(2, b'before\\n')\n"
        "with discard_stderr():\n"
        "    os.write(2, b'hidden\\n')\n"
        "    print('python-level', file=sys.stderr)\n"
        "os.write(2, b'after\\n')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True)
    assert done.stderr.decode().split() == ["before", "after"]


def test_retry_reruns_a_flaky_test() -> None:
    calls: list[int] = []

    @tu.retry(3)
    def flaky() -> str:
        calls.append(1)
        assert len(calls) >= 3, "not yet"
        return "ok"

    assert flaky() == "ok"
    assert len(calls) == 3

    @tu.retry(2)
    def broken() -> None:
        raise AssertionError("always")

    with pytest.raises(AssertionError, match="always"):
        broken()
    with pytest.raises(nv.NNVMError, match="retry: n expects an int >= 1"):
        tu.retry(0)


def test_same_array_detects_shared_memory() -> None:
    a = nv.nd.ones((2, 3))
    assert tu.same_array(a, a)
    assert not tu.same_array(a, a.copy())
    assert tu.same(a.asnumpy(), np.ones((2, 3)))  # restored


def test_star_import_gives_mxnets_names() -> None:
    names: dict[str, Any] = {}
    exec("from nnvmpy.test_utils import *", names)
    for name in (
        "assert_almost_equal",
        "rand_ndarray",
        "check_consistency",
        "environment",
        "use_np",
    ):
        assert name in names


def test_star_import_gives_the_context_symbol_and_features_classes() -> None:
    # MXNet's test files write `Context.default_ctx` after `from mxnet.test_utils import *`
    names: dict[str, Any] = {}
    exec("from nnvmpy.test_utils import *", names)
    assert names["Context"] is nv.Context
    assert names["Symbol"] is type(nv.sym.Variable("x"))
    assert names["Features"] is nv.runtime.Features
    assert names["Context"].default_ctx == names["current_context"]() == nv.cpu()
    with nv.Context("cpu", 1):
        assert names["Context"].default_ctx == nv.cpu(1)
    exe = (nv.sym.Variable("x") * 2).simple_bind(names["Context"].default_ctx, x=(2, 3))
    out = exe.forward(x=np.arange(6.0).reshape(2, 3))[0]
    np.testing.assert_array_equal(out.asnumpy(), np.arange(6.0).reshape(2, 3) * 2)


# -- generator statistics ------------------------------------------------------------------------


def test_generator_checks_accept_the_right_distribution_and_reject_a_wrong_one() -> None:
    rng = np.random.default_rng(5)
    normal = lambda n: rng.normal(0.0, 2.0, size=n)  # noqa: E731
    shifted = lambda n: rng.normal(0.3, 2.0, size=n)  # noqa: E731
    assert tu.mean_check(normal, 0.0, 2.0, nsamples=20000)
    assert not tu.mean_check(shifted, 0.0, 2.0, nsamples=20000)
    assert tu.var_check(normal, 2.0, nsamples=20000)
    assert not tu.var_check(lambda n: rng.normal(0, 2.5, size=n), 2.0, nsamples=20000)
    buckets, probs = tu.gen_buckets_probs_with_ppf(lambda q: stats.norm.ppf(q, 0, 2.0), 10)
    assert len(buckets) == 10
    assert probs == [0.1] * 10
    assert buckets[0][0] == -np.inf
    assert buckets[-1][1] == np.inf
    p_values = tu.verify_generator(normal, buckets, probs, nsamples=20000, nrepeat=3)
    assert len(p_values) == 3
    with pytest.raises(AssertionError, match="verify_generator: chi-square p-values"):
        tu.verify_generator(shifted, buckets, probs, nsamples=20000, nrepeat=3)


def test_chi_square_check_of_a_discrete_generator() -> None:
    rng = np.random.default_rng(6)
    values, probs = [0, 1, 2], [0.2, 0.3, 0.5]
    p, observed, expected = tu.chi_square_check(
        lambda n: rng.choice(values, size=n, p=probs), values, probs, nsamples=30000
    )
    assert p > 1e-3
    assert observed.sum() == 30000
    np.testing.assert_allclose(expected, np.array(probs) * 30000)
    with pytest.raises(nv.NNVMError, match="3 buckets but 2 probabilities"):
        tu.chi_square_check(lambda n: np.zeros(n), values, probs[:2], nsamples=10)
