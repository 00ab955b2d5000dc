"""Type stubs for nnvmpy.symbol.image, generated from the op registry by `nnvmpy stubs`.

Do not edit: `nnvmpy stubs` rewrites this file.
"""

from typing import Any, Literal, TypeAlias

import numpy as np

from nnvmpy.symbol.symbol import Symbol as Symbol
def _make(op: Any, name: Any) -> Any: ...

_Shape: TypeAlias = tuple[int, ...] | list[int] | int
_FloatTuple: TypeAlias = tuple[float, ...] | list[float] | float
_IntOrNoneTuple: TypeAlias = tuple[int | None, ...] | list[int | None]

def adjust_lighting(
    data: Symbol | None = None,
    *,
    alpha: _FloatTuple,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Adjust the lighting level of the input. Follow the AlexNet style: adds V (alpha * lambda) to every pixel of an (H x W x C) image, C in {1, 3}, where V and lambda are the eigenvectors and eigenvalues of ImageNet's RGB covariance.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input.
    alpha : tuple of <float>, required
        The lighting alphas for the R, G, B channels.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/image_random.py.
    """

def crop(
    data: Symbol | None = None,
    *,
    x: int,
    y: int,
    width: int,
    height: int,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Crop an image NDArray of shape (H x W x C) or (N x H x W x C), C in {1, 3}, to the area at (x, y) of the given width and height; the gradient is zero outside it.

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input data array
    x : int, required
        Left boundary of the cropping area.
    y : int, required
        Top boundary of the cropping area.
    width : int, required
        Width of the cropping area.
    height : int, required
        Height of the cropping area.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/image_crop.py.
    """

def flip_left_right(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Flips an image of shape (H x W x C), C in {1, 3}, left to right (along the width axis).

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input data array

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/image.py.
    """

def flip_top_bottom(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Flips an image of shape (H x W x C), C in {1, 3}, top to bottom (along the height axis).

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input data array

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/image.py.
    """

def normalize(
    data: Symbol | None = None,
    *,
    mean: _FloatTuple = (0.0, 0.0, 0.0, 0.0),
    std: _FloatTuple = (1.0, 1.0, 1.0, 1.0),
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Normalize a tensor of shape (C x H x W) or (N x C x H x W) with mean and standard deviation: output[i] = (input[i] - mean[i]) / std[i] for each channel i; mean and std hold one value for all channels or one per channel (C is 1 or 3).

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input ndarray
    mean : tuple of <float>, optional, default=(0.0, 0.0, 0.0, 0.0)
        Sequence of means for each channel. Default value is 0.
    std : tuple of <float>, optional, default=(1.0, 1.0, 1.0, 1.0)
        Sequence of standard deviations for each channel. Default value is 1.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/image.py.
    """

def random_brightness(
    data: Symbol | None = None,
    *,
    min_factor: float,
    max_factor: float,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Randomly adjusts the brightness of an image of shape (H x W x C), C in {1, 3}. Multiplies every value by a, with a drawn once per call uniformly in [min_factor, max_factor].

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input.
    min_factor : float, required
        Minimum factor.
    max_factor : float, required
        Maximum factor.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/image_color.py.
    """

def random_color_jitter(
    data: Symbol | None = None,
    *,
    brightness: float,
    contrast: float,
    saturation: float,
    hue: float,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Randomly jitters the brightness, contrast, saturation and hue of an image of shape (H x W x C), C in {1, 3}: the four adjustments in a random order, each with a factor drawn uniformly in 1 + [-p, p] (hue: [-hue, hue]) and skipped when its p is 0.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input.
    brightness : float, required
        How much to jitter brightness.
    contrast : float, required
        How much to jitter contrast.
    saturation : float, required
        How much to jitter saturation.
    hue : float, required
        How much to jitter hue.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/image_color.py.
    """

def random_contrast(
    data: Symbol | None = None,
    *,
    min_factor: float,
    max_factor: float,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Randomly adjusts the contrast of an image of shape (H x W x C), C in {1, 3}. Moves every value towards the image's mean gray: a x + (1 - a) m, with a drawn once per call uniformly in [min_factor, max_factor].

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input.
    min_factor : float, required
        Minimum factor.
    max_factor : float, required
        Maximum factor.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/image_color.py.
    """

def random_flip_left_right(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Randomly flips an image of shape (H x W x C), C in {1, 3}, left to right (along the width axis): the input or its flip, with probability 1/2 each.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/image_random.py.
    """

def random_flip_top_bottom(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Randomly flips an image of shape (H x W x C), C in {1, 3}, top to bottom (along the height axis): the input or its flip, with probability 1/2 each.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/image_random.py.
    """

def random_hue(
    data: Symbol | None = None,
    *,
    min_factor: float,
    max_factor: float,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Randomly adjusts the hue of an image of shape (H x W x C), C in {1, 3}. Rotates the hue of every pixel by 360 a degrees (in HLS), with a drawn once per call uniformly in [min_factor, max_factor].

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input.
    min_factor : float, required
        Minimum factor.
    max_factor : float, required
        Maximum factor.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/image_color.py.
    """

def random_lighting(
    data: Symbol | None = None,
    *,
    alpha_std: float = 0.05,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Randomly add PCA noise. Follow the AlexNet style: adjust_lighting with the three alphas drawn from N(0, alpha_std^2) once per call.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input.
    alpha_std : float, optional, default=0.05
        Level of the lighting noise.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/image_random.py.
    """

def random_saturation(
    data: Symbol | None = None,
    *,
    min_factor: float,
    max_factor: float,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Randomly adjusts the saturation of an image of shape (H x W x C), C in {1, 3}. Moves every pixel towards its gray: a x + (1 - a) gray(x), with a drawn once per call uniformly in [min_factor, max_factor].

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input.
    min_factor : float, required
        Minimum factor.
    max_factor : float, required
        Maximum factor.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/image_color.py.
    """

def resize(
    data: Symbol | None = None,
    *,
    size: _Shape = (),
    keep_ratio: bool | int = False,
    interp: int = 1,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Resize an image NDArray of shape (H x W x C) or (N x H x W x C) to the given size with OpenCV's rules (interp: 0 nearest, 1 bilinear, 2 bicubic, 3 area); the output keeps the input's dtype (float32, float64 or uint8).

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input.
    size : Shape(tuple), optional, default=()
        Size of new image. Could be (width, height) or (size)
    keep_ratio : boolean, optional, default=0
        With a single-int `size`: resize the short edge to it and keep the aspect ratio (True), or make both edges that size (False).
    interp : int, optional, default=1
        Interpolation method (OpenCV's codes): 0 nearest neighbour, 1 bilinear, 2 bicubic over 4x4 pixels, 3 area (pixel area relation). 4 (Lanczos) and 5 (bit-exact bilinear), which MXNet's CPU path also takes, are not provided.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/image_resize.py.
    """

def to_tensor(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Converts an image NDArray of shape (H x W x C) or (N x H x W x C) with values in [0, 255] to a float32 tensor of shape (C x H x W) or (N x C x H x W) with values in [0, 1].

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input ndarray

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/image.py.
    """
