"""CuPy as the GPU library layer: cuBLAS, its memory pool, and views shared with numba.cuda.

Why CuPy. The GPU kernels are numba.cuda's; what numba does not bring is a tuned BLAS and
a caching allocator that other GPU libraries share. CuPy brings both (cuBLAS through its
bindings, `cupy.get_default_memory_pool()`), and it speaks `__cuda_array_interface__`, so a
numba device array and a CuPy array can be two views of one allocation, never a copy:

    c = gpu_lib.as_cupy(x)          # numba device array -> cupy.ndarray (same memory)
    y = gpu_lib.as_numba(c)         # and back
    with gpu_lib.cupy_stream(run_ctx.stream):   # CuPy work on the engine worker's stream
        ...

`available()` says whether this layer is in use: CuPy importable with cuBLAS loadable,
numba.cuda on a real device (not NUMBA_ENABLE_CUDASIM), and NNVMPY_CUPY not 0 (on by
default since the whole gpu suite passed with it on an H200, issue 16). Where
it is not, every caller keeps its numba.cuda path (the simulator runs those), so CuPy stays
an optional part of the `gpu` extra.

Both libraries work in the device's primary CUDA context (numba retains it, CuPy's runtime
calls use it), which is what makes pointers and streams valid in both.
"""

from __future__ import annotations

import threading
from typing import Any

from .. import config

_lock = threading.Lock()
_checked: list[str | None] = []  # [reason it is unavailable, or None], once checked
_streams: dict[int, Any] = {}  # numba stream pointer -> cupy Stream wrapping it


def unavailable_reason() -> str | None:
    """Why CuPy is not used here (None when it is); see the module docstring."""
    if config.CUPY.get() == "0":
        return "NNVMPY_CUPY=0"
    if not _checked:
        with _lock:
            if not _checked:
                _checked.append(_check())
    return _checked[0]


def available() -> bool:
    """True when GPU library calls (cuBLAS, CuPy's pool) are used on this machine."""
    return unavailable_reason() is None


def _check() -> str | None:
    from nnvmpy.base import NNVMError
    from nnvmpy.kernel.cuda import _state, get_cuda

    try:
        get_cuda("gpu_lib")
    except NNVMError as e:
        return str(e)
    if _state.get("simulator"):
        return "numba's CUDA simulator is on (NUMBA_ENABLE_CUDASIM=1)"
    try:
        import cupy
        from cupy_backends.cuda.libs import cublas  # noqa: F401  (loads libcublas)
    except Exception as e:  # ImportError, or a CUDA library CuPy could not load
        return f"CuPy is not usable: {type(e).__name__}: {e}"
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:
        return f"CuPy sees no device: {type(e).__name__}: {e}"
    if count < 1:
        return "CuPy sees no device"
    return None


# -- views -------------------------------------------------------------------------------------


def as_cupy(x: Any) -> Any:
    """A cupy.ndarray over the same device memory as `x` (any __cuda_array_interface__
    object, e.g. a numba device array or an NDArray's data on a GPU); no copy, no sync."""
    import cupy

    return cupy.asarray(x)


def as_numba(x: Any) -> Any:
    """A numba device array over the same device memory as `x` (a cupy.ndarray or any
    __cuda_array_interface__ object); no copy. `sync=False`: numba would otherwise wait
    on the stream the exporter names (CuPy names its current one) at every conversion."""
    from numba import cuda

    return cuda.as_cuda_array(x, sync=False)


# -- streams -----------------------------------------------------------------------------------


def stream_ptr(stream: Any) -> int:
    """The CUDA stream handle of a numba stream (0, the legacy default stream, for None).

    Read from `.handle`: numba's Stream.__int__ returns an enum member for a default
    stream, which int() accepts only with a DeprecationWarning."""
    if not stream:
        return 0
    return int(getattr(stream, "handle", stream))


def cupy_stream(stream: Any) -> Any:
    """The cupy Stream for a numba stream (RunContext.stream), made once per stream:
    `with cupy_stream(rc.stream):` runs CuPy work on the engine worker's stream. None (the
    device's default stream) gives CuPy's null stream."""
    import cupy

    ptr = stream_ptr(stream)
    if ptr == 0:
        return cupy.cuda.Stream.null
    found = _streams.get(ptr)
    if found is None or found[0] is not stream:
        # Stream.from_external keeps `stream` alive (CuPy 14; ExternalStream is deprecated)
        found = _streams[ptr] = (stream, cupy.cuda.Stream.from_external(stream))
    return found[1]


# -- memory ------------------------------------------------------------------------------------


class OutOfMemory(MemoryError):
    """CuPy's pool could not get a block from the device."""


def device_block(nbytes: int, device_id: int) -> Any:
    """A numba uint8 device array of `nbytes` from CuPy's default memory pool on the device;
    the memory goes back to that pool when the array (its last view) is dropped."""
    import cupy
    from numba import cuda

    try:
        with cupy.cuda.Device(device_id):
            mem = cupy.cuda.alloc(nbytes)  # a MemoryPointer from the current allocator
    except cupy.cuda.memory.OutOfMemoryError as e:
        raise OutOfMemory(str(e)) from e
    desc = {
        "shape": (nbytes,),
        "strides": None,
        "typestr": "|u1",
        "data": (int(mem.ptr), False),
        "version": 3,
    }
    with cuda.gpus[device_id]:  # numba ties the view to the current context: this device's
        return cuda.from_cuda_array_interface(desc, owner=mem, sync=False)


def free_pooled_memory(device_id: int | None = None) -> None:
    """Give the unused blocks of CuPy's pool back to the device (all devices for None)."""
    import cupy

    pool = cupy.get_default_memory_pool()
    if device_id is None:
        pool.free_all_blocks()
        return
    with cupy.cuda.Device(device_id):
        pool.free_all_blocks()


__all__ = [
    "OutOfMemory",
    "as_cupy",
    "as_numba",
    "available",
    "cupy_stream",
    "device_block",
    "free_pooled_memory",
    "stream_ptr",
    "unavailable_reason",
]
