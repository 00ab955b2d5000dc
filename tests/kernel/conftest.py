"""Kernel-test fixtures: shared kernels (compiled once per process, disk-cached) and GPU gating.

The kernels live here, at module level in a real file, so numba's disk cache keeps
them between runs; tests get them through the `kern` fixture. Keep the number of
distinct (dtype signature, req) combinations small: each one is a compile.
"""

from __future__ import annotations

import functools
import math
import os
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import nnvmpy.kernel as K


@K.elementwise
def quadratic_map(x, a, b, c):
    return a * x * x + b * x + c


@K.elementwise
def axpy(a, x, y):
    return a * x + y


@K.elementwise
def relu(x):
    return x if x > 0 else 0


@K.elementwise
def fill(value):
    return value


@K.elementwise
def softsign(x):
    return x / (1.0 + math.fabs(x))


@pytest.fixture(scope="session")
def kern() -> SimpleNamespace:
    """The shared element-wise kernels."""
    return SimpleNamespace(
        quadratic_map=quadratic_map, axpy=axpy, relu=relu, fill=fill, softsign=softsign
    )


def quadratic_ref(x: np.ndarray, a: float, b: float, c: float, dtype: np.dtype) -> np.ndarray:
    """The NumPy formula, computed in float64 and cast like the kernel's store."""
    x64 = np.asarray(x, dtype=np.float64)
    return (a * x64 * x64 + b * x64 + c).astype(dtype)


@pytest.fixture(scope="session")
def quadratic_reference():
    return quadratic_ref


@functools.cache
def gpu_available() -> bool:
    """numba.cuda works here: the simulator was switched on, or a real GPU answers."""
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        return True
    try:
        from numba import cuda

        return bool(cuda.is_available())
    except Exception:
        return False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """GPU-marked kernel tests run only with a GPU or NUMBA_ENABLE_CUDASIM=1 set beforehand."""
    here = Path(__file__).parent
    ours = [item for item in items if "gpu" in item.keywords and here in item.path.parents]
    if ours and not gpu_available():
        skip = pytest.mark.skip(reason="needs a GPU or NUMBA_ENABLE_CUDASIM=1 set before the run")
        for item in ours:
            item.add_marker(skip)
