"""The engine contract (DESIGN §6) on every engine: ordering, async, operators, deletion."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from nnvmpy.base import NNVMError, cpu
from nnvmpy.engine import Engine, FnProperty, OnComplete, RunContext, Var

CTX = cpu()
Interval = tuple[float, float]


def _recording(
    log: dict[str, Interval], key: str, hold: Callable[[], object]
) -> Callable[[RunContext], None]:
    """A function that records its (start, end) under ``key``; ``hold`` runs in between."""

    def fn(run_ctx: RunContext) -> None:
        start = time.perf_counter()
        hold()
        log[key] = (start, time.perf_counter())

    return fn


def _sleep(seconds: float) -> Callable[[], None]:
    return lambda: time.sleep(seconds)  # releases the GIL, so other workers may run


def test_engine_runs_writers_in_push_order(engine: Engine) -> None:
    v = engine.new_var()
    order: list[int] = []
    for i in range(300):
        engine.push_sync(lambda rc, i=i: order.append(i), CTX, mutate_vars=[v])
    engine.wait_for_var(v)
    assert order == list(range(300))


def test_readers_run_between_the_writers_around_them(engine: Engine) -> None:
    v = engine.new_var()
    log: dict[str, Interval] = {}
    engine.push_sync(_recording(log, "w1", _sleep(0.02)), CTX, [], [v])
    for r in ("r1", "r2", "r3"):
        engine.push_sync(_recording(log, r, _sleep(0.01)), CTX, [v], [])
    engine.push_sync(_recording(log, "w2", _sleep(0.0)), CTX, [], [v])
    engine.wait_for_var(v)
    for r in ("r1", "r2", "r3"):
        assert log["w1"][1] <= log[r][0], "a reader started before the earlier writer ended"
        assert log[r][1] <= log["w2"][0], "a writer started before an earlier reader ended"


def test_readers_of_a_var_overlap(threaded_engine: Engine) -> None:
    eng = threaded_engine
    v = eng.new_var()
    log: dict[str, Interval] = {}
    # Each reader waits at the barrier for the other: they can only pass it together.
    barrier = threading.Barrier(2, timeout=20)

    def hold() -> None:
        barrier.wait()
        time.sleep(0.005)

    eng.push_sync(_recording(log, "a", hold), CTX, [v], [])
    eng.push_sync(_recording(log, "b", hold), CTX, [v], [])
    eng.wait_for_var(v)
    (sa, ea), (sb, eb) = log["a"], log["b"]
    assert sa < eb, "two readers of one var did not run at the same time"
    assert sb < ea, "two readers of one var did not run at the same time"


def test_independent_writers_overlap(threaded_engine: Engine) -> None:
    eng = threaded_engine
    v, w = eng.new_var(), eng.new_var()
    log: dict[str, Interval] = {}
    barrier = threading.Barrier(2, timeout=20)
    eng.push_sync(_recording(log, "v", barrier.wait), CTX, [], [v])
    eng.push_sync(_recording(log, "w", barrier.wait), CTX, [], [w])
    eng.wait_for_all()
    assert log["v"][0] < log["w"][1]
    assert log["w"][0] < log["v"][1]


def test_readers_sharing_a_writer_see_its_value(engine: Engine) -> None:
    v, out1, out2 = engine.new_var(), engine.new_var(), engine.new_var()
    data: dict[str, int] = {}

    def write(rc: RunContext) -> None:
        time.sleep(0.01)
        data["v"] = 7

    engine.push_sync(write, CTX, [], [v])
    engine.push_sync(lambda rc: data.__setitem__("o1", data["v"] + 1), CTX, [v], [out1])
    engine.push_sync(lambda rc: data.__setitem__("o2", data["v"] * 2), CTX, [v], [out2])
    engine.wait_for_var(out1)
    engine.wait_for_var(out2)
    assert data == {"v": 7, "o1": 8, "o2": 14}


def test_var_in_const_and_mutate_is_a_write(engine: Engine) -> None:
    v = engine.new_var()
    order: list[int] = []
    for i in range(20):
        # duplicated and both-read-and-written vars must neither deadlock nor reorder
        engine.push_sync(lambda rc, i=i: order.append(i), CTX, [v, v], [v, v])
    engine.wait_for_var(v)
    assert order == list(range(20))
    assert v.version == 20


def test_push_async_completes_from_another_thread(engine: Engine) -> None:
    v, w = engine.new_var(), engine.new_var()
    data: dict[str, int] = {}

    def start(rc: RunContext, on_complete: OnComplete) -> None:
        def later() -> None:
            time.sleep(0.02)
            data["v"] = 41
            on_complete()

        threading.Thread(target=later).start()

    engine.push_async(start, CTX, [], [v], name="async-writer")
    engine.push_sync(lambda rc: data.__setitem__("w", data["v"] + 1), CTX, [v], [w])
    engine.wait_for_var(w)
    assert data == {"v": 41, "w": 42}


def test_operator_is_reusable_until_deleted(engine: Engine) -> None:
    v = engine.new_var()
    count = [0]

    def bump(rc: RunContext, on_complete: OnComplete) -> None:
        count[0] += 1
        on_complete()

    opr = engine.new_operator(bump, [], [v], name="bump")
    for _ in range(25):
        engine.push(opr, CTX)
    engine.wait_for_var(v)
    assert count[0] == 25
    engine.delete_operator(opr)
    with pytest.raises(NNVMError, match="bump"):
        engine.push(opr, CTX)


def test_delete_variable_runs_after_pending_uses(engine: Engine) -> None:
    v = engine.new_var()
    events: list[str] = []

    def use(name: str) -> Callable[[RunContext], None]:
        def fn(rc: RunContext) -> None:
            time.sleep(0.005)
            events.append(name)

        return fn

    engine.push_sync(use("write"), CTX, [], [v])
    engine.push_sync(use("read1"), CTX, [v], [])
    engine.push_sync(use("read2"), CTX, [v], [])
    engine.delete_variable(lambda rc: events.append("delete"), CTX, v)
    engine.wait_for_all()
    assert events[0] == "write"
    assert sorted(events[1:3]) == ["read1", "read2"]
    assert events[3] == "delete"
    with pytest.raises(NNVMError, match="deleted"):
        engine.push_sync(use("late"), CTX, [v], [])
    with pytest.raises(NNVMError, match="deleted"):
        engine.wait_for_var(v)


def test_priority_runs_higher_first_when_the_worker_frees(one_worker_engine: Engine) -> None:
    eng = one_worker_engine
    gate = threading.Event()
    started = threading.Event()
    order: list[str] = []

    def block(rc: RunContext) -> None:
        started.set()
        assert gate.wait(20)

    eng.push_sync(block, CTX, [], [eng.new_var()])
    assert started.wait(20)  # the only worker is now busy: the pushes below queue up
    pushes = [("low", -5), ("zero1", 0), ("high", 10), ("zero2", 0), ("mid", 3), ("hi2", 10)]
    for label, prio in pushes:
        eng.push_sync(lambda rc, s=label: order.append(s), CTX, [], [eng.new_var()], priority=prio)
    gate.set()
    eng.wait_for_all()
    assert order == ["high", "hi2", "mid", "zero1", "zero2", "low"]


def test_wait_for_all_waits_for_every_var(engine: Engine) -> None:
    vs = [engine.new_var() for _ in range(8)]
    done: list[int] = []
    lock = threading.Lock()

    def work(i: int) -> Callable[[RunContext], None]:
        def fn(rc: RunContext) -> None:
            time.sleep(0.001)
            with lock:
                done.append(i)

        return fn

    for i in range(64):
        engine.push_sync(work(i), CTX, [vs[(i + 1) % 8]], [vs[i % 8]])
    engine.wait_for_all()
    assert sorted(done) == list(range(64))


def test_wait_for_var_on_an_idle_var_returns(engine: Engine) -> None:
    v = engine.new_var()
    engine.wait_for_var(v)
    engine.wait_for_all()


def test_push_from_inside_a_pushed_function(engine: Engine) -> None:
    v, w = engine.new_var(), engine.new_var()
    data: dict[str, int] = {}

    def outer(rc: RunContext) -> None:
        data["v"] = 1
        engine.push_sync(lambda rc: data.__setitem__("w", 2), CTX, [], [w])

    engine.push_sync(outer, CTX, [], [v])
    engine.wait_for_var(v)
    engine.wait_for_var(w)
    assert data == {"v": 1, "w": 2}


def test_run_context_carries_the_push_context(engine: Engine) -> None:
    seen: list[RunContext] = []
    v: Var = engine.new_var()
    engine.push_sync(seen.append, cpu(1), [], [v])
    engine.wait_for_var(v)
    assert seen[0].ctx == cpu(1)
    assert seen[0].stream is None


def test_delete_variable_of_an_idle_var_runs_at_once(engine: Engine) -> None:
    v = engine.new_var()
    engine.push_sync(lambda rc: None, CTX, [], [v])
    engine.wait_for_var(v)
    freed: list[str] = []
    engine.delete_variable(lambda rc: freed.append(threading.current_thread().name), CTX, v)
    assert freed == [threading.current_thread().name]  # nothing pending: freed in this thread
    with pytest.raises(NNVMError, match="deleted"):
        engine.push_sync(lambda rc: None, CTX, [v], [])
    with pytest.raises(NNVMError, match="deleted"):
        engine.delete_variable(lambda rc: None, CTX, v)


def test_a_failing_delete_function_is_reported_at_the_next_wait(engine: Engine) -> None:
    v = engine.new_var()

    def bad_free(rc: RunContext) -> None:
        raise ValueError("free failed")

    engine.delete_variable(bad_free, CTX, v)
    with pytest.raises(NNVMError, match="free failed"):
        engine.wait_for_all()
    engine.wait_for_all()  # reported once; the engine stays usable
    w = engine.new_var()
    engine.push_sync(lambda rc: None, CTX, [], [w])
    engine.wait_for_var(w)


def test_inline_push_with_free_vars_runs_in_the_pushing_thread(engine: Engine) -> None:
    v = engine.new_var()
    ran: list[str] = []
    engine.push_sync(
        lambda rc: ran.append(threading.current_thread().name),
        CTX,
        [],
        [v],
        prop=FnProperty.INLINE,
    )
    assert ran == [threading.current_thread().name]
    engine.wait_for_var(v)
    assert v.version == 1


def test_inline_push_behind_a_pending_write_waits_its_turn(threaded_engine: Engine) -> None:
    engine = threaded_engine
    v, out = engine.new_var(), engine.new_var()
    gate = threading.Event()
    events: list[str] = []

    def slow_write(rc: RunContext) -> None:
        gate.wait(5)
        events.append("write")

    engine.push_sync(slow_write, CTX, [], [v])
    engine.push_sync(lambda rc: events.append("read"), CTX, [v], [out], prop=FnProperty.INLINE)
    assert events == []  # queued behind the writer: the push returned without running it
    gate.set()
    engine.wait_for_var(out)
    assert events == ["write", "read"]


def test_inline_push_failure_is_stored_like_any_other(engine: Engine) -> None:
    v, w = engine.new_var(), engine.new_var()

    def bad(rc: RunContext) -> None:
        raise ValueError("inline said no")

    engine.push_sync(bad, CTX, [], [v], prop=FnProperty.INLINE, name="tiny")
    engine.push_sync(lambda rc: None, CTX, [v], [w], prop=FnProperty.INLINE)  # skipped
    with pytest.raises(NNVMError, match="tiny"):
        engine.wait_for_var(w)
