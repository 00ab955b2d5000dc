"""Engine fixtures: a fresh engine of each type per test, shut down afterwards."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from nnvmpy.engine import (
    ENGINE_TYPES,
    Engine,
    NaiveEngine,
    ThreadedEngine,
    ThreadedEnginePerDevice,
)

ENGINE_NAMES = sorted(ENGINE_TYPES)
THREADED_NAMES = [n for n in ENGINE_NAMES if n != "NaiveEngine"]


def make_engine(name: str, workers: int = 2) -> Engine:
    """An engine of type ``name`` with ``workers`` threads per pool (config not consulted)."""
    if name == "ThreadedEngine":
        return ThreadedEngine(num_workers=workers)
    if name == "ThreadedEnginePerDevice":
        return ThreadedEnginePerDevice(cpu_workers=workers, gpu_workers=workers)
    assert name == "NaiveEngine"
    return NaiveEngine()


@pytest.fixture(params=ENGINE_NAMES)
def engine(request: pytest.FixtureRequest) -> Iterator[Engine]:
    eng = make_engine(request.param)
    yield eng
    eng.shutdown()


@pytest.fixture(params=THREADED_NAMES)
def threaded_engine(request: pytest.FixtureRequest) -> Iterator[Engine]:
    eng = make_engine(request.param)
    yield eng
    eng.shutdown()


@pytest.fixture(params=THREADED_NAMES)
def one_worker_engine(request: pytest.FixtureRequest) -> Iterator[Engine]:
    eng = make_engine(request.param, workers=1)
    yield eng
    eng.shutdown()
