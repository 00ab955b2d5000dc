"""hawkesll against a direct evaluation of the likelihood, and its exact gradient, on
every device (one kernel body per sample for both)."""

from __future__ import annotations

import numpy as np
import pytest
from hawkes_reference import hawkes_inputs, hawkesll_ref

import nnvmpy as nv

REAL = {"lda": 0, "alpha": 1, "beta": 2, "state": 3, "lags": 4, "max_time": 7}


def _nd(xs: list[np.ndarray], ctx: nv.Context | None = None) -> list[nv.nd.NDArray]:
    return [nv.nd.array(x, dtype=x.dtype, ctx=ctx) for x in xs]


def test_docstring_example_by_hand() -> None:
    """One process, events at 6 and 13 (max_time 100): the likelihood written out."""
    mu, a, b = 1.5, 0.2, 1.0
    xs = [
        np.array([[mu]]),
        np.array([a]),
        np.array([b]),
        np.zeros((1, 1)),
        np.array([[6.0, 7.0, 99.0]]),
        np.zeros((1, 3), np.int32),
        np.array([2.0]),
        np.array([100.0]),
    ]
    ll, state = nv.nd.contrib.hawkesll(*_nd(xs))
    intensity_2 = mu + a * b * np.exp(-b * 7.0)
    compensator = mu * 100 + a * ((1 - np.exp(-b * 94.0)) + (1 - np.exp(-b * 87.0)))
    np.testing.assert_allclose(ll.asnumpy(), [np.log(mu) + np.log(intensity_2) - compensator])
    np.testing.assert_allclose(state.asnumpy(), [[np.exp(-94.0) + np.exp(-87.0)]])


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_forward_matches_direct_sum(dtype: type, ctx: nv.Context) -> None:
    xs = hawkes_inputs(np.random.default_rng(3), dtype, n=4, k=3, steps=7)
    ll, state = nv.nd.contrib.hawkesll(*_nd(xs, ctx))
    assert ll.dtype == dtype
    assert state.dtype == dtype
    want = hawkesll_ref(*[x.astype(np.float64) if x.dtype.kind == "f" else x for x in xs])
    tol = {np.float16: 2e-3, np.float32: 1e-5, np.float64: 1e-10}[dtype]
    np.testing.assert_allclose(ll.asnumpy(), want[0], rtol=tol, atol=tol)
    np.testing.assert_allclose(state.asnumpy(), want[1], rtol=tol, atol=tol)


def test_state_carries_the_memory_across_windows() -> None:
    """Two windows chained through out_state give the likelihood of the whole sequence."""
    rng = np.random.default_rng(5)
    lda, alpha, beta = rng.uniform(0.5, 2, (1, 2)), rng.uniform(0.1, 0.8, 2), rng.uniform(1, 2, 2)
    lags = rng.uniform(0.2, 1.0, (1, 6))
    marks = rng.integers(0, 2, (1, 6)).astype(np.int32)
    split = lags[0, :3].sum() + 0.1
    whole = hawkesll_ref(lda, alpha, beta, np.zeros((1, 2)), lags, marks, [6], [lags.sum() + 1])
    ll1, s1 = nv.nd.contrib.hawkesll(
        *_nd([lda, alpha, beta, np.zeros((1, 2)), lags, marks]),
        nv.nd.array([3.0], dtype=np.float64),
        nv.nd.array([split], dtype=np.float64),
    )
    rest = lags[:, 3:].copy()
    rest[0, 0] -= 0.1  # measured from the start of the second window
    ll2, _ = nv.nd.contrib.hawkesll(
        *_nd([lda, alpha, beta, s1.asnumpy().astype(np.float64), rest, marks[:, 3:]]),
        nv.nd.array([3.0], dtype=np.float64),
        nv.nd.array([lags.sum() + 1 - split], dtype=np.float64),
    )
    np.testing.assert_allclose(ll1.asnumpy() + ll2.asnumpy(), whole[0], rtol=1e-5)


def test_gradient_of_both_outputs_matches_finite_differences(ctx: nv.Context) -> None:
    rng = np.random.default_rng(11)
    xs = hawkes_inputs(rng, np.float64)
    g = rng.normal(size=xs[0].shape[0])
    h = rng.normal(size=xs[0].shape)
    arrays = _nd(xs, ctx)
    for i in REAL.values():
        arrays[i].attach_grad()
    with nv.autograd.record():
        ll, state = nv.nd.contrib.hawkesll(*arrays)
    heads = [nv.nd.array(g, dtype=np.float64, ctx=ctx), nv.nd.array(h, ctx=ctx)]
    nv.autograd.backward([ll, state], heads)

    def objective(values: list[np.ndarray]) -> float:
        a, b = hawkesll_ref(*values)
        return float((a * g).sum() + (b * h).sum())

    for name, i in REAL.items():
        numeric = np.zeros_like(xs[i])
        for idx in np.ndindex(xs[i].shape):
            up, down = [x.copy() for x in xs], [x.copy() for x in xs]
            up[i][idx] += 1e-6
            down[i][idx] -= 1e-6
            numeric[idx] = (objective(up) - objective(down)) / 2e-6
        np.testing.assert_allclose(
            arrays[i].grad.asnumpy(), numeric, rtol=1e-5, atol=1e-6, err_msg=name
        )


def test_discrete_inputs_get_zero_gradients() -> None:
    xs = hawkes_inputs(np.random.default_rng(2), np.float64)
    arrays = _nd(xs)
    arrays[5].attach_grad()
    arrays[6].attach_grad()
    with nv.autograd.record():
        ll, _ = nv.nd.contrib.hawkesll(*arrays)
    ll.backward()
    assert not arrays[5].grad.asnumpy().any()
    assert not arrays[6].grad.asnumpy().any()


def test_shape_and_type_inference() -> None:
    names = ["lda", "alpha", "beta", "state", "lags", "marks", "valid_length", "max_time"]
    s = nv.sym.contrib.hawkesll(*[nv.sym.Variable(n) for n in names])
    assert s.list_outputs()[-1].endswith("out_state")
    args, outs, _ = s.infer_shape(lda=(4, 3), lags=(4, 9))
    assert dict(zip(names, args)) == {
        "lda": (4, 3),
        "alpha": (3,),
        "beta": (3,),
        "state": (4, 3),
        "lags": (4, 9),
        "marks": (4, 9),
        "valid_length": (4,),
        "max_time": (4,),
    }
    assert outs == [(4,), (4, 3)]
    arg_types, out_types, _ = s.infer_type(lda=np.float16)
    assert arg_types[names.index("marks")] == np.int32
    assert arg_types[names.index("max_time")] == np.float16
    assert out_types == [np.float16, np.float16]
    with pytest.raises(nv.NNVMError, match="alpha"):
        s.infer_shape(lda=(4, 3), alpha=(2,))
    with pytest.raises(nv.NNVMError, match="marks"):
        s.infer_type(lda=np.float32, marks=np.float32)


def test_bad_marks_and_lengths_are_reported(ctx: nv.Context) -> None:
    xs = hawkes_inputs(np.random.default_rng(4), np.float32, k=2)
    xs[6][1] = 6  # the whole row of sample 1 is valid
    xs[5][1, 4] = 2
    with pytest.raises(nv.NNVMError, match=r"marks\[1, 4\] = 2"):
        nv.nd.contrib.hawkesll(*_nd(xs, ctx))[0].asnumpy()
    xs = hawkes_inputs(np.random.default_rng(4), np.float32, steps=4)
    xs[6][1] = 5
    with pytest.raises(nv.NNVMError, match="valid_length"):
        nv.nd.contrib.hawkesll(*_nd(xs, ctx))[0].asnumpy()
    xs[6][1] = -0.5  # truncated to 0, as the length is cast to an int: valid
    assert np.isfinite(nv.nd.contrib.hawkesll(*_nd(xs, ctx))[0].asnumpy()).all()
    xs[5][0, 3] = 7  # past sample 0's valid length (beyond it marks are not read)
    xs[6][0] = 3
    assert np.isfinite(nv.nd.contrib.hawkesll(*_nd(xs, ctx))[0].asnumpy()).all()
