"""box_nms's device kernels (ops/_nms_device.py) against the host implementation
(contrib_bbox.box_nms_np, itself checked against a plain-Python reference by the op
table): many random batches on the CPU (the kernels compile for it too), the op on the
GPU with ties, classes, topk, formats, float16, candidates across several 64-bit overlap
words, and write / add requests for the output and the gradient."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.engine.base import RunContext
from nnvmpy.kernel.launch import ADD, WRITE
from nnvmpy.ops import _nms_device
from nnvmpy.ops.contrib_bbox import BoxNMSParam, box_nms_grad_np, box_nms_np
from nnvmpy.resource import OpContext


def _boxes(rng: np.random.Generator, b: int, n: int, dtype: Any, ties: bool) -> np.ndarray:
    """Rows [class, score, x0, y0, x1, y1]: clustered boxes (many overlaps), some
    degenerate (negative width), scores rounded to produce ties when asked."""
    x = np.empty((b, n, 6))
    x[..., 0] = rng.integers(0, 3, (b, n))
    x[..., 1] = rng.uniform(0, 1, (b, n))
    if ties:
        x[..., 1] = np.round(x[..., 1], 1)
    x[..., 2:4] = rng.uniform(0, 1, (b, n, 2))
    x[..., 4:6] = x[..., 2:4] + rng.uniform(-0.05, 0.5, (b, n, 2))
    return x.astype(dtype)


def _random_params(rng: np.random.Generator) -> BoxNMSParam:
    return BoxNMSParam.parse({
        "overlap_thresh": float(rng.choice([0.1, 0.3, 0.5, 0.7])),
        "valid_thresh": float(rng.choice([0.0, 0.2])),
        "topk": int(rng.choice([-1, 0, 1, 5, 100])),
        "id_index": int(rng.choice([-1, 0])),
        "force_suppress": bool(rng.random() < 0.5),
        "background_id": int(rng.choice([-1, 1])),
        "in_format": str(rng.choice(["corner", "center"])),
        "out_format": str(rng.choice(["corner", "center"])),
    })  # fmt: skip


def _cpu_ctx() -> OpContext:
    return OpContext(False, RunContext(nv.cpu()), [])


@pytest.mark.parametrize("seed", range(4))
def test_kernels_match_the_host_on_random_batches(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(30):
        b, n = int(rng.integers(1, 4)), int(rng.integers(1, 150))
        x = _boxes(rng, b, n, rng.choice([np.float32, np.float64]), rng.random() < 0.4)
        p = _random_params(rng)
        want_out, want_rec = box_nms_np(p, x)
        out, rec = np.ones_like(x), np.ones((*x.shape[:-1], 1), x.dtype)
        _nms_device.box_nms(_cpu_ctx(), p, x, out, rec, [WRITE, ADD])
        np.testing.assert_array_equal(out, want_out)
        np.testing.assert_array_equal(rec, 1 + want_rec)
        dy = rng.uniform(-1, 1, x.shape).astype(x.dtype)
        (want_grad,) = box_nms_grad_np(p, dy, want_rec)
        grad = np.full_like(x, 2.0)
        _nms_device.box_nms_grad(_cpu_ctx(), dy, want_rec, grad, ADD)
        np.testing.assert_array_equal(grad, 2 + want_grad)


def test_output_add_request_converts_the_added_rows() -> None:
    rng = np.random.default_rng(7)
    x = _boxes(rng, 2, 20, np.float64, ties=False)
    p = BoxNMSParam.parse({"overlap_thresh": "0.3", "out_format": "center"})
    want_out, want_rec = box_nms_np(p, x)
    out, rec = np.full_like(x, 0.5), np.zeros((*x.shape[:-1], 1), x.dtype)
    _nms_device.box_nms(_cpu_ctx(), p, x, out, rec, [ADD, WRITE])
    np.testing.assert_allclose(out, 0.5 + want_out, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(rec, want_rec)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize(
    "params",
    [
        {"overlap_thresh": 0.3},
        {"overlap_thresh": 0.2, "id_index": 0, "background_id": 1, "valid_thresh": 0.1},
        {
            "overlap_thresh": 0.4,
            "id_index": 0,
            "force_suppress": True,
            "topk": 70,
            "in_format": "center",
            "out_format": "corner",
        },
        {"topk": 0},  # the input unchanged, every gradient row back to its own row
    ],
)
# degenerate boxes divide 0 by 0 (NaN: not suppressed); the simulator's NumPy scalars warn
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
def test_op_on_the_gpu_matches_the_host(dtype: Any, params: dict[str, Any]) -> None:
    """80 boxes a batch: candidates span two overlap words; scores with ties. The
    gradient checks the hidden record output (each output row's input row)."""
    rng = np.random.default_rng(11)
    x = _boxes(rng, 2, 80, dtype, ties=True)
    p = BoxNMSParam.parse(params)
    want_out, want_rec = box_nms_np(p, x)
    data = nv.nd.array(x, ctx=nv.gpu(0), dtype=dtype)
    data.attach_grad()
    dy = rng.uniform(-1, 1, x.shape).astype(dtype)
    with nv.autograd.record():
        out = nv.nd.contrib.box_nms(data, **params)
    out.backward(nv.nd.array(dy, ctx=nv.gpu(0), dtype=dtype))
    np.testing.assert_array_equal(out.asnumpy(), want_out)
    (want_grad,) = box_nms_grad_np(p, dy, want_rec)
    np.testing.assert_array_equal(data.grad.asnumpy(), want_grad)


def test_scratch_holding_nan_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernels' scratch is uninitialised: filled with NaN (what a previous user may
    leave), the results still match the host (a typed zero was once read from it)."""
    real = _nms_device.device_empty

    def nan_filled(ctx: Any, size: int, dtype: Any) -> Any:
        a = real(ctx, size, dtype)
        a.fill(np.nan if np.dtype(dtype).kind == "f" else 0x7F)
        return a

    monkeypatch.setattr(_nms_device, "device_empty", nan_filled)
    rng = np.random.default_rng(11)
    for dtype in (np.float32, np.float64):
        x = _boxes(rng, 2, 40, dtype, ties=False)
        p = BoxNMSParam.parse({"overlap_thresh": "0.5"})
        want_out, want_rec = box_nms_np(p, x)
        out, rec = np.empty_like(x), np.empty((*x.shape[:-1], 1), x.dtype)
        _nms_device.box_nms(_cpu_ctx(), p, x, out, rec, [WRITE, WRITE])
        np.testing.assert_array_equal(out, want_out)
        np.testing.assert_array_equal(rec, want_rec)
