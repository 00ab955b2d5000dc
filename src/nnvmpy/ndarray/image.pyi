"""Type stubs for nnvmpy.ndarray.image, generated from the op registry by `nnvmpy stubs`.

Do not edit: `nnvmpy stubs` rewrites this file.
"""

from typing import Any, Literal, TypeAlias

import numpy as np

from nnvmpy.ndarray.ndarray import NDArray as NDArray
def _make(op: Any, name: Any = ...) -> Any: ...

_Shape: TypeAlias = tuple[int, ...] | list[int] | int
_FloatTuple: TypeAlias = tuple[float, ...] | list[float] | float
_IntOrNoneTuple: TypeAlias = tuple[int | None, ...] | list[int | None]

def flip_left_right(
    data: NDArray | None = None,
    *,
    out: NDArray | list[NDArray] | None = None,
    **kwargs: Any,
) -> NDArray:
    """Flips an image of shape (H x W x C), C in {1, 3}, left to right (along the width axis).

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input data array

    Returns
    -------
    out : NDArray or list of NDArrays

    Defined in nnvmpy/ops/image.py.
    """

def flip_top_bottom(
    data: NDArray | None = None,
    *,
    out: NDArray | list[NDArray] | None = None,
    **kwargs: Any,
) -> NDArray:
    """Flips an image of shape (H x W x C), C in {1, 3}, top to bottom (along the height axis).

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input data array

    Returns
    -------
    out : NDArray or list of NDArrays

    Defined in nnvmpy/ops/image.py.
    """

def normalize(
    data: NDArray | None = None,
    *,
    mean: _FloatTuple = (0.0, 0.0, 0.0, 0.0),
    std: _FloatTuple = (1.0, 1.0, 1.0, 1.0),
    out: NDArray | list[NDArray] | None = None,
) -> NDArray:
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
    out : NDArray or list of NDArrays

    Defined in nnvmpy/ops/image.py.
    """

def to_tensor(
    data: NDArray | None = None,
    *,
    out: NDArray | list[NDArray] | None = None,
    **kwargs: Any,
) -> NDArray:
    """Converts an image NDArray of shape (H x W x C) or (N x H x W x C) with values in [0, 255] to a float32 tensor of shape (C x H x W) or (N x C x H x W) with values in [0, 1].

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input ndarray

    Returns
    -------
    out : NDArray or list of NDArrays

    Defined in nnvmpy/ops/image.py.
    """
