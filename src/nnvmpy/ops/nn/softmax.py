"""softmax and log_softmax along one axis, with their backward ops.

    softmax(x)_k     = exp(x_k / T - m) / sum_j exp(x_j / T - m),    m = max_j x_j / T
    log_softmax(x)_k = x_k / T - m - log(sum_j exp(x_j / T - m))

Subtracting the row maximum m keeps exp from overflowing. The array is viewed as
(outer, n, inner) around the axis; each of the outer*inner rows (elements `inner` apart)
is one work item: a numba prange iteration on the CPU, one thread on the GPU (threads
next to each other read neighbouring rows, so a non-last axis reads coalesced).
SoftmaxOutput (loss.py) reuses these row kernels.

This module also holds the helpers every hand-written nn kernel uses (`cpu_parallel`,
`gpu_kernel`, `launch_rows`, `req_code`), so importing an op module imports neither numba
nor numba.cuda: a kernel's `prange` / `cuda` globals are bound when it first compiles.
"""

from __future__ import annotations

import math
import types
from collections.abc import Sequence
from typing import Any, Self

import numpy as np

from ... import kernel
from ...attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FInplaceOption,
    FListInputNames,
    TIsBackward,
)
from ...base import InferError, NNVMError, ParamError
from ...graph.grad import ElemwiseGradUseOut
from ...infer import elemwise_shape, elemwise_type, shape_str
from ...kernel.elementwise import req_mode
from ...param import Parameter, field
from ...registry import NodeAttrs, register_op, skip_in_source_locations

skip_in_source_locations(__file__)

# --- helpers shared by the nn kernels ---------------------------------------------------------

prange = range  # numba.prange once a cpu_parallel kernel of this process has been built
uidx: Any = None  # _uindex.u (an index without wraparound check), bound likewise
cuda: Any = None  # numba.cuda once a gpu_kernel has been built

#: write modes passed into hand-written kernels (0: kNullOp, skip the output)
NULL, WRITE, ADD = 0, 1, 2


#: below this many elements a kernel runs on the calling thread: waking the thread pool
#: costs more than the work (the element-wise kernels' cutoff, kernel/cpu.py)
SERIAL_CUTOFF = 1 << 15


class _ParallelKernel(kernel.CPUKernel):
    """kernel.CPUKernel that binds the function's `prange` global to numba.prange first.

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

        from ._uindex import u

        self.py_func.__globals__["prange"] = numba.prange
        self.py_func.__globals__["uidx"] = u
        return super()._build()

    def run(self, work: int, *args: Any) -> Any:
        small = work < SERIAL_CUTOFF and self.serial is not None
        return (self.serial if small else self)(*args)  # type: ignore[misc]


class _CudaKernel(kernel.CUDAKernel):
    """kernel.CUDAKernel that binds the function's `cuda` global to numba.cuda first.

    The simulator swaps that global for its fake module while a kernel runs, so it must
    be the module itself (not a closure cell).
    """

    def _build(self) -> Any:
        from ...kernel.cuda import get_cuda

        self.py_func.__globals__["cuda"] = get_cuda(self.__name__)
        return super()._build()


def cpu_parallel(fn: Any) -> _ParallelKernel:
    """A lazily compiled numba CPU kernel whose `for i in prange(n)` loops run in parallel.

    Call it as `k.run(work, *args)` to run small inputs serially.
    """
    return _ParallelKernel(fn)


def gpu_kernel(fn: Any) -> kernel.CUDAKernel:
    """A lazily compiled numba.cuda kernel that may use the global name `cuda`."""
    return _CudaKernel(fn)


def req_code(name: str, req: Any) -> int:
    """NULL, WRITE or ADD for an OpReqType (kWriteInplace writes)."""
    mode = req_mode(name, req)
    return NULL if mode is None else (ADD if mode == "add" else WRITE)


def is_gpu(ctx: Any) -> bool:
    dev = getattr(ctx, "ctx", None)
    return dev is not None and dev.device_type == "gpu"


def flat(a: Any) -> Any:
    """The 1-d view of a C-contiguous NumPy or device array (kernels index flat memory)."""
    return a if len(a.shape) == 1 else a.reshape(a.size)


def launch_rows(ctx: Any, name: str, cpu_k: Any, gpu_k: Any, rows: int, *args: Any) -> None:
    """Run op `name`'s row kernel over `rows` work items; arrays are passed flattened."""
    if rows == 0:
        return
    args = tuple(flat(a) if hasattr(a, "shape") else a for a in args)
    if is_gpu(ctx):
        gpu_k.launch(ctx, rows, *args)
    else:
        check_cpu_dtypes(name, args)
        cpu_k.run(args[0].size, *args)


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
        raise InferError(
            f"{op_name}: axis {axis} is out of range for input 'data' of shape "
            f"{shape_str(tuple(shape))}; expected -{ndim} <= axis < {ndim}"
        )
    return axis % ndim


# --- kernels -------------------------------------------------------------------------------


@cpu_parallel
def _softmax_cpu(out, x, rows, n, inner, inv_t, log, mode):
    for r in prange(rows):
        o = r // inner
        base = o * n * inner + (r - o * inner)
        m = x[base] * inv_t
        for k in range(1, n):
            v = x[base + k * inner] * inv_t
            if v > m:
                m = v
        s = 0.0
        if mode == 1 and not log:  # one exp per element: keep e in out, then scale
            for k in range(n):
                e = math.exp(x[base + k * inner] * inv_t - m)
                out[base + k * inner] = e
                s += e
            inv_s = 1.0 / s
            for k in range(n):
                out[base + k * inner] *= inv_s
        else:
            for k in range(n):
                s += math.exp(x[base + k * inner] * inv_t - m)
            log_s = math.log(s)
            for k in range(n):
                j = base + k * inner
                v = (x[j] * inv_t - m) - log_s  # not x - (m + log_s): m may be large
                if not log:
                    v = math.exp(v)
                if mode == 2:
                    out[j] += v
                else:
                    out[j] = v


@gpu_kernel
def _softmax_cuda(out, x, rows, n, inner, inv_t, log, mode):
    for r in range(cuda.grid(1), rows, cuda.gridsize(1)):
        o = r // inner
        base = o * n * inner + (r - o * inner)
        m = x[base] * inv_t
        for k in range(1, n):
            v = x[base + k * inner] * inv_t
            if v > m:
                m = v
        s = 0.0
        for k in range(n):
            s += math.exp(x[base + k * inner] * inv_t - m)
        log_s = math.log(s)
        for k in range(n):
            j = base + k * inner
            v = (x[j] * inv_t - m) - log_s
            if not log:
                v = math.exp(v)
            if mode == 2:
                out[j] += v
            else:
                out[j] = v


# softmax:     dx_k = y_k (dy_k - sum_j dy_j y_j) / T
# log_softmax: dx_k = (dy_k - exp(y_k) sum_j dy_j) / T
@cpu_parallel
def _softmax_grad_cpu(dx, dy, y, rows, n, inner, inv_t, log, mode):
    for r in prange(rows):
        o = r // inner
        base = o * n * inner + (r - o * inner)
        s = 0.0
        for k in range(n):
            j = base + k * inner
            s += dy[j] if log else dy[j] * y[j]
        for k in range(n):
            j = base + k * inner
            v = inv_t * (dy[j] - math.exp(y[j]) * s) if log else inv_t * y[j] * (dy[j] - s)
            if mode == 2:
                dx[j] += v
            else:
                dx[j] = v


@gpu_kernel
def _softmax_grad_cuda(dx, dy, y, rows, n, inner, inv_t, log, mode):
    for r in range(cuda.grid(1), rows, cuda.gridsize(1)):
        o = r // inner
        base = o * n * inner + (r - o * inner)
        s = 0.0
        for k in range(n):
            j = base + k * inner
            s += dy[j] if log else dy[j] * y[j]
        for k in range(n):
            j = base + k * inner
            v = inv_t * (dy[j] - math.exp(y[j]) * s) if log else inv_t * y[j] * (dy[j] - s)
            if mode == 2:
                dx[j] += v
            else:
                dx[j] = v


def softmax_rows(
    ctx: Any,
    name: str,
    out: Any,
    x: Any,
    sizes: tuple[int, int, int],
    inv_t: float,
    log: bool,
    mode: int,
) -> None:
    """out = (log_)softmax(x * inv_t) over axis 1 of x viewed as sizes = (outer, n, inner)."""
    outer, n, inner = sizes
    if mode == NULL or n == 0:
        return
    rows = outer * inner
    launch_rows(
        ctx, name, _softmax_cpu, _softmax_cuda, rows, out, x, rows, n, inner, inv_t, log, mode
    )


# --- ops -----------------------------------------------------------------------------------


class SoftmaxParam(Parameter):
    axis = field(int, default=-1, describe="The axis along which to compute softmax.")
    temperature = field(
        float, default=None, describe="Temperature parameter in softmax (None means 1.0)."
    )

    @classmethod
    def parse(cls, kwargs: Any, op_name: str | None = None, *, allow_unknown: bool = False) -> Self:
        param = super().parse(kwargs, op_name, allow_unknown=allow_unknown)
        if param.temperature == 0:
            raise ParamError(
                f"{op_name or cls.__name__}: parameter 'temperature' expects a non-zero "
                f"float or None, got {kwargs.get('temperature')!r}"
            )
        return param

    @property
    def inv_t(self) -> float:
        return 1.0 if self.temperature is None else 1.0 / self.temperature


_same_shape = elemwise_shape(1, 1)


def _infer_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    known = _same_shape(attrs, in_shapes, out_shapes)
    if out_shapes[0] is not None:
        normalize_axis(attrs.op.name if attrs.op else "softmax", attrs.parsed.axis, out_shapes[0])
    return bool(known)


def _forward(log: bool) -> Any:
    def compute(
        attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
    ) -> None:
        p, x = attrs.parsed, inputs[0]
        name = "log_softmax" if log else "softmax"
        sizes = split_axis(x.shape, normalize_axis(name, p.axis, x.shape))
        softmax_rows(ctx, name, outputs[0], x, sizes, p.inv_t, log, req_code(name, req[0]))

    return compute


def _backward(log: bool) -> Any:
    def compute(
        attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
    ) -> None:
        p, (dy, y), dx = attrs.parsed, inputs, outputs[0]
        name = "_backward_log_softmax" if log else "_backward_softmax"
        mode = req_code(name, req[0])
        if mode == NULL:
            return
        outer, n, inner = split_axis(y.shape, normalize_axis(name, p.axis, y.shape))
        rows = outer * inner if n else 0
        kernels = (_softmax_grad_cpu, _softmax_grad_cuda)
        args = (dx, dy, y, rows, n, inner, p.inv_t, log, mode)
        launch_rows(ctx, name, *kernels, rows, *args)

    return compute


def _same_slot(attrs: NodeAttrs) -> list[tuple[int, int]]:
    return [(0, 0)]


_DESCRIBE = {
    "softmax": "Applies the softmax function along an axis: exp(x/T) / sum(exp(x/T)).\n\n"
    "The result sums to 1 along `axis`; computed stably by subtracting the maximum.",
    "log_softmax": "Computes the log of softmax along an axis: x/T - log(sum(exp(x/T))).\n\n"
    "More accurate than log(softmax(x)) for very small probabilities.",
}

for _name, _log in (("softmax", False), ("log_softmax", True)):
    (
        register_op(_name)
        .describe(_DESCRIBE[_name])
        .set_attr_parser(SoftmaxParam)
        .set_num_inputs(1)
        .set_num_outputs(1)
        .set_attr(FListInputNames, lambda attrs: ["data"])
        .set_attr(FInferShape, _infer_shape)
        .set_attr(FInferType, elemwise_type(1, 1))
        .set_attr(FInplaceOption, _same_slot)
        .set_attr(FCompute_cpu, _forward(_log))
        .set_attr(FCompute_gpu, _forward(_log))
        .set_attr(FGradient, ElemwiseGradUseOut(f"_backward_{_name}"))
        .add_argument("data", "NDArray-or-Symbol", "The input array.")
        .add_arguments(SoftmaxParam.fields())
    )
    (
        register_op(f"_backward_{_name}")
        .describe(f"Backward of {_name}: inputs (dy, y).")
        .set_attr_parser(SoftmaxParam)
        .set_num_inputs(2)
        .set_num_outputs(1)
        .set_attr(TIsBackward, True)
        .set_attr(FInferShape, elemwise_shape(2, 1))
        .set_attr(FInferType, elemwise_type(2, 1))
        .set_attr(FInplaceOption, _same_slot)
        .set_attr(FCompute_cpu, _backward(_log))
        .set_attr(FCompute_gpu, _backward(_log))
    )

__all__ = [
    "ADD",
    "NULL",
    "WRITE",
    "SoftmaxParam",
    "check_cpu_dtypes",
    "cpu_parallel",
    "flat",
    "gpu_kernel",
    "is_gpu",
    "launch_rows",
    "normalize_axis",
    "req_code",
    "softmax_rows",
    "split_axis",
]
