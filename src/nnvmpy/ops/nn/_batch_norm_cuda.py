"""BatchNorm's GPU kernels: each channel split among S blocks, so that few channels still
fill the device (batch_norm.py has the formulas and the CPU kernels).

ResNet's first layers have 64 channels of 64 * 112 * 112 elements: one block per channel
is 64 blocks on a GPU with 132 SMs, too few loads in flight to reach the memory's
bandwidth. Here a statistics kernel on a grid of C * S blocks writes per-block partial
sums, a kernel with a thread per channel combines them (statistics, moving statistics,
per-channel coefficients), and an element-wise kernel applies the coefficients.
Inference runs the last two only.
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
    flat,
    gpu_kernel,
    store,
    uindex,
)

_BLOCK = 256  # threads per block of the statistics kernel (a power of two; shared arrays)
STAT_BLOCKS_PER_SM = 4  # statistics blocks per SM (C * S of them): enough loads in flight

# Scratch `work` (float64): coef[3 c + k] per channel, then part[3 C + 2 (c S + s) + k].


@gpu_kernel
def _bn_sums_cuda(work, x, dy, mean, S, outer, C, inner, tin, grad):
    # block b: channel c = b % C, rows o = s, s + S, ... (s = b // C); its threads take
    # `tin` elements of a row and nt // tin rows at a time (rows shorter than a block).
    # Forward: sum(x - x0), sum((x - x0)^2) with x0 the channel's first value (shifted
    # sums: one pass, and stable); grad: sum(dy), sum(dy * (x - mean)). Summed in float64,
    # each element's terms in float32 (float16 data too) or float64; float() keeps the
    # simulator's NumPy scalars from computing float16 - Python float in float16 (NEP 50)
    b = cuda.blockIdx.x
    s = b // C
    c = b - s * C
    tid = cuda.threadIdx.x
    nt = cuda.blockDim.x
    rows = nt // tin
    r = tid // tin
    m = float(mean[c]) if grad else float(x[c * inner])
    acc = 0.0
    acc2 = 0.0
    if r < rows:
        for o in range(s + r * S, outer, S * rows):
            base = (o * C + c) * inner
            i = tid - r * tin
            # four elements a pass, all loaded before any is summed: four loads in flight
            # per thread instead of one (a channel's sums are few blocks; memory latency,
            # not bandwidth, bounds them); summed in the same order as one at a time
            while i + 3 * tin < inner:
                j0 = uindex(base + i)
                j1 = uindex(base + i + tin)
                j2 = uindex(base + i + 2 * tin)
                j3 = uindex(base + i + 3 * tin)
                x0 = float(x[j0])
                x1 = float(x[j1])
                x2 = float(x[j2])
                x3 = float(x[j3])
                if grad:
                    w0 = float(dy[j0])
                    w1 = float(dy[j1])
                    w2 = float(dy[j2])
                    w3 = float(dy[j3])
                else:
                    w0 = x0 - m
                    w1 = x1 - m
                    w2 = x2 - m
                    w3 = x3 - m
                acc += w0
                acc2 += w0 * (x0 - m)
                acc += w1
                acc2 += w1 * (x1 - m)
                acc += w2
                acc2 += w2 * (x2 - m)
                acc += w3
                acc2 += w3 * (x3 - m)
                i += 4 * tin
            while i < inner:
                j = uindex(base + i)
                d = float(x[j]) - m
                w = float(dy[j]) if grad else d
                acc += w
                acc2 += w * d
                i += tin
    s_acc = cuda.shared.array(_BLOCK, np.float64)
    s_acc2 = cuda.shared.array(_BLOCK, np.float64)
    s_acc[tid] = acc
    s_acc2[tid] = acc2
    cuda.syncthreads()
    step = nt // 2
    while step > 0:
        if tid < step:
            s_acc[tid] += s_acc[tid + step]
            s_acc2[tid] += s_acc2[tid + step]
        cuda.syncthreads()
        step //= 2
    if tid == 0:
        p = 3 * C + 2 * (c * S + s)
        work[p] = s_acc[0]
        work[p + 1] = s_acc2[0]


@gpu_kernel
def _bn_forward_finish_cuda(
    work, mean, var, x, gamma, beta, mm, mv, S, size, C, inner,
    eps, momentum, fix_gamma, train, m_mean, m_var, invstd_out,
):  # fmt: skip
    # a thread per channel: statistics from the S partials (or the moving ones), then
    # y = x * scale + shift with scale = gamma / sqrt(var + eps), shift = beta - mean * scale
    for c in range(cuda.grid(1), C, cuda.gridsize(1)):
        if train:
            s = 0.0
            ss = 0.0
            for k in range(S):
                s += work[3 * C + 2 * (c * S + k)]
                ss += work[3 * C + 2 * (c * S + k) + 1]
            dmean = s / size
            mu = float(x[c * inner]) + dmean
            v = max(ss / size - dmean * dmean, 0.0)
            mm[c] = momentum * float(mm[c]) + (1.0 - momentum) * mu
            mv[c] = momentum * float(mv[c]) + (1.0 - momentum) * v
        else:
            mu = float(mm[c])
            v = float(mv[c])
        store(mean, c, mu, m_mean)
        store(var, c, 1.0 / math.sqrt(v + eps) if invstd_out else v, m_var)
        scale = (1.0 if fix_gamma else float(gamma[c])) / math.sqrt(v + eps)
        work[3 * c] = scale
        work[3 * c + 1] = float(beta[c]) - mu * scale


@gpu_kernel
def _bn_backward_finish_cuda(
    work, dgamma, dbeta, gamma, var, S, size, C,
    eps, fix_gamma, batch, m_dgamma, m_dbeta, var_is_invstd,
):  # fmt: skip
    # a thread per channel: dgamma, dbeta, and dx = k * (dy - a - (x - mean) * b)'s k, a, b
    for c in range(cuda.grid(1), C, cuda.gridsize(1)):
        # the forward's output: 1 / sqrt(var + eps), or var itself (BatchNorm_v1)
        invstd = float(var[c]) if var_is_invstd else 1.0 / math.sqrt(var[c] + eps)
        sdy = 0.0
        sdyx = 0.0
        for k in range(S):
            sdy += work[3 * C + 2 * (c * S + k)]
            sdyx += work[3 * C + 2 * (c * S + k) + 1]
        store(dgamma, c, 0.0 if fix_gamma else sdyx * invstd, m_dgamma)
        store(dbeta, c, sdy, m_dbeta)
        work[3 * c] = (1.0 if fix_gamma else float(gamma[c])) * invstd
        work[3 * c + 1] = sdy / size if batch else 0.0
        work[3 * c + 2] = sdyx * invstd * invstd / size if batch else 0.0


@device_function
def _bn_value(work, mean, c, xv, g, grad):
    # channel c's x * scale + shift (forward), k * (dy - a - (x - mean) * b) (grad: g = dy)
    k = 3 * c
    if grad:
        return work[k] * (g - work[k + 1] - (xv - mean[c]) * work[k + 2])
    return xv * work[k] + work[k + 1]


@device_function
def _next_channel(col, c, dcol, dc, inner, C):
    # (position in the row, channel) moved on by a stride whose digits are (dc, dcol):
    # dcol < inner and dc < C, so one carry and one wrap at most
    col += dcol
    c += dc
    if col >= inner:
        col -= inner
        c += 1
    if c >= C:
        c -= C
    return col, c


@gpu_kernel
def _bn_apply_cuda(out, x, dy, mean, work, n, C, inner, mode, grad):
    # out (+)= _bn_value, grid-stride, four elements a stride apart per pass, all loaded
    # before any is stored (as kernel/cuda_loop.py's element-wise loops: one load at a
    # time is too few in flight for the memory's latency); each element's channel is
    # carried along the stride, not divided out
    i = cuda.grid(1)
    step = cuda.gridsize(1)
    row = i // inner
    col0 = i - row * inner
    c0 = row % C
    drow = step // inner
    dcol = step - drow * inner
    dc = drow % C
    col1, c1 = _next_channel(col0, c0, dcol, dc, inner, C)
    col2, c2 = _next_channel(col1, c1, dcol, dc, inner, C)
    col3, c3 = _next_channel(col2, c2, dcol, dc, inner, C)
    drow4 = 4 * step // inner
    dcol4 = 4 * step - drow4 * inner
    dc4 = drow4 % C
    while i + 3 * step < n:
        j0 = uindex(i)
        j1 = uindex(i + step)
        j2 = uindex(i + 2 * step)
        j3 = uindex(i + 3 * step)
        x0 = x[j0]
        x1 = x[j1]
        x2 = x[j2]
        x3 = x[j3]
        g0, g1, g2, g3 = x0, x1, x2, x3
        if grad:
            g0 = dy[j0]
            g1 = dy[j1]
            g2 = dy[j2]
            g3 = dy[j3]
        store(out, i, _bn_value(work, mean, c0, x0, g0, grad), mode)
        store(out, i + step, _bn_value(work, mean, c1, x1, g1, grad), mode)
        store(out, i + 2 * step, _bn_value(work, mean, c2, x2, g2, grad), mode)
        store(out, i + 3 * step, _bn_value(work, mean, c3, x3, g3, grad), mode)
        i += 4 * step
        col0, c0 = _next_channel(col0, c0, dcol4, dc4, inner, C)
        col1, c1 = _next_channel(col1, c1, dcol4, dc4, inner, C)
        col2, c2 = _next_channel(col2, c2, dcol4, dc4, inner, C)
        col3, c3 = _next_channel(col3, c3, dcol4, dc4, inner, C)
    if i < n:  # the last pass: up to three elements
        j = uindex(i)
        store(out, i, _bn_value(work, mean, c0, x[j], dy[j], grad), mode)
    if i + step < n:
        j = uindex(i + step)
        store(out, i + step, _bn_value(work, mean, c1, x[j], dy[j], grad), mode)
    if i + 2 * step < n:
        j = uindex(i + 2 * step)
        store(out, i + 2 * step, _bn_value(work, mean, c2, x[j], dy[j], grad), mode)


def stat_grid(outer: int, C: int, inner: int, threads: int, sms: int) -> tuple[int, int]:
    """(tin, S) for _bn_sums_cuda: `tin` threads share a row (threads // tin rows at a time),
    and each channel's rows are split among S blocks, S = ceil(STAT_BLOCKS_PER_SM * sms / C)
    so that C * S blocks keep every SM busy, at most as many as give each block a full set
    of rows."""
    tin = min(threads, inner)
    S = min(-(-STAT_BLOCKS_PER_SM * sms // C), -(-outer // (threads // tin)))
    return tin, max(S, 1)


def _channel_sums(
    ctx: Any, stream: Any, x: Any, dy: Any, mean: Any, shape: tuple[int, int, int], grad: bool
) -> tuple[Any, int]:
    """(work, S): the scratch array with each channel's S partial sums in its part."""
    from nnvmpy.kernel.cuda import context_sm_count

    outer, C, inner = shape
    limit = 32 if simulated() else _BLOCK  # simulated threads are Python threads
    threads = min(limit, max(32, 1 << (outer * inner - 1).bit_length()))
    tin, S = stat_grid(outer, C, inner, threads, context_sm_count(ctx, "BatchNorm"))
    work = scratch.empty(ctx, 3 * C + 2 * C * S, np.float64)
    args = (work, x, dy, mean, S, outer, C, inner, tin, grad)
    launch_kernel(_bn_sums_cuda.dispatcher, C * S, threads, stream, args)
    return work, S


def forward_gpu(
    ctx: Any, arrays: list[Any], shape: tuple[int, int, int], p: Any, train: bool,
    modes: list[int], invstd_out: bool,
) -> None:  # fmt: skip
    out, mean, var, x, gamma, beta, mm, mv = (flat(a) for a in arrays)
    m_out, m_mean, m_var = modes
    outer, C, inner = shape
    _, _, stream, device = launch_config("BatchNorm", ctx, 1)
    with device:
        if train:
            work, S = _channel_sums(ctx, stream, x, x, mean, shape, False)
        else:  # inference: the moving statistics, no sums
            work, S = scratch.empty(ctx, 3 * C, np.float64), 0
        _bn_forward_finish_cuda.launch(
            ctx, C, work, mean, var, x, gamma, beta, mm, mv, S, outer * inner, C, inner,
            p.eps, p.momentum, p.fix_gamma, train, m_mean, m_var, invstd_out,
        )  # fmt: skip
        if m_out != NULL:
            _bn_apply_cuda.launch(
                ctx, x.size, out, x, x, mean, work, x.size, C, inner, m_out, False
            )


def backward_gpu(
    ctx: Any, arrays: list[Any], shape: tuple[int, int, int], p: Any, batch: bool,
    modes: list[int], var_is_invstd: bool,
) -> None:  # fmt: skip
    dx, dgamma, dbeta, dy, x, gamma, mean, var = (flat(a) for a in arrays)
    m_dx, m_dgamma, m_dbeta = modes
    outer, C, inner = shape
    _, _, stream, device = launch_config("_backward_BatchNorm", ctx, 1)
    with device:
        if m_dgamma != NULL or m_dbeta != NULL or (batch and m_dx != NULL):
            work, S = _channel_sums(ctx, stream, x, dy, mean, shape, True)
        else:  # global statistics, dx alone: dx = gamma / sqrt(var + eps) * dy
            work, S = scratch.empty(ctx, 3 * C, np.float64), 0
        _bn_backward_finish_cuda.launch(
            ctx, C, work, dgamma, dbeta, gamma, var, S, outer * inner, C,
            p.eps, p.fix_gamma, batch, m_dgamma, m_dbeta, var_is_invstd,
        )  # fmt: skip
        if m_dx != NULL:
            _bn_apply_cuda.launch(ctx, x.size, dx, x, dy, mean, work, x.size, C, inner, m_dx, True)
