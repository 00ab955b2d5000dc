"""ops/misc.py beyond the op table: BlockGrad's zero gradient and what it prunes,
and _identity_with_attr_like_rhs carrying a shape backwards through inference."""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv

sym = nv.sym


def _grads(s: nv.sym.Symbol, **inputs: np.ndarray) -> dict[str, np.ndarray]:
    exe = s.simple_bind(
        nv.cpu(),
        type_dict=dict.fromkeys(inputs, np.float64),
        **{k: v.shape for k, v in inputs.items()},
    )
    exe.forward(is_train=True, **inputs)
    exe.backward()
    return {k: v.asnumpy() for k, v in exe.grad_dict.items()}


@pytest.mark.parametrize("op", ["BlockGrad", "stop_gradient"])
def test_blockgrad_passes_values_and_blocks_gradients(op: str) -> None:
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    a, b = sym.var("a"), sym.var("b")
    out = getattr(sym, op)(a * b) + a  # d/da = 1 (the blocked a*b adds nothing), d/db = 0
    grads = _grads(out, a=x, b=y)
    np.testing.assert_array_equal(grads["a"], np.ones_like(x))
    np.testing.assert_array_equal(grads["b"], np.zeros_like(y))
    value = out.eval(nv.cpu(), a=nv.nd.array(x, dtype="float64"), b=nv.nd.array(y, dtype="float64"))
    np.testing.assert_allclose(value[0].asnumpy(), x * y + x)


def test_blockgrad_lets_an_op_without_gradient_sit_behind_it() -> None:
    """As MXNet: a node whose output gradients are all zero needs no FGradient."""
    x, idx = sym.var("x"), sym.var("idx")
    taken = sym.batch_take(x, idx)
    exe = sym.stop_gradient(taken).simple_bind(
        nv.cpu(), x=(4, 3), idx=(4,), type_dict={"x": np.float32, "idx": np.int32}
    )
    exe.forward(is_train=True, x=np.arange(12.0).reshape(4, 3), idx=np.array([0, 1, 2, 0]))
    exe.backward()
    np.testing.assert_array_equal(exe.grad_dict["x"].asnumpy(), np.zeros((4, 3)))
    np.testing.assert_array_equal(exe.outputs[0].asnumpy(), [0.0, 4.0, 8.0, 9.0])
    with pytest.raises(nv.NNVMError, match="no FGradient"):
        taken.simple_bind(nv.cpu(), x=(4, 3), idx=(4,), type_dict={"idx": np.int32})


def test_identity_with_attr_like_rhs_infers_a_weight_backwards() -> None:
    w, shift, data = sym.var("w"), sym.var("shift", shape=(1,)), sym.var("data")
    tied = sym._internal._identity_with_attr_like_rhs(sym.broadcast_add(w, shift), w)
    net = sym.FullyConnected(data=data, weight=tied, num_hidden=11, no_bias=True)
    args, outs, _ = net.infer_shape(data=(7, 100))
    assert dict(zip(net.list_arguments(), args))["w"] == (11, 100)
    assert outs == [(7, 11)]


def test_identity_with_attr_like_rhs_gradient_goes_to_lhs_only() -> None:
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((2, 5)), rng.standard_normal((2, 5))
    lhs, rhs = sym.var("lhs"), sym.var("rhs")
    out = sym._internal._identity_with_attr_like_rhs(lhs * 3.0, rhs)
    grads = _grads(out, lhs=x, rhs=y)
    np.testing.assert_allclose(grads["lhs"], np.full_like(x, 3.0))
    np.testing.assert_array_equal(grads["rhs"], np.zeros_like(y))


def test_identity_with_attr_like_rhs_rejects_mismatched_shapes_and_keeps_working() -> None:
    lhs, rhs = sym.var("lhs"), sym.var("rhs")
    out = sym._internal._identity_with_attr_like_rhs(lhs, rhs, name="tie")
    with pytest.raises(nv.NNVMError, match="tie"):
        out.infer_shape(lhs=(2, 3), rhs=(3, 2))
    assert out.infer_shape(lhs=(2, 3))[1] == [(2, 3)]
