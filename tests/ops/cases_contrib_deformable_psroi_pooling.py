"""OpCase rows for contrib_deformable_psroi_pooling.py.

The reference follows the documented definition sample by sample with Python loops
(checked once against MXNet 1.9.1's outputs when written). The rois keep every sample
well inside the map, so the finite differences of `trans` see the bilinear blend only.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from op_db import OpCase


def _round_half_away(v: float) -> int:
    return math.floor(v + 0.5) if v >= 0 else math.ceil(v - 0.5)


def _bilinear(m: np.ndarray, x: float, y: float) -> float:
    x0, x1, y0, y1 = math.floor(x), math.ceil(x), math.floor(y), math.ceil(y)
    ax, ay = x - x0, y - y0
    return (
        (1 - ax) * (1 - ay) * m[y0, x0]
        + (1 - ax) * ay * m[y1, x0]
        + ax * (1 - ay) * m[y0, x1]
        + ax * ay * m[y1, x1]
    )


def deformable_psroi_pooling_ref(
    data: np.ndarray,
    rois: np.ndarray,
    trans: np.ndarray | None = None,
    *,
    spatial_scale: float,
    output_dim: int,
    group_size: int,
    pooled_size: int,
    part_size: int = 0,
    sample_per_part: int = 1,
    trans_std: float = 0.0,
    no_trans: bool = False,
) -> np.ndarray:
    """The visible output (R, output_dim, P, P)."""
    p, g, s = pooled_size, group_size, sample_per_part
    q = part_size or p
    scale, std = float(np.float32(spatial_scale)), float(np.float32(trans_std))
    _, _, h, w = data.shape
    classes = 1 if no_trans else trans.shape[1] // 2  # type: ignore[union-attr]
    out = np.zeros((rois.shape[0], output_dim, p, p))
    for r, (b, *box) in enumerate(rois):
        x1, y1, x2, y2 = (_round_half_away(v) for v in box)
        left, top = x1 * scale - 0.5, y1 * scale - 0.5
        width = max((x2 + 1) * scale - 0.5 - left, 0.1)
        height = max((y2 + 1) * scale - 0.5 - top, 0.1)
        for c in range(output_dim):
            k = c // (output_dim // classes)
            for ph in range(p):
                for pw in range(p):
                    qh, qw = math.floor(ph / p * q), math.floor(pw / p * q)
                    dx = 0.0 if no_trans else trans[r, 2 * k, qh, qw] * std  # type: ignore[index]
                    dy = 0.0 if no_trans else trans[r, 2 * k + 1, qh, qw] * std  # type: ignore[index]
                    channel = (c * g + ph * g // p) * g + pw * g // p
                    values = []
                    for ih in range(s):
                        for iw in range(s):
                            x = pw * width / p + left + dx * width + iw * width / p / s
                            y = ph * height / p + top + dy * height + ih * height / p / s
                            if not (-0.5 <= x <= w - 0.5 and -0.5 <= y <= h - 0.5):
                                continue
                            x, y = min(max(x, 0.0), w - 1.0), min(max(y, 0.0), h - 1.0)
                            values.append(_bilinear(data[int(b), channel], x, y))
                    out[r, c, ph, pw] = np.mean(values) if values else 0.0
    return out


def _inputs(channels: int, pairs: int, part: int, n_rois: int = 3) -> Any:
    """data (2, channels, 10, 11), rois well inside the map, trans (R, pairs, part, part)."""

    def make(rng: np.random.Generator, dtype: Any) -> list[np.ndarray]:
        data = rng.uniform(-1, 1, (2, channels, 10, 11))
        corner = rng.uniform(4, 6, (n_rois, 2))
        size = rng.uniform(5, 8, (n_rois, 2))
        batch = rng.integers(0, 2, (n_rois, 1))
        rois = np.concatenate([batch, corner, corner + size], axis=1)
        out = [data, rois]
        if pairs:
            out.append(rng.uniform(-1, 1, (n_rois, pairs, part, part)))
        return [a.astype(dtype) for a in out]

    return make


_BASE = {"spatial_scale": 0.5, "output_dim": 2, "group_size": 2, "pooled_size": 2}

CASES = [
    OpCase(
        "_contrib_DeformablePSROIPooling",
        shapes=[(2, 8, 10, 11), (3, 5), (3, 4, 2, 2)],
        params={**_BASE, "sample_per_part": 2, "trans_std": 0.1},
        reference=deformable_psroi_pooling_ref,
        inputs=_inputs(8, 4, 2),
        grad_inputs=[0, 2],
    ),
    OpCase(
        "_contrib_DeformablePSROIPooling",
        shapes=[(2, 27, 10, 11), (3, 5), (3, 2, 2, 2)],
        params={
            **_BASE,
            "output_dim": 3,
            "group_size": 3,
            "pooled_size": 3,
            "part_size": 2,
            "sample_per_part": 3,
            "trans_std": 0.2,
        },
        reference=deformable_psroi_pooling_ref,
        inputs=_inputs(27, 2, 2),
        grad_inputs=[0, 2],
        id="parts",
    ),
    OpCase(
        "_contrib_DeformablePSROIPooling",
        shapes=[(2, 8, 10, 11), (3, 5)],
        params={**_BASE, "pooled_size": 4, "sample_per_part": 2, "no_trans": True},
        reference=deformable_psroi_pooling_ref,
        inputs=_inputs(8, 0, 0),
        grad_inputs=[0],
        id="no_trans",
    ),
]
