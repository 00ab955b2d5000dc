"""Statistical checks of random generators (MXNet's test_utils): mean, variance, chi-square.

`generator(n)` returns n i.i.d. samples. chi_square_check needs SciPy (a test dependency).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..base import NNVMError

Generator = Callable[[int], Any]


def gen_buckets_probs_with_ppf(
    ppf: Callable[[float], float], nbuckets: int
) -> tuple[list[tuple[float, float]], list[float]]:
    """nbuckets equal-probability buckets [ppf(i/n), ppf((i+1)/n)) and their probabilities."""
    if not isinstance(nbuckets, int) or nbuckets < 1:
        raise NNVMError(
            f"gen_buckets_probs_with_ppf: nbuckets expects an int >= 1, got {nbuckets!r}"
        )
    probs = [1.0 / nbuckets] * nbuckets
    buckets = [(ppf(i / nbuckets), ppf((i + 1) / nbuckets)) for i in range(nbuckets)]
    return buckets, probs


def _samples(generator: Generator, nsamples: int) -> np.ndarray:
    out = generator(nsamples)
    return np.asarray(out.asnumpy() if hasattr(out, "asnumpy") else out).reshape(-1)


def mean_check(generator: Generator, mu: float, sigma: float, nsamples: int = 1000000) -> bool:
    """The sample mean lies within mu ± 3 sigma / sqrt(n)."""
    mean = _samples(generator, nsamples).mean()
    bound = 3 * sigma / np.sqrt(nsamples)
    return bool(mu - bound < mean < mu + bound)


def var_check(generator: Generator, sigma: float, nsamples: int = 1000000) -> bool:
    """The sample variance lies within sigma^2 ± 3 sqrt(2 sigma^4 / (n - 1))."""
    var = _samples(generator, nsamples).var(ddof=1)
    bound = 3 * np.sqrt(2 * sigma**4 / (nsamples - 1))
    return bool(sigma**2 - bound < var < sigma**2 + bound)


def chi_square_check(
    generator: Generator, buckets: Sequence[Any], probs: Sequence[float], nsamples: int = 1000000
) -> tuple[float, np.ndarray, np.ndarray]:
    """(p-value, observed, expected counts) of a chi-square test of the samples.

    `buckets` are (low, high) ranges for a continuous distribution, or the possible values
    of a discrete one; `probs` their probabilities.
    """
    from scipy import stats  # type: ignore[import-untyped]

    if len(probs) != len(buckets) or not buckets:
        raise NNVMError(f"chi_square_check: {len(buckets)} buckets but {len(probs)} probabilities")
    samples = _samples(generator, nsamples)
    if isinstance(buckets[0], list | tuple):
        edges = np.asarray(buckets, dtype=np.float64)
        if (edges[:, 0] > edges[:, 1]).any() or (edges[1:, 0] < edges[:-1, 1]).any():
            raise NNVMError("chi_square_check: buckets must be ascending, non-overlapping ranges")
        ids = np.searchsorted(edges.reshape(-1), samples, side="right")
        # a sample in bucket i lands between its two edges: at position 2i + 1
        obs = np.array([(ids == 2 * i + 1).sum() for i in range(len(buckets))])
    else:
        obs = np.array([(samples == b).sum() for b in buckets])
    expected = np.asarray(probs, dtype=np.float64) * nsamples
    # scipy needs equal totals: scale the expectation to the samples that fell in a bucket
    expected = expected * obs.sum() / expected.sum() if obs.sum() else expected
    _, p = stats.chisquare(f_obs=obs, f_exp=expected)
    return float(p), obs, expected


def verify_generator(
    generator: Generator,
    buckets: Sequence[Any],
    probs: Sequence[float],
    nsamples: int = 1000000,
    nrepeat: int = 5,
    success_rate: float = 0.2,
    alpha: float = 0.05,
) -> list[float]:
    """Repeat chi_square_check; AssertionError unless a `success_rate` share has p > alpha."""
    results = [chi_square_check(generator, buckets, probs, nsamples) for _ in range(nrepeat)]
    p_values = [r[0] for r in results]
    if sum(p > alpha for p in p_values) < nrepeat * success_rate:
        raise AssertionError(
            f"verify_generator: chi-square p-values {p_values} (alpha={alpha}); "
            f"observed {[r[1].tolist() for r in results]}, expected "
            f"{[r[2].tolist() for r in results]}; buckets={list(buckets)}, probs={list(probs)}"
        )
    return p_values
