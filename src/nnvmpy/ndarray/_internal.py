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


def _copyto(*args: Any, **kwargs: Any) -> Any:
    """Copy `data` into `out` (cast to its dtype, onto its device: NDArray.copyto), or
    into a new array (the `_copyto` op) when out is None. Any other call goes to the op's
    own call, which treats it as any op's call does (named errors, unknown keywords kept
    as an op without parameters keeps them)."""
    from nnvmpy.ndarray.ndarray import NDArray

    if len(args) == 2 and isinstance(args[1], NDArray) and "out" not in kwargs:
        kwargs = {**kwargs, "out": args[1]}  # MXNet's (data, out) order
        args = args[:1]
    out = kwargs.get("out")
    plain = len(args) == 1 and isinstance(args[0], NDArray) and kwargs.keys() <= {"out", "name"}
    if plain and isinstance(out, NDArray):
        return args[0].copyto(out)
    return _ops.get("_copyto")(*args, **kwargs)


def _zeros_without_dtype(*args: Any, **kwargs: Any) -> Any:
    """Zeros of `shape` (parameters shape, ctx, dtype by position or keyword, as MXNet's
    generated function); with dtype=-1 (MXNet's default) out='s dtype is used. The op's
    own call checks everything else and names what is wrong."""
    from nnvmpy.ndarray.ndarray import NDArray
    from nnvmpy.passes.infer_type import dtype_to_flag

    call = _ops.get("_zeros_without_dtype")
    named = dict(zip(("shape", "ctx", "dtype", "out", "name"), args))
    odd = len(args) > len(named) or any(isinstance(a, NDArray) for a in args[:3])
    if odd or named.keys() & kwargs.keys():
        return call(*args, **kwargs)
    params = named | kwargs
    try:
        unset = int(params.get("dtype", -1)) < 0
    except (TypeError, ValueError):
        return call(**params)  # not a type flag: the op's parser says so
    if unset:
        out = params.get("out")
        if not isinstance(out, NDArray):
            raise ParamError(
                "_zeros_without_dtype: dtype=-1 leaves the dtype to a graph's type inference; "
                "imperatively pass dtype= (MXNet's type flag: 0 float32, 1 float64, ...) or out="
            )
        params["dtype"] = dtype_to_flag(out.dtype)
    return call(**params)
