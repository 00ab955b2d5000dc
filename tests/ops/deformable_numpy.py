"""DeformableConvolution's forward and gradients in vectorised NumPy (float64): the
reference for the op's kernels (src/nnvmpy/ops/_deformable.py). Whole-array gathers of the
bilinear corners, einsum for the grouped products and np.add.at for the scatter: a
different route from the kernels' columns, plane walks and BLAS.

`p` is any object with kernel, stride, dilate, pad ((h, w) pairs, filled in),
num_filter, num_group and num_deformable_group; a mask of None is DCNv1.

The two ops treat the border as MXNet's kernels do. DCNv2 samples in (-1, H) x (-1, W)
with corners off the map read as 0. DCNv1 samples only in [0, H) x [0, W), and a sample
past the last row (column) reads that row (column): its position is clamped to H - 1
there, so it has no slope in y (x)."""

from __future__ import annotations

from typing import Any

import numpy as np


class _Samples:
    """Where every (channel group, tap, output position) samples, and its bilinear corners."""

    def __init__(self, p: Any, data_shape: Any, offset: np.ndarray, v1: bool = False):
        (kh, kw), (sh, sw), (dh, dw), (ph, pw) = p.kernel, p.stride, p.dilate, p.pad
        n, _, self.h, self.w = data_shape
        dg, k = p.num_deformable_group, kh * kw
        oh, ow = offset.shape[2:]
        off = offset.astype(np.float64).reshape(n, dg, k, 2, oh, ow)
        i, j = np.divmod(np.arange(k), kw)
        base_y = (np.arange(oh) * sh - ph)[None, :, None] + (i * dh)[:, None, None]
        base_x = (np.arange(ow) * sw - pw)[None, None, :] + (j * dw)[:, None, None]
        self.y = base_y + off[:, :, :, 0]  # (N, DG, K, OH, OW)
        self.x = base_x + off[:, :, :, 1]
        y, x = self.y, self.x
        if v1:
            self.inside = (y >= 0) & (y < self.h) & (x >= 0) & (x < self.w)
        else:
            self.inside = (y > -1) & (y < self.h) & (x > -1) & (x < self.w)
        # DCNv1 past the last row (column): the position clamped to it, no slope there
        self.slope_y = ~(v1 & (np.floor(y) >= self.h - 1))
        self.slope_x = ~(v1 & (np.floor(x) >= self.w - 1))
        y = np.where(self.slope_y, y, self.h - 1)
        x = np.where(self.slope_x, x, self.w - 1)
        self.y0 = np.floor(y).astype(np.int64)
        self.x0 = np.floor(x).astype(np.int64)
        self.ly = y - self.y0
        self.lx = x - self.x0

    def corners(self) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
        """(rows, cols, valid, dy weight sign, dx weight sign) of the 4 corners."""
        out = []
        for a, b in ((0, 0), (0, 1), (1, 0), (1, 1)):
            rows, cols = self.y0 + a, self.x0 + b
            valid = self.inside & (rows >= 0) & (rows < self.h) & (cols >= 0) & (cols < self.w)
            out.append((np.clip(rows, 0, self.h - 1), np.clip(cols, 0, self.w - 1), valid, a, b))
        return out

    def weights(self, a: int, b: int) -> np.ndarray:
        wy = self.ly if a else 1 - self.ly
        wx = self.lx if b else 1 - self.lx
        return wy * wx


def _grouped(x: np.ndarray, dg: int) -> np.ndarray:
    """(N, C, H, W) -> (N, DG, C / DG, H, W)."""
    n, c, h, w = x.shape
    return x.reshape(n, dg, c // dg, h, w)


def _gather(xg: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """xg (N, DG, Cg, H, W) at rows/cols (N, DG, K, OH, OW) -> (N, DG, Cg, K, OH, OW)."""
    n, dg = xg.shape[:2]
    ni = np.arange(n)[:, None, None, None, None]
    gi = np.arange(dg)[None, :, None, None, None]
    return np.moveaxis(xg[ni, gi, :, rows, cols], -1, 2)


def _raw_columns(s: _Samples, xg: np.ndarray) -> np.ndarray:
    """The bilinear samples (N, DG, C / DG, K, OH, OW) of xg (N, DG, C / DG, H, W)."""
    cols = 0.0
    for rows, cs, valid, a, b in s.corners():
        cols = cols + _gather(xg, rows, cs) * (s.weights(a, b) * valid)[:, :, None]
    return np.asarray(cols)


def _mask_groups(mask: np.ndarray | None, dg: int) -> np.ndarray | None:
    """DCNv2's modulation (N, DG K, OH, OW) as (N, DG, 1, K, OH, OW), or None (DCNv1)."""
    if mask is None:
        return None
    n, dk, oh, ow = mask.shape
    return mask.astype(np.float64).reshape(n, dg, 1, dk // dg, oh, ow)


def columns(s: _Samples, data: np.ndarray, dg: int, mask: np.ndarray | None = None) -> np.ndarray:
    """The sampled columns (N, C, K, OH, OW), each tap scaled by its mask when there is one."""
    cols = _raw_columns(s, _grouped(data.astype(np.float64), dg))
    m = _mask_groups(mask, dg)
    if m is not None:
        cols = cols * m
    n, _, cg = cols.shape[:3]
    return cols.reshape(n, dg * cg, *s.y.shape[2:])


def _conv(p: Any, cols: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """Grouped product: cols (N, C, K, OH, OW), weight (F, C/G, KH, KW) -> (N, F, OH, OW)."""
    n, c, k, oh, ow = cols.shape
    g, f = p.num_group, p.num_filter
    cg = cols.reshape(n, g, c // g * k, oh * ow)
    wg = weight.astype(np.float64).reshape(g, f // g, c // g * k)
    return np.einsum("gfk,ngkp->ngfp", wg, cg).reshape(n, f, oh, ow)


def deformable_forward_np(p: Any, data, offset, mask, weight, bias) -> list:
    s = _Samples(p, data.shape, offset, v1=mask is None)
    out = _conv(p, columns(s, data, p.num_deformable_group, mask), weight)
    if bias is not None:
        out += bias.astype(np.float64)[None, :, None, None]
    return [out]


def deformable_grads_np(p: Any, dy, data, offset, mask, weight, bias) -> list:
    """Gradients wrt (data, offset[, mask], weight[, bias]); mask None is DCNv1."""
    n, c = data.shape[:2]
    g, f, dg = p.num_group, p.num_filter, p.num_deformable_group
    s = _Samples(p, data.shape, offset, v1=mask is None)
    xg = _grouped(data.astype(np.float64), dg)
    raw = _raw_columns(s, xg)  # (N, DG, C / DG, K, OH, OW), before the mask
    m = _mask_groups(mask, dg)
    k, oh, ow = raw.shape[3:]
    cols = (raw if m is None else raw * m).reshape(n, g, c // g * k, oh * ow)
    dyg = dy.astype(np.float64).reshape(n, g, f // g, oh * ow)
    d_weight = np.einsum("ngfp,ngkp->gfk", dyg, cols).reshape(weight.shape)
    wg = weight.astype(np.float64).reshape(g, f // g, c // g * k)
    d_cols = np.einsum("gfk,ngfp->ngkp", wg, dyg).reshape(raw.shape)
    d_mask = None if m is None else (d_cols * raw).sum(axis=2).reshape(mask.shape)
    if m is not None:
        d_cols = d_cols * m  # what reaches the bilinear samples
    d_data = np.zeros(xg.shape)
    d_y = np.zeros(s.y.shape)
    d_x = np.zeros(s.x.shape)
    ni = np.arange(n)[:, None, None, None, None, None]
    gi = np.arange(dg)[None, :, None, None, None, None]
    ci = np.arange(c // dg)[None, None, :, None, None, None]
    for rows, cs, valid, a, b in s.corners():
        wy = s.ly if a else 1 - s.ly
        wx = s.lx if b else 1 - s.lx
        scatter = d_cols * (wy * wx * valid)[:, :, None]
        np.add.at(d_data, (ni, gi, ci, rows[:, :, None], cs[:, :, None]), scatter)
        # d val / d y: the corner's value times d wy / d y (+1 for the lower row, -1 upper)
        v = _gather(xg, rows, cs) * valid[:, :, None]
        contrib = (d_cols * v).sum(axis=2)
        d_y += contrib * (1 if a else -1) * wx
        d_x += contrib * (1 if b else -1) * wy
    d_y, d_x = d_y * s.inside * s.slope_y, d_x * s.inside * s.slope_x
    d_offset = np.stack([d_y, d_x], axis=3).reshape(offset.shape)
    grads = [d_data.reshape(data.shape), d_offset]
    if d_mask is not None:
        grads.append(d_mask)
    grads.append(d_weight)
    if bias is not None:
        grads.append(dy.astype(np.float64).sum(axis=(0, 2, 3)))
    return grads
