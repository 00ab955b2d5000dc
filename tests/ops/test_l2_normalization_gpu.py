"""L2Normalization and its backward on the GPU (ops/nn/_l2_norm_cuda.py) against NumPy.

The per-norm sums go to the reduction kernels (ops/_reduce_cuda.py) on x seen as
(outer, n, inner), the scaling and dx a thread per element. The cases take every mode:
instance rows long enough to split into slices (block kernel), spatial rows read by a
warp and split, channel norms with inner 1 (warp) and inner > 1 (a thread per norm,
split when the channels are many), size-1 and empty norms, a non-default eps; out, norm
and dx each with write, add and null requests, out over x's and dx over dy's memory,
float16, float32 and float64. A spy checks the sums' target shapes and splits, and that
the CPU's thread-per-row loops are not launched. Runs under NUMBA_ENABLE_CUDASIM=1 or on
a GPU (tests/conftest.py); a few thousand elements a case, every simulated thread being a
Python thread.
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np
import pytest
from fcompute_call import run_fcompute

import nnvmpy as nv
from nnvmpy import Op
from nnvmpy.attrs import fcompute
from nnvmpy.base import OpReqType
from nnvmpy.engine.base import RunContext
from nnvmpy.ops import _reduce_cuda
from nnvmpy.ops.nn import _l2_norm_cuda as l2_cuda
from nnvmpy.ops.nn import l2_normalization as l2
from nnvmpy.resource import OpContext

pytestmark = pytest.mark.gpu

SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
W, A, N = OpReqType.kWriteTo, OpReqType.kAddTo, OpReqType.kNullOp
F16, F32, F64 = np.float16, np.float32, np.float64
TOL = {F16: 3e-3, F32: 2e-6, F64: 1e-12}  # relative to the largest value compared

# id -> (mode, x shape, eps, (out req, norm req), dx req, whether the sums split). The
# simulator's reduction blocks are 64 threads: a block per norm splits past 2048
# elements, a thread per norm (inner > 1) past 1024.
CASES: dict[str, tuple[str, tuple[int, ...], float, tuple[Any, Any], Any, bool]] = {
    "instance-split": ("instance", (2, 3, 30, 30), 1e-10, (W, W), W, True),
    "instance-add": ("instance", (3, 4, 5, 6), 1e-10, (A, A), A, False),
    "instance-null-out": ("instance", (5, 7), 0.5, (N, W), W, False),
    "instance-1d": ("instance", (7,), 1e-10, (W, A), A, False),
    "instance-empty": ("instance", (3, 0), 1e-4, (W, W), W, False),
    "channel-inner-1": ("channel", (3, 40, 1), 1e-10, (A, W), A, False),
    "channel-positions": ("channel", (2, 6, 5, 7), 1e-10, (W, N), W, False),
    "channel-long-split": ("channel", (1, 1100, 2), 0.25, (W, A), A, True),
    "spatial-warp": ("spatial", (2, 3, 4, 5), 1e-10, (N, A), W, False),
    "spatial-5d": ("spatial", (2, 2, 3, 4, 5), 1e-10, (W, W), A, False),
    "spatial-size-1": ("spatial", (1, 1, 1), 1e-10, (W, W), W, False),
    "spatial-split": ("spatial", (1, 2, 50, 45), 1e-10, (A, W), W, True),
}
DEVICES = ("gpu", "cpu")
DTYPES = [pytest.param(t, id=np.dtype(t).name) for t in (F16, F32, F64)]


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[Any]]:
    """The sums' (target shape, reducer) and each block or thread kernel's slice count;
    the CPU's row loops fail if launched."""
    seen: dict[str, list[Any]] = {"calls": [], "slices": []}
    real_reduce, real_slices = l2_cuda.reduce_gpu, _reduce_cuda._slices

    def reduce_gpu(ctx: Any, out: Any, add: bool, x: Any, small: Any, red: str, *rest: Any):
        seen["calls"].append((tuple(small), red))
        real_reduce(ctx, out, add, x, small, red, *rest)

    def slices(*args: Any) -> int:
        seen["slices"].append(real_slices(*args))
        return seen["slices"][-1]

    class RowLoop:
        def launch(self, *args: Any, **kwargs: Any) -> None:
            raise AssertionError("the CPU's thread-per-row loop ran on the GPU")

    monkeypatch.setattr(l2_cuda, "reduce_gpu", reduce_gpu)
    monkeypatch.setattr(_reduce_cuda, "_slices", slices)
    monkeypatch.setattr(l2, "_l2_forward_row", RowLoop())
    monkeypatch.setattr(l2, "_l2_backward_row", RowLoop())
    if not SIMULATOR:  # 256-thread blocks: the same shapes split with shorter slices
        monkeypatch.setattr(_reduce_cuda, "BLOCK_SLICE_MIN", 4)
    return seen


def _axes(mode: str, ndim: int) -> tuple[int, ...]:
    return {"instance": tuple(range(1, ndim)), "channel": (1,)}.get(mode, tuple(range(2, ndim)))


def _norm_shape(mode: str, shape: tuple[int, ...]) -> tuple[int, ...]:
    return {"instance": shape[:1], "channel": shape[:1] + shape[2:]}.get(mode, shape[:2])


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


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", list(CASES))
def test_l2_normalization_matches_numpy(case: str, dtype: Any, spy: dict[str, list[Any]]) -> None:
    mode, shape, eps, freqs, breq, split = CASES[case]
    a = _arrays(shape, mode, dtype, eps)
    params = {"mode": mode, "eps": eps}
    out, norm = run_fcompute(
        "L2Normalization", params, [a["x"]], [a["out0"], a["norm0"]], freqs, "gpu"
    )
    want_out, want_norm = _reference(mode, a["x"], eps)
    _check(out, want_out, a["out0"], freqs[0], f"{case}: out")
    _check(norm, want_norm, a["norm0"], freqs[1], f"{case}: norm")

    # the backward from the exact forward (in dtype)
    y, yn = (v.astype(dtype) for v in (want_out, want_norm))
    (dx,) = run_fcompute(
        "_backward_L2Normalization", params, [a["dy"], y, yn], [a["dx0"]], [breq], "gpu"
    )
    _check(dx, _reference_dx(mode, a["dy"], y, yn), a["dx0"], breq, f"{case}: dx")

    outer = shape[0] * (shape[1] if mode == "spatial" else 1)
    inner = math.prod(shape[2:]) if mode == "channel" else 1
    small = (outer, 1, inner)
    want_calls = [(small, "nrm2"), (small, "sum")] if math.prod(shape) else [(small, "nrm2")]
    assert spy["calls"] == want_calls, case
    assert (max(spy["slices"], default=1) > 1) == split, f"{case}: slices {spy['slices']}"


def _call(name: str, params: dict[str, Any], ins: list[Any], outs: list[Any], reqs: list[Any]):
    """FCompute<gpu> on device arrays as given (an output may be an input's memory)."""
    op = Op.get(name)
    ctx = OpContext(True, RunContext(nv.gpu(0), None), [])
    op.get_attr(fcompute("gpu"))(op.parse_attrs(params), ctx, ins, reqs, outs)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", ["instance", "channel", "spatial"])
def test_out_over_x_and_dx_over_dy(mode: str, dtype: Any, spy: dict[str, list[Any]]) -> None:
    """FInplaceOption (0, 0) of both ops: each sum is taken before its memory is written."""
    from numba import cuda

    shape = (2, 3, 50, 45) if mode == "instance" else (2, 3, 5, 7)
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
    assert [red for _, red in spy["calls"]] == ["nrm2", "sum"]


@pytest.mark.parametrize(
    ("mode", "shape"), [("instance", (2, 3, 4, 5)), ("channel", (2, 6, 5)), ("spatial", (2, 3, 9))]
)
def test_the_gpu_agrees_with_the_cpu_in_float64(mode: str, shape: tuple[int, ...]) -> None:
    """The CPU's row loops and the GPU's reductions give the same values to rounding."""
    a = _arrays(shape, mode, F64)
    params, starts = {"mode": mode}, [a["out0"], a["norm0"]]
    fwd = [run_fcompute("L2Normalization", params, [a["x"]], starts, [A, W], d) for d in DEVICES]
    bin_ = [a["dy"], *_reference(mode, a["x"], 1e-10)]
    name = "_backward_L2Normalization"
    bwd = [run_fcompute(name, params, bin_, [a["dx0"]], [A], d) for d in DEVICES]
    for got, want in zip([*fwd[0], *bwd[0]], [*fwd[1], *bwd[1]], strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14, err_msg=mode)
