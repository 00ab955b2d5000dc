"""NaiveEngine: every push runs at once in the pushing thread — the reference semantics.

Use it (``NNVMPY_ENGINE_TYPE=NaiveEngine``) to debug ordering: each function runs inside
the push call, so a debugger or a traceback shows the code that pushed it. Failures are
still stored and re-raised at the next wait, as on every engine.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from .. import threads as _threads
from ..base import Context, NNVMError
from ..profiler.recorder import RECORDER
from .base import Engine, FnProperty, Opr, RunContext, SyncFn, Var, check_var
from .var import ExcCell, pending_error


class _Done:
    """on_complete for the naive engine: the pushing thread blocks until it is called."""

    __slots__ = ("called", "exc", "lock")

    def __init__(self) -> None:
        self.called = False
        self.exc: BaseException | None = None
        self.lock = threading.Lock()
        self.lock.acquire()

    def __call__(self, exc: BaseException | None = None, /) -> None:
        if self.called:
            raise NNVMError("on_complete called more than once")
        self.called = True
        self.exc = exc
        self.lock.release()


_AFTER_EVERY_REPORT = 1 << 62  # a push number later than every report


class NaiveEngine(Engine):
    """Runs each function when it is pushed; ``priority`` has nothing to reorder."""

    def __init__(self) -> None:
        self._errors: list[ExcCell] = []
        self._rctx: RunContext | None = None  # the last one made: pushes repeat a device
        # functions run on the pushing thread, but OpenBLAS's threads follow the process's
        # budget as under the threaded engines (NNVMPY_NUM_THREADS, load-following)
        _threads.start_governor()

    def push_sync(
        self,
        fn: SyncFn,
        ctx: Context,
        const_vars: Sequence[Var] = (),
        mutate_vars: Sequence[Var] = (),
        priority: int = 0,
        name: str | None = None,
        prop: FnProperty = FnProperty.NORMAL,
    ) -> None:
        # The imperative hot path: when no variable is deleted, holds a failure or is
        # repeated, run fn here and now without building an Opr (what _push would do).
        for v in const_vars:
            if v.dead or v.exc is not None:
                break
        else:
            for v in mutate_vars:
                if v.dead or v.exc is not None:
                    break
            else:
                if len(mutate_vars) == 1 or len(set(mutate_vars)) == len(mutate_vars):
                    rctx = self._rctx
                    if rctx is None or rctx.ctx is not ctx:
                        rctx = self._rctx = RunContext(ctx)
                    try:
                        if RECORDER.on:  # the profiler's one test per push
                            RECORDER.run_sync(fn, rctx, name)
                        else:
                            fn(rctx)
                    except BaseException as e:
                        cell = ExcCell(e, Opr(fn, (), (), name, False).label)
                        self._add_error(cell)
                        for v in mutate_vars:
                            v.exc = cell
                    for v in mutate_vars:
                        v.version += 1
                    return
        super().push_sync(fn, ctx, const_vars, mutate_vars, priority, name, prop)

    def _push(self, opr: Opr, ctx: Context, priority: int) -> None:
        # Everything reported so far was reported before this push, so reported failures
        # never count here, also those another engine reported (at its own numbers): this
        # push's number is later than any of them.
        cell = None
        if opr.skippable:
            for v in opr.all_vars:
                if v.exc is not None:  # rarely: then look for a failure that counts
                    cell = pending_error(opr.all_vars, _AFTER_EVERY_REPORT)
                    break
        if cell is None:
            exc = self._run(opr, RunContext(ctx))
            if exc is not None:
                cell = ExcCell(exc, opr.label)
                self._add_error(cell)
        for v in opr.mutate_vars:
            if cell is not None:
                v.exc = cell
            v.version += 1

    def try_reuse_idle(self, var: Var) -> bool:
        return not var.dead and var.exc is None  # nothing is ever pending (see below)

    def try_delete_idle(self, var: Var) -> bool:
        # Every push has finished when it returns: nothing is ever pending on a variable.
        if var.dead:
            return False  # the push path raises the error
        var.dead = True
        return True

    def _run(self, opr: Opr, rctx: RunContext) -> BaseException | None:
        """Run the function to completion; the failure it reports, if any."""
        if not opr.is_async:
            try:
                if RECORDER.on:  # the profiler's one test per push
                    RECORDER.run_sync(opr.fn, rctx, opr.label)
                else:
                    opr.fn(rctx)
            except BaseException as e:
                return e
            return None
        done = _Done()
        try:
            opr.fn(rctx, RECORDER.wrap_done(done, opr.label, rctx.ctx) if RECORDER.on else done)
        except BaseException as e:
            if not done.called:
                return e
            self._add_error(ExcCell(e, opr.label))  # raised after on_complete
        done.lock.acquire()  # wait for on_complete, maybe called from another thread
        return done.exc

    def _add_error(self, cell: ExcCell) -> None:
        errors = self._errors
        if len(errors) > 64:
            errors[:] = [c for c in errors if c.reported_at is None]
        errors.append(cell)

    def wait_for_var(self, var: Var) -> None:
        check_var(var)
        cell = var.exc
        if cell is not None:
            var.exc = None
            if cell.reported_at is None:
                cell.report(0)

    def wait_for_all(self) -> None:
        errors, self._errors = self._errors, []
        first = next((c for c in errors if c.reported_at is None), None)
        for c in errors:
            if c.reported_at is None:
                c.reported_at = 0
        if first is not None:
            first.report(0)
