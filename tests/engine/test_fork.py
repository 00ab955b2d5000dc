"""After os.fork() the child gets a working engine (threads and locks reset at fork)."""

from __future__ import annotations

import os
import threading
import time

import pytest

from nnvmpy.base import cpu
from nnvmpy.engine import Engine, RunContext

CTX = cpu()

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


def _chain(eng: Engine, n: int) -> int:
    v = eng.new_var()
    box = [0]
    for _ in range(n):
        eng.push_sync(lambda rc: box.__setitem__(0, box[0] + 1), CTX, [], [v])
    eng.wait_for_var(v)
    return box[0]


@pytest.mark.timeout(60)
def test_child_pushes_and_waits_after_fork(engine: Engine, run_in_child) -> None:
    assert _chain(engine, 50) == 50  # the parent's workers are running now

    def child() -> bool:
        ok = _chain(engine, 200) == 200
        engine.wait_for_all()
        return ok

    assert run_in_child(child) == 0
    assert _chain(engine, 50) == 50  # and the parent still works


@pytest.mark.timeout(60)
def test_fork_waits_for_work_in_flight(engine: Engine, run_in_child) -> None:
    v = engine.new_var()
    data: dict[str, int] = {}

    def slow(rc: RunContext) -> None:
        time.sleep(0.05)
        data["v"] = 1

    engine.push_sync(slow, CTX, [], [v])

    def child() -> bool:
        # The fork waited for `slow`, so the child sees its result and a free variable.
        engine.push_sync(lambda rc: data.__setitem__("v", data["v"] + 1), CTX, [], [v])
        engine.wait_for_var(v)
        return data == {"v": 2}

    assert run_in_child(child) == 0
    engine.wait_for_var(v)
    assert data == {"v": 1}


@pytest.mark.timeout(60)
def test_fork_from_a_busy_process_with_idle_workers(threaded_engine: Engine, run_in_child) -> None:
    eng = threaded_engine
    assert _chain(eng, 10) == 10
    stop = threading.Event()

    # Another thread keeps pushing while we fork: the fork hook holds the engine lock.
    def pusher() -> None:
        while not stop.is_set():
            _chain(eng, 5)

    t = threading.Thread(target=pusher)
    t.start()
    try:
        for _ in range(3):
            assert run_in_child(lambda: _chain(eng, 100) == 100) == 0
    finally:
        stop.set()
        t.join()
