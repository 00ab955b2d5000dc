"""nd's creation and rearranging functions that are not single ops: arange, linspace, eye,
moveaxis, onehot_encode, concatenate, split_v2.

Each calls registered ops (_arange, _linspace, _eye, transpose, Concat, _scatter_set_nd)
with MXNet's signature and defaults; the initialisers run on `ctx` (the current
context by default).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..base import Context, NNVMError, as_dtype
from ..imperative import invoke
from ..registry import Op
from .errors import NDArrayValueError
from .fill import dtype_param
from .ndarray import DEFAULT_DTYPE, NDArray, array


def _init(op: str, ctx: Context | None, dtype: Any, out: NDArray | None, **params: Any) -> NDArray:
    """Run an initialiser op on `ctx` (or out's device) with MXNet's dtype default."""
    dt = DEFAULT_DTYPE if dtype is None else as_dtype(dtype)
    if ctx is not None and not isinstance(ctx, Context):
        raise NNVMError(f"{op.lstrip('_')}: ctx must be a Context such as mx.cpu(), got {ctx!r}")
    params["dtype"] = dtype_param(dt)
    # invoke runs an op without inputs on out's device, else on the current context
    if ctx is None or out is not None:
        return invoke(Op.get(op), [], params, out=out)[0]
    with ctx:
        return invoke(Op.get(op), [], params)[0]


def arange(
    start: float,
    stop: float | None = None,
    step: float = 1.0,
    repeat: int = 1,
    infer_range: bool | None = None,
    ctx: Context | None = None,
    dtype: Any = None,
) -> NDArray:
    """Evenly spaced values in [start, stop) (in [0, start) without stop), each repeated.

    >>> nd.arange(2, 6, step=1.5, repeat=2).asnumpy()
    array([2. , 2. , 3.5, 3.5, 5. , 5. ], dtype=float32)
    """
    if infer_range is not None:
        warnings.warn("`infer_range` argument has been deprecated", DeprecationWarning, 2)
    return _init(
        "_arange", ctx, dtype, None, start=start, stop=stop, step=step, repeat=repeat,
        infer_range=False,
    )  # fmt: skip


def linspace(
    start: float,
    stop: float,
    num: int,
    endpoint: bool = True,
    ctx: Context | None = None,
    dtype: Any = None,
) -> NDArray:
    """num evenly spaced samples from start to stop (stop left out with endpoint=False)."""
    return _init("_linspace", ctx, dtype, None, start=start, stop=stop, num=num, endpoint=endpoint)


def eye(
    N: int, M: int = 0, k: int = 0, ctx: Context | None = None, dtype: Any = None, **kwargs: Any
) -> NDArray:
    """An N x M (N x N when M is 0) array with ones on diagonal k, zeros elsewhere."""
    return _init("_eye", ctx, dtype, kwargs.pop("out", None), N=N, M=M, k=k)


def _axes(what: str, axes: Any, ndim: int) -> tuple[int, ...]:
    """Normalised, distinct axes; NNVMError (a ValueError) naming `what` when out of range."""
    raw = (axes,) if isinstance(axes, int | np.integer) else tuple(axes)
    out = []
    for a in raw:
        a = int(a)
        if not -ndim <= a < ndim:
            raise NDArrayValueError(
                f"moveaxis: {what} axis {a} is out of range for a {ndim}-d array; expected "
                f"{-ndim} <= axis < {ndim}"
            )
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise NDArrayValueError(f"moveaxis: repeated axis in `{what}` {raw}")
    return tuple(out)


def moveaxis(tensor: NDArray, source: Any, destination: Any) -> NDArray:
    """The array with axes `source` moved to positions `destination`, the rest in order.

    >>> nd.moveaxis(nd.zeros((3, 4, 5)), [0, 1], [-1, -2]).shape
    (5, 4, 3)
    """
    src = _axes("source", source, tensor.ndim)
    dst = _axes("destination", destination, tensor.ndim)
    if len(src) != len(dst):
        raise NDArrayValueError(
            "moveaxis: `source` and `destination` arguments must have the same number of "
            f"elements, got {len(src)} and {len(dst)}"
        )
    order = [n for n in range(tensor.ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return invoke(Op.get("transpose"), [tensor], {"axes": tuple(order)})[0]


def onehot_encode(indices: NDArray, out: NDArray) -> NDArray:
    """out[i, :] = 0 except out[i, indices[i]] = 1 (deprecated in MXNet: use one_hot)."""
    if not isinstance(out, NDArray) or out.ndim != 2:
        raise NNVMError("onehot_encode: out must be a 2-D NDArray (rows, classes)")
    if not isinstance(indices, NDArray) or indices.shape != (out.shape[0],):
        raise NNVMError(
            f"onehot_encode: indices must be an NDArray of shape ({out.shape[0]},) for out of "
            f"shape {out.shape}, got {getattr(indices, 'shape', type(indices).__name__)}"
        )
    out[:] = 0
    rows = array(np.arange(out.shape[0]), out.context, dtype=np.int64)
    out[rows, indices] = 1
    return out


def concatenate(arrays: Sequence[NDArray], axis: int = 0, always_copy: bool = True) -> NDArray:
    """The arrays joined along `axis` (deprecated in MXNet: use concat).

    They must agree on every other axis and on dtype; with always_copy=False a single
    array is returned as it is.
    """
    arrays = list(arrays)
    if not arrays or not all(isinstance(a, NDArray) for a in arrays):
        raise NNVMError("concatenate: arrays must be a non-empty list of NDArrays")
    if not always_copy and len(arrays) == 1:
        return arrays[0]
    first = arrays[0]
    for i, a in enumerate(arrays[1:], 1):
        if a.dtype != first.dtype:
            raise NNVMError(
                f"concatenate: array {i} has dtype {a.dtype} but array 0 has {first.dtype}"
            )
    return invoke(Op.get("Concat"), arrays, {"dim": axis, "num_args": len(arrays)})[0]


def split_v2(
    ary: NDArray, indices_or_sections: Any, axis: int = 0, squeeze_axis: bool = False
) -> Any:
    """Split an array into parts along `axis`, as numpy.split (op _split_v2).

    An int N gives N equal parts (ValueError if the axis does not divide); a tuple of
    indices gives the parts between them (an index past the axis gives an empty part).
    """
    if not isinstance(ary, NDArray):
        raise NNVMError(f"split_v2: ary must be an NDArray, got {type(ary).__name__}")
    if isinstance(indices_or_sections, int | np.integer):
        sections = int(indices_or_sections)
        size = ary.shape[axis]
        if sections <= 0 or size % sections:
            raise NDArrayValueError(
                f"split_v2: array split does not result in an equal division: axis {axis} of "
                f"length {size} into {sections} sections"
            )
        indices = [i * (size // sections) for i in range(sections)]
    elif isinstance(indices_or_sections, tuple | list):
        indices = [0, *(int(i) for i in indices_or_sections)]
    else:
        raise NDArrayValueError(
            "split_v2: indices_or_sections must be an int or a tuple of ints, got "
            f"{type(indices_or_sections).__name__}"
        )
    params = {"indices": tuple(indices), "axis": axis, "squeeze_axis": squeeze_axis}
    outs = invoke(Op.get("_split_v2"), [ary], params)
    return outs if len(outs) > 1 else outs[0]


__all__ = [
    "arange",
    "concatenate",
    "eye",
    "linspace",
    "moveaxis",
    "onehot_encode",
    "split_v2",
]
