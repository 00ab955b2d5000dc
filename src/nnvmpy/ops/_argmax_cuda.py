"""argmax / argmin on a GPU along lines near the last axis (argmax.py has the op).

Why. argmax.py's `_arg_line` is a thread per line of the (outer, n, inner) view. Where the
lines lie along the last axes (inner < MIN_INNER) neighbouring threads read a line apart,
and the lines are few and long: a 30k-class argmax over (4096, 30000) is 4096 threads of
30k strided reads, (8, 10**6) along axis 1 is 8 threads, and axis=None is one thread over
the whole array. Here instead:

- a block per line where the lines alone give every SM BLOCKS_PER_SM blocks: its threads
  stride the line (neighbours read neighbours), each keeps the best position it saw, and
  a shared-memory tree picks the block's;
- else S blocks per line, each on a slice of `chunk` positions writing its slice's best
  position to scratch, then a thread per line picks among its S partials in slice order.

Only positions travel (shared memory, scratch); values are read back from x, so every
dtype compares exactly (int64 beyond 2**53 too) and one shared array serves them all.
Which of two positions wins is a total order: a NaN before any number (the lower
position between two NaNs), then the larger (argmin: smaller) value, then the lower
position. So any reduction order returns what the serial scan returns: the first
occurrence of the extreme, or the first NaN (for argmin too).

The split rule and the launcher serve _cumsum_cuda.py's scan as well.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..kernel import device_function, scratch
from ..kernel.launch import cuda, flat, gpu_kernel, is_gpu, store, uindex
from .argmax import _wins

SHARED = 256  # positions a block's shared tree holds: the most threads a block may have
THREADS = 256  # threads of a block at most on a GPU (a power of two, <= SHARED)
SIM_THREADS = 32  # the same under the simulator, where every thread is a Python thread
MIN_INNER = 32  # from here neighbouring lines are neighbours in memory: a thread each
MIN_LINE = 32  # shorter lines would leave most of a warp idle: a thread each
# The split rule (line_split); module constants, so tests can send tiny shapes down it.
BLOCKS_PER_SM = 4  # split lines until lines * S blocks give each SM this many
SIM_SM_COUNT = 2  # the SM count assumed under the simulator
SLICE_MIN = 4096  # positions of a slice, at least: shorter ones cost more than they spread


# --- the split rule and the launcher (shared with _cumsum_cuda.py) -------------------------


def by_block(ctx: Any, n: int, inner: int) -> bool:
    """Whether lines of n elements `inner` apart take one or more blocks each on ctx."""
    return is_gpu(ctx) and inner < MIN_INNER and n >= MIN_LINE


def _sm_count(ctx: Any, name: str) -> int:
    """ctx's GPU's multiprocessor count (SIM_SM_COUNT under the simulator)."""
    from numba import config

    if config.ENABLE_CUDASIM:  # type: ignore[attr-defined]
        return SIM_SM_COUNT
    from nnvmpy.kernel.cuda import sm_count
    from nnvmpy.kernel.elementwise import launch_context

    return sm_count(name, launch_context(name, ctx, None).device_id)


def line_slices(lines: int, n: int, sms: int) -> int:
    """S, the blocks that share each line: 1 when the lines alone give BLOCKS_PER_SM
    blocks per SM, else as many as give that many, at most one per SLICE_MIN positions."""
    want = BLOCKS_PER_SM * sms
    if lines >= want:
        return 1
    return max(1, min(-(-want // lines), n // SLICE_MIN))


def line_split(ctx: Any, name: str, lines: int, n: int, items: int) -> tuple[int, int, int]:
    """(S, chunk, threads): S blocks of `threads` per line, each on `chunk` positions (a
    multiple of threads * items, each thread taking `items` per round; the last slice
    shorter, none empty). S = 1: a block per line, chunk = n."""
    from numba import config

    limit = SIM_THREADS if config.ENABLE_CUDASIM else THREADS  # type: ignore[attr-defined]
    S = line_slices(lines, n, _sm_count(ctx, name))
    per = -(-n // S)
    threads = min(limit, 1 << (-(-per // items) - 1).bit_length())
    if S == 1:
        return 1, n, threads
    chunk = -(-per // (threads * items)) * (threads * items)
    S = -(-n // chunk)
    return (S, chunk, threads) if S > 1 else (1, n, threads)


def launch_blocks(ctx: Any, name: str, k: Any, blocks: int, threads: int, *args: Any) -> None:
    """k(*args) on `blocks` blocks of `threads` (arrays flattened), the grid capped as every
    grid-stride launch is (kernel/cuda.py; 4 blocks on the simulator): k strides beyond."""
    from nnvmpy.kernel.cuda import THREADS_PER_BLOCK, launch_config, launch_kernel

    cap, _, stream, device = launch_config(name, ctx, blocks * THREADS_PER_BLOCK)
    flat_args = [a if isinstance(a, (bool, int, float, np.generic)) else flat(a) for a in args]
    with device:
        launch_kernel(k.dispatcher, min(blocks, cap), threads, stream, tuple(flat_args))


# --- the kernels --------------------------------------------------------------------------


@device_function
def _line_base(r, n, inner):
    """Line r's first element in the (outer, n, inner) view."""
    o = r // inner
    return o * n * inner + (r - o * inner)


@device_function
def _before(x, base, inner, i, j, largest):
    """Position i of the line beats position j (-1: no position; it loses to any)."""
    if j < 0:
        return i >= 0
    if i < 0:
        return False
    a = x[uindex(base + i * inner)]
    b = x[uindex(base + j * inner)]
    if a != a or b != b:
        if a != a and b != b:
            return i < j
        return a != a
    if a == b:
        return i < j
    return a > b if largest else a < b


@device_function
def _scan(x, base, inner, lo, hi, step, largest):
    """The best of positions lo, lo + step, ... below hi (-1 when none), scanned in order as
    _arg_line does: the first extreme, or the first NaN."""
    if lo >= hi:
        return -1
    at = lo
    best = x[uindex(base + lo * inner)]
    for k in range(lo + step, hi, step):
        v = x[uindex(base + k * inner)]
        if _wins(v, best, largest):
            best = v
            at = k
    return at


@device_function
def _block_best(sh, x, base, inner, tid, nt, at, largest):
    """The best of the block's threads' positions `at` (every thread gets it)."""
    sh[tid] = at
    cuda.syncthreads()
    step = nt // 2
    while step > 0:
        if tid < step and _before(x, base, inner, sh[tid + step], sh[tid], largest):
            sh[tid] = sh[tid + step]
        cuda.syncthreads()
        step //= 2
    at = sh[0]
    cuda.syncthreads()  # every thread has read sh[0] before sh is written again
    return at


@gpu_kernel
def _arg_block_cuda(out, x, lines, n, inner, largest, mode):
    # a block per line r: out[r] (+)= the line's best position
    tid, nt = cuda.threadIdx.x, cuda.blockDim.x
    sh = cuda.shared.array(SHARED, np.int64)
    for r in range(cuda.blockIdx.x, lines, cuda.gridDim.x):
        base = _line_base(r, n, inner)
        at = _scan(x, base, inner, tid, n, nt, largest)
        at = _block_best(sh, x, base, inner, tid, nt, at, largest)
        if tid == 0:
            store(out, r, at, mode)


@gpu_kernel
def _arg_slices_cuda(part, x, lines, S, chunk, n, inner, largest):
    # block b: part[b] = the best position of slice b % S (positions from (b % S) * chunk)
    # of line b // S
    tid, nt = cuda.threadIdx.x, cuda.blockDim.x
    sh = cuda.shared.array(SHARED, np.int64)
    for b in range(cuda.blockIdx.x, lines * S, cuda.gridDim.x):
        r = b // S
        lo = (b - r * S) * chunk
        base = _line_base(r, n, inner)
        at = _scan(x, base, inner, lo + tid, min(lo + chunk, n), nt, largest)
        at = _block_best(sh, x, base, inner, tid, nt, at, largest)
        if tid == 0:
            part[b] = at


@gpu_kernel
def _arg_merge_cuda(out, part, x, lines, S, n, inner, largest, mode):
    # a thread per line: out[r] (+)= the best of its S slices' positions, in slice order
    for r in range(cuda.grid(1), lines, cuda.gridsize(1)):
        base = _line_base(r, n, inner)
        at = part[r * S]
        for s in range(1, S):
            k = part[r * S + s]
            if _before(x, base, inner, k, at, largest):
                at = k
        store(out, r, at, mode)


def arg_gpu(
    ctx: Any, name: str, out: Any, x: Any, layout: tuple[int, int, int], largest: bool, mode: int
) -> bool:
    """out (+)= the arg extreme of x's lines (layout: (outer, n, inner)) on S blocks or a
    block per line; False (nothing launched) where by_block says a thread per line."""
    outer, n, inner = layout
    if not by_block(ctx, n, inner):
        return False
    lines = outer * inner
    S, chunk, threads = line_split(ctx, name, lines, n, 1)
    if S == 1:
        launch_blocks(ctx, name, _arg_block_cuda, lines, threads, out, x, lines, n, inner,
                      largest, mode)  # fmt: skip
        return True
    part = scratch.empty(ctx, lines * S, np.int64)
    launch_blocks(ctx, name, _arg_slices_cuda, lines * S, threads, part, x, lines, S, chunk,
                  n, inner, largest)  # fmt: skip
    _arg_merge_cuda.launch(ctx, lines, flat(out), part, flat(x), lines, S, n, inner, largest, mode)
    return True


__all__ = ["arg_gpu", "by_block", "launch_blocks", "line_slices", "line_split"]
