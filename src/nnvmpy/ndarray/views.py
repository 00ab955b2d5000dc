"""Shape views of an NDArray: windows of its buffer that share its storage and variable.

`reshape` (with MXNet's special values), `flatten` / `expand_dims` / `squeeze` with
inplace=True and contiguous basic indexing return views; under autograd.record() the
same calls run the Reshape op instead, so the tape sees them. `broadcast_to` and the
non-inplace forms run ops and return new arrays. NDArray's methods call these.
"""

from __future__ import annotations

import math
import operator
from typing import TYPE_CHECKING, Any

import numpy as np

from ..autograd.state import STATE as _AG
from ..base import InferError
from ..imperative import invoke
from ..registry import Op
from .errors import NDArrayTypeError, NDArrayValueError

if TYPE_CHECKING:
    from nnvmpy.ndarray.ndarray import NDArray


def _op(name: str, x: NDArray, **params: Any) -> NDArray:
    return invoke(Op.get(name), [x], params)[0]


def view_of(base: NDArray, data: Any, shape: tuple[int, ...]) -> NDArray:
    """An array over `data`, a C-contiguous window of base's buffer (shares its variable)."""
    arr = type(base).__new__(type(base))
    arr._chunk = base._chunk
    arr._ctx = base._ctx
    arr.shape = shape
    arr.dtype = base.dtype
    arr._data = data
    arr._entry = None
    return arr


def reshaped(x: NDArray, shape: tuple[int, ...]) -> NDArray:
    """x with exactly `shape` (no special values): a view, or the recorded Reshape op under
    autograd.record() (a zero-size array is never recorded: it has no gradient)."""
    if _AG.recording and x.size:
        return invoke(Op.get("Reshape"), [x], {"shape": shape})[0]
    return view_of(x, x._data.reshape(shape), shape)


def flat_window(base: NDArray, start: int, shape: tuple[int, ...]) -> NDArray:
    """The view of base's elements [start, start + prod(shape)) with `shape`."""
    size = math.prod(shape)
    flat = base._data.reshape(base.size) if base._data.ndim != 1 else base._data
    return view_of(base, flat[start : start + size].reshape(shape), shape)


def _data_ptr(a: Any) -> int | None:
    face = getattr(a, "__array_interface__", None) or getattr(a, "__cuda_array_interface__", None)
    return face["data"][0] if face else None


def same_memory(a: NDArray, b: NDArray) -> bool:
    """Whether two arrays are the same window of the same storage."""
    return a._chunk is b._chunk and a.shape == b.shape and _data_ptr(a._data) == _data_ptr(b._data)


def resolve_reshape(
    old: tuple[int, ...], spec: tuple[int, ...], reverse: bool = False
) -> tuple[int, ...]:
    """The shape `spec` asks for (MXNet's special values 0/-1/-2/-3/-4 resolved) for `old`.

    NDArrayValueError (a ValueError) when the sizes differ or the spec is malformed.
    """
    from nnvmpy.ops.shape import special_shape

    try:
        new = special_shape("reshape", spec, old, reverse)
    except InferError as e:
        raise NDArrayValueError(str(e)) from None
    dims = [-1 if d is None else d for d in new]
    if any(d < 0 for d in dims) or math.prod(dims) != math.prod(old):
        raise NDArrayValueError(
            f"reshape: cannot reshape an array of shape {old} ({math.prod(old)} elements) "
            f"into shape {spec}"
        )
    return tuple(int(d) for d in dims)


def squeezed_shape(what: str, shape: tuple[int, ...], axis: Any) -> tuple[int, ...]:
    """shape without its size-1 axes (all, or those in `axis`); (1,) rather than ()."""
    ndim = len(shape)
    if axis is None or axis == ():
        axes = [d for d in range(ndim) if shape[d] == 1]
    else:
        raw = (axis,) if isinstance(axis, int | np.integer) else tuple(axis)
        axes = []
        for a in raw:
            a = int(a)
            if not -ndim <= a < ndim:
                raise NDArrayValueError(
                    f"{what}: axis {a} is out of range for a {ndim}-d array; "
                    f"expected {-ndim} <= axis < {ndim}"
                )
            a = a + ndim if a < 0 else a
            if a in axes:
                raise NDArrayValueError(f"{what}: axis {raw} contains {a} twice")
            if shape[a] != 1:
                raise NDArrayValueError(
                    f"{what}: cannot squeeze axis {a} of shape {shape}: its size is {shape[a]}, "
                    "expected 1"
                )
            axes.append(a)
    out = tuple(d for i, d in enumerate(shape) if i not in axes)
    return out or (1,)


def int_dims(what: str, shape: Any) -> tuple[int, ...]:
    """The dims of a shape argument as ints; floats, bools and strings are refused."""
    if isinstance(shape, int | np.integer) and not isinstance(shape, bool | np.bool_):
        shape = (shape,)
    if isinstance(shape, str | bytes) or not hasattr(shape, "__iter__"):
        raise NDArrayValueError(f"{what}: the shape must be a tuple of ints, got {shape!r:.80}")
    dims = tuple(shape)
    for d in dims:
        if isinstance(d, bool | np.bool_) or not hasattr(d, "__index__"):
            raise NDArrayValueError(
                f"{what}: the shape must be a tuple of ints, got {d!r:.40} in {dims!r:.80}"
            )
    return tuple(operator.index(d) for d in dims)


# -- the NDArray methods ------------------------------------------------------------------------


def reshape(x: NDArray, shape: tuple[Any, ...], kwargs: dict[str, Any]) -> NDArray:
    """NDArray.reshape(*shape, shape=, reverse=): a view (the Reshape op when recording)."""
    unknown = set(kwargs) - {"shape", "reverse"}
    if unknown:
        raise NDArrayTypeError(
            f"reshape: unknown keyword arguments {sorted(unknown)}; accepted are "
            "'shape' and 'reverse'"
        )
    if len(shape) == 1 and isinstance(shape[0], list | tuple):
        shape = tuple(shape[0])
    if not shape:
        given = kwargs.get("shape")
        if given is None:
            raise NDArrayTypeError("reshape: a shape is required, e.g. x.reshape((2, -1))")
        shape = given
    new = resolve_reshape(x.shape, int_dims("reshape", shape), bool(kwargs.get("reverse")))
    if _AG.recording:
        return _op("Reshape", x, shape=new)
    return view_of(x, x._data.reshape(new), new)


def flatten(x: NDArray, inplace: bool) -> NDArray:
    return x.reshape((0, -1)) if inplace else _op("Flatten", x)


def expand_dims(x: NDArray, axis: int, inplace: bool) -> NDArray:
    if not inplace:
        return _op("expand_dims", x, axis=axis)
    if not -x.ndim - 1 <= axis <= x.ndim:
        raise NDArrayValueError(
            f"expand_dims: axis {axis} is out of range for a {x.ndim}-d array; "
            f"expected {-x.ndim - 1} <= axis <= {x.ndim}"
        )
    axis = axis + x.ndim + 1 if axis < 0 else axis
    return x.reshape((*x.shape[:axis], 1, *x.shape[axis:]))


def squeeze(x: NDArray, axis: Any, inplace: bool) -> NDArray:
    if not inplace:
        return _op("squeeze", x, axis=axis)
    return x.reshape(squeezed_shape("squeeze", x.shape, axis))


def broadcast_to(x: NDArray, shape: Any) -> NDArray:
    """A copy of x broadcast to `shape`; missing leading axes are added (MXNet's rule)."""
    shape = int_dims("broadcast_to", shape)
    cur = x.shape
    padded = (1,) * (len(shape) - len(cur)) + cur
    if len(shape) < len(cur) or any(c not in (1, s) for c, s in zip(padded, shape)):
        raise NDArrayValueError(
            f"broadcast_to: operands could not be broadcast together with remapped "
            f"shapes [original->remapped]: {cur} and requested shape {shape}"
        )
    src = x if padded == cur else x.reshape(padded)
    return _op("broadcast_to", src, shape=shape)
