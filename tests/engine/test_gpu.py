"""GPU work pushed to ThreadedEnginePerDevice runs from its GPU pool threads (numba.cuda)."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from numba import cuda

from nnvmpy.base import cpu, gpu
from nnvmpy.engine import FnProperty, RunContext, ThreadedEnginePerDevice

pytestmark = [pytest.mark.gpu, pytest.mark.timeout(120)]


@cuda.jit
def add_one(a):  # type: ignore[no-untyped-def]
    i = cuda.grid(1)  # `cuda` must be a module global for the simulator
    if i < a.size:
        a[i] += 1.0


def test_gpu_kernels_and_copies_run_on_their_pools_in_order() -> None:
    eng = ThreadedEnginePerDevice(cpu_workers=2, gpu_workers=2)
    try:
        n = 1 << 8
        dev = cuda.to_device(np.zeros(n, dtype=np.float32))
        host = np.empty(n, dtype=np.float32)
        d, h = eng.new_var("dev"), eng.new_var("host")
        threads: set[str] = set()

        def kernel(rc: RunContext) -> None:
            threads.add(threading.current_thread().name)
            add_one[(n + 127) // 128, 128](dev)
            cuda.synchronize()

        def copy_back(rc: RunContext) -> None:
            threads.add(threading.current_thread().name)
            dev.copy_to_host(host)

        def check(rc: RunContext) -> None:
            host[:] += 0.5  # a CPU function reading after the copy

        for _ in range(20):
            eng.push_sync(kernel, gpu(0), [], [d], name="add_one")
        eng.push_sync(copy_back, gpu(0), [d], [h], name="d2h", prop=FnProperty.COPY_FROM_GPU)
        eng.push_sync(check, cpu(), [], [h], name="check")
        eng.wait_for_var(h)
        np.testing.assert_array_equal(host, np.full(n, 20.5, dtype=np.float32))
        assert any(t.startswith("nnvmpy-gpu0-") and "copy" not in t for t in threads)
        assert any(t.startswith("nnvmpy-gpu0-copy-") for t in threads)
    finally:
        eng.shutdown()
