"""Executor.reshape: the same graph for new input shapes, sharing arrays and memory.

As MXNet's: every argument whose shape changes must be named in the call (or
`partial_shaping=True`); an array that shrinks becomes a view of the old one's first
elements, one that grows is allocated anew only with `allow_up_sizing=True`. The new
executor is bound with `shared_exec=old`, so its outputs and intermediate blocks reuse the
old executor's memory: run one or the other, not both at once.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ..base import NNVMError
from ..ndarray.ndarray import NDArray, empty
from ..ndarray.views import flat_window

if TYPE_CHECKING:
    from nnvmpy.executor.executor import Executor


def reshape(
    exe: Executor, partial_shaping: bool, allow_up_sizing: bool, shapes: dict[str, Any]
) -> Executor:
    from nnvmpy.executor.executor import Executor
    from nnvmpy.graph import Graph
    from nnvmpy.symbol.infer import infer_shape_raw

    symbol = exe._symbol
    graph = Graph(list(symbol._heads))
    shaped, arg_shapes, aux_shapes = infer_shape_raw(graph, shapes, "Executor.reshape")
    names = exe._arg_names + exe._aux_names
    unknown = [n for n, s in zip(names, arg_shapes + aux_shapes) if s is None or None in s]
    if unknown:
        raise NNVMError(
            f"Executor.reshape: the shapes {shapes} do not determine {unknown}; give them too"
        )
    args, grads = {}, {}
    for name, shape, arr, grad in zip(exe._arg_names, arg_shapes, exe.arg_arrays, exe.grad_arrays):
        changed = tuple(shape) != arr.shape
        if changed and not (partial_shaping or name in shapes):
            raise NNVMError(
                f"Executor.reshape: the shape of argument {name!r} changes from {arr.shape} "
                f"to {tuple(shape)} although it was not given; it would no longer share its "
                f"array with the original executor (pass partial_shaping=True if intended)"
            )
        args[name] = _resized(arr, shape, allow_up_sizing, f"argument {name!r}")
        if grad is not None:
            grads[name] = _resized(grad, shape, allow_up_sizing, f"gradient of {name!r}")
    aux = {}
    for name, shape, arr in zip(exe._aux_names, aux_shapes, exe.aux_arrays):
        if tuple(shape) != arr.shape and not partial_shaping:
            raise NNVMError(
                f"Executor.reshape: the shape of auxiliary state {name!r} changes from "
                f"{arr.shape} to {tuple(shape)}; pass partial_shaping=True if intended"
            )
        aux[name] = _resized(arr, shape, allow_up_sizing, f"auxiliary state {name!r}")
    new = Executor(
        symbol,
        exe._ctx,
        args,
        grads or None,
        exe._grad_req,
        aux,
        exe._group2ctx,
        shared_exec=exe,
        _inferred=shaped,  # the new executor's shape inference starts from these
    )
    if exe._monitor is not None:  # as MXNet's Reshape: the monitor callback carries over
        new.set_monitor_callback(exe._monitor.callback, exe._monitor.monitor_all)
    return new


def _resized(arr: NDArray, shape: Any, allow_up_sizing: bool, what: str) -> NDArray:
    shape = tuple(int(d) for d in shape)
    if shape == arr.shape:
        return arr
    if math.prod(shape) <= arr.size:
        return flat_window(arr, 0, shape)
    if not allow_up_sizing:
        raise NNVMError(
            f"Executor.reshape: {what} grows from {arr.shape} to {shape}; making a large "
            f"executor first and reshaping it down is cheaper, or pass allow_up_sizing=True "
            f"to allocate new arrays"
        )
    return empty(shape, arr.context, arr.dtype)


__all__ = ["reshape"]
