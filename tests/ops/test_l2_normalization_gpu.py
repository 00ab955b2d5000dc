"""L2Normalization and its backward on the GPU (ops/nn/_l2_norm_cuda.py) against NumPy and
the CPU.

Two paths: the per-norm sums on the reduction kernels (ops/_reduce_cuda.py: 'sumsq' of x
forward, reduce_dot_gpu's sum of dy * y backward, read straight from dy and y) with a
thread per element to scale; or, for channel norms that fill the device (inner >= 32,
rows > DIRECT_ROWS, lowered here so the simulator reaches it), a thread per norm for the
whole op. The cases take every mode: instance rows long enough to split into slices,
spatial rows read by a warp and split, channel norms with inner 1 (warp), inner > 1 (a
thread per norm in the reduction, split when the channels are many) and the direct
path, size-1 and empty norms, a non-default eps; out, norm and dx each with write, add
and null requests, out over x's and dx over dy's memory, float16/32/64. Spies check the
sums asked for, their splits, the loops launched and that the only scratch is float64 sums
(no array of products), and that the CPU's row loops never run. Large float64 values
(sums of squares near the float64 limit) and a large eps give the CPU's norms. Runs
under NUMBA_ENABLE_CUDASIM=1 or on a GPU (tests/conftest.py); a few thousand elements a
case, every simulated thread being a Python thread.
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np
import pytest
from fcompute_call import run_fcompute
from launch_spies import spy_reductions

import nnvmpy as nv
from nnvmpy import Op
from nnvmpy.attrs import fcompute
from nnvmpy.base import OpReqType
from nnvmpy.engine.base import RunContext
from nnvmpy.kernel import scratch
from nnvmpy.ops import _reduce_cuda
from nnvmpy.ops.nn import _l2_norm_cuda as l2_cuda
from nnvmpy.ops.nn import l2_normalization as l2
from nnvmpy.resource import OpContext

pytestmark = pytest.mark.gpu

SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
W, A, N = OpReqType.kWriteTo, OpReqType.kAddTo, OpReqType.kNullOp
F16, F32, F64 = np.float16, np.float32, np.float64
TOL = {F16: 3e-3, F32: 2e-6, F64: 1e-12}  # relative to the largest value compared
LOW_DIRECT = 16  # DIRECT_ROWS for the cases that take the thread-per-norm path

# id -> (mode, x shape, eps, (out req, norm req), dx req, whether the sums split, whether
# the thread-per-norm path runs (DIRECT_ROWS lowered)). The simulator's reduction blocks
# are 64 threads: a block per norm splits past 2048 elements, a thread per norm (inner
# > 1) past 1024.
Case = tuple[str, tuple[int, ...], float, tuple[Any, Any], Any, bool, bool]
CASES: dict[str, Case] = {
    "instance-split": ("instance", (2, 3, 30, 30), 1e-10, (W, W), W, True, False),
    "instance-add": ("instance", (3, 4, 5, 6), 1e-10, (A, A), A, False, False),
    "instance-null-out": ("instance", (5, 7), 0.5, (N, W), W, False, False),
    "instance-1d": ("instance", (7,), 1e-10, (W, A), A, False, False),
    "instance-empty": ("instance", (3, 0), 1e-4, (W, W), W, False, False),
    "channel-inner-1": ("channel", (3, 40, 1), 1e-10, (A, W), A, False, False),
    "channel-positions": ("channel", (2, 6, 5, 7), 1e-10, (W, N), W, False, False),
    "channel-long-split": ("channel", (1, 1100, 2), 0.25, (W, A), A, True, False),
    "channel-inner-31": ("channel", (2, 5, 31), 1e-10, (W, W), A, False, False),
    "channel-direct": ("channel", (2, 6, 5, 7), 1e-10, (W, W), W, False, True),
    "channel-direct-add": ("channel", (3, 5, 40), 0.5, (A, A), A, False, True),
    "channel-direct-null": ("channel", (1, 9, 4, 9), 1e-10, (N, W), A, False, True),
    "channel-direct-null-norm": ("channel", (2, 4, 34), 1e-10, (A, N), W, False, True),
    "channel-direct-c1": ("channel", (1, 1, 50), 1e-10, (W, W), W, False, True),
    "channel-direct-c0": ("channel", (2, 0, 40), 1e-4, (W, A), W, False, True),
    "spatial-warp": ("spatial", (2, 3, 4, 5), 1e-10, (N, A), W, False, False),
    "spatial-5d": ("spatial", (2, 2, 3, 4, 5), 1e-10, (W, W), A, False, False),
    "spatial-size-1": ("spatial", (1, 1, 1), 1e-10, (W, W), W, False, False),
    "spatial-split": ("spatial", (1, 2, 50, 45), 1e-10, (A, W), W, True, False),
}
DEVICES = ("gpu", "cpu")
DTYPES = [pytest.param(t, id=np.dtype(t).name) for t in (F16, F32, F64)]
LOOPS = ("_l2_finish", "_l2_scale", "_l2_grad", "_l2_forward_norm", "_l2_backward_norm")


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[Any]]:
    """The sums asked for and their slice counts (launch_spies.spy_reductions: 'calls',
    'reducers', 'slices'), the l2 loops launched ((name, items)) and every scratch
    allocation ((size, dtype)); the CPU's row loops fail if launched."""
    seen = spy_reductions(monkeypatch, short_slices=not SIMULATOR)
    seen.update(loops=[], scratch=[])
    real_empty = scratch.empty

    def empty(ctx: Any, size: int, dtype: Any) -> Any:
        seen["scratch"].append((size, np.dtype(dtype)))
        return real_empty(ctx, size, dtype)

    for name in LOOPS:
        loop = getattr(l2_cuda, name)

        def launch(ctx: Any, n: int, *args: Any, _real: Any = loop.launch, _name: str = name):
            seen["loops"].append((_name, n))
            _real(ctx, n, *args)

        monkeypatch.setattr(loop, "launch", launch)

    class RowLoop:
        def launch(self, *args: Any, **kwargs: Any) -> None:
            raise AssertionError("the CPU's thread-per-row loop ran on the GPU")

    monkeypatch.setattr(scratch, "empty", empty)
    monkeypatch.setattr(l2, "_l2_forward_row", RowLoop())
    monkeypatch.setattr(l2, "_l2_backward_row", RowLoop())
    return seen


def _axes(mode: str, ndim: int) -> tuple[int, ...]:
    return {"instance": tuple(range(1, ndim)), "channel": (1,)}.get(mode, tuple(range(2, ndim)))


def _norm_shape(mode: str, shape: tuple[int, ...]) -> tuple[int, ...]:
    return {"instance": shape[:1], "channel": shape[:1] + shape[2:]}.get(mode, shape[:2])


def _rows(mode: str, shape: tuple[int, ...]) -> int:
    return math.prod(_norm_shape(mode, shape))


def _reference(mode: str, x: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """(out, norm) in float64: norm = sqrt(sum x^2 + eps) over the mode's axes."""
    x = x.astype(F64)
    norm = np.sqrt((x * x).sum(axis=_axes(mode, x.ndim), keepdims=True) + eps)
    return x / norm, norm.reshape(_norm_shape(mode, x.shape))


def _reference_dx(mode: str, dy: np.ndarray, y: np.ndarray, norm: np.ndarray) -> np.ndarray:
    """(dy - y * sum(dy * y)) / norm in float64, from y and norm as given."""
    dy, y = dy.astype(F64), y.astype(F64)
    axes = _axes(mode, y.ndim)
    n = norm.astype(F64).reshape([1 if a in axes else d for a, d in enumerate(y.shape)])
    return (dy - y * (dy * y).sum(axis=axes, keepdims=True)) / n


def _check(got: np.ndarray, want: np.ndarray, start: np.ndarray, req: Any, what: str) -> None:
    assert got.dtype == start.dtype, what
    assert got.shape == want.shape, what
    if req == N:
        np.testing.assert_array_equal(got, start, err_msg=what)
        return
    want = want + (start.astype(F64) if req == A else 0.0)
    tol = TOL[start.dtype.type] * max(float(np.abs(want).max(initial=0.0)), 1.0)
    np.testing.assert_allclose(got.astype(F64), want, rtol=0, atol=tol, err_msg=what)


def _arrays(
    shape: tuple[int, ...], mode: str, dtype: Any, eps: float = 1e-10
) -> dict[str, np.ndarray]:
    """x (some elements 0; with eps >= 0.5 the first sample all 0, its norms sqrt(eps):
    1 / sqrt(1e-10) would overflow float16's dx), dy and the outputs' start values."""
    rng = np.random.default_rng(sum(shape) + len(shape))
    x = rng.uniform(-1, 1, shape)
    x.reshape(-1)[::11] = 0.0
    if eps >= 0.5:
        x[0] = 0.0
    nshape = _norm_shape(mode, shape)
    arrays = {"x": x, "dy": rng.uniform(-1, 1, shape), "out0": rng.uniform(-1, 1, shape)}
    arrays |= {"norm0": rng.uniform(-1, 1, nshape), "dx0": rng.uniform(-1, 1, shape)}
    return {k: v.astype(dtype) for k, v in arrays.items()}


def _sums(seen: dict[str, list[Any]]) -> list[tuple[Any, str]]:
    """The sums a spy saw: (target shape, reducer), 'dot' for reduce_dot_gpu."""
    return list(zip(seen["calls"], seen["reducers"], strict=True))


def _expected_launches(case: str) -> tuple[list[Any], list[Any], list[Any], list[Any]]:
    """(forward sums, forward loops, backward sums, backward loops) the case should run."""
    mode, shape, _eps, freqs, _breq, _split, direct = CASES[case]
    rows, size = _rows(mode, shape), math.prod(shape)
    if direct:
        bwd_loops = [("_l2_backward_norm", rows)] if size else []
        return [], [("_l2_forward_norm", rows)], [], bwd_loops
    outer = shape[0] * (shape[1] if mode == "spatial" else 1)
    small = (outer, 1, math.prod(shape[2:]) if mode == "channel" else 1)
    fwd_loops = [("_l2_finish", rows)] + ([("_l2_scale", size)] if freqs[0] != N else [])
    if not size:
        return [(small, "sumsq")], fwd_loops, [], []
    return [(small, "sumsq")], fwd_loops, [(small, "dot")], [("_l2_grad", size)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", list(CASES))
def test_l2_normalization_matches_numpy(
    case: str, dtype: Any, spy: dict[str, list[Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    mode, shape, eps, freqs, breq, split, direct = CASES[case]
    if direct:
        monkeypatch.setattr(l2_cuda, "DIRECT_ROWS", LOW_DIRECT)
    a = _arrays(shape, mode, dtype, eps)
    params = {"mode": mode, "eps": eps}
    out, norm = run_fcompute(
        "L2Normalization", params, [a["x"]], [a["out0"], a["norm0"]], freqs, "gpu"
    )
    want_out, want_norm = _reference(mode, a["x"], eps)
    _check(out, want_out, a["out0"], freqs[0], f"{case}: out")
    _check(norm, want_norm, a["norm0"], freqs[1], f"{case}: norm")
    fwd = {k: list(v) for k, v in spy.items()}
    for v in spy.values():
        v.clear()

    # the backward from the exact forward (in dtype)
    y, yn = (v.astype(dtype) for v in (want_out, want_norm))
    (dx,) = run_fcompute(
        "_backward_L2Normalization", params, [a["dy"], y, yn], [a["dx0"]], [breq], "gpu"
    )
    _check(dx, _reference_dx(mode, a["dy"], y, yn), a["dx0"], breq, f"{case}: dx")

    fwd_calls, fwd_loops, bwd_calls, bwd_loops = _expected_launches(case)
    assert (_sums(fwd), fwd["loops"]) == (fwd_calls, fwd_loops), case
    assert (_sums(spy), spy["loops"]) == (bwd_calls, bwd_loops), case
    slices = fwd["slices"] + spy["slices"]
    assert (max(slices, default=1) > 1) == split, f"{case}: slices {slices}"
    # scratch: the float64 sums (rows), a split's float64 partials; never the products
    rows = _rows(mode, shape)
    for size, kind in fwd["scratch"] + spy["scratch"]:
        assert kind == F64, (case, size, kind)
        assert size % max(rows, 1) == 0, (case, size, kind)
    if direct:
        assert fwd["scratch"] == spy["scratch"] == [], case
    elif math.prod(shape):
        partials = [s for s in spy["slices"] if s > 1]
        assert spy["scratch"] == [(rows, np.dtype(F64))] + [(s * rows, F64) for s in partials]


def _call(name: str, params: dict[str, Any], ins: list[Any], outs: list[Any], reqs: list[Any]):
    """FCompute<gpu> on device arrays as given (an output may be an input's memory)."""
    op = Op.get(name)
    ctx = OpContext(True, RunContext(nv.gpu(0), None), [])
    op.get_attr(fcompute("gpu"))(op.parse_attrs(params), ctx, ins, reqs, outs)


INPLACE = {
    "instance": (2, 3, 50, 45),
    "channel": (2, 3, 5, 7),
    "spatial": (2, 3, 5, 7),
    "channel-direct": (2, 3, 5, 7),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("which", list(INPLACE))
def test_out_over_x_and_dx_over_dy(
    which: str, dtype: Any, spy: dict[str, list[Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """FInplaceOption (0, 0) of both ops: each sum is taken before its memory is written."""
    from numba import cuda

    mode, shape = which.split("-")[0], INPLACE[which]
    if which.endswith("direct"):
        monkeypatch.setattr(l2_cuda, "DIRECT_ROWS", LOW_DIRECT)
    a = _arrays(shape, mode, dtype)
    x, norm = cuda.to_device(a["x"]), cuda.to_device(a["norm0"])
    _call("L2Normalization", {"mode": mode}, [x], [x, norm], [OpReqType.kWriteInplace, W])
    want_out, want_norm = _reference(mode, a["x"], 1e-10)
    _check(x.copy_to_host(), want_out, a["x"], W, "out over x")
    _check(norm.copy_to_host(), want_norm, a["norm0"], W, "norm")

    y, yn = (v.astype(dtype) for v in (want_out, want_norm))
    dy = cuda.to_device(a["dy"])
    ins = [dy, cuda.to_device(y), cuda.to_device(yn)]
    _call("_backward_L2Normalization", {"mode": mode}, ins, [dy], [OpReqType.kWriteInplace])
    _check(dy.copy_to_host(), _reference_dx(mode, a["dy"], y, yn), a["dy"], W, "dx over dy")
    direct = which.endswith("direct")
    assert spy["reducers"] == ([] if direct else ["sumsq", "dot"])
    loops = [name for name, _ in spy["loops"]]
    assert loops == (["_l2_forward_norm", "_l2_backward_norm"] if direct else list(LOOPS[:3])), (
        which
    )


# the CPU in float16 rounds through float32 copies (float64 -> float32 -> float16)
CPU_TOL = {F16: (2e-3, 1e-3), F32: (3e-7, 1e-7), F64: (1e-12, 1e-14)}
AGREE = {
    "instance": ("instance", (2, 3, 4, 5)),
    "instance-split": ("instance", (2, 3, 30, 30)),
    "channel": ("channel", (2, 6, 5)),
    "channel-direct": ("channel", (2, 7, 40)),
    "spatial": ("spatial", (2, 3, 9)),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("which", list(AGREE))
def test_the_gpu_agrees_with_the_cpu(
    which: str, dtype: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The CPU's row loops and either GPU path give the same values to rounding."""
    mode, shape = AGREE[which]
    if which.endswith("direct"):
        monkeypatch.setattr(l2_cuda, "DIRECT_ROWS", LOW_DIRECT)
    a = _arrays(shape, mode, dtype)
    params, starts = {"mode": mode}, [a["out0"], a["norm0"]]
    fwd = [run_fcompute("L2Normalization", params, [a["x"]], starts, [A, W], d) for d in DEVICES]
    y, yn = (v.astype(dtype) for v in _reference(mode, a["x"], 1e-10))
    name = "_backward_L2Normalization"
    bwd = [run_fcompute(name, params, [a["dy"], y, yn], [a["dx0"]], [A], d) for d in DEVICES]
    rtol, atol = CPU_TOL[dtype]
    for got, want in zip([*fwd[0], *bwd[0]], [*fwd[1], *bwd[1]], strict=True):
        np.testing.assert_allclose(got.astype(F64), want, rtol=rtol, atol=atol, err_msg=which)


@pytest.mark.parametrize("dtype", DTYPES)
def test_the_direct_path_gives_the_reduction_paths_values(
    dtype: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Channel norms with inner >= 32: the thread per norm and the (unsplit) reduction's
    thread per norm sum the same float64 terms in the same order."""
    mode, shape, eps = "channel", (2, 9, 36), 0.25
    a = _arrays(shape, mode, dtype)
    params, starts = {"mode": mode, "eps": eps}, [a["out0"], a["norm0"]]
    got = {}
    for rows_min in (LOW_DIRECT, l2_cuda.DIRECT_ROWS):
        monkeypatch.setattr(l2_cuda, "DIRECT_ROWS", rows_min)
        assert l2_cuda.direct((72, 9, 36)) == (rows_min == LOW_DIRECT)
        fwd = run_fcompute("L2Normalization", params, [a["x"]], starts, [A, W], "gpu")
        bin_ = [a["dy"], fwd[0].astype(dtype), fwd[1]]
        bwd = run_fcompute("_backward_L2Normalization", params, bin_, [a["dx0"]], [A], "gpu")
        got[rows_min] = [*fwd, *bwd]
    for d, r in zip(got[LOW_DIRECT], got[l2_cuda.DIRECT_ROWS], strict=True):
        if SIMULATOR:
            np.testing.assert_array_equal(d, r)
        elif d.dtype == np.float64:  # NVVM may fuse a product into its sum on one path
            # only: an ulp of a float64 sum, grown by the backward's cancellation (12 ulp
            # on an H200)
            np.testing.assert_allclose(d, r, rtol=1e-13, atol=1e-14)
        else:  # float32/16 outputs round that ulp away, or nearly
            np.testing.assert_array_max_ulp(d, r, maxulp=1)


def test_direct_takes_coalesced_channel_norms_past_the_reductions_split_range() -> None:
    """Past DIRECT_ROWS norms reduce_gpu gives a thread per norm, unsplit, however long."""
    rows = l2_cuda.DIRECT_ROWS + 1
    for n in (2, 1000, 5000, 10**6):
        assert _reduce_cuda._slices(n, rows, 1, 1) == 1, n
        assert l2_cuda.direct((rows, n, 32))
    assert not l2_cuda.direct((l2_cuda.DIRECT_ROWS, 64, 3136))  # few norms
    assert not l2_cuda.direct((10**6, 64, 31))  # a warp reads two positions' columns
    assert not l2_cuda.direct((10**6, 64, 1))  # instance, spatial: the warp/block kernels


# (mode, shape, where the thread-per-norm path runs)
BIG = [("instance", (2, 150), False), ("spatial", (2, 2, 150), False)]
BIG += [("channel", (2, 150, 3), False), ("channel", (2, 150, 40), True)]


@pytest.mark.parametrize(("mode", "shape", "direct"), BIG)
def test_large_float64_values_keep_the_cpus_norms(
    mode: str, shape: tuple[int, ...], direct: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sums of squares near the float64 limit (norms near 1.3e154): the same finite norm,
    out and dx as the CPU."""
    if direct:
        monkeypatch.setattr(l2_cuda, "DIRECT_ROWS", LOW_DIRECT)
    rng = np.random.default_rng(7)
    x = rng.uniform(0.5, 1.0, shape) * 1.2e153 * rng.choice([-1.0, 1.0], shape)
    want_out, want_norm = _reference(mode, x, 1e-10)
    assert np.isfinite(want_norm).all()
    assert want_norm.max() ** 2 > 1e308
    params, starts = {"mode": mode}, [np.zeros_like(x), np.zeros(want_norm.shape)]
    gpu, cpu = (run_fcompute("L2Normalization", params, [x], starts, [W, W], d) for d in DEVICES)
    dy = rng.uniform(-1, 1, shape)
    name, bin_ = "_backward_L2Normalization", [dy, cpu[0], cpu[1]]
    gdx, cdx = (run_fcompute(name, params, bin_, [np.zeros_like(x)], [W], d) for d in DEVICES)
    for got, want in zip([*gpu, *gdx], [*cpu, *cdx], strict=True):
        assert np.isfinite(got).all()
        # dx = (dy - y * sum(dy * y)) / norm cancels: an absolute tolerance by its scale
        np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-14 * np.abs(want).max())
    np.testing.assert_allclose(gpu[1], want_norm, rtol=1e-14)
    np.testing.assert_allclose(gpu[0], want_out, rtol=1e-14, atol=1e-300)


@pytest.mark.parametrize(("mode", "shape"), [("instance", (64, 6)), ("channel", (2, 6, 32))])
def test_the_norm_is_sqrt_of_the_sum_plus_eps_rounded_once(
    mode: str, shape: tuple[int, ...]
) -> None:
    """Squares and sums exact in float64 (multiples of 1/8): the GPU's norm is exactly the
    CPU's sqrt(s + eps). 'nrm2' rooted s and squared it back, which moves some of these by
    an ulp where eps is not small (checked below, so the case keeps its power)."""
    rng = np.random.default_rng(3)
    x = rng.integers(-40, 40, shape) / 8.0
    eps = 0.5
    s = (x * x).sum(axis=_axes(mode, x.ndim)).reshape(-1)
    old = np.sqrt(np.sqrt(s) ** 2 + eps)
    assert (old != np.sqrt(s + eps)).any()
    params, starts = {"mode": mode, "eps": eps}, [np.zeros_like(x), np.zeros(len(s))]
    starts[1] = starts[1].reshape(_norm_shape(mode, shape))
    gpu, cpu = (run_fcompute("L2Normalization", params, [x], starts, [W, W], d) for d in DEVICES)
    np.testing.assert_array_equal(gpu[1].reshape(-1), np.sqrt(s + eps))
    np.testing.assert_array_equal(gpu[1], cpu[1])
    np.testing.assert_array_equal(gpu[0], cpu[0])
