"""kernel/cuda_fast.py's direct launches against numba-cuda's own, on every launch.

Used by tools/gpu_compile_check.py --fast-launch (the CUDA driver faked there). With
NNVMPY_GPU_FAST_LAUNCH=1 a kernel's first launch on a thread goes numba-cuda's way; the
later ones marshal their arguments in kernel/cuda_fast.py and call cuda.core's launch
directly. Here that last call is intercepted and compared with what numba-cuda's own
path would pass for the same launch: its _Kernel._prepare_args words (values and ctypes
types), the grid and block as it normalises them, the stream as it converts it, and the
compiled function numba-cuda would launch. Any difference is recorded.
"""

from __future__ import annotations

import ctypes
import threading
import types
from typing import Any

_local = threading.local()


def _plain(words: list[Any]) -> list[tuple[str, Any]]:
    return [
        (type(w).__name__, w.value) if isinstance(w, ctypes._SimpleCData) else ("int", int(w))
        for w in words
    ]


def _bits(words: list[Any]) -> list[tuple[str, bytes]]:
    """The words as their bytes: a NaN scalar argument equals itself (its value never does)."""
    return [
        (type(w).__name__, bytes(w))
        if isinstance(w, ctypes._SimpleCData)
        else ("int", int(w).to_bytes(16, "little", signed=True))
        for w in words
    ]


def install(summary: dict[str, Any]) -> None:
    """Turn direct launches on and check each one; `summary` gets 'checked' (a count)
    and 'mismatches' (descriptions)."""
    from numba.cuda import codegen
    from numba.cuda.cudadrv import driver
    from numba.cuda.errors import normalize_kernel_dimensions

    from nnvmpy.kernel import cuda_fast

    functions: dict[int, Any] = {}

    def get_cufunc(library: Any) -> Any:  # a loaded module's function, one per library
        return functions.setdefault(id(library), types.SimpleNamespace(kernel=("fn", id(library))))

    codegen.CUDACodeLibrary.get_cufunc = get_cufunc
    summary.setdefault("checked", 0)
    summary.setdefault("mismatches", [])
    cuda_fast.set_enabled(True)
    cuda_fast._import_numba()
    cuda_fast._numba["launch"] = lambda *call: _local.calls.append(call)
    direct = cuda_fast.launch

    def checked(dispatcher: Any, blocks: int, threads: int, stream: Any, args: tuple) -> None:
        _local.calls = []
        direct(dispatcher, blocks, threads, stream, args)
        if not _local.calls:
            return  # numba's own way (a first launch on this thread, or not eligible)
        core_stream, config, function, *words = _local.calls[0]
        argument_types = tuple(dispatcher.typeof_pyval(a) for a in args)
        kernel = dispatcher.overloads[argument_types]
        want: list[Any] = []
        for ty, a in zip(kernel.argument_types, args):
            kernel._prepare_args(ty, a, stream, [], want)
        problems = []
        if _bits(words) != _bits(want):
            problems.append(f"words {_plain(words)} != numba's {_plain(want)}")
        if (tuple(config.grid), tuple(config.block)) != normalize_kernel_dimensions(
            blocks, threads
        ):  # numba-cuda's own reading of the sizes (an int, or up to three)
            problems.append(f"config {config.grid}x{config.block} for {blocks}x{threads}")
        if core_stream is not driver._to_core_stream(
            stream
        ) and core_stream != driver._to_core_stream(stream):
            problems.append("another stream")
        if function != kernel._codelibrary.get_cufunc().kernel:
            problems.append("another compiled function")
        summary["checked"] += 1
        if problems:
            name = getattr(dispatcher.py_func, "__qualname__", "?")
            summary["mismatches"].append(f"{name}{argument_types}: {'; '.join(problems)}")

    cuda_fast.launch = checked
