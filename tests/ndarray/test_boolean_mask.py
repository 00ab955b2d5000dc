"""nd.contrib.boolean_mask against NumPy boolean indexing, with its gradient."""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_keeps_the_slices_where_the_mask_is_nonzero(axis: int) -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4, 5, 3))
    mask = rng.integers(0, 3, x.shape[axis]).astype(np.float32) - 1  # -1, 0 and 1
    data = nv.nd.array(x, dtype=np.float64)
    data.attach_grad()
    dy_shape = np.compress(mask != 0, x, axis=axis).shape
    dy = rng.normal(size=dy_shape)
    with nv.autograd.record():
        out = nv.nd.contrib.boolean_mask(data, nv.nd.array(mask), axis=axis)
    out.backward(nv.nd.array(dy, dtype=np.float64))
    np.testing.assert_array_equal(out.asnumpy(), np.compress(mask != 0, x, axis=axis))
    want = np.zeros_like(x)
    kept = [slice(None)] * 3
    kept[axis] = np.flatnonzero(mask)
    want[tuple(kept)] = dy
    np.testing.assert_array_equal(data.grad.asnumpy(), want)


def test_documented_example_and_an_empty_result() -> None:
    data = nv.nd.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    out = nv.nd.contrib.boolean_mask(data, nv.nd.array([0, 1, 0]))
    np.testing.assert_array_equal(out.asnumpy(), [[4, 5, 6]])
    with nv.util.np_shape(True):
        empty = nv.nd.contrib.boolean_mask(data, nv.nd.array([0, 0, 0]))
        assert empty.shape == (0, 3)


def test_out_argument_and_errors() -> None:
    data = nv.nd.array(np.arange(6.0).reshape(3, 2))
    out = nv.nd.zeros((2, 2))
    assert nv.nd.contrib.boolean_mask(data, nv.nd.array([1, 0, 1]), out=out) is out
    np.testing.assert_array_equal(out.asnumpy(), [[0, 1], [4, 5]])
    with pytest.raises(nv.NNVMError, match="expected a 1-D mask of 3 entries"):
        nv.nd.contrib.boolean_mask(data, nv.nd.array([1, 0]))
    with pytest.raises(nv.NNVMError, match="axis 2"):
        nv.nd.contrib.boolean_mask(data, nv.nd.array([1, 0]), axis=2)
    with pytest.raises(nv.NNVMError, match="out has shape"):
        nv.nd.contrib.boolean_mask(data, nv.nd.array([1, 1, 1]), out=out)
