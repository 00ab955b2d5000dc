"""The engine contract: Engine ABC, operators, the RunContext handed to pushed functions.

Every engine keeps the ordering rule of ``var.py`` and its exception rule; the engines
differ only in where and when a granted function runs (``naive.py``: at once, in the
pushing thread; ``threaded.py``: on a worker pool).
"""

from __future__ import annotations

import abc
import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from ..base import Context, NNVMError
from ..profiler.recorder import RECORDER
from .var import ExcCell, Var, dedup_vars

__all__ = [
    "AsyncFn",
    "Engine",
    "ExcCell",
    "FnProperty",
    "OnComplete",
    "Opr",
    "RunContext",
    "SyncFn",
    "Var",
]


@dataclass(slots=True)
class RunContext:
    """What a running function learns from the engine: its device and stream.

    ``stream`` is None for the device's default stream (every CPU function, and GPU
    functions until a pool hands out its own streams).
    """

    ctx: Context
    stream: object | None = None


class OnComplete(Protocol):
    """The callback an async function calls once, from any thread: ``on_complete()`` on
    success, ``on_complete(exc)`` to report a failure (stored as if the function raised)."""

    def __call__(self, exc: BaseException | None = None, /) -> None: ...


SyncFn = Callable[[RunContext], object]
AsyncFn = Callable[[RunContext, OnComplete], object]


class FnProperty(enum.Enum):
    """What kind of work a function is; decides its pool and whether a failure skips it."""

    NORMAL = "normal"
    COPY_TO_GPU = "copy_to_gpu"  # ThreadedEnginePerDevice runs copies on the GPU's copy pool
    COPY_FROM_GPU = "copy_from_gpu"
    DELETE_VAR = "delete_var"  # delete_variable: runs even when the variable holds a failure
    NO_SKIP = "no_skip"  # runs even when one of its variables holds a failure
    # Short and never blocking: when its variables are free at push time, a threaded engine
    # may run it at once in the pushing thread instead of handing it to a worker (a
    # dependent chain of tiny imperative ops then costs no thread hand-off per op).
    INLINE = "inline"


_NEVER_SKIPPED = (FnProperty.DELETE_VAR, FnProperty.NO_SKIP)


class Opr:
    """A function with its (deduplicated) read and write sets; pushable many times."""

    __slots__ = (
        "all_vars",
        "const_vars",
        "deleted",
        "fn",
        "is_async",
        "mutate_vars",
        "name",
        "prop",
        "skippable",
    )
    const_vars: tuple[Var, ...]
    mutate_vars: tuple[Var, ...]
    all_vars: tuple[Var, ...]  # const_vars + mutate_vars

    def __init__(
        self,
        fn: Callable[..., object],
        const_vars: Sequence[Var],
        mutate_vars: Sequence[Var],
        name: str | None,
        is_async: bool,
        prop: FnProperty = FnProperty.NORMAL,
    ) -> None:
        self.fn = fn
        if len(mutate_vars) == 1 and len(const_vars) <= 1:  # the common case, inlined
            m = mutate_vars[0]
            if not const_vars or const_vars[0] is m:
                self.const_vars, self.mutate_vars, self.all_vars = (), (m,), (m,)
            else:
                c = const_vars[0]
                self.const_vars, self.mutate_vars, self.all_vars = (c,), (m,), (c, m)
            if m.dead or (const_vars and const_vars[0].dead):
                dedup_vars(const_vars, mutate_vars)  # raises the error
        else:
            self.const_vars, self.mutate_vars = dedup_vars(const_vars, mutate_vars)
            self.all_vars = self.const_vars + self.mutate_vars
        # while profiling, a push from a custom op's callback is named '<op_type>::<name>'
        self.name = RECORDER.scoped(name, fn) if RECORDER.on else name
        self.is_async = is_async
        self.prop = prop
        self.skippable = prop not in _NEVER_SKIPPED
        self.deleted = False

    @property
    def label(self) -> str:
        """The name given at push, else the function's qualified name (used in errors)."""
        if self.name:
            return self.name
        return str(getattr(self.fn, "__qualname__", None) or repr(self.fn))

    def __repr__(self) -> str:
        return f"<Opr {self.label}>"


class Engine(abc.ABC):
    """Runs pushed functions in the order their variables demand (see ``var.py``).

    Push and wait methods may be called from any thread, including from inside a pushed
    function: pushes made there are part of that function, and waits there do not
    deadlock a one-thread pool (see ``var.py``, nested pushes).
    """

    def new_var(self, name: str | None = None) -> Var:
        """A fresh variable; ``name`` only shows in reprs."""
        return Var(name)

    def workers_for(self, ctx: Context) -> int:
        """How many functions pushed for ``ctx`` may run at once (worker threads of its
        pool; 1 for an engine that runs each push before the next)."""
        return 1

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
        """Run ``fn(run_ctx)`` once its variables allow; done when it returns."""
        self._push(Opr(fn, const_vars, mutate_vars, name, False, prop), ctx, priority)

    def push_async(
        self,
        fn: AsyncFn,
        ctx: Context,
        const_vars: Sequence[Var] = (),
        mutate_vars: Sequence[Var] = (),
        priority: int = 0,
        name: str | None = None,
        prop: FnProperty = FnProperty.NORMAL,
    ) -> None:
        """Run ``fn(run_ctx, on_complete)``; done when ``on_complete`` is called."""
        self._push(Opr(fn, const_vars, mutate_vars, name, True, prop), ctx, priority)

    def new_operator(
        self,
        fn: AsyncFn,
        const_vars: Sequence[Var] = (),
        mutate_vars: Sequence[Var] = (),
        name: str | None = None,
        prop: FnProperty = FnProperty.NORMAL,
    ) -> Opr:
        """An async operator to push many times without rebuilding its variable sets."""
        return Opr(fn, const_vars, mutate_vars, name, True, prop)

    def push(self, opr: Opr, ctx: Context, priority: int = 0) -> None:
        """Push an operator made by ``new_operator``."""
        if opr.deleted:
            raise NNVMError(f"operator '{opr.label}' was deleted (delete_operator)")
        for v in opr.all_vars:
            if v.dead:
                raise NNVMError(
                    f"operator '{opr.label}' uses {v!r}, which was deleted (delete_variable)"
                )
        self._push(opr, ctx, priority)

    def delete_operator(self, opr: Opr) -> None:
        """Forget an operator; pushes already made still run, new pushes raise NNVMError."""
        opr.deleted = True

    def delete_variable(self, fn: SyncFn, ctx: Context, var: Var) -> None:
        """PushDelete: ``fn(run_ctx)`` runs after every pending use of ``var``; from now on
        using ``var`` raises NNVMError.

        When no push is pending or running on ``var``, ``fn`` runs at once in the calling
        thread (freeing a temporary must not cost an engine push per op).
        """
        if not self.try_delete_idle(var):
            opr = Opr(fn, (), (var,), f"delete_variable({var!r})", False, FnProperty.DELETE_VAR)
            self._push(opr, ctx, 0)
            var.dead = True
            return
        try:
            fn(RunContext(ctx))
        except BaseException as e:  # stored as if a pushed DELETE_VAR function raised
            cell = ExcCell(e, f"delete_variable({var!r})")
            var.exc = cell
            self._add_error(cell)
        var.version += 1

    def try_delete_idle(self, var: Var) -> bool:
        """Delete ``var`` at once if no push is pending or running on it (True); otherwise,
        or if it is dead already, change nothing (False) and let the caller
        ``delete_variable`` it. Freeing a temporary this way costs no function object."""
        return False

    def try_reuse_idle(self, var: Var) -> bool:
        """True if no push is pending or running on ``var`` and it holds no failure, so
        that a new array may take it over as it is (recycling a dead array's variable and
        storage saves an allocation per op). Changes nothing; the caller owns ``var``:
        nothing else may push on it."""
        return False

    @abc.abstractmethod
    def _add_error(self, cell: ExcCell) -> None:
        """Record a fresh failure for the next ``wait_for_all``."""

    @abc.abstractmethod
    def _push(self, opr: Opr, ctx: Context, priority: int) -> None:
        """Schedule one run of ``opr`` (variables already deduplicated and checked)."""

    @abc.abstractmethod
    def wait_for_var(self, var: Var) -> None:
        """Block until every function pushed so far that uses ``var`` has finished; re-raise
        the failure ``var`` holds (EngineError from the original exception)."""

    @abc.abstractmethod
    def wait_for_all(self) -> None:
        """Block until every pushed function has finished; re-raise the first failure not
        reported yet (and mark all stored failures reported)."""

    def quiesce(self, timeout: float | None = None) -> bool:
        """Block until every function pushed so far has finished, without reporting
        failures (they stay for the next wait); False if ``timeout`` seconds passed first.
        Engines that finish every push before it returns (NaiveEngine) have nothing to do."""
        return True

    def shutdown(self, wait: bool = True) -> None:  # noqa: B027 - optional hook
        """Stop worker threads after finishing pending work; a later push restarts them."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"


def check_var(var: Var) -> None:
    """Refuse to wait on a deleted variable."""
    if var.dead:
        raise NNVMError(f"cannot wait for {var!r}: it was deleted (delete_variable)")
