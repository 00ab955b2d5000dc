"""nd.image / sym.image: MXNet 1.9.1's shape rules and errors (measured there), gradients."""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.base import InferError

nd = nv.nd


def test_normalize_takes_one_value_or_one_per_channel_and_refuses_the_rest() -> None:
    x = nd.array(np.arange(24.0).reshape(2, 3, 2, 2))
    got = nd.image.normalize(x, mean=1, std=2).asnumpy()
    np.testing.assert_allclose(got, (x.asnumpy() - 1) / 2)
    # MXNet's default mean/std have four values: they fit no image, and MXNet refuses them
    with pytest.raises(InferError, match=r"_image_normalize: parameter 'mean' must have 1 or 3"):
        nd.image.normalize(x)
    with pytest.raises(InferError, match=r"'std' must have 1 or 3 elements"):
        nd.image.normalize(x, mean=(1, 2, 3), std=(1, 2))
    with pytest.raises(InferError, match=r"channel axis of input 'data' must have 1 or 3"):
        nd.image.normalize(nd.ones((4, 2, 2)), mean=1, std=1)
    with pytest.raises(InferError, match=r"must have shape \(channels, height, width\)"):
        nd.image.normalize(nd.ones((2, 2)), mean=1, std=1)
    np.testing.assert_allclose(nd.image.normalize(x[0], mean=0, std=1).asnumpy(), x[0].asnumpy())


def test_normalize_gradient_is_one_over_std_per_channel() -> None:
    data = nv.sym.Variable("data")
    y = nv.sym.image.normalize(data=data, mean=(0, 1, 2), std=(4, 2, 1))
    x = nd.array(np.random.default_rng(0).uniform(size=(2, 3, 2, 2)))
    grad = nd.zeros(x.shape)
    exe = y.bind(nv.cpu(), {"data": x}, args_grad={"data": grad})
    exe.forward(is_train=True)
    exe.backward([nd.ones(x.shape)])
    want = np.broadcast_to(np.array([0.25, 0.5, 1.0]).reshape(1, 3, 1, 1), x.shape)
    np.testing.assert_allclose(grad.asnumpy(), want)


def test_to_tensor_moves_channels_first_in_float32() -> None:
    img = np.arange(24, dtype=np.uint8).reshape(2, 4, 3)
    t = nd.image.to_tensor(nd.array(img, dtype=np.uint8))
    assert t.dtype == np.float32
    assert t.shape == (3, 2, 4)
    np.testing.assert_allclose(t.asnumpy(), np.moveaxis(img, -1, 0) / 255.0, rtol=1e-6)
    assert nd.image.to_tensor(nd.ones((1, 2, 3, 5))).shape == (1, 5, 2, 3)
    with pytest.raises(InferError, match=r"_image_to_tensor: input 'data' must have shape"):
        nd.image.to_tensor(nd.ones((2, 2)))


def test_flips_reverse_width_or_height_and_their_gradient_flips_back() -> None:
    img = np.arange(24.0).reshape(2, 4, 3)
    x = nd.array(img)
    np.testing.assert_array_equal(nd.image.flip_left_right(x).asnumpy(), img[:, ::-1])
    np.testing.assert_array_equal(nd.image.flip_top_bottom(x).asnumpy(), img[::-1])
    x.attach_grad()
    with nv.autograd.record():
        y = nd.image.flip_left_right(x)
    y.backward(nd.array(img))
    np.testing.assert_array_equal(x.grad.asnumpy(), img[:, ::-1])
    with pytest.raises(InferError, match=r"_image_flip_left_right: input 'data' must have shape"):
        nd.image.flip_left_right(nd.ones((2, 2, 4, 3)))
    with pytest.raises(InferError, match=r"last axis of input 'data' must be channels"):
        nd.image.flip_top_bottom(nd.ones((2, 4, 5)))
    assert (nd.ones((2,)) + 1).asnumpy().tolist() == [2.0, 2.0]  # still usable
