"""cumsum and its backward (the reversed cumsum) on a GPU where a thread per line leaves
the device idle (cumsum.py has the op; _line_split_cuda.py the rules that choose a split).

Why. cumsum.py's `_scan_line` is a thread per line of the (outer, n, inner) view: along
the last axes (inner < 32) neighbouring threads read a line apart and long lines are few
threads; axis=None is one thread over the whole array. Farther in (inner >= 32) reads
are coalesced but few lines are still few threads ((1, 10**6, 32) along axis 1: 32
threads of 10**6 steps). Here a line's running sum is a parallel scan, the standard
three phases:

1. each of S slices of a line is summed into scratch: near the last axis by a block
   (coalesced, a shared-memory tree) per slice of `chunk` positions, into part[r * S +
   s]; farther in (column_split) by a thread per (line, slice), the threads of a slice
   on neighbouring lines (coalesced), into part[s * lines + r];
2. a thread per line scans its S slice sums in place (from the end when reversed): a
   slice's carry is then its predecessor's entry in scan order;
3. each slice is scanned from its carry, out (+)= as req says: farther in, by its thread
   serially; near the last axis, by its block in rounds of threads * ITEMS elements:
   loaded coalesced into shared memory, each thread scans ITEMS neighbours, the threads'
   totals are scanned (Hillis-Steele), and carry + prefix is written out coalesced.

Where the lines near the last axis alone give every SM BLOCKS_PER_SM blocks
(line_split, shared with argmax) S = 1: a block per line runs phase 3 alone from a zero
carry. Farther in, where the lines alone fill the device, cumsum.py's loop runs.

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
from ..kernel.cuda import launch_blocks
from ..kernel.launch import cuda, flat, gpu_kernel, store, uindex
from ._line_split_cuda import SHARED, by_block, column_split, line_base, line_split
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
        base = line_base(r, n, inner)
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
        base = line_base(r, n, inner)
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
def _cumsum_col_sums_cuda(part, x, lines, S, chunk, n, inner, zero):
    # phase 1, item i = s * lines + r: part[i] = the sum of slice s of line r (neighbouring
    # items on neighbouring lines: reads coalesced)
    for i in range(cuda.grid(1), lines * S, cuda.gridsize(1)):
        s = i // lines
        r = i - s * lines
        lo = s * chunk
        base = line_base(r, n, inner)
        acc = zero
        for k in range(lo, min(lo + chunk, n)):
            acc += x[uindex(base + k * inner)]
        part[i] = acc


@gpu_kernel
def _cumsum_col_scan_cuda(out, part, x, lines, S, chunk, n, inner, reverse, mode, zero):
    # phase 3, item i = s * lines + r: out (+)= the running sums of slice s of line r from
    # its carry, the entry of the slice before it in scan order (s - 1; s + 1 when reverse)
    for i in range(cuda.grid(1), lines * S, cuda.gridsize(1)):
        s = i // lines
        r = i - s * lines
        lo = s * chunk
        hi = min(lo + chunk, n)
        acc = zero
        if reverse and s < S - 1:
            acc += part[i + lines]
        elif not reverse and s > 0:
            acc += part[i - lines]
        base = line_base(r, n, inner)
        for t in range(hi - lo):
            at = base + (hi - 1 - t if reverse else lo + t) * inner
            acc += x[uindex(at)]
            store(out, at, acc, mode)


@gpu_kernel
def _cumsum_carries_cuda(part, lines, S, rs, ss, reverse):
    # phase 2, a thread per line: part[b] = the sum of the line's slices up to b in scan
    # order (from the last when reverse), b's own sum included; slice s of line r is
    # part[r * rs + s * ss]
    for r in range(cuda.grid(1), lines, cuda.gridsize(1)):
        acc = part[r * rs + (S - 1 if reverse else 0) * ss]
        for t in range(1, S):
            b = r * rs + (S - 1 - t if reverse else t) * ss
            acc += part[b]
            part[b] = acc


def _columns(ctx: Any, name: str, out: Any, x: Any, layout: tuple[int, int, int],
             reverse: bool, mode: int, acc: Any) -> bool:  # fmt: skip
    """Phases 1-3 on a thread per (line, slice) where column_split says S > 1."""
    S, chunk = column_split(ctx, name, layout)
    if S == 1:
        return False
    outer, n, inner = layout
    lines, zero = outer * inner, acc(0)
    part = scratch.empty(ctx, lines * S, acc)
    x, out = flat(x), flat(out)
    _cumsum_col_sums_cuda.launch(ctx, lines * S, part, x, lines, S, chunk, n, inner, zero)
    _cumsum_carries_cuda.launch(ctx, lines, part, lines, S, 1, lines, reverse)
    _cumsum_col_scan_cuda.launch(ctx, lines * S, out, part, x, lines, S, chunk, n, inner,
                                 reverse, mode, zero)  # fmt: skip
    return True


def scan_gpu(
    ctx: Any, name: str, out: Any, x: Any, layout: tuple[int, int, int], reverse: bool,
    mode: int,
) -> bool:  # fmt: skip
    """out (+)= the running sums of x's lines (layout: (outer, n, inner); from the end when
    reverse) on S blocks or a block per line, or on S slices a thread each; False (nothing
    launched) where the rules say a thread per line (cumsum.py's loop)."""
    outer, n, inner = layout
    integer = np.dtype(out.dtype).kind in "iub" and np.dtype(x.dtype).kind in "iub"
    acc = np.int64 if integer else np.float64
    if not by_block(ctx, n, inner):
        return _columns(ctx, name, out, x, layout, reverse, mode, acc)
    sums, scan = (
        (_cumsum_sums_i_cuda, _cumsum_scan_i_cuda)
        if integer
        else (_cumsum_sums_f_cuda, _cumsum_scan_f_cuda)
    )
    lines = outer * inner
    S, chunk, threads = line_split(ctx, name, lines, n, ITEMS)
    part = scratch.empty(ctx, lines * S if S > 1 else 1, acc)  # S = 1: never read
    if S > 1:
        sum_args = (part, x, lines, S, chunk, n, inner)
        launch_blocks(ctx, name, sums, lines * S, threads, sum_args)
        _cumsum_carries_cuda.launch(ctx, lines, part, lines, S, S, 1, reverse)
    scan_args = (out, part, x, lines, S, chunk, n, inner, reverse, mode)
    launch_blocks(ctx, name, scan, lines * S, threads, scan_args)
    return True


__all__ = ["ITEMS", "scan_gpu"]
