"""The engines record each operation while the profiler runs: name, device, thread, span.

Spans are checked against what the pushed function itself measured (a sleep of known
length, time.perf_counter around the push), counts against the pushes the test made.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy import engine, profiler
from nnvmpy.kernel import storage
from nnvmpy.profiler.recorder import RECORDER

ENGINES = sorted(engine.ENGINE_TYPES)


def _start(trace_file: Path, **config: object) -> None:
    profiler.set_config(profile_all=True, aggregate_stats=True, filename=str(trace_file), **config)
    profiler.set_state("run")


def _trace(trace_file: Path) -> list[dict]:
    profiler.dump()
    return json.loads(trace_file.read_text())["traceEvents"]


@pytest.mark.parametrize("name", ENGINES)
def test_imperative_ops_counted_by_name(fresh_profiler: Path, name: str) -> None:
    with engine.engine_type(name):
        _start(fresh_profiler)
        profiler.dumps(reset=True)
        inp = nv.nd.zeros((100, 100))
        y = nv.nd.sqrt(inp)
        inp = inp + 1
        inp = inp + 1
        nv.nd.waitall()
        profiler.set_state("stop")
    ops = json.loads(profiler.dumps(format="json"))["Time"]["operator"]
    assert ops["sqrt"]["Count"] == 1  # MXNet's test_aggregate_duplication
    assert ops["_plus_scalar"]["Count"] == 2
    np.testing.assert_array_equal(y.asnumpy(), 0)
    np.testing.assert_array_equal(inp.asnumpy(), 2)
    events = _trace(fresh_profiler)
    procs = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
    sqrt = next(e for e in events if e["name"] == "sqrt" and e["ph"] == "X")
    assert procs[sqrt["pid"]] == "cpu/0"
    assert sqrt["cat"] == "operator"
    assert sqrt["dur"] >= 0


@pytest.mark.parametrize("name", ENGINES)
def test_a_push_is_timed_where_it_runs(fresh_profiler: Path, name: str) -> None:
    eng = engine.create_engine(name)
    try:
        var = eng.new_var()
        ran_on: list[str] = []

        def work(run_ctx: object) -> None:
            ran_on.append(threading.current_thread().name)
            time.sleep(0.01)

        _start(fresh_profiler)
        before = time.perf_counter()
        eng.push_sync(work, nv.cpu(), [], [var], name="sleepy")
        eng.wait_for_all()
        elapsed_us = (time.perf_counter() - before) * 1e6
        profiler.set_state("stop")
    finally:
        eng.shutdown()
    events = _trace(fresh_profiler)
    (op,) = [e for e in events if e["name"] == "sleepy"]
    assert 10_000 <= op["dur"] <= elapsed_us
    rows = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e["name"] == "thread_name"}
    assert rows[(op["pid"], op["tid"])] == ran_on[0]
    if name != "NaiveEngine":
        assert ran_on[0].startswith("nnvmpy-")  # an engine worker's row


def test_async_push_ends_when_on_complete_is_called(fresh_profiler: Path) -> None:
    eng = engine.create_engine("ThreadedEngine")
    try:
        var = eng.new_var()

        def start(run_ctx: object, on_complete: object) -> None:
            def later() -> None:
                time.sleep(0.015)
                on_complete()  # type: ignore[operator]

            threading.Thread(target=later).start()

        _start(fresh_profiler)
        eng.push_async(start, nv.cpu(), [], [var], name="async_op")
        eng.wait_for_all()
        profiler.set_state("stop")
    finally:
        eng.shutdown()
    (op,) = [e for e in _trace(fresh_profiler) if e["name"] == "async_op"]
    assert op["dur"] >= 15_000


@pytest.mark.parametrize("name", ENGINES)
def test_a_failing_push_is_recorded_and_still_raises(fresh_profiler: Path, name: str) -> None:
    eng = engine.create_engine(name)
    try:
        var = eng.new_var()

        def boom(run_ctx: object) -> None:
            raise ValueError("boom")

        _start(fresh_profiler)
        eng.push_sync(boom, nv.cpu(), [], [var], name="boom_op")
        with pytest.raises(nv.EngineError, match="boom"):
            eng.wait_for_all()
        eng.push_sync(lambda rc: None, nv.cpu(), [], [eng.new_var()], name="after")
        eng.wait_for_all()  # the engine keeps working
        profiler.set_state("stop")
    finally:
        eng.shutdown()
    names = [e["name"] for e in _trace(fresh_profiler) if e.get("cat") == "operator"]
    assert names.count("boom_op") == 1
    assert names.count("after") == 1


def test_nothing_is_recorded_while_stopped_or_paused(fresh_profiler: Path) -> None:
    profiler.set_config(profile_all=True, filename=str(fresh_profiler))
    x = nv.nd.ones((10,)) + 1
    profiler.set_state("run")
    profiler.pause()
    x = x * 2
    profiler.resume()
    profiler.pause()
    nv.nd.waitall()
    profiler.set_state("stop")
    assert RECORDER.ops == []
    np.testing.assert_array_equal(x.asnumpy(), 4)


def test_memory_counter_follows_the_storage_pool(fresh_profiler: Path) -> None:
    _start(fresh_profiler, profile_memory=True)
    big = nv.nd.ones((512, 1024))  # 2 MiB
    y = big * 3
    nv.nd.waitall()
    profiler.set_state("stop")
    samples = [e for e in _trace(fresh_profiler) if e.get("cat") == "Device Storage"]
    assert samples
    values = [e["args"]["Memory: cpu/0"] for e in samples]
    assert max(values) >= 2 * 2**20  # at least one 2 MiB array was live
    assert max(values) <= storage.stats(nv.cpu()).peak_bytes
    del big, y


@pytest.mark.skipif(
    not (Path(__file__).resolve().parents[2].parent / "shared" / "models").is_dir()
    and not Path("/work/shared/models").is_dir(),
    reason="shared model files not present",
)
def test_profiled_resnet18_training_step(fresh_profiler: Path) -> None:
    models = Path(__file__).resolve().parents[2].parent / "shared" / "models"
    if not models.is_dir():
        models = Path("/work/shared/models")
    symbol = nv.sym.load(str(models / "resnet18_v1-symbol.json"))
    inputs = ("data", "softmax_label")
    req = {n: "null" if n in inputs else "write" for n in symbol.list_arguments()}
    exe = symbol.simple_bind(nv.cpu(), grad_req=req, data=(2, 3, 224, 224))
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 3, 224, 224)).astype(np.float32)
    label = np.array([3, 997], np.float32)
    exe.forward(is_train=True, data=x, softmax_label=label)  # warm-up (compiles kernels)
    exe.backward()
    nv.nd.waitall()

    _start(fresh_profiler)
    before = time.perf_counter()
    exe.forward(is_train=True, data=x, softmax_label=label)
    exe.backward()
    nv.nd.waitall()
    wall_us = (time.perf_counter() - before) * 1e6
    profiler.set_state("stop")
    events = _trace(fresh_profiler)
    ops = [e for e in events if e.get("cat") == "operator" and e["ph"] == "X"]
    graph = json.loads(symbol.tojson())
    layers = [n for n in graph["nodes"] if n["op"] != "null"]
    by_node = {e.get("args", {}).get("node") for e in ops}
    # every layer of the forward pass ran as (at least) one profiled operation, named by op
    missing = {n["op"] for n in layers if n["name"] not in by_node}
    # fused element-wise groups, and BatchNorm -> relu pairs run as one node named after
    # the relu (_contrib_BatchNormWithReLU, passes/fuse_bn_relu.py)
    assert missing <= {"elemwise_add", "Activation", "BatchNorm"}, missing
    names = {e["name"] for e in ops}
    assert {"Convolution", "BatchNorm", "_backward_Convolution"} <= names
    assert {"_contrib_BatchNormWithReLU", "_backward_contrib_BatchNormWithReLU"} <= names
    start = min(e["ts"] for e in ops)
    end = max(e["ts"] + e["dur"] for e in ops)
    assert end - start <= wall_us  # the operations happened inside the measured step
    threads = {e["tid"] for e in ops}
    assert sum(e["dur"] for e in ops) <= wall_us * len(threads)
    stats = json.loads(profiler.dumps(format="json"))["Time"]["operator"]
    assert stats["Convolution"]["Count"] == sum(1 for n in layers if n["op"] == "Convolution")


def test_autostart_profiles_the_whole_run(tmp_path: Path) -> None:
    script = "import nnvmpy as nv\nx = nv.nd.ones((4,)) * 3\nprint(x.asnumpy())\n"
    env = {**os.environ, "NNVMPY_PROFILER_AUTOSTART": "1"}
    run = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    events = json.loads((tmp_path / "profile.json").read_text())["traceEvents"]
    assert "_mul_scalar" in {e["name"] for e in events if e.get("cat") == "operator"}
