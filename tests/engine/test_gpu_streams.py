"""GPU engine workers launch on their own CUDA stream and complete after it ran the work."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.base import cpu, gpu
from nnvmpy.engine import RunContext, ThreadedEnginePerDevice, streams

pytestmark = [pytest.mark.timeout(120)]


class RecordingStream:
    """Stands for a CUDA stream: records when the engine waits on it."""

    def __init__(self, log: list[str], name: str) -> None:
        self.log, self.name = log, name

    def synchronize(self) -> None:
        self.log.append(f"sync {self.name}")


class GateEvent:
    """Stands for a CUDA event: logs record and wait; the wait blocks while `gate` is
    closed and raises `error` when set (a kernel that failed on the device)."""

    def __init__(self, log: list[str], gate: threading.Event, error: Exception | None) -> None:
        self.log, self.gate, self.error = log, gate, error
        self.stream: Any = None

    def record(self, stream: Any) -> None:
        self.stream = stream
        self.log.append(f"record {stream.name}")

    def synchronize(self) -> None:
        assert self.gate.wait(30), "the test never opened the gate"
        self.log.append(f"event {self.stream.name}")
        if self.error is not None:
            raise self.error


@pytest.fixture
def fake_cuda(monkeypatch: Any) -> SimpleNamespace:
    """Recording streams and gate events instead of CUDA (no GPU needed): `log` of what
    ran, `gate` (open by default) holding every event wait, `error` for the next events."""
    ns = SimpleNamespace(log=[], gate=threading.Event(), error=None, streams=[], events=[])
    ns.gate.set()

    def new_stream(device_id: int) -> RecordingStream:
        ns.streams.append(RecordingStream(ns.log, f"s{len(ns.streams)}"))
        return ns.streams[-1]

    def new_event(device_id: int) -> GateEvent:
        ns.events.append(GateEvent(ns.log, ns.gate, ns.error))
        return ns.events[-1]

    monkeypatch.setattr(streams, "_new_stream", new_stream)
    monkeypatch.setattr(streams, "_new_event", new_event)
    monkeypatch.setattr(streams, "_completers", {})  # no event reused from other tests
    return ns


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


def test_a_gpu_function_completes_after_its_event_passed(fake_cuda: SimpleNamespace) -> None:
    log = fake_cuda.log
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
        # an event recorded on the worker's stream after each function; the reader runs
        # once the writer's event passed; no stream-wide synchronize
        assert log == ["write on s0", "record s0", "event s0", "read", "record s0", "event s0"]
        log.clear()
        w = eng.new_var("w")
        eng.push_sync(failing, gpu(0), [], [w], name="failing")
        with pytest.raises(Exception, match="boom"):
            eng.wait_for_var(w)
        assert log == ["fail"]  # nothing to wait for: the function never finished
        log.clear()
        eng.push_sync(writer, gpu(0), [], [v], name="writer")  # the engine still works
        eng.wait_for_all()
        assert log == ["write on s0", "record s0", "event s0"]
    finally:
        eng.shutdown()


def test_the_worker_launches_its_next_function_while_the_last_one_runs(
    fake_cuda: SimpleNamespace,
) -> None:
    log, gate = fake_cuda.log, fake_cuda.gate
    gate.clear()  # the device has not finished anything yet
    eng = ThreadedEnginePerDevice(cpu_workers=1, gpu_workers=1)
    second_ran = threading.Event()
    try:
        a, b, out = eng.new_var("a"), eng.new_var("b"), eng.new_var("out")
        eng.push_sync(lambda rc: log.append("write a"), gpu(0), [], [a], name="wa")
        eng.push_sync(lambda rc: second_ran.set(), gpu(0), [], [b], name="wb")
        eng.push_sync(lambda rc: log.append("read a"), cpu(), [a], [out], name="ra")
        # one GPU worker: it launched the second function while the first one's event
        # was still pending on the device
        assert second_ran.wait(30)
        deadline = time.monotonic() + 30
        while log.count("record s0") < 2 and time.monotonic() < deadline:
            time.sleep(0.001)  # the worker records the second event after fn returned
        assert log == ["write a", "record s0", "record s0"]  # both launched, none waited
        assert "read a" not in log  # a is not released before its event passed
        gate.set()
        eng.wait_for_all()
    finally:
        gate.set()
        eng.shutdown()
    assert log.index("event s0") < log.index("read a")


class QueryEvent(GateEvent):
    """A gate event that can be polled, as CUDA events can (the simulator's cannot)."""

    def query(self) -> bool:
        return self.gate.is_set()


def test_a_worker_with_nothing_else_to_run_completes_a_passed_event_itself(
    fake_cuda: SimpleNamespace, monkeypatch: Any
) -> None:
    log = fake_cuda.log

    def new_event(device_id: int) -> QueryEvent:
        fake_cuda.events.append(QueryEvent(log, fake_cuda.gate, None))
        return fake_cuda.events[-1]

    monkeypatch.setattr(streams, "_new_event", new_event)
    eng = ThreadedEnginePerDevice(cpu_workers=1, gpu_workers=1)
    try:
        v = eng.new_var("v")
        for _ in range(20):  # a dependent chain: each one waits for the one before
            eng.push_sync(lambda rc: log.append("f"), gpu(0), [], [v], name="f")
        eng.wait_for_all()
        # every event had passed when polled: no completion thread, no event wait, and
        # one event recorded again and again
        assert streams.completer(0)._thread is None
        assert log == ["f", "record s0"] * 20
        assert len(fake_cuda.events) == 1
        log.clear()
        fake_cuda.gate.clear()  # a long kernel: after INLINE_WAIT_S the worker hands it off
        eng.push_sync(lambda rc: log.append("long"), gpu(0), [], [v], name="long")
        deadline = time.monotonic() + 30
        while streams.completer(0)._thread is None and time.monotonic() < deadline:
            time.sleep(0.001)
        assert streams.completer(0)._thread is not None
        assert "event s0" not in log
        fake_cuda.gate.set()
        eng.wait_for_var(v)
        assert log == ["long", "record s0", "event s0"]
    finally:
        fake_cuda.gate.set()
        eng.shutdown()


def test_an_error_the_event_wait_reports_is_the_functions_error(
    fake_cuda: SimpleNamespace,
) -> None:
    fake_cuda.error = RuntimeError("kernel failed: illegal address")
    eng = ThreadedEnginePerDevice(cpu_workers=1, gpu_workers=1)
    try:
        v, w = eng.new_var("v"), eng.new_var("w")
        eng.push_sync(lambda rc: None, gpu(0), [], [v], name="bad_kernel")
        ran: list[str] = []
        eng.push_sync(lambda rc: ran.append("x"), cpu(), [v], [w], name="reader")
        with pytest.raises(Exception, match="illegal address"):
            eng.wait_for_var(w)  # the reader was skipped, the error propagated
        assert ran == []
        fake_cuda.error = None  # the engine goes on: new events wait without error
        fake_cuda.events.clear()
        u = eng.new_var("u")
        eng.push_sync(lambda rc: ran.append("y"), gpu(0), [], [u], name="good")
        eng.wait_for_var(u)
        assert ran == ["y"]
    finally:
        eng.shutdown()


def test_a_gpu_delete_runs_without_a_stream_or_an_event(fake_cuda: SimpleNamespace) -> None:
    """A delete only frees memory on the host's books, after every reader completed (as
    MXNet's kDeleteVar, which runs with no stream): no event to record or wait for."""
    log, gate = fake_cuda.log, fake_cuda.gate
    eng = ThreadedEnginePerDevice(cpu_workers=1, gpu_workers=1)
    streams_seen: list[Any] = []
    try:
        v = eng.new_var("v")
        gate.clear()  # the reader's kernel has not finished on the device
        eng.push_sync(lambda rc: log.append("read v"), gpu(0), [v], [], name="reader")
        eng.delete_variable(lambda rc: streams_seen.append(rc.stream), gpu(0), v)
        deadline = time.monotonic() + 30
        while "record s0" not in log and time.monotonic() < deadline:
            time.sleep(0.001)
        time.sleep(0.05)
        assert streams_seen == []  # the delete waits for the reader's event
        gate.set()
        eng.wait_for_all()
    finally:
        gate.set()
        eng.shutdown()
    assert streams_seen == [None]
    assert log == ["read v", "record s0", "event s0"]  # one event: the reader's


@pytest.mark.gpu
def test_ops_launch_on_the_worker_stream_and_streams_can_be_turned_off(monkeypatch: Any) -> None:
    from nnvmpy.kernel import cuda as kcuda

    used: list[Any] = []
    real = kcuda.launch_kernel

    def spy(dispatcher: Any, blocks: int, threads: int, stream: Any, args: Any) -> None:
        used.append(stream)
        real(dispatcher, blocks, threads, stream, args)

    monkeypatch.setattr(kcuda, "launch_kernel", spy)
    events: list[Any] = []
    real_event = streams._new_event

    def counting_event(device_id: int) -> Any:
        events.append(real_event(device_id))  # the simulator's (or the GPU's) event
        return events[-1]

    monkeypatch.setattr(streams, "_new_event", counting_event)
    monkeypatch.setattr(streams, "_completers", {})
    x = np.linspace(-1, 1, 64, dtype=np.float32)
    for setting in ("1", "0"):
        monkeypatch.setenv("NNVMPY_GPU_STREAMS", setting)
        monkeypatch.setattr(streams, "_tls", threading.local())  # read again by each thread
        used.clear()
        events.clear()
        y = nv.nd.relu(nv.nd.array(x, ctx=nv.gpu(0)) * 2).asnumpy()
        np.testing.assert_allclose(y, np.maximum(2 * x, 0), rtol=1e-6)
        assert used, "no kernel went through launch_kernel"
        if setting == "1":
            assert all(s is not None and s != 0 for s in used)
            assert events, "no function completed through an event"
        else:
            assert all(s == 0 for s in used)  # the default stream
            assert events == []  # completion at launch, as before streams


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


def test_each_thread_reads_the_streams_setting_once_per_device(monkeypatch: Any) -> None:
    """NNVMPY_GPU_STREAMS is read with a thread's first stream on a device, not per
    operation (an environment lookup per op was ~0.5 us of GPU dispatch)."""
    made: list[str] = []

    def new_stream(device_id: int) -> str:
        made.append(f"stream on gpu{device_id}")
        return made[-1]

    monkeypatch.setattr(streams, "_new_stream", new_stream)
    monkeypatch.setattr(streams, "_tls", threading.local())
    monkeypatch.setenv("NNVMPY_GPU_STREAMS", "0")
    assert streams.worker_stream(gpu(0)) is None
    monkeypatch.setenv("NNVMPY_GPU_STREAMS", "1")
    assert streams.worker_stream(gpu(0)) is None  # gpu0's setting was read already
    assert streams.worker_stream(gpu(1)) == "stream on gpu1"
    other: list[Any] = []
    t = threading.Thread(target=lambda: other.append(streams.worker_stream(gpu(0))))
    t.start()
    t.join()
    assert other == ["stream on gpu0"]  # another thread reads the setting afresh
    monkeypatch.setattr(streams, "_tls", threading.local())  # as a new engine's threads
    assert streams.worker_stream(gpu(0)) == "stream on gpu0"
    assert streams.worker_stream(gpu(0)) is made[-1]
    assert len(made) == 3
