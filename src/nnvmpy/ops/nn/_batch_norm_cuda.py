"""BatchNorm's GPU kernels: each channel split among S blocks, so that few channels still
fill the device (batch_norm.py has the formulas and the CPU kernels).

ResNet's first layers have 64 channels of 64 * 112 * 112 elements: one block per channel
is 64 blocks on a GPU with 132 SMs, too few loads in flight to reach the memory's
bandwidth. Here a statistics kernel on a grid of C * S blocks writes per-block partial
sums, the last of a channel's S blocks to finish combines them (statistics, moving
statistics, per-channel coefficients), and an element-wise kernel applies the
coefficients: two launches a pass. Which block is last is counted per channel with an
atomic counter (each block fences its partial sums first, and the last one reads them
through atomics, at L2); the counters are zero between launches, the last block resetting
its channel's, and each stream has its own (`channel_counters`). That combining step was
a kernel of its own with a thread per channel: 40 of a ResNet-18 training step's ~310
launches. Inference, and a backward needing dx alone from global statistics, have no sums:
a kernel with a thread per channel makes their coefficients.
"""

from __future__ import annotations

import math
import threading
from typing import Any

import numpy as np

from ...kernel import device_function, scratch
from ...kernel.cuda import launch_config, launch_kernel, simulated
from ...kernel.elementwise import launch_context
from ...kernel.launch import (  # cuda: a placeholder bound when a kernel compiles
    NULL,
    WRITE,
    cuda,
    flat,
    gpu_kernel,
    store,
    uindex,
)

_BLOCK = 256  # threads per block of the statistics kernel (a power of two; shared arrays)
STAT_BLOCKS_PER_SM = 4  # statistics blocks per SM (C * S of them): enough loads in flight

# Scratch `work` (float64): coef[3 c + k] per channel, then part[3 C + 2 (c S + s) + k].


@device_function
def relu_grad(g, y):
    # relu's gradient of g at its output y, as MXNet's relu_grad and _backward_relu: g where
    # y > 0, NaN where y is, else g * 0 (0, or NaN for an infinite g)
    if y > 0:
        return g
    return y if y != y else g - g


@device_function
def _thread_sums(x, dy, y, g_out, g_mode, m, s, S, outer, C, c, inner, tin, tid, nt, grad, relu):
    # this thread's share of channel c's sums in block s of S: it takes `tin` elements of
    # a row and nt // tin rows at a time (rows shorter than a block). Forward: sum(x - x0),
    # sum((x - x0)^2) with x0 the channel's first value (shifted sums: one pass, and
    # stable); grad: sum(dy), sum(dy * (x - mean)). Summed in float64, each element's terms
    # in float32 (float16 data too) or float64; float() keeps the simulator's NumPy scalars
    # from computing float16 - Python float in float16 (NEP 50). relu (grad only): dy taken
    # through relu's gradient at its output y first (batch_norm_relu.py), which is also
    # stored into g_out unless g_mode is NULL (the residual's gradient)
    rows = nt // tin
    r = tid // tin
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
                    if relu:
                        w0 = relu_grad(w0, float(y[j0]))
                        w1 = relu_grad(w1, float(y[j1]))
                        w2 = relu_grad(w2, float(y[j2]))
                        w3 = relu_grad(w3, float(y[j3]))
                        store(g_out, j0, w0, g_mode)
                        store(g_out, j1, w1, g_mode)
                        store(g_out, j2, w2, g_mode)
                        store(g_out, j3, w3, g_mode)
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
                if relu:
                    w = relu_grad(w, float(y[j]))
                    store(g_out, j, w, g_mode)
                acc += w
                acc2 += w * d
                i += tin
    return acc, acc2


@device_function
def _channel_block(
    work, counters, s_acc, s_acc2, x, dy, y, g_out, g_mode, mean, S, outer, C, inner, tin,
    grad, relu,
):  # fmt: skip
    # block b's share of channel c = b % C's sums (rows o = s, s + S, ... with s = b // C)
    # stored as its partials: (c, True) in thread 0 of the channel's last block to finish,
    # which the other blocks' partials are then visible to (each fenced its stores before
    # counting itself), and which resets the channel's counter; (c, False) elsewhere
    b = cuda.blockIdx.x
    s = b // C
    c = b - s * C
    tid = cuda.threadIdx.x
    nt = cuda.blockDim.x
    m = float(mean[c]) if grad else float(x[c * inner])
    acc, acc2 = _thread_sums(x, dy, y, g_out, g_mode, m, s, S, outer, C, c, inner, tin, tid, nt,
                             grad, relu)  # fmt: skip
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
    if tid != 0:
        return c, False
    p = 3 * C + 2 * (c * S + s)
    work[p] = s_acc[0]
    work[p + 1] = s_acc2[0]
    cuda.threadfence()
    if cuda.atomic.add(counters, c, 1) != S - 1:
        return c, False
    counters[c] = 0
    cuda.threadfence()
    return c, True


@device_function
def _partials(work, c, S, C):
    # channel c's S partial sums added up, read through atomics (at L2): the last block
    # reads what other blocks, on other SMs, stored during this launch
    s = 0.0
    ss = 0.0
    for k in range(S):
        p = 3 * C + 2 * (c * S + k)
        s += cuda.atomic.add(work, p, 0.0)
        ss += cuda.atomic.add(work, p + 1, 0.0)
    return s, ss


@device_function
def _forward_finish(
    work, c, s, ss, mean, var, x, gamma, beta, mm, mv, size, C, inner,
    eps, momentum, fix_gamma, train, m_mean, m_var, invstd_out,
):  # fmt: skip
    # channel c's statistics from its sums (s, ss) (or the moving ones), the moving
    # statistics updated, and y = x * scale + shift's coefficients:
    # scale = gamma / sqrt(var + eps), shift = beta - mean * scale
    if train:
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


@device_function
def _backward_finish(
    work, c, sdy, sdyx, dgamma, dbeta, gamma, var, size,
    eps, fix_gamma, batch, m_dgamma, m_dbeta, var_is_invstd,
):  # fmt: skip
    # channel c's dgamma, dbeta, and dx = k * (dy - a - (x - mean) * b)'s k, a, b from its
    # sums (sdy, sdyx); var: the forward's 1 / sqrt(var + eps), or var (BatchNorm_v1)
    invstd = float(var[c]) if var_is_invstd else 1.0 / math.sqrt(var[c] + eps)
    store(dgamma, c, 0.0 if fix_gamma else sdyx * invstd, m_dgamma)
    store(dbeta, c, sdy, m_dbeta)
    work[3 * c] = (1.0 if fix_gamma else float(gamma[c])) * invstd
    work[3 * c + 1] = sdy / size if batch else 0.0
    work[3 * c + 2] = sdyx * invstd * invstd / size if batch else 0.0


@gpu_kernel
def _bn_sums_forward_cuda(
    work, counters, x, S, outer, C, inner, tin, mean, var, gamma, beta, mm, mv,
    eps, momentum, fix_gamma, m_mean, m_var, invstd_out,
):  # fmt: skip
    # C * S blocks of channel sums; each channel's last block finishes it (_forward_finish)
    s_acc = cuda.shared.array(_BLOCK, np.float64)
    s_acc2 = cuda.shared.array(_BLOCK, np.float64)
    c, last = _channel_block(work, counters, s_acc, s_acc2, x, x, x, x, NULL, mean, S, outer, C,
                             inner, tin, False, False)  # fmt: skip
    if last:
        t, t2 = _partials(work, c, S, C)
        size = outer * inner
        _forward_finish(work, c, t, t2, mean, var, x, gamma, beta, mm, mv, size, C, inner,
                        eps, momentum, fix_gamma, True, m_mean, m_var, invstd_out)  # fmt: skip


@gpu_kernel
def _bn_sums_backward_cuda(
    work, counters, x, dy, y, dres, mean, S, outer, C, inner, tin, dgamma, dbeta, gamma, var,
    eps, fix_gamma, batch, m_dgamma, m_dbeta, var_is_invstd, relu, m_dres,
):  # fmt: skip
    # the same for the gradient: sums of dy and dy * (x - mean), then _backward_finish
    # (relu: of dy taken through relu's gradient at y, stored into dres unless m_dres is
    # NULL)
    s_acc = cuda.shared.array(_BLOCK, np.float64)
    s_acc2 = cuda.shared.array(_BLOCK, np.float64)
    c, last = _channel_block(work, counters, s_acc, s_acc2, x, dy, y, dres, m_dres, mean, S,
                             outer, C, inner, tin, True, relu)  # fmt: skip
    if last:
        t, t2 = _partials(work, c, S, C)
        _backward_finish(work, c, t, t2, dgamma, dbeta, gamma, var, outer * inner, eps,
                         fix_gamma, batch, m_dgamma, m_dbeta, var_is_invstd)  # fmt: skip


@gpu_kernel
def _bn_forward_finish_cuda(
    work, mean, var, x, gamma, beta, mm, mv, size, C, inner,
    eps, momentum, fix_gamma, m_mean, m_var, invstd_out,
):  # fmt: skip
    # inference: a thread per channel, from the moving statistics
    for c in range(cuda.grid(1), C, cuda.gridsize(1)):
        _forward_finish(work, c, 0.0, 0.0, mean, var, x, gamma, beta, mm, mv, size, C, inner,
                        eps, momentum, fix_gamma, False, m_mean, m_var, invstd_out)  # fmt: skip


@gpu_kernel
def _bn_backward_finish_cuda(
    work, dgamma, dbeta, gamma, var, size, C, eps, fix_gamma, m_dgamma, m_dbeta,
    var_is_invstd,
):  # fmt: skip
    # global statistics, dx alone: a thread per channel, dx = gamma / sqrt(var + eps) * dy
    for c in range(cuda.grid(1), C, cuda.gridsize(1)):
        _backward_finish(work, c, 0.0, 0.0, dgamma, dbeta, gamma, var, size, eps, fix_gamma,
                         False, m_dgamma, m_dbeta, var_is_invstd)  # fmt: skip


@device_function
def _bn_value(work, mean, c, xv, g, yv, grad, relu, residual):
    # channel c's x * scale + shift (forward; + g, the residual, with residual),
    # k * (dy - a - (x - mean) * b) (grad: g = dy); relu: forward, relu of it (NaN stays
    # NaN, <= 0 becomes +0); grad, dy taken through relu's gradient at the output yv first
    k = 3 * c
    if grad:
        if relu:
            g = relu_grad(g, yv)
        return work[k] * (g - work[k + 1] - (xv - mean[c]) * work[k + 2])
    v = xv * work[k] + work[k + 1]
    if residual:
        v += float(g)
    if relu and v <= 0:
        return 0.0
    return v


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
def _bn_apply_cuda(out, x, dy, y, mean, work, n, C, inner, mode, grad, relu, residual):
    # out (+)= _bn_value (dy: the residual in a forward with one; y: relu's output in a
    # relu backward; else unread), grid-stride,
    # four elements a stride apart per pass, all loaded
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
        y0, y1, y2, y3 = x0, x1, x2, x3
        if grad or residual:
            g0 = dy[j0]
            g1 = dy[j1]
            g2 = dy[j2]
            g3 = dy[j3]
        if grad and relu:
            y0 = y[j0]
            y1 = y[j1]
            y2 = y[j2]
            y3 = y[j3]
        v0 = _bn_value(work, mean, c0, x0, g0, y0, grad, relu, residual)
        v1 = _bn_value(work, mean, c1, x1, g1, y1, grad, relu, residual)
        v2 = _bn_value(work, mean, c2, x2, g2, y2, grad, relu, residual)
        v3 = _bn_value(work, mean, c3, x3, g3, y3, grad, relu, residual)
        store(out, i, v0, mode)
        store(out, i + step, v1, mode)
        store(out, i + 2 * step, v2, mode)
        store(out, i + 3 * step, v3, mode)
        i += 4 * step
        col0, c0 = _next_channel(col0, c0, dcol4, dc4, inner, C)
        col1, c1 = _next_channel(col1, c1, dcol4, dc4, inner, C)
        col2, c2 = _next_channel(col2, c2, dcol4, dc4, inner, C)
        col3, c3 = _next_channel(col3, c3, dcol4, dc4, inner, C)
    if i < n:  # the last pass: up to three elements
        j = uindex(i)
        v = _bn_value(work, mean, c0, x[j], dy[j], y[j], grad, relu, residual)
        store(out, i, v, mode)
    if i + step < n:
        j = uindex(i + step)
        v = _bn_value(work, mean, c1, x[j], dy[j], y[j], grad, relu, residual)
        store(out, i + step, v, mode)
    if i + 2 * step < n:
        j = uindex(i + 2 * step)
        v = _bn_value(work, mean, c2, x[j], dy[j], y[j], grad, relu, residual)
        store(out, i + 2 * step, v, mode)


def stat_grid(outer: int, C: int, inner: int, threads: int, sms: int) -> tuple[int, int]:
    """(tin, S) for _bn_sums_cuda: `tin` threads share a row (threads // tin rows at a time),
    and each channel's rows are split among S blocks, S = ceil(STAT_BLOCKS_PER_SM * sms / C)
    so that C * S blocks keep every SM busy, at most as many as give each block a full set
    of rows."""
    tin = min(threads, inner)
    S = min(-(-STAT_BLOCKS_PER_SM * sms // C), -(-outer // (threads // tin)))
    return tin, max(S, 1)


def _channel_sums(
    ctx: Any, stream: Any, kernel: Any, shape: tuple[int, int, int], head: tuple, tail: tuple
) -> Any:
    """The scratch `work` after a sums kernel (forward or backward) on C * S blocks, whose
    last block per channel also finished the channel: kernel(work, counters, *head, S,
    outer, C, inner, tin, *tail)."""
    from nnvmpy.kernel.cuda import context_sm_count

    outer, C, inner = shape
    limit = 32 if simulated() else _BLOCK  # simulated threads are Python threads
    threads = min(limit, max(32, 1 << (outer * inner - 1).bit_length()))
    tin, S = stat_grid(outer, C, inner, threads, context_sm_count(ctx, "BatchNorm"))
    work = scratch.empty(ctx, 3 * C + 2 * C * S, np.float64)
    args = (work, channel_counters(ctx, stream, C), *head, S, outer, C, inner, tin, *tail)
    launch_kernel(kernel.dispatcher, C * S, threads, stream, args)
    return work


#: (device, id(stream)) -> (stream, int32 counters): zero between launches (the last
#: block of a channel resets its own), one array per stream (launches on one stream run
#: in order; two streams' must not share)
_counters: dict[tuple[int, int], tuple[Any, Any]] = {}
_counters_lock = threading.Lock()


def channel_counters(ctx: Any, stream: Any, C: int) -> Any:
    """At least C zeroed int32 block counters for the sums kernels on `stream`."""
    from nnvmpy.kernel.cuda import get_cuda

    device_id = launch_context("BatchNorm", ctx, None).device_id
    key = (device_id, id(stream))
    found = _counters.get(key)
    if found is None or found[0] is not stream or found[1].size < C:
        size = max(1024, 1 << (C - 1).bit_length())
        with _counters_lock:  # made once per stream (or when a wider C comes)
            counters = get_cuda("BatchNorm").to_device(np.zeros(size, np.int32))
            found = _counters[key] = (stream, counters)
    return found[1]


def forward_gpu(
    ctx: Any, arrays: list[Any], shape: tuple[int, int, int], p: Any, train: bool,
    modes: list[int], invstd_out: bool, relu: bool = False, residual: bool = False,
) -> None:  # fmt: skip
    """BatchNorm's forward (arrays: outputs, then inputs, then the residual or x again);
    relu: relu of the output (plus the residual, with residual) as it is written."""
    out, mean, var, x, gamma, beta, mm, mv, res = (flat(a) for a in arrays)
    m_out, m_mean, m_var = modes
    outer, C, inner = shape
    _, _, stream, device = launch_config("BatchNorm", ctx, 1)
    with device:
        if train:  # statistics, finished by each channel's last block
            tail = (mean, var, gamma, beta, mm, mv, p.eps, p.momentum, p.fix_gamma, m_mean,
                    m_var, invstd_out)  # fmt: skip
            work = _channel_sums(ctx, stream, _bn_sums_forward_cuda, shape, (x,), tail)
        else:  # inference: the moving statistics, no sums
            work = scratch.empty(ctx, 3 * C, np.float64)
            _bn_forward_finish_cuda.launch(
                ctx, C, work, mean, var, x, gamma, beta, mm, mv, outer * inner, C, inner,
                p.eps, p.momentum, p.fix_gamma, m_mean, m_var, invstd_out,
            )  # fmt: skip
        if m_out != NULL:
            _bn_apply_cuda.launch(
                ctx, x.size, out, x, res, x, mean, work, x.size, C, inner, m_out, False, relu,
                residual,
            )  # fmt: skip


def backward_gpu(
    ctx: Any, arrays: list[Any], shape: tuple[int, int, int], p: Any, batch: bool,
    modes: list[int], var_is_invstd: bool, relu: bool = False,
) -> None:  # fmt: skip
    """BatchNorm's backward (arrays: outputs (dx, dgamma, dbeta, dres), then inputs (dy, x,
    gamma, mean, var, y)); relu: dy taken through relu's gradient at the forward's output y
    first, that gradient stored into dres too unless its mode (modes[3]) is NULL."""
    dx, dgamma, dbeta, dres, dy, x, gamma, mean, var, y = (flat(a) for a in arrays)
    m_dx, m_dgamma, m_dbeta, m_dres = modes
    outer, C, inner = shape
    _, _, stream, device = launch_config("_backward_BatchNorm", ctx, 1)
    with device:
        if m_dgamma != NULL or m_dbeta != NULL or (batch and m_dx != NULL) or m_dres != NULL:
            tail = (dgamma, dbeta, gamma, var, p.eps, p.fix_gamma, batch, m_dgamma, m_dbeta,
                    var_is_invstd, relu, m_dres)  # fmt: skip
            head = (x, dy, y, dres, mean)
            work = _channel_sums(ctx, stream, _bn_sums_backward_cuda, shape, head, tail)
        else:  # global statistics, dx alone: dx = gamma / sqrt(var + eps) * dy
            work = scratch.empty(ctx, 3 * C, np.float64)
            _bn_backward_finish_cuda.launch(
                ctx, C, work, dgamma, dbeta, gamma, var, outer * inner, C, p.eps,
                p.fix_gamma, m_dgamma, m_dbeta, var_is_invstd,
            )  # fmt: skip
        if m_dx != NULL:
            # relu's gradient of dy is in dres when it was written there alone: read it
            g, g_relu = (dres, False) if relu and m_dres == WRITE else (dy, relu)
            _bn_apply_cuda.launch(
                ctx, x.size, dx, x, g, y, mean, work, x.size, C, inner, m_dx, True, g_relu,
                False,
            )  # fmt: skip
