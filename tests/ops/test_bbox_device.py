"""The device kernels of box_iou, box_encode, box_decode and bipartite_matching
(ops/_bbox_device.py) against the host functions of contrib_bbox.py (themselves checked
against plain-Python references by the op table): random inputs through the kernels on
the CPU, the ops on the GPU in float32 and float16, write and add requests."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.engine.base import RunContext
from nnvmpy.kernel.launch import ADD, WRITE
from nnvmpy.ops import _bbox_device
from nnvmpy.ops.contrib_bbox import (
    BipartiteMatchingParam,
    BoxDecodeParam,
    BoxOverlapParam,
    bipartite_matching_np,
    box_decode_np,
    box_encode_np,
    box_iou_np,
)
from nnvmpy.resource import OpContext


def _cpu() -> OpContext:
    return OpContext(False, RunContext(nv.cpu()), [])


def _corner_boxes(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    lo = rng.uniform(0, 1, (*shape, 2))
    return np.concatenate([lo, lo + rng.uniform(-0.1, 0.6, (*shape, 2))], axis=-1)


def _encode_inputs(rng: np.random.Generator, dtype: Any) -> list[np.ndarray]:
    b, n, m = 2, 7, 3
    samples = rng.choice([-1.0, 0.0, 1.0], (b, n))
    matches = rng.integers(-1, m + 1, (b, n)).astype(np.float64)  # past both ends: clipped
    matches[0, 1] = 0.7  # truncated to row 0, as the host's cast truncates
    anchors = _corner_boxes(rng, (b, n))
    refs = _corner_boxes(rng, (b, m))
    means, stds = rng.uniform(-0.1, 0.1, 4), rng.uniform(0.1, 0.3, 4)
    return [a.astype(dtype) for a in (samples, matches, anchors, refs, means, stds)]


@pytest.mark.parametrize("fmt", ["corner", "center"])
@pytest.mark.parametrize("mode", [WRITE, ADD])
def test_iou_kernel(fmt: str, mode: int) -> None:
    rng = np.random.default_rng(0)
    lhs, rhs = _corner_boxes(rng, (4, 5)), _corner_boxes(rng, (3,))
    want = box_iou_np(lhs, rhs, fmt)
    out = np.full(want.shape, 0.25)
    p = BoxOverlapParam.parse({"format": fmt})
    _bbox_device.box_iou(_cpu(), p, [lhs, rhs], [out], [mode])
    np.testing.assert_allclose(out, want + (0.25 if mode == ADD else 0), rtol=1e-13, atol=1e-15)


def test_encode_kernel() -> None:
    rng = np.random.default_rng(1)
    inputs = _encode_inputs(rng, np.float64)
    want_t, want_m = box_encode_np(None, *inputs)
    targets, masks = np.full(want_t.shape, 9.0), np.ones(want_m.shape)
    _bbox_device.box_encode(_cpu(), None, inputs, [targets, masks], [WRITE, ADD])
    np.testing.assert_allclose(targets, want_t, rtol=1e-12, atol=1e-14)
    np.testing.assert_array_equal(masks, 1 + want_m)


@pytest.mark.parametrize(
    "params", [{}, {"format": "corner", "std2": 0.5, "clip": 0.3}, {"std0": 0.1, "std3": 2}]
)
def test_decode_kernel(params: dict[str, Any]) -> None:
    rng = np.random.default_rng(2)
    data = rng.uniform(-1, 1, (2, 6, 4))
    anchors = _corner_boxes(rng, (1, 6))
    p = BoxDecodeParam.parse(params)
    (want,) = box_decode_np(p, data, anchors)
    out = np.zeros_like(want)
    _bbox_device.box_decode(_cpu(), p, [data, anchors], [out], [WRITE])
    np.testing.assert_allclose(out, want, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("seed", range(3))
def test_bipartite_kernel_matches_the_host_walk(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(20):
        nrow, ncol = int(rng.integers(1, 9)), int(rng.integers(1, 9))
        data = np.round(rng.uniform(0, 1, (2, nrow, ncol)), 1)  # many ties
        if rng.random() < 0.3:
            data[0, 0, 0] = np.nan
        params = {
            "threshold": float(rng.choice([0.05, 0.3, 0.7])),
            "is_ascend": bool(rng.random() < 0.5),
            "topk": int(rng.choice([-1, 1, 3])),
        }
        p = BipartiteMatchingParam.parse(params)
        want_rows, want_cols = bipartite_matching_np(p, data)
        rows, cols = np.full(want_rows.shape, 5.0), np.full(want_cols.shape, 5.0)
        _bbox_device.bipartite_matching(_cpu(), p, [data], [rows, cols], [WRITE, ADD])
        np.testing.assert_array_equal(rows, want_rows)
        np.testing.assert_array_equal(cols, 5 + want_cols)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_ops_on_the_gpu(dtype: Any) -> None:
    rng = np.random.default_rng(3)
    ctx = nv.gpu(0)
    tol = {"rtol": 1e-5, "atol": 1e-6} if dtype == np.float32 else {"rtol": 2e-3, "atol": 2e-3}

    def on_gpu(a: np.ndarray) -> nv.nd.NDArray:
        return nv.nd.array(a, ctx=ctx, dtype=dtype)

    lhs, rhs = (_corner_boxes(rng, s).astype(dtype) for s in ((3, 2), (4,)))
    got = nv.nd.contrib.box_iou(on_gpu(lhs), on_gpu(rhs)).asnumpy()
    np.testing.assert_allclose(got, box_iou_np(lhs, rhs), **tol)

    inputs = _encode_inputs(rng, dtype)
    # the kernel computes in float64: the host's float16 arithmetic rounds at every step
    want_t, want_m = box_encode_np(None, *(a.astype(np.float64) for a in inputs))
    got_t, got_m = nv.nd.contrib.box_encode(*(on_gpu(a) for a in inputs))
    np.testing.assert_allclose(got_t.asnumpy(), want_t.astype(dtype), **tol)
    np.testing.assert_array_equal(got_m.asnumpy(), want_m)

    data, anchors = rng.uniform(-1, 1, (2, 5, 4)).astype(dtype), _corner_boxes(rng, (1, 5))
    p = BoxDecodeParam.parse({"format": "corner", "clip": 0.5})
    (want,) = box_decode_np(p, data, anchors.astype(dtype))
    got = nv.nd.contrib.box_decode(on_gpu(data), on_gpu(anchors), format="corner", clip=0.5)
    np.testing.assert_allclose(got.asnumpy(), want, **tol)

    scores = np.round(rng.uniform(0, 1, (2, 4, 5)), 1).astype(dtype)
    p = BipartiteMatchingParam.parse({"threshold": 0.2})
    want_rows, want_cols = bipartite_matching_np(p, scores)
    got_rows, got_cols = nv.nd.contrib.bipartite_matching(on_gpu(scores), threshold=0.2)
    np.testing.assert_array_equal(got_rows.asnumpy(), want_rows)
    np.testing.assert_array_equal(got_cols.asnumpy(), want_cols)


@pytest.mark.parametrize("ascend", [False, True])
def test_bipartite_kernel_compares_float32_scores_with_the_float64_threshold(ascend: bool) -> None:
    # float32(0.3) > 0.3 and float32(0.7) < 0.7: the host keeps such scores, so must the
    # kernel, whose keys are float32 (a threshold rounded to nearest would drop them)
    threshold = 0.7 if ascend else 0.3
    data = np.full((1, 3, 2), np.float32(threshold), np.float32)
    data[0, 1, 0] = 0.9 if not ascend else 0.1
    p = BipartiteMatchingParam.parse({"threshold": threshold, "is_ascend": ascend})
    want_rows, want_cols = bipartite_matching_np(p, data)
    assert (want_rows >= 0).sum() == 2  # the tied scores pass on the host
    rows = np.zeros(want_rows.shape, np.float32)
    cols = np.zeros(want_cols.shape, np.float32)
    _bbox_device.bipartite_matching(_cpu(), p, [data], [rows, cols], [WRITE, WRITE])
    np.testing.assert_array_equal(rows, want_rows)
    np.testing.assert_array_equal(cols, want_cols)


def test_float32_kernels_agree_with_the_hosts_float32_arithmetic() -> None:
    # the kernels compute in float32 for float32 data, as the host (and MXNet) do
    rng = np.random.default_rng(4)
    lhs, rhs = (_corner_boxes(rng, s).astype(np.float32) for s in ((4, 5), (3,)))
    out = np.zeros((4, 5, 3), np.float32)
    _bbox_device.box_iou(_cpu(), BoxOverlapParam.parse({}), [lhs, rhs], [out], [WRITE])
    np.testing.assert_allclose(out, box_iou_np(lhs, rhs), rtol=3e-7, atol=1e-7)
    inputs = _encode_inputs(rng, np.float32)
    want_t, _ = box_encode_np(None, *inputs)
    targets, masks = np.zeros_like(want_t), np.zeros_like(want_t)
    _bbox_device.box_encode(_cpu(), None, inputs, [targets, masks], [WRITE, WRITE])
    np.testing.assert_allclose(targets, want_t, rtol=1e-6, atol=1e-6)
    data = rng.uniform(-1, 1, (2, 6, 4)).astype(np.float32)
    anchors = _corner_boxes(rng, (1, 6)).astype(np.float32)
    p = BoxDecodeParam.parse({"format": "corner", "std2": 0.3, "clip": 0.25})
    (want,) = box_decode_np(p, data, anchors)
    got = np.zeros_like(want)
    _bbox_device.box_decode(_cpu(), p, [data, anchors], [got], [WRITE])
    np.testing.assert_allclose(got, want, rtol=3e-7, atol=1e-7)
