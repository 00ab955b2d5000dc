"""MXNet's user-side profiling objects: Domain, Task, Frame, Event, Counter, Marker.

They record only while the profiler runs and is not paused (as MXNet's do). A Task,
Frame or Event records one span per start()/stop() pair; a Counter records its value on
every change; a Marker records an instant.
"""

from __future__ import annotations

import threading

from ..base import ParamError
from .recorder import RECORDER, CounterRecord, MarkerRecord, SpanRecord, now_ns

MARKER_SCOPES = ("global", "process", "thread", "task", "marker")


class Domain:
    """A category that groups tasks, frames, counters and markers (a trace row)."""

    def __init__(self, name: str) -> None:
        self.name = str(name)

    def __str__(self) -> str:
        return self.name

    def new_task(self, name: str) -> Task:
        return Task(self, name)

    def new_frame(self, name: str) -> Frame:
        return Frame(self, name)

    def new_counter(self, name: str, value: int | None = None) -> Counter:
        return Counter(self, name, value)

    def new_marker(self, name: str) -> Marker:
        return Marker(self, name)


class _Duration:
    """start()/stop() timing; each completed pair is one span in `category`."""

    category = "event"

    def __init__(self, name: str) -> None:
        self.name = str(name)
        self._starts: dict[int, int] = {}  # per thread: MXNet's durations are per thread

    def start(self) -> None:
        """Start timing (ignored while the profiler is stopped or paused)."""
        if RECORDER.active:
            self._starts[threading.get_ident()] = now_ns()

    def stop(self) -> None:
        """Stop timing and record the span (nothing when there was no start)."""
        start = self._starts.pop(threading.get_ident(), None)
        if start is not None and RECORDER.active:
            tid = RECORDER.thread_id()
            RECORDER.spans.append(SpanRecord(self.category, self.name, tid, start, now_ns()))

    def __enter__(self) -> _Duration:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __str__(self) -> str:
        return self.name


class Task(_Duration):
    """A logical unit of work of one thread; all its passes aggregate into one row."""

    def __init__(self, domain: Domain, name: str) -> None:
        super().__init__(name)
        self.domain = domain
        self.category = domain.name


class Frame(_Duration):
    """Like Task, shown on the domain's frame row (`<domain>,frame`)."""

    def __init__(self, domain: Domain, name: str) -> None:
        super().__init__(name)
        self.domain = domain
        self.category = f"{domain.name},frame"


class Event(_Duration):
    """A named span of code outside any domain (category `event`)."""


class Counter:
    """A value tracked over time (a counter track in the trace)."""

    def __init__(self, domain: Domain, name: str, value: int | None = None) -> None:
        self.domain = domain
        self.name = str(name)
        self._value = 0
        self._lock = threading.Lock()
        if value is not None:
            self.set_value(value)

    def _record(self, value: int) -> None:
        self._value = value
        if RECORDER.active:
            tid = RECORDER.thread_id()
            RECORDER.counters.append(
                CounterRecord(self.domain.name, self.name, tid, now_ns(), value)
            )

    def set_value(self, value: int) -> None:
        with self._lock:
            self._record(int(value))

    def increment(self, delta: int = 1) -> None:
        with self._lock:
            self._record(self._value + int(delta))

    def decrement(self, delta: int = 1) -> None:
        with self._lock:
            self._record(self._value - int(delta))

    def __iadd__(self, delta: int) -> Counter:
        self.increment(delta)
        return self

    def __isub__(self, delta: int) -> Counter:
        self.decrement(delta)
        return self

    def __str__(self) -> str:
        return self.name


class Marker:
    """An instant in time, across `scope` ('global', 'process', 'thread', 'task', 'marker')."""

    def __init__(self, domain: Domain, name: str) -> None:
        self.domain = domain
        self.name = str(name)

    def mark(self, scope: str = "process") -> None:
        if scope not in MARKER_SCOPES:
            raise ParamError(
                f"profiler.Marker.mark: scope expects one of {set(MARKER_SCOPES)}, got {scope!r}"
            )
        if RECORDER.active:
            category = f"{self.domain.name},instant_marker"
            tid = RECORDER.thread_id()
            RECORDER.markers.append(MarkerRecord(category, self.name, tid, now_ns(), scope))

    def __str__(self) -> str:
        return self.name
