"""Tests marked sim_barriers run with a finer thread switch interval under the simulator,
and only those (tests/conftest.py: _sim_barrier_switching)."""

from __future__ import annotations

import os
import sys

import pytest

CUDASIM = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
DEFAULT_INTERVAL = 0.005  # CPython's


@pytest.mark.gpu
@pytest.mark.sim_barriers
def test_a_marked_test_switches_finely_under_the_simulator() -> None:
    if CUDASIM:
        assert sys.getswitchinterval() < DEFAULT_INTERVAL / 10
    else:  # a real GPU: nothing to poll
        assert sys.getswitchinterval() == pytest.approx(DEFAULT_INTERVAL)


@pytest.mark.gpu
def test_an_unmarked_test_keeps_the_default() -> None:
    assert sys.getswitchinterval() == pytest.approx(DEFAULT_INTERVAL)
