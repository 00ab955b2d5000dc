"""profiler.dump(): the records as Chrome trace-event JSON (Perfetto, chrome://tracing).

Layout: one process per device ("cpu/0", "gpu/0") whose threads are the engine workers
(and the pushing thread, for operations run inline), each operation a complete ("X")
event on the row of the thread that ran it ("operator", or "Custom Operator" for what a
custom op's callback pushed), and the device's storage pool as a counter track
("Memory: cpu/0", bytes in use). Then one process per profiling category: "event" for
Events, one per Domain for its Tasks and Counters, "<domain>,frame" for Frames,
"<domain>,instant_marker" for Markers (instant events) and "Custom Operator" for the
custom-op callbacks ('<op_type>::pure_python'). Timestamps are microseconds from the
moment the profiler module was loaded.

A TraceFile is one trace being written: its first dump writes the whole file, each later
dump appends the events recorded since in place of the closing brackets, which it writes
again. So a periodic dump encodes only what was recorded since the previous one, not the
whole run, and the file is complete JSON after every dump (MXNet's continuous dump appends
too, but leaves the file unreadable until the last one). Up to 64 MiB each write goes to a
copy that then replaces the file, so a viewer opening it at any moment reads a complete
trace; past that (a long run, more than a viewer loads comfortably) a dump appends in
place, so that the periodic dump's cost stays that of what is new.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
from typing import Any

from .recorder import Recorder, classify

_SCOPE = {"global": "g", "process": "p", "thread": "t", "task": "t", "marker": "t"}
_HEAD = b'{"traceEvents":[\n'
_TAIL = b'\n],"displayTimeUnit":"ms"}\n'
_COPY_LIMIT = 64 << 20  # bytes up to which an append rewrites a copy (atomic for readers)


def _written(f: Any) -> os.stat_result:
    """The stat of the file just written, from its handle: a stat by name after the
    rename could see a file another writer put there (or none) in between."""
    f.flush()
    return os.fstat(f.fileno())


class TraceFile:
    """The trace of the records from `start` on (the marks of the last finished dump)."""

    def __init__(self, filename: str, start: dict[str, int]) -> None:
        self.filename = filename
        self.start = start  # Recorder.trace_from when this trace began (compared by identity)
        self._reset()

    def _reset(self) -> None:
        self.done = dict(self.start)  # records already in the file, per kind
        self.pids: dict[str, int] = {}  # device or category -> process id
        self.rows: set[tuple[int, int]] = set()  # (pid, tid) rows already named
        self.size = -1  # bytes in the file after our last write; -1: not written yet
        self.stamp: tuple[int, int, int] | None = None  # the file's (inode, size, mtime) then
        self.empty = True  # the file holds no event yet

    def dump(self, rec: Recorder) -> None:
        """Bring the file up to date with the records: write it, or append to it."""
        if self.size >= 0 and not self._intact():
            self._reset()  # someone else wrote or removed the file: write it whole again
        events = self._events(rec)
        try:
            self._write(events)
        except BaseException:
            self._reset()  # the next dump writes the whole file again
            raise

    def _write(self, events: list[str]) -> None:
        if self.size >= 0 and not events:
            return
        body = ",\n".join(events).encode()
        tmp = f"{self.filename}.tmp{os.getpid()}"
        if self.size < 0:
            with open(tmp, "wb") as f:
                f.write(_HEAD + body + _TAIL)
                st = _written(f)
            os.replace(tmp, self.filename)  # a reader sees the old file or the new one
        else:
            target = self.filename
            if self.size <= _COPY_LIMIT:
                shutil.copyfile(self.filename, tmp)  # in the kernel: nothing re-encoded
                target = tmp
            with open(target, "r+b") as f:
                f.seek(self.size - len(_TAIL))
                f.write((b"" if self.empty else b",\n") + body + _TAIL)
                f.truncate()
                st = _written(f)
            if target == tmp:
                os.replace(tmp, self.filename)
        self.size, self.stamp = st.st_size, (st.st_ino, st.st_size, st.st_mtime_ns)
        self.empty = self.empty and not events

    def _intact(self) -> bool:
        """The file is still the one we wrote last (not removed, replaced or changed)."""
        try:
            st = os.stat(self.filename)
        except OSError:
            return False
        return (st.st_ino, st.st_size, st.st_mtime_ns) == self.stamp

    def _events(self, rec: Recorder) -> list[str]:
        """The events (JSON text) of the records not yet in the file, after the names of
        the rows they open. Formatted by hand: a dict and a json.dumps per event cost
        several times more, and a periodic dump of a busy run formats thousands."""
        upto = rec.marks()  # what is recorded from now on goes to the next dump
        new = {kind: getattr(rec, kind)[self.done[kind] : upto[kind]] for kind in upto}
        self.done = upto
        events = [json.dumps(m) for m in self._name_rows(rec, new)]
        pid, t0 = self.pids, rec.origin_ns
        for o in new["ops"]:
            category, op_name, node = classify(o.name)
            args = "" if node is None else f',"args":{{"node":{_q(node)}}}'
            start, dur = o.start_ns - t0, o.end_ns - o.start_ns
            events.append(_span(op_name, category, pid[o.device], o.tid, start, dur, args))
        events += [
            _count(f"Memory: {m.device}", "Device Storage", pid[m.device], m.tid, m.at_ns - t0,
                   m.bytes_in_use)
            for m in new["memory"]
        ]  # fmt: skip
        events += [
            _span(
                s.name, s.category, pid[s.category], s.tid, s.start_ns - t0, s.end_ns - s.start_ns
            )
            for s in new["spans"]
        ]
        events += [
            _count(c.name, c.category, pid[c.category], c.tid, c.at_ns - t0, c.value)
            for c in new["counters"]
        ]
        events += [
            f'{{"name":{_q(mk.name)},"cat":{_q(mk.category)},"ph":"i",'
            f'"s":"{_SCOPE[mk.scope]}","ts":{(mk.at_ns - t0) / 1000:.3f},'
            f'"pid":{pid[mk.category]},"tid":{mk.tid}}}'
            for mk in new["markers"]
        ]
        return events

    def _name_rows(self, rec: Recorder, new: dict[str, list[Any]]) -> list[dict[str, Any]]:
        """Metadata events naming the processes and thread rows the new records open."""
        meta: list[dict[str, Any]] = []
        ops, spans = new["ops"], new["spans"]
        devices = sorted({o.device for o in ops} | {m.device for m in new["memory"]})
        categories = sorted({s.category for s in spans} | {c.category for c in new["counters"]})
        categories += sorted({m.category for m in new["markers"]} - set(categories))
        for name in [*devices, *categories]:
            if name not in self.pids:
                p = self.pids[name] = len(self.pids)
                meta.append({"ph": "M", "name": "process_name", "pid": p, "args": {"name": name}})
                meta.append(
                    {"ph": "M", "name": "process_sort_index", "pid": p, "args": {"sort_index": p}}
                )
        pid = self.pids
        rows = {(pid[o.device], o.tid) for o in ops} | {(pid[s.category], s.tid) for s in spans}
        for p, tid in sorted(rows - self.rows):
            name = rec.threads.get(tid, str(tid))
            meta.append(
                {"ph": "M", "name": "thread_name", "pid": p, "tid": tid, "args": {"name": name}}
            )
        self.rows |= rows
        return meta


_q = functools.lru_cache(maxsize=4096)(json.dumps)  # a name as a JSON string, escaped


def _span(name: str, cat: str, p: int, tid: int, start: int, dur: int, args: str = "") -> str:
    """A complete ("X") event; times in ns since the origin, written in µs."""
    return (
        f'{{"name":{_q(name)},"cat":{_q(cat)},"ph":"X","ts":{start / 1000:.3f},'
        f'"dur":{dur / 1000:.3f},"pid":{p},"tid":{tid}{args}}}'
    )


def _count(name: str, cat: str, p: int, tid: int, at: int, value: int) -> str:
    """A counter ("C") event: the track `name` takes `value` at `at` ns since the origin."""
    return (
        f'{{"name":{_q(name)},"cat":{_q(cat)},"ph":"C","ts":{at / 1000:.3f},'
        f'"pid":{p},"tid":{tid},"args":{{{_q(name)}:{int(value)}}}}}'
    )
