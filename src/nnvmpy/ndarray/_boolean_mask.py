"""nd.contrib.boolean_mask: the slices of an array where a 1-D mask is non-zero.

The output's length along `axis` is the number of non-zero mask entries, which only the
mask's values tell; nnvmpy's ops have shapes inferred from their inputs' shapes, so this
is a front-end function, as MXNet's data-dependent ops are imperative-only too: it reads
the mask (waiting for it), then gathers the kept positions with `take`. Under
autograd.record() the gradient is take's: dy goes back to the kept slices, zero elsewhere.
MXNet 1.x supports axis=0 only; any axis works here.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..base import NNVMError

OP = "boolean_mask"


def boolean_mask(data: Any, index: Any, axis: int = 0, out: Any = None) -> Any:
    """Rows of `data` along `axis` where `index` (1-D, data.shape[axis] long) is non-zero."""
    from nnvmpy.ndarray import NDArray, array, take

    if not isinstance(data, NDArray) or not isinstance(index, NDArray):
        raise NNVMError(f"{OP}: data and index must be NDArrays")
    ndim = len(data.shape)
    if not -ndim <= axis < ndim:
        raise NNVMError(f"{OP}: axis {axis} is out of range for data of shape {data.shape}")
    if len(index.shape) != 1 or index.shape[0] != data.shape[axis]:
        raise NNVMError(
            f"{OP}: index has shape {index.shape}; expected a 1-D mask of "
            f"{data.shape[axis]} entries (data.shape[{axis}] of data of shape {data.shape})"
        )
    keep = np.flatnonzero(index.asnumpy() != 0)
    positions = array(keep, ctx=data.context, dtype=np.int64)
    result = take(data, positions, axis=axis)
    if out is None:
        return result
    if out.shape != result.shape:
        raise NNVMError(f"{OP}: out has shape {out.shape}; the result has shape {result.shape}")
    result.copyto(out)
    return out
