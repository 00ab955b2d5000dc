"""LayerNorm, GroupNorm and InstanceNorm's GPU kernels (_norm_rows.py has the formulas, the
row functions and the loops a thread per row runs on either device).

Rows take a thread each where neighbouring rows are neighbours in memory (inner >= 32) or
rows are short, a thread block each nearer the last axis (_block_rows.py). A block per
row leaves the device idle when the rows are few and long: GroupNorm of 2 images with 32
groups is 64 blocks on a GPU with 132 SMs, each thread ~4k elements a pass. There
(row_slices) each row is cut into S slices of a block each, as BatchNorm's channels are
(_batch_norm_cuda.py): a sums kernel on rows * S blocks writes each slice's float64
partial sums to scratch, a thread per row combines them into the statistics and the
row's scalars, and an apply kernel on the same blocks writes out (or dx). The
backward's per-row sums go the same way. Few long rows a thread each would take (inner
>= 32, LayerNorm off the last axis) are cut into slices too, a block per run of inner
positions and slice (_norm_columns_cuda.py, which also has both splits' thread per row
merging the slices). Per-position dgamma/dbeta are column partials summed by reduce_gpu
(coalesced, long sums split among blocks).

Scalar slots (sc, x's float type as _typed keeps them): forward 2r, 2r + 1 = a, b
(y = x * a + b, one gamma per row) or mu, 1/std (per position); backward 5r .. 5r + 4 =
mu, 1/std, then a, b and g of _row_grad.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...kernel import device_function, scratch
from ...kernel.cuda import launch_config, launch_kernel, simulated
from ...kernel.launch import (  # cuda: a placeholder bound when a kernel compiles
    NULL,
    cuda,
    gpu_kernel,
    store,
    uindex,
)
from ._block_rows import BLOCK, MIN_INNER, block_sum, by_block, launch_blocks, run_block_rows
from ._norm_columns_cuda import (
    _column_partials,
    _column_tiles,
    _norm_backward_finish_cuda,
    _norm_forward_finish_cuda,
    _row_scalars,
    _shifted_sums,
    _sum_partials,
    backward_columns,
    column_grid,
    forward_columns,
)
from ._norm_rows import (
    _inv_std,
    _norm_backward_chunk,
    _norm_forward_row,
    _normalize,
    _row_base,
    _row_dx,
    _row_grad,
    _row_normalize,
    _share,
    _space,
    _typed,
    row_dy_sums,
    row_scale_shift,
    row_sqdev,
    row_sum,
)

# The split rule (row_slices); module constants, so tests can send tiny shapes down it.
STAT_BLOCKS_PER_SM = 4  # split rows until rows * S blocks give each SM this many
SLICE_MIN = 4096  # positions of a slice, at least: shorter ones cost more than they spread
SPLIT_BLOCK = 256  # threads of a split block at most (a power of two: the trees halve it)
SIM_SPLIT_BLOCK = 32  # the same under the simulator, where every thread is a Python thread

# --- a block per row ------------------------------------------------------------------------


# Thread tid's share of row r, elements k = tid, tid + nt, ..., is itself a row (start
# base + tid * inner, stride nt * inner) that the row functions walk; gamma[tid::nt] are
# its positions' gammas. Each thread writes the same values into row r's scratch slots
# (_typed) and reads them back.
@gpu_kernel
def _norm_forward_block_cuda(
    rows, out, mean, std, sc, x, gamma, beta, n, inner, groups, eps, stat_var, m_out, m_mean, m_std
):
    tid, nt = cuda.threadIdx.x, cuda.blockDim.x
    sh = cuda.shared.array(BLOCK, np.float64)
    cnt, step = _share(n, tid, nt), nt * inner
    for r in range(cuda.blockIdx.x, rows, cuda.gridDim.x):
        base = _row_base(r, n, inner) + tid * inner
        mu = block_sum(sh, tid, nt, row_sum(x, base, cnt, step)) / n
        var = block_sum(sh, tid, nt, row_sqdev(x, base, cnt, step, mu)) / n
        sd = math.sqrt(var + eps)
        if tid == 0:
            store(mean, r, mu, m_mean)
            store(std, r, var if stat_var else sd, m_std)
        if m_out != NULL:
            gpos, bpos = gamma[tid::nt], beta[tid::nt]
            _normalize(
                out, sc, x, gamma, beta, gpos, bpos, r, base, cnt, step, mu, sd, groups, m_out
            )


@gpu_kernel
def _norm_backward_block_cuda(
    rows, dx, pg, pb, sc, dy, x, gamma, mean, std, dmean, dstd, n, inner, groups, eps,
    stat_var, m_dx, part, dstats,
):  # fmt: skip
    tid, nt = cuda.threadIdx.x, cuda.blockDim.x
    sh = cuda.shared.array(BLOCK, np.float64)
    cnt, step = _share(n, tid, nt), nt * inner
    per_pos = groups == 0
    for r in range(cuda.blockIdx.x, rows, cuda.gridDim.x):
        base = _row_base(r, n, inner) + tid * inner
        mu = _typed(sc, 5 * r, mean[r])
        inv = _typed(sc, 5 * r + 1, _inv_std(std[r], eps, stat_var))
        sdy, sdyx = row_dy_sums(dy, x, gamma[tid::nt], base, cnt, step, mu, per_pos)
        sdy = block_sum(sh, tid, nt, sdy)
        sdyx = block_sum(sh, tid, nt, sdyx) * inv
        g = 1.0
        if not per_pos:
            g = gamma[r % groups]
            if part and tid == 0:  # the row's own partials
                pg[r] = sdyx
                pb[r] = sdy
            sdy *= g
            sdyx *= g
        if m_dx != NULL:
            _row_dx(
                dx, dy, x, gamma[tid::nt], dmean, dstd, sc, r, r, base, cnt, step, n, mu, inv,
                sdy, sdyx, g, per_pos, m_dx, dstats,
            )  # fmt: skip


# --- S blocks per row -----------------------------------------------------------------------


@device_function
def _slice(b, S, chunk, n, inner, tid, nt):
    """(row, first position, thread tid's first element and count) of split block b: slice
    b % S (positions from (b % S) * chunk, the last slice shorter) of row b // S."""
    r = b // S
    lo = (b - r * S) * chunk
    start = _row_base(r, n, inner) + (lo + tid) * inner
    return r, lo, start, _share(min(chunk, n - lo), tid, nt)


@gpu_kernel
def _norm_sums_split_cuda(part, x, rows, S, chunk, n, inner):
    # block b: part[2b], part[2b + 1] = the sums of its slice's d = x - x0, x0 the slice's
    # first value (shifted: stable in one pass; the finish merges slices by Chan's formula)
    tid, nt = cuda.threadIdx.x, cuda.blockDim.x
    sh = cuda.shared.array(SPLIT_BLOCK, np.float64)
    for b in range(cuda.blockIdx.x, rows * S, cuda.gridDim.x):
        r, lo, start, cnt = _slice(b, S, chunk, n, inner, tid, nt)
        x0 = float(x[uindex(_row_base(r, n, inner) + lo * inner)])
        s, ss = _shifted_sums(x, start, cnt, nt * inner, x0)
        s = block_sum(sh, tid, nt, s)
        ss = block_sum(sh, tid, nt, ss)
        if tid == 0:
            part[2 * b] = s
            part[2 * b + 1] = ss


@gpu_kernel
def _norm_forward_apply_cuda(out, sc, x, gamma, beta, rows, S, chunk, n, inner, groups, m_out):
    # the sums kernel's blocks: out (+)= each slice normalised by its row's scalars
    tid, nt = cuda.threadIdx.x, cuda.blockDim.x
    for b in range(cuda.blockIdx.x, rows * S, cuda.gridDim.x):
        r, lo, start, cnt = _slice(b, S, chunk, n, inner, tid, nt)
        a, c = sc[2 * r], sc[2 * r + 1]
        if groups > 0:
            row_scale_shift(out, x, start, cnt, nt * inner, a, c, m_out)
        else:
            gpos, bpos = gamma[lo + tid :: nt], beta[lo + tid :: nt]
            _row_normalize(out, x, gpos, bpos, start, cnt, nt * inner, a, c, m_out)


@gpu_kernel
def _norm_dsums_split_cuda(part, sc, dy, x, gamma, rows, S, chunk, n, inner, per_pos):
    # block b: part[2b], part[2b + 1] = its slice's sum(dy * g), sum(dy * g * (x - mu))
    # (row_dy_sums, mu from the row's slot as _row_scalars typed it)
    tid, nt = cuda.threadIdx.x, cuda.blockDim.x
    sh = cuda.shared.array(SPLIT_BLOCK, np.float64)
    for b in range(cuda.blockIdx.x, rows * S, cuda.gridDim.x):
        r, lo, start, cnt = _slice(b, S, chunk, n, inner, tid, nt)
        gpos = gamma[lo + tid :: nt]
        s, t = row_dy_sums(dy, x, gpos, start, cnt, nt * inner, sc[5 * r], per_pos)
        s = block_sum(sh, tid, nt, s)
        t = block_sum(sh, tid, nt, t)
        if tid == 0:
            part[2 * b] = s
            part[2 * b + 1] = t


@gpu_kernel
def _norm_backward_apply_cuda(dx, sc, dy, x, gamma, rows, S, chunk, n, inner, per_pos, m_dx):
    # the sums kernel's blocks: dx (+)= _row_grad over each slice (dy read before dx is
    # written, element by element: dx may be dy's memory)
    tid, nt = cuda.threadIdx.x, cuda.blockDim.x
    for b in range(cuda.blockIdx.x, rows * S, cuda.gridDim.x):
        r, lo, start, cnt = _slice(b, S, chunk, n, inner, tid, nt)
        q = 5 * r
        mu, inv, a, c, g = sc[q], sc[q + 1], sc[q + 2], sc[q + 3], sc[q + 4]
        gpos = gamma[lo + tid :: nt]
        _row_grad(dx, dy, x, gpos, start, cnt, nt * inner, mu, inv, a, c, g, per_pos, m_dx)


# --- the split rule and the launches ------------------------------------------------------


def row_slices(rows: int, n: int, sms: int) -> int:
    """S, the blocks that share each row: 1 (a block per row) when the rows alone give
    STAT_BLOCKS_PER_SM blocks per SM, else as many as give that many blocks, at most one
    per SLICE_MIN positions (shorter slices' partials would cost more than they spread)."""
    want = STAT_BLOCKS_PER_SM * sms
    if rows >= want:
        return 1
    return max(1, min(-(-want // rows), n // SLICE_MIN))


def split_grid(ctx: Any, rows: int, n: int, inner: int) -> tuple[int, int, int]:
    """(S, chunk, threads): S blocks of `threads` per row, each on `chunk` positions (a
    multiple of threads; the last slice shorter, none empty). S = 1: no split, the rows
    take a block or a thread each (also wherever _block_rows.by_block says no block)."""
    from nnvmpy.kernel.cuda import context_sm_count

    if not by_block(ctx, n, inner):
        return 1, n, 1
    S = row_slices(rows, n, context_sm_count(ctx, "norm_rows"))
    if S < 2:
        return 1, n, 1
    limit = SIM_SPLIT_BLOCK if simulated() else SPLIT_BLOCK
    per = -(-n // S)
    threads = min(limit, 1 << (per - 1).bit_length())
    chunk = -(-per // threads) * threads
    return -(-n // chunk), chunk, threads


def _columns(ctx: Any, layout: tuple[int, int, int], groups: int) -> tuple[int, int, int, int]:
    """column_grid's split for rows a thread each would take that have a gamma per
    position (inner >= MIN_INNER: LayerNorm off the last axis), S = 1 elsewhere."""
    from nnvmpy.kernel.cuda import context_sm_count

    rows, n, inner = layout
    if inner < MIN_INNER or groups > 0:
        return 1, n, 1, 1
    return column_grid(rows, n, inner, context_sm_count(ctx, "norm_rows"))


def _launch_split(
    ctx: Any, name: str, k: Any, rows: int, grid: tuple[int, int, int], *args: Any
) -> None:
    """k(*args) on rows * S blocks of `threads` (grid = split_grid's), on ctx's stream."""
    S, _, threads = grid
    _, _, stream, device = launch_config(name, ctx, 1)
    with device:
        launch_kernel(k.dispatcher, rows * S, threads, stream, args)


def forward_gpu(ctx: Any, args: tuple[Any, ...], layout: tuple[int, int, int]) -> None:
    """norm_forward's rows (args: _norm_forward_row's after r): in column blocks where
    _columns says so, S blocks each where split_grid does, else a block or a thread each."""
    rows, n, inner = layout
    columns = _columns(ctx, layout, args[9])
    if columns[0] > 1:
        forward_columns(ctx, args, layout, columns)
        return
    grid = split_grid(ctx, rows, n, inner)
    if grid[0] == 1:
        loops = (_norm_forward_row, _norm_forward_block_cuda)
        run_block_rows(ctx, "norm_forward", *loops, rows, n, inner, *args)
        return
    out, mean, std, sc, x, gamma, beta, _, _, groups, eps, stat_var, m_out, m_mean, m_std = args
    S, chunk, _ = grid
    part = scratch.empty(ctx, 2 * rows * S, np.float64)
    _launch_split(ctx, "norm_forward", _norm_sums_split_cuda, rows, grid, part, x, rows, S,
                  chunk, n, inner)  # fmt: skip
    _norm_forward_finish_cuda.launch(
        ctx, rows, part, mean, std, sc, x, gamma, beta, rows, S, chunk, n, inner, groups,
        eps, stat_var, m_mean, m_std, S, 1,
    )  # fmt: skip
    if m_out != NULL:
        _launch_split(ctx, "norm_forward", _norm_forward_apply_cuda, rows, grid, out, sc, x,
                      gamma, beta, rows, S, chunk, n, inner, groups, m_out)  # fmt: skip


def _row_sums_split(
    ctx: Any, arrays: tuple[Any, ...], layout: tuple[int, int, int], grid: tuple[int, int, int],
    groups: int, flags: tuple[int, bool, bool],
) -> None:  # fmt: skip
    """The backward's rows, S blocks each: slices' sums, a thread per row combining them
    (and writing one gamma per row's dgamma/dbeta partials), then dx. Slots 5r, 5r + 1
    hold mu and 1/std already (_row_scalars)."""
    dx, pg, pb, sc, dy, x, gamma, _, _, dmean, dstd = arrays
    m_dx, rows_part, dstats = flags
    rows, n, inner = layout
    S, chunk, _ = grid
    per_pos = groups == 0
    part = scratch.empty(ctx, 2 * rows * S, np.float64)
    _launch_split(ctx, "norm_backward", _norm_dsums_split_cuda, rows, grid, part, sc, dy, x,
                  gamma, rows, S, chunk, n, inner, per_pos)  # fmt: skip
    _norm_backward_finish_cuda.launch(
        ctx, rows, part, pg, pb, sc, gamma, dmean, dstd, rows, S, n, groups, rows_part, dstats,
        S, 1,
    )  # fmt: skip
    if m_dx != NULL:
        _launch_split(ctx, "norm_backward", _norm_backward_apply_cuda, rows, grid, dx, sc, dy,
                      x, gamma, rows, S, chunk, n, inner, per_pos, m_dx)  # fmt: skip


def backward_gpu(
    ctx: Any, grads: list[Any], modes: list[int], arrays: tuple[Any, ...],
    layout: tuple[int, int, int], params: tuple[int, float, bool], dstats: bool,
) -> None:  # fmt: skip
    """Per-position dgamma/dbeta by columns (_column_partials) first, as dx may be dy's
    memory; then the rows (column blocks, S blocks, a block or a thread each), which
    per-row gamma's rows' sums come from too."""
    rows, n, inner = layout
    groups, eps, stat_var = params
    m_dx, m_dg, m_db = modes
    cols = groups == 0 and (m_dg != NULL or m_db != NULL)
    rows_part = groups > 0 and (m_dg != NULL or m_db != NULL)
    m, outer = n * inner, rows // inner  # columns: the m elements of an outer slice
    tiles, rpt = _column_tiles(outer, m)
    grid = split_grid(ctx, rows, n, inner)
    columns = _columns(ctx, layout, groups)
    run_rows_too = m_dx != NULL or rows_part
    width = tiles * m if cols else rows if rows_part else 0
    pg, pb, sc = _space(ctx, width, 5 * rows, arrays[2])
    dx, dy, x, gamma, mean, std, dmean, dstd = arrays
    if cols or (max(grid[0], columns[0]) > 1 and run_rows_too):
        _row_scalars.launch(ctx, rows, sc, mean, std, eps, stat_var)
    if cols:
        _column_partials.launch(ctx, tiles * m, pg, pb, sc, dy, x, outer, rpt, m, inner)
        _sum_partials(ctx, grads, modes, pg, pb, (tiles, n, inner))
    if not run_rows_too:
        return
    args = (dx, pg, pb, sc, dy, x, gamma, mean, std, dmean, dstd)
    tail = (n, inner, groups, eps, stat_var, m_dx, rows_part, dstats)
    if grid[0] > 1:
        _row_sums_split(ctx, args, layout, grid, groups, (m_dx, rows_part, dstats))
    elif columns[0] > 1:  # per-position gamma: m_dx is not NULL
        backward_columns(ctx, args, layout, columns, m_dx, dstats)
    elif by_block(ctx, n, inner):
        launch_blocks(ctx, "norm_backward", _norm_backward_block_cuda, rows, n, *args, *tail)
    else:  # a thread per row: chunks of one row
        _norm_backward_chunk.launch(ctx, rows, *args, rows, 1, *tail, work=rows * n)
    if rows_part:
        _sum_partials(ctx, grads, modes, pg, pb, (rows // groups, groups, 1))


__all__ = ["SLICE_MIN", "STAT_BLOCKS_PER_SM", "backward_gpu", "forward_gpu"]
