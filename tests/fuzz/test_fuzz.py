"""The untrusted-input property, fuzzed on a CI budget (tools/fuzz.py-style soak: longer).

Corrupted symbol files, corrupted .params files and every registered op with hostile
parameters, shapes, dtypes and values: each call works or raises a named NNVMError, and
afterwards the registry, the engine and an executor bound before still work (Health).
Known findings in code owned elsewhere are skipped through tests/fuzz/known_issues.py.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from fuzz_common import DrawChooser, Health
from fuzz_json import check_corrupted_symbol
from fuzz_ops import check_op_call
from fuzz_params import check_corrupted_params
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

FUZZ = settings(
    deadline=None,
    derandomize=True,  # the same examples on every run: CI stays reproducible
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    database=None,
)


@pytest.fixture(scope="module")
def health() -> Health:
    return Health()


@pytest.fixture(scope="module")
def scratch() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="nnvmpy-fuzz-") as d:
        yield Path(d)


def _report(findings: list) -> str:
    return "\n".join(str(f) for f in findings)


@settings(FUZZ, max_examples=80)
@given(data=st.data())
def test_corrupted_symbol_files_give_named_errors(data, health, scratch) -> None:  # type: ignore[no-untyped-def]
    findings = check_corrupted_symbol(DrawChooser(data), health, scratch)
    assert not findings, _report(findings)


@settings(FUZZ, max_examples=80)
@given(data=st.data())
def test_corrupted_params_files_give_named_errors(data, health, scratch) -> None:  # type: ignore[no-untyped-def]
    findings = check_corrupted_params(DrawChooser(data), health, scratch)
    assert not findings, _report(findings)


@settings(FUZZ, max_examples=150)
@given(data=st.data())
def test_hostile_op_calls_give_named_errors(data, health) -> None:  # type: ignore[no-untyped-def]
    findings = check_op_call(DrawChooser(data), health)
    assert not findings, _report(findings)
