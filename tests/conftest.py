"""Shared fixtures: the registry scope, the device fixture, hypothesis profiles."""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

from nnvmpy import registry

settings.register_profile("ci", derandomize=True, deadline=None, max_examples=30, print_blob=True)
settings.register_profile("dev", deadline=None, max_examples=100)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

CUDASIM = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"


def _gpu_available() -> bool:
    if CUDASIM:
        return True
    try:
        from numba import cuda

        return bool(cuda.is_available())
    except Exception:
        return False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """GPU-marked tests run only with a GPU or the CUDA simulator (set before the run)."""
    if _gpu_available():
        return
    skip = pytest.mark.skip(reason="needs a GPU or NUMBA_ENABLE_CUDASIM=1 set before the run")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def scoped_registry():
    """Ops and attributes registered in the test are undone afterwards."""
    with registry.scoped_registry():
        yield


@pytest.fixture(params=["cpu", pytest.param("gpu", marks=pytest.mark.gpu)])
def ctx(request: pytest.FixtureRequest):
    """Every device: cpu always, gpu when a GPU or the simulator is there."""
    import nnvmpy as nv

    return nv.cpu() if request.param == "cpu" else nv.gpu(0)
