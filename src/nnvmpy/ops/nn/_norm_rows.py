"""Row statistics shared by LayerNorm, GroupNorm and InstanceNorm.

Each op normalises "rows": n elements `inner` apart, starting at row r's base, with
    mean_r = sum(x) / n,   std_r = sqrt(sum((x - mean_r)^2) / n + eps)
    xhat   = (x - mean_r) / std_r,   y = gamma * xhat + beta
and differ only in the layout and in which gamma an element takes:

    LayerNorm     rows = outer * inner around `axis`   gamma[k], k = position in the row
    GroupNorm     rows = N * G, contiguous (inner 1)   gamma[r % G]   (groups = G)
    InstanceNorm  rows = N * C, contiguous             gamma[r % C]   (groups = C)

Backward, with g the element's gamma, dyg = dy * g and sums over the row:
    dx     = (dyg - sum(dyg) / n - xhat * sum(dyg * xhat) / n) / std_r
    dgamma = sum over the rows (and, per element, positions) of dy * xhat; dbeta of dy

dgamma/dbeta are sums across rows, which parallel rows cannot write into one array. The
CPU runs over chunks of rows, each summing into its own row of a partials array (chunk
c: partial[c * ncol + col]; per-row gamma: one chunk per row) in the pass that takes its
rows' sums. A GPU (_norm_rows_cuda.py) gives each row a thread (inner >= 32:
neighbouring rows are neighbours in memory), a thread block (nearer the last axis:
_block_rows.py) or, few long rows, several blocks, and takes per-position partials by
columns, neighbouring threads on neighbouring elements. Partials are float64 for every
dtype; `_sum_columns` adds them up on the CPU, reduce_gpu on a GPU.
Per-row scalars are stored into a small scratch array of the data's float type and read
back (`_typed`), so a float32 row is computed in float32. The row loops are
`kernel.parallel_for` bodies, so the CPU (prange) and the GPU (a thread per item) run
the same code, and a block's threads call the same row functions on their share of the
row. The statistics are written as mean and std, or mean and var (`stat_var`,
InstanceNorm's hidden outputs are named like MXNet's).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...kernel import device_function, parallel_for
from ...kernel.launch import ADD, NULL, is_gpu, run_rows, store, uindex
from ._layer_util import row_function

# --- whole-row loops (RowFunctions: vectorised sums on the CPU; L2Normalization uses them
# too) -------------------------------------------------------------------------------------


@row_function
def row_sum(x, base, n, inner):
    s = 0.0
    for k in range(n):
        s += x[uindex(base + k * inner)]
    return s


@row_function
def row_sqdev(x, base, n, inner, mu):
    s = 0.0
    for k in range(n):
        d = x[uindex(base + k * inner)] - mu
        s += d * d
    return s


@row_function
def row_dy_sums(dy, x, gamma, base, n, inner, mu, per_pos):
    """(sum(dy * g), sum(dy * g * (x - mu))) with g = gamma[k] if per_pos else 1."""
    s = 0.0
    t = 0.0
    if per_pos:
        for k in range(n):
            j = uindex(base + k * inner)
            d = dy[j] * gamma[k]
            s += d
            t += d * (x[j] - mu)
    else:
        for k in range(n):
            j = uindex(base + k * inner)
            d = dy[j]
            s += d
            t += d * (x[j] - mu)
    return s, t


@row_function
def _row_normalize(out, x, gamma, beta, base, n, inner, mu, inv, mode):
    """out = (x - mu) * inv * gamma[k] + beta[k]."""
    if mode == ADD:
        for k in range(n):
            j = uindex(base + k * inner)
            out[j] += (x[j] - mu) * inv * gamma[k] + beta[k]
    else:
        for k in range(n):
            j = uindex(base + k * inner)
            out[j] = (x[j] - mu) * inv * gamma[k] + beta[k]


@row_function
def row_axpby(out, a, b, base, n, inner, alpha, beta, mode):
    """out = alpha * a + beta * b."""
    if mode == ADD:
        for k in range(n):
            j = uindex(base + k * inner)
            out[j] += alpha * a[j] + beta * b[j]
    else:
        for k in range(n):
            j = uindex(base + k * inner)
            out[j] = alpha * a[j] + beta * b[j]


@row_function
def row_scale_shift(out, x, base, n, inner, a, b, mode):
    """out = x * a + b."""
    if mode == ADD:
        for k in range(n):
            j = uindex(base + k * inner)
            out[j] += x[j] * a + b
    else:
        for k in range(n):
            j = uindex(base + k * inner)
            out[j] = x[j] * a + b


@row_function
def _row_grad(dx, dy, x, gamma, base, n, inner, mu, inv, a, b, g, per_pos, mode):
    """dx = inv * (dy * g_k - a - (x - mu) * inv * b), g_k = gamma[k] if per_pos else g.

    dy[j] is read before dx[j] is written: dx may be dy's memory."""
    if per_pos:
        if mode == ADD:
            for k in range(n):
                j = uindex(base + k * inner)
                dx[j] += inv * (dy[j] * gamma[k] - a - (x[j] - mu) * inv * b)
        else:
            for k in range(n):
                j = uindex(base + k * inner)
                dx[j] = inv * (dy[j] * gamma[k] - a - (x[j] - mu) * inv * b)
    elif mode == ADD:
        for k in range(n):
            j = uindex(base + k * inner)
            dx[j] += inv * (dy[j] * g - a - (x[j] - mu) * inv * b)
    else:
        for k in range(n):
            j = uindex(base + k * inner)
            dx[j] = inv * (dy[j] * g - a - (x[j] - mu) * inv * b)


@row_function
def _row_sums_partials(pg, pb, p0, dy, x, gamma, base, n, inner, mu, inv):
    """row_dy_sums (per position) while adding dy * xhat and dy into pg/pb[p0 + k]: one
    pass over the row for the sums of the row and of its chunk's columns."""
    s = 0.0
    t = 0.0
    for k in range(n):
        j = uindex(base + k * inner)
        d = dy[j]
        xh = (x[j] - mu) * inv
        pg[uindex(p0 + k)] += d * xh
        pb[uindex(p0 + k)] += d
        dg = d * gamma[k]
        s += dg
        t += dg * xh
    return s, t


# --- the loops ----------------------------------------------------------------------------


@device_function
def _typed(scratch, j, v):
    """v in scratch's dtype (via scratch[j]): float32 rows then compute in float32,
    which vectorises twice as wide as the float64 a Python float would bring in."""
    scratch[j] = v
    return scratch[j]


@device_function
def _row_base(r, n, inner):
    """The flat index of row r's first element."""
    o = r // inner
    return o * n * inner + (r - o * inner)


@device_function
def _share(n, tid, nt):
    """How many of a row's n elements block thread tid of nt takes (k = tid, tid + nt, ...)."""
    return (n - tid + nt - 1) // nt


@device_function
def _inv_std(s, eps, stat_var):
    """1 / std from the stored statistic: the std, or (stat_var) the variance."""
    return 1.0 / (math.sqrt(s + eps) if stat_var else s)


@device_function
def _normalize(out, sc, x, gamma, beta, gpos, bpos, r, base, cnt, step, mu, sd, groups, m_out):
    """out = (x - mu) / sd * gamma + beta over cnt elements `step` apart from base: row r,
    or a block thread's share of it, whose positions' gamma and beta are gpos and bpos."""
    if groups > 0:  # one gamma per row: y = x * a + b
        a = gamma[r % groups] / sd
        b = beta[r % groups] - mu * a
        a_t, b_t = _typed(sc, 2 * r, a), _typed(sc, 2 * r + 1, b)
        row_scale_shift(out, x, base, cnt, step, a_t, b_t, m_out)
    else:
        mu_t, inv_t = _typed(sc, 2 * r, mu), _typed(sc, 2 * r + 1, 1.0 / sd)
        _row_normalize(out, x, gpos, bpos, base, cnt, step, mu_t, inv_t, m_out)


@parallel_for
def _norm_forward_row(
    r, out, mean, std, sc, x, gamma, beta, n, inner, groups, eps, stat_var, m_out, m_mean, m_std
):
    base = _row_base(r, n, inner)
    mu = row_sum(x, base, n, inner) / n
    var = row_sqdev(x, base, n, inner, mu) / n
    sd = math.sqrt(var + eps)
    store(mean, r, mu, m_mean)
    store(std, r, var if stat_var else sd, m_std)
    if m_out != NULL:
        _normalize(out, sc, x, gamma, beta, gamma, beta, r, base, n, inner, mu, sd, groups, m_out)


# Backward: per-row scalars in scratch slots 5q .. 5q + 4 (q: the chunk, or the row on a
# GPU): mu, 1/std, then a, b and g of _row_grad.
@device_function
def _row_dx(
    dx, dy, x, gpos, dmean, dstd, sc, q, r, base, cnt, step, n, mu, inv, sdy, sdyx, g, per_pos,
    m_dx, dstats,
):  # fmt: skip
    """dx over cnt elements `step` apart from base (row r, or a block thread's share) from
    the row's sdy = sum(dy * g) and sdyx = sum(dy * g * xhat)."""
    a, b = sdy / n, sdyx / n
    if dstats:  # mean and std were outputs too: d mean / dx = 1/n, d std / dx = xhat/n
        a -= dmean[r] / (inv * n)
        b -= dstd[r] / (inv * n)
    a_t, b_t, g_t = _typed(sc, 5 * q + 2, a), _typed(sc, 5 * q + 3, b), _typed(sc, 5 * q + 4, g)
    _row_grad(dx, dy, x, gpos, base, cnt, step, mu, inv, a_t, b_t, g_t, per_pos, m_dx)


@parallel_for
def _norm_backward_chunk(
    c, dx, pg, pb, sc, dy, x, gamma, mean, std, dmean, dstd, rows, rpc, n, inner, groups, eps,
    stat_var, m_dx, part, dstats,
):  # fmt: skip
    per_pos = groups == 0
    ncol = n if per_pos else 1
    if part:
        for k in range(ncol):
            pg[c * ncol + k] = 0.0
            pb[c * ncol + k] = 0.0
    for r in range(c * rpc, min((c + 1) * rpc, rows)):
        base = _row_base(r, n, inner)
        mu = _typed(sc, 5 * c, mean[r])
        inv = _typed(sc, 5 * c + 1, _inv_std(std[r], eps, stat_var))
        if per_pos and part:
            sdy, sdyx = _row_sums_partials(pg, pb, c * n, dy, x, gamma, base, n, inner, mu, inv)
        else:
            sdy, sdyx = row_dy_sums(dy, x, gamma, base, n, inner, mu, per_pos)
            sdyx *= inv
        g = 1.0
        if not per_pos:
            g = gamma[r % groups]
            if part:  # one chunk per row: its row sums are its partials
                pg[c] += sdyx
                pb[c] += sdy
            sdy *= g
            sdyx *= g
        if m_dx != NULL:
            _row_dx(
                dx, dy, x, gamma, dmean, dstd, sc, c, r, base, n, inner, n, mu, inv, sdy, sdyx,
                g, per_pos, m_dx, dstats,
            )  # fmt: skip


@parallel_for
def _sum_columns(col, out, part, count, stride, inner, mode):
    """out[col] = sum over t < count and q < inner of part[t * stride + col * inner + q]."""
    s = 0.0
    for t in range(count):
        for q in range(inner):
            s += part[uindex(t * stride + col * inner + q)]
    store(out, col, s, mode)


def _acc_dtype(x: Any) -> Any:
    """The dtype of per-row scalars and partial sums: x's (float16, on a GPU: float32)."""
    return np.float64 if x.dtype == np.float64 else np.float32


def norm_forward(
    ctx: Any,
    outputs: list[Any],
    modes: list[int],
    x: Any,
    gamma: Any,
    beta: Any,
    layout: tuple[int, int, int],
    groups: int,
    eps: float,
    stat_var: bool = False,
) -> None:
    """(out, mean, std or var) for x viewed as layout = (rows, n, inner); groups > 0:
    gamma per row (r % groups), else per position in the row. On a GPU a row near the last
    axis takes a thread block, or few long rows several (_norm_rows_cuda.forward_gpu),
    elsewhere a thread."""
    rows, n, inner = layout
    if rows == 0 or n == 0 or all(m == NULL for m in modes):
        return
    out, mean, std = (a.reshape(-1) for a in outputs)
    sc = ctx.requested[0].get_space((2 * rows,), _acc_dtype(x))
    args = (out, mean, std, sc, x.reshape(-1), gamma, beta, n, inner, groups, eps, stat_var, *modes)
    if is_gpu(ctx):
        from nnvmpy.ops.nn._norm_rows_cuda import forward_gpu

        forward_gpu(ctx, args, layout)
    else:
        run_rows(ctx, "norm_forward", _norm_forward_row, rows, *args)


def norm_backward(
    ctx: Any,
    grads: list[Any],
    modes: list[int],
    dy: Any,
    x: Any,
    gamma: Any,
    mean: Any,
    std: Any,
    layout: tuple[int, int, int],
    groups: int,
    eps: float = 0.0,
    stat_var: bool = False,
    dstats: tuple[Any, Any] | None = None,
) -> None:
    """(dx, dgamma, dbeta) from dy (and, when given, the gradients of the mean and std
    outputs); groups > 0: gamma per row (r % groups), else per position. The temp space
    resource (ctx.requested[0]) holds the partial sums."""
    rows, n, _ = layout
    if rows == 0 or n == 0 or all(m == NULL for m in modes):
        return
    mean, std = mean.reshape(-1), std.reshape(-1)
    dmean, dstd = (mean, std) if dstats is None else (a.reshape(-1) for a in dstats)
    arrays = (grads[0].reshape(-1), dy.reshape(-1), x.reshape(-1), gamma, mean, std, dmean, dstd)
    params = (groups, eps, stat_var)
    if is_gpu(ctx):
        from nnvmpy.ops.nn._norm_rows_cuda import backward_gpu

        backward_gpu(ctx, grads, modes, arrays, layout, params, dstats is not None)
    else:
        _backward_cpu(ctx, grads, modes, arrays, layout, params, dstats is not None)


def _space(ctx: Any, width: int, slots: int, x: Any) -> tuple[Any, Any, Any]:
    """(pg, pb, sc) from the temp space: float64 partial sums of `width` each (float64
    whatever x is: float32 put dgamma of a (4096, 512) float32 layer 2e-4 from the exact
    sum, MXNet's test_layer_norm asks 1e-4), and `slots` per-row scalars in x's float type."""
    acc = np.dtype(_acc_dtype(x))
    words = -(-slots * acc.itemsize // 8)
    space = ctx.requested[0].get_space((2 * width + words,), np.float64)
    return space[:width], space[width : 2 * width], space[2 * width :].view(acc)[:slots]


def _sum_partials(
    ctx: Any, grads: list[Any], modes: list[int], pg: Any, pb: Any, sizes: tuple[int, int, int]
) -> None:
    """dgamma, dbeta (as their modes say) from the partials: sizes = (count, stride, inner)."""
    count, stride, inner = sizes
    for grad, mode, p in ((grads[1], modes[1], pg), (grads[2], modes[2], pb)):
        if mode != NULL:
            _sum_columns.launch(ctx, stride // inner, grad, p, *sizes, mode, work=count * stride)


#: How many chunks of rows the CPU backward splits a per-position (LayerNorm) layer into:
#: a constant, not a multiple of the thread count, so that dgamma/dbeta add their partials
#: in the same order whatever NNVMPY_NUM_THREADS and the load governor (threads.py) leave
#: the launch (4 x threads made float64 dgamma differ in the last bits from one thread
#: count to another, and so from run to run on a busy machine)
CPU_CHUNKS = 64


def _backward_cpu(
    ctx: Any, grads: list[Any], modes: list[int], arrays: tuple[Any, ...],
    layout: tuple[int, int, int], params: tuple[int, float, bool], dstats: bool,
) -> None:  # fmt: skip
    """Chunks of rows (CPU_CHUNKS, or one per row with per-row gamma), each summing into
    its own row of the partials in the pass that takes its rows' sums."""
    rows, n, inner = layout
    groups = params[0]
    part = modes[1] != NULL or modes[2] != NULL
    chunks, ncol = (rows, 1) if groups > 0 else (min(rows, CPU_CHUNKS), n)
    rpc = -(-rows // chunks)
    chunks = -(-rows // rpc)
    pg, pb, sc = _space(ctx, chunks * ncol if part else 0, 5 * chunks, arrays[2])
    dx, dy, x, gamma, mean, std, dmean, dstd = arrays
    args = (dx, pg, pb, sc, dy, x, gamma, mean, std, dmean, dstd, rows, rpc, n, inner, *params)
    _norm_backward_chunk.launch(ctx, chunks, *args, modes[0], part, dstats, work=rows * n)
    if part:  # per position: a partial row per chunk; per row r = i * groups + g: one each
        sizes = (chunks, n, 1) if groups == 0 else (rows // groups, groups, 1)
        _sum_partials(ctx, grads, modes, pg, pb, sizes)


__all__ = [
    "norm_backward",
    "norm_forward",
    "row_axpby",
    "row_dy_sums",
    "row_scale_shift",
    "row_sqdev",
    "row_sum",
]
