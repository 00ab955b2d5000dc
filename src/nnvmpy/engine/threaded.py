"""ThreadedEngine: per-variable queues (``var.py``) feeding a pool of worker threads.

One lock guards all engine state: variable queues, ready queues, idle workers and the
pending count. Each critical section is a few list operations, so under the GIL a single
lock is both the cheapest and the simplest choice.

How a push flows: ``_push`` registers the block on each of its variables; a block every
variable has granted goes to its pool's ready queue (``_schedule``) and wakes one idle
worker. A worker runs it (``_execute``) and ``_complete`` releases its variables, which
may grant and schedule the blocks queued behind it; under that same lock acquisition the
worker takes its pool's next ready block, and wakes no sleeping worker for it, so a chain
of dependent pushes runs on one thread without a wake-up per push. A block of an
``FnProperty.INLINE`` function that every variable grants at push time skips the pool: the
pushing thread runs it before ``_push`` returns (MXNet runs its kAsync functions the same way).

Waiting: ``wait_for_var`` queues a waiter block as a writer of the variable, so it is
granted once every earlier use has finished. A waiting engine worker does not block its
pool: it keeps running ready blocks of its own pool until its waiter is granted, which is
what lets a function pushed to a one-thread pool wait on work queued behind it.

The lock is not reentrant, and the garbage collector may run a finalizer on a thread that
holds it: a ``__del__`` or ``weakref.finalize`` callback must not call the engine directly
(queue the call and make it from ordinary code, as ``ndarray.Chunk`` does).
"""

from __future__ import annotations

import atexit
import heapq
import itertools
import os
import sys
import threading
import weakref
from collections import deque

from .. import config
from .. import threads as _threads
from ..base import Context, NNVMError
from ..profiler.recorder import RECORDER
from . import fences
from . import streams as _streams
from .base import Engine, FnProperty, Opr, RunContext, Var, check_var
from .inline import InlinePushMixin
from .streams import completer, worker_stream
from .tls import _tls
from .var import ExcCell, OprBlock, pending_error

_COPY_PROPS = (FnProperty.COPY_TO_GPU, FnProperty.COPY_FROM_GPU)
_DELETE_VAR = FnProperty.DELETE_VAR
_QUIESCE_TIMEOUT_S = 60.0  # at fork and at exit, how long to wait for pending work


class _Waker:
    """A sleeping thread's private semaphore.

    ``sleeping`` (read and written under the engine lock) says one release is owed; only
    ``_wake`` releases, so every release pairs with one ``lock.acquire()``.
    """

    __slots__ = ("idle_in", "lock", "sleeping")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.lock.acquire()
        self.sleeping = False
        self.idle_in: list[_Waker] | None = None  # the pool idle list it sits in, if any


def _wake(w: _Waker) -> None:
    """Release a sleeping thread (engine lock held)."""
    if w.sleeping:
        w.sleeping = False
        if w.idle_in is not None:
            w.idle_in.remove(w)
            w.idle_in = None
        w.lock.release()


class _Waiter:
    """What a wait_for_var / wait_for_all caller sleeps on until ``done``."""

    __slots__ = ("done", "target", "var", "waker")

    def __init__(self, waker: _Waker, var: Var | None = None, target: int = 0) -> None:
        self.done = False
        self.waker = waker
        self.var = var  # wait_for_var: the variable the waiter block is queued on
        self.target = target  # wait_for_all: done when at most this many pushes are pending


class _Pool:
    """Worker threads and their ready queues: FIFO for priority 0, a heap for the rest."""

    __slots__ = (
        "claimed",
        "engine",
        "generation",
        "heap",
        "idle",
        "name",
        "nthreads",
        "ready",
        "running",
        "threads",
    )

    def __init__(self, engine: ThreadedEngine, name: str, nthreads: int) -> None:
        if nthreads < 1:
            raise NNVMError(f"engine pool '{name}' needs at least 1 worker thread, got {nthreads}")
        self.engine = engine
        self.name = name
        self.nthreads = nthreads
        self.ready: deque[OprBlock] = deque()
        self.heap: list[tuple[int, int, OprBlock]] = []  # (-priority, push order, block)
        self.idle: list[_Waker] = []
        self.threads: list[threading.Thread] = []
        self.running = False
        self.generation = 0  # bumped by shutdown: idle workers of older generations exit
        self.claimed = False  # the next block scheduled here needs no wake (see _complete)

    def pop(self) -> OprBlock | None:
        """The ready block to run next: highest priority first, FIFO among equals."""
        heap = self.heap
        if heap and (heap[0][0] < 0 or not self.ready):
            return heapq.heappop(heap)[2]
        if self.ready:
            return self.ready.popleft()
        return None

    def has_work(self) -> bool:
        return bool(self.ready or self.heap)


class _OnComplete:
    """The on_complete handed to an async function; completes its block exactly once."""

    __slots__ = ("blk", "called", "engine")

    def __init__(self, engine: ThreadedEngine, blk: OprBlock) -> None:
        self.engine = engine
        self.blk = blk
        self.called = False

    def claim(self) -> bool:
        """True for the first caller only (callbacks may race with the function raising)."""
        with self.engine._lock:
            first = not self.called
            self.called = True
        return first

    def __call__(self, exc: BaseException | None = None, /) -> None:
        opr = self.blk.opr
        assert opr is not None
        if not self.claim():
            raise NNVMError(f"on_complete of '{opr.label}' called more than once")
        if exc is None:
            self.engine._complete(self.blk, None, False)
            return
        if not isinstance(exc, BaseException):
            exc = NNVMError(f"on_complete got {exc!r}, expected an exception or nothing")
        self.engine._complete(self.blk, ExcCell(exc, opr.label), True)


#: Push and report numbers, one sequence for every threaded engine of the process: a
#: variable can outlive the engine that stored a failure in it (a device's shared scratch
#: space or random state, created once), and rule 4 compares the failure's report number
#: with later push numbers. With a count per engine, a new ThreadedEngine numbered its
#: pushes from 1, below the old engine's report, and skipped every op using that
#: variable: convolutions silently left their outputs unwritten after an earlier test had
#: reported a failing op that used the scratch space.
_PUSH_NUMBERS = itertools.count(1)


class ThreadedEngine(InlinePushMixin, Engine):
    """One shared worker pool; ``num_workers`` defaults to NNVMPY_CPU_WORKER_NTHREADS."""

    def __init__(self, num_workers: int | None = None) -> None:
        self._init_state()
        n = config.CPU_WORKER_NTHREADS.get_int() if num_workers is None else num_workers
        self._pool = _Pool(self, "worker", n)

    def _init_state(self) -> None:
        self._lock = threading.Lock()
        self._pending = 0  # pushed, not completed
        self._errors: list[ExcCell] = []  # fresh failures, oldest first
        self._all_waiters: list[_Waiter] = []
        self._scratch: list[OprBlock] = []  # granted blocks, only used under the lock
        self._seq = _PUSH_NUMBERS  # numbers pushes (OprBlock.seq) and reports
        self._rctx: RunContext | None = None  # the last one made: inline pushes repeat a device
        _ENGINES.add(self)

    # ---- pools (ThreadedEnginePerDevice overrides these two) ----
    def _pool_for(self, ctx: Context, prop: FnProperty) -> _Pool:
        return self._pool

    def _pools(self) -> list[_Pool]:
        return [self._pool]

    def workers_for(self, ctx: Context) -> int:
        return self._pool_for(ctx, FnProperty.NORMAL).nthreads

    def _start(self, pool: _Pool) -> None:
        with self._lock:
            if pool.running:
                return
            pool.running = True
            threads = [
                threading.Thread(
                    target=self._worker,
                    args=(pool, pool.generation),
                    daemon=True,
                    name=f"nnvmpy-{pool.name}-{i}",
                )
                for i in range(pool.nthreads)
            ]
            pool.threads = threads
        _threads.start_governor()  # the process's thread budget follows the machine's load
        for t in threads:
            t.start()

    # ---- push, run, complete ----
    def _push(self, opr: Opr, ctx: Context, priority: int) -> None:
        # Every CPU function of either engine runs on self._pool: skip the lookup for it.
        pool = self._pool_for(ctx, opr.prop) if ctx.device_type == "gpu" else self._pool
        if not pool.running:
            self._start(pool)
        blk = OprBlock(opr, ctx, priority, pool, next(self._seq))
        stack = _tls.stack
        if stack and stack[-1].pool.engine is self:
            self._push_nested(blk, stack[-1])
            return
        lock = self._lock
        lock.acquire()  # explicit acquire/release: half the cost of `with` on this hot path
        try:
            n = 0
            for v in opr.const_vars:
                if not v.add_read(blk):
                    n += 1
            for v in opr.mutate_vars:
                if not v.add_write(blk):
                    n += 1
            self._pending += 1
            if n:
                blk.wait = n
                return
            if opr.prop is not FnProperty.INLINE:
                self._schedule(blk)
                return
        finally:
            lock.release()
        # Granted at once and marked INLINE: run it here, as a worker would.
        if stack is None:
            stack = _tls.stack = []
        self._execute(blk, stack)

    def _push_nested(self, blk: OprBlock, parent: OprBlock) -> None:
        """A push from inside the running ``parent``: part of it (see var.py, nested pushes)."""
        opr = blk.opr
        assert opr is not None
        assert parent.opr is not None
        held, held_w = parent.opr.all_vars, parent.opr.mutate_vars
        with self._lock:
            if parent.finished:  # an async parent that already called on_complete
                held = held_w = ()
            else:
                blk.parent = parent
                parent.children += 1
            n = 0
            for v in opr.const_vars:
                if v in held:
                    v.add_nested_read()
                elif not v.add_read(blk):
                    n += 1
            for v in opr.mutate_vars:
                if v in held_w:
                    v.add_nested_write()
                elif not v.add_write(blk):
                    n += 1
            self._pending += 1
            if n:
                blk.wait = n
            else:
                self._schedule(blk)

    def _schedule(self, blk: OprBlock) -> None:
        """Queue a granted block on its pool and wake an idle worker (lock held)."""
        pool: _Pool = blk.pool
        if blk.priority:
            heapq.heappush(pool.heap, (-blk.priority, blk.seq, blk))
        else:
            pool.ready.append(blk)
        if pool.claimed:  # a worker completing in this pool takes this block itself
            pool.claimed = False
            return
        idle = pool.idle
        if idle:
            w = idle.pop()
            w.sleeping = False
            w.idle_in = None
            w.lock.release()

    def _dispatch(self, ready: list[OprBlock]) -> None:
        """Schedule blocks granted by a completion; waiter blocks fire at once (lock held)."""
        i = 0
        while i < len(ready):
            blk = ready[i]
            i += 1
            if blk.opr is None:
                waiter: _Waiter = blk.waiter
                assert waiter.var is not None
                waiter.var.release_write(ready)  # may grant more, appended to `ready`
                waiter.done = True
                _wake(waiter.waker)
            else:
                self._schedule(blk)
        ready.clear()

    def _worker(self, pool: _Pool, generation: int) -> None:
        _tls.pool = pool
        stack: list[OprBlock] = []
        _tls.stack = stack
        waker = _tls.waker = _Waker()
        execute = self._execute
        lock = self._lock  # a child after fork gets new threads, which read the new lock
        ready, heap = pool.ready, pool.heap
        blk: OprBlock | None = None
        width_gen = -1  # nnvmpy.threads: numba's team width is per thread, re-applied on change
        while True:
            if _threads._generation != width_gen:
                width_gen = _threads.sync_numba()
            if blk is not None:
                # The completion popped our next block under the same lock acquisition.
                blk = execute(blk, stack, pool)
                continue
            lock.acquire()
            try:
                if heap and (heap[0][0] < 0 or not ready):  # inlined pool.pop()
                    blk = heapq.heappop(heap)[2]
                elif ready:
                    blk = ready.popleft()
                else:
                    if pool.generation != generation:  # shut down (maybe restarted since)
                        return
                    waker.sleeping = True
                    waker.idle_in = pool.idle
                    pool.idle.append(waker)
            finally:
                lock.release()
            if blk is None:
                waker.lock.acquire()

    def _execute(
        self, blk: OprBlock, stack: list[OprBlock], pool: _Pool | None = None
    ) -> OprBlock | None:
        """Run one block; with ``pool``, also take that pool's next ready block."""
        opr = blk.opr
        assert opr is not None
        if opr.skippable:
            for v in opr.all_vars:
                if v.exc is not None:
                    cell = pending_error(opr.all_vars, blk.seq)
                    if cell is not None:
                        return self._complete(blk, cell, False, pool)  # skipped: propagate
                    break
        ctx = blk.ctx
        # A delete only frees memory (on the host's books): it queues nothing on the
        # device, so it needs no stream and no event to complete.
        stream = (
            worker_stream(ctx) if ctx.device_type == "gpu" and opr.prop is not _DELETE_VAR else None
        )
        fenced = fences.on()  # see fences.py: variables may carry device fences
        if fenced and opr.prop is _DELETE_VAR:
            events = fences.pending_events(opr.mutate_vars)
            if events:  # memory a kernel may still read: freed once the device ran it
                self._delete_after(blk, events)
                return None
        rctx = RunContext(ctx, stream)
        stack.append(blk)
        recording = RECORDER.on  # the profiler's one test per push
        if opr.is_async:
            done = _OnComplete(self, blk)
            try:
                if fenced:
                    fences.honour(opr.all_vars, None)
                opr.fn(rctx, RECORDER.wrap_done(done, opr.label, blk.ctx) if recording else done)
            except BaseException as e:
                if done.claim():
                    self._complete(blk, ExcCell(e, opr.label), True)
                else:  # raised after on_complete: its variables may be in use already
                    self._add_error(ExcCell(e, opr.label))
            finally:
                stack.pop()
            return None
        try:
            if fenced:
                fences.honour(opr.all_vars, stream)
            if recording:
                RECORDER.run_sync(opr.fn, rctx, opr.label)
            else:
                opr.fn(rctx)
        except BaseException as e:
            stack.pop()
            return self._complete(blk, ExcCell(e, opr.label), True, pool)
        stack.pop()
        if stream is not None:
            if fenced and opr.prop not in _COPY_PROPS:  # complete now, fenced (fences.py)
                return self._complete_queued(blk, stream, pool)
            return self._complete_after(blk, stream, pool)  # once the device ran it
        return self._complete(blk, None, False, pool)

    def _complete_queued(
        self, blk: OprBlock, stream: object, pool: _Pool | None
    ) -> OprBlock | None:
        """Complete a GPU function whose kernels are queued on `stream`, leaving a fence on
        its variables: an event of the stream's ring (fences.py), recorded now."""
        opr = blk.opr
        assert opr is not None
        device_id = blk.ctx.device_id
        try:
            event = fences.record(stream, lambda: _streams._new_event(device_id))
        except BaseException:  # no event to be had: complete once the device ran it
            return self._complete_after(blk, stream, pool)
        with self._lock:
            fences.leave(opr.const_vars, opr.mutate_vars, stream, event)
        return self._complete(blk, None, False, pool)

    def _delete_after(self, blk: OprBlock, events: list[object]) -> None:
        """Run a delete on the device's completion thread once `events` (the fences on its
        variable not passed yet) have passed."""
        opr = blk.opr
        assert opr is not None

        def done(exc: BaseException | None) -> None:
            cell = None if exc is None else ExcCell(exc, opr.label)
            if cell is None:
                try:
                    for event in events[1:]:
                        event.synchronize()  # type: ignore[attr-defined]
                    opr.fn(RunContext(blk.ctx))
                except BaseException as e:
                    cell = ExcCell(e, opr.label)
            self._complete(blk, cell, cell is not None)

        completer(blk.ctx.device_id).submit(events[0], done, recycle=False)
        return None

    def _complete_after(self, blk: OprBlock, stream: object, pool: _Pool | None) -> OprBlock | None:
        """Complete a GPU function once an event recorded on its stream now has passed:
        on the device's completion thread, while this worker goes on with other work, or
        here when the event passes before other work is ready (see streams.py)."""
        label = blk.opr.label if blk.opr is not None else "?"
        prop = blk.opr.prop if blk.opr is not None else FnProperty.NORMAL
        lane = prop.value if prop in _COPY_PROPS else "compute"  # see streams.py, lanes
        events = completer(blk.ctx.device_id, lane)
        try:
            event = events.record(stream)
        except BaseException:  # no event to be had: wait on the stream here, as MXNet 1.x
            try:
                stream.synchronize()  # type: ignore[attr-defined]
            except BaseException as e:
                return self._complete(blk, ExcCell(e, label), True, pool)
            return self._complete(blk, None, False, pool)
        if pool is not None and events.passed_soon(event, pool.has_work):
            return self._complete(blk, None, False, pool)

        def done(exc: BaseException | None) -> None:
            if exc is None:
                self._complete(blk, None, False)
            else:
                self._complete(blk, ExcCell(exc, label), True)

        events.submit(event, done)
        return None

    def _complete(
        self, blk: OprBlock, cell: ExcCell | None, fresh: bool, pool: _Pool | None = None
    ) -> OprBlock | None:
        """Release ``blk``'s variables and schedule what that grants. With ``pool`` (the
        calling worker's), pop and return its next ready block too: the caller runs it, so
        no sleeping worker is woken for it."""
        opr = blk.opr
        assert opr is not None
        ready = self._scratch
        lock = self._lock
        lock.acquire()
        try:
            for v in opr.const_vars:
                v.done_read(ready)
            if cell is None:
                for v in opr.mutate_vars:
                    v.done_write(ready)
            else:
                if fresh:
                    self._add_error_locked(cell)
                for v in opr.mutate_vars:
                    v.exc = cell
                    v.done_write(ready)
            self._pending -= 1
            blk.finished = True
            if blk.parent is not None and not blk.children:
                self._release_parent(blk)
            if pool is None:
                if ready:
                    self._dispatch(ready)
            else:
                pool.claimed = True
                if ready:
                    self._dispatch(ready)
                pool.claimed = False
            if self._all_waiters:
                self._check_all_waiters()
            return None if pool is None else pool.pop()
        finally:
            lock.release()

    def _release_parent(self, blk: OprBlock) -> None:
        """``blk`` and all its nested pushes finished: tell its ancestors (lock held)."""
        parent = blk.parent
        while parent is not None:
            parent.children -= 1
            if parent.children:
                return
            if parent.drain:
                for w in parent.drain:
                    w.done = True
                    _wake(w.waker)
                parent.drain = None
            if not parent.finished:
                return
            parent = parent.parent

    def try_reuse_idle(self, var: Var) -> bool:
        # `with`, not acquire()/release(): an exception raised by a signal handler between
        # the two (KeyboardInterrupt, pytest-timeout) would leave the lock held for good
        with self._lock:
            return not (var._writers or var._readers or var._queue or var.dead) and var.exc is None

    def try_delete_idle(self, var: Var) -> bool:
        if var.fence is not None and not fences.passed(var):
            return False  # a kernel may still use its memory: delete_variable waits for it
        with self._lock:
            if var.dead or not var.idle():
                return False
            var.dead = True
            return True

    def _add_error(self, cell: ExcCell) -> None:
        with self._lock:
            self._add_error_locked(cell)

    def _add_error_locked(self, cell: ExcCell) -> None:
        errors = self._errors
        if len(errors) > 64:
            errors[:] = [c for c in errors if c.reported_at is None]
        errors.append(cell)

    def _check_all_waiters(self) -> None:
        keep = []
        for w in self._all_waiters:
            if self._pending <= w.target:
                w.done = True
                _wake(w.waker)
            else:
                keep.append(w)
        self._all_waiters = keep

    # ---- waiting ----
    def _my_pool(self) -> _Pool | None:
        """The pool this thread works for, if it is a worker of this engine."""
        pool = _tls.pool
        return pool if pool is not None and pool.engine is self else None

    def _sleep_until(self, waiter: _Waiter, timeout: float | None = None) -> bool:
        """Block until ``waiter.done``; a worker of this engine runs ready work meanwhile."""
        waker = waiter.waker
        pool = self._my_pool()
        if pool is None:
            while True:
                with self._lock:
                    if waiter.done:
                        return True
                    waker.sleeping = True
                try:
                    woken = waker.lock.acquire(timeout=-1 if timeout is None else timeout)
                except BaseException:  # KeyboardInterrupt while waiting
                    self._cancel_sleep(waker)
                    raise
                if not woken:
                    self._cancel_sleep(waker)
                    return waiter.done
        stack = _tls.stack
        assert stack is not None
        while True:
            with self._lock:
                if waiter.done:
                    if pool.has_work() and pool.idle:  # we may have been woken for it
                        self._schedule_wake(pool)
                    return True
                blk = pool.pop()
                if blk is None:
                    waker.sleeping = True
                    waker.idle_in = pool.idle
                    pool.idle.append(waker)
            if blk is None:
                waker.lock.acquire()
            else:
                self._execute(blk, stack)

    def _cancel_sleep(self, waker: _Waker) -> None:
        """Stop sleeping early, so that no stale release is left on the waker."""
        with self._lock:
            if waker.sleeping:
                waker.sleeping = False
            else:
                waker.lock.acquire()  # _wake released it meanwhile: consume that release

    def _schedule_wake(self, pool: _Pool) -> None:
        w = pool.idle.pop()
        w.sleeping = False
        w.idle_in = None
        w.lock.release()

    def _waker(self) -> _Waker:
        waker = _tls.waker
        if waker is None:
            waker = _tls.waker = _Waker()
        return waker

    def wait_for_var(self, var: Var) -> None:
        check_var(var)
        stack = _tls.stack
        holder = None
        if stack:
            for b in reversed(stack):
                if b.opr is not None and var in b.opr.all_vars:
                    holder = b  # a function running on this thread holds var
                    break
        with self._lock:
            if holder is not None:
                # Waiting for var's queue would wait for the holder itself. Its reads see
                # the final value already; a write holder waits for its own nested pushes.
                assert holder.opr is not None
                if var not in holder.opr.mutate_vars or not holder.children:
                    waiter = None
                else:
                    waiter = _Waiter(self._waker())
                    if holder.drain is None:
                        holder.drain = []
                    holder.drain.append(waiter)
            elif var.idle():
                waiter = None
            else:
                waiter = _Waiter(self._waker(), var)
                blk = OprBlock(None, None, 0, None, 0)
                blk.waiter = waiter
                blk.wait = 1
                var.add_write(blk)  # a writer: granted after every earlier use of var
        if waiter is not None:
            self._sleep_until(waiter)
        if var.fence is not None and holder is None:
            fences.settle(var)  # the device has run what the fences stand for
        cell = var.exc
        if cell is not None:
            if holder is None:
                var.exc = None  # every earlier use of var has finished
            if cell.reported_at is None:
                cell.report(next(self._seq))

    def _running_here(self) -> int:
        stack = _tls.stack
        if not stack:
            return 0
        return sum(1 for b in stack if b.pool is not None and b.pool.engine is self)

    def _wait_all(self, timeout: float | None = None) -> bool:
        # Inside a pushed function, the functions running on this thread cannot finish
        # before the wait does, so they are left out of the count.
        target = self._running_here()
        with self._lock:
            if self._pending <= target:
                return True
            waiter = _Waiter(self._waker(), target=target)
            self._all_waiters.append(waiter)
        return self._sleep_until(waiter, timeout)

    def quiesce(self, timeout: float | None = None) -> bool:
        done = self._wait_all(timeout)
        if done and fences.on():
            fences.settle_all()
        return done

    def wait_for_all(self) -> None:
        self._wait_all()
        if fences.on():
            fences.settle_all()  # functions completed when queued: now run on the device
        with self._lock:
            errors, self._errors = self._errors, []
        at = next(self._seq)
        first = next((c for c in errors if c.reported_at is None), None)
        for c in errors:
            if c.reported_at is None:
                c.reported_at = at
        if first is not None:
            first.report(at)

    # ---- lifecycle ----
    def shutdown(self, wait: bool = True) -> None:
        in_worker = self._my_pool() is not None
        if wait and not in_worker:
            self._wait_all(_QUIESCE_TIMEOUT_S)
        with self._lock:
            threads = []
            for pool in self._pools():
                pool.generation += 1
                pool.running = False
                while pool.idle:
                    self._schedule_wake(pool)
                threads.extend(pool.threads)
                pool.threads = []
        me = threading.current_thread()
        for t in threads:
            if t is not me:
                t.join(timeout=5.0)  # daemon threads: a stuck one must not hang exit

    def _quiesce_for_fork(self) -> None:
        # Running functions have no thread in the child, so let them finish first (as
        # MXNet stops its engine before fork); a worker forking cannot wait for itself.
        if self._my_pool() is None:
            self._wait_all(_QUIESCE_TIMEOUT_S)

    def _after_fork_child(self) -> None:
        # Only the forking thread exists in the child: new lock, no workers, no sleepers.
        self._lock = threading.Lock()
        self._all_waiters = []
        restart = []
        for pool in self._pools():
            pool.threads = []
            pool.idle.clear()
            pool.running = False
            if pool.has_work():
                restart.append(pool)
        if _tls.pool is not None and _tls.pool.engine is self:
            _tls.pool = None  # the forking worker is an ordinary thread in the child
        for pool in restart:
            self._start(pool)


_ENGINES: weakref.WeakSet[ThreadedEngine] = weakref.WeakSet()
_forking: list[ThreadedEngine] = []  # engines whose locks the forking thread holds


def _before_fork() -> None:
    engines = list(_ENGINES)
    for eng in engines:  # quiesce every engine before taking any lock: work may cross engines
        eng._quiesce_for_fork()
    for eng in engines:
        eng._lock.acquire()  # no thread is halfway through a change when the fork copies us
    _forking[:] = engines


def _after_fork_parent() -> None:
    for eng in _forking:
        eng._lock.release()
    _forking.clear()


def _after_fork_child() -> None:
    for eng in _forking:
        eng._after_fork_child()
    _forking.clear()


def _shutdown_all() -> None:
    for eng in list(_ENGINES):
        try:
            eng.shutdown(wait=True)
        except Exception as e:  # pragma: no cover - best effort at exit
            print(f"nnvmpy: engine shutdown at exit failed: {e!r}", file=sys.stderr)


os.register_at_fork(
    before=_before_fork, after_in_parent=_after_fork_parent, after_in_child=_after_fork_child
)
atexit.register(_shutdown_all)
