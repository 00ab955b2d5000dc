"""fft / ifft: MXNet's own GPU checks (tests/python/gpu/test_operator_gpu.py, check_fft and
check_ifft: np.fft with the unnormalised inverse), the round trip, the symbolic form and
the errors. MXNet 1.9.1 has no CPU kernel for these, so the spec is those tests."""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv


def _as_complex(x: np.ndarray) -> np.ndarray:
    return x[..., 0::2] + 1j * x[..., 1::2]


@pytest.mark.parametrize("shape", [(4, 6), (2, 3, 2, 5)])
def test_mxnet_check_fft(shape: tuple[int, ...], ctx: nv.Context) -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=shape)
    s = nv.sym.contrib.fft(nv.sym.var("fft_data"), compute_size=128)
    exe = s.simple_bind(ctx, fft_data=shape, type_dict={"fft_data": np.float32})
    exe.arg_dict["fft_data"][:] = x
    out = exe.forward(is_train=True)[0].asnumpy()
    want = np.fft.fft(x, axis=-1)
    np.testing.assert_allclose(_as_complex(out), want, rtol=1e-3, atol=1e-4)
    dy = rng.normal(-3, 3, out.shape)
    exe.backward([nv.nd.array(dy, ctx=ctx)])
    grad = exe.grad_dict["fft_data"].asnumpy()
    d = shape[-1]
    np.testing.assert_allclose(grad / d, np.fft.ifft(_as_complex(dy), axis=-1).real, atol=1e-4)


@pytest.mark.parametrize("shape", [(4, 12), (2, 3, 2, 10)])
def test_mxnet_check_ifft(shape: tuple[int, ...], ctx: nv.Context) -> None:
    rng = np.random.default_rng(1)
    x = rng.normal(size=shape)
    s = nv.sym.contrib.ifft(nv.sym.var("ifft_data"), compute_size=128)
    exe = s.simple_bind(ctx, ifft_data=shape, type_dict={"ifft_data": np.float32})
    exe.arg_dict["ifft_data"][:] = x
    out = exe.forward(is_train=True)[0].asnumpy()
    d = shape[-1] // 2
    assert out.shape == (*shape[:-1], d)
    want = np.fft.ifft(_as_complex(x), axis=-1).real  # NumPy divides by d, MXNet does not
    np.testing.assert_allclose(out / d, want, rtol=1e-3, atol=1e-5)
    dy = rng.normal(-3, 3, out.shape)
    exe.backward([nv.nd.array(dy, ctx=ctx)])
    grad = exe.grad_dict["ifft_data"].asnumpy()
    np.testing.assert_allclose(_as_complex(grad), np.fft.fft(dy, axis=-1), rtol=1e-3, atol=1e-3)


def test_round_trip_scales_by_d_in_float64() -> None:
    x = np.random.default_rng(2).normal(size=(3, 7))
    y = nv.nd.contrib.fft(nv.nd.array(x, dtype=np.float64))
    assert y.dtype == np.float64
    assert y.shape == (3, 14)
    back = nv.nd.contrib.ifft(y).asnumpy()
    np.testing.assert_allclose(back, 7 * x, rtol=1e-12, atol=1e-12)


def test_shapes_both_ways_and_errors() -> None:
    fft = nv.sym.contrib.fft(nv.sym.var("data"))
    assert fft.infer_shape(data=(2, 3)) == ([(2, 3)], [(2, 6)], [])
    assert fft.infer_shape_partial()[1] == [()]
    ifft = nv.sym.contrib.ifft(nv.sym.var("data"))
    assert ifft.infer_shape(data=(1, 2, 2, 8)) == ([(1, 2, 2, 8)], [(1, 2, 2, 4)], [])
    with pytest.raises(nv.NNVMError, match="_contrib_ifft: input 'data' has shape \\(2, 5\\)"):
        ifft.infer_shape(data=(2, 5))
    with pytest.raises(nv.NNVMError, match="_contrib_fft: input 'data' has dtype int32"):
        nv.nd.contrib.fft(nv.nd.array([1, 2], dtype=np.int32))
    with pytest.raises(nv.NNVMError, match="compute_size"):
        nv.nd.contrib.fft(nv.nd.ones((2, 2)), compute_size=0)
    with pytest.raises(nv.NNVMError, match="at least one dimension"):
        nv.nd.contrib.fft(nv.nd.array(np.float32(1.0)))


@pytest.mark.parametrize("name", ["_contrib_fft", "_backward_contrib_fft", "_contrib_ifft"])
def test_cufft_path_wiring_with_numpy_standing_in_for_cupy(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The GPU compute with the CuPy layer in use, NumPy standing in for CuPy (the real one
    runs in tests/gpu_hw on hardware): the same transform as the host's, written and added
    as the request says, nothing staged through the host."""
    import contextlib
    import sys

    import nnvmpy.ops._host_staged as staged
    import nnvmpy.ops.contrib_fft as fft_mod
    from nnvmpy.attrs import FCompute_gpu
    from nnvmpy.base import OpReqType
    from nnvmpy.registry import NodeAttrs, Op

    monkeypatch.setattr(fft_mod.gpu_lib, "available", lambda: True)
    monkeypatch.setattr(fft_mod.gpu_lib, "as_cupy", lambda a: a)
    monkeypatch.setattr(fft_mod.gpu_lib, "cupy_stream", lambda s: contextlib.nullcontext())
    monkeypatch.setattr(fft_mod, "is_gpu", lambda ctx: True)
    monkeypatch.setitem(sys.modules, "cupy", np)

    def refuse(*args: object) -> None:
        raise AssertionError("staged through the host")

    monkeypatch.setattr(staged, "to_host", refuse)

    op = Op.get(name)
    attrs = NodeAttrs(op, "f", {})
    x = np.random.default_rng(3).normal(size=(2, 3, 8)).astype(np.float32)
    host = {"_contrib_fft": fft_mod.fft_np, "_backward_contrib_fft": fft_mod.fft_grad_np,
            "_contrib_ifft": fft_mod.ifft_np}[name]  # fmt: skip
    (want,) = host(attrs.parsed, x)
    ctx = type("Ctx", (), {"run_ctx": None})()
    out = np.full(want.shape, 2.0, np.float32)
    op.get_attr(FCompute_gpu)(attrs, ctx, [x], [OpReqType.kWriteTo], [out])
    np.testing.assert_allclose(out, want, rtol=1e-6)
    op.get_attr(FCompute_gpu)(attrs, ctx, [x], [OpReqType.kAddTo], [out])
    np.testing.assert_allclose(out, 2 * want, rtol=1e-6)
