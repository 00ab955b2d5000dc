"""full, zeros, ones: new arrays (or out=) filled with one value through the _full op
(_zeros and _ones for zeros and ones, the ops MXNet pushes, so profiles name them alike).

As in MXNet's legacy shape semantics, shape () and zero-size dims are unknown shapes
here unless mx.util.np_shape() is on (nd.empty and nd.array make them any time).

A new array is the op's own output (invoke allocates it from the call plan, as for
nd.relu(x)), not an nd.empty() then filled through out=: that cost ~20 us a call
against ~5 for an op.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..base import Context, NNVMError
from ..imperative import invoke
from ..registry import Op
from .ndarray import as_shape, empty, new_array_checks
from .views import reshaped

if TYPE_CHECKING:
    from nnvmpy.ndarray.ndarray import NDArray


def full_into(out: NDArray, value: Any, op_name: str = "_full") -> NDArray:
    """out[...] = value through the _full op (asynchronous; recorded like any op);
    op_name '_zeros' / '_ones' for a value of 0 / 1."""
    v = _fill_value(value)
    if out.size == 0:  # nothing to fill (and a 0 dim reads as unknown in an op's shape)
        return out
    if not out.shape:  # () reads as an unknown shape in the op: fill its one element as (1,)
        full_into(reshaped(out, (1,)), v, op_name)
        return out
    params = _params(op_name, out.shape, out.dtype, v)
    return invoke(Op.get(op_name), [], params, out=out)[0]


def _fill_value(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        raise NNVMError(f"full: the fill value must be a number, got {value!r}") from None


_dtype_names: dict[np.dtype, str] = {}


def dtype_param(dt: np.dtype) -> str:
    """str(dt), the dtype parameter of the initialiser ops, without NumPy's Python code
    for it (~1 us a call) after the first call per dtype."""
    name = _dtype_names.get(dt)
    if name is None:
        name = _dtype_names[dt] = str(dt)
    return name


def _params(op_name: str, shape: tuple[int, ...], dt: np.dtype, value: float) -> dict[str, Any]:
    """The fill op's parameters; `value` only for _full (_zeros/_ones have none)."""
    name = dtype_param(dt)
    if op_name == "_full":
        return {"shape": shape, "dtype": name, "value": value}
    return {"shape": shape, "dtype": name}


def full(
    shape: Any, val: Any, ctx: Context | None = None, dtype: Any = None, out: NDArray | None = None
) -> NDArray:
    """An array of `shape` filled with `val` (float32 unless `dtype` says otherwise).

    As in MXNet, shape () and zero-size dims are unknown shapes outside
    mx.util.np_shape(), so they raise there.
    """
    return _filled(shape, val, ctx, dtype, out, "_full")


def _filled(
    shape: Any, val: Any, ctx: Context | None, dtype: Any, out: NDArray | None, op_name: str
) -> NDArray:
    if out is not None:
        return full_into(out, val, op_name)
    dims = as_shape(shape, "full: shape")
    if not dims or 0 in dims:
        if not _np_shape():
            raise NNVMError(
                f"full/zeros/ones: shape {dims} has an unknown (0) dim or is () in MXNet's "
                "legacy shape semantics; create it inside `with mx.util.np_shape():` or use "
                "nd.array"
            )
        # no op can make these: an empty array (filled as (1,) when it is a scalar)
        return full_into(empty(dims, ctx, dtype), val, op_name)
    return _new_filled(dims, val, ctx, dtype, op_name)


def _new_filled(
    dims: tuple[int, ...], val: Any, ctx: Context | None, dtype: Any, op_name: str
) -> NDArray:
    """The fill op's own output, on `ctx` (else the current context); the checks and their
    words are nd.empty's, then full_into's."""
    dt, _ = new_array_checks(dims, ctx, dtype)
    params = _params(op_name, dims, dt, _fill_value(val))
    if ctx is None:  # invoke runs an op without inputs on the current context
        return invoke(Op.get(op_name), [], params)[0]
    with ctx:
        return invoke(Op.get(op_name), [], params)[0]


def _np_shape() -> bool:
    from nnvmpy import util

    return util.is_np_shape()


def _check_stype(what: str, stype: Any) -> None:
    if stype not in (None, "default"):
        raise NNVMError(f"{what}: stype {stype!r} is not supported; only 'default' (dense)")


def zeros(
    shape: Any, ctx: Context | None = None, dtype: Any = None, stype: Any = None, **kwargs: Any
) -> NDArray:
    """An array of zeros (float32 unless `dtype` says otherwise); out= writes into an array."""
    _check_stype("zeros", stype)
    return _filled(shape, 0, ctx, dtype, kwargs.pop("out", None), "_zeros")


def ones(shape: Any, ctx: Context | None = None, dtype: Any = None, **kwargs: Any) -> NDArray:
    """An array of ones (float32 unless `dtype` says otherwise); out= writes into an array."""
    _check_stype("ones", kwargs.pop("stype", None))
    return _filled(shape, 1, ctx, dtype, kwargs.pop("out", None), "_ones")


__all__ = ["full", "full_into", "ones", "zeros"]
