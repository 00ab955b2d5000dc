"""dumps() keeps running statistics between calls: the numbers must be those of all the
records since the reset mark, however many dumps() came in between (hand-computed values)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nnvmpy import profiler
from nnvmpy.profiler import stats
from nnvmpy.profiler.recorder import RECORDER


def _run(trace: Path) -> None:
    profiler.set_config(filename=str(trace), aggregate_stats=True, continuous_dump=False)
    profiler.set_state("run")


def _rows(category: str) -> dict[str, dict[str, float]]:
    return json.loads(profiler.dumps(format="json"))["Time"].get(category, {})


def test_counter_stats_are_exact_across_interleaved_dumps(fresh_profiler: Path) -> None:
    _run(fresh_profiler)
    domain = profiler.Domain("D")
    counter = profiler.Counter(domain, "c")
    counter.set_value(5)
    counter += 1  # 6
    counter += 3  # 9
    assert _rows("D")["c"]["Count"] == 3
    counter -= 2  # 7
    row = _rows("D")["c"]
    # values 5, 6, 9, 7 (shown /1000 in the time columns); the total is the current value
    assert row["Count"] == 4
    assert row["Min"] == 0.005
    assert row["Max"] == 0.009
    assert row["Total"] == 0.007


def test_span_counts_accumulate_then_restart_at_reset(fresh_profiler: Path) -> None:
    _run(fresh_profiler)
    for expected in (1, 2, 3):
        event = profiler.Event("e")
        event.start()
        event.stop()
        assert _rows("event")["e"]["Count"] == expected
    profiler.dumps(reset=True)
    assert _rows("event") == {}
    event = profiler.Event("e")
    event.start()
    event.stop()
    assert _rows("event")["e"]["Count"] == 1


def test_a_cleared_recorder_starts_the_statistics_over(fresh_profiler: Path) -> None:
    _run(fresh_profiler)
    task = profiler.Task(profiler.Domain("D"), "t")
    for _ in range(2):
        task.start()
        task.stop()
    assert _rows("D")["t"]["Count"] == 2
    RECORDER.clear()
    assert _rows("D") == {}
    task.start()
    task.stop()
    assert _rows("D")["t"]["Count"] == 1


def test_running_statistics_read_only_the_new_records(
    fresh_profiler: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _run(fresh_profiler)
    for _ in range(5):
        event = profiler.Event("e")
        event.start()
        event.stop()
    assert _rows("event")["e"]["Count"] == 5
    seen: list[int] = []
    real_advance = stats._Running.advance

    def advance(self: stats._Running, rec: object) -> None:
        before = dict(self.done)
        real_advance(self, rec)  # type: ignore[arg-type]
        seen.append(sum(self.done[k] - before[k] for k in self.done))

    monkeypatch.setattr(stats._Running, "advance", advance)
    event = profiler.Event("e")
    event.start()
    event.stop()
    assert _rows("event")["e"]["Count"] == 6
    assert seen == [1]  # one new span record, not the whole run again
