"""nv.profiler's MXNet API: config, state, the profiling objects, dumps and dump.

Durations are checked against time.perf_counter read around the profiled code (an
independent clock reading), values against what the test set, formats against MXNet
1.9.1's output (the table header lines and JSON layout its dumps() printed in .mxenv).
"""

from __future__ import annotations

import json
import threading
import time
import warnings
from collections import OrderedDict
from pathlib import Path

import pytest

import nnvmpy as nv
from nnvmpy import profiler
from nnvmpy.profiler.recorder import RECORDER

# what MXNet 1.9.1's dumps() printed for a table (header of every time category)
MX_TIME_HEADER = (
    "Name                          Total Count        Time (ms)    Min Time (ms)"
    "    Max Time (ms)    Avg Time (ms)"
)
MX_TIME_RULE = (
    "----                          -----------        ---------    -------------"
    "    -------------    -------------"
)


def _run(trace_file: Path, **config: object) -> None:
    profiler.set_config(filename=str(trace_file), aggregate_stats=True, **config)
    profiler.set_state("run")


def test_set_config_refuses_unknown_keys_and_bad_values(fresh_profiler: Path) -> None:
    with pytest.raises(nv.ParamError, match=r"profiler.set_config: unknown parameter 'bogus'"):
        profiler.set_config(bogus=1)
    with pytest.raises(nv.ParamError, match="profile_all"):
        profiler.set_config(profile_all="maybe")
    with pytest.raises(nv.ParamError, match="profile_process"):
        profiler.set_config(profile_process="client")
    profiler.set_config(profile_all=True, filename=str(fresh_profiler))  # still usable
    assert profiler.get_config().filename == str(fresh_profiler)
    assert profiler.get_config().aggregate_stats is False  # MXNet: unset keys take defaults


def test_set_state_and_pause_switch_recording(fresh_profiler: Path) -> None:
    with pytest.raises(nv.ParamError, match=r"set_state: state expects 'run' or 'stop'"):
        profiler.set_state("go")
    assert not RECORDER.on
    profiler.set_state("run")
    assert RECORDER.on
    profiler.pause()
    assert not RECORDER.on
    profiler.resume()
    assert RECORDER.on
    profiler.set_config(
        profile_symbolic=False, profile_imperative=False, filename=str(fresh_profiler)
    )
    assert not RECORDER.on  # no operator profiling asked for
    profiler.set_state("stop")
    assert not RECORDER.on


def test_task_frame_event_record_their_spans(fresh_profiler: Path) -> None:
    _run(fresh_profiler)
    domain = profiler.Domain("PythonDomain")
    task = domain.new_task("work")
    before = time.perf_counter()
    task.start()
    time.sleep(0.02)
    task.stop()
    elapsed_ms = (time.perf_counter() - before) * 1e3
    frame = profiler.Frame(domain, "frame")
    frame.start()
    frame.stop()
    with profiler.Event("event"):
        pass
    stats = json.loads(profiler.dumps(format="json"))["Time"]
    work = stats["PythonDomain"]["work"]
    assert work["Count"] == 1
    assert 20.0 <= work["Total"] <= elapsed_ms + 0.01
    assert stats["PythonDomain,frame"]["frame"]["Count"] == 1
    assert stats["event"]["event"]["Count"] == 1
    assert str(task) == "work"
    assert str(domain) == "PythonDomain"


def test_objects_record_nothing_while_stopped_or_paused(fresh_profiler: Path) -> None:
    _run(fresh_profiler)
    profiler.pause()
    task = profiler.Task(profiler.Domain("d"), "paused")
    task.start()
    task.stop()
    profiler.resume()
    with profiler.Event("resumed"):
        pass
    profiler.set_state("stop")
    with profiler.Event("stopped"):
        pass
    profiler.set_state("run")
    stats = json.loads(profiler.dumps(format="json"))["Time"]
    assert "d" not in stats
    assert list(stats["event"]) == ["resumed"]


def test_counter_values_and_markers_in_the_trace(fresh_profiler: Path) -> None:
    _run(fresh_profiler)
    domain = profiler.Domain("counting")
    counter = domain.new_counter("c", 5)
    counter += 3
    counter.decrement(2)
    counter -= 1
    counter.increment()
    counter.set_value(40)
    domain.new_marker("here").mark("thread")
    with pytest.raises(nv.ParamError, match=r"Marker.mark: scope expects one of"):
        domain.new_marker("bad").mark("galaxy")
    profiler.dump()
    events = json.loads(fresh_profiler.read_text())["traceEvents"]
    values = [e["args"]["c"] for e in events if e["ph"] == "C" and e["name"] == "c"]
    assert values == [5, 8, 6, 5, 6, 40]
    (mark,) = [e for e in events if e["ph"] == "i"]
    assert mark["name"] == "here"
    assert mark["s"] == "t"
    assert mark["cat"] == "counting,instant_marker"
    names = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
    assert names[mark["pid"]] == "counting,instant_marker"


def test_dumps_is_empty_without_aggregate_stats(fresh_profiler: Path) -> None:
    profiler.set_config(filename=str(fresh_profiler))
    profiler.set_state("run")
    with profiler.Event("e"):
        pass
    assert profiler.dumps() == ""


def test_dumps_table_has_mxnets_layout(fresh_profiler: Path) -> None:
    _run(fresh_profiler)
    for _ in range(3):
        with profiler.Event("tick"):
            time.sleep(0.001)
    lines = profiler.dumps().splitlines()
    assert lines[:3] == [
        "",
        "Profile Statistics:",
        "\tNote the difference in units for different entries.",
    ]
    at = lines.index("event")
    assert lines[at + 1 : at + 4][:3] == ["=================", MX_TIME_HEADER, MX_TIME_RULE]
    row = lines[at + 4]
    assert row.startswith("tick" + " " * 26)
    count, total, low, high, avg = row[30:].split()
    assert int(count) == 3
    assert float(low) <= float(avg) <= float(high)
    assert float(total) == pytest.approx(3 * float(avg), abs=2e-4)
    assert float(low) >= 1.0  # each slept 1 ms


@pytest.mark.parametrize("ascending", [False, True])
@pytest.mark.parametrize("sort_by", ["total", "avg", "min", "max", "count"])
def test_dumps_json_sorts_rows(fresh_profiler: Path, sort_by: str, ascending: bool) -> None:
    _run(fresh_profiler)
    for name, n, pause in (("a", 1, 0.003), ("b", 3, 0.0), ("c", 2, 0.001)):
        for _ in range(n):
            with profiler.Event(name):
                time.sleep(pause)
    doc = json.loads(
        profiler.dumps(format="json", sort_by=sort_by, ascending=ascending),
        object_pairs_hook=OrderedDict,
    )
    assert set(doc) == {"Time", "Memory", "Unit"}
    assert doc["Unit"] == {"Time": "ms", "Memory": "kB"}
    key = {"total": "Total", "avg": "Avg", "min": "Min", "max": "Max", "count": "Count"}[sort_by]
    values = [row[key] for row in doc["Time"]["event"].values()]
    assert values == sorted(values, reverse=not ascending)
    assert doc["Time"]["event"]["b"]["Count"] == 3


def test_dumps_reset_and_bad_arguments(fresh_profiler: Path) -> None:
    _run(fresh_profiler)
    with profiler.Event("before"):
        pass
    assert "before" in profiler.dumps(reset=True)
    with profiler.Event("after"):
        pass
    text = profiler.dumps(format="json")
    assert "before" not in text
    assert "after" in text
    with pytest.raises(nv.ParamError, match="format expects 'table' or 'json'"):
        profiler.dumps(format="xml")
    with pytest.raises(nv.ParamError, match="sort_by expects one of"):
        profiler.dumps(sort_by="median")
    with pytest.raises(nv.ParamError, match="ascending expects True or False"):
        profiler.dumps(ascending="yes")  # type: ignore[arg-type]
    assert "after" in profiler.dumps()  # still usable


def test_dump_writes_a_trace_and_finished_starts_a_new_one(fresh_profiler: Path) -> None:
    _run(fresh_profiler)
    sizes = []
    for i in range(3):
        with profiler.Event(f"step{i}"):
            pass
        profiler.dump(False)
        sizes.append(fresh_profiler.stat().st_size)
    assert sizes == sorted(sizes)
    assert sizes[0] < sizes[-1]
    doc = json.loads(fresh_profiler.read_text())
    assert doc["displayTimeUnit"] == "ms"
    names = [e["name"] for e in doc["traceEvents"] if e["ph"] == "X"]
    assert names == ["step0", "step1", "step2"]
    profiler.dump(True)
    with profiler.Event("fresh"):
        pass
    profiler.dump()
    doc = json.loads(fresh_profiler.read_text())
    assert [e["name"] for e in doc["traceEvents"] if e["ph"] == "X"] == ["fresh"]


def test_spans_of_other_threads_get_their_own_rows(fresh_profiler: Path) -> None:
    _run(fresh_profiler)

    def work() -> None:
        with profiler.Event("in_thread"):
            time.sleep(0.001)

    t = threading.Thread(target=work, name="helper-thread")
    t.start()
    t.join()
    with profiler.Event("in_main"):
        pass
    profiler.dump()
    events = json.loads(fresh_profiler.read_text())["traceEvents"]
    spans = {e["name"]: e for e in events if e["ph"] == "X"}
    assert spans["in_thread"]["tid"] != spans["in_main"]["tid"]
    rows = {e["tid"]: e["args"]["name"] for e in events if e["name"] == "thread_name"}
    assert rows[spans["in_thread"]["tid"]] == "helper-thread"


def test_deprecated_spellings_warn_and_work(fresh_profiler: Path) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        profiler.profiler_set_config(mode="all", filename=str(fresh_profiler))
        profiler.profiler_set_state("run")
        profiler.dump_profile()
    assert len(caught) == 3
    assert all("deprecated" in str(w.message) for w in caught)
    assert profiler.get_config().profile_all is True
    assert fresh_profiler.exists()


def test_symbolic_and_imperative_operations_can_be_profiled_apart(fresh_profiler: Path) -> None:
    ctx = nv.cpu()
    trace = str(fresh_profiler)
    profiler.set_config(profile_symbolic=False, profile_imperative=True, filename=trace)
    profiler.set_state("run")
    RECORDER.record_op("relu", ctx, 0, 1)  # what an nd call pushes
    RECORDER.record_op("fc1 (FullyConnected)", ctx, 0, 1)  # what a bound graph pushes
    profiler.set_config(profile_symbolic=True, profile_imperative=False, filename=trace)
    RECORDER.record_op("relu", ctx, 0, 1)
    RECORDER.record_op("fc1 (FullyConnected)", ctx, 0, 1)
    assert [op.name for op in RECORDER.ops] == ["relu", "fc1 (FullyConnected)"]
    profiler.set_config(profile_all=True, aggregate_stats=True, filename=trace)
    rows = json.loads(profiler.dumps(format="json"))["Time"]["operator"]
    assert set(rows) == {"relu", "FullyConnected"}  # a node's operation counts by op
