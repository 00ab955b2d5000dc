"""The arena's placement loop compiled (numba): _arena._pack's rule for large graphs.

_pack places blocks largest first, each at the lowest offset clear of the placed blocks
whose lifetimes meet its own. Done with NumPy calls per block that is ~60 us a block, 0.46 s
of a 6600-entry unrolled LSTM's bind (7600 blocks); this loop does the same placement in
one compiled call. It keeps the placed blocks sorted by offset, so the walk over them
meets the ranges in the order _lowest_gap sorts them into and stops at the first gap
that fits. Imported only when a graph has enough blocks (_arena.COMPILED_FROM, 100: a
training ResNet-18 has 132): the first call compiles (then the disk cache has it, and a
process's first call loads it in ~4 ms), which a small graph's bind should not pay.
"""

from __future__ import annotations

import numpy as np

from ..kernel.cpu import cached_njit


@cached_njit(nogil=True)
def place_blocks(
    order: np.ndarray, slots: np.ndarray, begin: np.ndarray, finish: np.ndarray,
    align: np.ndarray,
) -> np.ndarray:  # fmt: skip
    """Slot offsets of the blocks, placed in `order`: each at the lowest multiple of its
    `align` with `slots[b]` bytes clear of every placed block whose lifetime [begin,
    finish] (inclusive) meets its own."""
    n = order.size
    at = np.zeros(n, dtype=np.int64)
    by_offset = np.empty(n, dtype=np.int64)  # placed blocks, sorted by offset
    for count in range(n):
        b = order[count]
        need, step = slots[b], align[b]
        candidate = 0
        for q in range(count):
            p = by_offset[q]
            if begin[p] > finish[b] or finish[p] < begin[b]:
                continue  # never live at once: may share bytes
            if at[p] - candidate >= need:
                break  # the gap before p fits
            end = (at[p] + slots[p] + step - 1) // step * step
            if end > candidate:
                candidate = end
        at[b] = candidate
        pos = count
        while pos > 0 and at[by_offset[pos - 1]] > candidate:
            by_offset[pos] = by_offset[pos - 1]
            pos -= 1
        by_offset[pos] = b
    return at
