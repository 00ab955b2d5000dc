"""_contrib_group_adagrad_update: values checked against MXNet 1.9.1 (which runs it on the
CPU with a row_sparse gradient), several steps against NumPy, the history updated in
place, rows with a zero gradient left alone, symbol inference and the errors."""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv


@pytest.mark.parametrize("history_shape", [(2, 1), (2,)])
def test_values_from_mxnet(history_shape: tuple[int, ...]) -> None:
    """MXNet 1.9.1: rescale 2 and clip 0.4 give g = [0.2, -0.4, 0.4] for row 0, whose
    history grows by mean(g^2) = 0.12."""
    w = nv.nd.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    g = nv.nd.array([[0.1, -0.2, 0.3], [0.5, 0.5, -1.0]])
    h = nv.nd.array(np.array([0.5, 0.0]).reshape(history_shape))
    out = nv.nd.contrib.group_adagrad_update(
        w, g, h, lr=0.1, rescale_grad=2.0, clip_gradient=0.4, epsilon=1e-5, out=w
    )
    assert out is w
    np.testing.assert_allclose(h.asnumpy().ravel(), [0.62, 0.16], rtol=1e-6)
    want = [[0.9746001958847046, 2.050799608230591, 2.949200391769409],
            [3.90000319480896, 4.900002956390381, 6.099997043609619]]  # fmt: skip
    np.testing.assert_allclose(w.asnumpy(), want, rtol=1e-6)


def test_epsilon_is_inside_the_square_root() -> None:
    """MXNet 1.9.1: div = g / sqrt(history + eps) (not sqrt(history) + eps)."""
    w, h = nv.nd.array([[1.0, 2.0, 3.0]]), nv.nd.array([[0.0]])
    nv.nd.contrib.group_adagrad_update(
        w, nv.nd.array([[1e-3, 0, 0]]), h, lr=1.0, epsilon=1e-2, out=w
    )
    np.testing.assert_allclose(w.asnumpy(), [[0.9900001883506775, 2.0, 3.0]], rtol=1e-6)


def test_rows_without_gradient_stay_and_rows_span_trailing_axes() -> None:
    w = nv.nd.array(np.arange(12.0).reshape(3, 2, 2))
    h = nv.nd.array([[0.5], [0.0], [1.0]])
    g = np.zeros((3, 2, 2))
    g[1] = [[0.1, -0.2], [0.3, 0.4]]
    nv.nd.contrib.group_adagrad_update(w, nv.nd.array(g), h, lr=0.1, out=w)
    hist = (0.01 + 0.04 + 0.09 + 0.16) / 4
    np.testing.assert_allclose(h.asnumpy().ravel(), [0.5, hist, 1.0], rtol=1e-6)
    want = np.arange(12.0).reshape(3, 2, 2)
    want[1] -= 0.1 * g[1] / np.sqrt(hist + 1e-5)
    np.testing.assert_allclose(w.asnumpy(), want, rtol=1e-6)


def test_several_steps_against_numpy(ctx: nv.Context) -> None:
    rng = np.random.default_rng(4)
    w0 = rng.normal(size=(5, 3))
    w = nv.nd.array(w0, ctx=ctx, dtype=np.float64)
    h = nv.nd.zeros((5, 1), ctx=ctx, dtype=np.float64)
    want_w, want_h = w0.copy(), np.zeros((5, 1))
    for _ in range(3):
        g = rng.normal(size=(5, 3))
        nv.nd.contrib.group_adagrad_update(
            w, nv.nd.array(g, ctx=ctx, dtype=np.float64), h, lr=0.05, clip_gradient=1.0, out=w
        )
        gc = np.clip(g, -1, 1)
        want_h += (gc * gc).mean(axis=1, keepdims=True)
        want_w -= 0.05 * gc / np.sqrt(want_h + 1e-5)
    np.testing.assert_allclose(h.asnumpy(), want_h, rtol=1e-12)
    np.testing.assert_allclose(w.asnumpy(), want_w, rtol=1e-12)


def test_symbol_history_is_an_auxiliary_state() -> None:
    s = nv.sym.contrib.group_adagrad_update(
        nv.sym.var("w"), nv.sym.var("g"), nv.sym.var("h"), lr=0.1
    )
    assert s.list_arguments() == ["w", "g"]
    assert s.list_auxiliary_states() == ["h"]
    assert s.infer_shape(w=(4, 3)) == ([(4, 3), (4, 3)], [(4, 3)], [(4, 1)])
    assert s.infer_type(w=np.float64)[1] == [np.float64]


def test_bad_input_is_refused() -> None:
    w, g = nv.nd.ones((2, 3)), nv.nd.ones((2, 3))
    with pytest.raises(nv.NNVMError, match="_contrib_group_adagrad_update: input 'history'"):
        nv.nd.contrib.group_adagrad_update(w, g, nv.nd.zeros((3, 1)), lr=0.1)
    with pytest.raises(nv.NNVMError, match="'history' has shape \\(2, 3\\)"):
        nv.nd.contrib.group_adagrad_update(w, g, nv.nd.zeros((2, 3)), lr=0.1)
    with pytest.raises(nv.NNVMError, match="'history' has shape \\(\\)"):  # fuzz: was IndexError
        nv.nd.contrib.group_adagrad_update(w, g, nv.nd.array(np.float32(0)), lr=0.1)
    with pytest.raises(nv.NNVMError, match="lr"):
        nv.nd.contrib.group_adagrad_update(w, g, nv.nd.zeros((2, 1)))
    with pytest.raises(nv.NNVMError, match="grad"):
        nv.nd.contrib.group_adagrad_update(w, nv.nd.ones((2, 4)), nv.nd.zeros((2, 1)), lr=0.1)


def test_parameters_in_mxnet_order() -> None:
    """MXNet's signature: (weight, grad, history, lr, rescale_grad, clip_gradient, epsilon)."""
    w, h = nv.nd.ones((2, 3)), nv.nd.zeros((2, 1))
    nv.nd.contrib.group_adagrad_update(w, nv.nd.ones((2, 3)), h, 0.1, 2.0, 0.5, out=w)
    np.testing.assert_allclose(w.asnumpy(), np.full((2, 3), 1 - 0.1 * 0.5 / np.sqrt(0.25 + 1e-5)))
