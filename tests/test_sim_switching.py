"""Tests marked sim_barriers run with a finer thread switch interval under the simulator,
and only those (tests/conftest.py: _sim_barrier_switching)."""

from __future__ import annotations

import sys

import pytest

from conftest import CUDASIM, SIM_BARRIER_SWITCH_INTERVAL

DEFAULT_INTERVAL = 0.005  # CPython's


@pytest.mark.gpu
@pytest.mark.sim_barriers
def test_a_marked_test_switches_finely_under_the_simulator() -> None:
    want = SIM_BARRIER_SWITCH_INTERVAL if CUDASIM else DEFAULT_INTERVAL
    assert sys.getswitchinterval() == pytest.approx(want)


@pytest.mark.gpu
def test_an_unmarked_test_keeps_the_default() -> None:
    assert sys.getswitchinterval() == pytest.approx(DEFAULT_INTERVAL)
