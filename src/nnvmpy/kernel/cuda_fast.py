"""GPU kernel launches without numba-cuda's per-launch resolution (NNVMPY_GPU_FAST_LAUNCH=1).

`loop[blocks, threads, stream](*args)` redoes on every launch what is the same for every
launch of one kernel on one thread: it normalises the grid, wraps the stream in a new
cuda.core Stream, types each argument to pick the compiled overload, asks the driver for
the current context to find the loaded function, builds a LaunchConfig, and turns each
device array into its argument words through a memory-view shim. issue 16 gives a whole
small-op dispatch 20 us; on an H100 a launch took most of ~70.

`launch(dispatcher, blocks, threads, stream, args)` does the first launch of a kernel for
an argument signature on each thread the plain way (it compiles, loads the module and
makes the device's context current on the thread), then keeps, for that thread and
signature, the compiled kernel's loaded function and argument types. Later launches
marshal the arguments here, with numba's own ABI: an array is (meminfo 0, parent 0,
size, itemsize, data pointer, shape..., strides...) as numba-cuda's
`_Kernel._prepare_args` gives it (tests/kernel/test_cuda_fast.py compares the two);
scalars still go through `_prepare_args`; cuda.core's `launch` does the rest. Streams
and launch configurations are made once each.

The loaded function is kept per thread, not per device, so kernel.cuda takes this path
on one-GPU machines only. On by default since the whole gpu suite passed with it on an
H200 (tools/gpu_check.sh); NNVMPY_GPU_FAST_LAUNCH=0 turns it off.
Kernels compiled with debug, cooperative launches or argument extensions, and arguments
other than C-contiguous device arrays and numbers, always take numba's path.
"""

from __future__ import annotations

import threading
from typing import Any

from .. import config

Dims = int | tuple[int, ...]  # a grid or block size: x, or (x[, y[, z]])
_local = threading.local()  # .kernels: {(id(dispatcher), signature): _Resolved or None}
_streams: dict[int, tuple[Any, Any]] = {}  # id(numba stream) -> (stream, cuda.core stream)
_configs: dict[tuple[Dims, Dims], Any] = {}
_numba: dict[str, Any] = {}  # numba-cuda pieces, imported on first use


_enabled: bool | None = None  # None: NNVMPY_GPU_FAST_LAUNCH decides, read once


def enabled() -> bool:
    """Whether kernel.cuda's launches take this path (NNVMPY_GPU_FAST_LAUNCH=1)."""
    global _enabled
    if _enabled is None:
        _enabled = config.GPU_FAST_LAUNCH.get() == "1"
    return _enabled


def set_enabled(on: bool | None) -> None:
    """Turn the path on or off in this process (None: back to the knob); for tests and
    tools/bench_gpu.py, which measure both."""
    global _enabled
    _enabled = on


class _Resolved:
    """One compiled kernel as loaded on this thread's device: what a launch needs."""

    __slots__ = ("argument_types", "dispatcher", "function", "kernel", "words")

    def __init__(
        self, dispatcher: Any, kernel: Any, function: Any, argument_types: tuple[Any, ...]
    ) -> None:
        array_type = _numba["types"].Array
        # kept alive: entries are keyed by id(dispatcher), which a freed dispatcher's
        # successor could otherwise reuse (and be launched as the old kernel)
        self.dispatcher = dispatcher
        self.kernel = kernel  # numba-cuda's _Kernel (its _prepare_args marshals scalars)
        self.function = function  # cuda.core's kernel object of the loaded module
        self.argument_types = argument_types
        # per argument: _ARRAY, the ctypes class numba-cuda wraps a scalar of its type in,
        # or None (numba's _prepare_args then marshals it: float16, complex, ...); an
        # im2col launch has 28 scalars, and _prepare_args' type tests cost ~1.5 us each
        self.words = tuple(
            _ARRAY if isinstance(t, array_type) else _scalar_ctype(t) for t in argument_types
        )


_ARRAY = "array"


def _scalar_ctype(ty: Any) -> Any:
    """The ctypes class numba-cuda's _Kernel._prepare_args wraps a scalar of type `ty` in
    (integers, float32, float64), else None."""
    import ctypes

    types = _numba["types"]
    if isinstance(ty, types.Integer):
        return getattr(ctypes, f"c_{ty}")
    return {types.float64: ctypes.c_double, types.float32: ctypes.c_float}.get(ty)


def signature(args: tuple[Any, ...]) -> tuple[Any, ...]:
    """What picks the compiled overload: each device array's dtype, ndim and whether it
    is C-contiguous, each scalar's type."""
    return tuple(
        (a.dtype, a.ndim, a.is_c_contiguous()) if getattr(a, "__cuda_memory__", False) else type(a)
        for a in args
    )


def array_words(a: Any) -> list[Any]:
    """A device array as numba's kernel ABI passes it: meminfo, parent, size, itemsize,
    data pointer, shape, strides (numba-cuda's _Kernel._prepare_args)."""
    return [0, 0, a.size, a.dtype.itemsize, a.device_ctypes_pointer.value, *a.shape, *a.strides]


def launch(
    dispatcher: Any, blocks: Dims, threads: Dims, stream: Any, args: tuple[Any, ...]
) -> None:
    """dispatcher[blocks, threads, stream](*args) (each size an int, or a tuple of up to
    three): numba's way the first time on each thread for each signature, then directly
    where every argument is a C-contiguous device array or a number."""
    kernels = getattr(_local, "kernels", None)
    if kernels is None:
        kernels = _local.kernels = {}
    key = (id(dispatcher), signature(args))
    resolved = kernels.get(key, False)
    if resolved is False or resolved is None:
        dispatcher[blocks, threads, stream](*args)
        if resolved is False:  # first launch on this thread: keep what it resolved
            kernels[key] = _resolve(dispatcher, args)
        return
    words: list[Any] = []
    for ty, word, a in zip(resolved.argument_types, resolved.words, args):
        if word is _ARRAY:
            words += array_words(a)
        elif word is not None:
            words.append(word(a))
        else:
            resolved.kernel._prepare_args(ty, a, stream, None, words)
    _numba["launch"](_core_stream(stream), _config(blocks, threads), resolved.function, *words)


def _resolve(dispatcher: Any, args: tuple[Any, ...]) -> _Resolved | None:
    """The compiled kernel the launch just used, loaded on this thread's current device;
    None where this path must not be taken (the kernel is then always launched by numba)."""
    _import_numba()
    argument_types = tuple(dispatcher.typeof_pyval(a) for a in args)
    kernel = dispatcher.overloads.get(argument_types)
    if kernel is None or kernel.debug or kernel.cooperative or kernel.extensions:
        return None
    types = _numba["types"]
    for ty, a in zip(argument_types, args):
        if isinstance(ty, types.Array):
            if not (getattr(a, "__cuda_memory__", False) and ty.layout == "C"):
                return None  # host arrays (numba copies them), other layouts
            if not a.is_c_contiguous():
                return None  # signature() keeps such arrays apart: numba's way for them
        elif not isinstance(ty, (types.Number, types.Boolean)):
            return None  # tuples, records, ...: signature() does not tell them apart
    function = kernel._codelibrary.get_cufunc().kernel
    return _Resolved(dispatcher, kernel, function, argument_types)


def _core_stream(stream: Any) -> Any:
    """The cuda.core stream numba-cuda makes of `stream` (0 or a numba Stream), made once."""
    entry = _streams.get(id(stream))
    if entry is None or entry[0] is not stream:
        entry = _streams[id(stream)] = (stream, _numba["to_core_stream"](stream))
    return entry[1]


def _config(blocks: Dims, threads: Dims) -> Any:
    key = (blocks, threads)
    made = _configs.get(key)
    if made is None:
        made = _configs[key] = _numba["launch_config"](_dim3(blocks), _dim3(threads))
    return made


def _dim3(dims: Dims) -> tuple[int, int, int]:
    """A grid or block size as CUDA's three dimensions (an int is the x one)."""
    if isinstance(dims, int):
        return (dims, 1, 1)
    x, y, z = (*dims, 1, 1)[:3]
    return (x, y, z)


def _import_numba() -> None:
    if _numba:
        return
    from cuda.core import LaunchConfig
    from cuda.core import launch as core_launch
    from numba.cuda import types
    from numba.cuda._compat import CUDA_CORE_GE_1_0
    from numba.cuda.cudadrv import driver

    def launch_config(grid: tuple[int, ...], block: tuple[int, ...]) -> Any:
        # numba-cuda's _Kernel.launch, whose keyword for cooperative launches changed
        if CUDA_CORE_GE_1_0:
            return LaunchConfig(grid=grid, block=block, shmem_size=0, is_cooperative=False)
        return LaunchConfig(grid=grid, block=block, shmem_size=0, cooperative_launch=False)

    _numba.update(
        types=types,
        launch=core_launch,
        launch_config=launch_config,
        to_core_stream=driver._to_core_stream,
    )


def forget() -> None:
    """Drop what this thread resolved (tests; a device reset)."""
    _local.kernels = {}


__all__ = ["array_words", "enabled", "forget", "launch", "set_enabled", "signature"]
