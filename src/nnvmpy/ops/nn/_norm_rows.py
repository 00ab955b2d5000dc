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

dgamma/dbeta are sums across rows, which parallel rows cannot write into one array: the
backward runs over chunks of rows, each summing into its own row of a partials array
(chunk c: partial[c * ncol + col]; per-row gamma: one chunk per row; float64 for every
dtype) in the same pass over a row that takes its sums, and a second loop adds the
partials column by column (`_sum_columns`). Per-row scalars are stored into a small
scratch array of the data's float type and read back (`_typed`), so a float32 row is
computed in float32. Every loop is a
`kernel.parallel_for` body, so the CPU (prange) and the GPU (a thread per item) run the
same code. The statistics are written as mean and std, or mean and var (`stat_var`,
InstanceNorm's hidden outputs are named like MXNet's).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...kernel import device_function, parallel_for
from ...kernel.launch import ADD, NULL, is_gpu, store, uindex
from ._layer_util import cpu_threads, row_function

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


@parallel_for
def _norm_forward_row(
    r, out, mean, std, sc, x, gamma, beta, n, inner, groups, eps, stat_var, m_out, m_mean, m_std
):
    o = r // inner
    base = o * n * inner + (r - o * inner)
    mu = row_sum(x, base, n, inner) / n
    var = row_sqdev(x, base, n, inner, mu) / n
    sd = math.sqrt(var + eps)
    store(mean, r, mu, m_mean)
    store(std, r, var if stat_var else sd, m_std)
    if m_out == NULL:
        return
    if groups > 0:  # one gamma per row: y = x * a + b
        a = gamma[r % groups] / sd
        b = beta[r % groups] - mu * a
        a_t, b_t = _typed(sc, 2 * r, a), _typed(sc, 2 * r + 1, b)
        row_scale_shift(out, x, base, n, inner, a_t, b_t, m_out)
    else:
        mu_t, inv_t = _typed(sc, 2 * r, mu), _typed(sc, 2 * r + 1, 1.0 / sd)
        _row_normalize(out, x, gamma, beta, base, n, inner, mu_t, inv_t, m_out)


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
        o = r // inner
        base = o * n * inner + (r - o * inner)
        mu = _typed(sc, 4 * c, mean[r])
        inv = _typed(sc, 4 * c + 1, 1.0 / (math.sqrt(std[r] + eps) if stat_var else std[r]))
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
            a, b = sdy / n, sdyx / n
            if dstats:  # mean and std were outputs too: d mean / dx = 1/n, d std / dx = xhat/n
                a -= dmean[r] / (inv * n)
                b -= dstd[r] / (inv * n)
            # slot 4c held mu, read into `mu` already
            a_t, b_t, g_t = _typed(sc, 4 * c + 2, a), _typed(sc, 4 * c + 3, b), _typed(sc, 4 * c, g)
            _row_grad(dx, dy, x, gamma, base, n, inner, mu, inv, a_t, b_t, g_t, per_pos, m_dx)


@parallel_for
def _sum_columns(col, out, part, count, stride, mode):
    """out[col] = sum over t < count of part[t * stride + col]."""
    s = 0.0
    for t in range(count):
        s += part[uindex(t * stride + col)]
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
    gamma per row (r % groups), else per position in the row."""
    rows, n, inner = layout
    if rows == 0 or n == 0 or all(m == NULL for m in modes):
        return
    out, mean, std = (a.reshape(-1) for a in outputs)
    sc = ctx.requested[0].get_space((2 * rows,), _acc_dtype(x))
    args = (out, mean, std, sc, x.reshape(-1), gamma, beta, n, inner, groups, eps, stat_var, *modes)
    _norm_forward_row.launch(ctx, rows, *args, work=rows * n)


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
    rows, n, inner = layout
    m_dx, m_dg, m_db = modes
    if rows == 0 or n == 0 or all(m == NULL for m in modes):
        return
    part = m_dg != NULL or m_db != NULL
    gpu = is_gpu(ctx)
    if groups > 0:
        chunks, ncol = rows, 1
    else:
        chunks = min(rows, 2048 if gpu else 4 * cpu_threads())
        ncol = n
    rpc = -(-rows // chunks)
    chunks = -(-rows // rpc)
    # the partial sums are float64 whatever x is: a chunk adds up to rows / chunks
    # products into each, and float32 there put dgamma of a (4096, 512) float32 layer
    # 2e-4 from the exact sum (MXNet's test_layer_norm asks 1e-4); per-row scalars keep
    # x's float type (sc, viewed from the same scratch)
    acc = np.dtype(_acc_dtype(x))
    width = chunks * ncol if part else 0
    sc_words = -(-4 * chunks * acc.itemsize // 8)
    space = ctx.requested[0].get_space((2 * width + sc_words,), np.float64)
    pg, pb = space[:width], space[width : 2 * width]
    sc = space[2 * width :].view(acc)[: 4 * chunks]
    dx = grads[0].reshape(-1)
    mean, std = mean.reshape(-1), std.reshape(-1)
    dmean, dstd = (mean, std) if dstats is None else (a.reshape(-1) for a in dstats)
    args = (dx, pg, pb, sc, dy.reshape(-1), x.reshape(-1), gamma, mean, std, dmean, dstd)
    scalars = (rows, rpc, n, inner, groups, eps, stat_var, m_dx, part, dstats is not None)
    _norm_backward_chunk.launch(ctx, chunks, *args, *scalars, work=rows * n)
    if not part:
        return
    # per position: count = chunks, stride = n; per row r = i * groups + g: count = rows
    # / groups, stride = groups
    count, stride = (chunks, n) if groups == 0 else (rows // groups, groups)
    for grad, mode, p in ((grads[1], m_dg, pg), (grads[2], m_db, pb)):
        if mode != NULL:
            _sum_columns.launch(ctx, stride, grad, p, count, stride, mode, work=count * stride)


__all__ = [
    "norm_backward",
    "norm_forward",
    "row_axpby",
    "row_dy_sums",
    "row_scale_shift",
    "row_sqdev",
    "row_sum",
]
