"""OpCase rows for contrib_roi_align.py and contrib_rroi_align.py. The references
evaluate each bin's sample grid with NumPy (a plain bilinear lookup per sample point),
from the documented algorithms. Only `data` is differentiated: the rois get a zero
gradient by definition."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from op_db import OpCase


def _bilinear(img: np.ndarray, y: float, x: float) -> np.ndarray:
    """img (C, H, W) at (y, x): 0 beyond one pixel outside, the border pixel at the edge."""
    _, h, w = img.shape
    if y < -1 or y > h or x < -1 or x > w:
        return np.zeros(img.shape[0])
    y, x = min(max(y, 0.0), h - 1), min(max(x, 0.0), w - 1)
    y0, x0 = math.floor(y), math.floor(x)
    y1, x1 = min(y0 + 1, h - 1), min(x0 + 1, w - 1)
    a, b = y - y0, x - x0
    return (
        (1 - a) * (1 - b) * img[:, y0, x0]
        + (1 - a) * b * img[:, y0, x1]
        + a * (1 - b) * img[:, y1, x0]
        + a * b * img[:, y1, x1]
    )


def roi_align_ref(
    data: np.ndarray,
    rois: np.ndarray,
    pooled_size: Any,
    spatial_scale: float,
    sample_ratio: int = -1,
    position_sensitive: bool = False,
    aligned: bool = False,
) -> np.ndarray:
    ph_n, pw_n = pooled_size
    c_in = data.shape[1]
    c_out = c_in // (ph_n * pw_n) if position_sensitive else c_in
    out = np.zeros((rois.shape[0], c_out, ph_n, pw_n))
    shift = 0.5 if aligned else 0.0
    for r, (b, *box) in enumerate(rois):
        if int(b) < 0:
            continue
        x1, y1, x2, y2 = (v * spatial_scale - shift for v in box)
        w, h = x2 - x1, y2 - y1
        if not aligned:
            w, h = max(w, 1.0), max(h, 1.0)
        bh, bw = h / ph_n, w / pw_n
        gh = sample_ratio if sample_ratio > 0 else math.ceil(bh)
        gw = sample_ratio if sample_ratio > 0 else math.ceil(bw)
        for ph in range(ph_n):
            for pw in range(pw_n):
                samples = [
                    _bilinear(
                        data[int(b)],
                        y1 + (ph + (i + 0.5) / gh) * bh,
                        x1 + (pw + (j + 0.5) / gw) * bw,
                    )
                    for i in range(gh)
                    for j in range(gw)
                ]
                mean = np.sum(samples, axis=0) / max(gh * gw, 1)
                if position_sensitive:
                    out[r, :, ph, pw] = mean[ph * pw_n + pw :: ph_n * pw_n]
                else:
                    out[r, :, ph, pw] = mean
    return out


def rroi_align_ref(
    data: np.ndarray,
    rois: np.ndarray,
    pooled_size: Any,
    spatial_scale: float,
    sampling_ratio: int = -1,
) -> np.ndarray:
    ph_n, pw_n = pooled_size
    out = np.zeros((rois.shape[0], data.shape[1], ph_n, pw_n))
    for r, (b, cx, cy, w, h, angle) in enumerate(rois):
        if int(b) < 0:
            continue
        cx, cy = cx * spatial_scale, cy * spatial_scale
        w, h = max(w * spatial_scale, 1.0), max(h * spatial_scale, 1.0)
        cos, sin = math.cos(math.radians(angle)), math.sin(math.radians(angle))
        bh, bw = h / ph_n, w / pw_n
        gh = sampling_ratio if sampling_ratio > 0 else math.ceil(bh)
        gw = sampling_ratio if sampling_ratio > 0 else math.ceil(bw)
        for ph in range(ph_n):
            for pw in range(pw_n):
                total = np.zeros(data.shape[1])
                for i in range(gh):
                    for j in range(gw):
                        u = -w / 2 + (pw + (j + 0.5) / gw) * bw  # along the roi's width
                        v = -h / 2 + (ph + (i + 0.5) / gh) * bh
                        total += _bilinear(
                            data[int(b)], v * cos - u * sin + cy, u * cos + v * sin + cx
                        )
                out[r, :, ph, pw] = total / (gh * gw)
    return out


def _rroi_inputs(rng: np.random.Generator, dtype: Any) -> list[np.ndarray]:
    data = rng.uniform(-1, 1, (2, 3, 6, 7)).astype(dtype)
    centre = rng.uniform(0, 12, (5, 2))
    size = rng.uniform(0.5, 10, (5, 2))
    angle = rng.uniform(0, 180, (5, 1))
    batch = np.array([[0], [1], [1], [0], [-1]])
    return [data, np.concatenate([batch, centre, size, angle], axis=1).astype(dtype)]


def _roi_inputs(channels: int) -> Any:
    def make(rng: np.random.Generator, dtype: Any) -> list[np.ndarray]:
        data = rng.uniform(-1, 1, (2, channels, 6, 7)).astype(dtype)
        corner = rng.uniform(-2, 10, (5, 2))
        size = rng.uniform(0.5, 8, (5, 2))
        batch = np.array([[0], [1], [1], [0], [-1]])
        rois = np.concatenate([batch, corner, corner + size], axis=1).astype(dtype)
        return [data, rois]

    return make


CASES = [
    OpCase(
        "_contrib_ROIAlign",
        shapes=[(2, 3, 6, 7), (5, 5)],
        params={"pooled_size": (3, 2), "spatial_scale": 0.7},
        reference=roi_align_ref,
        inputs=_roi_inputs(3),
        grad_inputs=[0],
    ),
    OpCase(
        "_contrib_ROIAlign",
        shapes=[(2, 3, 6, 7), (5, 5)],
        params={"pooled_size": (2, 2), "spatial_scale": 0.5, "sample_ratio": 2, "aligned": True},
        reference=roi_align_ref,
        inputs=_roi_inputs(3),
        grad_inputs=[0],
        id="aligned",
    ),
    OpCase(
        "_contrib_ROIAlign",
        shapes=[(2, 8, 6, 7), (5, 5)],
        params={"pooled_size": (2, 2), "spatial_scale": 0.9, "position_sensitive": True},
        reference=roi_align_ref,
        inputs=_roi_inputs(8),
        grad_inputs=[0],
        id="position_sensitive",
    ),
    OpCase(
        "_contrib_RROIAlign",
        shapes=[(2, 3, 6, 7), (5, 6)],
        params={"pooled_size": (2, 3), "spatial_scale": 0.5},
        reference=rroi_align_ref,
        inputs=_rroi_inputs,
        grad_inputs=[0],
    ),
    OpCase(
        "_contrib_RROIAlign",
        shapes=[(2, 3, 6, 7), (5, 6)],
        params={"pooled_size": (3, 2), "spatial_scale": 0.8, "sampling_ratio": 2},
        reference=rroi_align_ref,
        inputs=_rroi_inputs,
        grad_inputs=[0],
        id="sampling_ratio",
    ),
]
