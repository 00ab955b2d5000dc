"""ThreadedEnginePerDevice: the default engine, one worker pool per device.

CPU work (every cpu id; the id is informational) runs on one pool of
NNVMPY_CPU_WORKER_NTHREADS threads. Each GPU id gets its own pool of
NNVMPY_GPU_WORKER_NTHREADS threads, plus a copy pool of NNVMPY_GPU_COPY_NTHREADS threads
for COPY_TO_GPU / COPY_FROM_GPU functions so transfers do not queue behind kernels
(MXNet's copy workers, kCopyToGPU / kCopyFromGPU). A copy worker is a GPU worker like the
others: it has its own CUDA stream (streams.worker_stream is per thread) and its functions
complete through events, on a completion lane of their own (streams.py), so a copy and a
kernel of one device overlap on it while the variables still order them. Pools start on
their first push, so a process that never touches a GPU never starts GPU threads.
Dependencies cross pools freely: the variable queues are shared by the whole engine.
"""

from __future__ import annotations

import os

from .. import config
from ..base import Context
from .base import FnProperty
from .threaded import _COPY_PROPS, ThreadedEngine, _Pool


class ThreadedEnginePerDevice(ThreadedEngine):
    """A pool per device and a copy pool per GPU; thread counts default to the
    NNVMPY_CPU_WORKER_NTHREADS, NNVMPY_GPU_WORKER_NTHREADS and NNVMPY_GPU_COPY_NTHREADS
    knobs."""

    def __init__(
        self,
        cpu_workers: int | None = None,
        gpu_workers: int | None = None,
        gpu_copy_workers: int | None = None,
    ) -> None:
        self._init_state()
        ncpu = config.CPU_WORKER_NTHREADS.get_int() if cpu_workers is None else cpu_workers
        if gpu_workers is None:
            gpu_workers = config.GPU_WORKER_NTHREADS.get_int()
            if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
                gpu_workers = 1  # the simulator keeps launch state in globals: one at a time
        if gpu_copy_workers is None:
            gpu_copy_workers = config.GPU_COPY_NTHREADS.get_int()
        self._ngpu = gpu_workers
        self._ncopy = gpu_copy_workers
        self._pool = _Pool(self, "cpu", ncpu)
        self._gpu_pools: dict[int, _Pool] = {}
        self._copy_pools: dict[int, _Pool] = {}

    def _pool_for(self, ctx: Context, prop: FnProperty) -> _Pool:
        if ctx.device_type != "gpu":
            return self._pool
        pools = self._copy_pools if prop in _COPY_PROPS else self._gpu_pools
        pool = pools.get(ctx.device_id)
        if pool is None:
            pool = self._new_gpu_pool(ctx.device_id, copy=pools is self._copy_pools)
        return pool

    def _new_gpu_pool(self, device_id: int, copy: bool) -> _Pool:
        pools = self._copy_pools if copy else self._gpu_pools
        with self._lock:
            pool = pools.get(device_id)
            if pool is None:
                name = f"gpu{device_id}-copy" if copy else f"gpu{device_id}"
                pool = _Pool(self, name, self._ncopy if copy else self._ngpu)
                pools[device_id] = pool
        return pool

    def _pools(self) -> list[_Pool]:
        return [self._pool, *self._gpu_pools.values(), *self._copy_pools.values()]
