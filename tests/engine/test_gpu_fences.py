"""Stream-ordered completion (engine/fences.py, NNVMPY_GPU_STREAM_ORDER=1): a GPU compute
function completes when queued and leaves a fence on its variables, which the next user
honours on its own stream, on another stream (a device wait) or on the host.

Streams and events are stand-ins that log what the engine asks of them (no GPU needed);
an event has passed once `passed` is set."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace
from typing import Any

import pytest

from nnvmpy.base import cpu, gpu
from nnvmpy.engine import FnProperty, RunContext, ThreadedEnginePerDevice, fences, streams

pytestmark = [pytest.mark.timeout(120)]


class LogStream:
    def __init__(self, log: list[str], name: str) -> None:
        self.log, self.name = log, name

    def synchronize(self) -> None:
        self.log.append(f"sync {self.name}")


class LogEvent:
    """A CUDA event stand-in: `passed` says whether the device has run up to it."""

    def __init__(self, log: list[str], passed: threading.Event, name: str) -> None:
        self.log, self.passed, self.name = log, passed, name
        self.stream: Any = None

    def record(self, stream: Any) -> None:
        self.stream = stream
        self.log.append(f"record {self.name} on {stream.name}")

    def wait(self, stream: Any) -> None:
        self.log.append(f"{stream.name} waits for {self.name}")

    def synchronize(self) -> None:
        assert self.passed.wait(30), "the test never let the device finish"
        self.log.append(f"host waits for {self.name}")

    def query(self) -> bool:
        return self.passed.is_set()


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Any:
    ns = SimpleNamespace(log=[], passed=threading.Event(), streams=[], events=[])
    ns.passed.set()

    def new_stream(device_id: int) -> LogStream:
        ns.streams.append(LogStream(ns.log, f"s{len(ns.streams)}"))
        return ns.streams[-1]

    def new_event(device_id: int) -> LogEvent:
        ns.events.append(LogEvent(ns.log, ns.passed, f"e{len(ns.events)}"))
        return ns.events[-1]

    monkeypatch.setattr(streams, "_new_stream", new_stream)
    monkeypatch.setattr(streams, "_new_event", new_event)
    monkeypatch.setattr(streams, "_completers", {})
    monkeypatch.setattr(fences, "_streams", {})
    monkeypatch.setattr(fences, "_rings", {})
    fences.set_on(True)
    eng = ThreadedEnginePerDevice(cpu_workers=1, gpu_workers=1, gpu_copy_workers=1)
    ns.eng = eng
    yield ns
    ns.passed.set()
    eng.shutdown()
    fences.set_on(None)


def _fn(log: list[str], what: str) -> Any:
    def fn(rc: RunContext) -> None:
        log.append(f"{what} on {rc.stream.name if rc.stream is not None else 'host'}")

    return fn


def test_a_dependent_chain_on_one_stream_never_waits(fake: Any) -> None:
    log, eng = fake.log, fake.eng
    fake.passed.clear()  # the device has run nothing: the chain still goes on
    v = eng.new_var("v")
    for i in range(3):
        eng.push_sync(_fn(log, f"f{i}"), gpu(0), [], [v], name=f"f{i}")
    deadline = time.monotonic() + 30
    while len(fake.events) < 3 and time.monotonic() < deadline:
        time.sleep(0.001)
    # each completed when queued; the next ran at once on the same stream, with no wait
    assert log == ["f0 on s0", "record e0 on s0", "f1 on s0", "record e1 on s0",
                   "f2 on s0", "record e2 on s0"]  # fmt: skip
    assert list(v.fence.values()) == [(fake.streams[0], fake.events[2])]  # the latest only
    fake.passed.set()
    eng.wait_for_all()
    assert log[-1] == "sync s0"  # waitall: the device has run every stream's work


def test_another_stream_waits_on_the_device_and_the_host_waits_itself(fake: Any) -> None:
    log, eng = fake.log, fake.eng
    v, out = eng.new_var("v"), eng.new_var("out")
    eng.push_sync(_fn(log, "write"), gpu(0), [], [v], name="write")
    eng.wait_for_var(v)  # the host waits for the write's event
    assert log == ["write on s0", "record e0 on s0", "host waits for e0"]
    log.clear()
    eng.push_sync(_fn(log, "copy"), gpu(0), [v], [out], prop=FnProperty.COPY_FROM_GPU)
    eng.push_sync(_fn(log, "cpu read"), cpu(), [v], [], name="cpu read")
    eng.wait_for_all()
    copy = log.index("copy on s1")
    assert log[copy - 1] == "s1 waits for e0"  # a device wait, on the copy worker's stream
    assert log[log.index("cpu read on host") - 1] == "host waits for e0"
    assert "record e1 on s1" in log  # a copy still completes when its stream ran it


def test_a_write_replaces_the_fences_and_reads_keep_one_per_stream(fake: Any) -> None:
    eng = fake.eng
    v, a, b = eng.new_var("v"), eng.new_var("a"), eng.new_var("b")
    eng.push_sync(_fn(fake.log, "w"), gpu(0), [], [v], name="w")
    eng.push_sync(_fn(fake.log, "r1"), gpu(0), [v], [a], name="r1")
    eng.push_sync(_fn(fake.log, "r2"), gpu(0), [v], [b], name="r2")
    eng.wait_for_all()
    s0 = fake.streams[0]
    assert v.fence == {id(s0): (s0, fake.events[2])}  # r2's event: after w's and r1's
    assert a.fence == {id(s0): (s0, fake.events[1])}


def test_a_delete_waits_for_the_fence_before_freeing(fake: Any) -> None:
    log, eng = fake.log, fake.eng
    v = eng.new_var("v")
    eng.push_sync(_fn(log, "use"), gpu(0), [], [v], name="use")
    eng.push_sync(lambda rc: None, gpu(0), [], [eng.new_var("sync")], name="marker")
    deadline = time.monotonic() + 30
    while len(fake.events) < 2 and time.monotonic() < deadline:
        time.sleep(0.001)
    fake.passed.clear()  # the kernel is still running on the device
    assert not eng.try_delete_idle(v)  # its memory must not go back to the pool yet
    freed = threading.Event()
    eng.delete_variable(lambda rc: freed.set(), gpu(0), v)
    assert not freed.wait(0.2)
    fake.passed.set()
    assert freed.wait(30)
    eng.wait_for_all()
    assert "host waits for e0" in log  # the completion thread waited, then freed


def test_a_stream_records_its_ring_of_events_in_turn(fake: Any) -> None:
    eng = fake.eng
    v = eng.new_var("v")
    for _ in range(fences.RING + 2):
        eng.push_sync(lambda rc: None, gpu(0), [], [v], name="f")
    eng.wait_for_all()
    assert len(fake.events) == fences.RING  # made while the ring filled, then reused
    records = [line for line in fake.log if line.startswith("record")]
    assert records[fences.RING :] == ["record e0 on s0", "record e1 on s0"]
    assert v.fence == {id(fake.streams[0]): (fake.streams[0], fake.events[1])}


def test_without_the_mode_functions_complete_when_their_stream_ran_them(fake: Any) -> None:
    fences.set_on(False)
    log, eng = fake.log, fake.eng
    v = eng.new_var("v")
    eng.push_sync(_fn(log, "write"), gpu(0), [], [v], name="write")
    eng.wait_for_var(v)
    assert v.fence is None
    assert "record e0 on s0" in log


def test_an_inline_gpu_function_runs_here_on_this_threads_stream(fake: Any) -> None:
    """Granted at push time, an INLINE GPU function runs in the pushing thread (as PyTorch
    launches from the caller), on that thread's own stream, and completes queued: a
    worker's function that reads its output waits for its event on the device."""
    log, eng = fake.log, fake.eng
    fake.passed.clear()  # the device has run nothing: nothing here may wait for it
    v, out = eng.new_var("v"), eng.new_var("out")
    ran_in: list[int] = []

    def inline(rc: RunContext) -> None:
        ran_in.append(threading.get_ident())
        log.append(f"inline on {rc.stream.name}")

    for _ in range(2):  # the second write is granted at once too: the first completed queued
        eng.push_sync(inline, gpu(0), [], [v], name="inline", prop=FnProperty.INLINE)
    assert ran_in == [threading.get_ident()] * 2  # before push_sync returned, in this thread
    assert log == ["inline on s0", "record e0 on s0", "inline on s0", "record e1 on s0"]
    assert v.fence == {id(fake.streams[0]): (fake.streams[0], fake.events[1])}
    eng.push_sync(_fn(log, "worker"), gpu(0), [v], [out], name="worker")  # to a worker
    deadline = time.monotonic() + 30
    while "worker on s1" not in log and time.monotonic() < deadline:
        time.sleep(0.001)
    assert log[4:6] == ["s1 waits for e1", "worker on s1"]  # a device wait, no host wait
    fake.passed.set()
    eng.wait_for_all()


def test_an_inline_gpu_function_waits_its_turn_behind_a_busy_variable(fake: Any) -> None:
    """Not granted at push time (an earlier function still holds its variable), an INLINE
    GPU function is queued and runs on a worker, as any other."""
    log, eng = fake.log, fake.eng
    v = eng.new_var("v")
    release = threading.Event()

    def slow(rc: RunContext) -> None:
        release.wait(30)
        log.append(f"slow on {rc.stream.name}")

    eng.push_sync(slow, gpu(0), [], [v], name="slow")
    ran_in: list[int] = []
    eng.push_sync(lambda rc: ran_in.append(threading.get_ident()), gpu(0), [], [v],
                  name="inline", prop=FnProperty.INLINE)  # fmt: skip
    assert ran_in == []  # queued behind slow, not run here
    release.set()
    eng.wait_for_all()
    assert len(ran_in) == 1
    assert ran_in[0] != threading.get_ident()
