"""OpCase rows for contrib_psroi_pooling.py: the reference averages each bin's window
with NumPy slicing (checked once against MXNet 1.9.1's outputs when written)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from op_db import OpCase


def _round_half_away(v: float) -> int:
    return math.floor(v + 0.5) if v >= 0 else math.ceil(v - 0.5)


def psroi_pooling_ref(
    data: np.ndarray,
    rois: np.ndarray,
    spatial_scale: float,
    output_dim: int,
    pooled_size: int,
    group_size: int = 0,
) -> np.ndarray:
    g, p = group_size or pooled_size, pooled_size
    _, _, h, w = data.shape
    out = np.zeros((rois.shape[0], output_dim, p, p))
    for r, (b, *box) in enumerate(rois):
        x1, y1, x2, y2 = (_round_half_away(v) for v in box)
        left, top = x1 * spatial_scale, y1 * spatial_scale
        width = max((x2 + 1) * spatial_scale - left, 0.1)
        height = max((y2 + 1) * spatial_scale - top, 0.1)
        for ph in range(p):
            r0 = min(max(math.floor(ph * height / p + top), 0), h)
            r1 = min(max(math.ceil((ph + 1) * height / p + top), 0), h)
            for pw in range(p):
                c0 = min(max(math.floor(pw * width / p + left), 0), w)
                c1 = min(max(math.ceil((pw + 1) * width / p + left), 0), w)
                if r1 <= r0 or c1 <= c0:
                    continue
                gh, gw = ph * g // p, pw * g // p
                for c in range(output_dim):
                    window = data[int(b), (c * g + gh) * g + gw, r0:r1, c0:c1]
                    out[r, c, ph, pw] = window.mean()
    return out


def _psroi_inputs(channels: int) -> Any:
    def make(rng: np.random.Generator, dtype: Any) -> list[np.ndarray]:
        data = rng.uniform(-1, 1, (2, channels, 8, 9)).astype(dtype)
        corner = rng.uniform(-4, 20, (4, 2))
        size = rng.uniform(1, 24, (4, 2))
        batch = np.array([[0], [1], [1], [0]])
        return [data, np.concatenate([batch, corner, corner + size], axis=1).astype(dtype)]

    return make


CASES = [
    OpCase(
        "_contrib_PSROIPooling",
        shapes=[(2, 18, 8, 9), (4, 5)],
        params={"spatial_scale": 0.25, "output_dim": 2, "pooled_size": 3},
        reference=psroi_pooling_ref,
        inputs=_psroi_inputs(18),
        grad_inputs=[0],
    ),
    OpCase(
        "_contrib_PSROIPooling",
        shapes=[(2, 8, 8, 9), (4, 5)],
        params={"spatial_scale": 0.5, "output_dim": 2, "pooled_size": 4, "group_size": 2},
        reference=psroi_pooling_ref,
        inputs=_psroi_inputs(8),
        grad_inputs=[0],
        id="group",
    ),
]
