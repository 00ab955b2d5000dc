"""nv.nd._internal: the registered ops whose names start with an underscore."""

from __future__ import annotations

from typing import Any

from ..base import ParamError
from ..signature import OpNamespace, make_op_function


def _make(op: Any, name: str = "") -> Any:
    from nnvmpy.ndarray import _EXTRAS, call_op

    return make_op_function(op, call_op, _EXTRAS, "out : NDArray or list of NDArrays")


_ops = OpNamespace(_make, internal=True, module="nnvmpy.nd._internal", publish_to=globals())
__getattr__ = _ops.module_getattr
__dir__ = _ops.module_dir


# -- ops whose imperative call takes its dtype or device from out= (MXNet's special cases) --


def _copyto(data: Any, out: Any = None, name: Any = None, **kwargs: Any) -> Any:
    """Copy `data` into `out` (cast to its dtype, onto its device: NDArray.copyto), or
    into a new array (the `_copyto` op) when out is None. Other keywords go to the op's
    own call, which treats them as any op's call does."""
    if kwargs:
        return _ops.get("_copyto")(data, out=out, name=name, **kwargs)
    if out is not None:
        return data.copyto(out)
    return _ops.get("_copyto")(data)


def _zeros_without_dtype(*args: Any, **kwargs: Any) -> Any:
    """Zeros of `shape` (parameters shape, ctx, dtype, by position or keyword); with
    dtype=-1 (MXNet's default) out='s dtype is used. A call this does not read as that
    (an array input, a parameter given twice, unknown keywords) goes to the op's own
    call, which names what is wrong."""
    from nnvmpy.ndarray.ndarray import NDArray

    fields = ("shape", "ctx", "dtype", "out", "name")
    named = dict(zip(fields, args))
    if (
        len(args) > len(fields)
        or any(isinstance(a, NDArray) for a in args[:3])
        or named.keys() & kwargs.keys()
        or not kwargs.keys() <= set(fields)
    ):
        return _ops.get("_zeros_without_dtype")(*args, **kwargs)
    return _zeros_of(**(named | kwargs))


def _zeros_of(
    shape: Any = (), ctx: Any = None, dtype: int = -1, out: Any = None, name: Any = None
) -> Any:
    from nnvmpy.passes.infer_type import dtype_to_flag

    if int(dtype) < 0:
        if out is None:
            raise ParamError(
                "_zeros_without_dtype: dtype=-1 leaves the dtype to a graph's type inference; "
                "imperatively pass dtype= (MXNet's type flag: 0 float32, 1 float64, ...) or out="
            )
        dtype = dtype_to_flag(out.dtype)
    kwargs = {"shape": shape, "dtype": dtype} | ({} if ctx is None else {"ctx": ctx})
    return _ops.get("_zeros_without_dtype")(out=out, **kwargs)
