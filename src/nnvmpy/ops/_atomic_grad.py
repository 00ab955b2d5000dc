"""The output a GPU gradient kernel adds into atomically, float16 included.

Why. A gradient gathered per input plane (one work item owning each plane, so no two
write one element) has a few hundred items for the roi ops; a GPU wants ~100k. MXNet's
CUDA kernels instead take one item per output-gradient element and add its share into
d data with atomic adds. Those need the target zeroed first for a write request, and
numba-cuda's cuda.atomic.add covers float32 and float64 only: a float16 target is
accumulated in a float32 scratch copy and converted back at the end.

    with atomic_target(ctx, dx, mode) as acc:     # GPU arrays; mode WRITE or ADD
        kernel.launch(ctx, dy.size, acc, ...)     # the body calls atomic_add(acc, i, v)

Atomics add in no fixed order: sums differ from a serial loop's in rounding only.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from .. import kernel
from ..kernel.launch import WRITE, flat
from ._index_kernels import device_empty, zero


@kernel.parallel_for
def _cast(i, out, a):
    """out[i] = a[i] in out's dtype (float16 to and from the float32 accumulator)."""
    out[i] = a[i]


@contextmanager
def atomic_target(ctx: Any, out: Any, mode: int) -> Iterator[Any]:
    """out (a GPU array) flattened, zeroed for a WRITE request, for atomic adds; a float16
    out as a float32 copy (no float16 atomics), converted back into out on exit."""
    if np.dtype(out.dtype) != np.float16:
        if mode == WRITE:
            zero(ctx, out)
        yield flat(out)
        return
    acc = device_empty(ctx, out.size, np.float32)
    if mode == WRITE:
        zero(ctx, acc)
    else:
        _cast.launch(ctx, out.size, acc, flat(out))
    yield acc
    _cast.launch(ctx, out.size, flat(out), acc)
