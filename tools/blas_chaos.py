"""pytest plugin: run the tests while the thread width flips every few milliseconds.

Why. In CI the load governor (nnvmpy.threads) changes the process-wide width while tests
run: two xdist workers on two cores narrow each other's teams from 2 to 1 and back. The
width is applied to the BLAS (OpenBLAS, or MKL with OpenBLAS held at one thread), whose
GEMM sums change in their last bits with its thread count, to numba's team widths (the
reduction splits of parallel kernels) and to the convolution algorithm cache (keyed on the
width). A test that computes something twice and compares the bits then fails now and
then, only under load (tests/ops/test_conv_lanes.py did: commit c934a88). This plugin
makes that happen on every run instead of now and then.

How. A daemon thread in each process that runs tests calls ``threads.set_width`` with the
other of 1 and 2 every BLASCHAOS_PERIOD_MS milliseconds (a random wait between the two
bounds, default 1-5), as the governor does every 0.1 s at most. It goes through the
same doors as the governor, so a test that pins the width the documented ways is left
alone: NNVMPY_THREADS_ADAPT=0 in the environment (read before every flip, as
``govern_step`` reads it per sample), or ``threads.set_blas_threads`` monkeypatched to a
no-op (the BLAS then keeps its count; the width still flips, as it would in CI).

BLASCHAOS_CALLS=1 also picks a random width (1 or 2, same doors) right before every GEMM
call that goes through np.matmul, np.dot or nnvmpy.ops.nn._blas (gemm, matmul,
matmul_stack), and before every ``threads.region()`` (the team width of numba kernels and
of the ufunc pool): two runs of the same GEMMs or parallel loops then rarely see the same
widths, however short (a timed flip misses a test whose two runs fall between two flips).
The `@` operator and ndarray.dot are not caught.

BLASCHAOS_BLAS=openblas hides the `mkl` wheel (``_blas.mkl_path`` returns None, as where
the wheel is not installed; `mkl`-marked tests skip), so the GEMMs run on NumPy's OpenBLAS
and the flips reach its thread count, as in CI. Default: what the environment has.

Usage (from the repository root)::

    PYTHONPATH=tools BLASCHAOS_BLAS=openblas BLASCHAOS_CALLS=1 \\
        .venv/bin/pytest -q -n 2 -m "not gpu and not mxnet" -p blas_chaos

Without xdist the terminal summary says how many flips were made.
"""

from __future__ import annotations

import os
import random
import threading
import time
from typing import Any

import pytest

_started: list[threading.Thread] = []
_flips = [0]


def _period() -> tuple[float, float]:
    text = os.environ.get("BLASCHAOS_PERIOD_MS", "1-5")
    lo, _, hi = text.partition("-")
    a = float(lo) / 1000
    return a, (float(hi) / 1000 if hi else a)


def _chaos() -> None:
    from nnvmpy import config, threads

    lo, hi = _period()
    rnd = random.Random(os.getpid())  # not the global generator the tests reseed
    while True:
        time.sleep(rnd.uniform(lo, hi))
        try:
            if config.THREADS_ADAPT.get() != "1":  # pinned, as the governor reads it
                continue
            threads.set_width(1 if threads.width() > 1 else 2)
            _flips[0] += 1
        except Exception:  # a test set a bad NNVMPY_NUM_THREADS: wait for the next one
            pass


def _flip_before(fn: Any, rnd: random.Random) -> Any:
    from nnvmpy import config, threads

    def flipped(*args: Any, **kwargs: Any) -> Any:
        if config.THREADS_ADAPT.get() == "1":
            threads.set_width(rnd.choice((1, 2)))
            _flips[0] += 1
        return fn(*args, **kwargs)

    flipped.__wrapped__ = fn  # type: ignore[attr-defined]
    return flipped


def pytest_configure(config: pytest.Config) -> None:
    from nnvmpy.ops.nn import _blas

    if os.environ.get("BLASCHAOS_BLAS", "").lower() == "openblas":
        _blas.mkl_path = lambda: None  # type: ignore[assignment]
    if os.environ.get("BLASCHAOS_CALLS", "0") == "1":
        import numpy as np

        rnd = random.Random(os.getpid() + 1)
        np.matmul = _flip_before(np.matmul, rnd)
        np.dot = _flip_before(np.dot, rnd)
        for name in ("gemm", "matmul", "matmul_stack"):
            setattr(_blas, name, _flip_before(getattr(_blas, name), rnd))
        from nnvmpy import threads

        threads.region = _flip_before(threads.region, rnd)  # type: ignore[misc]


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Start the flipping thread with the first test this process runs (an xdist
    controller runs none)."""
    if _started and _started[0].is_alive():
        return
    thread = threading.Thread(target=_chaos, name="blas-chaos", daemon=True)
    _started[:] = [thread]
    thread.start()


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _started:
        terminalreporter.write_line(f"blas_chaos: {_flips[0]} width flips in this process")


def pytest_report_header(config: pytest.Config) -> str:
    blas = os.environ.get("BLASCHAOS_BLAS", "") or "as installed"
    calls = os.environ.get("BLASCHAOS_CALLS", "0") == "1"
    return f"blas_chaos: width flips every {_period()} s, before GEMM calls: {calls}, BLAS {blas}"
