"""The _random_pdf_* ops beyond their op-table rows (cases_random_pdf.py): densities and
log-densities against SciPy over several parameter and sample shapes and dtypes, the
gradients against SciPy-derived formulas and finite differences, MXNet's conventions
(beta is gamma's rate, counts get no gradient), shape inference and named errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.base import InferError, ParamError
from nnvmpy.test_utils import check_numeric_gradient

stats = pytest.importorskip("scipy.stats")
special = pytest.importorskip("scipy.special")

DISCRETE = ("poisson", "negative_binomial", "generalized_negative_binomial")


def draw(dist: str, rng: np.random.Generator, s: tuple, n: tuple) -> list[np.ndarray]:
    """(sample of shape s + n inside the support, parameters of shape s)."""
    x = s + n

    def params(*bounds: tuple[float, float]) -> list[np.ndarray]:
        return [rng.uniform(lo, hi, s) for lo, hi in bounds]

    if dist == "uniform":
        lo, hi = params((-2, 0), (0.5, 3))
        u = rng.uniform(0, 1, x)
        return [lo.reshape(s + (1,) * len(n)) + u * (hi - lo).reshape(s + (1,) * len(n)), lo, hi]
    if dist == "normal":
        return [rng.normal(0, 2, x), *params((-1, 1), (0.3, 2))]
    if dist == "gamma":
        return [rng.uniform(0.05, 4, x), *params((0.5, 4), (0.3, 3))]
    if dist == "exponential":
        return [rng.uniform(0, 5, x), *params((0.2, 3))]
    if dist == "poisson":
        return [rng.integers(0, 10, x).astype(float), *params((0.1, 6))]
    if dist == "negative_binomial":
        return [rng.integers(0, 12, x).astype(float), *params((0.5, 6), (0.1, 0.9))]
    assert dist == "generalized_negative_binomial"
    return [rng.integers(0, 12, x).astype(float), *params((0.2, 4), (0.1, 2))]


def scipy_law(dist: str, *p: np.ndarray) -> Any:
    return {
        "uniform": lambda lo, hi: stats.uniform(loc=lo, scale=hi - lo),
        "normal": lambda mu, sigma: stats.norm(mu, sigma),
        "gamma": lambda a, b: stats.gamma(a, scale=1 / b),
        "exponential": lambda lam: stats.expon(scale=1 / lam),
        "poisson": lambda lam: stats.poisson(lam),
        "negative_binomial": lambda k, q: stats.nbinom(k, q),
        "generalized_negative_binomial": lambda mu, a: stats.nbinom(1 / a, 1 / (1 + a * mu)),
    }[dist](*p)


def scipy_logpdf(dist: str, sample: np.ndarray, *params: np.ndarray) -> np.ndarray:
    extra = sample.ndim - params[0].ndim
    law = scipy_law(dist, *(p.reshape(p.shape + (1,) * extra) for p in params))
    return law.logpmf(sample) if dist in DISCRETE else law.logpdf(sample)


def nd_args(arrays: list[np.ndarray], dtype: Any) -> list[nv.nd.NDArray]:
    return [nv.nd.array(a, dtype=dtype) for a in arrays]


DISTS = ["uniform", "normal", "gamma", "exponential", *DISCRETE]
SHAPES = [((3,), ()), ((1,), (7,)), ((2, 3), (4,)), ((2,), (2, 3))]


@pytest.mark.parametrize("dist", DISTS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_density_matches_scipy(dist: str, dtype: str) -> None:
    rng = np.random.default_rng(len(dist))
    tol = {"float32": 2e-5, "float64": 1e-11}[dtype]
    for s, n in SHAPES:
        arrays = [a.astype(dtype) for a in draw(dist, rng, s, n)]
        want = scipy_logpdf(dist, *(a.astype(np.float64) for a in arrays))
        op = getattr(nv.nd, f"random_pdf_{dist}")
        log = op(*nd_args(arrays, dtype), is_log=True)
        pdf = getattr(nv.nd._internal, f"_random_pdf_{dist}")(*nd_args(arrays, dtype))
        assert log.shape == s + n
        assert log.dtype == np.dtype(dtype)
        np.testing.assert_allclose(log.asnumpy(), want, rtol=tol, atol=tol)
        np.testing.assert_allclose(pdf.asnumpy(), np.exp(want), rtol=tol * 10, atol=tol)


def dirichlet_arrays(rng: np.random.Generator, s: tuple, n: tuple, k: int) -> list[np.ndarray]:
    g = rng.gamma(2.0, size=s + n + (k,)) + 0.05
    return [g / g.sum(-1, keepdims=True), rng.uniform(0.5, 4, (*s, k))]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("s", "n", "k"), [((), (5,), 3), ((2,), (), 4), ((2, 3), (4,), 2)])
def test_dirichlet_matches_scipy(dtype: str, s: tuple, n: tuple, k: int) -> None:
    sample, alpha = dirichlet_arrays(np.random.default_rng(k), s, n, k)
    sample, alpha = sample.astype(dtype), alpha.astype(dtype)
    rows_x, rows_a = sample.reshape(-1, k).astype(np.float64), alpha.reshape(-1, k)
    per = max(1, int(np.prod(n)))
    want = np.array(
        [
            stats.dirichlet(rows_a[i // per].astype(np.float64)).logpdf(x / x.sum())
            for i, x in enumerate(rows_x)
        ]
    ).reshape(s + n)
    got = nv.nd.random.pdf_dirichlet(*nd_args([sample, alpha], dtype), is_log=True)
    assert got.shape == s + n
    tol = {"float32": 1e-4, "float64": 1e-9}[dtype]  # x / x.sum() moves float32 rows by ~1e-7
    np.testing.assert_allclose(got.asnumpy(), want, rtol=tol, atol=tol)
    dens = nv.nd.random_pdf_dirichlet(*nd_args([sample, alpha], dtype))
    np.testing.assert_allclose(dens.asnumpy(), np.exp(want), rtol=tol * 10, atol=tol)


def test_mxnet_doc_example_and_gamma_rate() -> None:
    sample = nv.nd.array([[-2, -1, 0, 1, 2], [-2, -1, 0, 1, 2]], dtype="float64")
    got = nv.nd.random_pdf_normal(
        sample, nv.nd.array([0, 0], dtype="float64"), nv.nd.array([1, 2], dtype="float64")
    )
    x = np.array([-2, -1, 0, 1, 2.0])
    np.testing.assert_allclose(got.asnumpy(), [stats.norm.pdf(x), stats.norm.pdf(x, 0, 2)])
    # beta is a rate in the density (the samplers take a scale), as in MXNet
    g = nv.nd.random_pdf_gamma(nv.nd.array([1.5]), nv.nd.array([2.0]), nv.nd.array([4.0]))
    np.testing.assert_allclose(g.asnumpy(), stats.gamma.pdf(1.5, 2.0, scale=0.25), rtol=1e-6)


def grads(op: str, arrays: list[np.ndarray], is_log: bool) -> list[np.ndarray]:
    args = nd_args(arrays, "float64")
    for a in args:
        a.attach_grad()
    with nv.autograd.record():
        y = getattr(nv.nd, op)(*args, is_log=is_log)
    y.backward(nv.nd.ones_like(y))
    return [a.grad.asnumpy() for a in args]


@pytest.mark.parametrize("is_log", [False, True])
def test_gradients_match_scipy_formulas(is_log: bool) -> None:
    """d/dtheta (log) pdf, summed over each distribution's samples, from SciPy's digamma."""
    rng = np.random.default_rng(7)
    x, mu, sigma = draw("normal", rng, (3,), (5,))
    dx, dmu, dsigma = grads("random_pdf_normal", [x, mu, sigma], is_log)
    m, sd = mu[:, None], sigma[:, None]
    w = 1.0 if is_log else stats.norm.pdf(x, m, sd)
    np.testing.assert_allclose(dx, w * -(x - m) / sd**2, rtol=1e-10)
    np.testing.assert_allclose(dmu, (w * (x - m) / sd**2).sum(1), rtol=1e-10)
    np.testing.assert_allclose(dsigma, (w * ((x - m) ** 2 / sd**3 - 1 / sd)).sum(1), rtol=1e-10)

    x, k, p = draw("negative_binomial", rng, (3,), (5,))
    dx, dk, dp = grads("random_pdf_negative_binomial", [x, k, p], is_log)
    kk, pp = k[:, None], p[:, None]
    w = 1.0 if is_log else stats.nbinom.pmf(x, kk, pp)
    want_k = special.digamma(x + kk) - special.digamma(kk) + np.log(pp)
    np.testing.assert_array_equal(dx, 0.0)  # a count has no gradient (MXNet)
    np.testing.assert_allclose(dk, (w * want_k).sum(1), rtol=1e-9)
    np.testing.assert_allclose(dp, (w * (kk / pp - x / (1 - pp))).sum(1), rtol=1e-9)


@pytest.mark.parametrize("dist", DISTS)
def test_parameter_gradients_by_finite_differences_on_scipy(dist: str) -> None:
    """The parameters' gradients of the log-density against central differences of SciPy's."""
    rng = np.random.default_rng(3)
    arrays = draw(dist, rng, (2,), (3,))
    got = grads(f"random_pdf_{dist}", arrays, True)
    for j in range(1, len(arrays)):
        for i in range(2):
            h = 1e-6 * max(1.0, abs(arrays[j][i]))
            up, down = [a.copy() for a in arrays], [a.copy() for a in arrays]
            up[j][i] += h
            down[j][i] -= h
            diff = (scipy_logpdf(dist, *up) - scipy_logpdf(dist, *down)).sum() / (2 * h)
            np.testing.assert_allclose(got[j][i], diff, rtol=1e-5, atol=1e-6)
    if dist in ("uniform", *DISCRETE):
        np.testing.assert_array_equal(got[0], 0.0)


@pytest.mark.parametrize("is_log", [False, True])
def test_dirichlet_gradient_by_finite_differences(is_log: bool) -> None:
    sample, alpha = dirichlet_arrays(np.random.default_rng(1), (2,), (3,), 3)
    s = nv.sym.random.pdf_dirichlet(nv.sym.Variable("x"), nv.sym.Variable("a"), is_log=is_log)
    check_numeric_gradient(s, {"x": sample, "a": alpha}, rtol=1e-4, atol=1e-6, dtype=np.float64)
    dx, da = grads("random_pdf_dirichlet", [sample, alpha], is_log)
    w = 1.0 if is_log else nv.nd.random_pdf_dirichlet(*nd_args([sample, alpha], "float64"))
    w = np.asarray(w.asnumpy() if not is_log else w)[..., None]
    a = alpha[:, None, :]
    np.testing.assert_allclose(dx, w * (a - 1) / sample, rtol=1e-10)
    psi = special.digamma(a.sum(-1, keepdims=True)) - special.digamma(a)
    np.testing.assert_allclose(da, (w * (np.log(sample) + psi)).sum(1), rtol=1e-10)


def test_float16() -> None:
    rng = np.random.default_rng(0)
    arrays = draw("gamma", rng, (2,), (5,))
    got = nv.nd.random_pdf_gamma(*nd_args(arrays, "float16"), is_log=True)
    assert got.dtype == np.float16
    want = scipy_logpdf("gamma", *(a.astype(np.float16).astype(np.float64) for a in arrays))
    np.testing.assert_allclose(got.asnumpy(), want, rtol=5e-3, atol=5e-3)


@pytest.mark.gpu
@pytest.mark.parametrize("dist", [*DISTS, "dirichlet"])
def test_gpu_matches_scipy(dist: str) -> None:
    rng = np.random.default_rng(5)
    if dist == "dirichlet":
        arrays = dirichlet_arrays(rng, (2,), (3,), 4)
        x, a = arrays[0], arrays[1][:, None, :]
        want = (
            special.gammaln(a.sum(-1)) - special.gammaln(a).sum(-1) + ((a - 1) * np.log(x)).sum(-1)
        )
    else:
        arrays = draw(dist, rng, (2,), (3,))
        want = scipy_logpdf(dist, *arrays)
    args = [nv.nd.array(a, ctx=nv.gpu(0), dtype="float64") for a in arrays]
    got = getattr(nv.nd, f"random_pdf_{dist}")(*args, is_log=True)
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-10, atol=1e-12)


# -- shapes, types and errors ----------------------------------------------------------------


def test_shape_inference_fills_in_both_ways() -> None:
    s = nv.sym.random_pdf_normal(nv.sym.var("x"), nv.sym.var("mu"), nv.sym.var("sigma"))
    args, outs, _ = s.infer_shape_partial(mu=(2,))
    assert args == [(), (2,), (2,)]
    args, outs, _ = s.infer_shape(x=(2, 5), sigma=(2,))
    assert args == [(2, 5), (2,), (2,)]
    assert outs == [(2, 5)]
    d = nv.sym.random_pdf_dirichlet(nv.sym.var("x"), nv.sym.var("alpha"))
    args, outs, _ = d.infer_shape(x=(2, 4, 3), alpha=(2, 3))
    assert outs == [(2, 4)]


@pytest.mark.parametrize(
    ("op", "shapes", "match"),
    [
        ("random_pdf_normal", [(2, 3), (2,), (3,)], "input 'sigma'.*share one shape"),
        ("random_pdf_normal", [(3, 2), (2,), (2,)], r"input 'sample' has shape \(3, 2\)"),
        ("random_pdf_normal", [(2,), (2, 3), (2, 3)], "input 'sample'"),
        ("random_pdf_exponential", [(4, 3), (3,)], "input 'sample'"),
        ("random_pdf_dirichlet", [(2, 4, 3), (2, 2)], r"input 'sample'.*\+ \(2,\)"),
        ("random_pdf_dirichlet", [(3, 4, 3), (2, 3)], "input 'sample'"),
    ],
)
def test_bad_shapes_are_named_errors(op: str, shapes: list, match: str) -> None:
    args = [nv.nd.ones(s) for s in shapes]
    with pytest.raises(InferError, match=f"{op}: {match}"):
        getattr(nv.nd, op)(*args)
    ok = nv.nd.random_pdf_exponential(nv.nd.ones((2, 3)), nv.nd.ones((2,)))  # still usable
    np.testing.assert_allclose(ok.asnumpy(), np.exp(-1.0), rtol=1e-6)


def test_bad_dtypes_and_params_are_named_errors() -> None:
    ints = [nv.nd.ones((2, 3), dtype="int32"), nv.nd.ones((2,), dtype="int32")]
    with pytest.raises(InferError, match=r"random_pdf_poisson: .*int32; expected float"):
        nv.nd.random_pdf_poisson(*ints)
    mixed = [nv.nd.ones((2, 3), dtype="float64"), nv.nd.ones((2,), dtype="float32")]
    with pytest.raises(InferError, match="random_pdf_poisson: input 'lam' has dtype float32"):
        nv.nd.random_pdf_poisson(*mixed)
    with pytest.raises(ParamError, match="random_pdf_poisson: parameter 'is_log'"):
        nv.nd.random_pdf_poisson(nv.nd.ones((2, 3)), nv.nd.ones((2,)), is_log="maybe")
    with pytest.raises(ParamError, match="unknown parameter 'shape'"):
        nv.nd.random_pdf_poisson(nv.nd.ones((2, 3)), nv.nd.ones((2,)), shape=(3,))
