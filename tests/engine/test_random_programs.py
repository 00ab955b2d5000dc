"""Random programs of pushes give, on every engine, what a sequential Python oracle gives.

Each step reads its variables' values and writes a deterministic function of them (with
its own index) into its mutate variables, so any reordering of dependent steps changes
the values some step observes. Some steps fail, exercising the propagation rule of
engine/var.py; some are waits from the main thread while work is in flight.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nnvmpy.base import Context, EngineError, cpu, gpu
from nnvmpy.engine import (
    Engine,
    FnProperty,
    NaiveEngine,
    OnComplete,
    RunContext,
    ThreadedEngine,
    ThreadedEnginePerDevice,
)

N_VARS = 6
DEVICES = [cpu(0), gpu(0), gpu(1)]  # gpu pools are plain threads: no GPU is touched
MODULUS = 1_000_003


@dataclass(frozen=True)
class Step:
    kind: str  # "op" or "wait"
    reads: tuple[int, ...] = ()
    writes: tuple[int, ...] = ()
    priority: int = 0
    is_async: bool = False
    fails: bool = False
    device: int = 0
    copy: bool = False
    nested: int = 0  # sync ops: 1 pushes its work from inside itself, 2 also waits for it


PRIORITIES = (0, 0, 0, 1, -1, 5)


def decode_step(code: int) -> Step:
    """One step from one integer: hypothesis draws (and shrinks) flat integers much faster
    than nested tuples of sets."""
    code, kind = divmod(code, 25)  # 1 in 25 steps is a wait
    code, read_mask = divmod(code, 1 << N_VARS)
    code, w1 = divmod(code, N_VARS)
    code, w2 = divmod(code, N_VARS + 1)  # N_VARS: a single write
    code, prio = divmod(code, len(PRIORITIES))
    code, is_async = divmod(code, 2)
    code, fail_roll = divmod(code, 30)  # 1 in 30 ops fails
    code, device = divmod(code, len(DEVICES))
    code, copy = divmod(code, 2)
    nested = 0 if is_async else code % 3
    if kind == 0:
        return Step("wait", writes=(w1,))
    writes = tuple(sorted({w1, w2} - {N_VARS}))
    reads = tuple(v for v in range(N_VARS) if read_mask >> v & 1 and v not in writes)
    return Step(
        "op",
        reads,
        writes,
        PRIORITIES[prio],
        bool(is_async),
        fail_roll == 1,
        device,
        bool(copy),
        nested,
    )


programs = st.lists(st.integers(0, 1 << 29), min_size=200, max_size=240).map(
    lambda codes: [decode_step(c) for c in codes]
)


def _value(index: int, inputs: tuple[int, ...], var: int) -> int:
    return (sum((k + 1) * x for k, x in enumerate(inputs)) * 31 + index * 7 + var) % MODULUS


@dataclass
class Outcome:
    values: list[int] = field(default_factory=lambda: list(range(N_VARS)))
    seen: dict[int, tuple[int, ...]] = field(default_factory=dict)  # step -> inputs it read
    writes: list[list[int]] = field(default_factory=lambda: [[] for _ in range(N_VARS)])
    raised: list[tuple[int, str | None]] = field(default_factory=list)  # waits: step, op name


def oracle(program: list[Step]) -> tuple[Outcome, set[str]]:
    """Sequential reference; also returns the failures left unreported at the end."""
    out = Outcome()
    err: list[str | None] = [None] * N_VARS  # failure held by each var (op name)
    reported: set[str] = set()
    failures: list[str] = []

    def live(v: int) -> str | None:
        e = err[v]
        return e if e is not None and e not in reported else None

    for i, s in enumerate(program):
        if s.kind == "wait":
            e = live(s.writes[0])
            out.raised.append((i, e))
            if e is not None:
                reported.add(e)
            continue
        cell = next((e for v in s.reads + s.writes if (e := live(v)) is not None), None)
        if cell is None:
            inputs = tuple(out.values[v] for v in s.reads + s.writes)
            if s.fails:
                cell = f"op{i}"
                failures.append(cell)
            else:
                out.seen[i] = inputs
                for w in s.writes:
                    out.values[w] = _value(i, inputs, w)
                    out.writes[w].append(i)
        if cell is not None:
            for w in s.writes:
                err[w] = cell
    return out, {f for f in failures if f not in reported}


class _Completer:
    """One background thread that finishes async steps, as a device callback would."""

    def __init__(self) -> None:
        self.jobs: queue.SimpleQueue[Callable[[], None] | None] = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while (job := self.jobs.get()) is not None:
            job()

    def close(self) -> None:
        self.jobs.put(None)
        self.thread.join()


def run_program(eng: Engine, program: list[Step], completer: _Completer) -> Outcome:
    out = Outcome()
    lock = threading.Lock()
    vs = [eng.new_var() for _ in range(N_VARS)]

    def body(i: int, s: Step) -> None:
        with lock:
            inputs = tuple(out.values[v] for v in s.reads + s.writes)
        if s.fails:
            raise ValueError(f"step {i} fails")
        if i % 3 == 0:
            time.sleep(0)  # let other threads in between the read and the write
        with lock:
            out.seen[i] = inputs
            for w in s.writes:
                out.values[w] = _value(i, inputs, w)
                out.writes[w].append(i)

    def sync_fn(i: int, s: Step) -> Callable[[RunContext], None]:
        return lambda rc: body(i, s)

    def nested_fn(i: int, s: Step, ctx: Context) -> Callable[[RunContext], None]:
        # The work is pushed from inside the op; it still counts as the op's own work.
        def fn(rc: RunContext) -> None:
            reads, writes = [vs[v] for v in s.reads], [vs[v] for v in s.writes]
            eng.push_sync(sync_fn(i, s), ctx, reads, writes, name=f"op{i}")
            if s.nested == 2:
                eng.wait_for_var(writes[-1])  # a failure of the work fails the op too

        return fn

    def async_fn(i: int, s: Step) -> Callable[[RunContext, OnComplete], None]:
        def start(rc: RunContext, on_complete: OnComplete) -> None:
            def finish() -> None:
                try:
                    body(i, s)
                except ValueError as e:
                    on_complete(e)
                else:
                    on_complete()

            completer.jobs.put(finish)

        return start

    for i, s in enumerate(program):
        if s.kind == "wait":
            try:
                eng.wait_for_var(vs[s.writes[0]])
            except EngineError as e:
                out.raised.append((i, str(e).split("'")[1]))
            else:
                out.raised.append((i, None))
            continue
        ctx: Context = DEVICES[s.device]
        prop = FnProperty.COPY_TO_GPU if s.copy and ctx.device_type == "gpu" else FnProperty.NORMAL
        reads, writes = [vs[v] for v in s.reads], [vs[v] for v in s.writes]
        if s.is_async:
            eng.push_async(async_fn(i, s), ctx, reads, writes, s.priority, f"op{i}", prop)
        elif s.nested:
            eng.push_sync(nested_fn(i, s, ctx), ctx, reads, writes, s.priority, f"op{i}", prop)
        else:
            eng.push_sync(sync_fn(i, s), ctx, reads, writes, s.priority, f"op{i}", prop)
    return out


@pytest.fixture(scope="module")
def engines() -> Iterator[list[Engine]]:
    made: list[Engine] = [
        NaiveEngine(),
        ThreadedEngine(num_workers=3),
        ThreadedEnginePerDevice(cpu_workers=2, gpu_workers=2),
    ]
    yield made
    for eng in made:
        eng.shutdown()


@pytest.fixture(scope="module")
def completer() -> Iterator[_Completer]:
    c = _Completer()
    yield c
    c.close()


PUSHES = [0]  # pushes made across examples, checked by the test below


@pytest.mark.timeout(120)
@settings(
    max_examples=50,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(program=programs)
def test_random_program_matches_sequential_oracle(
    engines: list[Engine], completer: _Completer, program: list[Step]
) -> None:
    expected, unreported = oracle(program)
    for eng in engines:
        got = run_program(eng, program, completer)
        if unreported:
            with pytest.raises(EngineError) as info:
                eng.wait_for_all()
            assert str(info.value).split("'")[1] in unreported, type(eng).__name__
        eng.wait_for_all()  # nothing left to report, and everything finished
        name = type(eng).__name__
        assert got.raised == expected.raised, name
        assert got.writes == expected.writes, name
        assert got.seen == expected.seen, name
        assert got.values == expected.values, name
        PUSHES[0] += sum(s.kind == "op" for s in program)


def test_random_programs_made_enough_pushes() -> None:
    if PUSHES[0] == 0:
        pytest.skip("runs after test_random_program_matches_sequential_oracle")
    assert PUSHES[0] >= 10_000
