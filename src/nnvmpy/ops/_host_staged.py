"""Ops that compute on the host: the round trip a GPU FCompute makes to run CPU code.

An op with only a host implementation can still serve a GPU context: its FCompute
copies the inputs to the host (and the outputs a kAddTo request adds to), runs the CPU
code there and copies the results back, honouring each write request. Correct on every
device, but the work runs on the CPU. Today only fft / ifft without the CuPy layer take
that path on a GPU; the detection ops use host_compute for their CPU FCompute (NumPy
and sequential numba walks, faster there than their device kernels), and the kernels
read single values back with to_host (loop conditions, counts for error messages).

- host_staged(op_name, compute): an FCompute<gpu> (or FStatefulCompute<gpu>) from a CPU one.
- host_compute(op_name, fn): the FCompute of both devices from a NumPy function
  fn(params, *inputs) -> one array per output.

Both mark what they return `stages_through_host` (the README's list of such ops is
checked against the registry by that mark).

This lives in the op layer, not the kernel layer: it works on whole FCompute calls
(OpContext, write requests, NodeAttrs.parsed), which the kernel layer does not know.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..base import Context
from ..engine.base import RunContext
from ..kernel.launch import ADD, NULL, is_gpu, req_code
from ..registry import NodeAttrs
from ..resource import OpContext
from ._index_kernels import assign

HostFn = Callable[..., Sequence[np.ndarray]]
Compute = Callable[[Any, Any, list[Any], list[Any], list[Any]], None]


def to_host(ctx: Any, a: Any) -> np.ndarray:
    """A host copy of device array `a`, complete when this returns."""
    stream = _stream(ctx)
    host = a.copy_to_host(stream=stream)
    if stream:
        stream.synchronize()
    return host


def to_device(ctx: Any, out: Any, host: np.ndarray) -> None:
    """Copy `host` into device array `out`, complete when this returns."""
    stream = _stream(ctx)
    out.copy_to_device(np.ascontiguousarray(host), stream=stream)
    if stream:
        stream.synchronize()  # `host` must outlive the copy


def _stream(ctx: Any) -> Any:
    return getattr(getattr(ctx, "run_ctx", None), "stream", None) or 0


def host_staged(op_name: str, compute: Compute) -> Compute:
    """An FCompute<gpu> that runs the CPU `compute` on host copies of the arrays.

    `compute`'s first argument (NodeAttrs, or the op state of a stateful op) is passed
    through; it gets a CPU OpContext with no resources.
    """

    def gpu_compute(
        first: Any, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
    ) -> None:
        modes = [req_code(op_name, r) for r in req]
        if all(m == NULL for m in modes):
            return
        host_in = [to_host(ctx, a) for a in inputs]
        host_out = [
            to_host(ctx, o) if m == ADD else np.zeros(o.shape, o.dtype)
            for o, m in zip(outputs, modes)
        ]
        host_ctx = OpContext(ctx.is_train, RunContext(Context("cpu", 0)), [])
        compute(first, host_ctx, host_in, req, host_out)
        for o, m, h in zip(outputs, modes, host_out):
            if m != NULL:
                to_device(ctx, o, h)

    gpu_compute.stages_through_host = True  # type: ignore[attr-defined]
    return gpu_compute


def host_compute(op_name: str, fn: HostFn) -> Compute:
    """FCompute for both devices from fn(params, *host_inputs) -> one NumPy array per output.

    The results are written as each request says (kNullOp skipped, kAddTo added); on the
    GPU through host_staged.
    """

    def cpu_compute(
        attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
    ) -> None:
        modes = [req_code(op_name, r) for r in req]
        if all(m == NULL for m in modes):
            return
        results = fn(attrs.parsed, *inputs)
        for out, mode, res in zip(outputs, modes, results):
            assign(out, mode, res.reshape(out.shape))

    gpu_compute = host_staged(op_name, cpu_compute)

    def compute(
        attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
    ) -> None:
        run = gpu_compute if is_gpu(ctx) else cpu_compute
        run(attrs, ctx, inputs, req, outputs)

    compute.stages_through_host = True  # type: ignore[attr-defined]
    return compute


__all__ = ["host_compute", "host_staged", "to_device", "to_host"]
