"""numba-cuda settings nnvmpy makes when it first finds CUDA (kernel/cuda.get_cuda)."""

from __future__ import annotations

import pytest

from nnvmpy.kernel import cuda as kcuda

config = pytest.importorskip("numba.core.config")


def test_small_grid_warnings_stay_off_when_numba_rereads_its_environment(monkeypatch) -> None:
    """A small array gets a small grid on purpose; numba-cuda warns per launch below 128
    blocks (failing ops under warnings-as-errors, and costing host time). numba re-reads
    all its settings from NUMBA_* variables when one changes, which undid a write to
    the config module alone."""
    monkeypatch.setenv("NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS", "unset below")
    monkeypatch.delenv("NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS")  # restored as absent afterwards
    monkeypatch.setattr(config, "CUDA_LOW_OCCUPANCY_WARNINGS", 1)
    kcuda._quiet_small_grids()
    assert config.CUDA_LOW_OCCUPANCY_WARNINGS == 0
    monkeypatch.setenv("NUMBA_NNVMPY_TEST_KNOB", "1")  # any NUMBA_* change: a full re-read
    config.reload_config()
    assert config.CUDA_LOW_OCCUPANCY_WARNINGS == 0


def test_a_users_own_small_grid_setting_is_kept(monkeypatch) -> None:
    monkeypatch.setenv("NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS", "1")
    monkeypatch.setattr(config, "CUDA_LOW_OCCUPANCY_WARNINGS", 1)
    kcuda._quiet_small_grids()
    assert config.CUDA_LOW_OCCUPANCY_WARNINGS == 1
