"""The arrays of a control-flow op where it runs: allocation, copies and sums on either device.

A loop keeps every step's values on the op's device. On a GPU context the subgraph
nodes run their FCompute<gpu> on device arrays, and the loop's own bookkeeping (stacking
the step outputs, summing gradients over steps, zero rows) runs as the kernels below;
only the condition of while_loop and cond (one element per test) is read back to the
host, as MXNet's own ops read it. On the CPU the same calls are NumPy's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import kernel
from ...base import NNVMError
from ...kernel import scratch, storage
from ...kernel.launch import ADD, NULL, WRITE, is_gpu, req_code, run_rows, store, uindex
from .._host_staged import to_host

_NAME = "control flow"


@kernel.parallel_for
def _fill(i, out, value):
    out[uindex(i)] = value


@kernel.parallel_for
def _write(i, out, src, mode):
    store(out, i, src[uindex(i)], mode)


@kernel.parallel_for
def _sum(i, out, a, b):
    out[uindex(i)] = a[uindex(i)] + b[uindex(i)]


def shape_of(a: Any) -> tuple[int, ...]:
    """a's shape as a tuple of ints (the CUDA simulator's shapes do not slice)."""
    return tuple(int(s) for s in a.shape)


class Arrays:
    """Allocation and element-wise bookkeeping on the device of `ctx` (an OpContext)."""

    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx
        self.gpu = is_gpu(ctx)

    def empty(self, shape: tuple[int, ...], dtype: Any) -> Any:
        if not self.gpu:
            return scratch.host_empty(shape, dtype)
        from nnvmpy.kernel.cuda import get_cuda

        stream = scratch.stream_of(self.ctx)
        out = get_cuda(_NAME).device_array(tuple(shape), np.dtype(dtype), stream=stream)
        return scratch.poisoned(out, stream) if storage.poisoning else out

    def zeros(self, shape: tuple[int, ...], dtype: Any) -> Any:
        if not self.gpu:
            return np.zeros(shape, dtype)
        out = self.empty(shape, dtype)
        run_rows(self.ctx, _NAME, _fill, out.size, out, 0)
        return out

    def contiguous(self, a: Any) -> Any:
        """a, or a C-contiguous copy of it (kernels index flat memory)."""
        if not self.gpu:
            return np.ascontiguousarray(a)
        if a.is_c_contiguous():
            return a
        raise NNVMError(f"{_NAME}: a device array of shape {shape_of(a)} is not contiguous")

    def assign(self, dst: Any, req: Any, src: Any) -> None:
        """dst = src, dst += src or nothing, by write request (src has dst's shape)."""
        mode = req_code(_NAME, req)
        if mode == NULL or dst.size == 0:
            return
        if not self.gpu:
            if mode == ADD:
                dst += src.astype(dst.dtype, copy=False)
            else:
                dst[...] = src
            return
        run_rows(self.ctx, _NAME, _write, dst.size, dst, src, mode)

    def clear(self, dst: Any, req: Any) -> None:
        """Write zeros into dst as the request says (adding zeros leaves it alone)."""
        if req_code(_NAME, req) != WRITE or dst.size == 0:
            return
        if self.gpu:
            run_rows(self.ctx, _NAME, _fill, dst.size, dst, 0)
        else:
            dst[...] = 0

    def add_into(self, dst: Any, src: Any) -> None:
        """dst += src in place."""
        if not self.gpu:
            dst += src
        elif dst.size:
            run_rows(self.ctx, _NAME, _write, dst.size, dst, src, ADD)

    def plus(self, a: Any, b: Any) -> Any:
        """A new array a + b."""
        if not self.gpu:
            return a + b
        out = self.empty(shape_of(a), a.dtype)
        if out.size:
            run_rows(self.ctx, _NAME, _sum, out.size, out, a, b)
        return out

    def to_host(self, a: Any) -> np.ndarray:
        """A host copy (the loop condition), complete when this returns."""
        return to_host(self.ctx, a) if self.gpu else np.asarray(a)


def assign_input_grads(
    ctx: Any, fwd_in: list[Any], locs: Any, sub_grads: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    """outputs[k] (as req[k] says) gets the sum of the gradients of the subgraph inputs that
    op input k feeds (locs[i]: the op input of subgraph input i); zero where it feeds none."""
    arrays = Arrays(ctx)
    grads = [arrays.zeros(shape_of(a), a.dtype) for a in fwd_in]
    for k, gk in zip(locs, sub_grads):
        arrays.add_into(grads[k], gk)
    for k, out in enumerate(outputs):
        arrays.assign(out, req[k], grads[k])


__all__ = ["Arrays", "assign_input_grads", "shape_of"]
