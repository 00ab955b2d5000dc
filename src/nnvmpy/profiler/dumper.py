"""set_config(continuous_dump=True, dump_period=s): the trace file rewritten while profiling.

A daemon thread calls `dump(finished=False)` every `dump_period` seconds from
set_state('run') until set_state('stop') (as MXNet's profiler does), so a long run can be
looked at, or survives a crash, before it ends. Each dump appends only what was recorded
since the one before (trace.TraceFile), so the period costs little. A failing dump (the
file's folder is gone, the disk is full) warns once and ends the periodic dumps; dump()
called by hand still raises.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable


class PeriodicDump:
    """One dumping thread; stop() ends it (and waits for a dump in progress)."""

    def __init__(self, period: float, dump: Callable[[], None], what: str) -> None:
        self.period = period
        self._dump = dump
        self.what = what  # the file, for the warning
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="nnvmpy-profiler-dump", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stopped.wait(self.period):
            try:
                self._dump()
            except Exception as e:  # in a thread nobody waits on: say it, and stop
                warnings.warn(
                    f"profiler: continuous dump to {self.what} failed "
                    f"({type(e).__name__}: {e}); no more periodic dumps until the next "
                    "set_config or set_state('run')",
                    RuntimeWarning,
                    stacklevel=1,
                )
                return

    @property
    def alive(self) -> bool:
        """False once a failed dump ended the thread."""
        return self._thread.is_alive()

    def stop(self) -> None:
        self._stopped.set()
        if self._thread is not threading.current_thread():
            self._thread.join()
