"""What the normalisation, sampling and pooling layers share.

    store(out, j, mode, v)           # a device function: honour NULL / WRITE / ADD
    @row_function                    # a device function whose CPU build may reassociate
    @via_float32                     # FCompute: float16 on the CPU through float32 copies
    host_copy(ctx, a) / to_device(ctx, a)   # small index arrays between host and device
    check_ndim(op, what, shape, at_least)   # InferError naming the op and the input

Importing this module imports neither numba nor numba.cuda.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from ...base import InferError
from ...infer import shape_str
from ...kernel import scratch
from ...kernel.device import DeviceFunction, for_device
from ...kernel.launch import is_gpu, store
from ._geometry import run_via_float32

_HALF = np.dtype(np.float16)
Compute = Callable[[Any, Any, list[Any], list[Any], list[Any]], None]


#: LLVM may reorder float additions in a row function, so its sums vectorise (10x on a
#: row of floats); NaN and inf keep their meaning (no 'nnan'/'ninf')
_ROW_FASTMATH = frozenset({"reassoc", "contract"})


class RowFunction(DeviceFunction):
    """A device function for whole-row loops (sums, dot products, scaled copies).

    Its CPU build is its own `numba.njit(fastmath={'reassoc', 'contract'})` function,
    called once per row rather than inlined: the loops of `kernel.parallel_for` compile
    without fast-math, and without reassociation LLVM keeps a float sum in order, one
    element at a time. On the GPU it is an ordinary device function.
    """

    def _build(self, device: str) -> Any:
        if device == "gpu":
            return super()._build(device)
        from nnvmpy.kernel import cpu

        fn = for_device(self.py_func, "cpu")
        return cpu.cached_njit(nogil=True, fastmath=set(_ROW_FASTMATH))(fn)


def row_function(py_func: Callable[..., Any]) -> RowFunction:
    """Decorator: a RowFunction (see there)."""
    return RowFunction(py_func)


def via_float32(compute: Compute) -> Compute:
    """FCompute wrapper: numba has no float16 arithmetic on the CPU, so there float16
    inputs are read from float32 copies and float16 outputs written back from them (an
    adding request adds to copies of the old values). GPU arrays pass through."""

    @functools.wraps(compute)
    def wrapped(attrs: Any, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
        if is_gpu(ctx) or all(a.dtype != _HALF for a in (*inputs, *outputs)):
            compute(attrs, ctx, inputs, req, outputs)
            return
        run_via_float32(lambda i, r, o: compute(attrs, ctx, i, r, o), inputs, req, outputs)

    return wrapped


def to_device(ctx: Any, a: np.ndarray) -> Any:
    """A small host array where ctx's kernels run (a device copy on the GPU)."""
    if not is_gpu(ctx):
        return a
    return scratch.upload(ctx, a)


def host_copy(ctx: Any, a: Any) -> np.ndarray:
    """A NumPy copy of a (small) array of either device, to validate indices on the host."""
    if isinstance(a, np.ndarray):
        return a
    stream: Any = getattr(getattr(ctx, "run_ctx", None), "stream", None)
    if not stream:
        return a.copy_to_host()
    host = a.copy_to_host(stream=stream)  # queued after the kernels that wrote `a`
    stream.synchronize()
    return host


def check_ndim(op: str, what: str, shape: tuple[Any, ...], at_least: int) -> None:
    """InferError unless the input `what` of `op` has at least `at_least` dimensions."""
    if len(shape) < at_least:
        raise InferError(
            f"{op}: input {what!r} must have at least {at_least} dimensions, got shape "
            f"{shape_str(shape)}"
        )


def cpu_threads() -> int:
    """How many threads numba's CPU loops use (numba is imported: call at launch time)."""
    import numba

    return int(numba.get_num_threads())


__all__ = [
    "RowFunction",
    "check_ndim",
    "cpu_threads",
    "host_copy",
    "row_function",
    "store",
    "to_device",
    "via_float32",
]
