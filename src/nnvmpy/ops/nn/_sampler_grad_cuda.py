"""BilinearSampler's d data and GridGenerator's affine d theta on a GPU: splits with
enough work items for the device (the CPU keeps the loops of bilinear_sampler.py and
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
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...kernel import device_function, parallel_for, scratch
from ...kernel.launch import ADD, uindex
from .._atomic_grad import atomic_target
from .._index_kernels import atomic_add
from .._reduce_cuda import reduce_gpu
from .bilinear_sampler import _source

PART_MIN = 32  # positions per d theta item, at least (module constants: tests shrink them)
PART_THREADS = 1 << 17  # d theta items to aim for


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
