"""Rois the roi ops' GPU tests share: the awkward cases every per-roi table must survive,
overlapping rois for the atomic backward kernels, and the checks that a GPU call copies
neither the rois nor their table through the host.

The awkward (batch, x1, y1, x2, y2) rows are one list for ROIAlign's, PSROIPooling's and
DeformablePSROIPooling's tables (test_roi_table_gpu.py, test_deformable_psroi_table_gpu.py):
zero-size, inverted, negative, off the map, huge (a capped grid), integral bin sizes at
the tests' scales (a ceil that must not flip), corners on .5 (C's round, also past 2^52),
NaN and infinite corners, and batch indices -1, past the batch, fractional, NaN,
infinite and past int32.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.engine.base import RunContext
from nnvmpy.kernel.launch import is_gpu
from nnvmpy.resource import OpContext

HUGE = 1e30

AWKWARD_ROIS = [
    [0, 3, 3, 3, 3],  # zero-size
    [1, 9, 8, 2, 1],  # inverted
    [0, -7, -5, -1, -2],  # negative, off the map
    [1, 40, 50, 90, 80],  # off the map
    [0, 0, 0, HUGE, HUGE],  # huge: a capped grid
    [0, -HUGE, 0, 3, 3],
    [1, 1, 2, 15, 16],  # integral bin sizes at the tests' scales
    [0, 10, 10, 80, 80],
    [0, 2.5, -2.5, 3.5, 0.49999999999999994],  # C's round
    [1, -0.5, 0.5, -1.5, 1.5],
    [1, 2.0**52 + 1, 2.0**53 + 2, -(2.0**52) - 1, 0.5],  # ... of large corners
    [1, -0.5, 0.5, np.nan, 4],
    [0, np.inf, 1, 4, 4],
    [0, 1, 1, 4, -np.inf],
    [0, np.nan, np.nan, np.nan, np.nan],
    [-1, 1, 1, 6, 6],  # batch indices: none, past the batch, fractional, ...
    [2, 1, 1, 6, 6],
    [1.7, 1, 1, 6, 6],
    [-0.5, 1, 1, 6, 6],
    [np.nan, 1, 1, 6, 6],
    [np.inf, 1, 1, 6, 6],
    [-np.inf, 1, 1, 6, 6],
    [2.0**31, 1, 1, 6, 6],
]


def corner_rois(rng: np.random.Generator, n: int) -> np.ndarray:
    """n random (batch, x1, y1, x2, y2) rois over 2 images, then AWKWARD_ROIS."""
    corner = rng.uniform(-6, 30, (n, 2))
    far = corner + rng.uniform(-2, 25, (n, 2))
    rois = np.concatenate([rng.integers(0, 2, (n, 1)), corner, far], 1)
    return np.concatenate([rois, np.array(AWKWARD_ROIS)])


def overlapping_rois(rng: np.random.Generator, n: int, batch: int, extent: float) -> np.ndarray:
    """n (batch, x1, y1, x2, y2) rois over `batch` images: overlapping, some partly off
    the map, rois 1 and 2 the same, roi 0 on no image (batch index -1)."""
    corner = rng.uniform(-3, extent * 0.6, (n, 2))
    far = corner + rng.uniform(0.5, extent * 0.7, (n, 2))
    rois = np.concatenate([rng.integers(0, batch, (n, 1)), corner, far], 1)
    rois[2] = rois[1]
    rois[0, 0] = -1
    return rois


def typed(rois: np.ndarray, dtype: Any) -> np.ndarray:
    """rois in dtype, past float16's range infinite."""
    with np.errstate(over="ignore"):
        return rois.astype(dtype)


def gpu_ctx() -> OpContext:
    return OpContext(True, RunContext(nv.gpu(0), None), [])


def on_device(make: Any, p: Any, rois: np.ndarray) -> np.ndarray:
    """make(ctx, params, rois), a device table builder, on the GPU; read back."""
    from numba import cuda

    return make(gpu_ctx(), p, cuda.to_device(np.ascontiguousarray(rois))).copy_to_host()


def refuse_host_copies(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a GPU, _roi_sampling's to_host (the rois copied down) and to_ctx (a host table
    uploaded) raise; on the CPU, to_ctx is the table itself and still runs."""
    from nnvmpy.ops import _roi_sampling

    for name in ("to_host", "to_ctx"):
        original = getattr(_roi_sampling, name)

        def refuse(ctx: Any, a: Any, _original: Any = original) -> Any:
            if is_gpu(ctx):
                raise AssertionError("the rois or their table went through the host")
            return _original(ctx, a)

        monkeypatch.setattr(_roi_sampling, name, refuse)
