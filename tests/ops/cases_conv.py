"""OpCase rows for Convolution and Pooling, with plain NumPy references.

The convolution reference pads the input with np.pad and sums kernel taps as strided
slices (one einsum per tap and filter) — no im2col, no GEMM. The pooling reference
loops over every output window and applies MXNet's rules directly: max ignores the
padding, avg divides by the window clipped to the padded input (count_include_pad) or
to the input itself, full convention lets the last window run past the padding.
Max pooling inputs are distinct values far apart, so finite differences never change
which element is the maximum.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from op_db import Inputs, OpCase

# -- references --------------------------------------------------------------------------------


def _two(values: Any, fill: int, nd: int) -> tuple[int, int]:
    values = tuple(values) if values else (fill,) * nd
    return (fill, values[0]) if len(values) == 1 else (values[0], values[1])


def conv_reference(
    x: np.ndarray, w: np.ndarray, b: np.ndarray | None = None, **p: Any
) -> np.ndarray:
    """Cross-correlation of NC(H)W data with (F, C/g, k...) weights, as MXNet defines it."""
    nd = len(p["kernel"])
    one_d = x.ndim == 3
    if one_d:
        x, w = x[:, :, None, :], w[:, :, None, :]
    (kh, kw), (sh, sw) = _two(p["kernel"], 1, nd), _two(p.get("stride"), 1, nd)
    (ph, pw), (dh, dw) = _two(p.get("pad"), 0, nd), _two(p.get("dilate"), 1, nd)
    groups = p.get("num_group", 1)
    n, c, h, wd = x.shape
    f = w.shape[0]
    ho = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    wo = (wd + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    cg, fg = c // groups, f // groups
    out = np.zeros((n, f, ho, wo))
    for k in range(f):
        g = k // fg
        for i in range(kh):
            for j in range(kw):
                tap = xp[
                    :,
                    g * cg : (g + 1) * cg,
                    i * dh : i * dh + sh * (ho - 1) + 1 : sh,
                    j * dw : j * dw + sw * (wo - 1) + 1 : sw,
                ]
                out[:, k] += np.einsum("nchw,c->nhw", tap, w[k, :, i, j])
        if b is not None and not p.get("no_bias", False):
            out[:, k] += b[k]
    return out[:, :, 0, :] if one_d else out


def _out_size(x: int, k: int, s: int, pad: int, convention: str) -> int:
    span = x + 2 * pad - k
    return (math.ceil(span / s) if convention == "full" else span // s) + 1


def pool_reference(x: np.ndarray, **p: Any) -> np.ndarray:
    """Pooling by explicit windows (valid or full convention, global, all pool types)."""
    one_d = x.ndim == 3
    if one_d:
        x = x[:, :, None, :]
    n, c, h, w = x.shape
    kind = p.get("pool_type", "max")
    if p.get("global_pool", False):
        (kh, kw), (sh, sw), (ph, pw) = (h, w), (1, 1), (0, 0)
    else:
        nd = len(p["kernel"])
        (kh, kw), (sh, sw) = _two(p["kernel"], 1, nd), _two(p.get("stride"), 1, nd)
        (ph, pw) = _two(p.get("pad"), 0, nd)
    convention = p.get("pooling_convention", "valid")
    ho, wo = _out_size(h, kh, sh, ph, convention), _out_size(w, kw, sw, pw, convention)
    include_pad = p.get("count_include_pad", True) is not False
    out = np.zeros((n, c, ho, wo))
    for y in range(ho):
        for z in range(wo):
            top, left = y * sh - ph, z * sw - pw
            bottom, right = min(top + kh, h + ph), min(left + kw, w + pw)
            window = x[:, :, max(top, 0) : min(bottom, h), max(left, 0) : min(right, w)]
            if kind == "max":
                out[:, :, y, z] = window.max(axis=(2, 3))
            elif kind == "sum":
                out[:, :, y, z] = window.sum(axis=(2, 3))
            elif kind == "lp":
                q = p["p_value"]
                out[:, :, y, z] = (window**q).sum(axis=(2, 3)) ** (1.0 / q)
            else:
                size = (
                    (bottom - top) * (right - left)
                    if include_pad
                    else window.shape[2] * window.shape[3]
                )
                out[:, :, y, z] = window.sum(axis=(2, 3)) / size
    return out[:, :, 0, :] if one_d else out


def distinct(shape: tuple[int, ...], gap: float = 0.05) -> Any:
    """Inputs that are a shuffled ramp: every pair differs by at least `gap`."""

    def make(rng: np.random.Generator, dtype: Any) -> Inputs:
        size = int(np.prod(shape))
        values = (rng.permutation(size) - size / 2) * gap
        return [values.reshape(shape).astype(dtype)]

    return make


# -- rows ----------------------------------------------------------------------------------------


def conv(id: str, data: tuple[int, ...], weight: tuple[int, ...], **params: Any) -> OpCase:
    shapes = [data, weight] if params.get("no_bias") else [data, weight, (weight[0],)]
    params.setdefault("num_filter", weight[0])
    return OpCase("Convolution", shapes, conv_reference, params, id=id, atol=1e-4)


def pool(id: str, data: tuple[int, ...], **params: Any) -> OpCase:
    kind = params.get("pool_type", "max")
    make = distinct(data) if kind == "max" else None
    low = 0.1 if kind == "lp" else -1.0  # (sum x^p)^(1/p) of positive values is smooth
    return OpCase("Pooling", [data], pool_reference, params, id=id, inputs=make, low=low)


CASES = [
    conv("3x3-pad1", (2, 3, 5, 5), (4, 3, 3, 3), kernel=(3, 3), pad=(1, 1)),
    conv("3x3-stride2", (2, 3, 7, 6), (4, 3, 3, 3), kernel=(3, 3), stride=(2, 2), pad=(1, 1)),
    conv("1x1", (2, 3, 4, 4), (5, 3, 1, 1), kernel=(1, 1)),
    conv("1x1-stride2", (2, 3, 5, 5), (4, 3, 1, 1), kernel=(1, 1), stride=(2, 2), no_bias=True),
    conv("dilate2", (1, 2, 7, 7), (3, 2, 3, 3), kernel=(3, 3), dilate=(2, 2), pad=(1, 1)),
    conv("group2", (2, 4, 5, 5), (6, 2, 3, 3), kernel=(3, 3), pad=(1, 1), num_group=2),
    conv("depthwise", (2, 3, 6, 6), (6, 1, 3, 3), kernel=(3, 3), pad=(1, 1), num_group=3),
    conv("depthwise-s2", (1, 4, 7, 7), (4, 1, 3, 3), kernel=(3, 3), stride=(2, 2), num_group=4),
    conv("no_bias", (2, 3, 5, 6), (4, 3, 2, 3), kernel=(2, 3), stride=(1, 2), no_bias=True),
    conv("1d", (2, 3, 8), (4, 3, 3), kernel=(3,), pad=(1,)),
    pool("max-2x2", (2, 3, 6, 6), kernel=(2, 2), stride=(2, 2)),
    pool("max-3x3-pad1", (2, 2, 7, 7), kernel=(3, 3), stride=(2, 2), pad=(1, 1)),
    pool("max-full", (1, 2, 6, 6), kernel=(3, 3), stride=(2, 2), pooling_convention="full"),
    pool("max-global", (2, 3, 4, 5), kernel=(1, 1), global_pool=True),
    pool("avg-3x3-pad1", (2, 2, 7, 7), kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg"),
    pool(
        "avg-exclude-pad",
        (2, 2, 6, 6),
        kernel=(3, 3),
        stride=(2, 2),
        pad=(1, 1),
        pool_type="avg",
        count_include_pad=False,
    ),
    pool(
        "avg-full-pad",
        (1, 2, 6, 6),
        kernel=(3, 3),
        stride=(2, 2),
        pad=(1, 1),
        pool_type="avg",
        pooling_convention="full",
    ),
    pool("avg-global", (2, 3, 4, 4), kernel=(1, 1), global_pool=True, pool_type="avg"),
    pool("sum-2x2", (2, 2, 5, 5), kernel=(2, 2), pool_type="sum"),
    pool("lp2", (1, 2, 5, 5), kernel=(2, 2), stride=(2, 2), pool_type="lp", p_value=2),
    pool("max-1d", (2, 3, 9), kernel=(3,), stride=(2,)),
]
