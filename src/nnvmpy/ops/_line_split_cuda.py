"""How a GPU splits the lines of an (outer, n, inner) view among its threads, for the ops
that walk whole lines: argmax / argmin (_argmax_cuda.py) and cumsum (_cumsum_cuda.py).

Why. Both ops' one-body kernels are a thread per line, serial along it. That serves many
lines; few long ones leave the GPU idle (an H200 has 132 SMs, each wanting thousands of
threads). Two layouts are split otherwise, by the rules here:

- near the last axis (by_block: inner < MIN_INNER, n >= MIN_LINE) neighbouring threads
  would read a line apart, so a line takes a block (line_split: S blocks per line when
  the lines alone leave SMs without BLOCKS_PER_SM blocks);
- farther in (inner >= MIN_INNER) neighbouring lines are neighbours in memory and a
  thread per line reads coalesced, but when outer * inner lines cannot give every SM
  BLOCKS_PER_SM full blocks (e.g. (1, 10**6, 32) along axis 1 is 32 threads of 10**6
  steps) column_split cuts n into S slices: a thread per (line, slice), threads of a
  slice over neighbouring lines (still coalesced), each walking its slice. Partials go to
  scratch in slice-major order (part[s * lines + r]) and a thread per line combines its
  S partials in slice order. That pass walks S partials, so S stays <= n / S (about
  sqrt(n)) as well as >= COL_SLICE_MIN positions a slice.

The constants are module globals, read at each call, so tests can send tiny shapes down
each path (and patch nnvmpy.kernel.cuda.context_sm_count for the SM count).
"""

from __future__ import annotations

import math
from typing import Any

from ..kernel import device_function
from ..kernel.launch import is_gpu

SHARED = 256  # positions a block's shared tree holds: the most threads a block may have
THREADS = 256  # threads of a block at most on a GPU (a power of two, <= SHARED)
SIM_THREADS = 32  # the same under the simulator, where every thread is a Python thread
MIN_INNER = 32  # from here neighbouring lines are neighbours in memory: a thread each
MIN_LINE = 32  # shorter lines would leave most of a warp idle: a thread each
BLOCKS_PER_SM = 4  # split lines until lines * S blocks (or items) give each SM this many
SLICE_MIN = 4096  # positions of a block's slice, at least: shorter cost more than they spread
COL_SLICE_MIN = 64  # positions of a thread's slice (column_split), at least


def by_block(ctx: Any, n: int, inner: int) -> bool:
    """Whether lines of n elements `inner` apart take one or more blocks each on ctx."""
    return is_gpu(ctx) and inner < MIN_INNER and n >= MIN_LINE


def _thread_limit() -> int:
    from nnvmpy.kernel.cuda import simulated

    return SIM_THREADS if simulated() else THREADS


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
    from nnvmpy.kernel.cuda import context_sm_count

    S = line_slices(lines, n, context_sm_count(ctx, name))
    per = -(-n // S)
    threads = min(_thread_limit(), 1 << (-(-per // items) - 1).bit_length())
    if S == 1:
        return 1, n, threads
    chunk = -(-per // (threads * items)) * (threads * items)
    S = -(-n // chunk)
    return (S, chunk, threads) if S > 1 else (1, n, threads)


def column_slices(lines: int, n: int, sms: int, threads: int) -> int:
    """S, the slices of each line when lines lie `inner >= MIN_INNER` apart: 1 when the
    lines alone give BLOCKS_PER_SM blocks of `threads` per SM, else as many as give that
    many threads, with at least COL_SLICE_MIN positions a slice and S <= n / S (the
    pass over the S partials of a line no longer than a slice)."""
    want = BLOCKS_PER_SM * sms * threads
    if lines >= want:
        return 1
    return max(1, min(-(-want // lines), n // COL_SLICE_MIN, math.isqrt(n)))


def column_split(ctx: Any, name: str, layout: tuple[int, int, int]) -> tuple[int, int]:
    """(S, chunk) for the lines of layout (outer, n, inner): S > 1 slices of `chunk`
    positions (the last shorter, none empty), a thread per (line, slice); (1, n) where
    they keep a thread per line (inner < MIN_INNER, enough lines, or short ones). ctx is
    a GPU's."""
    from nnvmpy.kernel.cuda import context_sm_count

    outer, n, inner = layout
    if inner < MIN_INNER:
        return 1, n
    S = column_slices(outer * inner, n, context_sm_count(ctx, name), _thread_limit())
    if S == 1:
        return 1, n
    chunk = -(-n // S)
    S = -(-n // chunk)
    return (S, chunk) if S > 1 else (1, n)


@device_function
def line_base(r, n, inner):
    """Line r's first element in the (outer, n, inner) view."""
    o = r // inner
    return o * n * inner + (r - o * inner)


__all__ = [
    "by_block",
    "column_slices",
    "column_split",
    "line_base",
    "line_slices",
    "line_split",
]
