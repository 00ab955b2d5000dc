"""_contrib_group_adagrad_update's GPU path (group_adagrad.py has the rule and the CPU's
loop).

The CPU's loop, a work item per row summing its `cols` clipped squares and then writing
its `cols` weights, left a GPU idle or uncoalesced: an embedding of (30000, 512) was 30000
threads each walking 512 elements while its neighbours read `cols` apart, and (8, 1e6)
was 8 threads of 2e6 serial steps. Here, three launches:

- the row sums of clip(rescale * grad, bound)^2 on the reduction kernels
  (ops/_reduce_cuda.reduce_clip_sq_gpu: threads on neighbouring elements, a warp or block
  per row, long rows cut into slices over several blocks), into a float64 scratch, with
  no clipped copy of the gradient stored;
- a thread per row: history[r] += sum / cols (one read-modify-write), and the row's step
  lr / sqrt(history + epsilon) kept in the scratch;
- a thread per element: out = weight - step[row] * clip(rescale * grad, bound) under the
  output's request (out may be weight's memory: each element reads its weight first;
  kNullOp skips this launch, the history being written regardless, as on the CPU).

(30000, 512) sums a block per row (4096 blocks of 256 threads striding over the rows),
then 30000 and 15.4M threads; (8, 1e6) sums in 64 slices a row (512 blocks), then 8 and
8M threads. The scalars are the CPU's (float32 for float16/float32 arrays, _common.launch);
the squares are float64 from the loaded gradient (the old loop squared in float32 before
summing in float64), and the history and step are float64 until stored, as they were.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...kernel import parallel_for, scratch
from .. import _reduce_cuda
from ._common import NULL, assign, clip, launch

OP = "_contrib_group_adagrad_update"


@parallel_for
def _ga_rate_loop(r, history, sums, cols, lr, epsilon):
    """history[r] += sums[r] / cols; sums[r] becomes the row's step (float64 until stored;
    0 columns give NaN, 0 / 0, as on the CPU)."""
    h = history[r] + sums[r] / cols
    history[r] = h
    sums[r] = lr / math.sqrt(h + epsilon)


@parallel_for
def _ga_apply_loop(i, out, weight, grad, step, cols, mode, rescale, bound):
    assign(out, i, mode, weight[i] - step[i // cols] * clip(rescale * grad[i], bound))


def update_gpu(
    ctx: Any, out: Any, history: Any, weight: Any, grad: Any, rows: int, cols: int,
    mode: int, lr: float, epsilon: float, rescale: float, bound: float,
) -> None:  # fmt: skip
    """The update of `rows` rows of `cols` elements (rows > 0): history in place, out
    under `mode` (NULL, WRITE or ADD)."""
    # rescale and bound in the arrays' precision, as _common.launch passes them to the
    # loops (float32 for float16 and float32 arrays)
    real = np.float64 if weight.dtype == np.float64 else np.float32
    sums = scratch.empty(ctx, rows, np.float64)  # per row: the sum, then the step
    _reduce_cuda.reduce_clip_sq_gpu(
        ctx, sums, False, grad.reshape((rows, cols)), (rows, 1),
        float(real(rescale)), float(real(bound)), 1.0, OP,
    )  # fmt: skip
    launch(ctx, _ga_rate_loop, rows, (history, sums, cols, lr, epsilon), written=(0,))
    if mode != NULL:
        args = (out, weight, grad, sums, cols, mode, rescale, bound)
        launch(ctx, _ga_apply_loop, rows * cols, args, written=(0,))


__all__ = ["update_gpu"]
