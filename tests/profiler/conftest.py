"""A profiler in its default state (stopped, default config, no records) for each test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from nnvmpy import profiler
from nnvmpy.profiler.recorder import RECORDER


def _reset(trace_file: Path) -> None:
    profiler.set_state("stop")
    profiler.resume()
    # defaults, but a periodic dump (continuous_dump is on by default) goes to tmp_path
    profiler.set_config(filename=str(trace_file))
    RECORDER.clear()


@pytest.fixture(autouse=True)
def fresh_profiler(tmp_path: Path) -> Iterator[Path]:
    """Yields the trace file name each test should configure."""
    trace_file = tmp_path / "profile.json"
    _reset(trace_file)
    yield trace_file
    _reset(trace_file)
