"""GPU engine workers launch on their own CUDA stream and complete after it ran the work."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.base import gpu
from nnvmpy.engine import RunContext, ThreadedEnginePerDevice, streams

pytestmark = [pytest.mark.timeout(120)]


class RecordingStream:
    """Stands for a CUDA stream: records when the engine waits on it."""

    def __init__(self, log: list[str], name: str) -> None:
        self.log, self.name = log, name

    def synchronize(self) -> None:
        self.log.append(f"sync {self.name}")


@pytest.mark.gpu
def test_each_gpu_worker_has_one_stream_of_its_own() -> None:
    eng = ThreadedEnginePerDevice(cpu_workers=1, gpu_workers=2)
    seen: dict[str, set[int]] = {}
    lock = threading.Lock()
    barrier = threading.Barrier(2, timeout=30)

    def fn(rc: RunContext) -> None:
        assert rc.stream is not None
        with lock:
            seen.setdefault(threading.current_thread().name, set()).add(id(rc.stream))
        barrier.wait()  # two pushes at once: both workers take one

    try:
        for _ in range(3):
            v1, v2 = eng.new_var("a"), eng.new_var("b")
            eng.push_sync(fn, gpu(0), [], [v1], name="f")
            eng.push_sync(fn, gpu(0), [], [v2], name="g")
            eng.wait_for_all()
    finally:
        eng.shutdown()
    assert len(seen) == 2
    assert all(len(ids) == 1 for ids in seen.values())
    assert len(set().union(*seen.values())) == 2  # one stream per worker, not shared


@pytest.mark.gpu
def test_a_gpu_function_completes_after_its_stream_ran_it(monkeypatch: Any) -> None:
    log: list[str] = []
    made: list[RecordingStream] = []

    def new_stream(device_id: int) -> RecordingStream:
        made.append(RecordingStream(log, f"s{len(made)}"))
        return made[-1]

    monkeypatch.setattr(streams, "_new_stream", new_stream)
    eng = ThreadedEnginePerDevice(cpu_workers=1, gpu_workers=1)
    try:
        v = eng.new_var("v")

        def writer(rc: RunContext) -> None:
            log.append(f"write on {rc.stream.name}")

        def reader(rc: RunContext) -> None:
            log.append("read")

        def failing(rc: RunContext) -> None:
            log.append("fail")
            raise ValueError("boom")

        eng.push_sync(writer, gpu(0), [], [v], name="writer")
        eng.push_sync(reader, gpu(0), [v], [], name="reader")
        eng.wait_for_all()
        assert log == ["write on s0", "sync s0", "read", "sync s0"]
        log.clear()
        w = eng.new_var("w")
        eng.push_sync(failing, gpu(0), [], [w], name="failing")
        with pytest.raises(Exception, match="boom"):
            eng.wait_for_var(w)
        assert log == ["fail"]  # nothing to wait for: the function never finished
        log.clear()
        eng.push_sync(writer, gpu(0), [], [v], name="writer")  # the engine still works
        eng.wait_for_all()
        assert log == ["write on s0", "sync s0"]
    finally:
        eng.shutdown()


@pytest.mark.gpu
def test_ops_launch_on_the_worker_stream_and_streams_can_be_turned_off(monkeypatch: Any) -> None:
    from nnvmpy.kernel import cuda as kcuda

    used: list[Any] = []
    real = kcuda.launch_config

    def spy(name: str, ctx: Any, n: int) -> Any:
        config = real(name, ctx, n)
        used.append(config[2])
        return config

    monkeypatch.setattr(kcuda, "launch_config", spy)
    x = np.linspace(-1, 1, 64, dtype=np.float32)
    for setting in ("1", "0"):
        monkeypatch.setenv("NNVMPY_GPU_STREAMS", setting)
        used.clear()
        y = nv.nd.relu(nv.nd.array(x, ctx=nv.gpu(0)) * 2).asnumpy()
        np.testing.assert_allclose(y, np.maximum(2 * x, 0), rtol=1e-6)
        assert used, "no kernel went through launch_config"
        if setting == "1":
            assert all(s is not None and s != 0 for s in used)
        else:
            assert all(s == 0 for s in used)  # the default stream


def test_host_functions_under_a_gpu_context_run_where_cuda_cannot(monkeypatch: Any) -> None:
    def no_cuda(device_id: int) -> Any:
        raise nv.NNVMError("engine: GPU kernels need numba-cuda")

    monkeypatch.setattr(streams, "_new_stream", no_cuda)
    monkeypatch.setattr(streams, "_tls", threading.local())  # forget streams made before
    eng = ThreadedEnginePerDevice(cpu_workers=1, gpu_workers=1)
    got: list[Any] = []
    try:
        v = eng.new_var("v")
        for _ in range(2):
            eng.push_sync(lambda rc: got.append(rc.stream), gpu(0), [], [v], name="host")
        eng.wait_for_var(v)
    finally:
        eng.shutdown()
    assert got == [None, None]  # the default stream, and the worker survived
