"""gather_nd and its scatter-add gradient on the CPU: whole sub-arrays per index column.

gather_scatter.py took NumPy's fancy indexing for the gather (a temporary, then a copy
into the output) and `np.add.at` for the gradient, which visits one element at a time:
(8192 rows of 1024 from 4096) backward took 74 ms, 1.97x MXNet's forward + backward.
Here an index column y names one sub-array of `inner` contiguous elements (its offset
comes from gather_scatter's checked, wrapped coordinates), and

    gather:       task y copies (or adds) data[off[y]] into out[y];
    scatter-add:  task t owns the output rows [t R / T, (t + 1) R / T) and walks all of
                  off in order, adding data[y] into the rows it owns.

Every output row is added to by one task, in index order, so the sums are np.add.at's,
bit for bit, whatever the thread count, and no atomics are needed. boolean_mask takes
whole slices with gather_rows too, both ways. Imported on the first CPU launch (it
imports numba).
"""

from __future__ import annotations

from numba import prange

from .. import kernel
from .nn._uindex import u as _u


@kernel.cpu_kernel
def gather_rows(out, data, offsets, inner, add):
    # out: (len(offsets), inner) flat; out[y] (+)= data[offsets[y]], rows of inner; a
    # negative offset reads zeros (boolean_mask's gradient: the slices it dropped)
    for y in prange(offsets.size):
        src = offsets[y] * inner
        dst = y * inner
        if src < 0:
            if not add:
                for j in range(inner):
                    out[_u(dst + j)] = 0
        elif add:
            for j in range(inner):
                out[_u(dst + j)] += data[_u(src + j)]
        else:
            for j in range(inner):
                out[_u(dst + j)] = data[_u(src + j)]


@kernel.cpu_kernel
def scatter_add_rows(out, data, offsets, inner, tasks):
    # out: (rows, inner) flat; out[offsets[y]] += data[y] for every y, in order of y
    rows = out.size // inner
    for t in prange(tasks):
        lo = rows * t // tasks
        hi = rows * (t + 1) // tasks
        for y in range(offsets.size):
            o = offsets[y]
            if lo <= o < hi:
                dst = o * inner
                src = y * inner
                for j in range(inner):
                    out[_u(dst + j)] += data[_u(src + j)]
