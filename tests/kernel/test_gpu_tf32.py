"""NNVMPY_GPU_TF32: which GEMMs it puts on TF32 ('conv': convolution and deconvolution
products only, 'all': every one, '0': none), decided per call by ops/matrix.gemm's `conv`
flag; on the simulator, every GEMM of a GPU convolution (forward, both gradients) and of
a deconvolution says conv=True and FullyConnected's do not. cuBLAS's compute type for
each answer is checked in test_cublas_mapping.py."""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.ops import matrix
from nnvmpy.ops.nn import _im2col_cuda


@pytest.mark.parametrize(
    ("setting", "conv", "want"),
    [("0", True, False), ("conv", True, True), ("conv", False, False), ("all", False, True),
     ("all", True, True)],
)  # fmt: skip
def test_setting_decides_per_gemm(
    monkeypatch: pytest.MonkeyPatch, setting: str, conv: bool, want: bool
) -> None:
    monkeypatch.setenv("NNVMPY_GPU_TF32", setting)
    assert matrix.tf32_for(conv) is want


def test_default_is_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NNVMPY_GPU_TF32", raising=False)
    assert not matrix.tf32_for(True)


@pytest.mark.gpu
def test_convolution_gemms_are_marked_conv(monkeypatch: pytest.MonkeyPatch) -> None:
    flags: list[bool] = []
    real = matrix._gemm_gpu

    def recording(ctx, out, mode, a, ta, b, tb, bias, conv):
        flags.append(conv)
        real(ctx, out, mode, a, ta, b, tb, bias, conv)

    monkeypatch.setattr(matrix, "_gemm_gpu", recording)
    monkeypatch.setattr(_im2col_cuda, "DIRECT_MAX_MACS", 0)  # im2col + GEMM even this small
    rng = np.random.default_rng(0)
    gpu = nv.gpu(0)
    with nv.engine.engine_type("NaiveEngine"):
        x = nv.nd.array(rng.normal(size=(2, 3, 6, 6)), ctx=gpu)
        w = nv.nd.array(rng.normal(size=(4, 3, 3, 3)), ctx=gpu)
        for t in (x, w):
            t.attach_grad()
        with nv.autograd.record():
            y = nv.nd.Convolution(x, w, kernel=(3, 3), num_filter=4, no_bias=True)
            z = nv.nd.Deconvolution(y, w, kernel=(3, 3), num_filter=3, no_bias=True)
        z.backward()
        nv.nd.waitall()
        conv_calls = len(flags)
        fc = nv.nd.FullyConnected(x, nv.nd.ones((5, 108), ctx=gpu), num_hidden=5, no_bias=True)
        fc.wait_to_read()
    # forward and the data and weight gradients of each: at least 6 GEMMs
    assert conv_calls >= 6
    assert all(flags[:conv_calls])
    assert flags[conv_calls:]
    assert not any(flags[conv_calls:])
