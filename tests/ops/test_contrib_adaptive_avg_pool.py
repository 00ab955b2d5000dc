"""AdaptiveAvgPooling2D: windows by hand, the kernels against window means, and the
errors the op table cannot reach."""

from __future__ import annotations

import math

import numpy as np
import op_db  # noqa: F401  (first: it loads every cases_*.py)
import pytest
from cases_contrib_adaptive_avg_pool import adaptive_avg_pool_ref

import nnvmpy as nv


def test_overlapping_windows_by_hand() -> None:
    """5 rows onto 3: windows [0, 2), [1, 4), [3, 5); one column stays one column."""
    x = np.array([1.0, 2.0, 4.0, 8.0, 16.0]).reshape(1, 1, 5, 1)
    y = nv.nd.contrib.AdaptiveAvgPooling2D(nv.nd.array(x), output_size=(3, 1))
    np.testing.assert_allclose(y.asnumpy().ravel(), [1.5, 14 / 3, 12.0])


def test_bad_output_size_and_rank_are_reported() -> None:
    empty = nv.nd.array(np.ones((1, 1, 3, 0)))  # a ZeroDivisionError in the engine before
    with pytest.raises(nv.NNVMError, match=r"needs an input plane of at least 1x1"):
        nv.nd.contrib.AdaptiveAvgPooling2D(empty, output_size=2)
    with pytest.raises(nv.NNVMError, match="output_size"):
        nv.nd.contrib.AdaptiveAvgPooling2D(nv.nd.ones((1, 1, 4, 4)), output_size=(1, 2, 3))
    with pytest.raises(nv.NNVMError, match="output_size"):
        nv.nd.contrib.AdaptiveAvgPooling2D(nv.nd.ones((1, 1, 4, 4)), output_size=(0, 2))
    with pytest.raises(nv.NNVMError, match="NCHW"):
        nv.nd.contrib.AdaptiveAvgPooling2D(nv.nd.ones((2, 3, 4)), output_size=2)


def _pool_grad_ref(dy: np.ndarray, x_shape: tuple) -> np.ndarray:
    """dy / window size added over each output's window (windows may overlap)."""
    h, w = x_shape[2:]
    oh, ow = dy.shape[2:]
    dx = np.zeros(x_shape)
    for i in range(oh):
        r0, r1 = math.floor(i * h / oh), math.ceil((i + 1) * h / oh)
        for j in range(ow):
            c0, c1 = math.floor(j * w / ow), math.ceil((j + 1) * w / ow)
            dx[:, :, r0:r1, c0:c1] += dy[:, :, i : i + 1, j : j + 1] / ((r1 - r0) * (c1 - c0))
    return dx


@pytest.mark.parametrize(
    ("x_shape", "size"),
    [((2, 3, 7, 5), (3, 2)), ((1, 2, 4, 3), (5, 7)), ((2, 1, 13, 11), (4, 13)),
     ((1, 1, 1, 6), (3, 1)), ((3, 2, 9, 9), (9, 9))],
)  # fmt: skip
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_forward_and_backward_match_window_means(x_shape: tuple, size: tuple, dtype: type) -> None:
    """The kernels against explicit window means and their adjoint: windows larger and
    smaller than the input, overlapping; write and add requests."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal(x_shape).astype(dtype)
    dy = rng.standard_normal((*x_shape[:2], *size)).astype(dtype)
    tol = {"rtol": 1e-2, "atol": 1e-2} if dtype == np.float16 else {"rtol": 1e-5, "atol": 1e-6}
    data = nv.nd.array(x, dtype=dtype)
    data.attach_grad(grad_req="add")
    data.grad[:] = 1.0
    with nv.autograd.record():
        y = nv.nd.contrib.AdaptiveAvgPooling2D(data, output_size=size)
    y.backward(nv.nd.array(dy, dtype=dtype))
    want = adaptive_avg_pool_ref(x.astype(np.float64), output_size=size)
    np.testing.assert_allclose(y.asnumpy().astype(np.float64), want, **tol)
    want_dx = _pool_grad_ref(dy.astype(np.float64), x_shape) + 1.0
    np.testing.assert_allclose(data.grad.asnumpy().astype(np.float64), want_dx, **tol)


@pytest.mark.gpu
def test_gpu_kernels_match_window_means() -> None:
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 2, 7, 4))
    dy = rng.standard_normal((2, 2, 3, 6))
    data = nv.nd.array(x, ctx=nv.gpu(0), dtype=np.float64)
    data.attach_grad()
    with nv.autograd.record():
        y = nv.nd.contrib.AdaptiveAvgPooling2D(data, output_size=(3, 6))
    y.backward(nv.nd.array(dy, ctx=nv.gpu(0), dtype=np.float64))
    want = adaptive_avg_pool_ref(x, output_size=(3, 6))
    np.testing.assert_allclose(y.asnumpy(), want, rtol=1e-12)
    np.testing.assert_allclose(data.grad.asnumpy(), _pool_grad_ref(dy, x.shape), rtol=1e-12)
