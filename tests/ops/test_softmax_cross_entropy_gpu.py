"""softmax_cross_entropy on the GPU against NumPy: a thread block per row of 32 or more
classes, a thread per shorter row, and a block summing 32 or more rows' losses.

The shapes take every path of ops/nn/softmax_cross_entropy.py's kernels: rows shorter
than the block (40 classes, 64 threads), as long as it (32), longer and not a multiple of
it (300, 128 threads), more rows than the simulator's 4-block grid (grid-stride), rows
under 32; 32 or more rows for the block sum. Requests write, add and null on both
outputs of the backward; a bad label is a named error that leaves the loss and the data
gradient alone. A spy checks which kernels ran. Runs under NUMBA_ENABLE_CUDASIM=1 or on
a GPU (tests/conftest.py); kept small, as every simulated thread is a Python thread.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from launch_spies import spy_block_launches
from symbol_runs import run_symbol

import nnvmpy as nv
from nnvmpy.attrs import FCompute_gpu
from nnvmpy.base import OpReqType
from nnvmpy.engine.base import RunContext
from nnvmpy.registry import Op
from nnvmpy.resource import OpContext, ResourceRequest, get_resource

pytestmark = [pytest.mark.gpu, pytest.mark.sim_barriers]

F16, F32, F64 = np.float16, np.float32, np.float64
DTYPES = [F16, F32, F64]
TOL = {F16: (2e-3, 2e-3), F32: (1e-5, 1e-6), F64: (1e-12, 1e-14)}
BLOCK_KERNELS = ("_row_loss_block_cuda", "_row_grad_block_cuda", "_sum_losses_block_cuda")

# id -> ((rows, classes), block kernels the forward and backward launch)
SHAPES: dict[str, tuple[tuple[int, int], list[str]]] = {
    "long-rows": ((5, 300), ["_row_loss_block_cuda", "_row_grad_block_cuda"]),
    "block-wider-than-row": ((9, 40), ["_row_loss_block_cuda", "_row_grad_block_cuda"]),
    "many-long-rows": ((33, 32), list(BLOCK_KERNELS)),
    "short-rows": ((6, 10), []),
    "many-short-rows": ((35, 5), ["_sum_losses_block_cuda"]),
}


def inputs(shape: tuple[int, int], dtype: Any, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.uniform(-4, 4, shape).astype(dtype)
    return x, rng.integers(0, shape[1], shape[0]).astype(dtype)


def loss_ref(x: np.ndarray, label: np.ndarray) -> np.ndarray:
    v = x.astype(F64)
    m = v.max(1)
    lse = m + np.log(np.exp(v - m[:, None]).sum(1))
    return np.array([(lse - v[np.arange(len(v)), label.astype(int)]).sum()])


def grad_ref(x: np.ndarray, label: np.ndarray, dy: float) -> np.ndarray:
    v = x.astype(F64)
    p = np.exp(v - v.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    p[np.arange(len(v)), label.astype(int)] -= 1.0
    return p * dy


def close(got: np.ndarray, want: np.ndarray, dtype: Any) -> None:
    assert got.dtype == dtype
    rtol, atol = TOL[dtype]
    np.testing.assert_allclose(got.astype(F64), want, rtol=rtol, atol=atol)


@pytest.fixture
def launched(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int, int]]:
    """(kernel, blocks, threads) of every launch of the block kernels."""
    from nnvmpy.ops.nn import softmax_cross_entropy as ce

    return spy_block_launches(monkeypatch, {name: getattr(ce, name) for name in BLOCK_KERNELS})


def compute_gpu(name: str, arrays: list[np.ndarray], reqs: list[str], outs: list[Any]) -> None:
    """The op's FCompute<gpu> on device copies of arrays, as the engine calls it."""
    from numba import cuda

    op = Op.get(name)
    temp = [get_resource(ResourceRequest.kTempSpace, nv.gpu(0))[0]]
    ctx = OpContext(True, RunContext(nv.gpu(0), None), temp)
    args = [cuda.to_device(a) for a in arrays]
    req = [OpReqType.parse(r) for r in reqs]
    op.get_attr(FCompute_gpu)(op.parse_attrs({}), ctx, args, req, outs)


def run_gpu(
    name: str, arrays: list[np.ndarray], reqs: list[str], outs: list[np.ndarray]
) -> list[np.ndarray]:
    """compute_gpu with outputs that start as `outs`; the outputs back on the host."""
    from numba import cuda

    dev_outs = [cuda.to_device(o) for o in outs]
    compute_gpu(name, arrays, reqs, dev_outs)
    return [o.copy_to_host() for o in dev_outs]


def ce_symbol() -> Any:
    return nv.sym.softmax_cross_entropy(nv.sym.var("x"), nv.sym.var("label"))


@pytest.mark.parametrize("dtype", DTYPES, ids=["float16", "float32", "float64"])
@pytest.mark.parametrize("case", list(SHAPES))
def test_loss_and_gradient_match_numpy(
    case: str, dtype: Any, launched: list[tuple[str, int, int]]
) -> None:
    shape, kernels = SHAPES[case]
    x, label = inputs(shape, dtype, 1)
    dy = np.array([2.0], dtype)
    loss, dx = run_symbol(nv.gpu(0), ce_symbol, {"x": x, "label": label}, dy)
    close(loss, loss_ref(x, label), dtype)
    close(dx, grad_ref(x, label, 2.0), dtype)
    assert sorted({k for k, _, _ in launched}) == sorted(kernels)
    rows, classes = shape
    for k, blocks, threads in launched:
        n = rows if k == "_sum_losses_block_cuda" else classes
        assert threads == min(128, 1 << (n - 1).bit_length())
        assert blocks <= (1 if k == "_sum_losses_block_cuda" else rows)


@pytest.mark.parametrize("req", ["write", "add", "null"])
@pytest.mark.parametrize("case", ["long-rows", "many-long-rows", "short-rows"])
def test_every_request_of_forward_and_backward(case: str, req: str) -> None:
    shape, _ = SHAPES[case]
    x, label = inputs(shape, F32, 2)
    start = np.full((1,), 0.5, F32)
    (loss,) = run_gpu("softmax_cross_entropy", [x, label], [req], [start])
    want = {"write": loss_ref(x, label), "add": 0.5 + loss_ref(x, label), "null": start}[req]
    close(loss, want, F32)
    dy = np.array([1.5], F32)
    dx0, dl0 = np.full(shape, 0.25, F32), np.full(shape[:1], 7.0, F32)
    dx, dl = run_gpu("_backward_softmax_cross_entropy", [dy, x, label], [req, req], [dx0, dl0])
    grad = grad_ref(x, label, 1.5)
    close(dx, {"write": grad, "add": 0.25 + grad, "null": dx0}[req], F32)
    close(dl, {"write": 0.0 * dl0, "add": dl0, "null": dl0}[req], F32)


@pytest.mark.parametrize("bad", [-1.0, 40.0, np.nan])
def test_a_bad_label_is_a_named_error_before_any_write(bad: float) -> None:
    from numba import cuda

    x, label = inputs((4, 40), F32, 3)
    label[2] = bad
    loss = cuda.to_device(np.full(1, 9.0, F32))
    with pytest.raises(nv.NNVMError, match=r"^softmax_cross_entropy: label\[2\]"):
        compute_gpu("softmax_cross_entropy", [x, label], ["write"], [loss])
    outs = [cuda.to_device(np.full(x.shape, 9.0, F32)), cuda.to_device(np.full(4, 9.0, F32))]
    with pytest.raises(nv.NNVMError, match=r"_backward_softmax_cross_entropy: label\[2\]"):
        compute_gpu(
            "_backward_softmax_cross_entropy", [np.ones(1, F32), x, label], ["write"] * 2, outs
        )
    assert (loss.copy_to_host() == 9.0).all()
    assert (outs[0].copy_to_host() == 9.0).all()  # data's gradient (label's is zeroed first)
