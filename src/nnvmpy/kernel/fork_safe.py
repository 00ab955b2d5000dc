"""numba parallel regions that survive fork(): a forked child runs them serially.

GNU OpenMP is not fork-safe: its team threads do not exist in a child, so numba stops
any child of a process that had started its omp layer, with SIGTERM ("fork() called from
a process already using GNU OpenMP"), at the child's first `prange` region. That kills
the data-loading workers an MXNet user forks (multiprocessing, DataLoader workers) as
soon as one of them runs a large operator.

Every compiled `prange` region calls the external symbol `numba_parallel_for`, which
numba binds to its threading layer's function when it starts the layer. `install()`
starts the layer and rebinds the symbol, before any parallel code is compiled or loaded,
to a small trampoline:

    if serial_flag:  fn(args, dims, steps, data)            # the whole range, this thread
    else:            layer_parallel_for(fn, args, dims, ...)  # the OpenMP team, as before

In the parent the flag is 0 and the trampoline costs one load and a tail call. An
after-fork hook sets it in the child, where each region then runs its schedule's chunks
one after another on the calling thread: the same results (reductions included: every
chunk adds into slot 0 in turn), no team. Numba's TBB layer and Intel's OpenMP are
fork-safe and keep numba's own binding.
"""

from __future__ import annotations

import ctypes
import os
import threading
import warnings
from typing import Any

_lock = threading.Lock()
_installed = False
_serial_flag = ctypes.c_int32(0)  # read by the trampoline on every region
_library: Any = None  # numba's code library holding the trampoline: keeps it alive


def install() -> bool:
    """Start numba's threading layer and, for GNU OpenMP, route its regions through the
    fork-safe trampoline. Idempotent; returns whether the trampoline is in place. Call it
    before the first parallel compile: code compiled earlier keeps the plain binding."""
    global _installed, _library
    if _installed:
        return True
    with _lock:
        if _installed:
            return True
        from numba.np.ufunc import parallel

        parallel._launch_threads()
        if parallel.threading_layer() != "omp":
            return False
        from numba.np.ufunc import omppool

        if getattr(omppool, "openmp_vendor", "GNU") != "GNU":
            return False
        try:
            import llvmlite.binding as ll

            _library, address = _build_trampoline(omppool.parallel_for)
            ll.add_symbol("numba_parallel_for", address)
        except Exception as e:  # numba's or llvmlite's internals moved: numba's binding stays
            warnings.warn(
                f"nnvmpy: parallel kernels stay unsafe in forked children ({e!r}); a child "
                "forked after one ran is stopped by numba at its first parallel region",
                RuntimeWarning,
                stacklevel=2,
            )
            return False
        _installed = True
        return True


def installed() -> bool:
    """Whether parallel regions compiled from now on go through the trampoline."""
    return _installed


def serial_regions() -> bool:
    """Whether this process runs numba's parallel regions serially (a forked child)."""
    return bool(_serial_flag.value)


def _build_trampoline(layer_parallel_for: int) -> tuple[Any, int]:
    """Compile `nnvmpy_parallel_for` (numba's parallel_for signature) with numba's JIT;
    the flag's and the layer function's addresses are constants in its code."""
    import llvmlite.ir as ir
    from numba.core.compiler_lock import global_compiler_lock
    from numba.core.registry import cpu_target

    i8p = ir.IntType(8).as_pointer()
    i64, i32 = ir.IntType(64), ir.IntType(32)
    # void parallel_for(void *fn, char **args, size_t *dims, size_t *steps, void *data,
    #                   size_t inner_ndim, size_t array_count, int num_threads)
    gufunc_args = [i8p.as_pointer(), i64.as_pointer(), i64.as_pointer(), i8p]
    region_ty = ir.FunctionType(ir.VoidType(), [i8p, *gufunc_args, i64, i64, i32])
    # the gufunc a region runs: void fn(char **args, size_t *dims, size_t *steps, void *data)
    gufunc_ty = ir.FunctionType(ir.VoidType(), gufunc_args)
    module = ir.Module(name="nnvmpy_fork_safe")
    trampoline = ir.Function(module, region_ty, "nnvmpy_parallel_for")
    entry, team, serial = (trampoline.append_basic_block(n) for n in ("entry", "team", "serial"))
    b = ir.IRBuilder(entry)
    flag = b.load(b.inttoptr(i64(ctypes.addressof(_serial_flag)), i32.as_pointer()), align=4)
    b.cbranch(b.icmp_unsigned("!=", flag, i32(0)), serial, team)
    b = ir.IRBuilder(team)
    b.call(b.inttoptr(i64(layer_parallel_for), region_ty.as_pointer()), trampoline.args)
    b.ret_void()
    b = ir.IRBuilder(serial)
    fn, args, dims, steps, data = trampoline.args[:5]
    b.call(b.bitcast(fn, gufunc_ty.as_pointer()), [args, dims, steps, data])
    b.ret_void()

    library = cpu_target.target_context.codegen().create_library("nnvmpy_fork_safe")
    library.add_ir_module(module)
    with global_compiler_lock:
        library.finalize()
        address = library.get_pointer_to_function("nnvmpy_parallel_for")
    return library, int(address)


def _after_fork_child() -> None:
    if _installed:
        _serial_flag.value = 1


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_child)


__all__ = ["install", "installed", "serial_regions"]
