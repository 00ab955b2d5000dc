"""IdentityAttachKLSparseReg's backward on the GPU (kl_sparse.py has the formulas and the
CPU's loop).

The CPU's loop, a work item per channel summing its (outer, inner) activations and then
writing their gradients, left a GPU idle and uncoalesced: (N=256, C=64) was 64 threads,
each reading a column whose elements lie 64 apart. Here x is seen as (outer, C, inner)
and the backward is three launches:

- the channel sums on the reduction kernels (ops/_reduce_cuda.reduce_gpu, 'sum' down to
  (1, C, 1): coalesced, a thread per channel where the channels are adjacent (inner 1),
  a block per channel otherwise, long sums cut into slices) into a float64 scratch;
- a thread per channel: moving_avg = momentum * moving_avg + (1 - momentum) * sum / count
  (in place) and the channel's penalty term kept in the scratch;
- a thread per element: dx = dy + term[channel] under dx's request (kNullOp skips it,
  moving_avg being updated regardless, as on the CPU).

(256, 64) sums with 64 threads of coalesced reads, then 64 and 16384 threads;
(32, 64, 28, 28) sums in 4 slices a channel (256 blocks), then 64 and 1.6M threads. The
average and the term are float64 until stored, as in the CPU's loop; each value is
loaded as float64 (float16 data sums in float64).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...kernel import parallel_for, scratch
from ...kernel.launch import NULL, store, uindex
from .. import _reduce_cuda

OP = "_backward_IdentityAttachKLSparseReg"


@parallel_for
def _kl_channel_loop(c, avg, sums, count, rho, penalty, momentum):
    """avg[c] updated from the channel's sum; sums[c] becomes its penalty term (float64
    loads: the simulator's NumPy would keep a Python float times float16 in float16)."""
    ma = momentum * np.float64(avg[c]) + (1.0 - momentum) * sums[c] / count
    avg[c] = ma
    sums[c] = penalty * (-rho / ma + (1.0 - rho) / (1.0 - ma))


@parallel_for
def _kl_grad_loop(j, dx, dy, reg, C, inner, mode):
    store(dx, j, dy[j] + reg[uindex((j // inner) % C)], mode)


def backward_gpu(
    ctx: Any, dx: Any, dy: Any, x: Any, avg: Any, layout: tuple[int, int, int],
    rho: float, penalty: float, momentum: float, mode: int,
) -> None:  # fmt: skip
    """moving_avg (avg, in place) and dx (under mode) for x seen as layout (outer, C,
    inner), x not empty; arrays flat or shaped."""
    outer, C, inner = layout
    sums = scratch.empty(ctx, C, np.float64)  # per channel: the sum, then the term
    _reduce_cuda.reduce_gpu(ctx, sums, False, x.reshape(layout), (1, C, 1), "sum", 1.0, OP)
    avg = avg.reshape(C)
    _kl_channel_loop.launch(ctx, C, avg, sums, outer * inner, rho, penalty, momentum)
    if mode != NULL:
        dx, dy = dx.reshape(dx.size), dy.reshape(dy.size)
        _kl_grad_loop.launch(ctx, dx.size, dx, dy, sums, C, inner, mode)


__all__ = ["backward_gpu"]
