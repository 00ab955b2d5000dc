"""MXNet's random colour image ops (`nd.image.random_*`): brightness, contrast, saturation,
hue and colour jitter, on one (H, W, C) image with C in {1, 3}.

    brightness(a):  y = a x
    contrast(a):    y = a x + (1 - a) m,  m = mean over pixels of gray(x) (of x when C = 1)
    saturation(a):  y = a x + (1 - a) gray(x)  per pixel (C = 1: y = x)
    hue(a):         RGB -> HLS (OpenCV's convention, on x / 255), h += 360 a, back (C = 1: y = x)
    gray(r, g, b) = 0.299 r + 0.587 g + 0.114 b

The random_* ops draw one factor a per call, uniform in [min_factor, max_factor];
random_color_jitter applies the four in a random order, each with a factor in
1 + [-p, p] (hue: [-hue, hue]) and skipped when its p is 0. The factors are drawn on the
host from the op's Philox stream (so cpu(0) and gpu(0) draw alike under one seed); one
kernel body per adjustment then runs on the array's device.

Behaviour measured on MXNet 1.9.1 and kept: only rank-3 input; any dtype, computed in
floating point and stored as the input's dtype, uint8 clamped to [0, 255] and then
truncated (123.6 -> 123), other integers truncated; min_factor > max_factor draws from
[max, min]; each jitter stage stores its result before the next reads it; the gradient
is the head gradient passed through unchanged (MXNet registers `_copy`).
Where MXNet 1.9.1 is wrong we do what it means: its saturation takes the gray of a pixel
as 0.114 b only (a `=` for `+=`; at a = 0.3 its outputs differ from these by up to 156);
its hue on one channel, and jitter with every p 0, leave the output unwritten (ours
copies the input); jitter's p must be >= 0 here (MXNet treats a negative p as 0).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import kernel
from ..kernel import like, scratch
from ..kernel.launch import ADD, WRITE, run_rows
from ..param import Parameter, field
from ._image_common import Run, cast_kind, put, register_image_op, uniforms, widen

_FLT_EPS = 1.1920928955078125e-07  # float32's epsilon: HLS calls a smaller spread gray

# -- the compute type ---------------------------------------------------------------------------
# MXNet computes these adjustments in float32 for every dtype. Here float32 images compute
# in float32 and float64 ones in float64, integers and float16 in float64 (truncated or
# rounded once at the store); the factors are rounded to the compute type once per item.
# A Python float in a float32 formula made it a float64 one: on a GPU 1/2 to 1/64 of the
# float32 rate. _image_common's widen and put keep a value in its type.


# -- kernels ------------------------------------------------------------------------------------


@kernel.parallel_for
def _scale(i, out, mode, x, a, cast):
    # y = a x  (brightness; a = 1 copies)
    v = widen(x[i])
    put(out, i, v * like(v, a), mode, cast)


@kernel.parallel_for
def _gray_rows(r, sums, x, width, channels):
    # sums[r] = sum over row r of gray(pixel) (of the value when one channel)
    s = 0.0
    base = r * width * channels
    for w in range(width):
        p = base + w * channels
        if channels == 3:
            s += 0.299 * float(x[p]) + 0.587 * float(x[p + 1]) + 0.114 * float(x[p + 2])
        else:
            s += float(x[p])
    sums[r] = s


@kernel.parallel_for
def _gray_mean(i, mean, sums, rows, pixels):
    # mean[0] = sum(sums) / pixels: a fixed order, so every device adds alike
    s = 0.0
    for r in range(rows):
        s += sums[r]
    mean[0] = s / pixels


@kernel.parallel_for
def _contrast(i, out, mode, x, a, mean, cast):
    # y = a x + (1 - a) m
    put(out, i, a * float(x[i]) + (1.0 - a) * mean[0], mode, cast)


@kernel.parallel_for
def _saturation(p, out, mode, x, a, cast):
    # y = a x + (1 - a) gray(x), one pixel (three values) per item: safe in place
    k = 3 * p
    r, g, b = widen(x[k]), widen(x[k + 1]), widen(x[k + 2])
    f = like(r, a)
    gray = (like(r, 1) - f) * (like(r, 0.299) * r + like(r, 0.587) * g + like(r, 0.114) * b)
    put(out, k, f * r + gray, mode, cast)
    put(out, k + 1, f * g + gray, mode, cast)
    put(out, k + 2, f * b + gray, mode, cast)


@kernel.device_function
def rgb_to_hls(r, g, b):
    """(h in degrees [0, 360), l, s) of an RGB colour in [0, 1] (OpenCV's RGB2HLS), in
    r's type."""
    vmax = max(r, max(g, b))
    vmin = min(r, min(g, b))
    diff = vmax - vmin
    half = like(r, 0.5)
    lum = (vmax + vmin) * half
    h = like(r, 0)
    s = like(r, 0)
    if diff > like(r, _FLT_EPS):
        s = diff / (vmax + vmin) if lum < half else diff / (like(r, 2) - vmax - vmin)
        k = like(r, 60) / diff
        if vmax == r:
            h = (g - b) * k
        elif vmax == g:
            h = (b - r) * k + like(r, 120)
        else:
            h = (r - g) * k + like(r, 240)
        if h < like(r, 0):
            h += like(r, 360)
    return h, lum, s


@kernel.device_function
def hls_to_rgb(h, lum, s):
    """RGB in [0, 1] of (h degrees, any real; l; s) (OpenCV's HLS2RGB), in lum's type
    (math.floor is an int on the CPU, a float on the GPU: both cast back)."""
    one = like(lum, 1)
    if s == like(lum, 0):
        return lum, lum, lum
    p2 = lum * (one + s) if lum <= like(lum, 0.5) else lum + s - lum * s
    p1 = like(lum, 2) * lum - p2
    six = like(lum, 6)
    h = h / like(lum, 60)
    h -= six * like(lum, math.floor(h / six))
    if h >= six:  # a tiny negative h rounds up to 6
        h -= six
    sector = int(h)
    f = h - like(lum, sector)
    up = p1 + (p2 - p1) * f  # rising edge of the sector
    down = p1 + (p2 - p1) * (one - f)
    if sector == 0:
        return p2, up, p1
    if sector == 1:
        return down, p2, p1
    if sector == 2:
        return p1, p2, up
    if sector == 3:
        return p1, down, p2
    if sector == 4:
        return up, p1, p2
    return p2, p1, down


@kernel.parallel_for
def _hue(p, out, mode, x, a, cast):
    # rotate the hue by 360 a degrees, one pixel per item
    k = 3 * p
    v = widen(x[k])
    full = like(v, 255)
    h, lum, s = rgb_to_hls(v / full, widen(x[k + 1]) / full, widen(x[k + 2]) / full)
    r, g, b = hls_to_rgb(h + like(v, 360) * like(v, a), lum, s)
    put(out, k, full * r, mode, cast)
    put(out, k + 1, full * g, mode, cast)
    put(out, k + 2, full * b, mode, cast)


# -- the adjustments, on a device -------------------------------------------------------------

BRIGHTNESS, CONTRAST, SATURATION, HUE = range(4)


def adjust(ctx: Any, op: str, kind: int, out: Any, mode: int, x: Any, a: float) -> None:
    """out (mode) = adjustment `kind` with factor a of image x (out may be x)."""
    h, w, c = (int(d) for d in tuple(x.shape))
    cast = cast_kind(out)
    a = float(a)
    if kind == BRIGHTNESS or (c == 1 and kind != CONTRAST):
        run_rows(ctx, op, _scale, x.size, out, mode, x, a if kind == BRIGHTNESS else 1.0, cast)
    elif kind == CONTRAST:
        sums = scratch.empty(ctx, (max(h, 1),), np.float64)
        mean = scratch.empty(ctx, (1,), np.float64)
        run_rows(ctx, op, _gray_rows, h, sums, x, w, c)
        run_rows(ctx, op, _gray_mean, 1, mean, sums, h, float(max(h * w, 1)))
        run_rows(ctx, op, _contrast, x.size, out, mode, x, a, mean, cast)
    else:
        loop = _saturation if kind == SATURATION else _hue
        run_rows(ctx, op, loop, h * w, out, mode, x, a, cast)


def _enhance(kind: int, op: str) -> Run:
    def run(ctx: Any, out: Any, mode: int, x: Any, p: Any) -> None:
        (u,) = uniforms(ctx.requested[0], 1)
        adjust(ctx, op, kind, out, mode, x, p.min_factor + (p.max_factor - p.min_factor) * u)

    return run


class RandomEnhanceParam(Parameter):
    min_factor = field(float, lower_bound=0.0, describe="Minimum factor.")
    max_factor = field(float, lower_bound=0.0, describe="Maximum factor.")


for _kind, _name, _what in (
    (BRIGHTNESS, "brightness", "Multiplies every value by a"),
    (CONTRAST, "contrast", "Moves every value towards the image's mean gray: a x + (1 - a) m"),
    (SATURATION, "saturation", "Moves every pixel towards its gray: a x + (1 - a) gray(x)"),
    (HUE, "hue", "Rotates the hue of every pixel by 360 a degrees (in HLS)"),
):
    _op = f"_image_random_{_name}"
    register_image_op(
        _op,
        _enhance(_kind, _op),
        RandomEnhanceParam,
        f"Randomly adjusts the {_name} of an image of shape (H x W x C), C in {{1, 3}}. "
        f"{_what}, with a drawn once per call uniformly in [min_factor, max_factor].",
    )

# -- colour jitter ------------------------------------------------------------------------------


class RandomColorJitterParam(Parameter):
    brightness = field(float, lower_bound=0.0, describe="How much to jitter brightness.")
    contrast = field(float, lower_bound=0.0, describe="How much to jitter contrast.")
    saturation = field(float, lower_bound=0.0, describe="How much to jitter saturation.")
    hue = field(float, lower_bound=0.0, describe="How much to jitter hue.")


def jitter_plan(u: list[float], p: Any) -> list[tuple[int, float]]:
    """(kind, factor) in the order applied, from 8 uniforms: 4 sort keys, then 4 factors."""
    spread = (p.brightness, p.contrast, p.saturation, p.hue)
    order = sorted(range(4), key=lambda k: u[k])
    plan = []
    for kind in order:
        if spread[kind] > 0:
            t = spread[kind] * (2.0 * u[4 + kind] - 1.0)  # uniform in [-p, p)
            plan.append((kind, t if kind == HUE else 1.0 + t))
    return plan


def _jitter(ctx: Any, out: Any, mode: int, x: Any, p: Any) -> None:
    op = "_image_random_color_jitter"
    plan = jitter_plan(uniforms(ctx.requested[0], 8), p) or [(BRIGHTNESS, 1.0)]
    target = scratch.empty(ctx, tuple(out.shape), out.dtype) if mode == ADD else out
    src = x
    for kind, a in plan:  # each stage stores in the output's dtype, as MXNet's do
        adjust(ctx, op, kind, target, WRITE, src, a)
        src = target
    if mode == ADD:
        run_rows(ctx, op, _scale, out.size, out, ADD, target, 1.0, cast_kind(out))


register_image_op(
    "_image_random_color_jitter",
    _jitter,
    RandomColorJitterParam,
    "Randomly jitters the brightness, contrast, saturation and hue of an image of shape "
    "(H x W x C), C in {1, 3}: the four adjustments in a random order, each with a factor "
    "drawn uniformly in 1 + [-p, p] (hue: [-hue, hue]) and skipped when its p is 0.",
)
