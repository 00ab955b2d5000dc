"""transpose on the GPU: a gather where the last axis stays last, tiles where it moves.

First the permutation is simplified: size-1 axes dropped and input axes that stay next
to each other in the output merged, so NCHW -> NHWC is (N, C, HW) -> (N, HW, C).

- The last axis stays last (attention's (B, L, H, D) -> (B, H, L, D)): a thread per
  output element gathers it; neighbouring threads read and write neighbours.
- The last axis moves: a thread per element would read or write a whole row apart. The
  permutation is a batch of 2-D transposes instead: the output's last axis comes from
  input axis j (rows of the tile), the input's last axis goes to output axis k (columns);
  every other axis is a batch axis with an input and an output stride. A block takes a
  TILE x TILE tile at a time: its threads read the tile's rows along the input's last
  axis into shared memory (padded by a column against bank conflicts), then write the
  tile's columns along the output's last axis: coalesced both ways.

Rows or columns shorter than MIN_TILE_SIDE leave most of a tile idle, while a gather
touches only that many runs per warp there: those stay a gather. Both kernels copy the
values as they are (`out[j] = v`, or `out[j] += v` for req 'add'), for every dtype.
"""

from __future__ import annotations

import math
from typing import Any

from ..kernel.launch import cuda, flat, gpu_kernel  # cuda: numba.cuda once built

TILE = 32  # a tile is TILE x TILE elements: a warp reads one of its rows
_PADDED = TILE + 1  # a tile row in shared memory: + 1 puts a tile column in other banks
TILE_ROWS = 8  # warps per block: each thread moves TILE / TILE_ROWS elements of a tile
MIN_TILE_SIDE = 8  # shorter tile sides gather (see the module docstring)

Plan = tuple[tuple[int, ...], tuple[int, ...]]


def simplify(shape: tuple[int, ...], axes: tuple[int, ...]) -> Plan:
    """(shape, axes) of the same transpose with size-1 axes dropped and input axes that
    stay adjacent in the output merged; at least one axis (fewer loop steps per element)."""
    kept = [a for a in axes if shape[a] != 1]
    groups: list[list[int]] = []  # runs of input axes, in output order
    for a in kept:
        if groups and groups[-1][-1] == a - 1:
            groups[-1].append(a)
        else:
            groups.append([a])
    if not groups:
        return (1,), (0,)
    order = sorted(range(len(groups)), key=lambda g: groups[g][0])  # groups in input order
    new_shape = tuple(math.prod(shape[a] for a in groups[g]) for g in order)
    position = {g: i for i, g in enumerate(order)}
    return new_shape, tuple(position[g] for g in range(len(groups)))


def strides_of(shape: tuple[int, ...]) -> tuple[int, ...]:
    """C-order element strides of shape."""
    return tuple(math.prod(shape[k + 1 :]) for k in range(len(shape)))


def tile_plan(shape: tuple[int, ...], axes: tuple[int, ...]) -> tuple[Any, ...] | None:
    """For a simplified (shape, axes) whose last axis moves, the tiled kernel's geometry:
    ((rows, cols, row stride in x, col stride in out), batch sizes, batch x strides,
    batch out strides); None where the gather serves (see the module docstring)."""
    last = len(shape) - 1
    if axes[-1] == last:
        return None
    j, k = axes[-1], axes.index(last)  # out's last axis is x's axis j; x's last is out's k
    rows, cols = shape[j], shape[last]
    if min(rows, cols) < MIN_TILE_SIDE:
        return None
    istr, ostr = strides_of(shape), strides_of(tuple(shape[a] for a in axes))
    batch = [(shape[a], istr[a], ostr[i]) for i, a in enumerate(axes) if a not in (j, last)]
    sizes, bi, bo = zip(*batch) if batch else ((1,), (0,), (0,))  # never an empty tuple
    return (rows, cols, istr[j], ostr[k]), tuple(sizes), tuple(bi), tuple(bo)


@gpu_kernel
def _transpose_gather_cuda(out, x, oshape, istrides, add):
    # out[t] (+)= x[sum_k idx_k * istrides[k]] where idx = unravel(t, oshape)
    for t in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        rem = t
        src = 0
        for k in range(len(oshape) - 1, -1, -1):
            q = rem // oshape[k]
            src += (rem - q * oshape[k]) * istrides[k]
            rem = q
        if add:
            out[t] += x[src]
        else:
            out[t] = x[src]


@gpu_kernel
def _transpose_tiled_cuda(out, x, tiles, dims, bshape, bistr, bostr, add):
    """Tile t of `tiles` per grid-stride step: x[b, r, c] -> out[b, c, r] (strided)."""
    rows, cols, istr_r, ostr_c = dims
    tile = cuda.shared.array((TILE, _PADDED), x.dtype)
    tx = cuda.threadIdx.x % TILE
    ty = cuda.threadIdx.x // TILE
    step = cuda.blockDim.x // TILE
    row_tiles = (rows + TILE - 1) // TILE
    col_tiles = (cols + TILE - 1) // TILE
    for t in range(cuda.blockIdx.x, tiles, cuda.gridDim.x):  # the same t block-wide
        b = t // (row_tiles * col_tiles)
        rest = t - b * (row_tiles * col_tiles)
        r0 = (rest // col_tiles) * TILE
        c0 = (rest - (rest // col_tiles) * col_tiles) * TILE
        src, dst = 0, 0
        for k in range(len(bshape) - 1, -1, -1):
            q = b // bshape[k]
            src += (b - q * bshape[k]) * bistr[k]
            dst += (b - q * bshape[k]) * bostr[k]
            b = q
        for i in range(ty, TILE, step):  # a warp reads a tile row along x's last axis
            if r0 + i < rows and c0 + tx < cols:
                tile[i, tx] = x[src + (r0 + i) * istr_r + c0 + tx]
        cuda.syncthreads()
        for i in range(ty, TILE, step):  # and writes a tile column along out's last axis
            if c0 + i < cols and r0 + tx < rows:
                j = dst + (c0 + i) * ostr_c + r0 + tx
                if add:
                    out[j] += tile[tx, i]
                else:
                    out[j] = tile[tx, i]
        cuda.syncthreads()  # the tile is read before the next one overwrites it


def transpose_gpu(ctx: Any, out: Any, x: Any, axes: tuple[int, ...], add: bool) -> None:
    """out (+)= np.transpose(x, axes) with ctx's GPU arrays (both C-contiguous)."""
    if out.size == 0:
        return
    shape, axes = simplify(tuple(int(d) for d in x.shape), axes)
    plan = tile_plan(shape, axes)
    if plan is None:
        istr = strides_of(shape)
        oshape = tuple(shape[a] for a in axes)
        args = (flat(out), flat(x), oshape, tuple(istr[a] for a in axes), add)
        _transpose_gather_cuda.launch(ctx, out.size, *args)
        return
    dims, bshape, bistr, bostr = plan
    tiles = math.prod(bshape) * -(-dims[0] // TILE) * -(-dims[1] // TILE)
    _launch_tiles(ctx, tiles, (flat(out), flat(x), tiles, dims, bshape, bistr, bostr, add))


def _launch_tiles(ctx: Any, tiles: int, args: tuple[Any, ...]) -> None:
    """The tiled kernel with TILE * TILE_ROWS threads a block, at most a block per tile
    and as many blocks as any grid-stride launch gets (kernel/cuda.py)."""
    from nnvmpy.kernel.cuda import launch_config, launch_kernel

    name = _transpose_tiled_cuda.__name__
    threads = TILE * TILE_ROWS
    blocks, _, stream, device = launch_config(name, ctx, tiles * threads)
    with device:
        launch_kernel(_transpose_tiled_cuda.dispatcher, min(blocks, tiles), threads, stream, args)


__all__ = ["MIN_TILE_SIDE", "TILE", "TILE_ROWS", "simplify", "tile_plan", "transpose_gpu"]
