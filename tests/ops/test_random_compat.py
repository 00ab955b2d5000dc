"""MXNet's random API beyond the samplers of test_random.py: nd/sym.random.*_like, the
unique Zipfian candidate sampler (_sample_unique_zipfian) and contrib.rand_zipfian.

References are independent of nnvmpy: the log-uniform law P(c) = (log(c + 2) - log(c + 1))
/ log(range_max + 1) in NumPy, SciPy's chi-square test, moments of the distributions.
Every statistical test draws with a fixed seed, so it is deterministic.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import nnvmpy as nv
from nnvmpy import nd, sym

SEED = 1234
P_MIN = 1e-3

# (name, parameters, mean, standard deviation)
LIKE = [
    ("normal_like", {"loc": 10.0, "scale": 0.5}, 10.0, 0.5),
    ("uniform_like", {"low": -1.5, "high": 3.0}, 0.75, 4.5 / math.sqrt(12)),
    ("gamma_like", {"alpha": 9.0, "beta": 0.5}, 4.5, 1.5),
    ("exponential_like", {"lam": 4.0}, 0.25, 0.25),
    ("poisson_like", {"lam": 4.0}, 4.0, 2.0),
    ("negative_binomial_like", {"k": 3, "p": 0.4}, 4.5, math.sqrt(3 * 0.6) / 0.4),
    ("generalized_negative_binomial_like", {"mu": 2.0, "alpha": 0.3}, 2.0, math.sqrt(3.2)),
]


def log_uniform_probs(range_max: int) -> np.ndarray:
    c = np.arange(range_max, dtype=np.float64)
    return (np.log(c + 2) - np.log(c + 1)) / np.log(range_max + 1)


# -- nd.random.*_like / sym.random.*_like ---------------------------------------------------------


@pytest.mark.parametrize(("name", "params", "mean", "std"), LIKE, ids=[c[0] for c in LIKE])
def test_like_samplers_match_their_moments(name: str, params: dict, mean: float, std: float):
    n = 200_000
    data = nd.ones((n,), dtype="float64")
    nv.random.seed(SEED)
    x = getattr(nd.random, name)(data, **params)
    assert x.shape == (n,)
    assert x.dtype == np.float64
    got = x.asnumpy()
    assert abs(got.mean() - mean) < 5 * std / math.sqrt(n)
    assert abs(got.std() - std) < 0.02 * std
    nv.random.seed(SEED)  # the same seed gives the same numbers
    np.testing.assert_array_equal(getattr(nd.random, name)(data=data, **params).asnumpy(), got)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_like_samplers_take_shape_and_dtype_of_data(dtype: str) -> None:
    data = nd.zeros((3, 4), dtype=dtype)
    for name, params, _, _ in LIKE:
        out = getattr(nd.random, name)(data, **params)
        assert (out.shape, out.dtype) == ((3, 4), np.dtype(dtype)), name


def test_like_samplers_are_the_random_like_ops() -> None:
    """nd.random.<d>_like is op _random_<d>_like, positional parameters as in MXNet."""
    x = nd.ones((50,))
    nv.random.seed(SEED)
    a = nd.random.normal_like(x, 1.0, 2.0).asnumpy()
    nv.random.seed(SEED)
    b = nd._internal._random_normal_like(x, loc=1.0, scale=2.0).asnumpy()
    np.testing.assert_array_equal(a, b)
    assert "uniform_like" in dir(nd.random)
    assert "uniform_like" in dir(sym.random)
    with pytest.raises(AttributeError, match=r"nnvmpy\.nd\.random"):
        _ = nd.random.no_such_sampler


def test_sym_like_samplers_compose_and_match_nd() -> None:
    data = sym.var("data")
    s = sym.random.uniform_like(data, low=2.0, high=3.0)
    x = nd.zeros((4, 5))
    nv.random.seed(SEED)
    got = s.eval(data=x)[0].asnumpy()
    nv.random.seed(SEED)
    want = nd.random.uniform_like(x, low=2.0, high=3.0).asnumpy()
    np.testing.assert_array_equal(got, want)
    assert got.shape == (4, 5)
    assert ((got >= 2) & (got < 3)).all()
    assert s.infer_shape(data=(4, 5))[1] == [(4, 5)]


# -- _sample_unique_zipfian ------------------------------------------------------------------------


def unique_zipfian(range_max: int, shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    classes, trials = nd._internal._sample_unique_zipfian(range_max, shape=shape)
    return classes.asnumpy(), trials.asnumpy()


def test_unique_zipfian_rows_are_distinct_classes_in_range() -> None:
    nv.random.seed(SEED)
    classes, trials = unique_zipfian(1000, (5, 300))
    assert (classes.dtype, trials.dtype) == (np.int64, np.int64)
    assert (classes.shape, trials.shape) == ((5, 300), (5,))
    assert ((classes >= 0) & (classes < 1000)).all()
    for row in classes:
        assert np.unique(row).size == 300
    assert (trials >= 300).all()


def test_unique_zipfian_first_draw_follows_the_log_uniform_law() -> None:
    """With one sample per row each row is one draw of P(c) and takes one trial."""
    range_max, rows = 10, 50_000
    nv.random.seed(SEED)
    classes, trials = unique_zipfian(range_max, (rows, 1))
    assert (trials == 1).all()
    counts = np.bincount(classes.reshape(-1), minlength=range_max)
    assert stats.chisquare(counts, log_uniform_probs(range_max) * rows).pvalue > P_MIN


def test_unique_zipfian_trials_match_a_numpy_simulation() -> None:
    """The mean number of draws to collect k distinct classes, against NumPy draws of P(c)."""
    range_max, k, rows = 50, 20, 400
    nv.random.seed(SEED)
    _, trials = unique_zipfian(range_max, (rows, k))
    rng = np.random.default_rng(0)
    probs = log_uniform_probs(range_max)
    sim = []
    for _ in range(2000):
        seen: set[int] = set()
        n = 0
        while len(seen) < k:
            seen.add(int(rng.choice(range_max, p=probs)))
            n += 1
        sim.append(n)
    assert stats.ttest_ind(trials, sim, equal_var=False).pvalue > P_MIN


def test_unique_zipfian_takes_every_class_when_asked_for_all() -> None:
    nv.random.seed(SEED)
    classes, _ = unique_zipfian(6, (4, 6))
    assert (np.sort(classes, axis=1) == np.arange(6)).all()


def test_unique_zipfian_is_reproducible_and_symbolic() -> None:
    nv.random.seed(7)
    a = unique_zipfian(100, (3, 10))
    s = sym._internal._sample_unique_zipfian(range_max=100, shape=(3, 10))
    assert s.infer_shape()[1] == [(3, 10), (3,)]
    assert s.infer_type()[1] == [np.dtype(np.int64)] * 2
    nv.random.seed(7)
    b = [o.asnumpy() for o in s.eval()]
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])


def test_unique_zipfian_bad_parameters() -> None:
    with pytest.raises(nv.NNVMError, match=r"_sample_unique_zipfian.*'shape'.*2-D"):
        nd._internal._sample_unique_zipfian(20, shape=(5,))
    out = nd._internal._sample_unique_zipfian(3, shape=(2, 5))  # fails when it runs
    with pytest.raises(nv.NNVMError, match=r"_sample_unique_zipfian.*range_max \(3\)"):
        out[0].asnumpy()


# -- contrib.rand_zipfian --------------------------------------------------------------------------


def test_rand_zipfian_samples_and_expected_counts() -> None:
    range_max, num_sampled = 20, 100_000
    true = nd.array([0, 3, 19], dtype="int32")
    nv.random.seed(SEED)
    samples, count_true, count_sampled = nd.contrib.rand_zipfian(true, num_sampled, range_max)
    assert (samples.dtype, samples.shape) == (np.int64, (num_sampled,))
    assert (count_true.dtype, count_sampled.dtype) == (np.float64, np.float64)
    probs = log_uniform_probs(range_max)
    s = samples.asnumpy()
    np.testing.assert_allclose(count_true.asnumpy(), probs[[0, 3, 19]] * num_sampled, rtol=1e-12)
    np.testing.assert_allclose(count_sampled.asnumpy(), probs[s] * num_sampled, rtol=1e-12)
    counts = np.bincount(s, minlength=range_max)
    assert stats.chisquare(counts, probs * num_sampled).pvalue > P_MIN


def test_sym_rand_zipfian_matches_nd() -> None:
    true = nd.array([1, 2, 5])
    nv.random.seed(SEED)
    want = [o.asnumpy() for o in nd.contrib.rand_zipfian(true, 50, 8)]
    outs = sym.contrib.rand_zipfian(sym.var("true_classes"), 50, 8)
    nv.random.seed(SEED)
    got = sym.Group(outs).bind(nv.cpu(), {"true_classes": true}).forward()
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g.asnumpy(), w)


def test_rand_zipfian_bad_arguments() -> None:
    with pytest.raises(nv.ParamError, match=r"rand_zipfian.*'true_classes'.*NDArray"):
        nd.contrib.rand_zipfian([1, 2], 4, 5)
    with pytest.raises(nv.ParamError, match=r"rand_zipfian.*'range_max'.*>= 1"):
        nd.contrib.rand_zipfian(nd.array([1]), 4, 0)
    with pytest.raises(nv.ParamError, match=r"sym\.contrib\.rand_zipfian.*'num_sampled'"):
        sym.contrib.rand_zipfian(sym.var("t"), 2.5, 5)
