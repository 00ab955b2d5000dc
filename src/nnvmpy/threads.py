"""One budget of CPU threads per process, shared by OpenBLAS, numba and the ufunc pool.

Why. Three thread pools each assume they own the cores: OpenBLAS inside NumPy's matmul
(its own pthreads), numba's parallel=True kernels (an OpenMP team per calling thread)
and ops/_numpy_fast's ufunc pool, all driven by the engine's worker threads. Every
parallel region ends in a barrier, so a region runs at the speed of its slowest thread.
On a 2-core machine that other processes also use, a helper thread of a 2-wide team
waits for a time slice while the caller spins for it: an MLP step went from 3 ms to
50-300 ms (5-15 steps/s) with one outside process burning a core, and to 3.5 ms with
OPENBLAS_NUM_THREADS=1 (issue 17; numbers in tests/test_threads.py's docstring).

What. `budget()` is the most threads the process uses for compute (NNVMPY_NUM_THREADS,
default: the cores this process may run on). With NNVMPY_THREADS_ADAPT=1 (default) a
daemon thread, started with the engine's first CPU pool, samples every 0.1 s how many
threads *other* processes have running (/proc/loadavg's running count minus this
process's running threads, smoothed) and lowers the width to budget minus that
(at least 1): an idle machine keeps full-width teams, a busy one runs one thread per
region instead of a team that waits for a core. The width is applied to

- OpenBLAS: its global thread count (openblas_set_num_threads through ctypes on the
  library NumPy loaded; OpenBLAS has no per-thread count in NumPy's pthreads build);
- numba: `numba.set_num_threads` is per calling thread, so each engine worker re-applies
  the width before its next operation when it changed (`sync_numba`, one int compare);
- parallel regions we start ourselves (elementwise kernels, the ufunc pool): `region()`
  grants a team width out of what other regions in flight leave of the budget, so two
  engine workers in parallel kernels at once do not both start full-width teams. The
  calling thread counts as one of its team; a caller always gets at least itself.
"""

from __future__ import annotations

import ctypes
import glob
import os
import sys
import threading
import time
from typing import Any

from . import config
from .base import NNVMError

#: seconds between two samples of the machine's load
SAMPLE_INTERVAL = 0.1
#: weight of a new sample in the smoothed count of other processes' running threads:
#: rising load is followed over ~0.2-0.3 s (a blip does not narrow the teams), falling
#: load faster, so a process that waited on another (bench_nets' MXNet turn) is soon
#: back at full width
SMOOTHING_UP = 0.3
SMOOTHING_DOWN = 0.6

_lock = threading.Lock()
# held while the width is changed and applied, and by the governor from reading
# NNVMPY_THREADS_ADAPT to its set_width: a pin (the knob set to 0, then set_width) then
# lands after a governor step in flight, never before it, and two set_width calls cannot
# leave the BLAS count of one and the width of the other
_width_lock = threading.RLock()
_budget: int | None = None
_width: int | None = None  # the current width (budget minus outside load), None: budget
_generation = 0  # bumped on every width change; engine workers compare it per operation
_in_regions = 0  # threads now inside region()s (callers and their team mates)
_tls = threading.local()
_governor: threading.Thread | None = None
_governor_pid = 0


def openmp_wait() -> None:
    """How idle OpenMP team threads wait: spin NNVMPY_OMP_SPINCOUNT rounds, then sleep,
    unless the user set OMP_WAIT_POLICY or GOMP_SPINCOUNT.

    Why a short spin. Waking a sleeping team thread costs ~80 us on a VM, more than many
    operators take, and the next operator's team usually starts within microseconds of
    the last one's end. With one engine worker (one team, kept warm) an MLP training step
    took 1.74 ms against 2.47 with sleeping teams (PASSIVE) and two workers, LeNet's 11.9
    against 12.5, ResNet-18 unchanged; spinning longer (GOMP's default 300000, or
    ACTIVE) held cores the other threads needed: ResNet-18 at batch 1 took 31-34 ms
    instead of 25-26.

    GNU OpenMP reads these variables once, when libgomp is loaded, so this runs before
    anything loads it: numba's omp layer (importing it to see whether it exists loads
    it) and MKL's GNU threading. When the policy was set too late (after that import),
    half of the processes ran with GOMP's default spin and the slow ResNet-18 above.
    """
    if "OMP_WAIT_POLICY" in os.environ or "GOMP_SPINCOUNT" in os.environ:
        return  # the user's choice
    spin = config.OMP_SPINCOUNT.get().strip()
    name, value = ("OMP_WAIT_POLICY", "PASSIVE") if spin in ("", "0") else ("GOMP_SPINCOUNT", spin)
    os.environ[name] = value
    _set_for_openmp[name] = value


_set_for_openmp: dict[str, str] = {}  # what openmp_wait put into os.environ


def anchor_env() -> dict[str, str]:
    """os.environ without what openmp_wait put in, for other programs started from this
    process: benchmark anchors (MXNet and PyTorch use GNU OpenMP too) must run with their
    own defaults, not with the wait policy nnvmpy chose for its teams."""
    return {
        k: v for k, v in os.environ.items() if k not in _set_for_openmp or _set_for_openmp[k] != v
    }


def parallel_size() -> int:
    """Fewest items of work a CPU loop starts a parallel team for (NNVMPY_CPU_PARALLEL_SIZE).

    Why 200000 (MXNet's MXNET_CPU_PARALLEL_SIZE default) rather than a few thousand:
    a team thread that has gone to sleep (openmp_wait) costs ~80 us to wake on a VM. A
    64x512 relu took 130 us in a 2-thread team and 15 us alone; the MLP's forward pass
    went 1.23 -> 0.95 ms when its 32k-element loops stayed serial (sleeping teams, two
    engine workers; with today's short spin and one worker the bound still measured best:
    mlp-train 1.71 ms at 200000, 1.77 at 32768).
    """
    text = config.CPU_PARALLEL_SIZE.get().strip()
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 1:
        raise NNVMError(
            f"{config.CPU_PARALLEL_SIZE.name}={text!r}: expected a positive integer "
            "(the fewest loop items that run in parallel)"
        )
    return value


def available_cores() -> int:
    """The cores this process may run on (its affinity mask where the OS has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def budget() -> int:
    """Most threads this process runs for compute at once (NNVMPY_NUM_THREADS)."""
    global _budget
    if _budget is None:
        text = config.NUM_THREADS.get().strip()
        if text in ("", "0"):
            value = available_cores()
        else:
            try:
                value = int(text)
            except ValueError:
                value = 0
            if value < 1:
                raise NNVMError(
                    f"{config.NUM_THREADS.name}={text!r}: expected a positive thread count "
                    "(or 0 / empty for the number of available cores)"
                )
        _budget = value
    return _budget


def width() -> int:
    """The team width a parallel region should use now (1 .. budget())."""
    w = _width
    return budget() if w is None else w


def set_width(n: int) -> None:
    """Set the width (clamped to 1 .. budget()) and apply it to OpenBLAS; the governor
    calls this, tests may too."""
    global _width, _generation
    n = max(1, min(int(n), budget()))
    with _width_lock:
        with _lock:
            if n == _width:
                return
            _width = n
            _generation += 1
        set_blas_threads(n)


def reset() -> None:
    """Forget the budget and width (re-read the knobs); for tests."""
    global _budget, _width, _generation
    with _lock:
        _budget = None
        _width = None
        _generation += 1


# ---------------------------------------------------------------- OpenBLAS
_blas: list[tuple[Any, Any] | None] = []  # [(set, get) or None], looked up once


def _blas_functions() -> tuple[Any, Any] | None:
    """openblas_set_num_threads / get_num_threads of the OpenBLAS NumPy loaded, or None."""
    if not _blas:
        import numpy as np

        root = os.path.dirname(np.__file__)
        paths = sorted(
            p
            for pattern in (
                os.path.join(root, "..", "numpy.libs", "*"),
                os.path.join(root, ".libs", "*"),
            )
            for p in glob.glob(pattern)
            if "blas" in os.path.basename(p)
        )
        found = None
        for path in paths:
            try:
                lib = ctypes.CDLL(path)
            except OSError:
                continue
            for prefix, suffix in (
                ("scipy_openblas", "64_"),
                ("scipy_openblas", ""),
                ("openblas", ""),
            ):
                setter = getattr(lib, f"{prefix}_set_num_threads{suffix}", None)
                getter = getattr(lib, f"{prefix}_get_num_threads{suffix}", None)
                if setter is not None and getter is not None:
                    setter.argtypes, setter.restype = [ctypes.c_int], None
                    getter.argtypes, getter.restype = [], ctypes.c_int
                    found = (setter, getter)
                    break
            if found:
                break
        _blas.append(found)
    return _blas[0]


def blas_threads() -> int | None:
    """OpenBLAS's current thread count, or None where NumPy's BLAS is not OpenBLAS."""
    fns = _blas_functions()
    return None if fns is None else int(fns[1]())


def set_blas_threads(n: int) -> None:
    """Set OpenBLAS's (process-wide) thread count, and that of every other BLAS
    registered (MKL, ops/nn/_blas.py); nothing where there is none.

    With another BLAS registered, that one runs the GEMMs (the convolution and
    FullyConnected ones, nd.dot, batch_dot) and NumPy's OpenBLAS is held at one thread:
    what still reaches it (a bias gradient's matrix-vector product) is small, and a
    2-thread OpenBLAS call leaves its worker spinning for ~0.1 s, on the core MKL's team
    needs. LeNet's training step with MKL: 31 ms with OpenBLAS at two threads, 14 at one.
    """
    fns = _blas_functions()
    if fns is not None:
        fns[0](1 if _blas_setters else max(1, int(n)))
    for setter in _blas_setters:
        setter(max(1, int(n)))


_blas_setters: list[Any] = []  # thread-count setters of BLAS libraries loaded besides NumPy's


def register_blas_setter(setter: Any) -> None:
    """Have the budget drive another BLAS's (process-wide) thread count too, starting
    now with the current width (MKL's own default is its count of physical cores); from
    now on NumPy's OpenBLAS keeps one thread (see set_blas_threads)."""
    _blas_setters.append(setter)
    set_blas_threads(width())


# ---------------------------------------------------------------- numba
_numba_max = 0  # numba's pool size once its pool is started, 0 before
_modules = sys.modules


def _numba_ready() -> bool:
    """numba's thread pool is started (so set_num_threads does not pick the layer)."""
    global _numba_max
    if _numba_max:
        return True
    # GPU workers ask before every operation and numba's pool may never start in their
    # process: a plain dict lookup and attribute test (~0.1 us; the import was 0.4 us)
    parallel = _modules.get("numba.np.ufunc.parallel")
    if parallel is None or not getattr(parallel, "_is_initialized", False):
        return False
    import numba

    _numba_max = int(numba.config.NUMBA_NUM_THREADS)  # type: ignore[attr-defined]
    return True


def _set_numba(n: int) -> None:
    """numba.set_num_threads(n) for this thread, clamped to numba's pool, when it changes
    (the per-thread value is remembered: the call itself costs ~1 us)."""
    n = max(1, min(n, _numba_max))
    if getattr(_tls, "numba", None) != n:
        import numba

        numba.set_num_threads(n)
        _tls.numba = n


def sync_numba() -> int:
    """Apply the current width to this thread's numba kernels; returns the generation
    applied (the caller skips the next call until it changes). Engine workers call it."""
    gen = _generation
    if _numba_ready():
        _set_numba(width())
        return gen
    return gen - 1  # not started yet: try again next time


# ---------------------------------------------------------------- regions
class region:  # lower case: used like a function, `with region() as n:`
    """A parallel region on this thread: `with region() as n:` gives its team width,
    counting the caller.

    The width is what the budget leaves after the regions in flight, at most `want`
    (default: width()) and at least 1; numba kernels launched inside use it. A class,
    not a generator context manager: it wraps every large kernel launch (~1 us).
    """

    __slots__ = ("n", "numba")

    def __init__(self, want: int | None = None) -> None:
        global _in_regions
        limit = width() if want is None else min(want, width())
        with _lock:
            free = budget() - _in_regions
            n = limit if limit < free else free
            if n < 1:
                n = 1
            _in_regions += n
        self.n = n
        self.numba = _numba_ready()
        if self.numba:
            _set_numba(n)

    def __enter__(self) -> int:
        return self.n

    def __exit__(self, *exc: object) -> None:
        global _in_regions
        with _lock:
            _in_regions -= self.n
        if self.numba:
            _set_numba(width())


def in_regions() -> int:
    """Threads now inside region()s (for tests and diagnostics)."""
    return _in_regions


# ---------------------------------------------------------------- the governor
def _running(path: str) -> int:
    try:
        with open(path, "rb") as f:
            text = f.read()
    except OSError:
        return 0
    return 1 if text[text.rfind(b")") + 2 : text.rfind(b")") + 3] == b"R" else 0


def own_running_threads() -> int:
    """This process's threads now running or runnable (Linux; 0 elsewhere)."""
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return 0
    return sum(_running(f"/proc/self/task/{t}/stat") for t in tasks)


def system_running_threads() -> int | None:
    """Threads running or runnable on the whole machine (/proc/loadavg), or None."""
    try:
        with open("/proc/loadavg") as f:
            return int(f.read().split()[3].split("/")[0])
    except (OSError, ValueError, IndexError):
        return None


def _cpu_count() -> int:
    return max(os.cpu_count() or 1, available_cores())


def width_for(others: float, total: int) -> int:
    """The width when other processes keep `others` threads running on `total` threads."""
    return max(1, min(total, round(total - others)))


def govern_step(others: float, adapt: bool | None = None) -> float | None:
    """One sample: the new smoothed count of other processes' running threads, or None
    where the machine's count cannot be read. The width is set from it when `adapt`
    (default: NNVMPY_THREADS_ADAPT is 1, read per sample, so it can be switched off
    while the process runs)."""
    system = system_running_threads()
    if system is None:
        return None
    # Other processes' threads spread over all the machine's CPUs; this process may
    # only use its affinity mask's share of them.
    sample = max(0, system - own_running_threads()) * available_cores() / _cpu_count()
    others += (SMOOTHING_UP if sample > others else SMOOTHING_DOWN) * (sample - others)
    with _width_lock:  # see _width_lock: the knob read and the width set as one step
        if config.THREADS_ADAPT.get() == "1" if adapt is None else adapt:
            set_width(width_for(others, budget()))
    return others


def _govern() -> None:
    others: float | None = 0.0
    while others is not None:
        time.sleep(SAMPLE_INTERVAL)
        others = govern_step(others)


def start_governor() -> None:
    """Start the load-following daemon thread once per process (NNVMPY_THREADS_ADAPT=1).

    Without it (knob 0, or no /proc) the width stays at budget() and OpenBLAS is set to
    the budget once."""
    global _governor, _governor_pid
    if _governor is not None and _governor_pid == os.getpid():
        return
    with _lock:
        if _governor is not None and _governor_pid == os.getpid():
            return
        _governor_pid = os.getpid()
        adapt = config.THREADS_ADAPT.get() == "1" and system_running_threads() is not None
        _governor = threading.Thread(target=_govern, name="nnvmpy-threads", daemon=True)
    if adapt:
        _governor.start()
    elif config.NUM_THREADS.get().strip() not in ("", "0"):
        set_blas_threads(budget())


_openmp_forked = False  # this process was forked after numba had started GNU OpenMP


def openmp_forked() -> bool:
    """Whether this process was forked from one whose numba had run its GNU OpenMP layer.
    GNU OpenMP is not fork-safe: such a child runs numba's parallel regions serially
    (kernel/fork_safe.py), so paths that have another parallel way (the ufunc pool's
    Python threads) take it there."""
    return _openmp_forked


def _numba_ran_gnu_openmp() -> bool:
    import sys

    parallel = sys.modules.get("numba.np.ufunc.parallel")
    if parallel is None or not getattr(parallel, "_is_initialized", False):
        return False
    try:
        return bool(parallel.threading_layer() == "omp")
    except Exception:
        return True


def _after_fork_child() -> None:
    # Only the forking thread exists in the child: no regions in flight, no governor (the
    # child's first engine pool starts one), and a lock no dead thread can hold.
    global _lock, _width_lock, _in_regions, _governor, _openmp_forked
    _lock = threading.Lock()
    _width_lock = threading.RLock()
    _in_regions = 0
    _governor = None
    _openmp_forked = _openmp_forked or _numba_ran_gnu_openmp()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_child)


__all__ = [
    "available_cores",
    "blas_threads",
    "budget",
    "govern_step",
    "in_regions",
    "openmp_forked",
    "own_running_threads",
    "region",
    "register_blas_setter",
    "reset",
    "set_blas_threads",
    "set_width",
    "start_governor",
    "sync_numba",
    "system_running_threads",
    "width",
    "width_for",
]
