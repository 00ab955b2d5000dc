"""Shared fixtures: the registry scope, the device fixture, hypothesis profiles; the
hang watchdog."""

from __future__ import annotations

import faulthandler
import os
import signal
import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import settings

from nnvmpy import registry

settings.register_profile("ci", derandomize=True, deadline=None, max_examples=30, print_blob=True)
settings.register_profile("dev", deadline=None, max_examples=100)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

CUDASIM = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
# The simulator runs a block's threads as Python threads, and its block manager polls them
# in a busy loop to release a barrier: at CPython's 5 ms switch interval each barrier waits
# for GIL hand-offs. At 50 us, tests of block kernels ran 1.3-4x faster (cumsum's scan 249
# -> 70 s); tests of thread-per-item and atomic kernels ran up to 1.4x slower (more
# hand-offs, lock convoys in the simulated atomics). So only tests marked sim_barriers get
# it.
SIM_BARRIER_SWITCH_INTERVAL = 5e-5


# pytest-timeout's signal method raises in the main thread between bytecodes, so it never
# fires in a thread stuck in native code: a numba loop that holds the GIL, a deadlocked
# OpenMP region. Such a hang once held an xdist worker until CI's own limit, with nothing
# printed. faulthandler's watchdog is a C thread: HANG_GRACE_S after a test's timeout it
# writes every thread's stack and ends the process. An xdist worker writes them to a file
# that the controller adds to its report of the crashed test (the end of CI's output);
# a run without xdist, to stderr.
HANG_GRACE_S = 120.0
_hang_dump: Any = None  # an open file or a file descriptor


def _hang_dump_path(testrunuid: str, worker: str) -> str:
    import tempfile

    return os.path.join(tempfile.gettempdir(), f"nnvmpy-hang-{testrunuid}-{worker}.txt")


def pytest_configure(config: pytest.Config) -> None:
    global _hang_dump
    worker = getattr(config, "workerinput", None)
    if worker is not None:
        _hang_dump = open(_hang_dump_path(worker["testrunuid"], worker["workerid"]), "w")  # noqa: SIM115
        return
    try:
        fd = sys.stderr.fileno()
    except (AttributeError, ValueError, OSError):
        assert sys.__stderr__ is not None
        fd = sys.__stderr__.fileno()
    _hang_dump = os.dup(fd)  # the real stderr: capture redirects fd 2 during tests


def pytest_unconfigure(config: pytest.Config) -> None:
    if hasattr(_hang_dump, "name"):  # a worker that ended normally: its file is empty
        _hang_dump.close()
        os.remove(_hang_dump.name)


@pytest.hookimpl(optionalhook=True)
def pytest_handlecrashitem(crashitem: str, report: Any, sched: Any) -> None:
    """xdist's controller: a worker that crashed on a hang left the stacks in its file."""
    worker = report.node
    path = _hang_dump_path(worker.workerinput["testrunuid"], worker.workerinput["workerid"])
    try:
        with open(path) as f:
            stacks = f.read()
        os.remove(path)
    except OSError:
        return
    if stacks:
        report.longrepr = f"{report.longrepr}\n{stacks}"


def _timeout_of(item: pytest.Item) -> float:
    marker = item.get_closest_marker("timeout")
    if marker is not None:
        value = marker.kwargs.get("timeout", marker.args[0] if marker.args else None)
    else:
        value = item.config.getoption("timeout", None)
    return float(value or 0)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    limit = _timeout_of(item)
    if limit <= 0 or _hang_dump is None:
        return (yield)
    faulthandler.dump_traceback_later(limit + HANG_GRACE_S, file=_hang_dump, exit=True)
    try:
        return (yield)
    finally:
        faulthandler.cancel_dump_traceback_later()


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


@pytest.fixture(autouse=True)
def _sim_barrier_switching(request: pytest.FixtureRequest) -> Iterator[None]:
    """Under the simulator, a test marked sim_barriers runs with the finer switch interval
    (see SIM_BARRIER_SWITCH_INTERVAL); the interval is restored afterwards."""
    if not (CUDASIM and request.node.get_closest_marker("sim_barriers")):
        yield
        return
    old = sys.getswitchinterval()
    sys.setswitchinterval(SIM_BARRIER_SWITCH_INTERVAL)
    try:
        yield
    finally:
        sys.setswitchinterval(old)


@pytest.fixture(autouse=True)
def _same_random_state_in_every_test() -> None:
    """Every test starts from nnvmpy's and NumPy's global generators seeded with 0, as
    MXNet's `with_seed` starts its tests: xdist hands tests to its workers by load, so
    what ran before a test in its process changes from run to run, and a test drawing
    unseeded numbers (init_params, nd.random, np.random, random) would see other numbers
    each time (a quantization test's error bound failed in CI that way).

    nv.random.seed pushes one engine op per random resource; the fixture waits for them
    (and for anything an earlier test left running) without reporting failures, so the
    reseed neither lands inside the test (profiler tests recorded it) nor raises an
    earlier test's error here."""
    import random

    import numpy as np

    import nnvmpy as nv
    from nnvmpy import engine

    nv.random.seed(0)
    engine.get_engine().quiesce()
    random.seed(0)
    np.random.seed(0)  # noqa: NPY002  (the legacy global generator is what such tests draw from)


# A forked child has no pytest-timeout timer and no hang watchdog (neither survives a
# fork), and an orphan would keep the xdist worker's pipes open: the kernel ends a child
# still running after this many seconds.
CHILD_LIMIT_S = 120


def _run_in_child(body: Callable[[], bool], limit_s: int = CHILD_LIMIT_S) -> int:
    """Fork; the child runs body() and leaves with 0 (True), 1 (False) or 2 (raised),
    never returning into pytest. The child's exit status (-N: killed by signal N; -14,
    SIGALRM: still running after limit_s, stuck even in native code). A parent stopped
    while waiting (its test's timeout) kills the child before it goes on."""
    pid = os.fork()
    if pid == 0:
        code = 2
        try:
            signal.signal(signal.SIGALRM, signal.SIG_DFL)  # not pytest-timeout's handler
            signal.alarm(limit_s)
            code = 0 if body() else 1
        finally:
            os._exit(code)
    try:
        _, status = os.waitpid(pid, 0)
    except BaseException:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        raise
    return os.waitstatus_to_exitcode(status)


@pytest.fixture
def run_in_child() -> Callable[[Callable[[], bool]], int]:
    """A function that runs body() in a forked child and returns its exit status."""
    if not hasattr(os, "fork"):
        pytest.skip("needs os.fork")
    return _run_in_child


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


@pytest.fixture
def fused_sources(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every fused kernel's generated source (fusion/codegen.kernel_source), in order."""
    from nnvmpy.fusion import codegen

    sources: list[str] = []
    original = codegen.kernel_source

    def recording(*args: Any, **kw: Any) -> str:
        sources.append(original(*args, **kw))
        return sources[-1]

    monkeypatch.setattr(codegen, "kernel_source", recording)
    monkeypatch.setattr(codegen, "_by_layout", {})  # what earlier tests built is built anew
    return sources
