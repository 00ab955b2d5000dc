"""BilinearResize2D: values by hand, output sizes per mode, and errors."""

from __future__ import annotations

import numpy as np
import op_db  # noqa: F401  (first: it loads every cases_*.py)
import pytest
from cases_contrib_bilinear_resize import _source, bilinear_resize_ref

import nnvmpy as nv


def test_two_by_two_to_three_by_three_by_hand() -> None:
    """With aligned corners the corners stay and the centre is the mean of all four."""
    x = nv.nd.array(np.array([[0.0, 4.0], [8.0, 16.0]]).reshape(1, 1, 2, 2))
    y = nv.nd.contrib.BilinearResize2D(x, height=3, width=3).asnumpy()[0, 0]
    np.testing.assert_allclose(y, [[0, 2, 4], [4, 7, 10], [8, 12, 16]])


def test_pixel_centres_without_aligned_corners() -> None:
    """2 -> 4 columns: sources -0.25 (clamped to 0), 0.25, 0.75, 1.25 (the last column)."""
    x = nv.nd.array(np.array([[10.0, 20.0]]).reshape(1, 1, 1, 2))
    y = nv.nd.contrib.BilinearResize2D(x, height=1, width=4, align_corners=False)
    np.testing.assert_allclose(y.asnumpy().ravel(), [10, 12.5, 17.5, 20])


@pytest.mark.parametrize(
    ("mode", "params", "want"),
    [
        ("size", {"scale_height": 1.3, "scale_width": 0.25}, (13, 2)),
        ("size", {"height": 4, "scale_width": 2.0}, (4, 18)),
        ("odd_scale", {"scale_height": 0.5, "scale_width": 3.0}, (5, 25)),  # (9 - 1) * 3 + 1
        ("to_even_down", {}, (10, 8)),
        ("to_even_up", {}, (10, 10)),
        ("to_odd_down", {}, (9, 9)),
        ("to_odd_up", {}, (11, 9)),
    ],
)
def test_output_size_per_mode(mode: str, params: dict, want: tuple[int, int]) -> None:
    x = nv.nd.ones((1, 2, 10, 9))
    y = nv.nd.contrib.BilinearResize2D(x, mode=mode, **params)
    assert y.shape == (1, 2, *want)
    np.testing.assert_allclose(y.asnumpy(), 1.0)  # interpolating a constant keeps it


def test_errors_name_the_problem() -> None:
    with pytest.raises(nv.NNVMError, match="odd_scale"):
        nv.nd.contrib.BilinearResize2D(nv.nd.ones((1, 1, 4, 4)), mode="odd_scale")
    with pytest.raises(nv.NNVMError, match="NCHW"):
        nv.nd.contrib.BilinearResize2D(nv.nd.ones((1, 4, 4)), height=2, width=2)
    x = nv.nd.ones((1, 1, 4, 4))  # fuzz findings: int() of these raised bare Python errors
    with pytest.raises(nv.NNVMError, match="scale nan turns a side of 4 into nan"):
        nv.nd.contrib.BilinearResize2D(x, scale_height=2.0, scale_width=float("nan"))
    with pytest.raises(nv.NNVMError, match="into -inf"):
        nv.nd.contrib.BilinearResize2D(x, scale_height=-1e300, scale_width=-1e300)
    empty = nv.nd.array(np.ones((1, 1, 0, 4)))  # read out of bounds before
    with pytest.raises(nv.NNVMError, match=r"needs an input plane of at least 1x1"):
        nv.nd.contrib.BilinearResize2D(empty, height=3, width=2)
    assert nv.nd.contrib.BilinearResize2D(x, scale_height=2.0, scale_width=0.5).shape == (
        1, 1, 8, 2,
    )  # fmt: skip


def _resize_grad_ref(dy: np.ndarray, x_shape: tuple, align: bool) -> np.ndarray:
    """Each output gradient spread over the four inputs it blends, with their weights."""
    h, w = x_shape[2:]
    oh, ow = dy.shape[2:]
    dx = np.zeros(x_shape)
    for i in range(oh):
        r0, r1, a = _source(i, h, oh, align)
        for j in range(ow):
            c0, c1, b = _source(j, w, ow, align)
            g = dy[:, :, i, j]
            dx[:, :, r0, c0] += (1 - a) * (1 - b) * g
            dx[:, :, r0, c1] += (1 - a) * b * g
            dx[:, :, r1, c0] += a * (1 - b) * g
            dx[:, :, r1, c1] += a * b * g
    return dx


@pytest.mark.parametrize("align", [True, False])
@pytest.mark.parametrize(
    ("x_shape", "out_hw"),
    [
        ((2, 3, 5, 7), (11, 4)),
        ((1, 2, 9, 3), (2, 8)),
        ((3, 1, 1, 4), (6, 1)),
        ((1, 1, 4, 4), (4, 4)),
    ],
)
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_forward_and_backward_match_per_pixel_blends(
    x_shape: tuple, out_hw: tuple, align: bool, dtype: type
) -> None:
    """The kernels (separable per plane on the CPU) against four-input blends per pixel,
    up and down, both corner rules, write and add requests."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal(x_shape).astype(dtype)
    dy = rng.standard_normal((*x_shape[:2], *out_hw)).astype(dtype)
    tol = {"rtol": 1e-2, "atol": 1e-2} if dtype == np.float16 else {"rtol": 1e-5, "atol": 1e-5}
    params = {"height": out_hw[0], "width": out_hw[1], "align_corners": align}
    want = bilinear_resize_ref(x.astype(np.float64), **params)
    want_dx = _resize_grad_ref(dy.astype(np.float64), x_shape, align)
    data = nv.nd.array(x, dtype=dtype)
    data.attach_grad(grad_req="add")
    data.grad[:] = 1.0
    with nv.autograd.record():
        y = nv.nd.contrib.BilinearResize2D(data, **params)
    y.backward(nv.nd.array(dy, dtype=dtype))
    np.testing.assert_allclose(y.asnumpy().astype(np.float64), want, **tol)
    np.testing.assert_allclose(data.grad.asnumpy().astype(np.float64), want_dx + 1.0, **tol)
    out = nv.nd.ones(y.shape, dtype=dtype)
    nv.nd.contrib.BilinearResize2D(data, out=out, **params)  # a write over old values
    np.testing.assert_allclose(out.asnumpy().astype(np.float64), want, **tol)


@pytest.mark.gpu
@pytest.mark.parametrize("align", [True, False])
@pytest.mark.parametrize(
    ("x_shape", "out_hw", "dtype"),
    [
        ((2, 2, 5, 3), (3, 7), np.float64),
        ((1, 2, 4, 5), (13, 11), np.float64),  # up: each input gathers a block of outputs
        ((1, 1, 9, 8), (2, 3), np.float32),  # down: inputs no output samples get zero
        ((2, 1, 1, 4), (6, 1), np.float16),
    ],
)
def test_gpu_kernels_match_per_pixel_blends(
    x_shape: tuple, out_hw: tuple, dtype: type, align: bool
) -> None:
    """The GPU's items (one output forward, one input element gathering its outputs'
    gradients backward) on the device, the gradient written and added."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal(x_shape)
    dy = rng.standard_normal((*x_shape[:2], *out_hw))
    params = {"height": out_hw[0], "width": out_hw[1], "align_corners": align}
    tol = {np.float64: 1e-12, np.float32: 1e-5, np.float16: 2e-2}[dtype]
    want, want_dx = bilinear_resize_ref(x, **params), _resize_grad_ref(dy, x.shape, align)
    for req in ("write", "add"):
        data = nv.nd.array(x, ctx=nv.gpu(0), dtype=dtype)
        data.attach_grad(grad_req=req)
        data.grad[:] = 1.0
        with nv.autograd.record():
            y = nv.nd.contrib.BilinearResize2D(data, **params)
        y.backward(nv.nd.array(dy, ctx=nv.gpu(0), dtype=dtype))
        np.testing.assert_allclose(y.asnumpy(), want, rtol=tol, atol=tol)
        base = 1.0 if req == "add" else 0.0
        np.testing.assert_allclose(data.grad.asnumpy(), want_dx + base, rtol=tol, atol=tol)
