"""Loss heads' gradients against their formulas (MXNet's definitions), and bad input.

A head's backward ignores the head gradient: its gradient comes from the label, scaled by
grad_scale and, for the regression outputs, divided by the outputs per example
(label.size / label.shape[0]), as MXNet's RegressionOutput does.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from ctc_reference import ctc_brute_force

import nnvmpy as nv

RNG = np.random.default_rng(11)


def _head_grad(sym: Any, **values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(forward output, gradient of 'data') of a bound head, head gradient of 7s (ignored)."""
    exe = sym.simple_bind(nv.cpu(), **{k: v.shape for k, v in values.items()})
    out = exe.forward(is_train=True, **values)[0].asnumpy()
    exe.backward([np.full(out.shape, 7.0)])
    return out, exe.grad_dict["data"].asnumpy()


def _vars() -> tuple[Any, Any]:
    return nv.sym.Variable("data"), nv.sym.Variable("label")


@pytest.mark.parametrize(
    ("op", "forward", "grad"),
    [
        ("LinearRegressionOutput", lambda x: x, lambda o, y: o - y),
        ("MAERegressionOutput", lambda x: x, lambda o, y: np.sign(o - y)),
        ("LogisticRegressionOutput", lambda x: 1 / (1 + np.exp(-x)), lambda o, y: o - y),
    ],
)
def test_regression_outputs(op: str, forward: Any, grad: Any) -> None:
    x, y = RNG.normal(size=(4, 3)), RNG.uniform(size=(4, 3))
    data, label = _vars()
    out, dx = _head_grad(getattr(nv.sym, op)(data, label, grad_scale=0.5), data=x, label=y)
    np.testing.assert_allclose(out, forward(x), rtol=1e-6)
    np.testing.assert_allclose(dx, 0.5 * grad(forward(x), y) / 3, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("use_linear", [False, True])
def test_svm_output_gradient_is_the_hinge_loss_gradient(use_linear: bool) -> None:
    x = RNG.normal(size=(5, 4))
    y = RNG.integers(0, 4, size=5).astype(np.float64)
    margin, coef = 0.7, 0.3
    data, label = _vars()
    sym = nv.sym.SVMOutput(data, label, margin=margin, regularization_coefficient=coef,
                           use_linear=use_linear)  # fmt: skip
    out, dx = _head_grad(sym, data=x, label=y)
    np.testing.assert_allclose(out, x)
    want = np.zeros_like(x)
    for i, k in np.ndindex(*x.shape):
        if k == int(y[i]):
            hit = float(margin > x[i, k])
            want[i, k] = -hit if use_linear else -hit * 2 * (margin - x[i, k])
        else:
            hit = float(margin > -x[i, k])
            want[i, k] = hit if use_linear else hit * 2 * (margin + x[i, k])
    np.testing.assert_allclose(dx, coef * want, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize(("normalization", "divisor"), [("null", 1.0), ("batch", 3.0)])
def test_make_loss_passes_grad_scale_back(normalization: str, divisor: float) -> None:
    x = RNG.normal(size=(3, 4))
    sym = nv.sym.MakeLoss(nv.sym.Variable("data"), grad_scale=0.5, normalization=normalization)
    out, dx = _head_grad(sym, data=x)
    np.testing.assert_allclose(out, x)
    np.testing.assert_allclose(dx, np.full(x.shape, 0.5 / divisor))


def test_softmax_cross_entropy_gradient_is_softmax_minus_one_hot() -> None:
    x = RNG.normal(size=(4, 3))
    y = np.array([0, 2, 1, 2], dtype=np.float64)
    data, label = _vars()
    exe = nv.sym.softmax_cross_entropy(data, label).simple_bind(
        nv.cpu(), data=x.shape, label=y.shape, grad_req={"data": "write", "label": "null"}
    )
    exe.forward(is_train=True, data=x, label=y)
    exe.backward([np.array([2.0])])  # the loss is a sum: its head gradient scales everything
    p = np.exp(x - x.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    np.testing.assert_allclose(exe.grad_dict["data"].asnumpy(), 2 * (p - np.eye(3)[[0, 2, 1, 2]]),
                               rtol=1e-5, atol=1e-7)  # fmt: skip


def test_bad_labels_and_lengths_are_named_errors_and_the_engine_goes_on() -> None:
    nd = nv.nd
    with pytest.raises(nv.NNVMError, match=r"softmax_cross_entropy.*label"):
        nd.softmax_cross_entropy(nd.ones((2, 3)), nd.array([0, 3])).asnumpy()
    with pytest.raises(nv.NNVMError, match=r"SequenceLast.*sequence_length"):
        nd.SequenceLast(nd.ones((4, 2)), nd.array([5, 1]), use_sequence_length=True).asnumpy()
    with pytest.raises(nv.NNVMError, match=r"CTCLoss"):
        nd.CTCLoss(nd.ones((2, 1, 3)), nd.array([[1, 2, 1]])).asnumpy()  # 3 labels in 2 steps
    with pytest.raises(nv.InferError, match=r"LinearRegressionOutput"):
        nd.LinearRegressionOutput(nd.ones((2, 3)), nd.ones((4, 3)))
    np.testing.assert_allclose(nd.SequenceLast(nd.ones((4, 2))).asnumpy(), [1.0, 1.0])


def test_ctc_label_errors_name_the_first_failing_sequence_and_position() -> None:
    """Labels past a sequence's length are padding and not checked; the first sequence
    with a bad class or too few steps is the one named, its bad class before its length."""
    nd, acts = nv.nd, nv.nd.ones((3, 3, 4))
    lens = nd.array([2.0, 3.0, 1.0])
    labels = [[1, 2, 9], [1, 5, 2], [3, 7, 7]]  # 9 and row 2's 7s lie past their lengths
    with pytest.raises(nv.NNVMError, match=r"label\[1, 1\] = 5 is not a class.*\[1, 3\]"):
        nd.CTCLoss(acts, nd.array(labels), lens, use_label_lengths=True).asnumpy()
    labels = [[1, 1, 1], [2, 2, 3], [1, 2, 3]]  # row 0 uses 2 labels: fine in 3 steps
    with pytest.raises(nv.NNVMError, match=r"sequence 1 \(3 labels\) needs at least 4 steps"):
        nd.CTCLoss(acts, nd.array(labels), lens, use_label_lengths=True).asnumpy()
    with pytest.raises(nv.NNVMError, match=r"label\[0, 0\] = 3 is not a class.*\[0, 2\]"):
        nd.CTCLoss(acts, nd.array([[3, 1, 1]] * 3), blank_label="last").asnumpy()
    ok = nd.CTCLoss(acts, nd.array([[1, 2, 9], [1, 3, 2], [3, 7, 7]]), lens,
                    use_label_lengths=True).asnumpy()  # fmt: skip
    assert ok.shape == (3,)
    assert np.all(np.isfinite(ok))


def test_ctc_loss_with_data_and_label_lengths_matches_brute_force() -> None:
    """use_data_lengths cuts each sequence, use_label_lengths each label: the loss is the
    full sum over alignments of the cut problem (tests/ops/ctc_reference.py)."""
    acts = RNG.normal(size=(5, 2, 3))
    labels = np.array([[1, 2, 1], [2, 2, 1]], dtype=np.float64)
    data_lengths, label_lengths = np.array([5.0, 3.0]), np.array([3.0, 1.0])
    got = nv.nd.CTCLoss(nv.nd.array(acts, dtype=np.float64), nv.nd.array(labels),
                        nv.nd.array(data_lengths), nv.nd.array(label_lengths),
                        use_data_lengths=True, use_label_lengths=True).asnumpy()  # fmt: skip
    want = [
        ctc_brute_force(acts[:5, :1], labels[:1, :3], 0)[0],
        ctc_brute_force(acts[:3, 1:], labels[1:, :1], 0)[0],
    ]
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_regression_outputs_refuse_0d_data_and_labels_by_name() -> None:
    """A fuzz finding: a 0-d label once reached label[0] (IndexError)."""
    one = nv.nd.array(np.ones(()))
    with pytest.raises(nv.InferError, match=r"LogisticRegressionOutput.*'label'"):
        nv.nd.LogisticRegressionOutput(nv.nd.ones((2,)), one)
    with pytest.raises(nv.InferError, match=r"LinearRegressionOutput.*'data' has shape \(\)"):
        nv.nd.LinearRegressionOutput(one, nv.nd.ones((2,)))
