"""BatchNorm's GPU kernels with each channel split among S blocks, against NumPy formulas.

The GPU computes partial sums over C * S blocks, combines them with a thread per channel,
then applies per-channel coefficients with a thread per element. The cases cover S > 1 and
S == 1, outer == 1, inner == 1, C == 1, axis != 1, arrays longer than four passes of the
apply kernel's grid, training and inference, fix_gamma,
kAddTo for every output and gradient, float16 data with float32 parameters and BatchNorm_v1's
variance output. FCompute<gpu> is called directly (as the executor would), so that each
output's req can be chosen. Under the simulator a block has 32 threads and the GPU is
taken to have kernel/cuda.py's SIM_SM_COUNT SMs (raised by some cases to split more).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest
from numeric_reference import numeric_grad

import nnvmpy as nv
from nnvmpy import Op
from nnvmpy.attrs import fcompute
from nnvmpy.base import OpReqType
from nnvmpy.engine.base import RunContext
from nnvmpy.kernel import cuda as kcuda
from nnvmpy.ops.nn import _batch_norm_cuda as batch_norm_cuda
from nnvmpy.resource import OpContext

# the simulator tests run block kernels with barriers: a finer switch interval (conftest)
pytestmark = pytest.mark.sim_barriers

SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
W, A = OpReqType.kWriteTo, OpReqType.kAddTo
EPS, MOMENTUM = 1e-3, 0.9

# (id, data shape, axis, simulated SM count, S under the simulator (32 threads a block))
CASES = [
    ("split-rows", (2, 3, 4, 5), 1, 2, 2),  # inner 20: a row per pass, 2 blocks a channel
    ("split-inner1", (70, 3), 1, 2, 3),  # inner 1: 32 rows a pass, 70 rows in 3 blocks
    ("split-c1", (9, 1, 7), 1, 2, 3),  # one channel, 4 rows of 7 a pass
    ("split-to-outer", (5, 2, 33), 1, 16, 5),  # S capped by the 5 rows; rows longer than a block
    ("outer1", (1, 3, 40), 1, 2, 1),
    ("axis0", (4, 5, 3), 0, 2, 1),  # outer 1
    ("axis-last-inner1", (3, 4, 5), -1, 2, 1),  # 12 rows fit one pass of 32
    ("one-element-channels", (1, 6, 1), 1, 2, 1),  # outer 1 and inner 1: var 0
    # more elements than four passes of the simulator's 128-thread grid: the apply
    # kernel's four-element passes, its channels carried along the stride (within a row;
    # across rows and around the channels, 128 = 25 rows of 5 + 3)
    ("apply-passes", (4, 5, 11, 13), 1, 2, 2),
    ("apply-passes-wrap", (30, 7, 5), 1, 2, 2),
]  # fmt: skip


def _cuda() -> Any:
    from numba import cuda

    return cuda


def _opctx(is_train: bool) -> OpContext:
    return OpContext(is_train, RunContext(nv.gpu(0), None), [])


def _run_gpu(
    name: str, params: dict, is_train: bool, inputs: list, outputs: list, reqs: list
) -> tuple[list, list]:
    """FCompute<gpu> of op `name`; (outputs, inputs) back on the host (moving stats change)."""
    op = Op.get(name)
    dev_in = [_cuda().to_device(a) for a in inputs]
    dev_out = [_cuda().to_device(o) for o in outputs]
    op.get_attr(fcompute("gpu"))(op.parse_attrs(params), _opctx(is_train), dev_in, reqs, dev_out)
    return [o.copy_to_host() for o in dev_out], [a.copy_to_host() for a in dev_in]


@pytest.fixture
def sums_launches(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int, int, int]]:
    """(blocks, threads, S, tin) of every statistics launch."""
    seen: list[tuple[int, int, int, int]] = []
    original = batch_norm_cuda.launch_kernel

    def spy(dispatcher: Any, blocks: int, threads: int, stream: Any, args: Any) -> None:
        # (work, counters, x[, dy, y, dres, mean], S, outer, C, inner, tin, ...)
        k = 3 if dispatcher is batch_norm_cuda._bn_sums_forward_cuda.dispatcher else 7
        seen.append((blocks, threads, args[k], args[k + 4]))
        original(dispatcher, blocks, threads, stream, args)

    monkeypatch.setattr(batch_norm_cuda, "launch_kernel", spy)
    return seen


def _layout(shape: tuple[int, ...], axis: int) -> tuple[tuple[int, ...], list[int], int]:
    """(the other axes, the broadcast shape of a channel vector, elements per channel)."""
    axis %= len(shape)
    bshape = [1] * len(shape)
    bshape[axis] = -1
    axes = tuple(i for i in range(len(shape)) if i != axis)
    return axes, bshape, int(np.prod(shape)) // shape[axis]


def forward_ref(v: dict, axis: int, fix_gamma: bool, train: bool) -> dict:
    """BatchNorm in float64 NumPy: y, the statistics used, and the new moving statistics."""
    x = v["data"].astype(np.float64)
    axes, bshape, _ = _layout(x.shape, axis)
    mm, mv = (v[k].astype(np.float64) for k in ("moving_mean", "moving_var"))
    if train:
        mean, var = x.mean(axis=axes), x.var(axis=axes)  # biased variance, as MXNet
        new_mm, new_mv = MOMENTUM * mm + (1 - MOMENTUM) * mean, MOMENTUM * mv + (1 - MOMENTUM) * var
    else:
        mean, var, new_mm, new_mv = mm, mv, mm, mv
    gamma = np.ones_like(mean) if fix_gamma else v["gamma"].astype(np.float64)
    xhat = (x - mean.reshape(bshape)) / np.sqrt(var.reshape(bshape) + EPS)
    y = xhat * gamma.reshape(bshape) + v["beta"].astype(np.float64).reshape(bshape)
    invstd = 1 / np.sqrt(var + EPS)
    return {"y": y, "mean": mean, "var": var, "invstd": invstd, "mm": new_mm, "mv": new_mv}


def backward_ref(dy: np.ndarray, v: dict, mean: Any, invstd: Any, axis: int, fix_gamma: bool,
                 batch: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """(dx, dgamma, dbeta): xhat = (x - mean) * invstd, M elements per channel,
    dx = g * invstd * (dy - sum(dy) / M - xhat * sum(dy * xhat) / M) (batch), g * invstd * dy."""
    x, dy = v["data"].astype(np.float64), dy.astype(np.float64)
    axes, bshape, m = _layout(x.shape, axis)
    mean, invstd = np.asarray(mean, np.float64), np.asarray(invstd, np.float64)
    xhat = (x - mean.reshape(bshape)) * invstd.reshape(bshape)
    dbeta, dyxhat = dy.sum(axis=axes), (dy * xhat).sum(axis=axes)
    g = np.ones_like(mean) if fix_gamma else v["gamma"].astype(np.float64)
    k = (g * invstd).reshape(bshape)
    if batch:
        dx = k * (dy - dbeta.reshape(bshape) / m - xhat * dyxhat.reshape(bshape) / m)
    else:
        dx = k * dy
    return dx, (np.zeros_like(dyxhat) if fix_gamma else dyxhat), dbeta


def case_values(shape: tuple[int, ...], axis: int, dtype: Any, seed: int = 0) -> dict:
    """Inputs with a large channel offset (the shifted sums must cope) and float32 params."""
    rng = np.random.default_rng(seed)
    c = shape[axis]
    pdt = np.float64 if dtype == np.float64 else np.float32
    return {
        "data": rng.normal(5.0, 2.0, size=shape).astype(dtype),
        "gamma": rng.uniform(0.5, 1.5, size=c).astype(pdt),
        "beta": rng.normal(size=c).astype(pdt),
        "moving_mean": rng.normal(size=c).astype(pdt),
        "moving_var": rng.uniform(0.5, 2.0, size=c).astype(pdt),
    }


def _inputs(v: dict) -> list[np.ndarray]:
    return [v[k].copy() for k in ("data", "gamma", "beta", "moving_mean", "moving_var")]


def _inner(shape: tuple[int, ...], axis: int) -> int:
    return int(np.prod(shape[axis % len(shape) + 1 :]))


def _tol(dtype: Any) -> dict:
    return {
        np.float64: {"rtol": 1e-10, "atol": 1e-10},
        np.float32: {"rtol": 2e-5, "atol": 2e-5},
        np.float16: {"rtol": 2e-3, "atol": 4e-3},
    }[np.dtype(dtype).type]


# -- launch geometry (no GPU needed) ---------------------------------------------------------


def test_stat_grid_fills_the_sms_and_never_exceeds_the_rows() -> None:
    # ResNet-18's first BatchNorm on an H200: (64, 64, 112, 112), 132 SMs, 256 threads
    tin, s = batch_norm_cuda.stat_grid(64, 64, 112 * 112, 256, 132)
    assert (tin, s) == (256, 9)
    assert 64 * s >= batch_norm_cuda.STAT_BLOCKS_PER_SM * 132
    assert batch_norm_cuda.stat_grid(4, 64, 56 * 56, 256, 132) == (256, 4)  # capped by outer
    assert batch_norm_cuda.stat_grid(256, 64, 1, 256, 132) == (1, 1)  # one pass takes 256 rows
    assert batch_norm_cuda.stat_grid(4096, 64, 1, 256, 132) == (1, 9)
    assert batch_norm_cuda.stat_grid(64, 2048, 49, 256, 132) == (49, 1)  # enough channels
    assert batch_norm_cuda.stat_grid(1, 1, 1, 32, 132) == (1, 1)


# -- forward -----------------------------------------------------------------------------


@pytest.mark.gpu
@pytest.mark.parametrize("fix_gamma", [False, True])
@pytest.mark.parametrize(
    ("cid", "shape", "axis", "sms", "want_s"), CASES, ids=[c[0] for c in CASES]
)
def test_training_forward_splits_channels_and_updates_moving_stats(
    monkeypatch: pytest.MonkeyPatch, sums_launches: list, cid: str, shape: tuple, axis: int,
    sms: int, want_s: int, fix_gamma: bool,
) -> None:  # fmt: skip
    monkeypatch.setattr(kcuda, "SIM_SM_COUNT", sms)
    v = case_values(shape, axis, np.float32)
    c = shape[axis]
    ref = forward_ref(v, axis, fix_gamma, train=True)
    rng = np.random.default_rng(1)
    start = [rng.normal(size=shape).astype(np.float32), rng.normal(size=c).astype(np.float32),
             rng.normal(size=c).astype(np.float32)]  # fmt: skip
    reqs = [A, W, A] if fix_gamma else [W, A, W]
    params = {"axis": axis, "eps": EPS, "momentum": MOMENTUM, "fix_gamma": fix_gamma}
    outs, ins = _run_gpu("BatchNorm", params, True, _inputs(v), start, reqs)
    for got, want, s, req in zip(outs, ("y", "mean", "invstd"), start, reqs, strict=True):
        expected = ref[want] + (s if req == A else 0)
        np.testing.assert_allclose(got, expected, **_tol(np.float32), err_msg=want)
    np.testing.assert_allclose(ins[3], ref["mm"], rtol=1e-6, atol=1e-6, err_msg="moving_mean")
    np.testing.assert_allclose(ins[4], ref["mv"], rtol=1e-6, atol=1e-6, err_msg="moving_var")
    np.testing.assert_array_equal(ins[0], v["data"])
    ((blocks, threads, s, tin),) = sums_launches
    assert (blocks, tin) == (c * s, min(threads, _inner(shape, axis)))
    if SIMULATOR:
        assert s == want_s


@pytest.mark.gpu
@pytest.mark.parametrize(("global_stats", "fix_gamma"), [(True, False), (False, True)])
def test_inference_is_a_scale_shift_of_the_moving_stats(
    sums_launches: list, global_stats: bool, fix_gamma: bool
) -> None:
    """use_global_stats (even while training) or is_train False: no statistics kernel, the
    moving statistics stay, and mean/var output the moving mean and 1 / sqrt(var + eps)."""
    shape, axis = (2, 3, 4, 5), 1
    v = case_values(shape, axis, np.float32, seed=2)
    ref = forward_ref(v, axis, fix_gamma, train=False)
    start = [np.ones(shape, np.float32), np.ones(3, np.float32), np.ones(3, np.float32)]
    params = {"axis": axis, "eps": EPS, "fix_gamma": fix_gamma, "use_global_stats": global_stats}
    outs, ins = _run_gpu("BatchNorm", params, global_stats, _inputs(v), start, [A, W, A])
    np.testing.assert_allclose(outs[0], ref["y"] + 1, **_tol(np.float32))
    np.testing.assert_allclose(outs[1], v["moving_mean"], rtol=1e-7)
    np.testing.assert_allclose(outs[2], ref["invstd"] + 1, rtol=1e-6)
    np.testing.assert_array_equal(ins[3], v["moving_mean"])
    np.testing.assert_array_equal(ins[4], v["moving_var"])
    assert sums_launches == []


@pytest.mark.gpu
def test_training_forward_in_place(monkeypatch: pytest.MonkeyPatch) -> None:
    """FInplaceOption lets the output take the data's memory: every channel's statistics
    (and its shift value) are read before the element-wise kernel overwrites the data."""
    monkeypatch.setattr(kcuda, "SIM_SM_COUNT", 4)
    shape = (4, 3, 5)
    v = case_values(shape, 1, np.float32, seed=13)
    ref = forward_ref(v, 1, False, train=True)
    op = Op.get("BatchNorm")
    attrs = op.parse_attrs({"eps": EPS, "momentum": MOMENTUM, "fix_gamma": False})
    ins = [_cuda().to_device(a) for a in _inputs(v)]
    outs = [ins[0], _cuda().to_device(np.zeros(3, np.float32)),
            _cuda().to_device(np.zeros(3, np.float32))]  # fmt: skip
    op.get_attr(fcompute("gpu"))(attrs, _opctx(True), ins, [W, W, W], outs)
    np.testing.assert_allclose(outs[0].copy_to_host(), ref["y"], **_tol(np.float32))
    np.testing.assert_allclose(outs[1].copy_to_host(), ref["mean"], rtol=1e-6, atol=1e-6)


@pytest.mark.gpu
def test_batch_norm_v1_outputs_the_variance(monkeypatch: pytest.MonkeyPatch) -> None:
    """BatchNorm_v1 (and SyncBatchNorm) output var itself; its backward reads it so."""
    monkeypatch.setattr(kcuda, "SIM_SM_COUNT", 4)
    shape = (6, 2, 3)
    v = case_values(shape, 1, np.float32, seed=3)
    ref = forward_ref(v, 1, False, train=True)
    params = {"eps": EPS, "momentum": MOMENTUM, "fix_gamma": False}
    start = [np.zeros(shape, np.float32), np.zeros(2, np.float32), np.zeros(2, np.float32)]
    outs, _ = _run_gpu("BatchNorm_v1", params, True, _inputs(v), start, [W, W, W])
    np.testing.assert_allclose(outs[0], ref["y"], **_tol(np.float32))
    np.testing.assert_allclose(outs[2], ref["var"], rtol=1e-5, atol=1e-6)
    dy = np.random.default_rng(4).normal(size=shape).astype(np.float32)
    grads = [np.zeros(shape, np.float32), np.zeros(2, np.float32), np.zeros(2, np.float32)]
    bw_in = [dy, v["data"], v["gamma"], outs[1], outs[2]]
    got, _ = _run_gpu("_backward_BatchNorm_v1", params, True, bw_in, grads, [W, W, W])
    want = backward_ref(dy, v, outs[1], 1 / np.sqrt(outs[2].astype(np.float64) + EPS), 1,
                        False, True)  # fmt: skip
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


# -- backward ----------------------------------------------------------------------------


@pytest.mark.gpu
@pytest.mark.parametrize(("batch", "fix_gamma"), [(True, False), (True, True), (False, False)])
@pytest.mark.parametrize(
    ("cid", "shape", "axis", "sms", "want_s"), CASES, ids=[c[0] for c in CASES]
)
def test_backward_splits_channels_and_adds_to_gradients(
    monkeypatch: pytest.MonkeyPatch, sums_launches: list, cid: str, shape: tuple, axis: int,
    sms: int, want_s: int, batch: bool, fix_gamma: bool,
) -> None:  # fmt: skip
    monkeypatch.setattr(kcuda, "SIM_SM_COUNT", sms)
    v = case_values(shape, axis, np.float32, seed=5)
    c = shape[axis]
    ref = forward_ref(v, axis, fix_gamma, train=batch)
    mean, invstd = ref["mean"].astype(np.float32), ref["invstd"].astype(np.float32)
    rng = np.random.default_rng(6)
    dy = rng.normal(size=shape).astype(np.float32)
    start = [rng.normal(size=shape).astype(np.float32), rng.normal(size=c).astype(np.float32),
             rng.normal(size=c).astype(np.float32)]  # fmt: skip
    reqs = [A, A, A] if batch else [A, W, A]
    params = {"axis": axis, "eps": EPS, "fix_gamma": fix_gamma, "use_global_stats": not batch}
    bw_in = [dy, v["data"], v["gamma"], mean, invstd]
    got, _ = _run_gpu("_backward_BatchNorm", params, True, bw_in, start, reqs)
    want = backward_ref(dy, v, mean, invstd, axis, fix_gamma, batch)
    for name, g, w, s, req in zip(("dx", "dgamma", "dbeta"), got, want, start, reqs, strict=True):
        np.testing.assert_allclose(g, w + (s if req == A else 0), rtol=1e-4, atol=1e-4,
                                   err_msg=name)  # fmt: skip
    ((blocks, _, s, _),) = sums_launches
    assert blocks == c * s
    if SIMULATOR:
        assert s == want_s


@pytest.mark.gpu
def test_global_stats_dx_alone_needs_no_sums(sums_launches: list) -> None:
    shape = (2, 3, 4)
    v = case_values(shape, 1, np.float32, seed=7)
    mean, var = v["moving_mean"], v["moving_var"]
    invstd = (1 / np.sqrt(var.astype(np.float64) + EPS)).astype(np.float32)
    dy = np.random.default_rng(8).normal(size=shape).astype(np.float32)
    params = {"eps": EPS, "fix_gamma": False, "use_global_stats": True}
    zeros = [np.zeros(shape, np.float32), np.zeros(3, np.float32), np.zeros(3, np.float32)]
    got, _ = _run_gpu("_backward_BatchNorm", params, True, [dy, v["data"], v["gamma"], mean,
                      invstd], zeros, [W, OpReqType.kNullOp, OpReqType.kNullOp])  # fmt: skip
    want = backward_ref(dy, v, mean, invstd, 1, False, False)[0]
    np.testing.assert_allclose(got[0], want, rtol=1e-5, atol=1e-6)
    assert sums_launches == []


@pytest.fixture
def finish_launches(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the per-channel finish kernels launched on their own."""
    seen: list[str] = []
    for name in ("_bn_forward_finish_cuda", "_bn_backward_finish_cuda"):
        kern = getattr(batch_norm_cuda, name)

        def spy(*args: Any, _name: str = name, _real: Any = kern.launch) -> None:
            seen.append(_name)
            _real(*args)

        monkeypatch.setattr(kern, "launch", spy)
    return seen


@pytest.mark.gpu
def test_training_finishes_in_the_last_block_and_leaves_counters_zero(
    monkeypatch: pytest.MonkeyPatch, sums_launches: list, finish_launches: list
) -> None:
    """Training forward and backward: two launches each (sums, whose last block per channel
    finishes it; apply), the per-stream block counters back at zero after each; inference
    alone launches the finish kernel."""
    monkeypatch.setattr(kcuda, "SIM_SM_COUNT", 4)
    shape = (8, 3, 5)
    v = case_values(shape, 1, np.float32, seed=11)
    params = {"eps": EPS, "momentum": MOMENTUM, "fix_gamma": False}
    zeros = [np.zeros(shape, np.float32), np.zeros(3, np.float32), np.zeros(3, np.float32)]
    outs, _ = _run_gpu("BatchNorm", params, True, _inputs(v), zeros, [W, W, W])
    ref = forward_ref(v, 1, False, train=True)
    np.testing.assert_allclose(outs[1], ref["mean"], rtol=1e-5, atol=1e-6)
    dy = np.random.default_rng(12).normal(size=shape).astype(np.float32)
    bw_in = [dy, v["data"], v["gamma"], outs[1], outs[2]]
    got, _ = _run_gpu("_backward_BatchNorm", params, True, bw_in, zeros, [W, W, W])
    want = backward_ref(dy, v, outs[1], outs[2], 1, False, True)
    for name, g, w in zip(("dx", "dgamma", "dbeta"), got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4, err_msg=name)
    assert [s for _, _, s, _ in sums_launches] == [sums_launches[0][2]] * 2
    assert sums_launches[0][2] > 1  # several blocks a channel: the count decides the last
    assert finish_launches == []
    assert batch_norm_cuda._counters
    for _, counters in batch_norm_cuda._counters.values():
        assert not counters.copy_to_host().any()
    _run_gpu("BatchNorm", params, False, _inputs(v), zeros, [W, W, W])
    assert finish_launches == ["_bn_forward_finish_cuda"]


@pytest.mark.gpu
def test_each_stream_has_its_own_counters() -> None:
    cuda = _cuda()
    ctx = _opctx(True)
    first, second = cuda.stream(), cuda.stream()
    a = batch_norm_cuda.channel_counters(ctx, first, 3)
    assert batch_norm_cuda.channel_counters(ctx, first, 64) is a  # 1024 made at least
    b = batch_norm_cuda.channel_counters(ctx, second, 3)
    assert b is not a
    wide = batch_norm_cuda.channel_counters(ctx, first, 5000)
    assert wide.size >= 5000
    assert not wide.copy_to_host().any()
    assert batch_norm_cuda.channel_counters(ctx, first, 3) is wide


@pytest.mark.gpu
@pytest.mark.parametrize(("shape", "axis"), [((3, 2, 5), 1), ((40, 2), 1), ((2, 3, 2), -1)])
def test_training_gradient_matches_finite_differences(
    monkeypatch: pytest.MonkeyPatch, shape: tuple, axis: int
) -> None:
    """float64: the GPU's forward statistics and gradients against finite differences of
    the NumPy forward."""
    monkeypatch.setattr(kcuda, "SIM_SM_COUNT", 8)
    v = case_values(shape, axis, np.float64, seed=9)
    c = shape[axis]
    params = {"axis": axis, "eps": EPS, "momentum": MOMENTUM, "fix_gamma": False}
    start = [np.zeros(shape), np.zeros(c), np.zeros(c)]
    (y, mean, invstd), _ = _run_gpu("BatchNorm", params, True, _inputs(v), start, [W, W, W])
    dy = np.random.default_rng(10).normal(size=shape)
    zeros = [np.zeros(shape), np.zeros(c), np.zeros(c)]
    bw_in = [dy, v["data"], v["gamma"], mean, invstd]
    got, _ = _run_gpu("_backward_BatchNorm", params, True, bw_in, zeros, [W, W, W])
    np.testing.assert_allclose(y, forward_ref(v, axis, False, True)["y"], rtol=1e-10, atol=1e-10)

    def loss() -> float:
        return float((forward_ref(v, axis, False, True)["y"] * dy).sum())

    for name, g in zip(("data", "gamma", "beta"), got, strict=True):
        np.testing.assert_allclose(g, numeric_grad(loss, v[name]), rtol=1e-5, atol=1e-6,
                                   err_msg=name)  # fmt: skip


# -- float16 -----------------------------------------------------------------------------


@pytest.mark.gpu
@pytest.mark.parametrize("train", [True, False])
def test_float16_data_with_float32_params(monkeypatch: pytest.MonkeyPatch, train: bool) -> None:
    monkeypatch.setattr(kcuda, "SIM_SM_COUNT", 4)
    shape, axis = (4, 3, 2, 3), 1
    v = case_values(shape, axis, np.float16, seed=11)
    ref = forward_ref(v, axis, False, train)
    start = [np.full(shape, 0.5, np.float16), np.zeros(3, np.float32), np.zeros(3, np.float32)]
    params = {"axis": axis, "eps": EPS, "momentum": MOMENTUM, "fix_gamma": False}
    outs, ins = _run_gpu("BatchNorm", params, train, _inputs(v), start, [A, W, W])
    assert outs[0].dtype == np.float16
    np.testing.assert_allclose(outs[0], ref["y"] + 0.5, **_tol(np.float16))
    np.testing.assert_allclose(outs[1], ref["mean"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(outs[2], ref["invstd"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ins[3], ref["mm"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ins[4], ref["mv"], rtol=1e-5, atol=1e-5)
    dy = np.random.default_rng(12).normal(size=shape).astype(np.float16)
    grads = [np.full(shape, 0.25, np.float16), np.ones(3, np.float32), np.zeros(3, np.float32)]
    bw_in = [dy, v["data"], v["gamma"], outs[1], outs[2]]
    got, _ = _run_gpu("_backward_BatchNorm", params, train, bw_in, grads, [A, A, W])
    want = backward_ref(dy, v, outs[1], outs[2], axis, False, train)
    assert got[0].dtype == np.float16
    np.testing.assert_allclose(got[0], want[0] + 0.25, **_tol(np.float16))
    np.testing.assert_allclose(got[1], want[1] + 1, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got[2], want[2], rtol=1e-4, atol=1e-4)
