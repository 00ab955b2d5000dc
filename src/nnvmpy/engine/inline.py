"""The threaded engines' push_sync fast path for small functions marked INLINE.

An imperative op on a few CPU elements takes microseconds, so the way it is pushed is
most of its cost. When no earlier push holds or waits for its variables, none holds a
failure and none is deleted, push_sync grants them, runs the function in the pushing
thread and releases them, as _push and _execute would, but without an Opr, an OprBlock or
the calls between them. Anything else (a busy variable, a nested push, a repeated
variable) takes the general path, so the ordering and failure rules of var.py hold as
they are. So does an INLINE GPU function (pushed so when GPU functions complete once
queued, engine/fences.py): granted at once, _push runs it in the pushing thread as a
worker would, on that thread's own stream, and leaves its fence.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..base import Context
from ..profiler.recorder import RECORDER
from .base import FnProperty, Opr, RunContext, SyncFn, Var
from .tls import _tls
from .var import ExcCell

_INLINE = FnProperty.INLINE


class InlinePushMixin:
    """push_sync for ThreadedEngine (which provides the state and methods used here)."""

    if TYPE_CHECKING:
        _lock: threading.Lock
        _pending: int
        _rctx: RunContext | None
        _scratch: list[Any]
        _all_waiters: list[Any]

        def _push(self, opr: Opr, ctx: Context, priority: int) -> None: ...
        def _add_error_locked(self, cell: ExcCell) -> None: ...
        def _dispatch(self, ready: list[Any]) -> None: ...
        def _check_all_waiters(self) -> None: ...

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
        """push_sync; an INLINE function whose variables are free runs here and now.

        The imperative hot path (a small CPU op): when no earlier push holds or waits for
        its variables, none holds a failure and none is deleted, this is what _push and
        _execute would do (grant, run in this thread, release) without an Opr, an
        OprBlock or the frames between them. Anything else takes the general path.
        """
        if (
            prop is not _INLINE
            or ctx.device_type != "cpu"  # a GPU one: _push runs it with a stream and fence
            or _tls.stack
            or (len(mutate_vars) > 1 and len(set(mutate_vars)) < len(mutate_vars))
        ):
            self._push(Opr(fn, const_vars, mutate_vars, name, False, prop), ctx, priority)
            return
        lock = self._lock
        lock.acquire()
        free = True
        for v in const_vars:
            if v._writers or v._queue or v.exc is not None or v.dead or v.fence:
                free = False
                break
        if free:
            for v in mutate_vars:
                if v._writers or v._readers or v._queue or v.exc is not None or v.dead or v.fence:
                    free = False
                    break
        if not free:
            lock.release()
            self._push(Opr(fn, const_vars, mutate_vars, name, False, prop), ctx, priority)
            return
        for v in const_vars:
            v._readers += 1
        for v in mutate_vars:
            v._writers = 1
        self._pending += 1
        lock.release()
        # granted: run it here (in this frame: a call per push costs), then release
        rctx = self._rctx
        if rctx is None or rctx.ctx is not ctx:
            rctx = self._rctx = RunContext(ctx)
        cell = None
        try:
            if RECORDER.on:  # the profiler's one test per push
                RECORDER.run_sync(fn, rctx, name)
            else:
                fn(rctx)
        except BaseException as e:
            cell = ExcCell(e, name or str(getattr(fn, "__qualname__", fn)))
        ready = self._scratch
        lock.acquire()
        try:
            for v in const_vars:
                if v._queue:
                    v.done_read(ready)
                else:
                    v._readers -= 1
            if cell is not None:
                self._add_error_locked(cell)
            for v in mutate_vars:
                if cell is not None:
                    v.exc = cell
                if v._queue:
                    v.done_write(ready)
                else:
                    v._writers = 0
                    v.version += 1
            self._pending -= 1
            if ready:
                self._dispatch(ready)
            if self._all_waiters:
                self._check_all_waiters()
        finally:
            lock.release()


__all__ = ["InlinePushMixin"]
