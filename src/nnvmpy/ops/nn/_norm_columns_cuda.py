"""LayerNorm's GPU work along columns of the (outer, n, inner) view, where neighbouring
threads take neighbouring rows (inner >= 32): few long rows cut into column blocks, and
per-position dgamma/dbeta as column partials; with the thread per row that merges a
split row's slices, which the block split (_norm_rows_cuda.py) uses too.

Where inner >= 32 a row takes a thread: rows r and r + 1 are neighbours in memory, so a
warp's reads coalesce. With few rows those are few threads, each walking its whole row
once per pass (mean, variance, apply; the backward's sums and dx likewise): LayerNorm
over axis 1 of (2, 65536, 32) was 64 threads of 65536 steps a pass on a GPU of 132 SMs.
There (column_slices, a rule like row_slices') the n positions are cut into S slices,
and a block takes a run of up to COLUMN_BLOCK consecutive inner positions of one outer
slice times one slice: its threads take neighbouring rows (reads still coalesce), each
walking its row's slice. A sums kernel writes every (row, slice)'s float64 shifted sums,
a thread per row merges its S slices (Chan's formula, as the block split does) into the
statistics and the row's scalars, and an apply kernel on the same blocks writes out; the
backward's two per-row sums go the same way, then dx. (2, 65536, 32) on 132 SMs: 256
slices, 512 blocks of 32 threads, 16384 threads of 256 steps, and 64 merging threads of
256 steps. A slice is never shorter than COLUMN_SLICE_MIN: the merging threads walk S
partials, so S near sqrt(n) keeps both walks short.

Only per-position gamma (LayerNorm) takes this path: GroupNorm's and InstanceNorm's rows
are contiguous (inner 1, so never inner >= 32), where a block per row, or S blocks, take
them.

Slice partials are float64 for every dtype, as the block split's, and the scalars the
apply kernels read are x's float type (float32 for float16: computed in float32, rounded
once on the store): part[2p], part[2p + 1] with p = r * pr + s * ps. The block split
keeps a row's slices together (pr = S, ps = 1: a block writes its own), the column split
a slice's rows (pr = 1, ps = rows: neighbouring threads write, and the merging threads
read, neighbours).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...kernel import device_function, parallel_for, scratch
from ...kernel.cuda import launch_config, launch_kernel, simulated
from ...kernel.launch import ADD, NULL, cuda, gpu_kernel, store, uindex
from .._reduce_cuda import reduce_gpu
from ._norm_rows import _inv_std, _row_base, _row_grad, _row_normalize, row_dy_sums

# The column split rule (column_slices); module constants, so tests can send tiny shapes
# down it.
COLUMN_ITEMS_PER_SM = 512  # split rows until rows * S threads give each SM this many
COLUMN_SLICE_MIN = 256  # positions of a slice at least: S partials per row to merge too
COLUMN_BLOCK = 256  # threads of a column block at most (runs of inner positions)
SIM_COLUMN_BLOCK = 32  # the same under the simulator, where every thread is a Python thread

#: a GPU's per-position dgamma/dbeta tiles: about this many work items (threads), each
#: summing a column over rows / tiles rows
_COLUMN_ITEMS = 1 << 16


# --- a thread per split row: the slices' partials merged ---------------------------------


@device_function
def _shifted_sums(x, base, cnt, step, x0):
    """(sum(d), sum(d * d)), d = x - x0 over cnt elements `step` apart: one pass, in float64
    (float(): the simulator's NumPy would take float16 - Python float in float16)."""
    s = 0.0
    ss = 0.0
    for k in range(cnt):
        d = float(x[uindex(base + k * step)]) - x0
        s += d
        ss += d * d
    return s, ss


@device_function
def _merged_stats(part, x, r, S, chunk, n, inner, pr, ps):
    """Row r's (mean, variance) from its S slices' shifted sums (at p = r * pr + s * ps):
    each slice's mean m = x0 + s / c and squared deviations M2 = ss - s * s / c, merged
    (Chan et al.) as M2 = sum(M2_s + c_s * (m_s - mean)^2); x0, the slice's first value."""
    base = _row_base(r, n, inner)
    total = 0.0
    for s in range(S):
        c = min(chunk, n - s * chunk)
        total += c * float(x[uindex(base + s * chunk * inner)]) + part[2 * (r * pr + s * ps)]
    mu = total / n
    m2 = 0.0
    for s in range(S):
        c = min(chunk, n - s * chunk)
        p = 2 * (r * pr + s * ps)
        d = float(x[uindex(base + s * chunk * inner)]) + part[p] / c - mu
        m2 += part[p + 1] - part[p] * part[p] / c + c * d * d
    return mu, max(m2, 0.0) / n


@gpu_kernel
def _norm_forward_finish_cuda(
    part, mean, std, sc, x, gamma, beta, rows, S, chunk, n, inner, groups, eps, stat_var,
    m_mean, m_std, pr, ps,
):  # fmt: skip
    # a thread per row: the statistics, and the scalars the apply kernel reads (slots 2r,
    # 2r + 1: a, b of y = x * a + b with one gamma per row; else mu, 1/std)
    for r in range(cuda.grid(1), rows, cuda.gridsize(1)):
        mu, var = _merged_stats(part, x, r, S, chunk, n, inner, pr, ps)
        sd = math.sqrt(var + eps)
        store(mean, r, mu, m_mean)
        store(std, r, var if stat_var else sd, m_std)
        if groups > 0:
            a = gamma[r % groups] / sd
            sc[2 * r] = a
            sc[2 * r + 1] = beta[r % groups] - mu * a
        else:
            sc[2 * r] = mu
            sc[2 * r + 1] = 1.0 / sd


@gpu_kernel
def _norm_backward_finish_cuda(
    part, pg, pb, sc, gamma, dmean, dstd, rows, S, n, groups, rows_part, dstats, pr, ps
):
    # a thread per row: its sums from the S slices' (and, one gamma per row, the row's
    # dgamma/dbeta partials), then _row_grad's a, b, g into slots 5r + 2 .. 5r + 4
    for r in range(cuda.grid(1), rows, cuda.gridsize(1)):
        sdy = 0.0
        sdyx = 0.0
        for s in range(S):
            p = 2 * (r * pr + s * ps)
            sdy += part[p]
            sdyx += part[p + 1]
        inv = sc[5 * r + 1]
        sdyx *= inv
        g = 1.0
        if groups > 0:
            g = gamma[r % groups]
            if rows_part:
                pg[r] = sdyx
                pb[r] = sdy
            sdy *= g
            sdyx *= g
        a, c = sdy / n, sdyx / n
        if dstats:  # as _row_dx: d mean / dx = 1/n, d std / dx = xhat/n
            a -= dmean[r] / (inv * n)
            c -= dstd[r] / (inv * n)
        sc[5 * r + 2] = a
        sc[5 * r + 3] = c
        sc[5 * r + 4] = g


# --- column blocks: (a run of inner positions of one outer slice) x (a slice of n) -------


@device_function
def _column_slice(b, runs, S, chunk, n, inner, tid, nt):
    """(row, slice, first position, count, first element) of thread tid of column block
    b = (o * S + s) * runs + j: row o * inner + j * nt + tid, slice s (positions from
    s * chunk, the last slice shorter); row -1 for a thread past inner."""
    o = b // (runs * S)
    rest = b - o * runs * S
    s = rest // runs
    q = (rest - s * runs) * nt + tid
    if q >= inner:
        return -1, 0, 0, 0, 0
    r = o * inner + q
    lo = s * chunk
    return r, s, lo, min(chunk, n - lo), _row_base(r, n, inner) + lo * inner


@gpu_kernel
def _norm_sums_columns_cuda(part, x, rows, S, runs, chunk, n, inner):
    # each thread: its (row, slice)'s sums of d = x - x0, x0 the slice's first value
    tid, nt = cuda.threadIdx.x, cuda.blockDim.x
    for b in range(cuda.blockIdx.x, (rows // inner) * runs * S, cuda.gridDim.x):
        r, s, _, cnt, start = _column_slice(b, runs, S, chunk, n, inner, tid, nt)
        if r >= 0:
            t, tt = _shifted_sums(x, start, cnt, inner, float(x[uindex(start)]))
            p = 2 * (r + s * rows)
            part[p] = t
            part[p + 1] = tt


@gpu_kernel
def _norm_forward_apply_columns_cuda(
    out, sc, x, gamma, beta, rows, S, runs, chunk, n, inner, m_out
):
    # the sums kernel's blocks: out (+)= each slice normalised by its row's mu and 1/std
    tid, nt = cuda.threadIdx.x, cuda.blockDim.x
    for b in range(cuda.blockIdx.x, (rows // inner) * runs * S, cuda.gridDim.x):
        r, _, lo, cnt, start = _column_slice(b, runs, S, chunk, n, inner, tid, nt)
        if r >= 0:
            mu, inv = sc[2 * r], sc[2 * r + 1]
            _row_normalize(out, x, gamma[lo:], beta[lo:], start, cnt, inner, mu, inv, m_out)


@gpu_kernel
def _norm_dsums_columns_cuda(part, sc, dy, x, gamma, rows, S, runs, chunk, n, inner):
    # each thread: its (row, slice)'s sum(dy * g), sum(dy * g * (x - mu)) (row_dy_sums,
    # mu from the row's slot as _row_scalars typed it)
    tid, nt = cuda.threadIdx.x, cuda.blockDim.x
    for b in range(cuda.blockIdx.x, (rows // inner) * runs * S, cuda.gridDim.x):
        r, s, lo, cnt, start = _column_slice(b, runs, S, chunk, n, inner, tid, nt)
        if r >= 0:
            t, u = row_dy_sums(dy, x, gamma[lo:], start, cnt, inner, sc[5 * r], True)
            p = 2 * (r + s * rows)
            part[p] = t
            part[p + 1] = u


@gpu_kernel
def _norm_backward_apply_columns_cuda(dx, sc, dy, x, gamma, rows, S, runs, chunk, n, inner, m_dx):
    # the sums kernel's blocks: dx (+)= _row_grad over each slice (dy read before dx is
    # written, element by element: dx may be dy's memory)
    tid, nt = cuda.threadIdx.x, cuda.blockDim.x
    for b in range(cuda.blockIdx.x, (rows // inner) * runs * S, cuda.gridDim.x):
        r, _, lo, cnt, start = _column_slice(b, runs, S, chunk, n, inner, tid, nt)
        if r >= 0:
            q = 5 * r
            mu, inv, a, c, g = sc[q], sc[q + 1], sc[q + 2], sc[q + 3], sc[q + 4]
            _row_grad(dx, dy, x, gamma[lo:], start, cnt, inner, mu, inv, a, c, g, True, m_dx)


# --- per-position dgamma / dbeta --------------------------------------------------------


@parallel_for
def _row_scalars(r, sc, mean, std, eps, stat_var):
    """Row r's mu and 1/std in x's float type, in slots 5r and 5r + 1 (as _typed keeps them)."""
    sc[5 * r] = mean[r]
    sc[5 * r + 1] = _inv_std(std[r], eps, stat_var)


@parallel_for
def _column_partials(i, pg, pb, sc, dy, x, outer, rpt, m, inner):
    """Work item i sums column c = i % m of an outer slice (m = n * inner elements;
    position c // inner of row o * inner + c % inner) over the rpt slices of tile
    t = i // m: pg[i] = sum dy * xhat, pb[i] = sum dy (xhat as _row_sums_partials
    computes it). Neighbouring threads read neighbouring elements and write neighbouring
    partials."""
    t = i // m
    c = i - t * m
    q = c % inner
    s = np.float64(0.0)
    u = np.float64(0.0)
    for o in range(t * rpt, min((t + 1) * rpt, outer)):
        j = o * m + c
        k = 5 * (o * inner + q)
        d = dy[j]
        s += d * ((x[j] - sc[k]) * sc[k + 1])
        u += d
    pg[i] = s
    pb[i] = u


def _column_tiles(outer: int, m: int) -> tuple[int, int]:
    """(tiles, rpt): _column_partials' tiles of rpt outer slices each, about _COLUMN_ITEMS
    work items in all."""
    tiles = min(outer, -(-_COLUMN_ITEMS // m))
    rpt = -(-outer // tiles)
    return -(-outer // rpt), rpt


def _sum_partials(
    ctx: Any, grads: list[Any], modes: list[int], pg: Any, pb: Any, shape: tuple[int, int, int]
) -> None:
    """dgamma, dbeta (as their modes say): float64 partials of `shape` (count, cols,
    inner) summed over count and inner by reduce_gpu (coalesced, long sums split)."""
    count, cols, inner = shape
    for grad, mode, p in ((grads[1], modes[1], pg), (grads[2], modes[2], pb)):
        if mode != NULL:
            parts = p[: count * cols * inner].reshape(shape)
            reduce_gpu(ctx, grad, mode == ADD, parts, (1, cols, 1), "sum", 1.0, "norm_backward")


# --- the column split rule and the launches ---------------------------------------------


def column_slices(rows: int, n: int, sms: int) -> int:
    """S, the slices of each row: 1 (a thread per row) when the rows alone give
    COLUMN_ITEMS_PER_SM threads per SM, else as many as give that many, at most one per
    COLUMN_SLICE_MIN positions (a thread walks its slice, and the merging thread the S
    slices' partials: either long leaves the device waiting on few threads)."""
    want = COLUMN_ITEMS_PER_SM * sms
    if rows >= want:
        return 1
    return max(1, min(-(-want // rows), n // COLUMN_SLICE_MIN))


def column_grid(rows: int, n: int, inner: int, sms: int) -> tuple[int, int, int, int]:
    """(S, chunk, runs, threads) for rows of n elements `inner` apart (inner >= 32) on a
    GPU of `sms` SMs: S slices of `chunk` positions (the last shorter, none empty), inner
    cut into `runs` runs of `threads` positions (the last may be shorter), a block per
    (outer slice, run, slice). S = 1: no split, a thread per row."""
    S = column_slices(rows, n, sms)
    if S < 2:
        return 1, n, 1, 1
    limit = SIM_COLUMN_BLOCK if simulated() else COLUMN_BLOCK
    chunk = -(-n // S)
    runs = -(-inner // limit)
    return -(-n // chunk), chunk, runs, -(-inner // runs)


def _launch_columns(
    ctx: Any, name: str, k: Any, layout: tuple[int, int, int], grid: tuple[int, ...], *args: Any
) -> None:
    """k(*args) on a block of `threads` per (outer slice, run, slice), on ctx's stream."""
    rows, _, inner = layout
    S, _, runs, threads = grid
    _, _, stream, device = launch_config(name, ctx, 1)
    with device:
        launch_kernel(k.dispatcher, rows // inner * runs * S, threads, stream, args)


def forward_columns(
    ctx: Any, args: tuple[Any, ...], layout: tuple[int, int, int], grid: tuple[int, ...]
) -> None:
    """norm_forward's rows (args: _norm_forward_row's after r; per-position gamma) split
    into column blocks as column_grid says."""
    out, mean, std, sc, x, gamma, beta, _, _, _, eps, stat_var, m_out, m_mean, m_std = args
    rows, n, inner = layout
    S, chunk, runs, _ = grid
    part = scratch.empty(ctx, 2 * rows * S, np.float64)
    _launch_columns(ctx, "norm_forward", _norm_sums_columns_cuda, layout, grid, part, x, rows,
                    S, runs, chunk, n, inner)  # fmt: skip
    _norm_forward_finish_cuda.launch(
        ctx, rows, part, mean, std, sc, x, gamma, beta, rows, S, chunk, n, inner, 0, eps,
        stat_var, m_mean, m_std, 1, rows,
    )  # fmt: skip
    if m_out != NULL:
        _launch_columns(ctx, "norm_forward", _norm_forward_apply_columns_cuda, layout, grid,
                        out, sc, x, gamma, beta, rows, S, runs, chunk, n, inner, m_out)  # fmt: skip


def backward_columns(
    ctx: Any, arrays: tuple[Any, ...], layout: tuple[int, int, int], grid: tuple[int, ...],
    m_dx: int, dstats: bool,
) -> None:  # fmt: skip
    """dx of per-position gamma's rows in column blocks: the slices' sums, a thread per
    row combining them, then dx. Slots 5r, 5r + 1 hold mu and 1/std already (_row_scalars);
    dgamma/dbeta are the caller's (column partials)."""
    dx, pg, pb, sc, dy, x, gamma, _, _, dmean, dstd = arrays
    rows, n, inner = layout
    S, chunk, runs, _ = grid
    part = scratch.empty(ctx, 2 * rows * S, np.float64)
    _launch_columns(ctx, "norm_backward", _norm_dsums_columns_cuda, layout, grid, part, sc, dy,
                    x, gamma, rows, S, runs, chunk, n, inner)  # fmt: skip
    _norm_backward_finish_cuda.launch(
        ctx, rows, part, pg, pb, sc, gamma, dmean, dstd, rows, S, n, 0, False, dstats, 1, rows
    )
    if m_dx != NULL:
        _launch_columns(ctx, "norm_backward", _norm_backward_apply_columns_cuda, layout, grid,
                        dx, sc, dy, x, gamma, rows, S, runs, chunk, n, inner, m_dx)  # fmt: skip


__all__ = [
    "COLUMN_BLOCK",
    "COLUMN_ITEMS_PER_SM",
    "COLUMN_SLICE_MIN",
    "SIM_COLUMN_BLOCK",
    "backward_columns",
    "column_grid",
    "column_slices",
    "forward_columns",
]
