"""_contrib_BatchNormWithReLU in training: relu(BatchNorm) forward, gradients of the
composition against finite differences of a NumPy reference, moving statistics as BatchNorm."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from numeric_reference import numeric_grad

import nnvmpy as nv

EPS, MOMENTUM = 1e-3, 0.9


def bn_relu_train_ref(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, axis: int) -> Any:
    """(relu(out), batch mean, biased batch var) of training-mode BatchNorm."""
    axes = tuple(i for i in range(x.ndim) if i != axis)
    shape = [1] * x.ndim
    shape[axis] = -1
    mean, var = x.mean(axis=axes), x.var(axis=axes)
    xhat = (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + EPS)
    return np.maximum(xhat * gamma.reshape(shape) + beta.reshape(shape), 0.0), mean, var


@pytest.mark.parametrize("axis", [1, 2])
def test_training_forward_gradients_and_moving_stats(axis: int) -> None:
    rng = np.random.default_rng(axis)
    shape = (3, 2, 4)
    c = shape[axis]
    x, gamma, beta = rng.normal(size=shape), rng.uniform(0.5, 1.5, c), rng.normal(size=c)
    mm, mv = rng.normal(size=c), rng.uniform(0.5, 2.0, c)
    sym = nv.sym.contrib.BatchNormWithReLU(
        nv.sym.var("data"), name="bn", fix_gamma=False, axis=axis, eps=EPS, momentum=MOMENTUM
    )
    assert sym.list_arguments() == ["data", "bn_gamma", "bn_beta"]
    assert sym.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]
    args = {"data": x, "bn_gamma": gamma, "bn_beta": beta}
    exe = sym.bind(
        nv.cpu(),
        {k: nv.nd.array(v, dtype=np.float64) for k, v in args.items()},
        args_grad={k: nv.nd.zeros(v.shape, dtype=np.float64) for k, v in args.items()},
        aux_states={
            "bn_moving_mean": nv.nd.array(mm, dtype=np.float64),
            "bn_moving_var": nv.nd.array(mv, dtype=np.float64),
        },
    )
    out = exe.forward(is_train=True)[0].asnumpy()
    want, mean, var = bn_relu_train_ref(x, gamma, beta, axis)
    np.testing.assert_allclose(out, want, rtol=1e-10, atol=1e-12)
    assert (out == 0).any(), "the ReLU should cut some outputs"
    assert (out > 0).any()
    np.testing.assert_allclose(
        exe.aux_dict["bn_moving_mean"].asnumpy(), MOMENTUM * mm + (1 - MOMENTUM) * mean
    )
    np.testing.assert_allclose(
        exe.aux_dict["bn_moving_var"].asnumpy(), MOMENTUM * mv + (1 - MOMENTUM) * var
    )
    dy = rng.normal(size=shape)
    exe.backward([nv.nd.array(dy, dtype=np.float64)])

    def loss() -> float:
        return float((bn_relu_train_ref(x, gamma, beta, axis)[0] * dy).sum())

    for name, value in (("data", x), ("bn_gamma", gamma), ("bn_beta", beta)):
        np.testing.assert_allclose(
            exe.grad_dict[name].asnumpy(), numeric_grad(loss, value), rtol=1e-5, atol=1e-6,
            err_msg=name,
        )  # fmt: skip


def test_matches_mxnet_on_a_hand_checked_input() -> None:
    """Inference with unit moving variance and zero mean: relu(x / sqrt(1 + eps)) (MXNet
    1.9.1 gives [0.9995, 0, 2.9985, 3.998])."""
    x = nv.nd.array([[1.0, -2], [3, 4]]).reshape((2, 2, 1, 1))
    y = nv.nd.contrib.BatchNormWithReLU(
        x, nv.nd.ones(2), nv.nd.zeros(2), nv.nd.zeros(2), nv.nd.ones(2)
    )
    want = np.maximum([[1.0, -2], [3, 4]], 0) / np.sqrt(1 + EPS)
    np.testing.assert_allclose(y.asnumpy().reshape(2, 2), want, rtol=1e-6)


def test_beta_gradient_counts_the_positive_outputs_and_accumulates() -> None:
    x = np.array([[1.0, -2], [3, 4]]).reshape(2, 2, 1, 1)
    sym = nv.sym.contrib.BatchNormWithReLU(nv.sym.var("data"), name="bn")
    exe = sym.simple_bind(nv.cpu(), data=x.shape, grad_req="add")
    exe.arg_dict["data"][:] = x
    exe.arg_dict["bn_beta"][:] = np.array([0.0, -1.0])
    exe.arg_dict["bn_gamma"][:] = 1.0
    out = exe.forward(is_train=True)[0].asnumpy()
    assert out.min() == 0.0
    exe.backward([nv.nd.ones(x.shape)])
    first = exe.grad_dict["bn_beta"].asnumpy().copy()
    exe.backward([nv.nd.ones(x.shape)])
    np.testing.assert_allclose(exe.grad_dict["bn_beta"].asnumpy(), 2 * first)
    np.testing.assert_allclose(first, (out > 0).sum(axis=(0, 2, 3)))


def test_gamma_must_match_the_channels() -> None:
    with pytest.raises(nv.NNVMError, match="_contrib_BatchNormWithReLU: input 'gamma'"):
        nv.nd.contrib.BatchNormWithReLU(
            nv.nd.ones((2, 3, 4)), nv.nd.ones(2), nv.nd.zeros(3), nv.nd.zeros(3), nv.nd.ones(3)
        )
