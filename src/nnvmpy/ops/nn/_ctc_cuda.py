"""CTCLoss's GPU kernels (_ctc_kernels.py has the recursions and the CPU loops).

alpha and beta: a thread per sequence walked T steps of 2L + 1 states, twice, each step a
chain of dependent exp/log (speech: 32 sequences of T ~ 500, L ~ 100 were 32 busy threads
for tens of ms). Here a thread block takes each sequence: its threads take the states
(s = tid, tid + nt, ...), and the block steps through time, a syncthreads between steps,
each step reading the previous column from the alpha/beta scratch the gradient needs
anyway. A state's step is _ctc_kernels' device function, so the values are the CPU's.

The log-sum-exp and the gradient of a row (t, b) walked the alphabet in one thread,
neighbouring threads a row apart (uncoalesced; OCR has 5k classes). From BLOCK_ALPHABET
classes a thread block takes each row (_block_rows.py): its threads stride the alphabet
and reduce in shared memory, in float64. A row's state posteriors come off its softmax
class by class: the blank's summed by the block, each label class's by the thread of its
first position in the label (no two threads write one class). Their sums add in another
order than a thread's loop, so results may differ from the CPU's in the last bits.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...kernel import device_function
from ...kernel.launch import cuda, gpu_kernel, is_gpu, run_rows, store  # cuda: once built
from . import _ctc_kernels as k
from ._block_rows import BLOCK, block_max, block_sum, launch_blocks
from ._ctc_kernels import _alpha_at, _alpha_first, _beta_at, _beta_last, _log_p

STATE_BLOCK = 256  # threads of a sequence's block at most (more states: each takes several)
SIM_STATE_BLOCK = 32  # the same under the simulator, where every thread is a Python thread
BLOCK_ALPHABET = 32  # from this many classes a row (t, b) takes a block, below a thread


# --- a block per sequence ----------------------------------------------------------------


@gpu_kernel
def _alpha_beta_cuda(
    loss, logp, alpha, beta, x, lse, lab, lens, tlen, n, a_len, lmax, s_max, t_max, blank,
    need_beta, mode,
):  # fmt: skip
    # block: sequences b = blockIdx.x, + gridDim.x, ...; its threads: states tid, tid + nt,
    # ... of each step's column, all threads through every syncthreads (steps, n_states
    # and need_beta are the block's own)
    tid, nt = cuda.threadIdx.x, cuda.blockDim.x
    for b in range(cuda.blockIdx.x, n, cuda.gridDim.x):
        steps = tlen[b]
        n_states = 2 * lens[b] + 1
        lb = b * lmax
        ab = b * t_max * s_max
        if steps == 0:  # only the empty label fits (checked on the host): p = 1
            if tid == 0:
                logp[b] = 0.0
                store(loss, b, 0.0, mode)
            continue
        for s in range(tid, n_states, nt):
            alpha[ab + s] = _alpha_first(x, lse, lab, lb, b, a_len, s, blank)
        for t in range(1, steps):
            cuda.syncthreads()  # step t - 1's column is written
            prev = ab + (t - 1) * s_max
            for s in range(tid, n_states, nt):
                v = _alpha_at(alpha, x, lse, lab, lb, prev, t * n + b, a_len, s, blank)
                alpha[prev + s_max + s] = v
        cuda.syncthreads()
        last = ab + (steps - 1) * s_max
        if tid == 0:
            lp = _log_p(alpha, last, n_states)
            logp[b] = lp
            store(loss, b, -lp, mode)
        if need_beta:
            for s in range(tid, n_states, nt):
                beta[last + s] = _beta_last(s, n_states)
            for t in range(steps - 2, -1, -1):
                cuda.syncthreads()  # step t + 1's column is written
                cur = ab + t * s_max
                r = (t + 1) * n + b
                for s in range(tid, n_states, nt):
                    v = _beta_at(beta, x, lse, lab, lb, cur + s_max, r, a_len, s, n_states, blank)
                    beta[cur + s] = v


def state_threads(s_max: int) -> int:
    """blockDim.x of the alpha/beta kernel: whole warps for s_max states, at most
    STATE_BLOCK (SIM_STATE_BLOCK under the simulator)."""
    from nnvmpy.kernel.cuda import simulated

    limit = STATE_BLOCK
    if simulated():
        limit = min(limit, SIM_STATE_BLOCK)
    return max(1, min(limit, 32 * -(-s_max // 32)))


def alpha_beta(ctx: Any, name: str, n: int, s_max: int, *args: Any) -> None:
    """_alpha_beta_cuda(*args) with a block per sequence (n of them), the grid capped as
    every grid-stride launch is (a smaller grid strides over the sequences)."""
    from nnvmpy.kernel.cuda import launch_blocks

    launch_blocks(ctx, name, _alpha_beta_cuda, n, state_threads(s_max), args)


# --- a block per row (t, b) ----------------------------------------------------------------


@gpu_kernel
def _row_lse_block_cuda(rows, lse, x, n, a_len, tlen):
    # lse[r] = logsumexp(x[r, :]) for the steps t < T_b, in float64 (float(): the
    # simulator's NumPy would compute float16 - float in float16)
    tid, nt = cuda.threadIdx.x, cuda.blockDim.x
    sh = cuda.shared.array(BLOCK, np.float64)
    for r in range(cuda.blockIdx.x, rows, cuda.gridDim.x):
        t = r // n
        if t >= tlen[r - t * n]:
            continue
        base = r * a_len
        m = -math.inf
        for c in range(tid, a_len, nt):
            m = max(m, float(x[base + c]))
        m = block_max(sh, tid, nt, m)
        s = 0.0
        for c in range(tid, a_len, nt):
            s += math.exp(float(x[base + c]) - m)
        s = block_sum(sh, tid, nt, s)
        if tid == 0:
            lse[r] = m + math.log(s)


@device_function
def _label_posterior(grad, base, alpha, beta, ab, lab, lb, n_labels, j, lp):
    """grad[c] -= the posteriors of the states of class c = label j, if j is c's first
    position (else that position's thread subtracts them): each class once, by one thread."""
    c = lab[lb + j]
    for i in range(j):
        if lab[lb + i] == c:
            return
    p = 0.0
    for i in range(j, n_labels):
        if lab[lb + i] == c:
            s = ab + 2 * i + 1
            p += math.exp(alpha[s] + beta[s] - lp)
    grad[base + c] -= p


@gpu_kernel
def _row_grad_block_cuda(
    rows, grad, x, lse, alpha, beta, logp, lab, lens, tlen, n, a_len, lmax, s_max, t_max,
    blank, mode,
):  # fmt: skip
    # grad[r, :] = softmax - state posteriors (zero for t >= T_b): the softmax strided over
    # the alphabet; after a syncthreads the blank's posteriors (even states) summed by the
    # block, each label class's by one thread (_label_posterior)
    tid, nt = cuda.threadIdx.x, cuda.blockDim.x
    sh = cuda.shared.array(BLOCK, np.float64)
    for r in range(cuda.blockIdx.x, rows, cuda.gridDim.x):
        t = r // n
        b = r - t * n
        base = r * a_len
        if t >= tlen[b]:
            for c in range(tid, a_len, nt):
                store(grad, base + c, 0.0, mode)
            continue
        for c in range(tid, a_len, nt):
            store(grad, base + c, math.exp(x[base + c] - lse[r]), mode)
        lp = logp[b]
        if lp == -math.inf:  # an impossible label: no posterior to subtract
            continue
        cuda.syncthreads()  # the softmax is written before the posteriors come off it
        ab = (b * t_max + t) * s_max
        n_labels = lens[b]
        p = 0.0
        for j in range(tid, n_labels + 1, nt):
            p += math.exp(alpha[ab + 2 * j] + beta[ab + 2 * j] - lp)
        p = block_sum(sh, tid, nt, p)
        if tid == 0:
            grad[base + blank] -= p
        for j in range(tid, n_labels, nt):
            _label_posterior(grad, base, alpha, beta, ab, lab, b * lmax, n_labels, j, lp)


def _by_block(ctx: Any, a_len: int) -> bool:
    return is_gpu(ctx) and a_len >= BLOCK_ALPHABET


def row_lse(ctx: Any, name: str, rows: int, lse: Any, x: Any, n: int, a_len: int, tlen: Any):
    """lse of every row (t, b): a block per row for long alphabets on a GPU, else
    _ctc_kernels.row_lse a thread per row."""
    args = (lse, x, n, a_len, tlen)
    if _by_block(ctx, a_len):
        launch_blocks(ctx, name, _row_lse_block_cuda, rows, a_len, *args)
    else:
        run_rows(ctx, name, k.row_lse, rows, *args)


def row_grad(ctx: Any, name: str, rows: int, a_len: int, *args: Any) -> None:
    """The hidden gradient of every row (t, b), args as _ctc_kernels.row_grad's: a block
    per row for long alphabets on a GPU, else a thread per row."""
    if _by_block(ctx, a_len):
        launch_blocks(ctx, name, _row_grad_block_cuda, rows, a_len, *args)
    else:
        run_rows(ctx, name, k.row_grad, rows, *args)
