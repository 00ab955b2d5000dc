"""Helpers every hand-written kernel uses: write modes, devices, row launches, axes.

    mode = req_code(name, req[0])             # NULL, WRITE or ADD, passed into the kernel
    run_rows(ctx, name, loop, rows, out, x, rows, n, inner, mode)   # a ParallelFor per row

Kernels take the write mode as an int (NULL skips the output, ADD accumulates) and index
flat memory: `run_rows` / `launch_rows` pass arrays flattened. `cpu_parallel` /
`gpu_kernel` are the older two-body style (a prange CPU kernel and a grid-stride CUDA
kernel written separately), kept for kernels whose GPU structure differs (shared-memory
reductions). Importing this module imports neither numba nor numba.cuda.
"""

from __future__ import annotations

import math
import types
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..base import InferError, NNVMError
from .device import SERIAL_CUTOFF, ParallelFor, device_function
from .elementwise import req_mode
from .handwritten import CPUKernel, CUDAKernel
from .storage import device_reshape

#: write modes passed into hand-written kernels (0: kNullOp, skip the output)
NULL, WRITE, ADD = 0, 1, 2


def req_code(name: str, req: Any) -> int:
    """NULL, WRITE or ADD for an OpReqType (kWriteInplace writes)."""
    mode = req_mode(name, req)
    return NULL if mode is None else (ADD if mode == "add" else WRITE)


def is_gpu(ctx: Any) -> bool:
    """ctx (an OpContext) runs on a GPU."""
    dev = getattr(ctx, "ctx", None)
    return dev is not None and dev.device_type == "gpu"


def flat(a: Any) -> Any:
    """The 1-d view of a C-contiguous NumPy or device array (kernels index flat memory)."""
    if len(a.shape) == 1:
        return a
    return a.reshape(a.size) if isinstance(a, np.ndarray) else device_reshape(a, (a.size,))


def check_cpu_dtypes(name: str, arrays: Sequence[Any]) -> None:
    """numba has no float16 arithmetic on the CPU: say so instead of a typing error."""
    if any(getattr(a, "dtype", None) == np.float16 for a in arrays):
        raise NNVMError(
            f"{name}: float16 arrays are not supported on cpu (numba cannot compute in "
            "float16); use float32 or float64, or a gpu context"
        )


def split_axis(shape: Sequence[int], axis: int) -> tuple[int, int, int]:
    """(outer, n, inner): the sizes before, at and after `axis` (already normalised)."""
    shape = tuple(shape)  # the CUDA simulator's shapes do not slice
    outer = math.prod(shape[:axis])
    return outer, shape[axis], math.prod(shape[axis + 1 :])


def normalize_axis(op_name: str, axis: int, shape: Sequence[Any]) -> int:
    """axis in [0, ndim); InferError naming the op when it is out of range."""
    ndim = len(shape)
    if not -ndim <= axis < ndim:
        from nnvmpy.infer import shape_str

        raise InferError(
            f"{op_name}: axis {axis} is out of range for input 'data' of shape "
            f"{shape_str(tuple(shape))}; expected -{ndim} <= axis < {ndim}"
        )
    return axis % ndim


@device_function
def uindex(i: int) -> Any:
    """i as an unsigned index: numba then skips the negative-wraparound check.

    Every signed index costs a compare and a branch, and inner loops with them neither
    vectorise nor keep up with memory (LeNet's im2col ran 4x slower, max pooling 3x).
    Wrap the whole, never-negative offset: `x[uindex(base + k)]` (uint64 + int64 is a
    float in numba).
    """
    return np.uint64(i)


@device_function
def divmod_index(a: int, b: int) -> Any:
    """(a // b, a % b) as int64, in unsigned 32-bit arithmetic when a and b are both in
    [0, 2**32) (b > 0), which index arithmetic almost always is.

    numba divides int64 with Python's floor semantics: a signed 64-bit division and a
    separate remainder, each with sign fix-ups, and on a GPU a 64-bit division is a
    subroutine of ~70 instructions. A kernel unravelling a flat index into 4-6
    coordinates (im2col, col2im, the direct convolutions) spends far more on that than
    on the memory it moves. Here one 32-bit unsigned division gives both; values outside
    the range take numba's own // and % (correct for any sign). b == 1 (the depth of a
    2-D convolution, a stride of 1) divides nothing."""
    if b == 1:
        return np.int64(a), np.int64(0)
    if (a | b) >> 32 == 0:
        ua = np.uint32(a)
        ub = np.uint32(b)
        q = ua // ub
        return np.int64(q), np.int64(ua - q * ub)
    return np.int64(a // b), np.int64(a % b)


@device_function
def store(out: Any, i: int, v: Any, mode: int) -> None:
    """out[i] = v (WRITE) or out[i] += v (ADD), as a kernel's write mode says; NULL (kNullOp)
    leaves out alone. The one copy every hand-written body calls; i is a flat index,
    never negative (unsigned: no wraparound check, so element loops vectorise)."""
    if mode == ADD:
        out[uindex(i)] += v
    elif mode != NULL:
        out[uindex(i)] = v


@device_function
def log_ieee(x: float) -> float:
    """math.log with the IEEE results where Python's raises: log(0) = -inf, log(x < 0) =
    NaN (kernels run as Python on the CUDA simulator; compiled, math.log gives these)."""
    if x > 0:
        return math.log(x)
    return -math.inf if x == 0 else math.nan


def run_rows(ctx: Any, name: str, loop: ParallelFor, rows: int, *args: Any) -> None:
    """Run op `name`'s one-body row loop over `rows` items; arrays are passed flattened.

    The CPU's serial cutoff counts the first array's elements, not the rows. Errors are
    raised as NNVMError naming the op.
    """
    if rows == 0:
        return
    flat_args = list(args)
    for k, a in enumerate(args):
        kind = type(a)
        if kind is np.ndarray:
            if a.ndim != 1:
                flat_args[k] = a.reshape(-1)
        elif kind is not int and kind is not float and kind is not bool and hasattr(a, "shape"):
            flat_args[k] = flat(a)  # a device array
    try:
        loop.launch(ctx, rows, *flat_args, work=flat_args[0].size)
    except NNVMError as e:
        raise type(e)(f"{name}: {e}") from None


# ---------------------------------------------------------------- two-body kernels
prange = range  # numba.prange once a cpu_parallel kernel of this process has been built
uidx: Any = None  # uindex's CPU build (an index without wraparound check), bound likewise
cuda: Any = None  # numba.cuda once a gpu_kernel has been built


class _ParallelKernel(CPUKernel):
    """CPUKernel that binds the function's `prange` and `uidx` globals first.

    `run(work, ...)` calls it, or for less than SERIAL_CUTOFF elements of work a serial
    build of the same code (prange runs as range without parallel=True). That build is
    a renamed copy of the function, so numba's disk cache keeps the two apart.
    """

    def __init__(self, fn: Any, parallel: bool = True) -> None:
        super().__init__(fn, parallel)
        self.serial: _ParallelKernel | None = None
        if parallel:
            copy = types.FunctionType(
                fn.__code__, fn.__globals__, f"{fn.__name__}_serial", fn.__defaults__
            )
            copy.__qualname__ = f"{fn.__qualname__}_serial"
            self.serial = _ParallelKernel(copy, parallel=False)

    def _build(self) -> Any:
        import numba

        self.py_func.__globals__["prange"] = numba.prange
        self.py_func.__globals__["uidx"] = uindex.compiled("cpu")
        return super()._build()

    def run(self, work: int, *args: Any) -> Any:
        small = work < SERIAL_CUTOFF and self.serial is not None
        return (self.serial if small else self)(*args)  # type: ignore[misc]


class _CudaKernel(CUDAKernel):
    """CUDAKernel that binds the function's `cuda` global to numba.cuda first.

    The simulator swaps that global for its fake module while a kernel runs, so it must
    be the module itself (not a closure cell).
    """

    def _build(self) -> Any:
        from nnvmpy.kernel.cuda import get_cuda

        self.py_func.__globals__["cuda"] = get_cuda(self.__name__)
        return super()._build()


def cpu_parallel(fn: Any) -> CPUKernel:
    """A lazily compiled numba CPU kernel whose `for i in prange(n)` loops run in parallel.

    Its module must define the globals `prange = range` and `uidx = None` (placeholders
    bound on the first build). Call it as `k.run(work, *args)` to run small inputs
    serially.
    """
    return _ParallelKernel(fn)


def gpu_kernel(fn: Any) -> CUDAKernel:
    """A lazily compiled numba.cuda kernel that may use the global name `cuda`."""
    return _CudaKernel(fn)


def launch_rows(ctx: Any, name: str, cpu_k: Any, gpu_k: Any, rows: int, *args: Any) -> None:
    """Run op `name`'s two-body row kernel over `rows` items; arrays are passed flattened."""
    if rows == 0:
        return
    args = tuple(flat(a) if hasattr(a, "shape") else a for a in args)
    if is_gpu(ctx):
        gpu_k.launch(ctx, rows, *args)
    else:
        check_cpu_dtypes(name, args)
        cpu_k.run(args[0].size, *args)


__all__ = [
    "ADD",
    "NULL",
    "SERIAL_CUTOFF",
    "WRITE",
    "check_cpu_dtypes",
    "cpu_parallel",
    "divmod_index",
    "flat",
    "gpu_kernel",
    "is_gpu",
    "launch_rows",
    "normalize_axis",
    "req_code",
    "run_rows",
    "split_axis",
    "store",
    "uindex",
]
