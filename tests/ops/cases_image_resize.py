"""OpCase rows for image_resize.py: resize and crop against NumPy formulas.

resize's float reference builds, per axis, the (out x in) matrix of OpenCV's weights and
applies it as Wy @ image @ Wx^T: bilinear and bicubic sample at src = (dst + 0.5) * s - 0.5
with s = 1 / (out/in) and clamped taps, area averages each output's box [dst * s,
(dst + 1) * s), nearest takes floor(dst * s). Weights are rounded to float32 as OpenCV's
tables are. The uint8 reference follows OpenCV's integer path: 11-bit weights
round(w * 2048), rows summed as ints, then per output row bilinear's SIMD rounding
(sum of ((row >> 4) * weight) >> 16, then (+ 2) >> 2) and bicubic's (float32 sums of
row * weight / 2048^2 rounded half to even, the row's last len % 8 values
(sum + 2^21) >> 22); an exact 2x bilinear shrink is the 2x2 average (sum + 2) >> 2.
crop's reference is a slice; its gradient (dy inside, zero outside) is checked by finite
differences.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from op_db import OpCase

f32 = np.float32


def _cubic_weights(f: np.float32) -> list[np.float32]:
    """OpenCV's bicubic weights (a = -0.75) at fraction f, in float32 arithmetic."""
    a, one = f32(-0.75), f32(1.0)
    u, g = f + one, one - f
    c0 = ((a * u - f32(5) * a) * u + f32(8) * a) * u - f32(4) * a
    c1 = ((a + f32(2)) * f - (a + f32(3))) * f * f + one
    c2 = ((a + f32(2)) * g - (a + f32(3))) * g * g + one
    return [c0, c1, c2, one - c0 - c1 - c2]


def _taps(
    d: int, n_out: int, n_in: int, cubic: bool, clamp: bool, area: bool = False
) -> list[tuple[int, Any]]:
    """(clipped source index, float32 weight) of output d's taps; `clamp` moves the point
    itself inside (OpenCV does that along x for bilinear). `area`: growing area's point,
    s = floor(d * scale) with fraction (d + 1) - (s + 1) * out/in wrapped to [0, 1)."""
    scale = 1.0 / (n_out / n_in)
    if area:
        s = math.floor(d * scale)
        f = f32((d + 1) - (s + 1) * (n_out / n_in))
        f = f32(0) if f <= 0 else f32(f - math.floor(f))
    else:
        f = f32((d + 0.5) * scale - 0.5)
        s = math.floor(f)
        f = f32(f - s)
    clip = lambda j: min(max(j, 0), n_in - 1)  # noqa: E731
    if cubic:
        return [(clip(s - 1 + k), wk) for k, wk in enumerate(_cubic_weights(f))]
    if clamp and s < 0:
        s, f = 0, f32(0)
    if clamp and s >= n_in - 1:
        s, f = n_in - 1, f32(0)
    return [(clip(s), f32(1) - f), (clip(s + 1), f)]


def _tap_matrix(
    n_out: int, n_in: int, cubic: bool, clamp: bool = False, area: bool = False
) -> np.ndarray:
    m = np.zeros((n_out, n_in))
    for d in range(n_out):
        for s, wk in _taps(d, n_out, n_in, cubic, clamp, area):
            m[d, s] += wk
    return m


def _box_matrix(n_out: int, n_in: int) -> np.ndarray:
    """Area: output d covers [d * s, (d + 1) * s); partial pixels weigh their overlap."""
    scale = 1.0 / (n_out / n_in)
    m = np.zeros((n_out, n_in))
    for d in range(n_out):
        lo = d * scale
        hi = lo + scale
        cell = min(scale, n_in - lo)
        for s in range(n_in):
            overlap = min(hi, s + 1, n_in) - max(lo, s)
            if overlap > 1e-3:
                m[d, s] = f32(min(overlap, cell) / cell)
    return m


def _nearest_matrix(n_out: int, n_in: int) -> np.ndarray:
    m = np.zeros((n_out, n_in))
    for d in range(n_out):
        m[d, min(math.floor(d * (1.0 / (n_out / n_in))), n_in - 1)] = 1.0
    return m


def _matrices(h: int, w: int, oh: int, ow: int, interp: int) -> tuple[np.ndarray, np.ndarray]:
    if interp == 0 or (oh, ow) == (h, w):
        return _nearest_matrix(oh, h), _nearest_matrix(ow, w)
    if interp == 3 and oh <= h and ow <= w:
        return _box_matrix(oh, h), _box_matrix(ow, w)
    cubic, area = interp == 2, interp == 3  # area growing on an axis: bilinear-like taps
    return _tap_matrix(oh, h, cubic, area=area), _tap_matrix(ow, w, cubic, not cubic, area)


def _out_hw(h: int, w: int, size: tuple[int, ...], keep_ratio: bool) -> tuple[int, int]:
    if len(size) == 2:
        return size[1], size[0]
    s = size[0]
    if not keep_ratio:
        return s, s
    return (h * s // w, s) if h > w else (s, w * s // h)


def _integer_shrink(h: int, w: int, oh: int, ow: int) -> tuple[int, int] | None:
    ky, kx = 1.0 / (oh / h), 1.0 / (ow / w)
    whole = ky == round(ky) and kx == round(kx) and ky >= 1 and kx >= 1
    return (round(ky), round(kx)) if whole and (oh, ow) != (h, w) else None


def _resize(x: np.ndarray, size: tuple[int, ...], interp: int = 1, keep_ratio: bool = False):
    h, w = x.shape[-3:-1]
    oh, ow = _out_hw(h, w, tuple(size), keep_ratio)
    k = _integer_shrink(h, w, oh, ow)
    if k is not None and (interp == 3 or (interp == 1 and k == (2, 2))):
        # OpenCV's integer-scale area: the box's sum times float32(1 / box size)
        blocks = x.reshape(*x.shape[:-3], oh, k[0], ow, k[1], x.shape[-1])
        return blocks.sum(axis=(-4, -2)) * np.float64(f32(1.0 / (k[0] * k[1])))
    my, mx = _matrices(h, w, oh, ow, interp)
    return np.einsum("ah,...hwc,bw->...abc", my, x, mx)


def _fixed(wk: Any) -> int:
    return int(np.rint(np.float64(wk) * 2048.0))


def _resize_u8(x: np.ndarray, size: tuple[int, ...], interp: int = 1) -> np.ndarray:
    """OpenCV's uint8 resize (see the module docstring)."""
    h, w, c = x.shape[-3:]
    oh, ow = _out_hw(h, w, tuple(size), False)
    if interp == 0:
        return _resize(x, size, 0)
    xi = x.astype(np.int64)
    assert interp in (1, 2), "the uint8 table rows are nearest, bilinear and bicubic"
    if interp == 1 and (h, w) == (2 * oh, 2 * ow):
        blocks = xi.reshape(*x.shape[:-3], oh, 2, ow, 2, c)
        return (blocks.sum(axis=(-4, -2)) + 2) >> 2
    cubic = interp == 2
    mx = np.zeros((ow, w), np.int64)
    for d in range(ow):
        for s, wk in _taps(d, ow, w, cubic, clamp=not cubic):
            mx[d, s] += _fixed(wk)
    rows = np.einsum("...hwc,bw->...hbc", xi, mx)
    vec = (np.arange(ow)[:, None] * c + np.arange(c)) < (ow * c) // 8 * 8
    out = np.zeros((*x.shape[:-3], oh, ow, c), np.int64)
    for d in range(oh):
        taps = [(rows[..., s, :, :], _fixed(wk)) for s, wk in _taps(d, oh, h, cubic, False)]
        if not cubic:
            out[..., d, :, :] = (sum(((t >> 4) * b) >> 16 for t, b in taps) + 2) >> 2
            continue
        acc = np.zeros((*rows.shape[:-3], ow, c), f32)
        for t, b in taps:
            acc = acc + t.astype(f32) * f32(b / 4194304)
        tail = (sum(t * b for t, b in taps) + (1 << 21)) >> 22
        out[..., d, :, :] = np.where(vec, np.rint(acc), tail)
    return np.clip(out, 0, 255)


def _crop(d: np.ndarray, x: int, y: int, width: int, height: int) -> np.ndarray:
    return d[..., y : y + height, x : x + width, :]


def _crop_row(shape, xywh, tag):
    params = dict(zip(("x", "y", "width", "height"), xywh))
    return OpCase("_image_crop", shapes=[shape], params=params, reference=_crop, id=tag)


def _resize_row(size, interp=1, shape=(5, 7, 3), tag="", **kw):
    params = {"size": size, "interp": interp, **kw}
    return OpCase(
        "_image_resize",
        shapes=[shape],
        params=params,
        reference=_resize,
        grad=False,
        id=tag,
    )


def _u8_row(size, interp, shape, tag):
    return OpCase(
        "_image_resize",
        shapes=[shape],
        params={"size": size, "interp": interp},
        reference=_resize_u8,
        low=0.0,
        high=255.0,
        dtypes=(np.uint8,),
        grad=False,
        id=tag,
    )


CASES = [
    _resize_row((4, 3), 1, tag="bilinear_down"),
    _resize_row((11, 8), 1, tag="bilinear_up"),
    _resize_row((3, 2), 1, shape=(4, 6, 1), tag="bilinear_2x_is_area"),
    _resize_row((6, 9), 1, shape=(2, 4, 3, 3), tag="bilinear_batch"),
    _resize_row((3, 4), 1, shape=(1, 1, 3), tag="bilinear_one_pixel"),
    _resize_row((9, 2), 0, tag="nearest"),
    _resize_row((4,), 0, shape=(2, 3, 5, 1), tag="nearest_int_size_batch"),
    _resize_row((10, 6), 2, tag="bicubic"),
    _resize_row((3, 2), 3, shape=(7, 10, 3), tag="area_down"),
    _resize_row((2, 2), 3, shape=(2, 6, 4, 3), tag="area_integer_batch"),
    _resize_row((9, 11), 3, shape=(4, 5, 3), tag="area_up"),
    _resize_row((3, 9), 3, shape=(6, 7, 1), tag="area_mixed"),
    _resize_row((1, 1), 3, shape=(3, 7, 3), tag="area_to_one_pixel"),
    # a strong shrink: pass 1 sums only the source rows each output row's taps read
    _resize_row((3, 4), 1, shape=(20, 9, 3), tag="bilinear_far_down"),
    _resize_row((4, 5), 2, shape=(2, 21, 9, 3), tag="bicubic_far_down_batch"),
    _resize_row((3, 7), 1, shape=(4, 5, 4), tag="bilinear_four_channels"),
    _resize_row((6, 2), 0, shape=(3, 4, 4), tag="nearest_four_channels"),
    _resize_row((5, 4), 3, shape=(2, 9, 11, 3), tag="area_down_batch"),
    _resize_row((3,), 1, tag="keep_ratio", keep_ratio=True),
    _resize_row((5, 7), 1, tag="same_size"),
    _u8_row((4, 3), 1, (5, 7, 3), "uint8_bilinear"),
    _u8_row((13, 8), 1, (2, 5, 7, 3), "uint8_bilinear_up_batch"),
    _u8_row((3, 2), 1, (4, 6, 3), "uint8_bilinear_2x"),
    _u8_row((9, 2), 0, (5, 7, 1), "uint8_nearest"),
    _u8_row((10, 6), 2, (5, 7, 3), "uint8_bicubic"),  # rows of 30: 24 vector, 6 tail
    _u8_row((3, 11), 2, (4, 9, 1), "uint8_bicubic_short_rows"),  # rows of 3: all tail
    _u8_row((4, 3), 1, (2, 20, 9, 3), "uint8_bilinear_far_down_batch"),
    _u8_row((5, 4), 2, (21, 9, 3), "uint8_bicubic_far_down"),
    _crop_row((5, 7, 3), (2, 1, 4, 3), "hwc"),
    _crop_row((2, 4, 6, 1), (0, 2, 6, 2), "nhwc_full_width"),
    _crop_row((3, 3, 3), (2, 2, 1, 1), "corner_pixel"),
    OpCase(
        "_image_crop",
        shapes=[(4, 5, 3)],
        params={"x": 1, "y": 0, "width": 3, "height": 4},
        reference=_crop,
        low=0.0,
        high=255.0,
        dtypes=(np.uint8,),
        grad=False,
        id="uint8",
    ),
]
