"""sym/nd.contrib.cond: the `_cond` op runs only the chosen branch; its gradient flows
into that branch's inputs only; checked against NumPy and finite differences."""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.base import NNVMError
from nnvmpy.test_utils import assert_almost_equal, check_numeric_gradient

A = np.array([[0.5, -1.0], [2.0, 0.25]], np.float32)
B = np.array([[1.5, 3.0], [-0.5, 2.0]], np.float32)


def _symbol() -> nv.sym.Symbol:
    a, b = nv.sym.var("a"), nv.sym.var("b")
    return nv.sym.contrib.cond(a.sum() < b.sum(), lambda: a * b, lambda: nv.sym.exp(a) - b)


@pytest.mark.parametrize("swap", [False, True])
def test_forward_takes_the_chosen_branch(swap: bool) -> None:
    a, b = (B, A) if swap else (A, B)
    out = _symbol().bind(nv.cpu(), {"a": nv.nd.array(a), "b": nv.nd.array(b)}).forward()[0]
    want = a * b if a.sum() < b.sum() else np.exp(a) - b
    assert_almost_equal(out.asnumpy(), want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("swap", [False, True])
def test_gradient_of_the_chosen_branch(swap: bool) -> None:
    a, b = (B, A) if swap else (A, B)
    head = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    ex = _symbol().bind(
        nv.cpu(),
        {"a": nv.nd.array(a), "b": nv.nd.array(b)},
        args_grad={"a": nv.nd.zeros((2, 2)), "b": nv.nd.zeros((2, 2))},
    )
    ex.forward(is_train=True)
    ex.backward([nv.nd.array(head)])
    if a.sum() < b.sum():
        want_a, want_b = head * b, head * a
    else:
        want_a, want_b = head * np.exp(a), -head
    assert_almost_equal(ex.grad_dict["a"].asnumpy(), want_a, rtol=1e-5, atol=1e-6)
    assert_almost_equal(ex.grad_dict["b"].asnumpy(), want_b, rtol=1e-5, atol=1e-6)


def test_gradient_matches_finite_differences() -> None:
    check_numeric_gradient(_symbol(), {"a": A.astype(np.float64), "b": B.astype(np.float64)},
                           numeric_eps=1e-3, rtol=1e-2, atol=1e-4)  # fmt: skip


def test_only_the_chosen_branch_runs() -> None:
    x = nv.sym.var("x")
    # the else branch would fail (sqrt of a negative gives NaN, not an error, so use log)
    out = nv.sym.contrib.cond(x.sum() > 0, lambda: x * 2, lambda: nv.sym.log(x) * 0 - 1)
    got = out.bind(nv.cpu(), {"x": nv.nd.array([1.0, 2.0])}).forward()[0].asnumpy()
    assert got.tolist() == [2.0, 4.0]


def test_several_outputs_keep_the_branch_format() -> None:
    a, b = nv.sym.var("a"), nv.sym.var("b")
    outs = nv.sym.contrib.cond(a.sum() > 0, lambda: [a + b, a - b], lambda: [a - b, a + b])
    assert isinstance(outs, list)
    assert len(outs) == 2
    ex = nv.sym.Group(outs).bind(nv.cpu(), {"a": nv.nd.array(A), "b": nv.nd.array(B)})
    got = [o.asnumpy() for o in ex.forward()]
    assert_almost_equal(got[0], A + B)
    assert_almost_equal(got[1], A - B)


def test_imperative_cond() -> None:
    a = nv.nd.array(A)
    a.attach_grad()
    with nv.autograd.record():
        out = nv.nd.contrib.cond(a.sum() > 100, lambda: a * 2, lambda: a * a)
    out.backward()
    assert_almost_equal(out.asnumpy(), A * A)
    assert_almost_equal(a.grad.asnumpy(), 2 * A)


def test_branches_must_agree_on_the_number_of_outputs() -> None:
    a = nv.sym.var("a")
    with pytest.raises(NNVMError, match="then_func gives 2 outputs, else_func 1"):
        nv.sym.contrib.cond(a.sum() > 0, lambda: [a, a], lambda: a)


def test_pred_must_be_a_scalar() -> None:
    a = nv.sym.var("a")
    out = nv.sym.contrib.cond(a > 0, lambda: a, lambda: -a)
    with pytest.raises(NNVMError, match="scalar"):
        out.bind(nv.cpu(), {"a": nv.nd.ones(2)}).forward()[0].asnumpy()
    with pytest.raises(NNVMError, match="scalar"):
        nv.nd.contrib.cond(nv.nd.ones(2), lambda: 1, lambda: 0)
