"""fft / ifft on a real GPU through cupy.fft (ops/contrib_fft.py): forward and gradients
against NumPy's FFT, float32 and float64, write and add requests, nothing staged through
the host."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import nnvmpy as nv

pytestmark = [pytest.mark.gpu]


@pytest.fixture(autouse=True)
def no_host_staging(monkeypatch: pytest.MonkeyPatch) -> None:
    import nnvmpy.ops._host_staged as staged

    def refuse(*args: Any) -> None:
        raise AssertionError("fft staged its arrays through the host")

    monkeypatch.setattr(staged, "to_host", refuse)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fft_ifft_and_gradients(dtype: Any) -> None:
    rng = np.random.default_rng(0)
    ctx = nv.gpu(0)
    x = rng.normal(size=(3, 2, 48)).astype(dtype)
    tol = {"rtol": 1e-4, "atol": 1e-4} if dtype == np.float32 else {"rtol": 1e-10, "atol": 1e-10}
    data = nv.nd.array(x, ctx=ctx, dtype=dtype)
    data.attach_grad()
    dy = rng.normal(size=(3, 2, 96)).astype(dtype)
    with nv.autograd.record():
        y = nv.nd.contrib.fft(data)
    y.backward(nv.nd.array(dy, ctx=ctx, dtype=dtype))
    z = np.fft.fft(x.astype(np.float64), axis=-1)
    want = np.empty((3, 2, 96))
    want[..., 0::2], want[..., 1::2] = z.real, z.imag
    np.testing.assert_allclose(y.asnumpy(), want, **tol)
    zc = dy[..., 0::2] + 1j * dy[..., 1::2]
    want_grad = np.fft.ifft(zc, axis=-1).real * 48  # unnormalised inverse
    np.testing.assert_allclose(data.grad.asnumpy(), want_grad, **tol)

    back = nv.nd.contrib.ifft(y).asnumpy()  # ifft(fft(x)) = d x
    np.testing.assert_allclose(back, 48 * x, **tol)


def test_add_request_accumulates() -> None:
    rng = np.random.default_rng(1)
    ctx = nv.gpu(0)
    x = rng.normal(size=(4, 16)).astype(np.float32)
    data = nv.nd.array(x, ctx=ctx)
    grad = nv.nd.ones((4, 16), ctx=ctx)
    nv.autograd.mark_variables([data], [grad], grad_reqs="add")
    with nv.autograd.record():
        y = nv.nd.contrib.fft(data)
    y.backward(nv.nd.ones((4, 32), ctx=ctx))
    z = np.ones((4, 16)) + 1j * np.ones((4, 16))
    want = 1 + np.fft.ifft(z, axis=-1).real * 16
    np.testing.assert_allclose(grad.asnumpy(), want, rtol=1e-4, atol=1e-4)
