"""profiler.dump(): the records as Chrome trace-event JSON (Perfetto, chrome://tracing).

Layout: one process per device ("cpu/0", "gpu/0") whose threads are the engine workers
(and the pushing thread, for operations run inline), each operation a complete ("X")
event on the row of the thread that ran it, and the device's storage pool as a counter
track ("Memory: cpu/0", bytes in use). Then one process per profiling category: "event"
for Events, one per Domain for its Tasks and Counters, "<domain>,frame" for Frames and
"<domain>,instant_marker" for Markers (instant events). Timestamps are microseconds from
the moment the profiler module was loaded.
"""

from __future__ import annotations

import json
import os
from typing import Any

from .recorder import Recorder, split_label

_SCOPE = {"global": "g", "process": "p", "thread": "t", "task": "t", "marker": "t"}


def trace(rec: Recorder) -> dict[str, Any]:
    """The trace document of everything recorded since the last finished dump."""
    start = rec.trace_from
    ops = rec.ops[start["ops"] :]
    memory = rec.memory[start["memory"] :]
    spans = rec.spans[start["spans"] :]
    counters = rec.counters[start["counters"] :]
    markers = rec.markers[start["markers"] :]
    origin = rec.origin_ns

    def us(ns: int) -> float:
        return round((ns - origin) / 1000, 3)

    devices = sorted({o.device for o in ops} | {m.device for m in memory})
    categories = sorted({s.category for s in spans} | {c.category for c in counters})
    categories += sorted({m.category for m in markers} - set(categories))
    pid = {name: i for i, name in enumerate([*devices, *categories])}
    events: list[dict[str, Any]] = []
    for name, p in pid.items():
        events.append({"ph": "M", "name": "process_name", "pid": p, "args": {"name": name}})
        events.append(
            {"ph": "M", "name": "process_sort_index", "pid": p, "args": {"sort_index": p}}
        )
    rows = {(pid[o.device], o.tid) for o in ops} | {(pid[s.category], s.tid) for s in spans}
    for p, tid in sorted(rows):
        name = rec.threads.get(tid, str(tid))
        events.append(
            {"ph": "M", "name": "thread_name", "pid": p, "tid": tid, "args": {"name": name}}
        )

    def span(name: str, cat: str, p: int, tid: int, t0: int, t1: int) -> dict[str, Any]:
        dur = round((t1 - t0) / 1000, 3)
        return {"name": name, "cat": cat, "ph": "X", "ts": us(t0), "dur": dur, "pid": p, "tid": tid}

    def count(name: str, cat: str, p: int, tid: int, at: int, value: int) -> dict[str, Any]:
        return {"name": name, "cat": cat, "ph": "C", "ts": us(at), "pid": p, "tid": tid,
                "args": {name: value}}  # fmt: skip

    for o in ops:
        op_name, node = split_label(o.name)
        event = span(op_name, "operator", pid[o.device], o.tid, o.start_ns, o.end_ns)
        if node is not None:
            event["args"] = {"node": node}
        events.append(event)
    events += [
        count(
            f"Memory: {m.device}", "Device Storage", pid[m.device], m.tid, m.at_ns, m.bytes_in_use
        )
        for m in memory
    ]
    events += [
        span(s.name, s.category, pid[s.category], s.tid, s.start_ns, s.end_ns) for s in spans
    ]
    events += [
        count(c.name, c.category, pid[c.category], c.tid, c.at_ns, c.value) for c in counters
    ]
    events += [
        {
            "name": mk.name,
            "cat": mk.category,
            "ph": "i",
            "s": _SCOPE[mk.scope],
            "ts": us(mk.at_ns),
            "pid": pid[mk.category],
            "tid": mk.tid,
        }
        for mk in markers
    ]
    return {"traceEvents": events, "displayTimeUnit": "ms"}


def write(rec: Recorder, filename: str) -> None:
    """Write the trace atomically (a viewer never sees half a file)."""
    tmp = f"{filename}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(trace(rec), f)
    os.replace(tmp, filename)
