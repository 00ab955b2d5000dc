"""profiler.dumps(): the aggregate statistics, as MXNet 1.9.1's table or JSON.

Time categories: "operator" (engine operations by name), "Custom Operator" (custom-op
callbacks, '<op_type>::pure_python', and what they push, '<op_type>::<op>'), "event", each
domain's tasks and counters ("<domain>"), frames ("<domain>,frame") and markers
("<domain>,instant_marker").
Memory: "Device Storage", one row per device ("Memory: cpu/0") from the bytes in use
sampled after each operation. Times are in ms and memory in kB, as MXNet prints them; a
counter's row holds its values where MXNet's holds times (as MXNet's does).
"""

from __future__ import annotations

import json
import threading
import weakref
from collections import defaultdict
from typing import Any

from ..base import ParamError
from .recorder import Recorder, classify

SORT_KEYS = {"total": "Total", "avg": "Avg", "min": "Min", "max": "Max", "count": "Count"}
_RULE = "================="


class _Stat:
    __slots__ = ("count", "max", "min", "total")

    def __init__(self) -> None:
        self.count = 0
        self.total = 0.0
        self.min = float("inf")
        self.max = float("-inf")

    def add(self, value: float) -> None:
        self.count += 1
        self.total += value
        self.min = min(self.min, value)
        self.max = max(self.max, value)

    def as_dict(self, with_total: bool = True) -> dict[str, float]:
        out: dict[str, float] = {"Count": self.count}
        if with_total:
            out["Total"] = _round(self.total)
        out.update(Min=_round(self.min), Max=_round(self.max), Avg=_round(self.avg))
        return out

    @property
    def avg(self) -> float:
        return self.total / self.count if self.count else 0.0


def _round(x: float) -> float:
    return round(x, 4)


class _Running:
    """The statistics of the records seen so far, advanced to the lists' ends on each call:
    repeated dumps() (a training loop's periodic report) cost the records added since the
    previous one, not every record of the run. A cleared recorder (a new generation of
    record lists) or a new reset mark (stats_from) starts it over."""

    def __init__(self, rec: Recorder) -> None:
        self.recorder = weakref.ref(rec)
        self.generation = rec.generation
        self.start = dict(rec.stats_from)
        self.done = dict(rec.stats_from)
        self.times: dict[str, dict[str, _Stat]] = defaultdict(lambda: defaultdict(_Stat))
        self.memory: dict[str, dict[str, _Stat]] = defaultdict(lambda: defaultdict(_Stat))

    def matches(self, rec: Recorder) -> bool:
        same_lists = self.recorder() is rec and self.generation == rec.generation
        return same_lists and self.start == rec.stats_from

    def advance(self, rec: Recorder) -> None:
        ends = rec.marks()  # records appended after this are left for the next call
        times, done = self.times, self.done
        for op in rec.ops[done["ops"] : ends["ops"]]:
            category, name, _ = classify(op.name)
            times[category][name].add((op.end_ns - op.start_ns) / 1e6)
        for span in rec.spans[done["spans"] : ends["spans"]]:
            times[span.category][span.name].add((span.end_ns - span.start_ns) / 1e6)
        last: dict[tuple[str, str], int] = {}
        for c in rec.counters[done["counters"] : ends["counters"]]:
            times[c.category][c.name].add(c.value / 1000)  # MXNet shows counter values as times
            last[(c.category, c.name)] = c.value
        for (category, name), value in last.items():
            times[category][name].total = value / 1000  # and its current value as the total
        for m in rec.markers[done["markers"] : ends["markers"]]:
            times.setdefault(m.category, defaultdict(_Stat))  # MXNet lists it, with no rows
        for sample in rec.memory[done["memory"] : ends["memory"]]:
            self.memory["Device Storage"][f"Memory: {sample.device}"].add(
                sample.bytes_in_use / 1000
            )
        self.done = ends


_running: _Running | None = None
_running_lock = threading.Lock()


def collect(rec: Recorder) -> tuple[dict[str, dict[str, _Stat]], dict[str, dict[str, _Stat]]]:
    """(time categories, memory categories): {category: {name: stat}} since the reset mark
    (copies of the running tables, so a concurrent dumps() cannot resize them mid-render)."""
    global _running
    with _running_lock:
        if _running is None or not _running.matches(rec):
            _running = _Running(rec)
        _running.advance(rec)
        times = {category: dict(rows) for category, rows in _running.times.items()}
        memory = {category: dict(rows) for category, rows in _running.memory.items()}
        return times, memory


def _sorted(rows: dict[str, _Stat], sort_by: str, ascending: bool) -> list[tuple[str, _Stat]]:
    def key(item: tuple[str, _Stat]) -> float:
        stat = item[1]
        return {
            "total": stat.total,
            "avg": stat.avg,
            "min": stat.min,
            "max": stat.max,
            "count": stat.count,
        }[sort_by]

    return sorted(rows.items(), key=key, reverse=not ascending)


def check_args(reset: Any, format: str, sort_by: str, ascending: Any) -> None:
    if format not in ("table", "json"):
        raise ParamError(f"profiler.dumps: format expects 'table' or 'json', got {format!r}")
    if sort_by not in SORT_KEYS:
        raise ParamError(
            f"profiler.dumps: sort_by expects one of {sorted(SORT_KEYS)}, got {sort_by!r}"
        )
    for name, value in (("reset", reset), ("ascending", ascending)):
        if value not in (True, False):
            raise ParamError(f"profiler.dumps: {name} expects True or False, got {value!r}")


def as_json(rec: Recorder, sort_by: str, ascending: bool) -> str:
    times, memory = collect(rec)
    doc: dict[str, Any] = {"Time": {}, "Memory": {}, "Unit": {"Time": "ms", "Memory": "kB"}}
    for category in sorted(times):
        rows = _sorted(times[category], sort_by, ascending)
        doc["Time"][category] = {name: stat.as_dict() for name, stat in rows}
    for category in sorted(memory):
        rows = _sorted(memory[category], sort_by, ascending)
        doc["Memory"][category] = {name: stat.as_dict(with_total=False) for name, stat in rows}
    return json.dumps(doc, indent=4)


def _row(*cells: Any) -> str:
    name, rest = str(cells[0]), cells[1:]
    text = f"{name:<30}" if len(name) < 30 else name + " "
    text += f"{rest[0]:>11}"
    for cell in rest[1:]:
        text += f"{cell:>17.4f}" if isinstance(cell, float) else f"{cell:>17}"
    return text


def as_table(rec: Recorder, sort_by: str, ascending: bool) -> str:
    times, memory = collect(rec)
    lines = ["", "Profile Statistics:", "\tNote the difference in units for different entries."]
    for category in sorted(memory):
        lines += [category, _RULE]
        lines.append(_row("Name", "Total Count", "Min Use  (kB)", "Max Use  (kB)", "Avg Use  (kB)"))
        lines.append(_row("----", "-----------", "-------------", "-------------", "-------------"))
        for name, s in _sorted(memory[category], sort_by, ascending):
            lines.append(_row(name, s.count, s.min, s.max, s.avg))
        lines.append("")
    for category in sorted(times):
        lines += [category, _RULE]
        lines.append(
            _row(
                "Name",
                "Total Count",
                "Time (ms)",
                "Min Time (ms)",
                "Max Time (ms)",
                "Avg Time (ms)",
            )
        )
        lines.append(
            _row(
                "----",
                "-----------",
                "---------",
                "-------------",
                "-------------",
                "-------------",
            )
        )
        for name, s in _sorted(times[category], sort_by, ascending):
            lines.append(_row(name, s.count, s.total, s.min, s.max, s.avg))
        lines.append("")
    return "\n".join(lines) + "\n"
