"""Shutdown, restart after shutdown, and a clean interpreter exit with work in flight."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading

import pytest

from nnvmpy.base import NNVMError, cpu
from nnvmpy.engine import Engine, OnComplete, RunContext

CTX = cpu()


def _engine_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("nnvmpy-")]


def test_shutdown_stops_workers_and_a_push_restarts_them(threaded_engine: Engine) -> None:
    eng = threaded_engine
    before = set(_engine_threads())
    v = eng.new_var()
    box = [0]
    eng.push_sync(lambda rc: box.__setitem__(0, 1), CTX, [], [v])
    eng.shutdown()  # finishes the push first
    assert box == [1]
    assert not (set(_engine_threads()) - before), "workers still alive after shutdown"
    eng.push_sync(lambda rc: box.__setitem__(0, 2), CTX, [], [v])
    eng.wait_for_var(v)
    assert box == [2]


def test_on_complete_twice_is_an_error(engine: Engine) -> None:
    v = engine.new_var()
    errors: list[Exception] = []
    second_call_returned = threading.Event()

    def fn(rc: RunContext, on_complete: OnComplete) -> None:
        on_complete()
        try:
            on_complete()
        except NNVMError as e:
            errors.append(e)
        finally:
            second_call_returned.set()

    engine.push_async(fn, CTX, [], [v], name="twice")
    engine.wait_for_var(v)
    engine.wait_for_all()
    # the first call completes the op, so the waits above may return while the
    # worker is still inside the second call: wait for that call itself
    assert second_call_returned.wait(30)
    assert len(errors) == 1


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", ["ThreadedEngine", "ThreadedEnginePerDevice"])
def test_interpreter_exit_finishes_pending_work(name: str) -> None:
    script = textwrap.dedent(
        """
        import time
        from nnvmpy import engine
        from nnvmpy.base import cpu, gpu

        eng = engine.get_engine()
        v, w = eng.new_var(), eng.new_var()

        def slow(rc):
            time.sleep(0.2)

        def last(rc):
            print("last ran", flush=True)

        eng.push_sync(slow, cpu(), [], [v])
        eng.push_sync(slow, gpu(0), [v], [w])  # a second pool: plain threads, no GPU used
        eng.push_sync(last, cpu(), [w], [v])
        # exit without waiting: atexit finishes the work, then stops the workers
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", script],
        env={**os.environ, "NNVMPY_ENGINE_TYPE": name},
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "last ran"
    assert proc.stderr == ""
