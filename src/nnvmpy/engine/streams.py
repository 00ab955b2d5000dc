"""One CUDA stream per GPU engine worker thread, and completion by CUDA events.

Why. On the device's default stream every kernel of every worker runs one after another
on the GPU, and a function "completes" as soon as its kernels are queued, so the engine
releases variables whose memory a kernel may still be reading. With a stream per worker,
functions of different workers may overlap on the device; to keep the engine's contract
(a variable is free once the function holding it completed), a GPU function completes
when its worker's stream has run it.

Completion by events (newer MXNet; MXNet 1.x synchronises the stream instead). After a GPU
function returns, its worker records an event on its stream and hands it to the device's
completion thread (`completer`), then goes on to launch its next function: the CPU side of
the next launch overlaps the device's work on the previous one. The completion thread
waits on the events in the order they were recorded and completes each function (releases
its variables, runs what that grants) once its event has passed, so a reader pushed after
a GPU write still runs after the write finished on the device. Copies complete on lanes of
their own (one completion thread per device and lane: compute, copy_to_gpu,
copy_from_gpu): in one FIFO a kernel's completion would wait behind a long transfer's
event and the compute chain would advance only as fast as the copies, which undoes the
copy workers' overlap (seen on an H200: kernels and pinned uploads took the sum of their
times instead of the larger). An error raised by the function completes it at once, as
before; an error that the event wait reports (a failed kernel, on hardware) is the
function's error. The wait covers only that stream's work up to the event, never the whole
device.

Kernels find the stream in their RunContext (`run_ctx.stream`; kernel.cuda's launches
use it); so do the copies of push_copy, on the copy workers' streams. Work queued
on the default stream (allocations, asnumpy's download) still orders with these streams:
numba's streams are blocking streams, which the legacy default stream synchronises with.
NNVMPY_GPU_STREAMS=0 turns streams and events off (the default stream, completion at
launch); each thread reads it once, when it first asks for a stream.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from .. import config
from ..base import Context

_tls = threading.local()
INLINE_WAIT_S = 50e-6  # see Completer.passed_soon; a guess until measured on hardware


def enabled() -> bool:
    return config.GPU_STREAMS.get() != "0"


def worker_stream(ctx: Context) -> Any | None:
    """This thread's stream on ctx's GPU (made on first use), or None when streams are off.

    NNVMPY_GPU_STREAMS is read once per thread and device, with that first use: an
    environment lookup per operation cost ~0.5 us of the worker's dispatch."""
    try:
        return _tls.streams[ctx.device_id]
    except (AttributeError, KeyError):
        return _first_stream(ctx.device_id)


def _first_stream(device_id: int) -> Any | None:
    streams: dict[int, Any] | None = getattr(_tls, "streams", None)
    if streams is None:
        streams = _tls.streams = {}
    if not enabled():
        streams[device_id] = None
        return None
    try:
        streams[device_id] = _new_stream(device_id)
    except Exception:  # no usable CUDA here: host functions pushed under a gpu context
        streams[device_id] = None  # (the engine's own tests) keep the default stream
    return streams[device_id]


def _new_stream(device_id: int) -> Any:
    from nnvmpy.kernel.cuda import get_cuda

    cuda = get_cuda("engine")
    if len(cuda.gpus) > 1:
        with cuda.gpus[device_id]:
            return cuda.stream()
    return cuda.stream()


class _NotReadyFilter(logging.Filter):
    """numba's driver logs every failed call at ERROR, and an event still running answers
    cuEventQuery with CUDA_ERROR_NOT_READY: polling (Completer.passed_soon) would log an
    error per poll. Only that message is dropped."""

    def filter(self, record: logging.LogRecord) -> bool:
        msg = record.getMessage()
        return not ("cuEventQuery" in msg and "NOT_READY" in msg)


_filter_installed: list[bool] = []


def _quiet_event_queries() -> None:
    if not _filter_installed:
        _filter_installed.append(True)
        for name in ("numba.cuda.cudadrv.driver", "numba_cuda.numba.cuda.cudadrv.driver"):
            logging.getLogger(name).addFilter(_NotReadyFilter())


def _new_event(device_id: int) -> Any:
    """A CUDA event without timing (cheaper to record and wait on)."""
    from nnvmpy.kernel.cuda import _state, get_cuda

    cuda = get_cuda("engine")
    _quiet_event_queries()
    if _state.get("simulator"):
        return cuda.event()  # the simulator's Event takes no arguments; it never waits
    if len(cuda.gpus) > 1:
        with cuda.gpus[device_id]:
            return cuda.event(timing=False)
    return cuda.event(timing=False)


Done = Callable[[BaseException | None], None]


class Completer:
    """One device lane's completion thread: waits on recorded events in order, then calls
    each one's `done` (None, or the exception the wait raised). Events are reused."""

    def __init__(self, device_id: int, lane: str = "compute") -> None:
        self.device_id = device_id
        self.lane = lane
        self._cond = threading.Condition(threading.Lock())
        self._queue: deque[tuple[Any, Done, bool]] = deque()
        self._free: list[Any] = []  # events whose wait has passed, ready to record again
        self._thread: threading.Thread | None = None

    def record(self, stream: Any) -> Any:
        """An event recorded on `stream` now (reused when one is free); raises when no
        event can be made."""
        with self._cond:
            event = self._free.pop() if self._free else None
        if event is None:
            event = _new_event(self.device_id)
        event.record(stream)
        return event

    def recycle(self, event: Any) -> None:
        """Give back an event whose wait has passed."""
        with self._cond:
            self._free.append(event)

    def submit(self, event: Any, done: Done, recycle: bool = True) -> None:
        """Call `done` on the completion thread once `event` has passed (in submit order);
        the event is then reused by `record` unless recycle is False (a fence's)."""
        with self._cond:
            self._queue.append((event, done, recycle))
            if self._thread is None:
                lane = "" if self.lane == "compute" else f"-{self.lane}"
                self._thread = threading.Thread(
                    target=self._run,
                    daemon=True,
                    name=f"nnvmpy-gpu{self.device_id}{lane}-events",
                )
                self._thread.start()
            self._cond.notify()

    def passed_soon(self, event: Any, busy: Callable[[], bool]) -> bool:
        """True if `event` passes within INLINE_WAIT_S while `busy()` stays False.

        A worker with nothing else to launch waits here for a short kernel instead of
        handing the event to the completion thread (a thread switch per function, ~30 µs
        under load, would dominate a chain of small dependent ops). False at once when the
        event cannot be queried (the simulator's, which has already passed, keeps the
        completion thread exercised) or when other work is ready.
        """
        query = getattr(event, "query", None)
        if query is None:
            return False
        deadline = time.perf_counter() + INLINE_WAIT_S
        while not busy():
            if query():
                self.recycle(event)
                return True
            if time.perf_counter() > deadline:
                return False
            time.sleep(0)  # let the pushing thread run
        return False

    def _run(self) -> None:
        cond, queue = self._cond, self._queue
        while True:
            with cond:
                while not queue:
                    cond.wait()
                event, done, recycle = queue.popleft()
            exc: BaseException | None = None
            try:
                event.synchronize()
            except BaseException as e:  # a failed kernel: the function's error
                exc = e
            else:
                if recycle:
                    with cond:
                        self._free.append(event)
            try:
                done(exc)
            except BaseException as e:  # pragma: no cover - the engine's own bug
                import sys

                print(f"nnvmpy: GPU completion failed: {e!r}", file=sys.stderr)


_completers: dict[tuple[int, str], Completer] = {}
_completers_lock = threading.Lock()


def completer(device_id: int, lane: str = "compute") -> Completer:
    """The completion thread of GPU `device_id` for `lane` ('compute', or a copy
    FnProperty's value), started on its first event."""
    key = (device_id, lane)
    found = _completers.get(key)
    if found is None:
        with _completers_lock:
            found = _completers.setdefault(key, Completer(device_id, lane))
    return found


def _after_fork_child() -> None:
    # The engines quiesce before fork (no event is pending); the child has no threads.
    _completers.clear()


os.register_at_fork(after_in_child=_after_fork_child)

__all__ = ["Completer", "completer", "enabled", "worker_stream"]
