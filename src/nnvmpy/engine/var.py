"""Versioned variable queues: the one place where the engine's ordering rule lives.

Ordering rule (MXNet's engine guarantee), enforced by ``Var.add_read`` / ``Var.add_write``
and released by ``Var.done_read`` / ``Var.done_write``:

    A writer waits for all earlier readers and writers; readers wait only for earlier writers.

So two pushes that share a variable, at least one of them mutating it, run in push order,
and consecutive readers of a variable may run at the same time.

Nested pushes (threaded engines; NaiveEngine gets the same effect by running them at once):
a push made by a running function F, from F's own thread, is part of F. Where F holds the
variable, the push does not queue behind pushes made after F started: a read of a
variable F reads or writes, and a write of a variable F writes, are granted at once
(``add_nested_read`` / ``add_nested_write``), and the variable stays held until those
nested pushes finish too. A write of a variable F only reads queues normally (after F).
This keeps ``y = custom(x); z = y * 2`` right when the custom function pushes the write of
``y`` itself. Waiting inside F on a variable F holds cannot wait for the variable's queue
(that waits for F): on a variable F reads it returns at once (no one can change it while
F runs); on one F writes it waits for F's nested pushes to finish.

Exception rule (MXNet's ``var_exception``), applied by every engine:

1. When a pushed function raises (or an async function passes an exception to its
   ``on_complete``), the exception is put in a new ``ExcCell`` and that cell is stored on
   every variable the function mutates.
2. Before a function runs, the engine looks at all of its variables (const first, then
   mutate). If one holds an unreported cell, the function is skipped and that *same* cell is
   stored on the function's own mutate variables. ``FnProperty.DELETE_VAR`` and
   ``FnProperty.NO_SKIP`` functions are never skipped (freeing memory must still happen).
3. ``wait_for_var(v)`` re-raises the cell held by ``v`` (as ``EngineError`` whose message
   names the op that first failed, with the original exception as ``__cause__``) and marks
   the cell reported. ``wait_for_all()`` re-raises the first unreported cell of the engine
   and marks every cell reported.
4. A reported cell stops counting for functions pushed after the report; functions pushed
   before it still see it, so which functions are skipped never depends on timing. A
   failure and everything it propagated to share one cell, so reporting it once clears it
   from every variable that holds it: later pushes read and write those variables
   normally, and the next write gives the variable a fresh value (MXNet's shared
   ``exception_ptr``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ..base import NNVMError, engine_error_for

if TYPE_CHECKING:
    from nnvmpy.engine.base import Opr


class OprBlock:
    """One push of an operator: waits on its variables, then runs once on a pool.

    ``wait`` counts the variables that have not granted this block yet; the engine
    schedules the block when it reaches zero. A block with ``opr`` None is a waiter: it
    runs nothing and only wakes the thread in ``wait_for_var``. ``parent`` is the running
    block that pushed this one (nested push); ``children`` counts its own nested pushes
    whose work (with their descendants) has not finished.
    """

    __slots__ = (
        "children",
        "ctx",
        "drain",
        "finished",
        "opr",
        "parent",
        "pool",
        "priority",
        "seq",
        "wait",
        "waiter",
    )

    def __init__(self, opr: Opr | None, ctx: Any, priority: int, pool: Any, seq: int) -> None:
        self.opr = opr
        self.seq = seq  # push number: FIFO among equal priorities, and rule 4
        self.ctx = ctx
        self.priority = priority
        self.pool = pool
        self.wait = 0
        self.waiter: Any = None
        self.parent: OprBlock | None = None
        self.children = 0
        self.finished = False
        self.drain: list[Any] | None = None  # waiters for children == 0


_FAILED_STEP = "_nnvmpy_failed_step"


def set_failed_step(exc: BaseException, name: str) -> None:
    """Make the failure of a function that runs several steps name the step that raised
    (the executor's bulk segments: the failing node, not the segment)."""
    try:
        setattr(exc, _FAILED_STEP, name)
    except (AttributeError, TypeError):  # an exception type without a __dict__
        pass


class ExcCell:
    """A stored failure, shared by every variable it reached (see the module's rule 4)."""

    __slots__ = ("exc", "name", "reported_at")

    def __init__(self, exc: BaseException, name: str) -> None:
        self.exc = exc
        # a function running several named steps (an executor segment) names the failed one
        self.name = getattr(exc, _FAILED_STEP, None) or name
        self.reported_at: int | None = None  # push number of the report, None: unreported

    def counts_for(self, seq: int) -> bool:
        """Whether the push numbered ``seq`` is skipped by this failure (rule 4)."""
        return self.reported_at is None or seq < self.reported_at

    def report(self, at: int) -> None:
        """Raise as EngineError from the original exception; pushes from ``at`` on run."""
        if self.reported_at is None:
            self.reported_at = at
        exc = self.exc
        raise engine_error_for(exc)(
            f"engine function failed in '{self.name}': {type(exc).__name__}: {exc}"
        ) from exc


_NO_QUEUE: tuple[()] = ()  # Var._queue until a push has to wait


class Var:
    """An engine variable: a token for a resource, with the queue of pushes waiting on it.

    The threaded engines call these methods with the engine's lock held.
    ``version`` counts completed writes; ``exc`` is the failure stored by rule 1/2.
    """

    __slots__ = ("_queue", "_readers", "_writers", "dead", "exc", "fence", "name", "version")

    def __init__(self, name: str | None = None) -> None:
        # Entries not granted yet, in push order: (block, is_write). Invariant: when the
        # queue is not empty, a writer holds the variable or the head entry is a writer
        # (reads only queue behind a writer), so a finished read only unblocks a writer.
        # The deque is made by the first push that has to wait: most variables (an
        # array's, a planned block's) never queue, and a deque is ~600 bytes and one more
        # object for every full collection to walk.
        self._queue: deque[tuple[OprBlock, bool]] | tuple[()] = _NO_QUEUE
        self._readers = 0  # granted reads that have not finished
        self._writers = 0  # granted writes not finished: 1, or more with nested writes
        self.dead = False
        self.exc: ExcCell | None = None
        # engine/fences.py: {id(stream): (stream, event)} left by GPU functions, or None
        self.fence: dict[int, tuple[Any, Any]] | None = None
        self.name = name
        self.version = 0

    def __repr__(self) -> str:
        label = self.name or hex(id(self))
        return f"<Var {label} v{self.version}{' dead' if self.dead else ''}>"

    def idle(self) -> bool:
        """True when no push is running on or waiting for this variable."""
        return not self._writers and not self._readers and not self._queue

    def add_read(self, blk: OprBlock) -> bool:
        """Register a read; True if granted now (no earlier writer is pending)."""
        if self._writers or self._queue:
            self._waiting().append((blk, False))
            return False
        self._readers += 1
        return True

    def add_write(self, blk: OprBlock) -> bool:
        """Register a write; True if granted now (nothing earlier is pending)."""
        if self._writers or self._readers or self._queue:
            self._waiting().append((blk, True))
            return False
        self._writers = 1
        return True

    def _waiting(self) -> deque[tuple[OprBlock, bool]]:
        """The queue, made on first use."""
        queue = self._queue
        if queue is _NO_QUEUE:
            queue = self._queue = deque()
        return queue  # type: ignore[return-value]

    def add_nested_read(self) -> None:
        """Grant a read pushed by a running function that holds this variable."""
        self._readers += 1

    def add_nested_write(self) -> None:
        """Grant a write pushed by a running function that writes this variable."""
        self._writers += 1

    def done_read(self, ready: list[OprBlock]) -> None:
        """A granted read finished; a writer it held back may now be granted."""
        self._readers -= 1
        if not self._readers and not self._writers and self._queue:
            # a writer, by the queue invariant (and a deque, being not empty)
            blk = self._queue.popleft()[0]
            self._writers = 1
            blk.wait -= 1
            if not blk.wait:
                ready.append(blk)

    def done_write(self, ready: list[OprBlock]) -> None:
        """A granted write finished: bump the version, then grant what it held back."""
        self.version += 1
        if self._writers == 1 and not self._queue:  # nothing waits: skip release_write
            self._writers = 0
            return
        self.release_write(ready)

    def release_write(self, ready: list[OprBlock]) -> None:
        """End a write without a new version (a waiter). Once no write holds the variable,
        grant the reads that follow, or the next writer when no read holds it."""
        self._writers -= 1
        if self._writers:
            return
        queue = self._queue  # () or a deque: popped only when not empty
        while queue:
            blk, is_write = queue[0]
            if is_write:
                if not self._readers:
                    queue.popleft()
                    self._writers = 1
                    blk.wait -= 1
                    if not blk.wait:
                        ready.append(blk)
                return
            queue.popleft()
            self._readers += 1
            blk.wait -= 1
            if not blk.wait:
                ready.append(blk)


def pending_error(variables: Iterable[Var], seq: int) -> ExcCell | None:
    """The first failure held by these variables that skips push number ``seq`` (rule 2)."""
    for v in variables:
        cell = v.exc
        if cell is not None and (cell.reported_at is None or seq < cell.reported_at):
            return cell
    return None


def dedup_vars(
    const_vars: Sequence[Var], mutate_vars: Sequence[Var]
) -> tuple[tuple[Var, ...], tuple[Var, ...]]:
    """Drop duplicates and const vars that are also mutated (mutate wins); refuse dead vars."""
    mutate = tuple(dict.fromkeys(mutate_vars)) if len(mutate_vars) > 1 else tuple(mutate_vars)
    n_const = len(const_vars)
    if not n_const:
        const: tuple[Var, ...] = ()
    elif n_const == 1:
        const = () if const_vars[0] in mutate else (const_vars[0],)
    else:
        const = tuple(v for v in dict.fromkeys(const_vars) if v not in mutate)
    for v in mutate:
        if v.dead:
            raise NNVMError(f"variable {v!r} was deleted (delete_variable); it cannot be used")
    for v in const:
        if v.dead:
            raise NNVMError(f"variable {v!r} was deleted (delete_variable); it cannot be used")
    return const, mutate
