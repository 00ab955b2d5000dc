"""Sharing memory with NumPy and DLPack: nd.from_numpy, nd.from_dlpack, to_dlpack_for_*.

`from_numpy(a, zero_copy=True)` wraps a C-contiguous NumPy array's memory without a copy
and marks `a` read-only, as MXNet does: writes go through the NDArray, which the engine
orders. The DLPack functions speak the protocol through NumPy's `__dlpack__` /
`np.from_dlpack`, so they cover CPU arrays; a GPU array raises NNVMError (numba's device
arrays have no DLPack export).
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

from .. import engine
from ..base import Context, NNVMError, cpu
from .ndarray import NDArray, array


class ExternalChunk:
    """An NDArray chunk over memory another library owns (kept alive here)."""

    __slots__ = ("__weakref__", "_array", "_owner", "ctx", "nbytes", "var")

    def __init__(self, owner: np.ndarray, ctx: Context, keep_alive: Any = None) -> None:
        self._array = owner
        self._owner = keep_alive  # the object whose memory `owner` aliases
        self.ctx = ctx
        self.nbytes = owner.nbytes
        self.var = engine.get_engine().new_var()

    def view(self, shape: tuple[int, ...], dtype: np.dtype) -> Any:
        a = self._array
        if a.shape == shape and a.dtype == dtype:
            return a
        return (
            a.reshape(-1)
            .view(np.uint8)[: int(np.prod(shape)) * dtype.itemsize]
            .view(dtype)
            .reshape(shape)
        )


def _wrap(a: np.ndarray, keep_alive: Any = None) -> NDArray:
    chunk = ExternalChunk(a, cpu(), keep_alive)
    return NDArray(chunk, tuple(a.shape), a.dtype)  # type: ignore[arg-type]


def from_numpy(ndarray: np.ndarray, zero_copy: bool = True) -> NDArray:
    """An NDArray with the values of a NumPy array; with zero_copy it shares the memory.

    zero_copy needs a C-contiguous array (ValueError otherwise) and makes it read-only,
    so that every write goes through the NDArray (and the engine orders it).
    """
    if not isinstance(ndarray, np.ndarray):
        raise NNVMError(f"from_numpy: expected a NumPy array, got {type(ndarray).__name__}")
    if not zero_copy:
        return array(ndarray, dtype=ndarray.dtype)
    if not ndarray.flags["C_CONTIGUOUS"]:
        raise _ValueError(
            "from_numpy: zero_copy needs a C-contiguous array; pass "
            "np.ascontiguousarray(a) or zero_copy=False"
        )
    if ndarray.dtype.byteorder not in ("=", "|"):
        raise _ValueError(f"from_numpy: dtype {ndarray.dtype} is not in native byte order")
    out = _wrap(_writable_alias(ndarray), ndarray)
    ndarray.flags.writeable = False  # writes go through the NDArray from now on
    return out


def _writable_alias(a: np.ndarray) -> np.ndarray:
    """A writable array over a's memory, even when `a` was made read-only earlier."""
    if a.flags.writeable or a.nbytes == 0:
        return a.view() if a.flags.writeable else np.empty(a.shape, a.dtype)
    buf = (ctypes.c_char * a.nbytes).from_address(a.__array_interface__["data"][0])
    return np.frombuffer(memoryview(buf), dtype=a.dtype).reshape(a.shape)


class _ValueError(NNVMError, ValueError):
    pass


# -- DLPack -----------------------------------------------------------------------------------


class _Capsule:
    """Hands a DLPack capsule to np.from_dlpack, which wants an object with __dlpack__."""

    def __init__(self, capsule: Any) -> None:
        self.capsule = capsule

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self.capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)  # kDLCPU


def _host_data(x: NDArray, what: str) -> np.ndarray:
    if not isinstance(x, NDArray):
        raise NNVMError(f"{what}: expected an NDArray, got {type(x).__name__}")
    if x.context.device_type == "gpu":
        raise NNVMError(
            f"{what}: only CPU arrays can be exported through DLPack here (array is on "
            f"{x.context}); copy it with .as_in_context(mx.cpu()) first"
        )
    return x._data


def to_dlpack_for_read(data: NDArray) -> Any:
    """A DLPack capsule (PyCapsule 'dltensor') of the array once its pending writes finish."""
    a = _host_data(data, "to_dlpack_for_read")
    data.wait_to_read()
    return a.__dlpack__()


def to_dlpack_for_write(data: NDArray) -> Any:
    """A DLPack capsule to write through, once the array's pending reads and writes finish."""
    a = _host_data(data, "to_dlpack_for_write")
    data.wait_to_write()
    return a.__dlpack__()


def from_dlpack(dlpack: Any) -> NDArray:
    """An NDArray sharing the memory of a DLPack capsule or of an object with __dlpack__."""
    source = dlpack if hasattr(dlpack, "__dlpack__") else _Capsule(dlpack)
    try:
        a = np.from_dlpack(source)
    except (TypeError, ValueError, BufferError, RuntimeError) as e:
        raise NNVMError(
            f"from_dlpack: cannot import {type(dlpack).__name__} (a used capsule, a GPU "
            f"tensor or an unsupported dtype?): {e}"
        ) from None
    if not a.flags["C_CONTIGUOUS"]:
        return array(a, dtype=a.dtype)
    # NumPy imports a legacy capsule read-only; the memory is shared and writable, as in MXNet
    return _wrap(_writable_alias(a), a)


_DLTENSOR = b"dltensor"  # lives as long as the module: a capsule keeps a pointer to its name


def from_dlpack_pointer(pointer: int) -> NDArray:
    """An NDArray taking ownership of the DLManagedTensor at `pointer` (MXNet's C function
    MXNDArrayFromDLPack): the tensor is wrapped in a fresh 'dltensor' capsule that
    from_dlpack consumes, so its deleter runs once, when the array's memory is freed."""
    import ctypes

    ptr = ctypes.c_void_p
    signature = ctypes.PYFUNCTYPE(ctypes.py_object, ptr, ctypes.c_char_p, ptr)
    capsule_new = signature(("PyCapsule_New", ctypes.pythonapi))
    return from_dlpack(capsule_new(pointer, _DLTENSOR, None))


__all__ = ["from_dlpack", "from_numpy", "to_dlpack_for_read", "to_dlpack_for_write"]
