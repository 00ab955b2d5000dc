"""_rnn_param_concat: Concat that hands the output's remaining size to unknown inputs."""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv


def _three(dim: int) -> nv.sym.Symbol:
    a, b, c = nv.sym.var("a"), nv.sym.var("b"), nv.sym.var("c")
    return nv.sym._internal._rnn_param_concat(a, b, c, num_args=3, dim=dim)


def test_two_unknown_inputs_split_the_remainder_evenly() -> None:
    """As MXNet 1.9.1: a (4,) and an output of 24 give b and c 10 each."""
    s = _three(0) * nv.sym.ones((24,))
    args, outs, _ = s.infer_shape_partial(a=(4,), b=(0,), c=(0,))
    assert args == [(4,), (10,), (10,)]
    assert outs == [(24,)]


def test_one_unknown_input_takes_the_whole_remainder() -> None:
    s = _three(0) * nv.sym.ones((24,))
    args, _, _ = s.infer_shape_partial(a=(4,), b=(0,), c=(6,))
    assert args == [(4,), (14,), (6,)]


def test_other_axes_are_inferred_from_any_input() -> None:
    s = _three(1) * nv.sym.ones((2, 24))
    args, _, _ = s.infer_shape_partial(a=(0, 4), b=(2, 0), c=(2, 0))
    assert args == [(2, 4), (2, 10), (2, 10)]


def test_three_unknown_inputs_are_ambiguous() -> None:
    s = _three(0) * nv.sym.ones((24,))
    with pytest.raises(nv.NNVMError, match="_rnn_param_concat: 3 inputs have an unknown size"):
        s.infer_shape_partial(a=(0,), b=(0,), c=(0,))


def test_an_odd_remainder_cannot_be_split() -> None:
    s = _three(0) * nv.sym.ones((24,))
    with pytest.raises(nv.NNVMError, match="'arg1' and 'arg2' share the remaining 19"):
        s.infer_shape_partial(a=(5,), b=(0,), c=(0,))


def test_forward_and_gradient_are_concats() -> None:
    x, y = nv.nd.array(np.arange(3.0)), nv.nd.array([10.0, 20.0])
    x.attach_grad()
    y.attach_grad()
    with nv.autograd.record():
        out = nv.nd._internal._rnn_param_concat(x, y, num_args=2, dim=0)
    np.testing.assert_array_equal(out.asnumpy(), [0, 1, 2, 10, 20])
    out.backward(nv.nd.array([1.0, 2, 3, 4, 5]))
    np.testing.assert_array_equal(x.grad.asnumpy(), [1, 2, 3])
    np.testing.assert_array_equal(y.grad.asnumpy(), [4, 5])


@pytest.mark.parametrize("op", ["concat", "_rnn_param_concat"])
def test_inputs_of_different_rank_are_an_infer_error(op: str) -> None:
    """A fuzz finding: a (1,) input beside a (1, 2) one, concatenated along dim 1, indexed
    an axis the shorter shape lacks (IndexError)."""
    fn = nv.nd.concat if op == "concat" else nv.nd._internal._rnn_param_concat
    with pytest.raises(nv.NNVMError, match="same number of dimensions"):
        fn(nv.nd.ones((1, 2)), nv.nd.ones((1,)), num_args=2, dim=1)
    assert fn(nv.nd.ones((1, 2)), nv.nd.ones((1, 3)), num_args=2, dim=1).shape == (1, 5)
