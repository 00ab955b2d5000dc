"""BilinearSampler's d data and d grid and GridGenerator's affine d theta on a GPU: splits
with enough work items for the device (the CPU keeps the loops of bilinear_sampler.py and
grid_generator.py).

d data. The CPU's backward takes one (sample, channel) plane per item, walking every
output point of the plane, so that no two items add into one pixel: a spatial
transformer over 8 x 256 feature maps gives a GPU 2048 threads of Ho Wo points each. Here,
as MXNet's CUDA kernel does, an item is one dy element (n, c, h, w) adding its four
bilinear shares into d data atomically (_atomic_grad.atomic_target zeroes d data for a
write request and gives float16 a float32 copy). Atomics add in no fixed order: d data
differs from the CPU's in rounding only.

d theta. Entry (n, 3 i + k) sums channel i of d grid times the basis (xt, yt, 1)[k] over
the H W positions: 6 N items of H W steps on the CPU (48 threads of 50k steps for 8
images at 224 x 224). Here an item is a (sample, channel, slice) of S slices, summing the
three basis products over positions s, s + S, ... (neighbouring items read neighbouring
positions) into float64 partials (6 N, S), which _reduce_cuda.reduce_gpu sums into
d theta (storing or adding). S gives each item about PART_MIN positions and the launch at
most about PART_THREADS items; an S of 1 keeps the CPU's kernel.

d grid. A thread per grid point sums its C channels: 8 images of 28 x 28 points over
256 channels are 6272 threads of 256 channel steps (four gathers each), under one wave of
an H200. Here, when the points are few and C is long, an item is a (sample, slice, point)
of S channel slices, summing channels s, s + S, ... (neighbouring items: neighbouring
points, so dy, the grid and the partials are read and written coalesced) into float64
partials (S, 2 N Ho Wo) laid out as d grid; a thread per d grid entry adds its S
partials, scales and stores them (write or add). S gives each item about GRID_PART_MIN
channels and the launch at most about PART_THREADS items (the example: 16 slices, 100k
items of 16 channels). Fewer than GRID_SPLIT_MIN slices keep the one kernel of
bilinear_sampler.py: then C is short (48 channels or fewer: a loop the split would cut by
at most 3x, for a second launch and a scratch) or the points are already plenty (over
PART_THREADS / 4 = 32k threads). What decides is each thread's serial loop, C, not the
total N Ho Wo C: a few points over a long C (4 points x 1024 channels) are the worst case.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...kernel import device_function, parallel_for, scratch
from ...kernel.launch import ADD, store, uindex
from .._atomic_grad import atomic_target
from .._index_kernels import atomic_add
from .._reduce_cuda import reduce_gpu
from .bilinear_sampler import _pixel, _source

PART_MIN = 32  # positions per d theta item, at least (module constants: tests shrink them)
PART_THREADS = 1 << 17  # d theta (and d grid) items to aim for
GRID_PART_MIN = 16  # channels per d grid item, at least
GRID_SPLIT_MIN = 4  # fewer d grid slices than this keep the one kernel (see above)


# --- d data --------------------------------------------------------------------------------------


@device_function
def _spread_atomic(ddata, base, y, x, H, W, v):
    if 0 <= y < H and 0 <= x < W:
        atomic_add(ddata, base + y * W + x, v)


@parallel_for
def _data_grad_points(i, ddata, dy, grid, C, H, W, Ho, Wo):
    """dy element i = (n, c, h, w) spreads onto its four corners in plane (n, c) of ddata,
    atomically (points of one plane share corners)."""
    HWo = Ho * Wo
    nc = i // HWo
    p = i - nc * HWo
    n = nc // C
    g = 2 * n * HWo + p
    x0, wx = _source(np.float64(grid[uindex(g)]), W)  # float64 (the simulator's NumPy
    y0, wy = _source(np.float64(grid[uindex(g + HWo)]), H)  # would keep float16 there)
    d = np.float64(dy[uindex(i)])
    base = nc * H * W
    _spread_atomic(ddata, base, y0, x0, H, W, d * wy * wx)
    _spread_atomic(ddata, base, y0, x0 + 1, H, W, d * wy * (1.0 - wx))
    _spread_atomic(ddata, base, y0 + 1, x0, H, W, d * (1.0 - wy) * wx)
    _spread_atomic(ddata, base, y0 + 1, x0 + 1, H, W, d * (1.0 - wy) * (1.0 - wx))


def sample_data_grad_gpu(ctx: Any, ddata: Any, dy: Any, grid: Any, mode: int) -> None:
    """d data (N, C, H, W) of bilinear sampling at grid (N, 2, Ho, Wo), on a GPU; mode
    WRITE or ADD."""
    _, C, H, W = ddata.shape
    Ho, Wo = grid.shape[2], grid.shape[3]
    with atomic_target(ctx, ddata, mode) as acc:
        args = (acc, dy.reshape(-1), grid.reshape(-1), C, H, W, Ho, Wo)
        _data_grad_points.launch(ctx, dy.size, *args)


# --- d theta -------------------------------------------------------------------------------------


@parallel_for
def _affine_grad_part(j, part, dgrid, H, W, sx, sy, S):
    """Item j = (n, i, s): partial sums of d theta (n, 3 i + k), k = 0, 1, 2, over the
    positions s, s + S, ... of d grid's channel i, into part[(6 n + 3 i + k) S + s]."""
    ni = j // S
    s = j - ni * S
    HW = H * W
    base = ni * HW
    s0 = np.float64(0.0)
    s1 = np.float64(0.0)
    s2 = np.float64(0.0)
    for p in range(s, HW, S):
        h = p // W
        g = np.float64(dgrid[uindex(base + p)])
        s0 += g * (-1.0 + (p - h * W) * sx)
        s1 += g * (-1.0 + h * sy)
        s2 += g
    row = 3 * ni * S + s  # (n, i) is row 2 n + i of d grid: d theta rows 3 (2 n + i) + k
    part[uindex(row)] = s0
    part[uindex(row + S)] = s1
    part[uindex(row + 2 * S)] = s2


def slices(n: int, hw: int) -> int:
    """How many slices each d theta sum of n samples over hw positions is cut into."""
    return max(1, min(-(-hw // PART_MIN), PART_THREADS // (2 * n)))


def affine_grad_gpu(ctx: Any, dtheta: Any, dgrid: Any, S: int, args: tuple[Any, ...]) -> None:
    """d theta (N, 6) (+)= the basis-weighted sums of dgrid (N, 2, H, W), on a GPU, in S > 1
    slices; args = (H, W, sx, sy, mode) as grid_generator's kernel takes them."""
    n = dgrid.shape[0]
    H, W, sx, sy, mode = args
    part = scratch.empty(ctx, (6 * n, S), np.float64)
    _affine_grad_part.launch(ctx, 2 * n * S, part.reshape(-1), dgrid.reshape(-1), H, W, sx, sy, S)
    out = dtheta.reshape(6 * n, 1)
    reduce_gpu(ctx, out, mode == ADD, part, (6 * n, 1), "sum", 1.0, name="_backward_GridGenerator")


# --- d grid --------------------------------------------------------------------------------------


@parallel_for
def _grid_grad_part(j, part, dy, data, grid, C, H, W, Ho, Wo, S, T):
    """Item j = (n, s, p): grid point (n, p)'s sums over channels s, s + S, ... (d grid
    before its (size - 1) / 2 scale) into part[s T + 2 n Ho Wo + p] (x) and the same
    + Ho Wo (y); T = 2 N Ho Wo. float64 throughout (the simulator's NumPy would keep
    float16)."""
    HWo = Ho * Wo
    ns = j // HWo
    p = j - ns * HWo
    n = ns // S
    s = ns - n * S
    g = 2 * n * HWo + p
    x0, wx = _source(np.float64(grid[uindex(g)]), W)
    y0, wy = _source(np.float64(grid[uindex(g + HWo)]), H)
    gx = np.float64(0.0)
    gy = np.float64(0.0)
    for c in range(s, C, S):
        base = (n * C + c) * H * W
        v00 = np.float64(_pixel(data, base, y0, x0, H, W))
        v01 = np.float64(_pixel(data, base, y0, x0 + 1, H, W))
        v10 = np.float64(_pixel(data, base, y0 + 1, x0, H, W))
        v11 = np.float64(_pixel(data, base, y0 + 1, x0 + 1, H, W))
        d = np.float64(dy[uindex((n * C + c) * HWo + p)])
        gx += d * (wy * (v01 - v00) + (1.0 - wy) * (v11 - v10))
        gy += d * (wx * (v10 - v00) + (1.0 - wx) * (v11 - v01))
    part[uindex(s * T + g)] = gx
    part[uindex(s * T + g + HWo)] = gy


@parallel_for
def _grid_grad_sum(i, dgrid, part, H, W, HWo, S, T, mode):
    """d grid entry i (=|+=) its S partials summed, times (W - 1) / 2 for x, (H - 1) / 2
    for y (the scale after the sum, as bilinear_sampler's kernel)."""
    total = np.float64(0.0)
    for s in range(S):
        total += part[uindex(s * T + i)]
    if (i // HWo) % 2 == 0:
        store(dgrid, i, total * (W - 1) * 0.5, mode)
    else:
        store(dgrid, i, total * (H - 1) * 0.5, mode)


def grid_slices(points: int, channels: int) -> int:
    """How many channel slices each d grid point's sum is cut into (1: not split)."""
    S = min(-(-channels // GRID_PART_MIN), PART_THREADS // points)
    return S if S >= GRID_SPLIT_MIN else 1


def sample_grid_grad_gpu(
    ctx: Any, dgrid: Any, dy: Any, data: Any, grid: Any, S: int, mode: int
) -> None:
    """d grid (N, 2, Ho, Wo) (+)= its sums over data's C channels in S > 1 slices, on a
    GPU; mode WRITE or ADD."""
    N, C, H, W = data.shape
    Ho, Wo = grid.shape[2], grid.shape[3]
    T = dgrid.size
    part = scratch.empty(ctx, (S, T), np.float64).reshape(-1)
    args = (dy.reshape(-1), data.reshape(-1), grid.reshape(-1), C, H, W, Ho, Wo, S, T)
    _grid_grad_part.launch(ctx, N * S * Ho * Wo, part, *args)
    _grid_grad_sum.launch(ctx, T, dgrid.reshape(-1), part, H, W, Ho * Wo, S, T, mode)
