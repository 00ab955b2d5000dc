"""cumsum and its backward (the reversed cumsum) on a GPU along lines near the last axis
(cumsum.py has the op).

Why. cumsum.py's `_scan_line` is a thread per line of the (outer, n, inner) view: along
the last axes (inner < 32) neighbouring threads read a line apart and long lines are few
threads; axis=None is one thread over the whole array. Here a line's running sum is a
parallel scan, the standard three phases:

1. each of S blocks per line sums its slice of `chunk` positions (coalesced, a
   shared-memory tree) into scratch;
2. a thread per line scans its S slice sums in place (from the end when reversed): a
   slice's carry is then its predecessor's entry in scan order;
3. each block scans its slice in rounds of threads * ITEMS elements: loaded coalesced
   into shared memory, each thread scans ITEMS neighbours, the threads' totals are scanned
   (Hillis-Steele), and carry + prefix is written out coalesced (out (+)= as req says).

Where the lines alone give every SM BLOCKS_PER_SM blocks (_argmax_cuda.line_split, shared
with argmax) S = 1: a block per line runs phase 3 alone from a zero carry.

Sums accumulate as the CPU's loop does: in int64 when the output and the input are
integers, else in float64 (an integer output then takes each float64 prefix, truncated).
Integer results are exact; float64 sums add in another order than the serial loop, so
they may differ from the CPU's in the last bits (a float32 or float16 output, rounded
from them, almost never does).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..kernel import device_function, scratch
from ..kernel.launch import cuda, gpu_kernel, store, uindex
from ._argmax_cuda import SHARED, _line_base, by_block, launch_blocks, line_split
from .nn._block_rows import block_sum

ITEMS = 8  # elements a thread scans per round
_BUF = SHARED * ITEMS  # a round's elements at most (a shared array's size: a constant)


@device_function
def _sums(part, sh, x, lines, S, chunk, n, inner, zero):
    """Phase 1: part[b] = the sum of slice b % S of line b // S, for the calling block's b."""
    tid, nt = cuda.threadIdx.x, cuda.blockDim.x
    for b in range(cuda.blockIdx.x, lines * S, cuda.gridDim.x):
        r = b // S
        lo = (b - r * S) * chunk
        base = _line_base(r, n, inner)
        s = zero
        for k in range(lo + tid, min(lo + chunk, n), nt):
            s += x[uindex(base + k * inner)]
        s = block_sum(sh, tid, nt, s)
        if tid == 0:
            part[b] = s


@device_function
def _scan(out, buf, tot, x, base, inner, lo, hi, reverse, carry, mode, zero):
    """Phase 3: out (+)= carry + the running sums of x over line positions lo .. hi - 1
    (from hi - 1 down when reverse), in rounds of nt * ITEMS positions."""
    tid, nt = cuda.threadIdx.x, cuda.blockDim.x
    per = nt * ITEMS
    for start in range(0, hi - lo, per):
        cnt = min(per, hi - lo - start)
        for m in range(ITEMS):  # slot q holds scan step start + q: coalesced
            q = m * nt + tid
            v = zero
            if q < cnt:
                t = start + q
                v += x[uindex(base + (hi - 1 - t if reverse else lo + t) * inner)]
            buf[q] = v
        cuda.syncthreads()
        s = zero
        for m in range(ITEMS):  # thread tid's ITEMS neighbouring slots, scanned in place
            q = tid * ITEMS + m
            s += buf[q]
            buf[q] = s
        tot[tid] = s
        cuda.syncthreads()
        step = 1
        while step < nt:  # tot: the threads' totals, scanned (inclusive)
            add = tot[tid - step] if tid >= step else zero
            cuda.syncthreads()
            tot[tid] += add
            cuda.syncthreads()
            step *= 2
        before = carry + (tot[tid - 1] if tid > 0 else zero)
        for m in range(ITEMS):
            buf[tid * ITEMS + m] += before
        cuda.syncthreads()
        for m in range(ITEMS):
            q = m * nt + tid
            if q < cnt:
                t = start + q
                store(out, base + (hi - 1 - t if reverse else lo + t) * inner, buf[q], mode)
        carry += tot[nt - 1]
        cuda.syncthreads()  # every thread is done with buf and tot before the next round


@device_function
def _scan_blocks(out, buf, tot, offs, x, lines, S, chunk, n, inner, reverse, mode, zero):
    """Phase 3 for the calling block's slices b: slice s = b % S of line b // S, carrying
    offs at the slice before it in scan order (s - 1; s + 1 when reverse), zero for the
    line's first (and when S == 1: a block per line)."""
    for b in range(cuda.blockIdx.x, lines * S, cuda.gridDim.x):
        r = b // S
        s = b - r * S
        lo = s * chunk
        carry = zero
        if reverse and s < S - 1:
            carry += offs[b + 1]
        elif not reverse and s > 0:
            carry += offs[b - 1]
        base = _line_base(r, n, inner)
        _scan(out, buf, tot, x, base, inner, lo, min(lo + chunk, n), reverse, carry, mode, zero)


# One kernel per accumulator type: a shared array's dtype is fixed when it compiles.
@gpu_kernel
def _cumsum_sums_f_cuda(part, x, lines, S, chunk, n, inner):
    sh = cuda.shared.array(SHARED, np.float64)
    _sums(part, sh, x, lines, S, chunk, n, inner, np.float64(0.0))


@gpu_kernel
def _cumsum_sums_i_cuda(part, x, lines, S, chunk, n, inner):
    sh = cuda.shared.array(SHARED, np.int64)
    _sums(part, sh, x, lines, S, chunk, n, inner, np.int64(0))


@gpu_kernel
def _cumsum_scan_f_cuda(out, offs, x, lines, S, chunk, n, inner, reverse, mode):
    buf = cuda.shared.array(_BUF, np.float64)
    tot = cuda.shared.array(SHARED, np.float64)
    z = np.float64(0.0)
    _scan_blocks(out, buf, tot, offs, x, lines, S, chunk, n, inner, reverse, mode, z)


@gpu_kernel
def _cumsum_scan_i_cuda(out, offs, x, lines, S, chunk, n, inner, reverse, mode):
    buf = cuda.shared.array(_BUF, np.int64)
    tot = cuda.shared.array(SHARED, np.int64)
    z = np.int64(0)
    _scan_blocks(out, buf, tot, offs, x, lines, S, chunk, n, inner, reverse, mode, z)


@gpu_kernel
def _cumsum_carries_cuda(part, lines, S, reverse):
    # phase 2, a thread per line: part[b] = the sum of the line's slices up to b in scan
    # order (from the last when reverse), b's own sum included
    for r in range(cuda.grid(1), lines, cuda.gridsize(1)):
        acc = part[r * S + (S - 1 if reverse else 0)]
        for t in range(1, S):
            b = r * S + (S - 1 - t if reverse else t)
            acc += part[b]
            part[b] = acc


def scan_gpu(
    ctx: Any, name: str, out: Any, x: Any, layout: tuple[int, int, int], reverse: bool,
    mode: int,
) -> bool:  # fmt: skip
    """out (+)= the running sums of x's lines (layout: (outer, n, inner); from the end when
    reverse) on S blocks or a block per line; False (nothing launched) where by_block says
    a thread per line."""
    outer, n, inner = layout
    if not by_block(ctx, n, inner):
        return False
    integer = np.dtype(out.dtype).kind in "iub" and np.dtype(x.dtype).kind in "iub"
    acc = np.int64 if integer else np.float64
    sums, scan = (
        (_cumsum_sums_i_cuda, _cumsum_scan_i_cuda)
        if integer
        else (_cumsum_sums_f_cuda, _cumsum_scan_f_cuda)
    )
    lines = outer * inner
    S, chunk, threads = line_split(ctx, name, lines, n, ITEMS)
    part = scratch.empty(ctx, lines * S if S > 1 else 1, acc)  # S = 1: never read
    if S > 1:
        launch_blocks(ctx, name, sums, lines * S, threads, part, x, lines, S, chunk, n, inner)
        _cumsum_carries_cuda.launch(ctx, lines, part, lines, S, reverse)
    launch_blocks(ctx, name, scan, lines * S, threads, out, part, x, lines, S, chunk, n, inner,
                  reverse, mode)  # fmt: skip
    return True


__all__ = ["ITEMS", "scan_gpu"]
