"""OpCase rows for image.py: normalize, to_tensor and the flips against NumPy formulas.

normalize's reference is (x - mean[c]) / std[c] on the channel axis (-3), with one value
broadcast to every channel; to_tensor's moves channels first and divides by 255; the flips
reverse the width (left-right) or height (top-bottom) axis of an (H, W, C) image.
"""

from __future__ import annotations

import numpy as np
from op_db import OpCase


def _normalize(x: np.ndarray, mean: tuple[float, ...], std: tuple[float, ...]) -> np.ndarray:
    c = x.shape[-3]
    m = np.resize(np.asarray(mean, np.float64), c).reshape(c, 1, 1)
    s = np.resize(np.asarray(std, np.float64), c).reshape(c, 1, 1)
    return (x - m) / s


def _to_tensor(x: np.ndarray) -> np.ndarray:
    return np.moveaxis(x, -1, -3) / 255.0


CASES = [
    OpCase(
        "_image_normalize",
        shapes=[(3, 4, 5)],
        params={"mean": (0.1, -0.2, 0.3), "std": (0.5, 2.0, 1.5)},
        reference=_normalize,
        id="chw",
    ),
    OpCase(
        "_image_normalize",
        shapes=[(2, 3, 3, 2)],
        params={"mean": (0.25,), "std": (4.0,)},
        reference=_normalize,
        id="nchw_one_value",
    ),
    OpCase(
        "_image_normalize",
        shapes=[(2, 1, 3, 3)],
        params={"mean": (0.5,), "std": (0.25,)},
        reference=_normalize,
        id="one_channel",
    ),
    OpCase(
        "_image_to_tensor",
        shapes=[(4, 5, 3)],
        reference=_to_tensor,
        low=0.0,
        high=255.0,
        grad=False,
        tols={np.float64: (1e-6, 1e-7)},
        id="hwc",
    ),
    OpCase(
        "_image_to_tensor",
        shapes=[(2, 3, 2, 5)],
        reference=_to_tensor,
        low=0.0,
        high=255.0,
        grad=False,
        tols={np.float64: (1e-6, 1e-7)},
        id="nhwc",
    ),
    OpCase(
        "_image_flip_left_right",
        shapes=[(4, 5, 3)],
        reference=lambda x: x[:, ::-1, :],
    ),
    OpCase(
        "_image_flip_top_bottom",
        shapes=[(4, 5, 1)],
        reference=lambda x: x[::-1, :, :],
    ),
]
