"""Choosing the engine: NNVMPY_ENGINE_TYPE, set_engine, engine_type."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from nnvmpy import engine
from nnvmpy.base import NNVMError, cpu, gpu
from nnvmpy.engine import (
    ENGINE_TYPES,
    NaiveEngine,
    ThreadedEngine,
    ThreadedEnginePerDevice,
)


@pytest.fixture
def restore_engine() -> Iterator[None]:
    """Leave the process-wide engine as the test found it."""
    before = engine.get_engine()
    yield
    current = engine.set_engine(before)
    if current is not None and current is not before:
        current.shutdown()


def test_engine_types_names_every_engine() -> None:
    expected = {
        "NaiveEngine": NaiveEngine,
        "ThreadedEngine": ThreadedEngine,
        "ThreadedEnginePerDevice": ThreadedEnginePerDevice,
    }
    assert expected == ENGINE_TYPES


@pytest.mark.parametrize("name", sorted(ENGINE_TYPES))
def test_env_var_picks_the_engine(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    monkeypatch.setenv("NNVMPY_ENGINE_TYPE", name)
    eng = engine.create_engine()
    try:
        assert type(eng) is ENGINE_TYPES[name]
    finally:
        eng.shutdown()


def test_default_engine_is_per_device(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NNVMPY_ENGINE_TYPE", raising=False)
    eng = engine.create_engine()
    assert type(eng) is ThreadedEnginePerDevice
    eng.shutdown()


def test_unknown_engine_lists_the_valid_names(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NNVMPY_ENGINE_TYPE", "WarpDrive")
    with pytest.raises(NNVMError, match="WarpDrive") as info:
        engine.create_engine()
    for name in ENGINE_TYPES:
        assert name in str(info.value)
    with pytest.raises(NNVMError, match="ThreadedEnginePerDevice"):
        engine.set_engine("nope")


def test_worker_counts_come_from_the_config(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NNVMPY_CPU_WORKER_NTHREADS", "3")
    monkeypatch.setenv("NNVMPY_GPU_WORKER_NTHREADS", "1")
    eng = ThreadedEnginePerDevice()
    assert eng._pool.nthreads == 3
    assert eng._pool_for(gpu(1), engine.FnProperty.NORMAL).nthreads == 1
    assert ThreadedEngine()._pool.nthreads == 3
    with pytest.raises(NNVMError, match="at least 1"):
        ThreadedEngine(num_workers=0)


def test_reset_engine_rereads_the_config(
    monkeypatch: pytest.MonkeyPatch, restore_engine: None
) -> None:
    monkeypatch.setenv("NNVMPY_ENGINE_TYPE", "NaiveEngine")
    engine.reset_engine()
    assert type(engine.get_engine()) is NaiveEngine
    assert engine.get_engine() is engine.get_engine()
    monkeypatch.setenv("NNVMPY_ENGINE_TYPE", "ThreadedEngine")
    engine.reset_engine()
    assert type(engine.get_engine()) is ThreadedEngine


def test_engine_type_switches_temporarily(restore_engine: None) -> None:
    outer = engine.get_engine()
    with engine.engine_type("NaiveEngine") as eng:
        assert engine.get_engine() is eng
        assert type(eng) is NaiveEngine
        v = eng.new_var()
        box: list[int] = []
        eng.push_sync(lambda rc: box.append(1), cpu(), [], [v])
        assert box == [1]  # naive: ran at once
    assert engine.get_engine() is outer
    mine = ThreadedEngine(num_workers=1)
    with engine.engine_type(mine) as eng:
        assert eng is mine
        assert engine.get_engine() is mine
    assert engine.get_engine() is outer
    mine.shutdown()


def _held_until_released(eng: engine.Engine, var: engine.Var, log: list[str]) -> threading.Timer:
    """Push to `eng` a write of `var` that finishes 0.3 s from now (a slow kernel)."""
    gate = threading.Event()

    def slow(rc: engine.RunContext) -> None:
        gate.wait(10)
        log.append("pushed before the switch")

    eng.push_sync(slow, cpu(), [], [var])
    timer = threading.Timer(0.3, gate.set)
    timer.start()
    return timer


def test_set_engine_lets_the_old_engine_finish_first(restore_engine: None) -> None:
    """Variables outlive engines (NDArrays', the devices' random and scratch resources),
    and an engine does not see another's queues: a push made after the switch must not
    run before one made before it on the same variable."""
    old = ThreadedEngine(num_workers=1)
    engine.set_engine(old)
    v, log = old.new_var(), []
    timer = _held_until_released(old, v, log)
    with engine.engine_type("NaiveEngine") as naive:
        naive.push_sync(lambda rc: log.append("pushed after it"), cpu(), [], [v])
    timer.join()
    old.wait_for_all()
    assert log == ["pushed before the switch", "pushed after it"]


def test_leaving_engine_type_lets_its_engine_finish_first(restore_engine: None) -> None:
    outer = NaiveEngine()
    engine.set_engine(outer)
    mine = ThreadedEngine(num_workers=1)
    v, log = outer.new_var(), []
    with engine.engine_type(mine):
        timer = _held_until_released(mine, v, log)
    outer.push_sync(lambda rc: log.append("pushed after it"), cpu(), [], [v])
    timer.join()
    mine.shutdown()
    assert log == ["pushed before the switch", "pushed after it"]
