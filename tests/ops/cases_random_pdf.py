"""OpCase rows of the _random_pdf_* ops (and their random_pdf_* aliases), against SciPy.

Samples are drawn inside each distribution's support (counts for the discrete ones,
simplex rows for dirichlet) and the parameters inside their domains, away from the edges
where finite differences would step out. The discrete distributions have no gradient
with respect to the sample (as in MXNet), so only their parameters are differentiated.
check_op draws every input from one interval: uniform's low and high would cross there,
so uniform skips it (its inference is that of the others).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from op_db import OpCase

S = (2, 3)  # the parameters' shape
N = (4,)  # samples per distribution
X = S + N


def _bcast(p: np.ndarray, sample: np.ndarray) -> np.ndarray:
    """A parameter array broadcast against the sample it parameterises."""
    return p.reshape(p.shape + (1,) * (sample.ndim - p.ndim))


def _counts(rng: np.random.Generator, high: int) -> np.ndarray:
    return rng.integers(0, high, size=X).astype(np.float64)


# distribution -> inputs(rng) in float64
INPUTS: dict[str, Any] = {
    "uniform": lambda rng: (
        lambda lo, hi: [lo[..., None] + (hi - lo)[..., None] * rng.uniform(0.05, 0.95, X), lo, hi]
    )(rng.uniform(-1.0, 0.0, S), rng.uniform(1.0, 2.0, S)),
    "normal": lambda rng: [rng.uniform(-2, 2, X), rng.uniform(-1, 1, S), rng.uniform(0.5, 1.5, S)],
    "gamma": lambda rng: [rng.uniform(0.5, 2, X), rng.uniform(1.5, 3, S), rng.uniform(0.5, 2, S)],
    "exponential": lambda rng: [rng.uniform(0.1, 3, X), rng.uniform(0.5, 2, S)],
    "poisson": lambda rng: [_counts(rng, 7), rng.uniform(0.5, 4, S)],
    "negative_binomial": lambda rng: [
        _counts(rng, 9),
        rng.uniform(1, 5, S),
        rng.uniform(0.2, 0.8, S),
    ],
    "generalized_negative_binomial": lambda rng: [
        _counts(rng, 9),
        rng.uniform(0.5, 3, S),
        rng.uniform(0.2, 1.5, S),
    ],
}


def _scipy_pdf(dist: str, is_log: bool) -> Any:
    """The SciPy (log) density of `dist` as f(sample, *params broadcast)."""

    def f(x: np.ndarray, *p: np.ndarray) -> np.ndarray:
        from scipy import stats

        law = {
            "uniform": lambda lo, hi: stats.uniform(loc=lo, scale=hi - lo),
            "normal": lambda mu, sigma: stats.norm(mu, sigma),
            "gamma": lambda a, b: stats.gamma(a, scale=1 / b),  # MXNet's beta: a rate
            "exponential": lambda lam: stats.expon(scale=1 / lam),
            "poisson": lambda lam: stats.poisson(lam),
            "negative_binomial": lambda k, q: stats.nbinom(k, q),
            "generalized_negative_binomial": lambda mu, a: stats.nbinom(1 / a, 1 / (1 + a * mu)),
        }[dist](*p)
        discrete = dist in ("poisson", "negative_binomial", "generalized_negative_binomial")
        if discrete:
            return law.logpmf(x) if is_log else law.pmf(x)
        return law.logpdf(x) if is_log else law.pdf(x)

    return f


def reference(dist: str) -> Any:
    def ref(sample: np.ndarray, *params: np.ndarray, is_log: bool = False) -> np.ndarray:
        return _scipy_pdf(dist, is_log)(sample, *(_bcast(p, sample) for p in params))

    return ref


def dirichlet_inputs(rng: np.random.Generator) -> list[np.ndarray]:
    g = rng.uniform(0.3, 1.0, size=(2, 4, 3))
    return [g / g.sum(-1, keepdims=True), rng.uniform(0.8, 3.0, size=(2, 3))]


def dirichlet_reference(sample: np.ndarray, alpha: np.ndarray, is_log: bool = False) -> Any:
    """log B(alpha)^-1 + sum (alpha - 1) log x, from SciPy's gammaln."""
    from scipy.special import gammaln

    a = alpha[:, None, :]
    logp = gammaln(a.sum(-1)) - gammaln(a).sum(-1) + ((a - 1) * np.log(sample)).sum(-1)
    return logp if is_log else np.exp(logp)


def _as(make: Any) -> Any:
    return lambda rng, dtype: [np.asarray(a, dtype=dtype) for a in make(rng)]


DISCRETE = ("poisson", "negative_binomial", "generalized_negative_binomial")

CASES: list[OpCase] = [
    OpCase(
        name,
        [X] + [S] * (len(make(np.random.default_rng(0))) - 1),
        reference(dist),
        params={"is_log": log},
        inputs=_as(make),
        low=0.2,
        high=0.9,
        grad_inputs=(1, 2)[: len(make(np.random.default_rng(0))) - 1] if dist in DISCRETE else None,
        check_op=dist != "uniform",
        id="log" if log else "",
    )
    for dist, make in INPUTS.items()
    for name in (f"_random_pdf_{dist}", f"random_pdf_{dist}")
    for log in (False, True)
]
CASES += [
    OpCase(
        name,
        [(2, 4, 3), (2, 3)],
        dirichlet_reference,
        params={"is_log": log},
        inputs=_as(dirichlet_inputs),
        low=0.2,
        high=0.9,
        id="log" if log else "",
    )
    for name in ("_random_pdf_dirichlet", "random_pdf_dirichlet")
    for log in (False, True)
]
# float16 (read into float32 copies on the cpu, where numba has no half arithmetic)
CASES += [
    OpCase(
        "_random_pdf_normal",
        [X, S, S],
        reference("normal"),
        params={"is_log": True},
        inputs=_as(INPUTS["normal"]),
        dtypes=(np.float16,),
        low=0.2,
        high=0.9,
        grad=False,
        id="float16",
    ),
    OpCase(
        "_random_pdf_dirichlet",
        [(2, 4, 3), (2, 3)],
        dirichlet_reference,
        inputs=_as(dirichlet_inputs),
        dtypes=(np.float16,),
        tols={np.float16: (2e-2, 1e-2)},
        low=0.2,
        high=0.9,
        grad=False,
        id="float16",
    ),
]
