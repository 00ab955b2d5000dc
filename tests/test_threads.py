"""nnvmpy.threads: one thread budget shared by OpenBLAS, numba and the ufunc pool.

Issue 17: with one outside process burning a core of the 2-core machine, an MLP step
(bench_nets mlp-train) ran at 3-15 steps/s with 2-thread OpenBLAS and numba teams and at
~220 steps/s with one thread. These tests check the mechanism, not the speed: the knob
sets the thread counts, the governor narrows the width when other processes keep the
cores busy and widens it again when they stop, and parallel regions entered at once from
two engine workers do not both start full-width teams. No wall-clock assertions.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator

import numba
import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy import threads
from nnvmpy.base import Context, NNVMError
from nnvmpy.engine import ThreadedEnginePerDevice
from nnvmpy.kernel import cpu
from nnvmpy.ops import _numpy_fast


@pytest.fixture
def budget_of(monkeypatch: pytest.MonkeyPatch) -> Iterator[object]:
    """set(n): a budget of n threads, the background governor switched off."""
    before = threads.blas_threads()

    def set_budget(n: int) -> None:
        monkeypatch.setenv("NNVMPY_NUM_THREADS", str(n))
        monkeypatch.setenv("NNVMPY_THREADS_ADAPT", "0")  # the live governor leaves it alone
        threads.reset()
        threads.set_width(n)

    yield set_budget
    monkeypatch.undo()
    threads.reset()
    if before is not None:
        threads.set_blas_threads(before)


def test_width_for_leaves_at_least_one_thread() -> None:
    assert threads.width_for(0.0, 2) == 2
    assert threads.width_for(0.6, 2) == 1  # rounds: most of a core taken
    assert threads.width_for(1.0, 2) == 1
    assert threads.width_for(5.0, 2) == 1  # never 0
    assert threads.width_for(1.0, 8) == 7


def test_bad_budget_knob_names_the_knob(monkeypatch: pytest.MonkeyPatch) -> None:
    for bad in ("-1", "two"):
        monkeypatch.setenv("NNVMPY_NUM_THREADS", bad)
        threads.reset()
        with pytest.raises(NNVMError, match=r"NNVMPY_NUM_THREADS.*positive thread count"):
            threads.budget()
    monkeypatch.setenv("NNVMPY_NUM_THREADS", "0")
    threads.reset()
    assert threads.budget() == threads.available_cores()
    monkeypatch.undo()
    threads.reset()


def test_governor_narrows_under_outside_load_and_widens_after(
    budget_of, monkeypatch: pytest.MonkeyPatch
) -> None:
    budget_of(2)
    machine = {"running": 0}
    monkeypatch.setattr(threads, "system_running_threads", lambda: machine["running"])
    monkeypatch.setattr(threads, "own_running_threads", lambda: 1)
    others = 0.0
    machine["running"] = 1 + 2  # us + two busy threads of other processes
    for _ in range(10):
        others = threads.govern_step(others, adapt=True)
    assert threads.width() == 1
    if threads.blas_threads() is not None:
        assert threads.blas_threads() == 1
    machine["running"] = 1  # only us
    for _ in range(10):
        others = threads.govern_step(others, adapt=True)
    assert threads.width() == 2
    if threads.blas_threads() is not None:  # OpenBLAS follows, unless MKL took the GEMMs
        assert threads.blas_threads() == (1 if threads._blas_setters else 2)
    # one 0.1 s sample of another process's busy thread does not flip it (smoothing)
    machine["running"] = 1 + 1
    others = threads.govern_step(others, adapt=True)
    assert threads.width() == 2
    for _ in range(3):  # it stays busy: 0.3 s later the width is down
        others = threads.govern_step(others, adapt=True)
    assert threads.width() == 1


def test_governor_off_leaves_the_width(budget_of, monkeypatch: pytest.MonkeyPatch) -> None:
    budget_of(2)
    monkeypatch.setattr(threads, "system_running_threads", lambda: 9)
    monkeypatch.setattr(threads, "own_running_threads", lambda: 1)
    others = 0.0
    for _ in range(10):
        others = threads.govern_step(others)  # NNVMPY_THREADS_ADAPT=0 from the fixture
    assert others > 7
    assert threads.width() == 2


def test_own_running_threads_counts_this_thread() -> None:
    if threads.system_running_threads() is None:
        pytest.skip("no /proc/loadavg")
    assert threads.own_running_threads() >= 1  # the reading thread is running
    assert threads.system_running_threads() >= threads.own_running_threads()


def test_two_engine_workers_share_the_budget(budget_of) -> None:
    """Regions entered at once from two workers: the helper threads they start (width - 1
    each) stay within the budget; numba's width on each worker is the granted one."""
    budget_of(2)
    nv.nd.relu(nv.nd.ones((cpu.SERIAL_CUTOFF,))).wait_to_read()  # numba's pool is started
    eng = ThreadedEnginePerDevice(cpu_workers=2, gpu_workers=1)
    inside = threading.Barrier(2, timeout=30)
    seen: list[tuple[int, int, int]] = []
    lock = threading.Lock()

    def op(_rctx: object) -> None:
        with threads.region() as n:
            with lock:
                seen.append((n, numba.get_num_threads(), threads.in_regions()))
            inside.wait()  # both regions in flight at once

    try:
        for _ in range(2):
            eng.push_sync(op, Context("cpu"), mutate_vars=[eng.new_var()])
        eng.wait_for_all()
    finally:
        eng.shutdown()
    widths = sorted(n for n, _, _ in seen)
    assert widths == [1, 2], seen  # not [2, 2]: one full-width team, the other serial
    assert sum(w - 1 for w in widths) <= threads.budget() - 1
    assert all(nb == min(n, numba.config.NUMBA_NUM_THREADS) for n, nb, _ in seen), seen
    assert threads.in_regions() == 0


def test_engine_worker_follows_the_width(budget_of) -> None:
    """numba.set_num_threads is per thread: a worker re-applies a changed width before
    its next operation."""
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("numba has one thread")
    budget_of(2)
    nv.nd.relu(nv.nd.ones((cpu.SERIAL_CUTOFF,))).wait_to_read()  # numba's pool is started
    eng = ThreadedEnginePerDevice(cpu_workers=1, gpu_workers=1)
    got: list[int] = []
    var = eng.new_var()

    def op(_rctx: object) -> None:
        got.append(numba.get_num_threads())

    try:
        for w in (1, 2, 1):
            threads.set_width(w)
            eng.push_sync(op, Context("cpu"), mutate_vars=[var])
            eng.wait_for_all()
    finally:
        eng.shutdown()
    assert got == [1, 2, 1]


def test_large_kernel_launch_runs_in_a_region(budget_of, monkeypatch: pytest.MonkeyPatch) -> None:
    budget_of(2)
    calls: list[int] = []
    real = threads.region

    def spy(want: int | None = None):
        calls.append(threads.in_regions())
        return real(want)

    monkeypatch.setattr(threads, "region", spy)
    x = nv.nd.array(np.linspace(-1, 1, cpu.SERIAL_CUTOFF, dtype=np.float32))
    y = nv.nd.relu(x).asnumpy()
    np.testing.assert_array_equal(y, np.maximum(x.asnumpy(), 0))
    assert calls, "a relu of NNVMPY_CPU_PARALLEL_SIZE elements did not ask for its team"
    calls.clear()
    # one element less runs serially, outside any region: no team is woken
    nv.nd.relu(nv.nd.ones((cpu.SERIAL_CUTOFF - 1,))).wait_to_read()
    assert not calls


def test_ufunc_pool_uses_the_granted_width(budget_of) -> None:
    budget_of(2)
    n = _numpy_fast.PARALLEL_CUTOFF * 2
    x = np.linspace(0, 1, n)
    for width, chunks in ((2, 2), (1, 1)):
        threads.set_width(width)
        sizes: list[int] = []

        def fn(a: np.ndarray, out: np.ndarray, sizes: list[int] = sizes) -> None:
            sizes.append(a.size)
            np.tan(a, out=out)

        out = np.empty_like(x)
        _numpy_fast.run_chunked(fn, out, (x,))
        np.testing.assert_allclose(out, np.tan(x))
        assert len(sizes) == chunks
        assert sum(sizes) == n


@pytest.mark.parametrize("engine", ["ThreadedEnginePerDevice", "NaiveEngine"])
def test_knob_sets_openblas_and_numba_threads(engine: str) -> None:
    """NNVMPY_NUM_THREADS=1 in a fresh process: OpenBLAS and the engine workers' numba
    kernels use one thread (NaiveEngine: its functions run on the pushing thread)."""
    code = (
        "import numba, nnvmpy as nv\n"
        "from nnvmpy import threads\n"
        "from nnvmpy.kernel.cpu import SERIAL_CUTOFF\n"
        "x = nv.nd.relu(nv.nd.ones((SERIAL_CUTOFF,)))  # a parallel loop\n"
        "x.wait_to_read()\n"
        "seen = []\n"
        "from nnvmpy.engine import get_engine\n"
        "from nnvmpy.base import Context\n"
        "eng = get_engine()\n"
        "eng.push_sync(lambda r: seen.append(numba.get_num_threads()), Context('cpu'),"
        " mutate_vars=[eng.new_var()])\n"
        "eng.wait_for_all()\n"
        "print(threads.budget(), threads.blas_threads(), seen[0])\n"
    )
    env = {
        **os.environ,
        "NNVMPY_NUM_THREADS": "1",
        "NNVMPY_THREADS_ADAPT": "0",
        "NNVMPY_ENGINE_TYPE": engine,
    }
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    budget, blas, numba_threads = out.stdout.split()
    assert budget == "1"
    assert numba_threads == "1"
    assert blas in ("1", "None")


_INLINE_OPS_RUN = """
import os, numpy as np, numba, nnvmpy as nv

def tasks():
    return len(os.listdir(f"/proc/{os.getpid()}/task"))

big = nv.nd.array(np.random.default_rng(0).uniform(0.1, 0.9, 2_000_000).astype(np.float32))
nv.nd.erfinv(big).wait_to_read()  # an engine worker's team
before = tasks()
x = nv.nd.array(np.random.default_rng(1).uniform(0.1, 0.9, nv.threads.parallel_size() - 1)
                .astype(np.float32))
for f in (nv.nd.erfinv, nv.nd.tan, nv.nd.relu, nv.nd.sigmoid, nv.nd.exp):
    f(x).wait_to_read()  # below the parallel size: run inline, on this thread
(x * x + 1.0).wait_to_read()
print(numba.threading_layer(), before, tasks())
"""


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="needs /proc")
def test_inline_ops_start_no_openmp_team_on_the_calling_thread() -> None:
    """Ops below threads.parallel_size() run in the calling thread and must stay serial
    there: a prange gives that thread an OpenMP team of its own, and with an engine
    worker's team beside it GNU OpenMP manages more threads than cores and throttles
    every team's spin (mid-size ops ran 2x slower for the rest of the process, when
    float32 erfinv/gamma/gammaln/tan split from 64K elements; erfinv and tan stand for
    that path here, relu, sigmoid, exp and x * x + 1 for the element-wise kernels)."""
    env = {**os.environ, "NNVMPY_NUM_THREADS": "2", "NNVMPY_THREADS_ADAPT": "0"}
    out = subprocess.run(
        [sys.executable, "-c", _INLINE_OPS_RUN],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    layer, before, after = out.stdout.split()
    if layer != "omp":
        pytest.skip(f"numba's {layer} layer: no per-thread OpenMP teams")
    assert after == before  # no new team thread


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork")
def test_forked_child_starts_with_no_regions_in_flight() -> None:
    with threads.region():
        assert threads.in_regions() >= 1
        pid = os.fork()
        if pid == 0:  # the child: the parent's region is not its own
            os._exit(0 if threads.in_regions() == 0 else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert threads.in_regions() == 0


def test_openblas_keeps_one_thread_beside_another_blas(monkeypatch: pytest.MonkeyPatch) -> None:
    """Once another BLAS carries the GEMMs (MKL registers its thread setter), NumPy's
    OpenBLAS stays at one thread whatever the width: a 2-thread OpenBLAS call leaves a
    worker spinning on the core the other library's team needs."""
    if threads.blas_threads() is None:
        pytest.skip("NumPy's BLAS is not OpenBLAS")
    before = threads.blas_threads()
    got: list[int] = []
    monkeypatch.setattr(threads, "_blas_setters", [])
    try:
        threads.set_blas_threads(2)
        assert threads.blas_threads() == 2  # alone, OpenBLAS follows the width
        threads.register_blas_setter(got.append)
        assert threads.blas_threads() == 1
        threads.set_blas_threads(2)
        assert threads.blas_threads() == 1
        assert got[-1] == 2  # the registered library follows the width
    finally:
        monkeypatch.setattr(threads, "_blas_setters", [])
        threads.set_blas_threads(before or 1)


# ---------------------------------------------------------------- when a loop goes parallel
_CUTOFFS = (
    "import nnvmpy.kernel.cpu as c, nnvmpy.kernel.device as d, nnvmpy.ops._broadcast_map as b;"
    "print(c.SERIAL_CUTOFF, d.SERIAL_CUTOFF, b.SERIAL_CUTOFF)"
)


def _cutoffs_with(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.endswith("_CPU_PARALLEL_SIZE")}
    return subprocess.run(
        [sys.executable, "-c", _CUTOFFS], env={**clean, **env}, capture_output=True, text=True
    )


def test_parallel_size_defaults_to_mxnets_and_reaches_every_loop_family() -> None:
    done = _cutoffs_with({})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["200000"] * 3  # MXNET_CPU_PARALLEL_SIZE's default


@pytest.mark.parametrize("knob", ["NNVMPY_CPU_PARALLEL_SIZE", "MXNET_CPU_PARALLEL_SIZE"])
def test_parallel_size_knob_and_its_mxnet_spelling(knob: str) -> None:
    done = _cutoffs_with({knob: "4096"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["4096"] * 3


def test_bad_parallel_size_names_the_knob() -> None:
    done = _cutoffs_with({"NNVMPY_CPU_PARALLEL_SIZE": "lots"})
    assert done.returncode != 0
    assert "NNVMPY_CPU_PARALLEL_SIZE='lots'" in done.stderr
    assert "positive integer" in done.stderr


# ---------------------------------------------------------------- how idle OpenMP threads wait
_OMP_VARS = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "NNVMPY_OMP_SPINCOUNT")


@pytest.mark.parametrize(
    ("env", "want"),
    [
        ({}, ("30000", None)),  # a short spin, then sleep
        ({"NNVMPY_OMP_SPINCOUNT": "0"}, (None, "PASSIVE")),
        ({"NNVMPY_OMP_SPINCOUNT": "5000"}, ("5000", None)),
        ({"OMP_WAIT_POLICY": "ACTIVE"}, (None, "ACTIVE")),  # the user's choice stays
        ({"GOMP_SPINCOUNT": "7"}, ("7", None)),
    ],
)
def test_openmp_wait_policy(monkeypatch: pytest.MonkeyPatch, env: dict, want: tuple) -> None:
    for name in _OMP_VARS:
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(threads, "_set_for_openmp", {})
    threads.openmp_wait()
    assert (os.environ.get("GOMP_SPINCOUNT"), os.environ.get("OMP_WAIT_POLICY")) == want
    # programs started from here (benchmark anchors) get the user's settings only
    outside = threads.anchor_env()
    assert {k: outside.get(k) for k in _OMP_VARS[:2]} == {k: env.get(k) for k in _OMP_VARS[:2]}
    assert outside.get("NNVMPY_OMP_SPINCOUNT") == env.get("NNVMPY_OMP_SPINCOUNT")


def test_openmp_wait_is_set_before_libgomp_loads() -> None:
    """GNU OpenMP reads its wait variables once, when it is loaded; numba's omp layer is
    imported (loading libgomp) to see whether it exists. The policy must be in the
    environment by then: set after it, half of the processes ran long-spinning teams."""
    code = (
        "import os\n"
        "from nnvmpy.kernel import cpu\n"
        "seen = []\n"
        "real = cpu._has_omp\n"
        "def spy():\n"
        "    maps = open('/proc/self/maps').read()\n"
        "    seen.append((os.environ.get('GOMP_SPINCOUNT'), 'libgomp' in maps))\n"
        "    return real()\n"
        "cpu._has_omp = spy\n"
        "cpu.configure_threading_layer()\n"
        "print(seen)\n"
    )
    clean = {k: v for k, v in os.environ.items() if k not in _OMP_VARS}
    done = subprocess.run(
        [sys.executable, "-c", code], env=clean, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[('30000', False)]", done.stdout


def test_a_width_set_during_a_governor_step_lands_after_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The governor's step (knob read, width set, BLAS count applied) and set_width are
    one step each: a width set while a step is applying its own lands after it, so the
    last width set is also the BLAS count (without the lock the step's late BLAS call
    left the BLAS at its width and the width at the other)."""
    monkeypatch.setenv("NNVMPY_NUM_THREADS", "2")
    monkeypatch.setenv("NNVMPY_THREADS_ADAPT", "1")
    threads.reset()
    threads.set_width(1)
    applied: list[int] = []
    in_step, release = threading.Event(), threading.Event()

    def slow_blas(n: int) -> None:
        if threading.current_thread().name == "step":
            in_step.set()
            release.wait(5)
        applied.append(n)

    monkeypatch.setattr(threads, "set_blas_threads", slow_blas)
    monkeypatch.setattr(threads, "system_running_threads", lambda: 0)
    real_step = threads.govern_step

    def steps_of_this_test_only(others: float, adapt: bool | None = None) -> float | None:
        # the worker's live governor (started with its first engine pool) samples every
        # 0.1 s and, with the knob at 1, set the width to 2 after the pin: [2, 1, 2]
        return others if threading.current_thread().name != "step" else real_step(others, adapt)

    monkeypatch.setattr(threads, "govern_step", steps_of_this_test_only)
    step = threading.Thread(target=real_step, args=(0.0,), name="step")
    step.start()
    assert in_step.wait(5)  # the step is applying width 2
    pin = threading.Thread(target=threads.set_width, args=(1,))
    pin.start()
    pin.join(0.2)
    assert pin.is_alive()  # waits for the step
    release.set()
    step.join(5)
    pin.join(5)
    assert applied == [2, 1]
    assert threads.width() == 1
    monkeypatch.undo()
    threads.reset()
