"""Split-K GPU GEMMs (ops/_gemm_split.py): when a product is cut into slices of its inner
size, and that the slices' partial products, summed, are the product (write and add,
every transpose, float32 and float64), on the simulator's tiled-kernel path. The cuBLAS
path's slice strides are checked in tests/kernel/test_cublas_mapping.py."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.base import OpReqType
from nnvmpy.engine.base import RunContext
from nnvmpy.ops import _gemm_split, matrix
from nnvmpy.resource import OpContext

F32, F64, F16 = np.float32, np.float64, np.float16
TILE = _gemm_split.CUBLAS_TILE


@pytest.mark.parametrize(
    ("m", "n", "k", "want"),
    [
        (64, 147, 802816, 128),  # ResNet-18's first convolution, batch 64: 2 tiles
        (64, 576, 200704, 49),  # layer1's 3x3 convolutions: 5 tiles, 53 wanted, 49 divides
        (256, 2304, 12544, 8),  # layer3: 36 tiles; 12544 // 1024 = 12 slices at most
        (512, 4608, 3136, 1),  # layer4: 144 tiles fill the device already
        (64, 64, 2**20 - 3, 1),  # a prime k: no equal slices
        (64, 64, 1536, 1),  # one slice of MIN_SLICE_K at most
    ],
)
def test_slices_for_resnet_weight_gradients(m: int, n: int, k: int, want: int) -> None:
    got = _gemm_split.slices(m, n, k, 1, F32, TILE, False)
    assert got == want
    if got > 1:
        assert k % got == 0
        assert k // got >= _gemm_split.MIN_SLICE_K


def test_slices_keeps_partials_within_the_cap() -> None:
    s = _gemm_split.slices(100, 100, 1 << 24, 1, F64, TILE, False)
    assert s > 1
    assert s * 100 * 100 * 8 <= _gemm_split.MAX_PARTIAL_BYTES
    cap = _gemm_split.MAX_PARTIAL_BYTES // (100 * 100 * 8)
    assert _gemm_split.slices(100, 100, 1 << 24, 1, F64, 1, False) <= cap


@pytest.mark.parametrize(
    ("batch", "dtype", "bias", "knob"),
    [(2, F32, False, "1"), (1, F16, False, "1"), (1, F32, True, "1"), (1, F32, False, "0")],
)
def test_no_split_for_batches_float16_bias_or_knob_off(
    monkeypatch: pytest.MonkeyPatch, batch: int, dtype: Any, bias: bool, knob: str
) -> None:
    monkeypatch.setenv("NNVMPY_GPU_SPLIT_K", knob)
    assert _gemm_split.slices(64, 147, 802816, batch, dtype, TILE, bias) == 1


def test_default_splits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NNVMPY_GPU_SPLIT_K", raising=False)
    assert _gemm_split.slices(64, 147, 802816, 1, F32, TILE, False) == 128


# -- on the simulator: the tiled kernel over slices, then the sum -------------------------


@pytest.fixture
def tiny_splits(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Thresholds that split the simulator's small GEMMs; records each split's slices."""
    monkeypatch.setattr(_gemm_split, "MIN_SLICE_K", 2)
    monkeypatch.setattr(_gemm_split, "SMS", 4)  # outputs of 1-3 tiles of 16 x 16 split
    seen: list[int] = []
    real = _gemm_split.sum_slices

    def spy(ctx: Any, out: Any, partials: Any, add: bool) -> None:
        seen.append(int(partials.size) // int(out.size))
        real(ctx, out, partials, add)

    monkeypatch.setattr(_gemm_split, "sum_slices", spy)
    return seen


def _gemm_on_gpu(out, req, a, ta, b, tb) -> np.ndarray:
    from numba import cuda

    ctx = OpContext(True, RunContext(nv.gpu(0), None), [])
    d_out, d_a, d_b = (cuda.to_device(np.ascontiguousarray(x)) for x in (out, a, b))
    matrix.gemm(ctx, d_out, req, d_a, ta, d_b, tb)
    return d_out.copy_to_host()


@pytest.mark.gpu
@pytest.mark.parametrize(("ta", "tb"), [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("req", [OpReqType.kWriteTo, OpReqType.kAddTo])
@pytest.mark.parametrize("dtype", [F32, F64])
def test_split_product_equals_numpy(
    tiny_splits: list[int], ta: bool, tb: bool, req: OpReqType, dtype: Any
) -> None:
    rng = np.random.default_rng(1)
    m, n, k = 5, 3, 8
    a = rng.integers(-3, 4, (k, m) if ta else (m, k)).astype(dtype)
    b = rng.integers(-3, 4, (n, k) if tb else (k, n)).astype(dtype)
    start = rng.integers(-3, 4, (m, n)).astype(dtype)
    want = (a.T if ta else a).astype(F64) @ (b.T if tb else b).astype(F64)
    if req == OpReqType.kAddTo:
        want += start
    got = _gemm_on_gpu(start, req, a, ta, b, tb)
    assert tiny_splits == [4]  # 4 slices of 2; small integers: every sum is exact
    np.testing.assert_array_equal(got, want.astype(dtype))


@pytest.mark.gpu
def test_convolution_weight_gradient_with_split(
    tiny_splits: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The case split-K is for: dW = dy @ col^T, inner size images x positions."""
    from nnvmpy.ops.nn import _im2col_cuda

    monkeypatch.setattr(_im2col_cuda, "DIRECT_MAX_MACS", 0)  # im2col + GEMM even this small
    rng = np.random.default_rng(2)
    x_host = rng.normal(size=(2, 2, 4, 4))
    w_host = rng.normal(size=(3, 2, 3, 3))
    grads = {}
    for ctx in (nv.cpu(), nv.gpu(0)):
        x, w = nv.nd.array(x_host, ctx=ctx), nv.nd.array(w_host, ctx=ctx)
        w.attach_grad(grad_req="add")
        for _ in range(2):  # the second backward adds into the first's gradient
            with nv.autograd.record():
                y = nv.nd.Convolution(x, w, kernel=(3, 3), num_filter=3, pad=(1, 1), no_bias=True)
            y.backward()
        grads[ctx.device_type] = w.grad.asnumpy()
    assert tiny_splits
    assert all(s > 1 for s in tiny_splits)
    np.testing.assert_allclose(grads["gpu"], grads["cpu"], rtol=1e-5, atol=1e-5)
