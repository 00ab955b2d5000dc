"""One CUDA stream per GPU engine worker thread (MXNet's per-worker streams).

Why. On the device's default stream every kernel of every worker runs one after another
on the GPU, and a function "completes" as soon as its kernels are queued, so the engine
releases variables whose memory a kernel may still be reading. With a stream per worker,
functions of different workers may overlap on the device; to keep the engine's contract
(a variable is free once the function holding it completed), a GPU function completes
when its worker's stream has run it: the worker calls `stream.synchronize()` after the
function returns, as MXNet's GPU workers wait on their stream before `on_complete`. That
waits for this stream only, never for the whole device.

Kernels find the stream in their RunContext (`run_ctx.stream`; kernel.cuda.launch_config
launches on it). Work queued on the default stream (copies, allocations) still orders with
these streams: numba's streams are blocking streams, which the legacy default stream
synchronises with. NNVMPY_GPU_STREAMS=0 turns streams off (the default stream, completion
at launch).
"""

from __future__ import annotations

import threading
from typing import Any

from .. import config
from ..base import Context

_tls = threading.local()


def enabled() -> bool:
    return config.GPU_STREAMS.get() != "0"


def worker_stream(ctx: Context) -> Any | None:
    """This thread's stream on ctx's GPU (made on first use), or None when streams are off."""
    if not enabled():
        return None
    streams: dict[int, Any] | None = getattr(_tls, "streams", None)
    if streams is None:
        streams = _tls.streams = {}
    if ctx.device_id not in streams:
        try:
            streams[ctx.device_id] = _new_stream(ctx.device_id)
        except Exception:  # no usable CUDA here: host functions pushed under a gpu context
            streams[ctx.device_id] = None  # (the engine's own tests) keep the default stream
    return streams[ctx.device_id]


def _new_stream(device_id: int) -> Any:
    from ..kernel.cuda import get_cuda

    cuda = get_cuda("engine")
    if len(cuda.gpus) > 1:
        with cuda.gpus[device_id]:
            return cuda.stream()
    return cuda.stream()


__all__ = ["enabled", "worker_stream"]
