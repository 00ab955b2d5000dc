"""nv.mon.Monitor: statistics of every intermediate array, every `interval` batches.

MXNet 1.x's training monitor over Executor.set_monitor_callback. install() hooks it into
executors (Module.install_monitor does, for each of its devices); between tic() and toc()
of an active step (every `interval`-th tic) each node output whose name matches `pattern`
is summarised with `stat_func` (default: the norm divided by sqrt(size)); toc() adds the
arguments and auxiliary states and returns (step, name, text) triples, sorted by name
with sort=True.

    mon = nv.mon.Monitor(10, pattern=".*weight")
    mod.install_monitor(mon)
    mon.tic(); mod.forward_backward(batch); mod.update(); mon.toc_print()
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Callable
from typing import Any

from .base import NNVMError


def _default_stat(x: Any) -> Any:
    from nnvmpy import nd

    norm: Any = nd.norm(x)
    return norm / math.sqrt(max(x.size, 1))


class Monitor:
    """Collects stat_func(array) for the arrays whose names match `pattern`."""

    def __init__(
        self,
        interval: int,
        stat_func: Callable[[Any], Any] | None = None,
        pattern: str = ".*",
        sort: bool = False,
        monitor_all: bool = False,
    ) -> None:
        if int(interval) < 1:
            raise NNVMError(f"Monitor: interval must be >= 1, got {interval!r}")
        self.interval = int(interval)
        self.stat_func = stat_func if stat_func is not None else _default_stat
        self.re_prog = re.compile(pattern)
        self.sort = sort
        self.monitor_all = monitor_all
        self.activated = False
        self.queue: list[tuple[int, str, Any]] = []
        self.step = 0
        self.exes: list[Any] = []

    def stat_helper(self, name: str, array: Any) -> None:
        """The executors' callback: record the statistic of a matching array."""
        if not self.activated or not self.re_prog.match(name):
            return
        self.queue.append((self.step, name, self.stat_func(array)))

    def install(self, exe: Any) -> None:
        """Watch an executor (its node outputs, and with monitor_all its node inputs)."""
        exe.set_monitor_callback(self.stat_helper, self.monitor_all)
        self.exes.append(exe)

    def tic(self) -> None:
        """Start collecting, if this step is one of every `interval`."""
        if self.step % self.interval == 0:
            for exe in self.exes:
                for arr in list(exe.arg_arrays) + list(exe.aux_arrays):
                    arr.wait_to_read()
            self.queue = []
            self.activated = True
        self.step += 1

    def toc(self) -> list[tuple[int, str, str]]:
        """Stop collecting; (step, name, statistic as text) for everything recorded, then
        for the matching arguments and auxiliary states of every executor."""
        if not self.activated:
            return []
        for exe in self.exes:
            names = exe._symbol.list_arguments() + exe._symbol.list_auxiliary_states()
            for name, arr in zip(names, list(exe.arg_arrays) + list(exe.aux_arrays)):
                if self.re_prog.match(name):
                    self.queue.append((self.step, name, self.stat_func(arr)))
        self.activated = False
        queue = sorted(self.queue, key=lambda q: q[1]) if self.sort else self.queue
        res = []
        for step, name, values in queue:
            values = values if isinstance(values, list | tuple) else [values]
            text = ""
            for v in values:
                text += (str(v.asscalar()) if v.size == 1 else str(v.asnumpy())) + "\t"
            res.append((step, name, text))
        self.queue = []
        return res

    def toc_print(self) -> None:
        """toc(), logged one line per statistic."""
        for step, name, text in self.toc():
            logging.info("Batch: %7d %30s %s", step, name, text)


__all__ = ["Monitor"]
