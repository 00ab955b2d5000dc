"""Two numba-cuda 0.30 defects that only show on a real GPU, corrected where numba-cuda
defines the behaviour, so every kernel gets the fix (seen on an H200, 2026-12-04).

1. `int(v)` of a float16 rounds to nearest (its cast is `cvt.rni`): int(1.7) is 2 where
   C, NumPy, numba's CPU target and the simulator truncate to 1. numba's `float(v)` keeps
   a float16 a float16, so `int(float(v))` rounds too. A roi with batch index 1.7 pooled
   image 2 (out of range: zeros) on the GPU and image 1 on the CPU. Here the cast is
   registered again as `cvt.rzi` (round toward zero); the target context keeps the latest
   registration of a signature, and reads new ones at its next compile.
2. Loading a compiled kernel is not thread-safe: `CUDACodeLibrary.get_cufunc` checks its
   per-device cache, then loads the module and stores it, and the loaded library's handle
   is shared by every load of the same code object. Two engine workers making the same
   kernel's first launch both loaded it, and the context's module table refused the second
   handle ("key already in dictionary: <CUlibrary ...>"); at exit the two module objects
   freed the one library twice ("double free or corruption"). Here the check and the
   load run under one lock: later launches find the cached function at once.

Installed by kernel/cuda.py's get_cuda before any kernel compiles, when the simulator is
off; the simulator neither casts through PTX nor loads modules.
"""

from __future__ import annotations

import threading
from typing import Any

#: part of every GPU disk-cache key (kernel/disk_cache.py): raised when a fix here changes
#: the code compiled, so kernels cached before it are compiled again
REVISION = 1

_lock = threading.Lock()  # held while a kernel's module is looked up or loaded
_installed = False
_original_get_cufunc: Any = None


def _serial_get_cufunc(self: Any) -> Any:
    """CUDACodeLibrary.get_cufunc with its cache check and module load made atomic."""
    with _lock:
        return _original_get_cufunc(self)


def _register_truncating_half_to_int() -> None:
    from llvmlite import ir
    from numba.cuda import fp16, types  # fp16 first: its cast must be registered before ours
    from numba.cuda.core.imputils import lower_cast

    assert fp16  # imported for its registrations

    registers = {8: "c", 16: "h", 32: "r", 64: "l"}  # PTX inline-asm constraints by width

    @lower_cast(types.float16, types.Integer)
    def float16_to_integer_truncating(context: Any, builder: Any, fromty: Any, toty: Any,
                                      val: Any) -> Any:  # fmt: skip
        width = toty.bitwidth
        if width not in registers:
            from numba.cuda.errors import CudaLoweringError

            raise CudaLoweringError(f"Conversion between float16 and int{width} unsupported")
        sign = "s" if toty.signed else "u"
        fnty = ir.FunctionType(context.get_value_type(toty), [ir.IntType(16)])
        asm = ir.InlineAsm(fnty, f"cvt.rzi.{sign}{width}.f16 $0, $1;", f"={registers[width]},h")
        return builder.call(asm, [val])


def install() -> None:
    """Apply both corrections (once; call only without the simulator)."""
    global _installed, _original_get_cufunc
    with _lock:
        if _installed:
            return
        from numba.cuda.codegen import CUDACodeLibrary

        _register_truncating_half_to_int()
        _original_get_cufunc = CUDACodeLibrary.get_cufunc
        CUDACodeLibrary.get_cufunc = _serial_get_cufunc
        _installed = True


__all__ = ["install"]
