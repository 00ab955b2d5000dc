"""Random programs of pushes give, on every engine, what a sequential Python oracle gives.

The programs and the oracle live in engine_programs.py (tools/engine_soak.py runs the
same check for 10**6 pushes and more): reads and writes on shared variables, failing
steps, waits while work is in flight, async and nested pushes, and deletes, on every
engine with one and several workers.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from engine_programs import (
    ENGINE_CONFIGS,
    MAX_CODE,
    Completer,
    avoid_known_issue,
    check_program,
    decode_step,
    oracle,
    random_program,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nnvmpy.engine import Engine

programs = st.lists(st.integers(0, MAX_CODE), min_size=200, max_size=240).map(
    lambda codes: avoid_known_issue([decode_step(c) for c in codes])
)


@pytest.fixture(scope="module")
def engines() -> Iterator[list[Engine]]:
    made = [factory() for _, factory in ENGINE_CONFIGS]
    yield made
    for eng in made:
        eng.shutdown()


@pytest.fixture(scope="module")
def completer() -> Iterator[Completer]:
    c = Completer()
    yield c
    c.close()


PUSHES = [0]  # pushes made across examples, checked by the test below


@pytest.mark.timeout(120)
@settings(
    max_examples=30,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(program=programs)
def test_random_program_matches_sequential_oracle(
    engines: list[Engine], completer: Completer, program: list
) -> None:
    for eng in engines:
        PUSHES[0] += check_program(eng, program, completer)


def test_random_programs_made_enough_pushes() -> None:
    if PUSHES[0] == 0:
        pytest.skip("runs after test_random_program_matches_sequential_oracle")
    assert PUSHES[0] >= 10_000


def test_programs_exercise_every_kind_of_step() -> None:
    """The generator is not degenerate: failures, waits that report, deletes all occur."""
    import random

    program = random_program(random.Random(0), 2000)
    expected, _, gens = oracle(program)
    kinds = {s.kind for s in program}
    assert kinds == {"op", "wait", "delete"}
    assert any(s.fails for s in program)
    assert any(s.is_async for s in program)
    assert any(name is not None for _, name in expected.raised)  # a wait reported a failure
    assert expected.deleted
    assert max(gens) > 0


def test_a_wrong_engine_is_caught() -> None:
    """check_program fails on an engine that runs writes out of order."""
    import random

    from nnvmpy.engine import NaiveEngine

    class Reordering(NaiveEngine):
        def _push(self, opr, ctx, priority):
            if opr.name and opr.name.startswith("op") and int(opr.name[2:]) % 7 == 3:
                self.held = getattr(self, "held", [])
                self.held.append((opr, ctx, priority))
                return
            super()._push(opr, ctx, priority)
            for held in getattr(self, "held", []):
                super()._push(*held)
            self.held = []

    program = random_program(random.Random(1), 300)
    with pytest.raises(AssertionError):
        check_program(Reordering(), program, Completer())
