"""OpCase rows for image_color.py and image_random.py against NumPy formulas.

adjust_lighting is deterministic. The random ops are too where their draw cannot matter:
a factor range [a, a], lighting noise 0, jitter with every spread 0, and a flip of an
image that is its own mirror. The formulas (measured on MXNet 1.9.1 with min = max):

    brightness  a x                    contrast    a x + (1 - a) mean(gray(x))
    saturation  a x + (1 - a) gray(x)  hue         HLS rotation by 360 a degrees
    lighting    x + V (alpha * lambda) (AlexNet's ImageNet PCA)
    gray = 0.299 r + 0.587 g + 0.114 b; a one-channel image's gray is its value, and
    saturation, hue and lighting copy it. uint8 results clamp to [0, 255], then truncate.

The gradient is the head gradient passed through (MXNet's `_copy`): exact for lighting and
for the identities, so those rows check it; the scaling rows do not.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from op_db import OpCase

GRAY = np.array([0.299, 0.587, 0.114])
EIGVAL = np.array([55.46, 4.794, 1.148])
EIGVEC = np.array(
    [[-0.5675, 0.7192, 0.4009], [-0.5808, -0.0045, -0.8140], [-0.5836, -0.6948, 0.4203]]
)
_SECTORS = np.array([[0, 3, 1], [2, 0, 1], [1, 0, 3], [1, 2, 0], [3, 1, 0], [0, 1, 2]])  # r g b


def gray(x: np.ndarray) -> np.ndarray:
    return x if x.shape[-1] == 1 else (x * GRAY).sum(-1, keepdims=True)


def brightness(x: np.ndarray, a: float) -> np.ndarray:
    return a * x


def contrast(x: np.ndarray, a: float) -> np.ndarray:
    return a * x + (1 - a) * gray(x).mean()


def saturation(x: np.ndarray, a: float) -> np.ndarray:
    return x if x.shape[-1] == 1 else a * x + (1 - a) * gray(x)


def hue(x: np.ndarray, a: float) -> np.ndarray:
    """Rotate the hue by 360 a degrees in HLS (OpenCV's conversion, x in [0, 255])."""
    if x.shape[-1] == 1:
        return x
    rgb = x.astype(np.float64) / 255.0
    vmax, vmin = rgb.max(-1), rgb.min(-1)
    d = vmax - vmin
    lum = (vmax + vmin) / 2
    r, g, b = np.moveaxis(rgb, -1, 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.where(lum < 0.5, d / (vmax + vmin), d / (2 - vmax - vmin))
        h = np.where(vmax == r, g - b, np.where(vmax == g, b - r + 2 * d, r - g + 4 * d)) * 60 / d
    colour = d > np.finfo(np.float32).eps
    h = np.where(colour, h % 360.0, 0.0) + 360.0 * a
    s = np.where(colour, s, 0.0)
    p2 = np.where(lum <= 0.5, lum * (1 + s), lum + s - lum * s)
    p1 = 2 * lum - p2
    h6 = (h / 60.0) % 6.0
    sector = np.minimum(np.floor(h6).astype(int), 5)
    f = h6 - sector
    table = np.stack([p2, p1, p1 + (p2 - p1) * (1 - f), p1 + (p2 - p1) * f], -1)
    out = np.take_along_axis(table, _SECTORS[sector], -1)
    return 255.0 * np.where(colour[..., None], out, lum[..., None])


def lighting(x: np.ndarray, alpha: Any) -> np.ndarray:
    return x if x.shape[-1] == 1 else x + EIGVEC @ (np.asarray(alpha) * EIGVAL)


def clamped(f: Any) -> Any:
    """uint8's saturation: the reference clipped to [0, 255] (the test truncates)."""
    return lambda x, **p: np.clip(f(x, **p), 0, 255)


def at(f: Any) -> Any:
    """The reference of a random_* op at min_factor == max_factor."""
    return lambda x, min_factor, max_factor: f(x, min_factor)


def mirrored(axis: int) -> Any:
    """Inputs that equal their own flip along `axis`."""

    def make(rng: np.random.Generator, dtype: Any) -> list[np.ndarray]:
        x = rng.uniform(0, 100, size=(4, 5, 3))
        return [(x + np.flip(x, axis)).astype(dtype)]

    return make


IMAGE = [(4, 5, 3)]
U8 = (np.uint8,)
CASES = [
    OpCase(
        "_image_adjust_lighting",
        IMAGE,
        lambda x, alpha: lighting(x, alpha),
        params={"alpha": (0.1, -0.2, 0.3)},
        low=0.0,
        high=255.0,
    ),
    OpCase(
        "_image_adjust_lighting",
        [(3, 2, 1)],
        lambda x, alpha: lighting(x, alpha),
        params={"alpha": (1.0, 2.0, 3.0)},
        id="one_channel",
    ),
    OpCase(
        "_image_adjust_lighting",
        IMAGE,
        clamped(lambda x, alpha: lighting(x, alpha)),
        params={"alpha": (1.0, 2.0, -3.0)},
        low=0.0,
        high=255.0,
        dtypes=U8,
        grad=False,
        id="uint8",
    ),
    OpCase(  # other integers are not clamped: truncated toward zero
        "_image_adjust_lighting",
        IMAGE,
        lambda x, alpha: lighting(x, alpha),
        params={"alpha": (1.0, 2.0, -3.0)},
        low=0.0,
        high=100.0,
        dtypes=(np.int32,),
        grad=False,
        id="int32",
    ),
    OpCase(
        "_image_random_lighting",
        IMAGE,
        lambda x, alpha_std: x,
        params={"alpha_std": 0.0},
        low=0.0,
        high=255.0,
    ),
    OpCase(
        "_image_random_color_jitter",
        IMAGE,
        lambda x, **_: x,
        params={"brightness": 0.0, "contrast": 0.0, "saturation": 0.0, "hue": 0.0},
        low=0.0,
        high=255.0,
    ),
    OpCase(
        "_image_random_flip_left_right",
        IMAGE,
        lambda x: x,
        inputs=mirrored(1),
        dtypes=(np.float32, np.float64, np.uint8),
        grad=False,
        check_op=False,  # its own inputs are no mirror, so two calls may differ
    ),
    OpCase(
        "_image_random_flip_top_bottom",
        IMAGE,
        lambda x: x,
        inputs=mirrored(0),
        dtypes=(np.float32, np.float64, np.int32),
        grad=False,
        check_op=False,  # as above
    ),
]
for _name, _f, _factor in (
    ("brightness", brightness, 1.37),
    ("contrast", contrast, 0.3),
    ("saturation", saturation, 0.3),
    ("hue", hue, 0.37),
):
    _params = {"min_factor": _factor, "max_factor": _factor}
    CASES += [
        OpCase(f"_image_random_{_name}", IMAGE, at(_f), _params, 0.0, 255.0, grad=False),
        OpCase(
            f"_image_random_{_name}",
            [(3, 4, 1)],
            at(_f),
            _params,
            0.0,
            255.0,
            grad=False,
            id="one_channel",
        ),
    ]
CASES += [
    OpCase(
        f"_image_random_{name}",
        IMAGE,
        clamped(at(f)),
        params={"min_factor": 1.37, "max_factor": 1.37},
        low=0.0,
        high=255.0,
        dtypes=U8,
        grad=False,
        id="uint8",
    )
    for name, f in (("brightness", brightness), ("saturation", saturation))
]
