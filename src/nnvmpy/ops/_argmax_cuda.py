"""argmax / argmin on a GPU where a thread per line leaves the device idle (argmax.py has
the op; _line_split_cuda.py the rules that choose a split).

Why. argmax.py's `_arg_line` is a thread per line of the (outer, n, inner) view. Where the
lines lie along the last axes (inner < MIN_INNER) neighbouring threads read a line apart,
and the lines are few and long: a 30k-class argmax over (4096, 30000) is 4096 threads of
30k strided reads, (8, 10**6) along axis 1 is 8 threads, and axis=None is one thread over
the whole array. Farther in (inner >= MIN_INNER) reads are coalesced, but few lines are
still few threads: (1, 10**6, 32) along axis 1 is 32 threads of 10**6 steps. Here instead:

- inner < MIN_INNER: a block per line where the lines alone give every SM BLOCKS_PER_SM
  blocks: its threads stride the line (neighbours read neighbours), each keeps the best
  position it saw, and a shared-memory tree picks the block's;
- else S blocks per line, each on a slice of `chunk` positions writing its slice's best
  position to scratch (part[r * S + s]);
- inner >= MIN_INNER and too few lines (column_split): a thread per (line, slice), the
  threads of a slice on neighbouring lines (coalesced), each scanning its slice serially
  into part[s * lines + r];
- after either split a thread per line picks among its S partials in slice order.

Only positions travel (shared memory, scratch); values are read back from x, so every
dtype compares exactly (int64 beyond 2**53 too) and one shared array serves them all.
Which of two positions wins is a total order: a NaN before any number (the lower
position between two NaNs), then the larger (argmin: smaller) value, then the lower
position. So any reduction order returns what the serial scan returns: the first
occurrence of the extreme, or the first NaN (for argmin too).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..kernel import device_function, scratch
from ..kernel.cuda import launch_blocks
from ..kernel.launch import cuda, flat, gpu_kernel, store, uindex
from ._line_split_cuda import SHARED, by_block, column_split, line_base, line_split
from .argmax import _wins

# --- the kernels --------------------------------------------------------------------------


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
        base = line_base(r, n, inner)
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
        base = line_base(r, n, inner)
        at = _scan(x, base, inner, lo + tid, min(lo + chunk, n), nt, largest)
        at = _block_best(sh, x, base, inner, tid, nt, at, largest)
        if tid == 0:
            part[b] = at


@gpu_kernel
def _arg_columns_cuda(part, x, lines, S, chunk, n, inner, largest):
    # item i = s * lines + r: part[i] = the best position of slice s (positions from
    # s * chunk) of line r; neighbouring items scan neighbouring lines, reads coalesced
    for i in range(cuda.grid(1), lines * S, cuda.gridsize(1)):
        s = i // lines
        r = i - s * lines
        lo = s * chunk
        part[i] = _scan(x, line_base(r, n, inner), inner, lo, min(lo + chunk, n), 1, largest)


@gpu_kernel
def _arg_merge_cuda(out, part, x, lines, S, rs, ss, n, inner, largest, mode):
    # a thread per line: out[r] (+)= the best of its S slices' positions part[r * rs +
    # s * ss], in slice order
    for r in range(cuda.grid(1), lines, cuda.gridsize(1)):
        base = line_base(r, n, inner)
        at = part[r * rs]
        for s in range(1, S):
            k = part[r * rs + s * ss]
            if _before(x, base, inner, k, at, largest):
                at = k
        store(out, r, at, mode)


def arg_gpu(
    ctx: Any, name: str, out: Any, x: Any, layout: tuple[int, int, int], largest: bool, mode: int
) -> bool:
    """out (+)= the arg extreme of x's lines (layout: (outer, n, inner)) on S blocks or a
    block per line, or on S slices a thread each; False (nothing launched) where the
    rules say a thread per line (argmax.py's loop)."""
    outer, n, inner = layout
    lines = outer * inner
    if by_block(ctx, n, inner):
        S, chunk, threads = line_split(ctx, name, lines, n, 1)
        if S == 1:
            block_args = (out, x, lines, n, inner, largest, mode)
            launch_blocks(ctx, name, _arg_block_cuda, lines, threads, block_args)
            return True
        part = scratch.empty(ctx, lines * S, np.int64)
        slice_args = (part, x, lines, S, chunk, n, inner, largest)
        launch_blocks(ctx, name, _arg_slices_cuda, lines * S, threads, slice_args)
        strides = (S, 1)
    else:
        S, chunk = column_split(ctx, name, layout)
        if S == 1:
            return False
        part = scratch.empty(ctx, lines * S, np.int64)
        _arg_columns_cuda.launch(ctx, lines * S, part, flat(x), lines, S, chunk, n, inner, largest)
        strides = (1, lines)
    _arg_merge_cuda.launch(ctx, lines, flat(out), part, flat(x), lines, S, *strides, n, inner,
                           largest, mode)  # fmt: skip
    return True


__all__ = ["arg_gpu"]
