"""Scratch arrays for one kernel call, and small host tables uploaded for it.

Why. A kernel's scratch (sort keys, partial sums, a table of shapes) lives for one FCompute
call. numba's `cuda.device_array` gets it with a cudaMalloc, and cudaFree when the array
dies, which waits for the whole device: every such call drained the other engine workers'
streams. With the GPU library layer on (kernel/gpu_lib.py: CuPy), scratch comes from
CuPy's caching pool instead, allocated while the op's stream (RunContext.stream) is CuPy's
current one. CuPy's pool is stream-ordered: a block freed when its last view dies is handed
out again only to allocations on the stream it was allocated on, whose later kernels run
after the ones that used it. So the block can go back the moment the call returns, with no
event and no wait. Without the layer (the simulator, NNVMPY_CUPY=0) numba allocates, as
before; on the CPU scratch is NumPy's.

    space = scratch.empty(ctx, (rows, 4), np.int64)   # ctx: the FCompute's OpContext
    table = scratch.upload(ctx, host_table)           # itself on the CPU
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..base import Context
from . import storage


def _device(ctx: Any) -> Context:
    """The Context of an OpContext (or a Context itself); the CPU for anything else, as
    kernel.launch.is_gpu decides."""
    if isinstance(ctx, Context):
        return ctx
    dev = getattr(ctx, "ctx", None)
    return dev if dev is not None else Context("cpu", 0)


def stream_of(ctx: Any) -> Any:
    """The stream an OpContext's kernels launch on (0: the device's default stream)."""
    return getattr(getattr(ctx, "run_ctx", None), "stream", None) or 0


def empty(ctx: Any, shape: int | tuple[int, ...], dtype: Any) -> Any:
    """An uninitialised array of `shape` and `dtype` on the device ctx (an OpContext, or a
    Context: the default stream) runs on, for use within this call only."""
    out = _allocated(ctx, shape, dtype)
    return poisoned(out, stream_of(ctx)) if storage.poisoning else out


def _allocated(ctx: Any, shape: int | tuple[int, ...], dtype: Any) -> Any:
    dev = _device(ctx)
    dt = np.dtype(dtype)
    shape = (int(shape),) if np.ndim(shape) == 0 else tuple(int(d) for d in shape)
    if dev.device_type != "gpu":
        return np.empty(shape, dt)
    from nnvmpy.kernel import gpu_lib
    from nnvmpy.kernel.cuda import get_cuda

    stream = stream_of(ctx)
    nbytes = math.prod(shape) * dt.itemsize
    if nbytes == 0 or not gpu_lib.available():
        return get_cuda("scratch").device_array(shape, dt, stream=stream)
    from nnvmpy.kernel.storage import cupy_block, device_view

    return device_view(cupy_block(dev, nbytes, stream), shape, dt)


def host_empty(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """np.empty for a CPU kernel's scratch, poisoned under NNVMPY_POISON_MEMORY."""
    host = np.empty(shape, dtype)
    return poisoned(host) if storage.poisoning else host


def poisoned(a: Any, stream: Any = 0) -> Any:
    """`a` (a fresh scratch array, host or device) filled with 0xFF bytes, NaN in every float
    dtype and -1 in signed ints: NNVMPY_POISON_MEMORY's check that no kernel reads scratch
    it never wrote (an uninitialised read that usually finds zeros fails at once)."""
    if not hasattr(a, "copy_to_device"):  # a NumPy array
        a.reshape(-1).view(np.uint8).fill(0xFF)
    elif a.size:
        host = np.empty(a.shape, a.dtype)
        host.reshape(-1).view(np.uint8).fill(0xFF)
        a.copy_to_device(host, stream=stream)
    return a


def upload(ctx: Any, host: Any) -> Any:
    """`host` (a small NumPy array: a kernel's table) where ctx's kernels run: itself on the
    CPU, a device copy queued on the op's stream on a GPU (the host array may be dropped
    once this returns: a copy from pageable memory is staged before the call returns)."""
    host = np.ascontiguousarray(host)
    if _device(ctx).device_type != "gpu":
        return host
    dev = _allocated(ctx, host.shape, host.dtype)  # all overwritten: never poisoned
    if host.size:
        dev.copy_to_device(host, stream=stream_of(ctx))
    return dev


__all__ = ["empty", "host_empty", "poisoned", "stream_of", "upload"]
