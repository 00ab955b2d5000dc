"""nv.contrib.autograd (MXNet's `mx.contrib.autograd`), checked against NumPy formulas."""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy import autograd as ag
from nnvmpy import nd
from nnvmpy.contrib import autograd as cag

RNG = np.random.default_rng(7)


def arr(*shape: int) -> np.ndarray:
    return RNG.uniform(0.5, 1.5, size=shape)


def flags() -> tuple[bool, bool]:
    """(recording, training) on this thread."""
    return ag.is_recording(), ag.is_training()


def test_importable_as_mxnet_spells_it() -> None:
    import nnvmpy.contrib.autograd as mod

    assert mod is nv.contrib.autograd
    assert {"train_section", "test_section", "grad_and_loss", "grad", "compute_gradient"} <= set(
        mod.__all__
    )


def test_grad_and_loss_returns_gradients_and_outputs() -> None:
    x_np, y_np = arr(3, 4), arr(3, 4)
    f = cag.grad_and_loss(lambda x, y: x * y + nd.exp(x))
    grads, out = f(nd.array(x_np), nd.array(y_np))
    np.testing.assert_allclose(out.asnumpy(), x_np * y_np + np.exp(x_np), rtol=1e-6)
    np.testing.assert_allclose(grads[0].asnumpy(), y_np + np.exp(x_np), rtol=1e-6)
    np.testing.assert_allclose(grads[1].asnumpy(), x_np, rtol=1e-6)


def test_argnum_picks_the_differentiated_arguments() -> None:
    x_np, y_np = arr(2, 3), arr(2, 3)

    def f(x: nv.nd.NDArray, scale: float, y: nv.nd.NDArray) -> nv.nd.NDArray:
        return x * y * scale

    grads, _ = cag.grad_and_loss(f, argnum=2)(nd.array(x_np), 3.0, nd.array(y_np))
    assert len(grads) == 1
    np.testing.assert_allclose(grads[0].asnumpy(), 3 * x_np, rtol=1e-6)
    grads, _ = cag.grad_and_loss(f, argnum=[2, 0])(nd.array(x_np), 3.0, nd.array(y_np))
    np.testing.assert_allclose(grads[0].asnumpy(), 3 * x_np, rtol=1e-6)
    np.testing.assert_allclose(grads[1].asnumpy(), 3 * y_np, rtol=1e-6)


def test_grad_returns_only_the_gradients_of_every_output() -> None:
    x_np = arr(5)
    grads = cag.grad(lambda x: [nd.square(x), nd.sin(x)])(nd.array(x_np))
    np.testing.assert_allclose(grads[0].asnumpy(), 2 * x_np + np.cos(x_np), rtol=1e-6)


def test_bad_arguments_name_what_was_expected() -> None:
    with pytest.raises(nv.NNVMError, match="argument 1 must be an NDArray"):
        cag.grad_and_loss(lambda x, k: x * k)(nd.ones((2,)), 2.0)
    with pytest.raises(nv.NNVMError, match="argnum 3 is out of range for 2"):
        cag.grad_and_loss(lambda x, y: x * y, argnum=3)(nd.ones((2,)), nd.ones((2,)))


def test_sections_switch_recording_and_training_together() -> None:
    assert flags() == (False, False)
    with cag.train_section():
        assert flags() == (True, True)
        with cag.test_section():
            assert flags() == (False, False)
        assert flags() == (True, True)
    assert flags() == (False, False)


def test_section_restores_the_flags_after_an_exception() -> None:
    with pytest.raises(ValueError, match="boom"), cag.train_section():
        raise ValueError("boom")
    assert flags() == (False, False)


def test_set_is_training_returns_the_previous_state() -> None:
    assert cag.set_is_training(True) is False
    try:
        assert flags() == (True, True)
    finally:
        assert cag.set_is_training(False) is True
    assert flags() == (False, False)


def test_dropout_drops_only_inside_train_section() -> None:
    x = nd.ones((20, 20))
    with cag.train_section():
        dropped = nd.Dropout(x, p=0.5).asnumpy()
        with cag.test_section():
            kept = nd.Dropout(x, p=0.5).asnumpy()
    assert set(np.unique(dropped)) == {0.0, 2.0}
    np.testing.assert_array_equal(kept, 1.0)


def test_backward_with_partial_out_grads_and_add_requests() -> None:
    x = nd.ones((3, 4))
    dx = nd.zeros((3, 4))
    cag.mark_variables([x], [dx], grad_reqs="add")
    db = np.arange(4.0)
    for _ in range(2):
        with cag.train_section():
            a, b, c = nd.split(x, axis=0, num_outputs=3, squeeze_axis=True)
            cag.backward([a, b, c], [None, nd.array(db), None])
    want = 2 * np.stack([np.ones(4), db, np.ones(4)])
    np.testing.assert_array_equal(dx.asnumpy(), want)


def test_compute_gradient_uses_ones_and_frees_the_graph() -> None:
    x_np = arr(2, 2)
    x, dx = nd.array(x_np), nd.zeros((2, 2))
    cag.mark_variables(x, dx)
    with cag.train_section():
        y = x * x
    cag.compute_gradient([y])
    np.testing.assert_allclose(dx.asnumpy(), 2 * x_np, rtol=1e-6)
    with pytest.raises(nv.NNVMError):
        cag.compute_gradient([y])
