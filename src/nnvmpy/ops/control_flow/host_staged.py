"""FCompute<gpu> for the control-flow ops: the loop runs on host copies of the arrays.

A subgraph runs node by node from inside the op's compute (runner.py), allocating its
intermediate arrays as it goes; that machinery is the CPU one. On the GPU the op copies
its inputs to the host, runs the CPU compute there (the subgraph's CPU kernels) and
copies the results back, honouring each write request — the way contrib_bbox's host ops
run on the GPU. Correct on every device, but the loop body does not run on the GPU.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...base import Context, OpReqType
from ...engine.base import RunContext
from ...resource import OpContext


def _stream(ctx: Any) -> Any:
    return getattr(getattr(ctx, "run_ctx", None), "stream", None) or 0


def _to_host(ctx: Any, a: Any) -> np.ndarray:
    stream = _stream(ctx)
    host = a.copy_to_host(stream=stream)
    if stream:
        stream.synchronize()
    return host


def _to_device(ctx: Any, out: Any, host: np.ndarray) -> None:
    stream = _stream(ctx)
    out.copy_to_device(np.ascontiguousarray(host), stream=stream)
    if stream:
        stream.synchronize()  # `host` must outlive the copy


def host_staged(compute: Any) -> Any:
    """An FCompute<gpu> that runs the CPU `compute` on host copies of the arrays."""

    def gpu_compute(
        attrs: Any, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
    ) -> None:
        if all(r == OpReqType.kNullOp for r in req):
            return
        host_in = [_to_host(ctx, a) for a in inputs]
        host_out = [
            _to_host(ctx, o) if r == OpReqType.kAddTo else np.zeros(o.shape, o.dtype)
            for o, r in zip(outputs, req)
        ]
        host_ctx = OpContext(ctx.is_train, RunContext(Context("cpu", 0)), [])
        compute(attrs, host_ctx, host_in, req, host_out)
        for o, r, h in zip(outputs, req, host_out):
            if r != OpReqType.kNullOp:
                _to_device(ctx, o, h)

    return gpu_compute


__all__ = ["host_staged"]
