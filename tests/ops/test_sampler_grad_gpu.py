"""The GPU backward splits of BilinearSampler, GridGenerator (affine) and SpatialTransformer
(ops/nn/_sampler_grad_cuda.py) against NumPy and the CPU's FCompute.

BilinearSampler's d data: an item per dy element adding its corners atomically; grids
with points off the map and several points on one spot (their items add into the same
pixels), a 1-pixel-high map, an empty grid (d data still zeroed for write). d grid: a
thread per grid point for short channel loops or many points; few points over many
channels cut into channel slices (float64 partials, then a thread per d grid entry adding
them up), checked against the CPU, with the slice count from the module's constants and
from shrunk ones. GridGenerator's
d theta: sums sliced into float64 partials that reduce_gpu adds up when long; short sums
keep the CPU's kernel; a 1-pixel-wide target (its NaN column). SpatialTransformer's
backward runs both. Every request pair, float16/32/64; FCompute<gpu> is called directly
(tests/ops/fcompute_call.py). Atomics add in no fixed order, so results agree to rounding.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from fcompute_call import run_fcompute
from launch_spies import spy_item_launches

from nnvmpy.ops.nn import _sampler_grad_cuda as gpu
from nnvmpy.ops.nn import bilinear_sampler, grid_generator

pytestmark = pytest.mark.gpu

DTYPES = (np.float64, np.float32, np.float16)
TOL = {np.float64: 1e-12, np.float32: 1e-5, np.float16: 2e-3}
REQS = [("write", "write"), ("add", "add"), ("write", "null"), ("null", "add"), ("null", "null")]


@pytest.fixture
def launches(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[int]]:
    """The item counts of the backward kernels' launches, by kernel name."""
    kernels = (
        gpu._data_grad_points,
        gpu._affine_grad_part,
        gpu._grid_grad_part,
        gpu._grid_grad_sum,
        bilinear_sampler._data_grad_loop,
        bilinear_sampler._grid_grad_loop,
        grid_generator._affine_grad_loop,
    )
    return {k.__name__: spy_item_launches(monkeypatch, k) for k in kernels}


def _clear(launches: dict[str, list[int]]) -> None:
    for v in launches.values():
        v.clear()


def _check(got: np.ndarray, want: np.ndarray, start: np.ndarray, req: str, tol: float) -> None:
    """got is `want` written, added to `start`, or `start` left alone, as req says."""
    if req == "null":
        np.testing.assert_array_equal(got, start)
        return
    full = want + (start.astype(np.float64) if req == "add" else 0.0)
    atol = tol * max(1.0, float(np.nanmax(np.abs(full), initial=0.0)))
    np.testing.assert_allclose(got.astype(np.float64), full, rtol=tol, atol=atol)


def _grid(
    rng: np.random.Generator, shape: tuple[int, ...], hw: tuple[int, int], dtype: Any
) -> np.ndarray:
    """Points in [-1.3, 1.3], at least 0.05 pixel from whole pixels after rounding to
    dtype (d grid has a kink there), the first three of each sample on one spot."""
    grid = rng.uniform(-1.3, 1.3, shape)
    for ch, size in ((0, hw[1]), (1, hw[0])):
        if size > 1:
            p = (grid[:, ch] + 1) * (size - 1) / 2
            p = np.floor(p) + np.clip(p - np.floor(p), 0.1, 0.9)
            grid[:, ch] = p * 2 / (size - 1) - 1
    flat = grid.reshape(shape[0], 2, -1)
    if flat.shape[2] >= 3:
        flat[:, :, 1:3] = flat[:, :, :1]
    return grid.astype(dtype)


def _data_grad_ref(dy: np.ndarray, grid: np.ndarray, hw: tuple[int, int]) -> np.ndarray:
    """d data by scattering each dy element onto its four corners (np.add.at)."""
    N, C = dy.shape[:2]
    H, W = hw
    out = np.zeros((N, C, H * W))
    x = (grid[:, 0].reshape(N, -1) + 1) * (W - 1) / 2
    y = (grid[:, 1].reshape(N, -1) + 1) * (H - 1) / 2
    x0, y0 = np.floor(x), np.floor(y)
    d = dy.reshape(N, C, -1)
    for yy, wy in ((y0, 1 - (y - y0)), (y0 + 1, y - y0)):
        for xx, wx in ((x0, 1 - (x - x0)), (x0 + 1, x - x0)):
            ok = (yy >= 0) & (yy < H) & (xx >= 0) & (xx < W)
            for n in range(N):
                at = (yy[n] * W + xx[n])[ok[n]].astype(np.int64)
                for c in range(C):
                    np.add.at(out[n, c], at, (d[n, c] * wy[n] * wx[n])[ok[n]])
    return out.reshape(N, C, H, W)


# (data shape, grid (Ho, Wo))
SAMPLER_CASES = [((2, 3, 5, 6), (4, 7)), ((2, 4, 9, 11), (13, 17)), ((1, 2, 1, 4), (3, 1))]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("shape", "out_hw"), SAMPLER_CASES)
def test_bilinear_sampler_backward(
    shape: tuple[int, ...], out_hw: tuple[int, int], dtype: Any, launches: dict[str, list[int]]
) -> None:
    rng = np.random.default_rng(21)
    N, C, H, W = shape
    data = rng.standard_normal(shape).astype(dtype)
    grid = _grid(rng, (N, 2, *out_hw), (H, W), dtype)
    dy = rng.standard_normal((N, C, *out_hw)).astype(dtype)
    exact = [a.astype(np.float64) for a in (dy, data, grid)]
    want_data = _data_grad_ref(exact[0], exact[2], (H, W))
    zeros = [np.zeros(shape), np.zeros(grid.shape)]
    cpu = run_fcompute("_backward_BilinearSampler", {}, exact, zeros, ["write"] * 2, "cpu")
    np.testing.assert_allclose(cpu[0], want_data, rtol=1e-12, atol=1e-12)
    starts = [
        rng.standard_normal(shape).astype(dtype),
        rng.standard_normal(grid.shape).astype(dtype),
    ]
    for reqs in REQS:
        _clear(launches)
        got = run_fcompute("_backward_BilinearSampler", {}, [dy, data, grid], starts, reqs, "gpu")
        assert launches["_data_grad_loop"] == []
        assert launches["_data_grad_points"] == ([] if reqs[0] == "null" else [dy.size])
        assert launches["_grid_grad_loop"] == (
            [] if reqs[1] == "null" else [N * out_hw[0] * out_hw[1]]
        )
        assert [g.dtype for g in got] == [dtype, dtype]
        _check(got[0], want_data, starts[0], reqs[0], TOL[dtype])
        _check(got[1], cpu[1], starts[1], reqs[1], 5 * TOL[dtype])


# (data shape, grid (Ho, Wo), GRID_PART_MIN, PART_THREADS, slices expected); 0: the module's
GRID_CASES = [
    ((2, 67, 4, 5), (2, 3), 0, 0, 5),  # 67 channels: 5 slices of 13 or 14
    ((1, 64, 3, 4), (1, 1), 0, 0, 4),  # one point
    ((2, 48, 4, 5), (2, 3), 0, 0, 1),  # 3 slices would do: the one kernel
    ((2, 30, 1, 6), (3, 2), 2, 0, 15),  # a 1-pixel-high map
    ((3, 20, 5, 4), (2, 5), 3, 3 * 2 * 5 * 4, 4),  # as many slices as PART_THREADS allows
    ((2, 20, 5, 4), (2, 5), 3, 2 * 2 * 5 * 3, 1),  # points plenty: the one kernel
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("shape", "out_hw", "part_min", "threads", "S"), GRID_CASES)
def test_bilinear_sampler_grid_grad_in_channel_slices(
    shape: tuple[int, ...],
    out_hw: tuple[int, int],
    part_min: int,
    threads: int,
    S: int,
    dtype: Any,
    launches: dict[str, list[int]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """d grid (every request, with or without d data) equals the CPU's in float64 on the
    same (rounded) values, points off the map and on one spot included; the sliced kernels
    run with S slices over the points (and the sum over the d grid entries), or the one
    kernel a thread per point for S = 1."""
    if part_min:
        monkeypatch.setattr(gpu, "GRID_PART_MIN", part_min)
    if threads:
        monkeypatch.setattr(gpu, "PART_THREADS", threads)
    N, C, H, W = shape
    points = N * out_hw[0] * out_hw[1]
    assert gpu.grid_slices(points, C) == S
    rng = np.random.default_rng(24)
    data = rng.standard_normal(shape).astype(dtype)
    grid = _grid(rng, (N, 2, *out_hw), (H, W), dtype)
    dy = rng.standard_normal((N, C, *out_hw)).astype(dtype)
    exact = [a.astype(np.float64) for a in (dy, data, grid)]
    zeros = [np.zeros(shape), np.zeros(grid.shape)]
    want = run_fcompute("_backward_BilinearSampler", {}, exact, zeros, ["write"] * 2, "cpu")
    starts = [
        rng.standard_normal(shape).astype(dtype),
        rng.standard_normal(grid.shape).astype(dtype),
    ]
    for reqs in REQS:
        _clear(launches)
        got = run_fcompute("_backward_BilinearSampler", {}, [dy, data, grid], starts, reqs, "gpu")
        on = reqs[1] != "null"
        assert launches["_grid_grad_part"] == ([points * S] if on and S > 1 else [])
        assert launches["_grid_grad_sum"] == ([2 * points] if on and S > 1 else [])
        assert launches["_grid_grad_loop"] == ([points] if on and S == 1 else [])
        assert [g.dtype for g in got] == [dtype, dtype]
        _check(got[0], want[0], starts[0], reqs[0], TOL[dtype])
        _check(got[1], want[1], starts[1], reqs[1], 5 * TOL[dtype])


def test_grid_slices_of_a_spatial_transformer_head() -> None:
    """The module docstring's example: 8 images of 28 x 28 points over 256 channels are
    16 slices (100352 items of 16 channels), not 6272 threads of 256."""
    assert gpu.grid_slices(8 * 28 * 28, 256) == 16
    assert gpu.grid_slices(8 * 28 * 28, 3) == 1
    assert gpu.grid_slices(8 * 224 * 224, 256) == 1


def test_bilinear_sampler_empty_grid_zeroes_d_data(launches: dict[str, list[int]]) -> None:
    data = np.ones((2, 3, 4, 5), np.float32)
    grid, dy = np.zeros((2, 2, 0, 3), np.float32), np.zeros((2, 3, 0, 3), np.float32)
    starts = [np.full(data.shape, 7.0, np.float32), np.zeros(grid.shape, np.float32)]
    for req, want in (("write", 0.0), ("add", 7.0)):
        ddata, _ = run_fcompute(
            "_backward_BilinearSampler", {}, [dy, data, grid], starts, [req, req], "gpu"
        )
        np.testing.assert_array_equal(ddata, np.full(data.shape, want, np.float32))
    assert launches["_data_grad_loop"] == []


def _dtheta_ref(dgrid: np.ndarray) -> np.ndarray:
    """dtheta[n, 3 i + k] = sum over positions of dgrid[n, i] (xt, yt, 1)[k]."""
    N, _, H, W = dgrid.shape
    with np.errstate(divide="ignore", invalid="ignore"):
        xt = -1 + np.arange(W) * (2 / (W - 1) if W > 1 else np.nan)
        yt = -1 + np.arange(H) * (2 / (H - 1) if H > 1 else np.nan)
    ys, xs = np.meshgrid(yt, xt, indexing="ij")
    basis = np.stack([xs.ravel(), ys.ravel(), np.ones(H * W)])  # (3, HW)
    return np.einsum("nip,kp->nik", dgrid.reshape(N, 2, -1), basis).reshape(N, 6)


# (N, H, W, PART_THREADS, slices expected); 0: the module's own PART_THREADS
AFFINE_CASES = [(1, 4, 5, 0, 1), (3, 16, 20, 0, 10), (2, 40, 1, 0, 2), (2, 37, 29, 8, 2)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("N", "H", "W", "threads", "S"), AFFINE_CASES)
def test_affine_grid_backward(
    N: int,
    H: int,
    W: int,
    threads: int,
    S: int,
    dtype: Any,
    launches: dict[str, list[int]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if threads:
        monkeypatch.setattr(gpu, "PART_THREADS", threads)
    assert gpu.slices(N, H * W) == S
    rng = np.random.default_rng(22)
    dgrid = rng.standard_normal((N, 2, H, W)).astype(dtype)
    want = _dtheta_ref(dgrid.astype(np.float64))
    params = {"transform_type": "affine", "target_shape": (H, W)}
    start = rng.standard_normal((N, 6)).astype(dtype)
    for req in ("write", "add", "null"):
        _clear(launches)
        (got,) = run_fcompute("_backward_GridGenerator", params, [dgrid], [start], [req], "gpu")
        sliced = [] if req == "null" or S == 1 else [2 * N * S]
        assert launches["_affine_grad_part"] == sliced
        assert launches["_affine_grad_loop"] == ([6 * N] if req != "null" and S == 1 else [])
        assert got.dtype == dtype
        _check(got, want, start, req, TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
def test_spatial_transformer_backward(dtype: Any, launches: dict[str, list[int]]) -> None:
    """Both new kernels under SpatialTransformer (its d grid in temp space), against the
    CPU's backward in float64."""
    rng = np.random.default_rng(23)
    shape, target = (2, 3, 9, 10), (12, 11)
    data = rng.standard_normal(shape).astype(dtype)
    grid = _grid(rng, (2, 2, *target), shape[2:], dtype)
    dy = rng.standard_normal((2, 3, *target)).astype(dtype)
    params = {"target_shape": target, "transform_type": "affine", "sampler_type": "bilinear"}
    exact = [a.astype(np.float64) for a in (dy, data, grid)]
    zeros = [np.zeros(shape), np.zeros((2, 6))]
    name = "_backward_SpatialTransformer"
    want = run_fcompute(name, params, exact, zeros, ["write"] * 2, "cpu")
    starts = [rng.standard_normal(shape).astype(dtype), rng.standard_normal((2, 6)).astype(dtype)]
    for reqs in REQS:
        _clear(launches)
        got = run_fcompute(name, params, [dy, data, grid], starts, reqs, "gpu")
        assert launches["_data_grad_loop"] == launches["_affine_grad_loop"] == []
        assert launches["_data_grad_points"] == ([] if reqs[0] == "null" else [dy.size])
        assert launches["_affine_grad_part"] == ([] if reqs[1] == "null" else [2 * 2 * 5])
        _check(got[0], want[0], starts[0], reqs[0], TOL[dtype])
        _check(got[1], want[1], starts[1], reqs[1], 5 * TOL[dtype])
