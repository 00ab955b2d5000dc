"""MXNet's random flips and AlexNet lighting for one (H, W, C) image, C in {1, 3}.

    _image_random_flip_left_right(x), _image_random_flip_top_bottom(x):
        x or its flip along W (H), with probability 1/2 each, drawn once per call
    _image_adjust_lighting(x, alpha):  y = x + V (alpha * lambda)  added to every pixel
    _image_random_lighting(x, alpha_std):  the same with alpha ~ N(0, alpha_std^2), 3 draws

V and lambda are the eigenvectors and eigenvalues of ImageNet's RGB covariance that AlexNet
(and MXNet) use. A one-channel image is copied by both lighting ops (MXNet 1.9.1 leaves
that output unwritten). Storage, draws, registration and the pass-through gradient are
_image_common.py's (image_color.py says what was measured on MXNet 1.9.1); as there, the draws
come from the op's Philox stream on the host, so cpu(0) and gpu(0) agree under one seed.
adjust_lighting takes exactly three alphas (MXNet ignores a fourth and fails below three);
a negative alpha_std is refused (MXNet's normal distribution is then undefined).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import kernel
from ..base import InferError
from ..kernel import like
from ..kernel.launch import run_rows, store
from ..param import FloatTuple, Parameter, field
from ..registry import NodeAttrs
from ._image_common import Run, cast_kind, put, register_image_op, uniforms, widen
from .image import image_infer
from .random.samplers import std_normal

_U0 = np.uint64(0)

# -- random flips -------------------------------------------------------------------------------


@kernel.parallel_for
def _flip_pairs(k, out, mode, x, mid, tail, flip):
    # item k swaps (or, unflipped, copies) the pair (j, mid - 1 - j) of the flipped axis:
    # both are read before either is written, so the op is safe in place
    half = (mid + 1) // 2
    t = k % tail
    rest = k // tail
    j = rest % half
    base = (rest // half) * mid
    i1 = (base + j) * tail + t
    i2 = (base + mid - 1 - j) * tail + t
    a = x[i2] if flip else x[i1]
    b = x[i1] if flip else x[i2]
    store(out, i1, a, mode)
    if i2 != i1:
        store(out, i2, b, mode)


def _random_flip(axis: int) -> Run:
    def run(ctx: Any, out: Any, mode: int, x: Any, p: Any) -> None:
        shape = tuple(int(d) for d in tuple(x.shape))
        (u,) = uniforms(ctx.requested[0], 1)
        mid, tail = shape[axis], int(np.prod(shape[axis + 1 :]))
        items = int(np.prod(shape[:axis])) * ((mid + 1) // 2) * tail
        run_rows(ctx, "_image_random_flip", _flip_pairs, items, out, mode, x, mid, tail, u < 0.5)

    return run


for _name, _axis, _what in (
    ("_image_random_flip_left_right", 1, "left to right (along the width axis)"),
    ("_image_random_flip_top_bottom", 0, "top to bottom (along the height axis)"),
):
    register_image_op(
        _name,
        _random_flip(_axis),
        None,
        f"Randomly flips an image of shape (H x W x C), C in {{1, 3}}, {_what}: the "
        "input or its flip, with probability 1/2 each.",
    )

# -- lighting (AlexNet's PCA noise) -------------------------------------------------------------

EIGVAL = (55.46, 4.794, 1.148)
EIGVEC = ((-0.5675, 0.7192, 0.4009), (-0.5808, -0.0045, -0.8140), (-0.5836, -0.6948, 0.4203))


def pca_shift(alpha: Any) -> list[float]:
    """The RGB shift EIGVEC @ (alpha * EIGVAL) that lighting adds to every pixel."""
    return [sum(EIGVEC[c][k] * EIGVAL[k] * float(alpha[k]) for k in range(3)) for c in range(3)]


@kernel.parallel_for
def _shift(i, out, mode, x, d0, d1, d2, cast):
    # y = x + d[channel], the shift rounded to x's compute type (_image_common.widen)
    c = i % 3
    v = widen(x[i])
    d = like(v, d0) if c == 0 else (like(v, d1) if c == 1 else like(v, d2))
    put(out, i, v + d, mode, cast)


def lighting(ctx: Any, op: str, out: Any, mode: int, x: Any, alpha: Any) -> None:
    """out (mode) = x + the PCA shift of alpha; a one-channel image is copied."""
    shift = pca_shift(alpha) if int(tuple(x.shape)[2]) == 3 else [0.0, 0.0, 0.0]
    run_rows(ctx, op, _shift, x.size, out, mode, x, *shift, cast_kind(out))


class AdjustLightingParam(Parameter):
    alpha = field(FloatTuple, describe="The lighting alphas for the R, G, B channels.")


def _check_alpha(attrs: NodeAttrs) -> None:
    alpha = tuple(attrs.parsed.alpha)
    if len(alpha) != 3:
        raise InferError(
            f"_image_adjust_lighting: parameter 'alpha' must have 3 values (R, G, B), got {alpha}"
        )


_adjust_infer = image_infer("_image_adjust_lighting")


def _adjust_lighting_infer(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    _check_alpha(attrs)
    return bool(_adjust_infer(attrs, in_shapes, out_shapes))


register_image_op(
    "_image_adjust_lighting",
    lambda ctx, out, mode, x, p: lighting(ctx, "_image_adjust_lighting", out, mode, x, p.alpha),
    AdjustLightingParam,
    "Adjust the lighting level of the input. Follow the AlexNet style: adds "
    "V (alpha * lambda) to every pixel of an (H x W x C) image, C in {1, 3}, where V and "
    "lambda are the eigenvectors and eigenvalues of ImageNet's RGB covariance.",
    random=False,
    infer=_adjust_lighting_infer,
)


class RandomLightingParam(Parameter):
    alpha_std = field(float, default=0.05, lower_bound=0.0, describe="Level of the lighting noise.")


def _random_lighting(ctx: Any, out: Any, mode: int, x: Any, p: Any) -> None:
    k0, k1, first = ctx.requested[0].take_counters(3)
    alpha = [p.alpha_std * std_normal(k0, k1, first + np.uint64(k), _U0, _U0) for k in range(3)]
    lighting(ctx, "_image_random_lighting", out, mode, x, alpha)


register_image_op(
    "_image_random_lighting",
    _random_lighting,
    RandomLightingParam,
    "Randomly add PCA noise. Follow the AlexNet style: adjust_lighting with the three "
    "alphas drawn from N(0, alpha_std^2) once per call.",
)
