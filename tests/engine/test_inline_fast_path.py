"""The threaded engines' inline fast path (push_sync of an INLINE function whose variables
are free): same ordering, failure and waiting rules as the general path."""

from __future__ import annotations

import random
import threading

import pytest

from nnvmpy.base import EngineError, cpu
from nnvmpy.engine import FnProperty, RunContext, ThreadedEngine, ThreadedEnginePerDevice

CTX = cpu(0)
INLINE, NORMAL = FnProperty.INLINE, FnProperty.NORMAL


@pytest.fixture(params=[ThreadedEngine, ThreadedEnginePerDevice])
def engine(request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    eng = request.param()
    yield eng
    eng.shutdown()


def test_repeated_and_shared_variables(engine) -> None:  # type: ignore[no-untyped-def]
    v, w = engine.new_var(), engine.new_var()
    engine.push_sync(lambda rc: None, CTX, [v, v], [w, w], prop=INLINE)  # repeated write
    engine.push_sync(lambda rc: None, CTX, [v], [v], prop=INLINE)  # read and write one var
    engine.wait_for_all()
    assert (v.version, w.version) == (1, 1)


@pytest.mark.parametrize("seed", range(6))
def test_mixed_inline_and_worker_pushes_keep_program_order(engine, seed: int) -> None:  # type: ignore[no-untyped-def]
    """Random reads/writes, inline or on workers (some slow): the values each step sees are
    those of the sequential program."""
    rng = random.Random(seed)
    n_vars, n_steps = 5, 300
    variables = [engine.new_var() for _ in range(n_vars)]
    values = [0] * n_vars
    expected = [0] * n_vars
    seen: list[tuple[int, int]] = []
    want: list[tuple[int, int]] = []

    def step(i: int, reads: list[int], writes: list[int], slow: bool):  # type: ignore[no-untyped-def]
        def fn(rc: RunContext) -> None:
            if slow:
                threading.Event().wait(0.0005)
            total = sum(values[r] for r in reads)
            seen.append((i, total))
            for w in writes:
                values[w] = (total * 31 + i + w) % 1_000_003

        return fn

    for i in range(n_steps):
        reads = rng.sample(range(n_vars), rng.randint(0, 2))
        writes = rng.sample(range(n_vars), rng.randint(1, 2))
        prop = INLINE if rng.random() < 0.7 else NORMAL
        fn = step(i, reads, writes, slow=prop is NORMAL and rng.random() < 0.3)
        engine.push_sync(
            fn, CTX, [variables[r] for r in reads], [variables[w] for w in writes], prop=prop
        )
        total = sum(expected[r] for r in reads)
        want.append((i, total))
        for w in writes:
            expected[w] = (total * 31 + i + w) % 1_000_003
    engine.wait_for_all()
    assert sorted(seen) == want
    assert values == expected


def test_a_failure_in_an_inline_function_reaches_its_readers(engine) -> None:  # type: ignore[no-untyped-def]
    v, w = engine.new_var(), engine.new_var()

    def bad(rc: RunContext) -> None:
        raise ValueError("no")

    engine.push_sync(bad, CTX, [], [v], prop=INLINE, name="bad inline")
    ran: list[int] = []
    engine.push_sync(lambda rc: ran.append(1), CTX, [v], [w], prop=INLINE)
    with pytest.raises(EngineError, match="bad inline"):
        engine.wait_for_var(w)
    assert ran == []  # skipped: it read the failed variable
    engine.push_sync(lambda rc: ran.append(2), CTX, [v], [w], prop=INLINE)
    engine.wait_for_var(w)
    assert ran == [2]  # reported failures no longer skip later pushes


def test_wait_for_all_from_another_thread_sees_inline_work(engine) -> None:  # type: ignore[no-untyped-def]
    v = engine.new_var()
    started, release = threading.Event(), threading.Event()
    done: list[bool] = []

    def long_inline(rc: RunContext) -> None:
        started.set()
        release.wait(5)
        done.append(True)

    waiter_result: list[bool] = []

    def waiter() -> None:
        started.wait(5)
        engine.wait_for_all()
        waiter_result.append(bool(done))

    t = threading.Thread(target=waiter)
    t.start()
    pusher = threading.Thread(
        target=lambda: engine.push_sync(long_inline, CTX, [], [v], prop=INLINE)
    )
    pusher.start()
    started.wait(5)
    release.set()
    pusher.join(5)
    t.join(5)
    assert waiter_result == [True]
