"""MXNet's ctypes surface for the C functions its Python users call directly.

MXNet 1.x has no Python function for some features, so its users (and its own tests) call
the C library through ctypes: `check_call(_LIB.MXBuildSubgraphByOpNames(sym.handle,
c_str('default'), mx_uint(n), c_str_array(names), ctypes.byref(out)))`, then
`Symbol(out)`. nnvmpy has no C library; `_LIB` here is a Python object with those entry
points, taking and filling the same ctypes values, so such code runs unchanged.

Handles are ctypes.c_void_p values that name Python objects: `Symbol.handle` registers
the symbol (weakly: the handle is valid while the symbol lives), and an object a C-API
function creates is held until a Python wrapper (`Symbol(handle)`) takes it, as MXNet's
wrappers take ownership of the handles the library returns.

Errors: every entry point returns 0 and raises nnvmpy's own errors directly (MXNet returns
-1 and check_call raises the library's last error); check_call(nonzero) still raises.
"""

from __future__ import annotations

import ctypes
import weakref
from collections.abc import Callable, Sequence
from typing import Any

from .base import NNVMError

mx_uint = ctypes.c_uint
mx_int = ctypes.c_int
mx_float = ctypes.c_float
SymbolHandle = ctypes.c_void_p
NDArrayHandle = ctypes.c_void_p

# MXNet's base module sets these at import, and code written for it relies on them (the
# DLPack recipe `c_void_p(pythonapi.PyCapsule_GetPointer(capsule, c_str('dltensor')))`):
# with ctypes' default int restype a 64-bit pointer would be cut to 32 bits.
ctypes.pythonapi.PyCapsule_New.restype = ctypes.py_object
ctypes.pythonapi.PyCapsule_GetPointer.restype = ctypes.c_void_p

_alive: weakref.WeakValueDictionary[int, Any] = weakref.WeakValueDictionary()
_created: dict[int, Any] = {}  # made by an entry point, until a wrapper takes it


class MissingEntryPoint(NNVMError, AttributeError):
    """_LIB has no such C function (an AttributeError too, so hasattr(_LIB, name) works)."""


def c_str(string: str) -> ctypes.c_char_p:
    """A Python string as a C string (MXNet's base.c_str)."""
    return ctypes.c_char_p(string.encode("utf-8"))


def c_str_array(strings: Sequence[str]) -> Any:
    """Python strings as a C array of C strings (MXNet's base.c_str_array)."""
    arr = (ctypes.c_char_p * len(strings))()
    arr[:] = [s.encode("utf-8") for s in strings]
    return arr


def c_array(ctype: Any, values: Sequence[Any]) -> Any:
    """A C array of `ctype` holding `values` (MXNet's base.c_array)."""
    return (ctype * len(values))(*values)


def check_call(ret: int) -> None:
    """MXNet's check_call: a nonzero return code is an error."""
    if ret != 0:
        raise NNVMError(f"a C API call returned {ret}")


def handle_for(obj: Any) -> ctypes.c_void_p:
    """The handle naming `obj` while it lives (Symbol.handle)."""
    _alive[id(obj)] = obj
    return ctypes.c_void_p(id(obj))


def take(handle: Any, kind: type, what: str) -> Any:
    """The object of type `kind` behind `handle` (a c_void_p or an int); an object an entry
    point created passes to the caller (the wrapper owns it now)."""
    value = handle.value if isinstance(handle, ctypes.c_void_p) else handle
    obj = _created.pop(value, None) if isinstance(value, int) else None
    if obj is None and isinstance(value, int):
        obj = _alive.get(value)
    if not isinstance(obj, kind):
        raise NNVMError(f"{what}: {handle!r} is not a handle of a live {kind.__name__}")
    return obj


def _check_out(out: Any, what: str) -> ctypes.c_void_p:
    """The handle behind an output argument: ctypes.byref(handle), a pointer, or the handle."""
    target = getattr(out, "_obj", out)
    if isinstance(target, ctypes._Pointer):
        target = target.contents
    if not isinstance(target, ctypes.c_void_p):
        raise NNVMError(f"{what}: the output argument must be ctypes.byref(a handle), got {out!r}")
    return target


def _give(out: Any, obj: Any, what: str) -> None:
    """Store the handle of a new object into the output argument `out`."""
    target = _check_out(out, what)
    _created[id(obj)] = obj
    target.value = id(obj)


def _strings(array: Any, count: Any, what: str) -> list[str]:
    n = count.value if hasattr(count, "value") else int(count)
    if n < 0:
        raise NNVMError(f"{what}: a negative count {n}")
    return [_string(array[i], what) for i in range(n)]


def _string(value: Any, what: str) -> str:
    if isinstance(value, ctypes.c_char_p):
        value = value.value
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if isinstance(value, str):
        return value
    raise NNVMError(f"{what}: expected a C string (c_str), got {value!r}")


def _symbol_class() -> type:
    from nnvmpy.symbol.symbol import Symbol

    return Symbol


class _Library:
    """The entry points of libmxnet that nnvmpy provides, by their C names."""

    def MXBuildSubgraphByOpNames(
        self, sym_handle: Any, backend: Any, num_ops: Any, op_names: Any, out: Any
    ) -> int:
        """Partition a symbol: nodes whose op is named go into subgraph (_CachedOp) nodes."""
        what = "MXBuildSubgraphByOpNames"
        symbol = take(sym_handle, _symbol_class(), what)
        names, name = _strings(op_names, num_ops, what), _string(backend, what)
        _check_out(out, what)
        from nnvmpy.passes.partition import partition_by_op_names

        _give(out, partition_by_op_names(symbol, names, name), what)
        return 0

    def MXNDArrayFromDLPack(self, dlpack: Any, out: Any) -> int:
        """An NDArray owning a DLManagedTensor (the pointer inside a 'dltensor' capsule)."""
        what = "MXNDArrayFromDLPack"
        pointer = dlpack.value if isinstance(dlpack, ctypes.c_void_p) else dlpack
        if not isinstance(pointer, int) or pointer == 0:
            raise NNVMError(f"{what}: expected a DLManagedTensor pointer, got {dlpack!r}")
        _check_out(out, what)
        from nnvmpy.ndarray.interop import from_dlpack_pointer

        _give(out, from_dlpack_pointer(pointer), what)
        return 0

    def MXSetSubgraphPropertyOpNames(self, backend: Any, num_ops: Any, op_names: Any) -> int:
        """Register the op names a backend partitions by at bind (MXNET_SUBGRAPH_BACKEND)."""
        return self._set("MXSetSubgraphPropertyOpNames", backend, num_ops, op_names)

    def MXSetSubgraphPropertyOpNamesV2(self, backend: Any, num_ops: Any, op_names: Any) -> int:
        """Register the op names a backend partitions by in Symbol.optimize_for."""
        return self._set("MXSetSubgraphPropertyOpNamesV2", backend, num_ops, op_names)

    def MXRemoveSubgraphPropertyOpNames(self, backend: Any) -> int:
        return self._remove("MXRemoveSubgraphPropertyOpNames", backend)

    def MXRemoveSubgraphPropertyOpNamesV2(self, backend: Any) -> int:
        return self._remove("MXRemoveSubgraphPropertyOpNamesV2", backend)

    def _set(self, what: str, backend: Any, num_ops: Any, op_names: Any) -> int:
        name, names = _string(backend, what), _strings(op_names, num_ops, what)
        from nnvmpy.passes.partition import set_subgraph_op_names

        set_subgraph_op_names(name, names)
        return 0

    def _remove(self, what: str, backend: Any) -> int:
        from nnvmpy.passes.partition import remove_subgraph_op_names

        remove_subgraph_op_names(_string(backend, what))
        return 0

    def __getattr__(self, name: str) -> Callable[..., int]:
        raise MissingEntryPoint(
            f"_LIB.{name}: nnvmpy has no C library; of MXNet's C API it provides "
            f"{', '.join(sorted(n for n in dir(_Library) if n.startswith('MX')))}"
        )


_LIB = _Library()

__all__ = [
    "MissingEntryPoint",
    "NDArrayHandle",
    "SymbolHandle",
    "c_array",
    "c_str",
    "c_str_array",
    "check_call",
    "handle_for",
    "mx_float",
    "mx_int",
    "mx_uint",
    "take",
]
