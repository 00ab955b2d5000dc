"""The multibox ops' device kernels (ops/_multibox_device.py, _multibox_target_device.py)
against the host functions (contrib_multibox.multibox_*_np, themselves checked against
plain-Python references by the op table): many random cases on the CPU (the kernels
compile for it too), the ops on the GPU with float32 and float16, and write / add
requests.

The kernels repeat the host's arithmetic, so results are equal bit for bit, except exp
(box decoding) and log (regression targets): NumPy's float32 / float64 exp and log are
its own SIMD code, not the CPU's libm nor CUDA's. Boxes compare exactly where exp is
exact (zero size offsets), size targets to a few ulps; classes, scores, order, masks
and the other targets always exactly (test inputs avoid ties that only exp's rounding
breaks). On a real GPU (not the simulator) decoded boxes get a few ulps too: NVVM fuses
x * y + z into FMAs by default.
"""

from __future__ import annotations

import re
from functools import partial
from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.base import NNVMError
from nnvmpy.engine.base import RunContext
from nnvmpy.kernel.cuda import simulated
from nnvmpy.kernel.launch import ADD, WRITE
from nnvmpy.ops import _multibox_device, _multibox_target_device
from nnvmpy.ops.contrib_multibox import (
    MultiBoxDetectionParam,
    MultiBoxPriorParam,
    MultiBoxTargetParam,
    multibox_detection_np,
    multibox_prior_np,
    multibox_target_np,
    prior_table,
)
from nnvmpy.resource import OpContext


def _cpu_ctx() -> OpContext:
    return OpContext(False, RunContext(nv.cpu()), [])


def _assert_equal(got: list[np.ndarray], want: list[np.ndarray]) -> None:
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)


def _check_write_and_add(rng: np.random.Generator, want: list[np.ndarray], run: Any,
                         check: Any = _assert_equal) -> None:  # fmt: skip
    """run(outputs, mode) writes `want` over NaNs, then adds it to random values (in the
    outputs' dtype, as the host adds)."""
    outs = [np.full_like(w, np.nan) for w in want]
    run(outs, WRITE)
    check(outs, want)
    starts = [rng.uniform(-1, 1, w.shape).astype(w.dtype) for w in want]
    outs = [a.copy() for a in starts]
    run(outs, ADD)
    check(outs, [a + w for a, w in zip(starts, want)])


def _ulps(dtype: Any) -> float:
    """An absolute tolerance for boxes of size ~1 decoded with another exp."""
    return float(8 * np.finfo(dtype).eps)


# --- MultiBoxPrior ----------------------------------------------------------------------------


def _random_prior_params(rng: np.random.Generator) -> MultiBoxPriorParam:
    steps = (-1.0, -1.0) if rng.random() < 0.5 else tuple(rng.uniform(0.05, 0.4, 2))
    return MultiBoxPriorParam.parse({
        "sizes": tuple(rng.uniform(0.05, 1.2, int(rng.integers(1, 4)))),
        "ratios": tuple(rng.uniform(0.2, 4.0, int(rng.integers(1, 4)))),
        "clip": bool(rng.random() < 0.5),
        "steps": steps,
        "offsets": tuple(rng.uniform(0, 1, 2)),
    })  # fmt: skip


def _prior(ctx: Any, p: MultiBoxPriorParam, shape: tuple[int, ...], outs: list[Any],
           mode: int) -> None:  # fmt: skip
    height, width = shape[2], shape[3]
    sizes = (height, width, len(p.sizes) + len(p.ratios) - 1)
    table = prior_table(p, height, width)
    _multibox_device.multibox_prior(ctx, table, sizes, p.clip, outs[0], mode)


@pytest.mark.parametrize("seed", range(3))
def test_prior_kernel_matches_the_host(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(30):
        p = _random_prior_params(rng)
        shape = (1, 2, int(rng.integers(1, 9)), int(rng.integers(1, 9)))
        dtype = rng.choice([np.float32, np.float64])
        want = multibox_prior_np(p, np.zeros(shape, dtype))
        _check_write_and_add(rng, want, partial(_prior, _cpu_ctx(), p, shape))


# --- MultiBoxDetection ------------------------------------------------------------------------


def _detection_inputs(rng: np.random.Generator, b: int, c: int, n: int, dtype: Any, ties: bool,
                      exact: bool) -> list[np.ndarray]:  # fmt: skip
    """cls_prob with ties (rounded) when asked, clustered anchors (many overlaps, some of
    zero or negative width) and offsets; with `exact` the size offsets are 0 (exp(0) = 1)."""
    prob = rng.uniform(0, 1, (b, c, n))
    if ties:
        prob = np.round(prob, 1)
    anchors = rng.uniform(0, 0.8, (1, n, 4))
    anchors[..., 2:] = anchors[..., :2] + rng.uniform(-0.02, 0.4, (1, n, 2))
    loc = rng.uniform(-1, 1, (b, n, 4))
    if exact:
        loc[..., 2:] = 0
    return [a.astype(dtype) for a in (prob, loc.reshape(b, -1), anchors)]


def _random_detection_params(rng: np.random.Generator) -> MultiBoxDetectionParam:
    return MultiBoxDetectionParam.parse({
        "clip": bool(rng.random() < 0.5),
        "threshold": float(rng.choice([0.0, 0.01, 0.3, 0.7])),
        "nms_threshold": float(rng.choice([0.0, 0.2, 0.45, 0.7, 1.0, 1.5])),
        "force_suppress": bool(rng.random() < 0.5),
        "nms_topk": int(rng.choice([-1, 1, 4, 40, 500])),
        "variances": tuple(rng.choice([0.1, 0.2, 0.3], 4)),
    })  # fmt: skip


def _detect(ctx: Any, p: MultiBoxDetectionParam, inputs: list[Any], outs: list[Any],
            mode: int) -> None:  # fmt: skip
    _multibox_device.multibox_detection(ctx, p, *inputs, outs[0], mode)


@pytest.mark.parametrize("seed", range(4))
def test_detection_kernels_match_the_host_bit_for_bit(seed: int) -> None:
    """Zero size offsets: every step of the host's arithmetic is repeated exactly, the
    suppression decisions included; anchors span several overlap words and count blocks."""
    rng = np.random.default_rng(seed)
    for _ in range(25):
        b, c, n = int(rng.integers(1, 4)), int(rng.integers(2, 5)), int(rng.integers(1, 300))
        dtype = rng.choice([np.float32, np.float64])
        inputs = _detection_inputs(rng, b, c, n, dtype, rng.random() < 0.5, exact=True)
        p = _random_detection_params(rng)
        want = multibox_detection_np(p, *inputs)
        _check_write_and_add(rng, want, partial(_detect, _cpu_ctx(), p, inputs))


@pytest.mark.parametrize("seed", range(2))
def test_detection_kernels_match_the_host_with_size_offsets(seed: int) -> None:
    """Classes, scores and order exactly; boxes to the rounding of another exp."""
    rng = np.random.default_rng(100 + seed)
    for _ in range(20):
        b, c, n = int(rng.integers(1, 4)), int(rng.integers(2, 5)), int(rng.integers(1, 120))
        dtype = rng.choice([np.float32, np.float64])
        inputs = _detection_inputs(rng, b, c, n, dtype, rng.random() < 0.5, exact=False)
        p = _random_detection_params(rng)
        (want,) = multibox_detection_np(p, *inputs)
        out = np.zeros_like(want)
        _detect(_cpu_ctx(), p, inputs, [out], WRITE)
        np.testing.assert_array_equal(out[..., :2], want[..., :2])
        np.testing.assert_allclose(out[..., 2:], want[..., 2:], rtol=0, atol=_ulps(dtype))


def test_detection_suppresses_at_an_overlap_equal_to_the_threshold() -> None:
    """IoU 0.5 exactly (anchors of area 1/4 and 1/8, one inside the other): the host
    suppresses at >= threshold; NaN scores are never detections."""
    anchors = np.array([[[0, 0, 0.5, 0.5], [0, 0, 0.5, 0.25], [0.5, 0.5, 1, 1]] * 2], np.float32)
    prob = np.array([[[0.9, 0.8, np.nan, 0.7, 0.1, 0.4], [0.2, 0.1, 0.3, np.nan, 0.0, 0.5]]])
    prob = np.concatenate([np.zeros_like(prob[:, :1]), prob], axis=1).astype(np.float32)
    loc = np.zeros((1, 24), np.float32)
    for thresh, suppressed in ((0.5, True), (float(np.nextafter(0.5, 1)), False)):
        p = MultiBoxDetectionParam.parse({"nms_threshold": thresh})
        (want,) = multibox_detection_np(p, prob, loc, anchors)
        assert (want[0, 1, 0] == -1) == suppressed
        out = np.zeros_like(want)
        _detect(_cpu_ctx(), p, [prob, loc, anchors], [out], WRITE)
        np.testing.assert_array_equal(out, want)


# --- MultiBoxTarget ---------------------------------------------------------------------------


def _grid_boxes(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Corners on a 1/8 grid, sides 0 to 1/2: equal IoUs (ties) and exact sizes."""
    lo = rng.integers(0, 7, (*shape, 2)) / 8
    return np.concatenate([lo, lo + rng.integers(0, 5, (*shape, 2)) / 8], axis=-1)


def _target_inputs(rng: np.random.Generator, b: int, m: int, n: int, c: int, dtype: Any,
                   grid: bool) -> list[np.ndarray]:  # fmt: skip
    """anchor (1, n, 4), label (b, m, 5 or 6) cut by a class -1 row in some batches,
    cls_pred (b, c, n): on the grid, repeated labels and prediction columns (ties)."""
    if grid:
        anchors = _grid_boxes(rng, (1, n))
        boxes = _grid_boxes(rng, (b, m))
        boxes[:, 1::2] = boxes[:, ::2][:, : m // 2]  # labels repeated
    else:
        anchors = rng.uniform(0, 0.7, (1, n, 4))
        anchors[..., 2:] = anchors[..., :2] + rng.uniform(0.05, 0.4, (1, n, 2))
        boxes = rng.uniform(0, 0.7, (b, m, 4))
        boxes[..., 2:] = boxes[..., :2] + rng.uniform(0.05, 0.4, (b, m, 2))
    label = np.concatenate([rng.integers(0, 4, (b, m, 1)), boxes], axis=-1)
    if rng.random() < 0.5:
        label = np.concatenate([label, rng.uniform(0, 1, (b, m, 1))], axis=-1)
    for row in label:
        cut = int(rng.integers(0, m + 2))
        if cut < m:
            row[cut, 0] = -1
    pred = rng.normal(0, 1, (b, c, n))
    if grid:  # repeated columns: tied probabilities (sums of the same exps in one order)
        pred = pred[:, :, rng.integers(0, min(n, 3), n)]
    return [a.astype(dtype) for a in (anchors, label, pred)]


def _random_target_params(rng: np.random.Generator) -> MultiBoxTargetParam:
    return MultiBoxTargetParam.parse({
        "overlap_threshold": float(rng.choice([0.0, 0.1, 0.3, 0.5])),
        "ignore_label": float(rng.choice([-1.0, 7.3])),
        "negative_mining_ratio": float(rng.choice([-1.0, 0.5, 1.0, 3.0])),
        "negative_mining_thresh": float(rng.choice([0.2, 0.5, 0.8])),
        "variances": tuple(rng.choice([0.1, 0.2, 0.3], 4)),
    })  # fmt: skip


def _check_targets(got: list[np.ndarray], want: list[np.ndarray]) -> None:
    """Exact but for the log of the size targets (another log's rounding)."""
    (loc, mask, cls), (want_loc, want_mask, want_cls) = got, want
    np.testing.assert_array_equal(cls, want_cls)
    np.testing.assert_array_equal(mask, want_mask)
    loc, want_loc = loc.reshape(-1, 4), want_loc.reshape(-1, 4)
    np.testing.assert_array_equal(loc[:, :2], want_loc[:, :2])
    tol = _ulps(np.float16 if loc.dtype == np.float16 else np.float32)  # computed in float32
    np.testing.assert_allclose(loc[:, 2:], want_loc[:, 2:], rtol=tol, atol=tol)


def _target(ctx: Any, p: MultiBoxTargetParam, inputs: list[Any], outputs: list[Any],
            mode: int) -> None:  # fmt: skip
    _multibox_target_device.multibox_target(ctx, p, inputs, outputs, [mode] * 3)


@pytest.mark.parametrize("seed", range(4))
def test_target_kernels_match_the_host(seed: int) -> None:
    """Random and grid boxes (tied IoUs and probabilities), labels cut by class -1,
    negative mining (and its shortfall error) or not; write and add requests."""
    rng = np.random.default_rng(200 + seed)
    checked = 0
    for _ in range(30):
        b, m = int(rng.integers(1, 4)), int(rng.integers(1, 7))
        n, c = int(rng.integers(1, 90)), int(rng.integers(2, 5))
        dtype = rng.choice([np.float32, np.float64])
        inputs = _target_inputs(rng, b, m, n, c, dtype, grid=rng.random() < 0.6)
        p = _random_target_params(rng)
        try:
            want = multibox_target_np(p, *inputs)
        except NNVMError as e:  # a mining shortfall: the same message
            with pytest.raises(NNVMError, match=re.escape(str(e))):
                _target(_cpu_ctx(), p, inputs, [np.empty(1, dtype)] * 3, WRITE)
            continue
        _check_write_and_add(rng, want, partial(_target, _cpu_ctx(), p, inputs), _check_targets)
        checked += 1
    assert checked > 20


def test_target_raises_the_hosts_errors_and_ignores_batches_without_labels() -> None:
    rng = np.random.default_rng(3)
    anchors, label, pred = _target_inputs(rng, 2, 3, 10, 3, np.float32, grid=False)
    p = MultiBoxTargetParam.parse({"negative_mining_ratio": 1.0, "negative_mining_thresh": 0.0})
    with pytest.raises(NNVMError, match="negative_mining_thresh must be > 0"):
        _target(_cpu_ctx(), p, [anchors, label, pred], [np.empty(1, np.float32)] * 3, WRITE)
    label[:, 0, 0] = -1  # no labels: nothing is checked, every anchor ignored
    want = multibox_target_np(p, anchors, label, pred)
    outs = [np.full(w.shape, np.nan, np.float32) for w in want]
    _target(_cpu_ctx(), p, [anchors, label, pred], outs, WRITE)
    _check_targets(outs, want)
    np.testing.assert_array_equal(outs[2], -1)


# --- on the GPU -------------------------------------------------------------------------------


def _gpu_ctx() -> OpContext:
    return OpContext(False, RunContext(nv.gpu(0)), [])


def _gpu_box_tol(dtype: Any) -> float:
    """0 on the simulator (NumPy's arithmetic); a few ulps on a GPU, whose compiler (NVVM,
    FMA contraction on by default) may fuse the decoding's x * y + z."""
    from numba import config

    return 0.0 if config.ENABLE_CUDASIM else _ulps(dtype)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize(
    "params",
    [
        {"sizes": (0.5, 0.25), "ratios": (1.0, 2.0, 0.5)},
        {"sizes": (0.7,), "ratios": (3.0, 0.4), "clip": True, "steps": (0.2, 0.3),
         "offsets": (0.2, 0.7)},
    ],
)  # fmt: skip
def test_prior_op_on_the_gpu_matches_the_host(dtype: Any, params: dict[str, Any]) -> None:
    x = np.zeros((1, 2, 3, 2), dtype)
    (want,) = multibox_prior_np(MultiBoxPriorParam.parse(params), x)
    got = nv.nd.contrib.MultiBoxPrior(nv.nd.array(x, ctx=nv.gpu(0), dtype=dtype), **params)
    assert got.dtype == dtype
    if simulated() or dtype == np.float16:
        np.testing.assert_array_equal(got.asnumpy(), want)
    else:  # NVVM fuses products into sums (FMA): float32 anchors an ulp apart (an H200)
        np.testing.assert_array_max_ulp(got.asnumpy(), want, maxulp=1)


@pytest.mark.gpu
def test_prior_add_request_on_the_gpu_rounds_before_adding() -> None:
    """float16: the host rounds the float32 anchors to float16, then adds in float16."""
    from numba import cuda

    p = MultiBoxPriorParam.parse({"sizes": (0.3, 0.61), "ratios": (1.0, 1.7)})
    (want,) = multibox_prior_np(p, np.zeros((1, 1, 2, 3), np.float16))
    start = np.full(want.shape, 1 / 3, np.float16)
    out = cuda.to_device(start)
    _prior(_gpu_ctx(), p, (1, 1, 2, 3), [out], ADD)
    np.testing.assert_array_equal(out.copy_to_host(), start + want)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize(
    "params",
    [
        {"threshold": 0.2, "nms_threshold": 0.3},
        {"clip": False, "nms_threshold": 0.2, "force_suppress": True, "nms_topk": 3},
        {"nms_threshold": 0},  # no suppression: the detections in anchor order
    ],
)
def test_detection_op_on_the_gpu_matches_the_host(dtype: Any, params: dict[str, Any]) -> None:
    """Zero size offsets (exp exact), scores with ties; then with offsets (boxes to the
    rounding of another exp). Classes, scores and order exactly."""
    rng = np.random.default_rng(5)
    for exact in (True, False):
        inputs = _detection_inputs(rng, 2, 3, 12, dtype, ties=True, exact=exact)
        (want,) = multibox_detection_np(MultiBoxDetectionParam.parse(params), *inputs)
        arrays = [nv.nd.array(a, ctx=nv.gpu(0), dtype=dtype) for a in inputs]
        got = nv.nd.contrib.MultiBoxDetection(*arrays, **params).asnumpy()
        np.testing.assert_array_equal(got[..., :2], want[..., :2])
        tol = _gpu_box_tol(dtype) if exact else _ulps(dtype)
        np.testing.assert_allclose(got[..., 2:], want[..., 2:], rtol=0, atol=tol)


@pytest.mark.gpu
def test_detection_add_request_on_the_gpu() -> None:
    from numba import cuda

    rng = np.random.default_rng(6)
    inputs = _detection_inputs(rng, 2, 3, 10, np.float16, ties=False, exact=True)
    p = MultiBoxDetectionParam.parse({"nms_threshold": 0.4, "nms_topk": 4})
    (want,) = multibox_detection_np(p, *inputs)
    start = np.full(want.shape, 1 / 3, np.float16)
    out = cuda.to_device(start)
    _detect(_gpu_ctx(), p, [cuda.to_device(a) for a in inputs], [out], ADD)
    got = out.copy_to_host()
    np.testing.assert_array_equal(got[..., :2], start[..., :2] + want[..., :2])
    tol = _gpu_box_tol(np.float16)
    np.testing.assert_allclose(got[..., 2:], start[..., 2:] + want[..., 2:], rtol=0, atol=tol)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize(
    "params",
    [
        {},
        {"overlap_threshold": 0.1, "negative_mining_ratio": 2.0, "negative_mining_thresh": 0.5,
         "ignore_label": 7.0},
    ],
)  # fmt: skip
# zero-width labels make log(0) and 0 / 0: NaN and inf, as on the host
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_target_op_on_the_gpu_matches_the_host(dtype: Any, params: dict[str, Any]) -> None:
    rng = np.random.default_rng(8)
    inputs = _target_inputs(rng, 2, 4, 12, 3, dtype, grid=True)
    want = multibox_target_np(MultiBoxTargetParam.parse(params), *inputs)
    arrays = [nv.nd.array(a, ctx=nv.gpu(0), dtype=dtype) for a in inputs]
    got = nv.nd.contrib.MultiBoxTarget(*arrays, **params)
    _check_targets([g.asnumpy() for g in got], want)


@pytest.mark.gpu
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_target_add_request_on_the_gpu_rounds_before_adding() -> None:
    from numba import cuda

    rng = np.random.default_rng(9)
    inputs = _target_inputs(rng, 2, 3, 10, 3, np.float16, grid=False)
    p = MultiBoxTargetParam.parse({"ignore_label": 0.3})
    want = multibox_target_np(p, *inputs)
    starts = [np.full(w.shape, 1 / 3, np.float16) for w in want]
    outs = [cuda.to_device(a) for a in starts]
    _target(_gpu_ctx(), p, [cuda.to_device(a) for a in inputs], outs, ADD)
    got = [o.copy_to_host() for o in outs]
    np.testing.assert_array_equal(got[1], starts[1] + want[1])
    np.testing.assert_array_equal(got[2], starts[2] + want[2])
    loc, want_loc = got[0].reshape(-1, 4), (starts[0] + want[0]).reshape(-1, 4)
    np.testing.assert_array_equal(loc[:, :2], want_loc[:, :2])
    np.testing.assert_allclose(loc[:, 2:], want_loc[:, 2:], rtol=1e-3, atol=1e-3)
