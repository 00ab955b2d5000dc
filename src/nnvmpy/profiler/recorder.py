"""What the profiler records, and the hooks the engines call while it records.

The engines test `RECORDER.on` once per push (a module global and an attribute: tens of
nanoseconds when profiling is off); only when it is on do they run the function through
`run_sync` (or hand it `wrap_done`'s callback), which times it on the thread that runs it.
Records are plain tuples appended to lists (atomic under the GIL), so recording takes no
lock; aggregation and the trace are built from them when asked for.

Custom operators (MXNet's "Custom Operator" category): `custom_scope` wraps a CustomOp's
Python forward/backward on its callback thread. The call itself is a span
'<op_type>::pure_python' ('_backward_<op_type>::pure_python'), and every operation the
callback pushes is named '<op_type>::<op>' (a ScopedName, fixed at push time because it
may run on an engine worker) and counted in that category instead of "operator".
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

now_ns = time.perf_counter_ns


class OpRecord(NamedTuple):
    """One engine operation: its name (the push's), device, thread and span."""

    name: str
    device: str  # "cpu/0", "gpu/1"
    tid: int
    start_ns: int
    end_ns: int


class SpanRecord(NamedTuple):
    """A Task, Frame or Event from start() to stop(); category is MXNet's ("event",
    "<domain>", "<domain>,frame")."""

    category: str
    name: str
    tid: int
    start_ns: int
    end_ns: int


class CounterRecord(NamedTuple):
    category: str
    name: str
    tid: int
    at_ns: int
    value: int


class MarkerRecord(NamedTuple):
    category: str
    name: str
    tid: int
    at_ns: int
    scope: str


class MemoryRecord(NamedTuple):
    """Bytes in use in a device's storage pool, sampled after an operation."""

    device: str
    tid: int
    at_ns: int
    bytes_in_use: int


KINDS = ("ops", "spans", "counters", "markers", "memory")
OPERATOR = "operator"  # engine operations
CUSTOM_OPERATOR = "Custom Operator"  # custom-op callbacks and what they push (MXNet's name)


class ScopedName(str):
    """The name of an operation pushed from a custom op's callback: '<scope>::<name>'."""

    scope: str
    inner: str

    def __new__(cls, scope: str, inner: str) -> ScopedName:
        self = super().__new__(cls, f"{scope}::{inner}")
        self.scope, self.inner = scope, inner
        return self


class Unrecorded(str):
    """A push name the profiler leaves out: a custom op's hand-off to its callback thread,
    which the callback's own '<scope>::pure_python' span stands for."""


class _SeenThread(threading.local):
    tid: int = 0  # this thread's ident once it has recorded (Recorder.thread_id)


_seen_thread = _SeenThread()


class _CustomScope(threading.local):
    name: str | None = None  # the custom op whose callback this thread runs


_custom = _CustomScope()


def device_name(ctx: Any) -> str:
    return f"{ctx.device_type}/{ctx.device_id}"


_NODE_LABEL = re.compile(r"^(.+) \(([^()]+)\)$")


def split_label(name: str) -> tuple[str, str | None]:
    """'conv0_fwd (Convolution)' (an executor node's push) -> ('Convolution', 'conv0_fwd'):
    traces and statistics name operations by op, as MXNet's do; other names stay whole."""
    m = _NODE_LABEL.match(name)
    return (m.group(2), m.group(1)) if m else (name, None)


def classify(name: str) -> tuple[str, str, str | None]:
    """(category, name shown, node) of an operation's push name: a custom op's pushes are
    '<op_type>::<op>' in "Custom Operator", the others their op in "operator"."""
    if type(name) is ScopedName:
        op, node = split_label(name.inner)
        return CUSTOM_OPERATOR, f"{name.scope}::{_op_row(op)}", node
    op, node = split_label(name)
    return OPERATOR, _op_row(op), node


def _op_row(op: str) -> str:
    # a pushed delete names its variable (for errors); one row for them all, MXNet's name
    return "DeleteVariable" if op.startswith("delete_variable(") else op


class Recorder:
    """The process-wide profiling state (one instance: RECORDER)."""

    def __init__(self) -> None:
        self.on = False  # operators are recorded now (running, not paused, ops profiled)
        self.running = False  # set_state('run')
        self.paused = False
        self.ops_enabled = True  # profile_all / _symbolic / _imperative
        self.symbolic = self.imperative = True  # which operations (when not all of them)
        self.memory_enabled = False  # profile_memory (samples after each operation)
        self.origin_ns = now_ns()
        self.threads: dict[int, str] = {}
        self.generation = 0
        self.clear()

    def clear(self) -> None:
        """Forget every record (a finished dump starts a new trace)."""
        self.generation += 1  # new record lists: running statistics start over (stats.py)
        self.ops: list[OpRecord] = []
        self.spans: list[SpanRecord] = []
        self.counters: list[CounterRecord] = []
        self.markers: list[MarkerRecord] = []
        self.memory: list[MemoryRecord] = []
        self.stats_from = dict.fromkeys(KINDS, 0)  # dumps() aggregates from here
        self.trace_from = dict.fromkeys(KINDS, 0)  # dump() writes from here

    def marks(self) -> dict[str, int]:
        """The current length of each record list (dumps(reset=True), dump(finished=True))."""
        return {kind: len(getattr(self, kind)) for kind in KINDS}

    def update(self) -> None:
        """Recompute `on` after a state or config change."""
        self.on = self.running and not self.paused and self.ops_enabled

    @property
    def active(self) -> bool:
        """Profiling objects (Task, Event, Counter, ...) record now."""
        return self.running and not self.paused

    def thread_id(self) -> int:
        """This thread's ident, its name noted for the trace on its first record (a
        thread-local, not the ident, says "first": idents of dead threads recur)."""
        seen = _seen_thread
        if seen.tid == 0:
            seen.tid = threading.get_ident()
            self.threads[seen.tid] = threading.current_thread().name
        return seen.tid

    # ---- the engine hooks ----
    def scoped(self, name: str | None, fn: Any) -> str | None:
        """The name of a push made now: '<op_type>::<name>' inside a custom op's callback
        (engine/base.py's Opr and run_sync ask, only while recording)."""
        scope = _custom.name
        if scope is None or isinstance(name, ScopedName | Unrecorded):
            return name
        return ScopedName(scope, name or _label(fn))

    def record_op(self, name: str, ctx: Any, start_ns: int, end_ns: int, tid: int = 0) -> None:
        if type(name) is Unrecorded:
            return
        if not (self.symbolic and self.imperative):
            symbolic = _NODE_LABEL.match(name) is not None  # a bound graph's node
            if not (self.symbolic if symbolic else self.imperative):
                return
        tid = tid or self.thread_id()
        device = device_name(ctx)
        self.ops.append(OpRecord(name, device, tid, start_ns, end_ns))
        if self.memory_enabled:
            from nnvmpy.kernel import storage

            used = storage.stats(ctx).bytes_in_use
            self.memory.append(MemoryRecord(device, tid, now_ns(), used))

    def run_sync(self, fn: Callable[[Any], object], rctx: Any, name: str | None) -> None:
        """fn(rctx), timed: what the engine does instead of fn(rctx) while recording."""
        name = self.scoped(name, fn)  # pushed just now on this thread (the inline paths)
        start = now_ns()
        try:
            fn(rctx)
        finally:
            self.record_op(name or _label(fn), rctx.ctx, start, now_ns())

    def wrap_done(self, done: Callable[..., None], name: str | None, ctx: Any) -> Any:
        """The on_complete handed to an async function: the operation ends when it is called
        (from any thread); the row is the thread that started it."""
        start, tid, label = now_ns(), self.thread_id(), name or "async"

        def on_complete(exc: BaseException | None = None, /) -> None:
            self.record_op(label, ctx, start, now_ns(), tid)
            if exc is None:
                done()
            else:
                done(exc)

        return on_complete

    # ---- custom operators ----
    @contextmanager
    def custom_scope(self, scope: str) -> Iterator[None]:
        """Run a custom op's Python callback (operator/custom.py) under `scope` (its
        op_type, or '_backward_<op_type>'): what it pushes is named '<scope>::<op>', and
        while recording the call is a '<scope>::pure_python' span."""
        outer = _custom.name
        _custom.name = scope
        start = now_ns()
        try:
            yield
        finally:
            _custom.name = outer
            if self.on:
                span = SpanRecord(
                    CUSTOM_OPERATOR, f"{scope}::pure_python", self.thread_id(), start, now_ns()
                )
                self.spans.append(span)


def _label(fn: Any) -> str:
    return str(getattr(fn, "__qualname__", None) or repr(fn))


RECORDER = Recorder()
