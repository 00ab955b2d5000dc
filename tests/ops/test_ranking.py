"""top_order: the detection ops' ranking, against NumPy's stable argsort of -scores."""

from __future__ import annotations

import numpy as np
import pytest

from nnvmpy.ops._ranking import top_order


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("k", [None, -1, 0, 1, 7, 50, 199, 200, 500])
def test_top_order_is_the_stable_argsort_prefix(dtype, k) -> None:
    """Scores from a few values (many ties, some straddling the k-th), zeros of both signs
    and a few NaN (ranked last by argsort of -scores)."""
    rng = np.random.default_rng(100 if k is None else k + 10)
    for _ in range(20):
        scores = rng.integers(-3, 4, 200).astype(dtype) / 2
        scores[rng.integers(0, 200, 5)] = -0.0
        scores[rng.integers(0, 200, 3)] = np.nan
        want = np.argsort(-scores, kind="stable")
        if k is not None:
            want = want[: max(k, 0)]
        np.testing.assert_array_equal(top_order(scores, k), want)


def test_nan_enters_the_top_k_when_the_numbers_run_out() -> None:
    scores = np.array([np.nan, 1.0, np.nan, 2.0])
    np.testing.assert_array_equal(top_order(scores, 3), [3, 1, 0])
