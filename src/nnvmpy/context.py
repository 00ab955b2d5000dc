"""MXNet's `mx.context` module: devices and the current-device scope.

The classes live in base.py (every layer needs them without importing this module); this
module gives them MXNet's import path, so `mx.context.Context`, `mx.context.cpu()` and
`mx.context.current_context()` read as they do in MXNet.
"""

from __future__ import annotations

import math

from .base import Context, NNVMError, cpu, cpu_pinned, current_context, gpu, num_gpus


def gpu_memory_info(device_id: int = 0) -> tuple[float, float]:
    """(free, total) bytes of a GPU, as numba.cuda reports them (the simulator says inf)."""
    from nnvmpy.kernel.cuda import get_cuda

    cuda = get_cuda("context.gpu_memory_info")
    if not 0 <= device_id < len(cuda.gpus):
        raise NNVMError(
            f"context.gpu_memory_info: device_id {device_id} is out of range; "
            f"{len(cuda.gpus)} GPU(s) visible"
        )
    with cuda.gpus[device_id]:
        free, total = cuda.current_context().get_memory_info()
    return _as_int(free), _as_int(total)


def _as_int(value: float) -> float:
    return int(value) if math.isfinite(value) else value


__all__ = [
    "Context",
    "cpu",
    "cpu_pinned",
    "current_context",
    "gpu",
    "gpu_memory_info",
    "num_gpus",
]
