"""Tests of the CuPy layer on a real GPU (kernel/gpu_lib.py, kernel/cublas.py).

Every test here is marked `gpu` and skips, naming the reason, where gpu_lib.available()
is False: without a GPU, on numba's simulator, without CuPy, or with NNVMPY_CUPY=0. So
CI's simulator run collects and skips them; a session with a GPU runs them for real
(tools/gpu_check.sh).
"""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture(autouse=True)
def cupy_ready() -> Any:
    """CuPy, once gpu_lib says the layer is in use; else the test is skipped."""
    from nnvmpy.kernel import gpu_lib

    reason = gpu_lib.unavailable_reason()
    if reason is not None:
        pytest.skip(f"CuPy layer not in use: {reason}")
    import cupy

    return cupy


@pytest.fixture
def cublas_calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, ...]]:
    """Every call of kernel.cublas.gemm made during the test (it still runs)."""
    from nnvmpy.kernel import cublas

    calls: list[tuple[Any, ...]] = []
    real = cublas.gemm

    def spy(*args: Any, **kwargs: Any) -> None:
        calls.append(args)
        real(*args, **kwargs)

    monkeypatch.setattr(cublas, "gemm", spy)
    return calls
