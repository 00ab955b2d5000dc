"""The CPU's vectorised float32 softmax rows (ops/nn/_softmax_f32.py) against NumPy.

softmax, log_softmax and softmin along the last axis of float32 arrays take that loop
(8-lane maxima and sums): rows shorter than, equal to and longer than a lane group, with
a temperature, with NaN and infinities, forward and backward, in place, against float64
formulas in NumPy.
"""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy import nd

LENGTHS = [1, 5, 8, 9, 31, 1000]


def _softmax(x: np.ndarray, t: float = 1.0, log: bool = False) -> np.ndarray:
    z = x.astype(np.float64) / t
    m = z.max(-1, keepdims=True)
    lse = m + np.log(np.exp(z - m).sum(-1, keepdims=True))
    return z - lse if log else np.exp(z - lse)


def _data(n: int, seed: int = 0) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal((6, n)) * 4).astype(np.float32)


@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("op", ["softmax", "log_softmax", "softmin"])
def test_forward_matches_numpy(op: str, n: int) -> None:
    x = _data(n)
    for t in (1.0, 0.3):
        got = getattr(nd, op)(nd.array(x), temperature=t).asnumpy()
        assert got.dtype == np.float32
        want = _softmax(-x if op == "softmin" else x, t, op == "log_softmax")
        # float32 arguments of exp: relative error about |x / t - max| * eps
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6 if op != "log_softmax" else 2e-5)


@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_backward_matches_the_formula(op: str, n: int) -> None:
    x, dy = _data(n), _data(n, seed=1)
    a = nd.array(x)
    a.attach_grad()
    with nv.autograd.record():
        y = getattr(nd, op)(a, temperature=0.7)
    y.backward(nd.array(dy))
    p = _softmax(x, 0.7)
    d = dy.astype(np.float64)
    if op == "softmax":
        want = p * (d - (d * p).sum(-1, keepdims=True)) / 0.7
    else:
        want = (d - p * d.sum(-1, keepdims=True)) / 0.7
    np.testing.assert_allclose(a.grad.asnumpy(), want, rtol=1e-4, atol=1e-5)


def test_nan_and_infinite_rows_are_nan_and_minus_infinity_contributes_zero() -> None:
    x = _data(20)
    x[1, 3] = np.nan
    x[2, 17] = np.inf
    x[3, :] = -np.inf
    x[4, 5] = -np.inf
    for op in ("softmax", "log_softmax"):
        got = getattr(nd, op)(nd.array(x)).asnumpy()
        assert np.isnan(got[1:4]).all(), op
        assert np.isfinite(np.delete(got[4], 5)).all(), op
    soft = nd.softmax(nd.array(x)).asnumpy()
    assert soft[4, 5] == 0.0
    np.testing.assert_allclose(soft[4].sum(), 1.0, rtol=1e-6)


def test_in_place_gives_the_out_of_place_result() -> None:
    x = _data(1000)
    for op in ("softmax", "log_softmax"):
        a = nd.array(x)
        want = getattr(nd, op)(a).asnumpy()
        getattr(nd, op)(a, out=a)
        np.testing.assert_array_equal(a.asnumpy(), want, err_msg=op)


def test_a_large_value_in_any_lane_or_the_tail_is_the_row_maximum() -> None:
    # a max missed in one lane would leave exp(500 - m) to overflow: NaN rows
    n = 21  # two groups of 8 lanes and a tail of 5
    x = np.zeros((n, n), np.float32)
    x[np.arange(n), np.arange(n)] = 500.0
    got = nd.softmax(nd.array(x)).asnumpy()
    np.testing.assert_allclose(got, np.eye(n), atol=1e-30)
