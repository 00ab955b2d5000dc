"""A profiler in its default state (stopped, default config, no records) for each test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from nnvmpy import profiler
from nnvmpy.profiler.recorder import RECORDER


def _reset() -> None:
    profiler.set_state("stop")
    profiler.resume()
    profiler.set_config()
    RECORDER.clear()


@pytest.fixture(autouse=True)
def fresh_profiler(tmp_path: Path) -> Iterator[Path]:
    """Yields the trace file name each test should configure."""
    _reset()
    yield tmp_path / "profile.json"
    _reset()
