"""nv.profiler: MXNet 1.9.1's profiler API over the dependency engine.

While the profiler runs (`set_state('run')`), every engine operation is timed on the
thread that runs it, under the name it was pushed with: the op's name for nd calls
(imperative), "node (op)" for a bound graph's nodes (symbolic; shown by op name, with the
node in the event's args). A CustomOp's Python forward/backward is timed as
'<op_type>::pure_python' and what it pushes as '<op_type>::<op>', in the "Custom Operator"
category (recorder.py, operator/custom.py). `dump()` writes a Chrome trace (trace.py: a
row per engine worker, the storage pool's bytes in use as a counter), `dumps()` the
aggregate table or JSON (stats.py). With continuous_dump (on by default, as in MXNet) a
thread dumps every dump_period seconds while the profiler runs (dumper.py). Domain / Task
/ Frame / Event / Counter / Marker (objects.py) add your own spans, counters and instants.
With profiling off, the engine pays one flag test per push. NNVMPY_PROFILER_AUTOSTART=1
profiles the whole run and dumps at exit (config.py).

Differences from MXNet: there is no C API to profile (profile_api is accepted and records
nothing); the trace file is complete JSON after every dump, also the periodic ones (MXNet's
is not until the last); only autostart dumps at exit (MXNet dumps whenever it profiled);
a Custom node also shows as one 'Custom' operation, which spans its callback;
nnvmpy's kvstores have no server processes: a call with profile_process='server' needs
set_kvstore_handle() first, as in MXNet, then logs that there is no server and changes
nothing (MXNet's answer for a kvstore without servers).
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import warnings

from ..base import NNVMError, ParamError
from ..param import Parameter, field
from . import stats, trace
from .dumper import PeriodicDump
from .objects import Counter, Domain, Event, Frame, Marker, Task
from .recorder import RECORDER

__all__ = [
    "Counter",
    "Domain",
    "Event",
    "Frame",
    "Marker",
    "ProfilerConfig",
    "Task",
    "dump",
    "dump_profile",
    "dumps",
    "get_config",
    "pause",
    "profiler_set_config",
    "profiler_set_state",
    "resume",
    "set_config",
    "set_kvstore_handle",
    "set_state",
]


class ProfilerConfig(Parameter):
    """MXNet's ProfileConfigParam: what set_config accepts, with MXNet's defaults."""

    profile_all = field(bool, default=False, describe="Profile all. Default is False.")
    profile_symbolic = field(bool, default=True, describe="Profile symbolic operators.")
    profile_imperative = field(bool, default=True, describe="Profile imperative operators.")
    profile_memory = field(bool, default=True, describe="Profile memory.")
    profile_api = field(bool, default=True, describe="Profile the C API (nothing to profile).")
    filename = field(str, default="profile.json", describe="File name to write profiling info.")
    continuous_dump = field(
        bool, default=True, describe="Dump the trace periodically while profiling runs."
    )
    dump_period = field(
        float, default=1.0, lower_bound=0.001, describe="Seconds between periodic dumps."
    )
    aggregate_stats = field(bool, default=False, describe="Maintain aggregate stats (dumps).")
    profile_process = field(
        str, default="worker", enum=["server", "worker"], describe="Which process to profile."
    )


_config = ProfilerConfig()
_trace_lock = threading.Lock()  # one dump at a time (yours and the periodic thread's)
_trace_file: trace.TraceFile | None = None  # the trace being written, until a finished dump
_dumper: PeriodicDump | None = None
_dumper_lock = threading.Lock()  # set_config / set_state from several threads


_kvstore_handle: object = None


def set_kvstore_handle(handle: object) -> None:
    """Name the kvstore (or its handle) whose servers profile_process='server' calls
    address, as in MXNet's distributed profiling. nnvmpy's kvstores have no servers."""
    global _kvstore_handle
    _kvstore_handle = handle


def _check_process(fn: str, profile_process: str) -> bool:
    """True when the call is for this (worker) process. A 'server' call needs a kvstore
    (NNVMError without one, as MXNet's) and then does nothing: there is no server."""
    if profile_process not in ("worker", "server"):
        raise ParamError(
            f"profiler.{fn}: profile_process expects 'worker' or 'server', got {profile_process!r}"
        )
    if profile_process == "worker":
        return True
    if _kvstore_handle is None:
        raise NNVMError(
            f"profiler.{fn}: profile_process='server' needs the kvstore whose servers to "
            "profile; call profiler.set_kvstore_handle(kv) first"
        )
    logging.getLogger(__name__).warning(
        "profiler.%s: the kvstore has no server process to profile; profile the worker "
        "process instead (profile_process='worker')",
        fn,
    )
    return False


def set_config(**kwargs: object) -> None:
    """Configure the profiler (keyword arguments only); fields not given take their
    defaults, as in MXNet. Unknown keys or bad values raise ParamError."""
    global _config
    parsed = ProfilerConfig.parse(kwargs, "profiler.set_config")
    if not _check_process("set_config", parsed.profile_process):
        return
    _config = c = parsed
    RECORDER.ops_enabled = c.profile_all or c.profile_symbolic or c.profile_imperative
    RECORDER.symbolic = c.profile_all or c.profile_symbolic
    RECORDER.imperative = c.profile_all or c.profile_imperative
    RECORDER.memory_enabled = c.profile_all or c.profile_memory
    RECORDER.update()
    _update_dumper()


def get_config() -> ProfilerConfig:
    """The configuration set_config made (not in MXNet's API)."""
    return _config


def set_state(state: str = "stop", profile_process: str = "worker") -> None:
    """'run' starts recording (and with continuous_dump the periodic dumps), 'stop'
    stops both (records are kept for dump/dumps)."""
    worker = _check_process("set_state", profile_process)
    if state not in ("run", "stop"):
        raise ParamError(f"profiler.set_state: state expects 'run' or 'stop', got {state!r}")
    if not worker:
        return
    RECORDER.running = state == "run"
    RECORDER.paused = False  # a new state ends a pause (MXNet's tests rely on it)
    RECORDER.update()
    _update_dumper()


def _update_dumper() -> None:
    """Run the periodic dump while the profiler runs with continuous_dump (at the
    configured period), and stop it otherwise."""
    global _dumper
    with _dumper_lock:
        want = RECORDER.running and _config.continuous_dump
        period, filename = _config.dump_period, _config.filename
        same = _dumper is not None and (_dumper.period, _dumper.what) == (period, filename)
        if _dumper is not None and not (want and same and _dumper.alive):
            _dumper.stop()
            _dumper = None
        if want and _dumper is None:
            _dumper = PeriodicDump(period, lambda: _dump(False), filename)


@atexit.register
def _stop_dumper_at_exit() -> None:
    """Let a periodic dump in progress finish, so that exit leaves the file whole."""
    if _dumper is not None:
        _dumper.stop()


def pause(profile_process: str = "worker") -> None:
    """Stop recording until resume(); the state stays 'run'."""
    if not _check_process("pause", profile_process):
        return
    RECORDER.paused = True
    RECORDER.update()


def resume(profile_process: str = "worker") -> None:
    """Record again after pause()."""
    if not _check_process("resume", profile_process):
        return
    RECORDER.paused = False
    RECORDER.update()


def dump(finished: bool = True, profile_process: str = "worker") -> None:
    """Write the Chrome trace of everything recorded since the last finished dump to the
    configured filename. finished=True ends that trace: the next dump starts a new one."""
    if _check_process("dump", profile_process):
        _dump(finished)


def _dump(finished: bool) -> None:
    global _trace_file
    with _trace_lock:
        tf = _trace_file
        # a new trace after a finished dump or clear() (both replace trace_from), or when
        # the configured file changed
        if tf is None or tf.start is not RECORDER.trace_from or tf.filename != _config.filename:
            tf = _trace_file = trace.TraceFile(_config.filename, RECORDER.trace_from)
        tf.dump(RECORDER)
        if finished:
            RECORDER.trace_from = tf.done  # what that trace holds; the next one starts here
            _trace_file = None


def _after_fork_in_child() -> None:
    """A forked child has no dump thread, and maybe a lock the parent's thread held."""
    global _dumper, _trace_lock, _dumper_lock
    _dumper, _trace_lock, _dumper_lock = None, threading.Lock(), threading.Lock()


os.register_at_fork(after_in_child=_after_fork_in_child)


def dumps(
    reset: bool = False, format: str = "table", sort_by: str = "total", ascending: bool = False
) -> str:
    """The aggregate statistics ('' unless set_config(aggregate_stats=True)): per
    category, each name's count and total/min/max/avg time, rows sorted by `sort_by`
    ('total', 'avg', 'min', 'max', 'count'); format 'table' or 'json'. reset=True starts
    the statistics afresh after this call."""
    stats.check_args(reset, format, sort_by, ascending)
    text = ""
    if _config.aggregate_stats:
        render = stats.as_table if format == "table" else stats.as_json
        text = render(RECORDER, sort_by, ascending)
    if reset:
        RECORDER.stats_from = RECORDER.marks()
    return text


def profiler_set_config(mode: str = "symbolic", filename: str = "profile.json") -> None:
    """Deprecated MXNet spelling: set_config(profile_<mode>=True, filename=filename)."""
    warnings.warn(
        "profiler.profiler_set_config() is deprecated. Please use profiler.set_config() instead",
        stacklevel=2,
    )
    if mode not in ("symbolic", "all"):
        raise ParamError(
            f"profiler.profiler_set_config: mode expects 'symbolic' or 'all', got {mode!r}"
        )
    set_config(**{f"profile_{mode}": True, "filename": filename})


def profiler_set_state(state: str = "stop") -> None:
    """Deprecated MXNet spelling of set_state."""
    warnings.warn(
        "profiler.profiler_set_state() is deprecated. Please use profiler.set_state() instead",
        stacklevel=2,
    )
    set_state(state)


def dump_profile() -> None:
    """Deprecated MXNet spelling of dump(True)."""
    warnings.warn(
        "profiler.dump_profile() is deprecated. Please use profiler.dump() instead", stacklevel=2
    )
    dump(True)


def autostart() -> None:
    """NNVMPY_PROFILER_AUTOSTART=1: profile everything from now on, dump the trace (and
    print nothing) at exit, as MXNET_PROFILER_AUTOSTART does."""
    set_config(profile_all=True, aggregate_stats=True)
    set_state("run")
    atexit.register(_dump_at_exit)


def _dump_at_exit() -> None:
    if RECORDER.running:
        from nnvmpy.engine import get_engine

        try:
            get_engine().wait_for_all()  # what is still queued belongs to the run
        except Exception:  # a failed op: its error was the user's to see, dump anyway
            pass
        set_state("stop")
        dump(True)
