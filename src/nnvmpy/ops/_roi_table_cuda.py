"""The roi ops' per-roi tables made on the GPU from the rois there: a thread per roi.

Why. ROIAlign, RROIAlign and PSROIPooling read each roi through a small float64 table
(its batch index, corners or grid, sample counts, rotation). It was made on the host, so
every GPU forward and backward copied the rois to the host, waited for the op's stream
(which drains the kernels queued before it) and uploaded the table back: a device->host
round trip and a stall per call, in every Faster/Mask R-CNN step. Here a kernel of R
threads (R rois: 2 x 512 for Mask R-CNN's FPN head, four blocks of 256) writes the same
table on the device, queued on the op's stream with no wait. The CPU keeps its NumPy
tables (the op files' host functions), which these kernels must match. A batch index
out of range is no error on either device: the table keeps it (-1 where it is no
integer) and the sampling kernels skip that roi, reading nothing (zeros, no gradient).

Same table, entry for entry, in float64 (the rois of any float type are read exactly):
the same operations in the same order, with NumPy's rules for NaN (np.maximum keeps a
NaN, a NaN bin gets no samples). One difference would change results, not only round
them: NVVM fuses a product and the sum that follows it into one FMA (its -fma=1
default), rounding once where NumPy rounds twice, so a roi x2 s - 0.5 could come out an
ulp off and a bin's ceil(size) sample count flip. The ops' bodies take their products
from kernel/unfused.py (`product`: never fused; libdevice's dmul_rn on a GPU). Only cos
and sin (RROIAlign) are CUDA's own, within an ulp or two of the host's; grids never
depend on them.

    rows = device_table(ctx, body, rois, width, *args)   # body(r, out, rois, *args) per roi

Parts shared by the ops' bodies (which live next to their host tables): batch_index,
sample_grid_of, at_least, rounded_corner and rounded_rows (PSROIPooling's whole table).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import kernel
from ..kernel import uindex
from ..kernel.launch import flat
from ._index_kernels import device_empty
from ._roi_sampling import MAX_GRID

_MAX_GRID = float(MAX_GRID)  # the table's floats
_NO_INT32 = 2147483648.0  # 2^31: a batch index at or past it is no image
_TWO_53 = 9007199254740992.0  # 2^53: every float this large is even


@kernel.device_function
def batch_index(v):
    """_roi_sampling.batch_indices of one value: v truncated, or -1 (no image) for a NaN,
    infinite or beyond-int32 v."""
    if abs(v) < _NO_INT32:  # False for NaN
        return float(int(v))  # the cast truncates, as np.trunc
    return -1.0


@kernel.device_function
def sample_grid_of(bin_size):
    """_roi_sampling.sample_grid of one bin size: ceil(bin size) in [0, MAX_GRID], 0 for
    NaN. float(): numba-cuda's math.ceil returns a float, the simulator's an int."""
    if not bin_size > 0.0:  # NaN too
        return 0.0
    if bin_size >= _MAX_GRID:
        return _MAX_GRID
    return float(math.ceil(bin_size))


@kernel.device_function
def at_least(x, low):
    """np.maximum(x, low): a NaN x stays NaN (Python's and numba's max may drop it)."""
    return low if x < low else x


@kernel.device_function
def rounded_corner(v):
    """C's round of one corner (half away from zero), as _roi_sampling.rounded_rois does
    it: floor(v + 0.5) for v >= 0, else ceil(v - 0.5). From 2^53 on (and for NaN and
    infinities) that is v itself, and v is kept out of floor and ceil's int (below 2^53,
    v + 0.5 can round to an odd v's neighbour, as NumPy's does)."""
    if not abs(v) < _TWO_53:
        return v
    if v >= 0.0:
        return float(math.floor(v + 0.5))
    return float(math.ceil(v - 0.5))


@kernel.parallel_for
def rounded_rows(r, out, rois):
    """Row r of _roi_sampling.rounded_rois: (batch index, x1, y1, x2, y2), the corners
    rounded, the batch index as batch_index gives it."""
    k = r * 5
    out[uindex(k)] = batch_index(float(rois[uindex(k)]))
    for c in range(1, 5):
        out[uindex(k + c)] = rounded_corner(float(rois[uindex(k + c)]))


def device_table(ctx: Any, body: Any, rois: Any, width: int, *args: Any) -> Any:
    """The flat float64 (R, width) table of the (R, columns) rois that `body` writes, a
    row per item (body(r, out, flat rois, *args)), on ctx's device; no host copy. No
    rois: a scratch of one element, never read, and no launch."""
    out = device_empty(ctx, rois.shape[0] * width, np.float64)
    if rois.shape[0]:
        body.launch(ctx, rois.shape[0], out, flat(rois), *args)
    return out
