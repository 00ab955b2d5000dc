"""set_config(continuous_dump=True, dump_period=s): the trace file kept current while profiling.

The test reads the file as a viewer would, while the profiler runs and without calling
dump(): it must parse as JSON each time and hold each event recorded so far exactly once.
Waits poll the file with a deadline (a few seconds on a loaded machine); no sleep in a
test is longer than a few dump periods (well under a second).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import nnvmpy as nv
from nnvmpy import profiler
from nnvmpy.profiler import trace

PERIOD = 0.05  # seconds between periodic dumps in these tests
DEADLINE = 10.0  # seconds to wait for a dump that should come after PERIOD


def _wait_for(what: str, cond: Callable[[], bool]) -> None:
    end = time.monotonic() + DEADLINE
    while not cond():
        if time.monotonic() > end:
            raise AssertionError(f"no {what} within {DEADLINE} s")
        time.sleep(PERIOD / 5)


def _events(trace_file: Path) -> list[dict[str, Any]] | None:
    """The file's events, or None while it does not exist yet."""
    try:
        text = trace_file.read_text()
    except FileNotFoundError:
        return None
    return json.loads(text).get("traceEvents", [])  # raises if the file is not complete JSON


def _span_names(trace_file: Path) -> list[str]:
    """The profiler.Event spans in the file."""
    return [e["name"] for e in _events(trace_file) or [] if e.get("cat") == "event"]


def _dump_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "nnvmpy-profiler-dump"]


def _start(trace_file: Path, **config: Any) -> None:
    profiler.set_config(
        filename=str(trace_file), continuous_dump=True, dump_period=PERIOD, **config
    )
    profiler.set_state("run")


def test_the_file_is_complete_json_after_every_periodic_dump(fresh_profiler: Path) -> None:
    _start(fresh_profiler, profile_all=True)
    sizes = []
    for i in range(4):
        with profiler.Event(f"step{i}"):
            x = nv.nd.ones((8,)) * i
        x.wait_to_read()
        _wait_for(f"dump of step{i}", lambda i=i: f"step{i}" in _span_names(fresh_profiler))
        assert _span_names(fresh_profiler) == [f"step{j}" for j in range(i + 1)]  # each once
        sizes.append(fresh_profiler.stat().st_size)
    assert sizes == sorted(sizes)  # appended, as MXNet's test_continuous_profile expects
    events = _events(fresh_profiler) or []
    assert [e["name"] for e in events if e.get("cat") == "operator"].count("_mul_scalar") == 4
    names = [e["args"]["name"] for e in events if e["name"] == "process_name"]
    assert len(names) == len(set(names))  # each process named once across the appends
    profiler.set_state("stop")


def test_periodic_dumps_stop_when_profiling_stops(fresh_profiler: Path) -> None:
    _start(fresh_profiler)
    assert len(_dump_threads()) == 1
    with profiler.Event("before_stop"):
        pass
    _wait_for("periodic dump", lambda: "before_stop" in _span_names(fresh_profiler))
    profiler.set_state("stop")
    assert _dump_threads() == []
    written = fresh_profiler.read_bytes()
    profiler.set_state("run")
    profiler.pause()  # records nothing, and the thread is running again
    assert len(_dump_threads()) == 1
    profiler.set_state("stop")
    time.sleep(4 * PERIOD)
    assert fresh_profiler.read_bytes() == written
    profiler.dump()  # what was recorded is all still there for a final dump
    assert _span_names(fresh_profiler) == ["before_stop"]


def test_no_periodic_dump_without_continuous_dump(fresh_profiler: Path) -> None:
    profiler.set_config(filename=str(fresh_profiler), continuous_dump=False, dump_period=PERIOD)
    profiler.set_state("run")
    with profiler.Event("quiet"):
        pass
    time.sleep(4 * PERIOD)
    assert not fresh_profiler.exists()
    assert _dump_threads() == []
    profiler.set_config(filename=str(fresh_profiler), continuous_dump=True, dump_period=PERIOD)
    _wait_for("dump after set_config", lambda: "quiet" in _span_names(fresh_profiler))
    profiler.set_config(filename=str(fresh_profiler), continuous_dump=False)
    assert _dump_threads() == []  # switched off while running
    profiler.set_state("stop")


def test_a_removed_or_overwritten_file_is_written_whole_again(fresh_profiler: Path) -> None:
    _start(fresh_profiler)
    with profiler.Event("first"):
        pass
    _wait_for("first dump", lambda: "first" in _span_names(fresh_profiler))
    fresh_profiler.unlink()
    with profiler.Event("second"):
        pass
    _wait_for("rewrite", lambda: "second" in _span_names(fresh_profiler))
    assert _span_names(fresh_profiler) == ["first", "second"]
    fresh_profiler.write_text("{}")
    with profiler.Event("third"):
        pass
    _wait_for("rewrite", lambda: "third" in _span_names(fresh_profiler))
    assert _span_names(fresh_profiler) == ["first", "second", "third"]
    profiler.set_state("stop")


@pytest.mark.parametrize("other_writer", ["removes", "overwrites"])
def test_a_file_changed_right_after_a_dump_renames_it_is_written_whole_again(
    fresh_profiler: Path, monkeypatch: pytest.MonkeyPatch, other_writer: str
) -> None:
    """The window the test above can only hit by chance, made certain: the file is removed
    or overwritten between the dump's rename and the dump's return. The dump must keep
    the stamp of what it wrote, so the next one sees the change and writes the file whole
    (it used to stat by name there: FileNotFoundError, or appends into the other file)."""
    real_replace = trace.os.replace
    armed = [False]

    def replace_then_other_writer(src: Any, dst: Any) -> None:
        real_replace(src, dst)
        if armed[0] and str(dst) == str(fresh_profiler):
            armed[0] = False
            if other_writer == "removes":
                fresh_profiler.unlink()
            else:
                fresh_profiler.write_text("{}")

    monkeypatch.setattr(trace.os, "replace", replace_then_other_writer)
    profiler.set_config(filename=str(fresh_profiler), continuous_dump=False)
    profiler.set_state("run")
    with profiler.Event("first"):
        pass
    profiler.dump(False)
    with profiler.Event("second"):
        pass
    armed[0] = True
    profiler.dump(False)  # what the periodic thread does: it must not raise
    assert not armed[0], "the other writer did not run"
    with profiler.Event("third"):
        pass
    profiler.dump(False)
    assert _span_names(fresh_profiler) == ["first", "second", "third"]
    profiler.set_state("stop")


def test_a_finished_dump_starts_a_new_trace_for_the_periodic_dumps(fresh_profiler: Path) -> None:
    _start(fresh_profiler)
    with profiler.Event("old"):
        pass
    profiler.dump(True)  # by hand, while the thread dumps too
    with profiler.Event("new"):
        pass
    _wait_for("the new trace", lambda: "new" in _span_names(fresh_profiler))
    assert _span_names(fresh_profiler) == ["new"]
    profiler.set_state("stop")


def test_markers_counters_and_dump_false_in_a_loop(fresh_profiler: Path) -> None:
    """MXNet's test_continuous_profile_and_instant_marker, checking the file each time."""
    _start(fresh_profiler, aggregate_stats=True)
    domain = profiler.Domain("PythonDomain::test_continuous_profile")
    counter = profiler.Counter(domain, "PythonCounter")
    last_size = 0
    for i in range(5):
        profiler.Marker(domain, f"StartIteration-{i}").mark("process")
        with profiler.Event("event"):
            counter += 1
        profiler.dump(False)
        events = _events(fresh_profiler) or []
        marks = [e["name"] for e in events if e["ph"] == "i"]
        assert marks == [f"StartIteration-{j}" for j in range(i + 1)]
        values = [e["args"]["PythonCounter"] for e in events if e["ph"] == "C"]
        assert values == list(range(1, i + 2))
        size = fresh_profiler.stat().st_size
        assert size >= last_size
        last_size = size
    assert len(profiler.dumps()) > 0
    profiler.set_state("stop")


def test_a_failing_periodic_dump_warns_once_and_stops(fresh_profiler: Path) -> None:
    missing = fresh_profiler.parent / "no_such_folder" / "trace.json"
    # the warning comes from the dump thread, after _start returned: wait inside the block
    with pytest.warns(RuntimeWarning, match=r"continuous dump to .*trace.json failed"):  # noqa: PT031
        _start(missing)
        _wait_for("the dump thread to give up", lambda: _dump_threads() == [])
    with pytest.raises(FileNotFoundError):
        profiler.dump()  # by hand, the error is yours
    profiler.set_config(filename=str(fresh_profiler), continuous_dump=True, dump_period=PERIOD)
    with profiler.Event("recovered"):
        pass
    _wait_for("dump to the good file", lambda: "recovered" in _span_names(fresh_profiler))
    profiler.set_state("stop")


def test_dump_period_must_be_positive(fresh_profiler: Path) -> None:
    with pytest.raises(nv.ParamError, match="dump_period"):
        profiler.set_config(continuous_dump=True, dump_period=0)
    profiler.set_config(filename=str(fresh_profiler), dump_period=0.5)  # still usable
    assert profiler.get_config().dump_period == 0.5


@pytest.mark.parametrize("copy_limit", [0, trace._COPY_LIMIT])
def test_appends_replace_a_small_file_and_extend_a_large_one_in_place(
    fresh_profiler: Path, monkeypatch: pytest.MonkeyPatch, copy_limit: int
) -> None:
    monkeypatch.setattr(trace, "_COPY_LIMIT", copy_limit)  # 0: every file counts as large
    profiler.set_config(filename=str(fresh_profiler), continuous_dump=False)
    profiler.set_state("run")
    with profiler.Event("e0"):
        pass
    profiler.dump(False)
    for i in range(1, 3):
        with profiler.Event(f"e{i}"):
            pass
        with open(fresh_profiler, "rb") as reader:  # a viewer that opened the file before
            profiler.dump(False)
            seen = json.loads(reader.read())["traceEvents"]
        names = [e["name"] for e in seen if e.get("cat") == "event"]
        if copy_limit:  # the reader keeps the complete file it opened
            assert names == [f"e{j}" for j in range(i)]
        else:  # the same file, extended
            assert names == [f"e{j}" for j in range(i + 1)]
        assert _span_names(fresh_profiler) == [f"e{j}" for j in range(i + 1)]
    profiler.set_state("stop")
