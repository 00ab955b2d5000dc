"""The random ops: distributions against SciPy, shapes and dtypes, seeding, req, errors.

Every statistical test draws with a fixed seed, so it is deterministic: a test that passes
passes every time. The thresholds (p-value > 1e-3 for KS and chi-square tests, moments
within 5 standard errors) would fail a wrong sampler with certainty at these sizes.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from scipy import stats

import nnvmpy as nv
from nnvmpy import nd
from nnvmpy.base import OpReqType
from nnvmpy.registry import Op
from nnvmpy.test_utils import _run_compute

N = 20000
SEED = 1234
P_MIN = 1e-3

pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")


def draw(op: str, n: int = N, seed: int = SEED, **params: Any) -> np.ndarray:
    nv.random.seed(seed)
    params.setdefault("dtype", "float64")
    return getattr(nd._internal, op)(shape=(n,), **params).asnumpy()


def discrete_pvalue(x: np.ndarray, dist: Any) -> float:
    """Chi-square p-value of integer samples against a frozen SciPy distribution.

    Bins are 0..K with the tail above K in the last bin; neighbours are merged until
    every bin expects at least 5 counts.
    """
    assert np.all(x == np.round(x))
    assert x.min() >= dist.support()[0]
    top = int(dist.ppf(1 - 1e-7))
    counts = np.bincount(np.minimum(x.astype(np.int64), top), minlength=top + 1).astype(float)
    expected = dist.pmf(np.arange(top + 1)) * x.size
    expected[-1] += dist.sf(top) * x.size
    bins_c, bins_e, acc_c, acc_e = [], [], 0.0, 0.0
    for c, e in zip(counts, expected):
        acc_c, acc_e = acc_c + c, acc_e + e
        if acc_e >= 5:
            bins_c.append(acc_c)
            bins_e.append(acc_e)
            acc_c = acc_e = 0.0
    bins_c[-1] += acc_c
    bins_e[-1] += acc_e
    return float(stats.chisquare(bins_c, np.array(bins_e) * sum(bins_c) / sum(bins_e)).pvalue)


# -- distributions ------------------------------------------------------------------------------

CONTINUOUS = [
    ("_random_uniform", {"low": -2.0, "high": 3.0}, stats.uniform(-2, 5)),
    ("_random_normal", {"loc": 1.5, "scale": 2.0}, stats.norm(1.5, 2.0)),
    ("_random_gamma", {"alpha": 0.3, "beta": 2.0}, stats.gamma(0.3, scale=2.0)),
    ("_random_gamma", {"alpha": 4.5, "beta": 0.5}, stats.gamma(4.5, scale=0.5)),
    ("_random_exponential", {"lam": 4.0}, stats.expon(scale=0.25)),
]


@pytest.mark.parametrize(("op", "params", "dist"), CONTINUOUS, ids=lambda v: str(v)[:40])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_continuous_samplers_follow_their_distribution(op, params, dist, dtype) -> None:
    x = draw(op, dtype=dtype, **params)
    assert x.dtype == np.dtype(dtype)
    assert stats.kstest(x.astype(np.float64), dist.cdf).pvalue > P_MIN


DISCRETE = [
    ("_random_poisson", {"lam": 3.5}, stats.poisson(3.5)),  # Knuth's method
    ("_random_poisson", {"lam": 40.0}, stats.poisson(40.0)),  # transformed rejection
    ("_random_negative_binomial", {"k": 3, "p": 0.4}, stats.nbinom(3, 0.4)),
    (
        "_random_generalized_negative_binomial",
        {"mu": 2.0, "alpha": 0.3},
        stats.nbinom(1 / 0.3, 1 / (1 + 0.3 * 2.0)),  # mean mu, variance mu + alpha mu^2
    ),
    ("_random_generalized_negative_binomial", {"mu": 2.0, "alpha": 0.0}, stats.poisson(2.0)),
]


@pytest.mark.parametrize(("op", "params", "dist"), DISCRETE, ids=lambda v: str(v)[:40])
def test_discrete_samplers_follow_their_distribution(op, params, dist) -> None:
    assert discrete_pvalue(draw(op, **params), dist) > P_MIN


def test_poisson_with_a_huge_mean_has_its_moments() -> None:
    lam = 4e12  # beyond the rejection sampler: a rounded normal
    x = draw("_random_poisson", lam=lam)
    assert np.all(x == np.round(x))
    assert abs(x.mean() - lam) < 5 * np.sqrt(lam / N)
    assert abs(x.var() / lam - 1) < 5 * np.sqrt(2 / N)


@pytest.mark.parametrize(
    ("low", "high", "dtype"), [(-3, 5, "int32"), (10**12, 10**12 + 7, "int64")]
)
def test_randint_is_uniform_on_the_half_open_interval(low, high, dtype) -> None:
    nv.random.seed(SEED)
    x = nd.random.randint(low, high, shape=(N,), dtype=dtype).asnumpy()
    assert x.dtype == np.dtype(dtype)
    assert x.min() == low
    assert x.max() == high - 1
    assert discrete_pvalue(x - low, stats.randint(0, high - low)) > P_MIN
    assert nd.random.randint(0, 9, shape=(3,)).dtype == np.int32  # MXNet's default


def test_uniform_float32_never_rounds_up_to_high() -> None:
    x = draw("_random_uniform", n=1 << 20, dtype="float32")
    assert x.max() < 1.0
    assert x.min() >= 0.0
    # every value on the float32 grid of [0, 1) it was drawn on: 2**24 values
    assert np.all(x * 2**24 == np.round(x * 2**24))


def test_float16_outputs_on_the_cpu() -> None:
    x = draw("_random_normal", dtype="float16", loc=1.0, scale=0.5)
    assert x.dtype == np.float16
    assert abs(x.astype(np.float64).mean() - 1.0) < 5 * 0.5 / np.sqrt(N)
    u = draw("_random_uniform", dtype="float16")
    assert u.max() < 1.0
    assert u.min() >= 0.0


def test_like_ops_take_shape_and_dtype_from_the_input() -> None:
    nv.random.seed(SEED)
    x = nd.zeros((100, 200), dtype="float64")
    y = nd._internal._random_exponential_like(x, lam=2.0)
    assert y.shape == x.shape
    assert y.dtype == np.float64
    assert stats.kstest(y.asnumpy().ravel(), stats.expon(scale=0.5).cdf).pvalue > P_MIN
    z = nd._internal._random_uniform_like(nd.ones((3, 4)), low=5, high=6).asnumpy()
    assert z.dtype == np.float32
    assert z.shape == (3, 4)
    assert ((z >= 5) & (z < 6)).all()


# -- per-row parameters ---------------------------------------------------------------------------

PER_ROW = [
    ("normal", [[0.0, 10.0], [1.0, 0.1]], lambda m, s: stats.norm(m, s)),
    ("uniform", [[-1.0, 3.0], [0.0, 3.5]], lambda lo, hi: stats.uniform(lo, hi - lo)),
    ("gamma", [[0.5, 7.0], [1.0, 0.2]], lambda a, b: stats.gamma(a, scale=b)),
    ("exponential", [[0.5, 8.0]], lambda lam: stats.expon(scale=1 / lam)),
]


@pytest.mark.parametrize(("dist", "params", "ref"), PER_ROW, ids=[p[0] for p in PER_ROW])
def test_sample_ops_draw_each_row_from_its_parameters(dist, params, ref) -> None:
    nv.random.seed(SEED)
    arrays = [nd.array(p, dtype="float64") for p in params]
    x = getattr(nd._internal, f"_sample_{dist}")(*arrays, shape=(50, 100)).asnumpy()
    assert x.shape == (2, 50, 100)
    assert x.dtype == np.float32  # MXNet: the dtype parameter, else float32
    for row in range(2):
        frozen = ref(*(p[row] for p in params))
        assert stats.kstest(x[row].ravel().astype(np.float64), frozen.cdf).pvalue > P_MIN


def test_discrete_sample_ops_per_row() -> None:
    nv.random.seed(SEED)
    lam = nd.array([0.5, 30.0])
    x = nd.sample_poisson(lam, shape=(5000,), dtype="float64").asnumpy()
    for row, mean in enumerate((0.5, 30.0)):
        assert discrete_pvalue(x[row], stats.poisson(mean)) > P_MIN
    k, p = nd.array([2.0, 5.0]), nd.array([0.3, 0.8])
    x = nd.sample_negative_binomial(k, p, shape=(5000,)).asnumpy()
    for row in range(2):
        ref = stats.nbinom(k.asnumpy()[row], p.asnumpy()[row])
        assert discrete_pvalue(x[row], ref) > P_MIN
    mu, alpha = nd.array([1.0, 4.0]), nd.array([0.5, 0.0])
    x = nd.sample_generalized_negative_binomial(mu, alpha, shape=(5000,)).asnumpy()
    assert discrete_pvalue(x[0], stats.nbinom(2.0, 1 / (1 + 0.5))) > P_MIN
    assert discrete_pvalue(x[1], stats.poisson(4.0)) > P_MIN


def test_sample_op_shapes_dtypes_and_out_of_domain_rows() -> None:
    mu, sigma = nd.array([[0.0, 1.0], [2.0, 3.0]]), nd.array([[1.0, -1.0], [0.0, 2.0]])
    x = nd.sample_normal(mu, sigma, dtype="float64").asnumpy()
    assert x.shape == (2, 2)
    assert x.dtype == np.float64
    assert np.isnan(x[0, 1])  # sigma < 0: NaN, the row is read on the device
    assert x[1, 0] == 2.0  # sigma = 0: the mean
    assert nd.sample_normal(mu=nd.array([10.0]), sigma=nd.array([0.5])).shape == (1,)
    assert nd.sample_normal(mu=nd.array([10.0]), sigma=nd.array([0.5]), shape=1).shape == (1, 1)
    assert nd.sample_uniform(nd.zeros((3,)), nd.ones((3,)), shape=(2, 4)).shape == (3, 2, 4)
    gamma0 = nd.sample_gamma(nd.array([0.0]), nd.array([1.0]), shape=3).asnumpy()
    np.testing.assert_array_equal(gamma0, 0.0)  # alpha 0: all mass at 0 (MXNet's example)


# -- multinomial -----------------------------------------------------------------------------------


def test_multinomial_frequencies_and_log_probabilities() -> None:
    probs = np.array([[0.0, 0.1, 0.2, 0.3, 0.4], [0.4, 0.3, 0.2, 0.1, 0.0]])
    nv.random.seed(SEED)
    sample, logp = nd.random.multinomial(nd.array(probs), shape=N, get_prob=True)
    s = sample.asnumpy()
    assert s.shape == (2, N)
    assert s.dtype == np.int32
    for row in range(2):
        counts = np.bincount(s[row], minlength=5)
        nz = probs[row] > 0
        assert counts[~nz].sum() == 0
        assert stats.chisquare(counts[nz], probs[row][nz] * N).pvalue > P_MIN
    np.testing.assert_allclose(logp.asnumpy(), np.log(probs[np.arange(2)[:, None], s]), 1e-6)


def test_multinomial_shapes_and_dtype() -> None:
    p1 = nd.array([0.5, 0.5])
    assert nd.random.multinomial(p1).shape == (1,)
    assert nd.random.multinomial(p1, shape=(2, 3)).shape == (2, 3)
    p3 = nd.array(np.full((4, 2, 3), 1 / 3))
    out = nd.random.multinomial(p3, shape=5, dtype="float32")
    assert out.shape == (4, 2, 5)
    assert out.dtype == np.float32


def test_multinomial_get_prob_gradient_is_the_log_likelihood_trick() -> None:
    probs = np.array([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]])
    data = nv.sym.Variable("data")
    out = nv.sym.random.multinomial(data, shape=(40,), get_prob=True)
    exe = out.simple_bind(nv.cpu(), data=probs.shape, type_dict={"data": np.float64})
    nv.random.seed(SEED)
    sample, _ = exe.forward(is_train=True, data=probs)
    reward = np.random.default_rng(0).normal(size=(2, 40))
    exe.backward([nd.zeros((2, 40), dtype="int32"), nd.array(reward, dtype="float64")])
    s = sample.asnumpy()
    want = np.zeros_like(probs)
    for row in range(2):
        np.add.at(want[row], s[row], reward[row] / probs[row, s[row]])  # d log p / d p = 1/p
    np.testing.assert_allclose(exe.grad_dict["data"].asnumpy(), want, rtol=1e-12)


# -- shuffle -------------------------------------------------------------------------------------


def test_shuffle_permutes_rows_uniformly_and_keeps_them_whole() -> None:
    x = np.arange(24, dtype=np.float32).reshape(6, 4)
    y = nd.random.shuffle(nd.array(x)).asnumpy()
    assert sorted(map(tuple, y)) == sorted(map(tuple, x))  # whole rows, each once
    nv.random.seed(SEED)
    counts: dict[tuple[int, ...], int] = {}
    three = nd.array([0, 1, 2], dtype="int32")
    for _ in range(1200):
        order = tuple(nd.random.shuffle(three).asnumpy())
        counts[order] = counts.get(order, 0) + 1
    assert len(counts) == 6
    assert stats.chisquare(list(counts.values())).pvalue > P_MIN


def test_shuffle_in_place_and_empty() -> None:
    x = nd.array(np.arange(10.0))
    nd.random.shuffle(x, out=x)
    assert sorted(x.asnumpy()) == list(range(10))
    assert nd.random.shuffle(nd.array(np.zeros((0, 3)))).shape == (0, 3)


def test_shuffle_with_req_add_adds_a_permutation_of_the_rows() -> None:
    op = Op.get("_shuffle")
    x = np.arange(24.0).reshape(6, 4)
    start = np.full((6, 4), 100.0)
    (out,) = _run_compute(
        op, op.parse_attrs({}), [x], [x.shape], [x.dtype], OpReqType.kAddTo, [start.copy()]
    )
    added = out - start
    assert sorted(map(tuple, added)) == sorted(map(tuple, x))  # whole rows, each once


# -- the stream: seeding, advancing, req -----------------------------------------------------------


def test_a_seed_reproduces_and_launches_continue_the_stream() -> None:
    a = draw("_random_normal", n=1000, seed=7)
    b = draw("_random_normal", n=1000, seed=7)
    c = draw("_random_normal", n=1000, seed=8)
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)
    # two launches take consecutive counters: the same numbers as one launch of both
    nv.random.seed(7)
    first = nd._internal._random_normal(shape=(300,), dtype="float64").asnumpy()
    second = nd._internal._random_normal(shape=(700,), dtype="float64").asnumpy()
    np.testing.assert_array_equal(np.concatenate([first, second]), a)


def test_direct_samples_are_formulas_of_their_philox_block() -> None:
    """uniform, normal and exponential take block 0 of element i's counter (Philox checked
    against Random123 in tests/kernel/test_philox.py): uniform the top `bits` bits of
    (w0, w1), normal Box-Muller of (w0, w1) and (w2, w3) at 53 bits, exponential
    -log(1 - u) / lam; with scalar parameters and per row."""
    from nnvmpy.kernel.launch import WRITE
    from nnvmpy.kernel.philox import philox4x32
    from nnvmpy.ops.random import samplers

    u64, mask = np.uint64, (1 << 32) - 1
    k0, k1, first, n = u64(0x12345678), u64(0x9ABCDEF0), (1 << 33) + 5, 48
    words = [philox4x32(u64(c & mask), u64(c >> 32), u64(0), u64(0), k0, k1) for c in
             range(first, first + n)]  # fmt: skip
    w = np.array([[int(x) for x in ws] for ws in words], dtype=object)
    top = (w[:, 0] << 32) | w[:, 1]

    def unit(hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
        return np.array([float(((a >> 5) << 26) | (b >> 6)) * 2.0**-53 for a, b in zip(hi, lo)])

    u, v = unit(w[:, 0], w[:, 1]), unit(w[:, 2], w[:, 3])
    uniform24 = np.array([float(t >> (64 - 24)) for t in top]) / 2.0**24
    normal = np.sqrt(-2 * np.log(1 - u)) * np.cos(2 * np.pi * v)
    want = {
        samplers.UNIFORM: (-2.0, 3.0, 24, -2.0 + 5.0 * uniform24),
        samplers.NORMAL: (1.0, 2.0, 53, 1.0 + 2.0 * normal),
        samplers.EXPONENTIAL: (2.5, 0.0, 53, -np.log(1 - u) / 2.5),
    }
    for dist, (a, b, bits, expected) in want.items():
        loop, rows_loop = samplers.sampler_loops(dist)
        out = np.zeros(n)
        loop.launch(nv.cpu(), n, out, WRITE, dist, a, b, k0, k1, u64(first), u64(bits))
        np.testing.assert_allclose(out, expected, rtol=1e-14, err_msg=str(dist))
        per_row = np.zeros(n)  # 4 rows of the same parameters
        p1, p2 = np.full(4, a), np.full(4, b)
        args = (per_row, WRITE, dist, p1, p2, n // 4, k0, k1, u64(first), u64(bits))
        rows_loop.launch(nv.cpu(), n, *args)
        np.testing.assert_array_equal(per_row, out)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_multinomial_draw_is_the_first_running_sum_above_u(dtype: Any) -> None:
    """Draw i of a row: the first j whose running sum (in float64) exceeds u, u block 0's
    first 53 bits of counter first + i, the last outcome when none does. The CPU's
    binary search over rows (_draw_rows) and the one-body scan (_draw_loop) both, with
    rows of zeros, a NaN and a negative entry (no binary search there)."""
    from nnvmpy.kernel.launch import WRITE
    from nnvmpy.kernel.philox import philox4x32
    from nnvmpy.ops.random import multinomial
    from nnvmpy.ops.random._common import launch

    u64, mask = np.uint64, (1 << 32) - 1
    k0, k1, first, m = u64(0x2468ACE0), u64(0x13579BDF), (1 << 32) + 7, 9
    rng = np.random.default_rng(8)
    data = rng.random((6, 37))
    data /= data.sum(axis=1, keepdims=True)
    data[1] = 0.0
    data[2, 5] = np.nan
    data[3] = 0.0
    data[3, :3] = [0.6, -0.5, 0.9]  # sums 0.6, 0.1, 1.0: a search would skip j = 0
    data = data.astype(dtype)
    rows, k = data.shape
    want = np.zeros(rows * m, np.int64)
    for i in range(rows * m):
        c = first + i
        w = [int(x) for x in philox4x32(u64(c & mask), u64(c >> 32), u64(0), u64(0), k0, k1)]
        u = float(((w[0] >> 5) << 26) | (w[1] >> 6)) * 2.0**-53
        sums = np.cumsum(data[i // m].astype(np.float64))
        above = np.flatnonzero(sums > u)
        want[i] = above[0] if above.size else k - 1
    for loop, extra, n in [
        (multinomial._draw_loop, (), None),
        (multinomial._draw_rows, (np.empty(data.size),), rows),
    ]:
        out, logp = np.full(rows * m, -1, np.int64), np.zeros(rows * m, dtype)
        args = (logp, WRITE, data, k, m, k0, k1, u64(first), *extra)
        launch(nv.cpu(), loop, out, WRITE, *args, n=n, written=(0,))
        np.testing.assert_array_equal(out, want, err_msg=loop.__name__)
        picked = data.reshape(-1)[np.arange(rows * m) // m * k + want].astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            np.testing.assert_array_equal(logp, np.log(picked).astype(dtype))


def test_seed_one_device_leaves_the_others() -> None:
    other = nv.cpu(1)
    nv.random.seed(11)
    a = nv.random.uniform(shape=(50,), ctx=nv.cpu(0)).asnumpy()
    b = nv.random.uniform(shape=(50,), ctx=other).asnumpy()
    nv.random.seed(11, ctx=nv.cpu(0))
    np.testing.assert_array_equal(nv.random.uniform(shape=(50,), ctx=nv.cpu(0)).asnumpy(), a)
    after = nv.random.uniform(shape=(50,), ctx=other).asnumpy()
    assert not np.array_equal(after, b)  # cpu(1)'s stream went on, it was not re-seeded
    assert not np.array_equal(a, b)  # devices with other ids have unrelated streams


@pytest.mark.parametrize("req", ["add", "null"])
def test_fcompute_honours_add_and_null(req: str) -> None:
    op = Op.get("_random_gamma")
    attrs = op.parse_attrs({"alpha": 2.0, "beta": 3.0, "shape": (5, 7), "dtype": "float64"})
    start = np.random.default_rng(1).uniform(-1, 1, size=(5, 7))
    nv.random.seed(3)
    nd.waitall()  # the re-seeding runs on the engine; this compute does not
    written = _run_compute(op, attrs, [], [(5, 7)], [np.float64], OpReqType.kWriteTo)[0]
    nv.random.seed(3)
    nd.waitall()
    got = _run_compute(op, attrs, [], [(5, 7)], [np.float64], OpReqType.parse(req), [start.copy()])[
        0
    ]
    want = start + written if req == "add" else start
    np.testing.assert_allclose(got, want, rtol=1e-15)


# -- symbols and gradients -------------------------------------------------------------------------


def test_symbolic_samplers_infer_shape_and_draw_anew_each_forward() -> None:
    x = nv.sym.Variable("x")
    noisy = x + nv.sym.random.normal(0, 1)  # shape from x
    exe = noisy.simple_bind(nv.cpu(), x=(64, 32))
    a = exe.forward(x=np.zeros((64, 32)))[0].asnumpy()
    b = exe.forward(x=np.zeros((64, 32)))[0].asnumpy()
    assert a.shape == (64, 32)
    assert not np.array_equal(a, b)
    assert stats.kstest(np.concatenate([a.ravel(), b.ravel()]), "norm").pvalue > P_MIN
    lo, hi = nv.sym.Variable("lo"), nv.sym.Variable("hi")
    per_row = nv.sym.random.uniform(lo, hi, shape=(3,))
    _, out_shapes, _ = per_row.infer_shape(lo=(4,), hi=(4,))
    assert out_shapes == [(4, 3)]


def test_sampling_has_zero_gradient_through_its_parameters() -> None:
    mu, sigma = nv.sym.Variable("mu"), nv.sym.Variable("sigma")
    y = nv.sym.sample_normal(mu, sigma, shape=(5,)) * 2
    exe = y.simple_bind(nv.cpu(), mu=(3,), sigma=(3,))
    exe.forward(is_train=True, mu=np.zeros(3), sigma=np.ones(3))
    exe.backward([nd.ones((3, 5))])
    for name in ("mu", "sigma"):
        np.testing.assert_array_equal(exe.grad_dict[name].asnumpy(), 0.0)


# -- errors name the op and the argument; everything keeps working ---------------------------------


def test_bad_parameters_raise_named_errors() -> None:
    # a value outside the distribution's domain fails in the kernel, as MXNet's samplers
    # CHECK in Forward: the call returns, the wait on its output raises
    domain = [
        (lambda: nd.random.normal(0, -1, shape=3), r"_random_normal.*'scale'.*> 0"),
        (lambda: nd.random.uniform(2, 1, shape=3), r"_random_uniform.*'high'.*>= low"),
        (lambda: nd.random.gamma(0, 1), r"_random_gamma.*'alpha'.*> 0"),
        (lambda: nd.random.poisson(-2), r"_random_poisson.*'lam'.*>= 0"),
        (lambda: nd.random.negative_binomial(3, 1.5), r"negative_binomial.*'p'.*\[0, 1\]"),
        (lambda: nd._internal._random_exponential(lam=-1, shape=3), r"exponential.*'lam'.*> 0"),
        (lambda: nd.random.randint(5, 5), r"_random_randint.*'high'.*> low"),
    ]
    for call, pattern in domain:
        out = call()
        with pytest.raises(nv.NNVMError, match=pattern) as err:
            out.asnumpy()
        assert isinstance(err.value.__cause__, nv.ParamError)
    cases = [
        (lambda: nd.random.exponential(0), r"exponential.*'scale'.*> 0"),  # the front-end's
        (lambda: nd.random.uniform(shape=3, dtype="int32"), r"_random_uniform.*'dtype'"),
        (lambda: nd.random.uniform(nd.zeros(2), 1.0), r"uniform.*'high'.*NDArray"),
        (lambda: nd.random.normal("0", 1), r"normal.*'loc'.*number"),
        (lambda: nd.random.uniform(ctx="gpu"), r"uniform.*ctx.*Context"),
        (lambda: nd.random.multinomial([0.5, 0.5]), r"multinomial.*'data'.*NDArray"),
        (lambda: nv.random.seed(1.5), r"seed.*seed_state.*int"),
        (lambda: nv.random.seed("7"), r"seed.*seed_state.*int"),
        (lambda: nv.random.seed(1, ctx="gpu(0)"), r"seed.*ctx"),
    ]
    for call, pattern in cases:
        with pytest.raises(nv.ParamError, match=pattern):
            call()
    with pytest.raises(nv.InferError, match=r"_random_uniform.*'shape'.*negative"):
        nd.random.uniform(shape=(2, -3))
    with pytest.raises(nv.InferError, match=r"sample_normal.*'sigma'.*shape"):
        nd.sample_normal(nd.zeros((2,)), nd.ones((3,)))
    with pytest.raises(nv.InferError, match=r"_sample_multinomial.*'data'.*float"):
        nd.random.multinomial(nd.array([1, 0], dtype="int32"))
    with pytest.raises(nv.InferError, match=r"_random_uniform_like.*'data'.*float"):
        nd._internal._random_uniform_like(nd.zeros((2,), dtype="int32"))
    # the registry, the engine and the stream still work
    nv.random.seed(5)
    x = nv.random.uniform(shape=(4,)).asnumpy()
    nv.random.seed(5)
    np.testing.assert_array_equal(nv.random.uniform(shape=(4,)).asnumpy(), x)


# -- GPU (the simulator where there is none): the one kernel body gives the CPU's numbers ----------

GPU_OPS = [
    ("_random_uniform", {"low": -1.0, "high": 2.0}),
    ("_random_normal", {"loc": 1.0, "scale": 3.0}),
    ("_random_gamma", {"alpha": 0.7, "beta": 2.0}),
    ("_random_exponential", {"lam": 2.0}),
    ("_random_poisson", {"lam": 25.0}),
    ("_random_negative_binomial", {"k": 2, "p": 0.3}),
    ("_random_generalized_negative_binomial", {"mu": 3.0, "alpha": 0.4}),
    ("_random_randint", {"low": -5, "high": 9, "dtype": "int64"}),
]


def _on(ctx: nv.Context, fn: Any) -> np.ndarray:
    nv.random.seed(SEED)
    with ctx:
        return fn().asnumpy()


@pytest.mark.gpu
@pytest.mark.parametrize(("op", "params"), GPU_OPS, ids=[o for o, _ in GPU_OPS])
def test_gpu_draws_what_the_cpu_draws(op, params) -> None:
    params = {"dtype": "float64", **params}
    sampler = getattr(nd._internal, op)
    cpu = _on(nv.cpu(0), lambda: sampler(shape=(48,), **params))
    gpu = _on(nv.gpu(0), lambda: sampler(shape=(48,), **params))
    np.testing.assert_allclose(gpu, cpu, rtol=1e-12)


@pytest.mark.gpu
def test_gpu_per_row_multinomial_and_shuffle_match_the_cpu() -> None:
    def run(ctx: nv.Context) -> list[np.ndarray]:
        nv.random.seed(SEED)
        mu = nd.array([[0.0, 5.0], [1.0, 2.0]], ctx=ctx)
        sigma = nd.array([[1.0, 0.5], [2.0, 0.1]], ctx=ctx)
        probs = nd.array([[0.1, 0.6, 0.3], [0.5, 0.25, 0.25]], ctx=ctx)
        rows = nd.array(np.arange(20.0).reshape(10, 2), ctx=ctx)
        draws = nd.random.multinomial(probs, shape=6, get_prob=True)
        return [
            nd.sample_normal(mu, sigma, shape=(3,), dtype="float64").asnumpy(),
            draws[0].asnumpy(),
            draws[1].asnumpy(),
            nd.random.shuffle(rows).asnumpy(),
            nd.Dropout(nd.ones((6, 5), ctx=ctx), p=0.4, mode="always").asnumpy(),
        ]

    for got, want in zip(run(nv.gpu(0)), run(nv.cpu(0))):
        np.testing.assert_allclose(got, want, rtol=1e-6)


# -- Dropout draws from the same stream ----------------------------------------------------------


def test_dropout_masks_are_reproducible_and_bernoulli() -> None:
    x = nd.ones((200, 250))
    nv.random.seed(SEED)
    a = nd.Dropout(x, p=0.3, mode="always").asnumpy()
    nv.random.seed(SEED)
    b = nd.Dropout(x, p=0.3, mode="always").asnumpy()
    np.testing.assert_array_equal(a, b)
    assert set(np.unique(a)) == {0.0, np.float32(1 / 0.7)}
    kept = int((a != 0).sum())
    assert stats.binomtest(kept, a.size, 0.7).pvalue > P_MIN


def test_dropout_axes_share_draws_and_p1_gives_nan_in_training() -> None:
    nv.random.seed(SEED)
    y = nd.Dropout(nd.ones((30, 4, 50)), p=0.5, mode="always", axes=(0, 2)).asnumpy()
    assert (y == y[:1, :, :1]).all()  # one draw per index of axis 1
    nv.random.seed(SEED)
    z = nd.Dropout(nd.ones((300, 40)), p=0.25, mode="always", axes=(1,)).asnumpy()
    assert (z == z[:, :1]).all()
    assert stats.binomtest(int((z[:, 0] != 0).sum()), 300, 0.75).pvalue > P_MIN
    # MXNet: the mask is Bernoulli(0) / 0, so nothing is kept and 0 * inf is NaN
    assert np.isnan(nd.Dropout(nd.ones((3, 3)), p=1.0, mode="always").asnumpy()).all()
    np.testing.assert_array_equal(nd.Dropout(nd.ones((3, 3)), p=1.0).asnumpy(), 1.0)  # inference
