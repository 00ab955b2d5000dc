"""The communication worker: one thread of the process makes every MPI call.

    comm = get_comm()                       # MPI_Init_thread(SERIALIZED) on first use
    job = comm.reserve()                    # in program order: the same id on every worker
    comm.submit(job, "allreduce", grad_np, priority=3, done=on_complete)   # when grad is ready

Why a thread of its own: a collective waits for the slowest worker, and a compute worker
of the engine must never sit in that wait. Engine operations hand their buffer to this
thread (`submit`) and return; the thread calls ``done(None)`` (or ``done(exc)``) later.

Why negotiation: workers make their gradients ready in different orders (thread timing),
but MPI collectives must be issued in one order everywhere. Each round the workers
allgather the ids of the jobs they have ready, and all run the jobs ready everywhere, in
the same order: higher priority first (MXNet's Module: -index, earlier layers first),
small allreduces of one dtype fused into one buffer up to `bucket_bytes` (bucket.py),
larger ones in place.
The round also compares key, dtype and shape of each job across workers: a mismatch
raises KVStoreCommError on every worker instead of summing garbage.

Why MPI_THREAD_SERIALIZED (not FUNNELED): the calls come from this thread, not from the
thread that imported mpi4py, a failing thread's `abort` sends its last words itself, and
mpi4py finalizes from the main thread at exit; all of them hold `_mpi_lock`, so no two MPI
calls ever overlap, which is exactly SERIALIZED's contract. MULTIPLE would make mpich lock
around every call for nothing.

Bounded waits: every wait polls with a deadline (`timeout`, NNVMPY_KVSTORE_TIMEOUT seconds) and
listens for an abort message from a failing peer, so a dead or failed worker turns into
KVStoreCommError here instead of a hang. A worker killed outright makes mpiexec stop the
others (nnvmpy launch names the dead rank).
"""

from __future__ import annotations

import atexit
import functools
import os
import sys
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..base import NNVMError
from .bucket import plan_buckets

Done = Callable[[BaseException | None], None]

KINDS = ("allreduce", "bcast", "barrier")
_ABORT_TAG = 31337
_MAX_OFFER = 64  # jobs one worker offers per negotiation round
_ABORT_GRACE = 0.5  # seconds between telling the peers and MPI_Abort
_SPIN = 5e-5  # seconds a wait tests without sleeping (see Comm._wait)
_YIELD = 1e-3  # then yields the core between tests until this
_NAP_MIN, _NAP_MAX = 2e-5, 2e-4  # then naps, doubling up to _NAP_MAX
_RETRY = 5e-4  # a round that found no common job waits at most this for a new one
# gives the core to another runnable thread (time.sleep(0) instead sleeps the kernel's timer
# slack, 50 us or more, which every peer waiting on this worker pays too)
_yield_core: Callable[[], None] = getattr(os, "sched_yield", lambda: time.sleep(0))
_INSTALL_HINT = (
    "distributed KVStores need mpi4py and an MPI library: pip install 'nnvmpy[dist]' "
    "(mpi4py and the mpich wheel), then start the workers with `nnvmpy launch -n N -- ...`"
)


class KVStoreCommError(NNVMError):
    """Workers disagree (keys, shapes, dtypes), a peer failed, or a wait timed out."""


def load_mpi() -> Any:
    """mpi4py's MPI module, initialised for SERIALIZED threads; a named error without it."""
    try:
        import mpi4py
    except ImportError as exc:
        raise NNVMError(f"kvstore: {_INSTALL_HINT}") from exc
    mpi4py.rc.thread_level = "serialized"
    try:
        from mpi4py import MPI
    except (ImportError, RuntimeError) as exc:  # mpi4py without a loadable libmpi
        msg = f"kvstore: mpi4py could not load an MPI library ({exc}); {_INSTALL_HINT}"
        raise NNVMError(msg) from exc
    if MPI.Query_thread() < MPI.THREAD_SERIALIZED:
        raise NNVMError(
            "kvstore: the MPI library does not provide MPI_THREAD_SERIALIZED, which the "
            "communication thread needs"
        )
    return MPI


@dataclass
class _Job:
    id: int
    kind: str
    array: np.ndarray | None
    priority: int
    done: Done
    what: str
    root: int = 0
    row: tuple[int, ...] = (0, 0, 0, 0, 0)
    send: np.ndarray | None = None  # allreduce: sum these into `array` instead of in place
    finished: bool = False


def _describe(kind: str, array: np.ndarray | None, root: int, what: str) -> tuple[int, ...]:
    """(kind, dtype, nbytes, crc of shape and label, root): what every worker must agree on
    for one job. The label ("push of key 3") is in it, so workers pushing different keys
    of one shape at the same point of the program fail too, instead of summing them."""
    if array is None:
        return (KINDS.index(kind), 0, 0, zlib.crc32(what.encode()), root)
    dtype, shape = array.dtype.str, array.shape
    return _describe_array(KINDS.index(kind), dtype, shape, array.nbytes, root, what)


@functools.lru_cache(maxsize=4096)
def _describe_array(
    kind: int, dtype: str, shape: tuple[int, ...], nbytes: int, root: int, what: str
) -> tuple[int, ...]:
    shape_crc = zlib.crc32(f"{shape!r} {what}".encode())
    return (kind, zlib.crc32(dtype.encode()), nbytes, shape_crc, root)


class Comm:
    """The process's communication thread and its view of MPI_COMM_WORLD."""

    def __init__(self, timeout: float | None = None, bucket_bytes: int | None = None) -> None:
        self.timeout = float(timeout or os.environ.get("NNVMPY_KVSTORE_TIMEOUT", "300"))
        self.bucket_bytes = int(
            bucket_bytes or os.environ.get("NNVMPY_KVSTORE_BUCKET_BYTES", str(1 << 20))
        )
        self._mpi = load_mpi()
        self._mpi_lock = threading.RLock()
        with self._mpi_lock:
            self._world = self._mpi.COMM_WORLD.Dup()
            self._world.Set_errhandler(self._mpi.ERRORS_RETURN)
        self.rank: int = self._world.Get_rank()
        self.size: int = self._world.Get_size()
        self._cond = threading.Condition()
        self._ready: dict[int, _Job] = {}
        self._next_id = 0
        self._error: BaseException | None = None
        self._stop = False
        self._peer_failed = False
        # one negotiation round's buffers: this worker's offer, everyone's (see _round)
        self._offer = np.full((_MAX_OFFER, 6), -1, np.int64)
        self._gathered = np.empty((self.size, _MAX_OFFER, 6), np.int64)
        self._thread = threading.Thread(target=self._run, name="nnvmpy-comm", daemon=True)
        self._thread.start()
        atexit.register(self.close)

    # -- the API of the stores -----------------------------------------------------------------

    def reserve(self) -> int:
        """The id of the next job; call in program order (the same order on every worker)."""
        with self._cond:
            self._next_id += 1
            return self._next_id

    def submit(
        self,
        job_id: int,
        kind: str,
        array: np.ndarray | None,
        done: Done,
        priority: int = 0,
        what: str = "",
        root: int = 0,
        send: np.ndarray | None = None,
    ) -> None:
        """Hand a ready job to the thread; `done` is called from it once the job has run.

        An allreduce sums `array` in place, or, with `send` (same shape and dtype), writes
        the sum of the workers' `send` into `array` (MPI reads the one and writes the
        other: no copy of ours between them).
        """
        if kind not in KINDS:
            raise NNVMError(f"kvstore comm: unknown job kind {kind!r}; expected one of {KINDS}")
        if array is not None and not (
            isinstance(array, np.ndarray) and array.flags.c_contiguous and array.flags.writeable
        ):
            raise NNVMError(
                f"kvstore comm: {what or kind} needs a writeable C-contiguous numpy array, "
                f"got {type(array).__name__}"
            )
        if send is not None and (
            kind != "allreduce"
            or not isinstance(send, np.ndarray)
            or not send.flags.c_contiguous
            or array is None
            or send.shape != array.shape
            or send.dtype != array.dtype
        ):
            raise NNVMError(
                f"kvstore comm: {what or kind}: `send` must be a C-contiguous numpy array of "
                f"the receive array's shape and dtype, for an allreduce"
            )
        row = _describe(kind, array, root, what)
        job = _Job(job_id, kind, array, priority, done, what, root, row, send)
        with self._cond:
            if self._error is None and not self._stop:
                self._ready[job_id] = job
                self._cond.notify()
                return
            exc = self._error or KVStoreCommError("kvstore comm: the communicator is closed")
        done(exc)

    def run(
        self, kind: str, array: np.ndarray | None = None, what: str = "", root: int = 0
    ) -> None:
        """Reserve, submit and wait: a blocking collective (init, barrier, checks)."""
        finished = threading.Event()
        failure: list[BaseException] = []

        def done(exc: BaseException | None) -> None:
            if exc is not None:
                failure.append(exc)
            finished.set()

        self.submit(self.reserve(), kind, array, done, priority=1 << 30, what=what, root=root)
        finished.wait()
        if failure:
            raise failure[0]

    def allreduce(self, array: np.ndarray, what: str = "") -> None:
        """Sum `array` over all workers, in place (blocking)."""
        self.run("allreduce", array, what)

    def bcast(self, array: np.ndarray, root: int = 0, what: str = "") -> None:
        """Overwrite `array` with rank `root`'s (blocking)."""
        self.run("bcast", array, what, root)

    def barrier(self) -> None:
        """Return once every worker has called barrier."""
        self.run("barrier", None, "barrier")

    def abort(self, message: str, exit_code: int = 1) -> None:
        """Tell the other workers why this one fails, then MPI_Abort the job."""
        with self._mpi_lock:
            payload = str(message) if not self._peer_failed else None
            reqs = [
                self._world.isend(payload, dest=r, tag=_ABORT_TAG)
                for r in range(self.size)
                if r != self.rank and payload is not None
            ]
            deadline = time.monotonic() + 1.0
            while reqs and time.monotonic() < deadline:
                reqs = [r for r in reqs if not r.Test()]
                time.sleep(0.001)
        time.sleep(_ABORT_GRACE)  # the peers print why before mpiexec stops them
        with self._mpi_lock:
            self._mpi.COMM_WORLD.Abort(exit_code)
        os._exit(exit_code)  # mpich's MPI_Abort can return to the caller

    def close(self) -> None:
        """Finish the ready jobs and stop the thread (at exit, before MPI_Finalize)."""
        with self._cond:
            self._stop = True
            self._cond.notify()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout=self.timeout)
        if self._error is not None or self._thread.is_alive():
            # MPI_Finalize would wait for a dead or diverged peer: leave without it
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(1)

    # -- the thread ----------------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._ready and not self._stop and self._error is None:
                    self._cond.wait(0.05)
                    if not self._ready:
                        break
                if self._error is not None or (self._stop and not self._ready):
                    return
                ready = dict(self._ready)
            try:
                if not ready:
                    self._poll_abort()
                    continue
                self._round(ready)
            except BaseException as exc:  # every pending job learns of it
                self._fail_all(exc)
                return

    def _fail_all(self, exc: BaseException) -> None:
        print(f"nnvmpy kvstore, rank {self.rank}: {exc}", file=sys.stderr, flush=True)
        with self._cond:
            self._error = exc
            jobs = list(self._ready.values())
            self._ready.clear()
        for job in jobs:
            job.done(exc)

    def _round(self, ready: dict[int, _Job]) -> None:
        """Agree with the other workers on the jobs ready everywhere, then run them.

        One small allgather a round, whatever the number of jobs in it: each worker's
        offer is a table of [id, kind, dtype, nbytes, shape crc, root] rows, so the same
        collective that finds the common jobs also checks that every worker describes
        them alike.
        """
        ids = sorted(ready)[:_MAX_OFFER]  # the lowest ids: the oldest job is always offered
        offer, n = self._offer, len(ids)
        offer[:, 0] = -1
        for k, i in enumerate(ids):
            offer[k, 0] = i
            offer[k, 1:] = ready[i].row
        gathered = self._gathered
        self._wait(self._call(self._world.Iallgather, offer, gathered), patient=True)
        common = set(ids)
        for r in range(self.size):
            if r != self.rank:
                common.intersection_update(gathered[r, :, 0].tolist())
        if not common:
            with self._cond:  # peers are behind: ask again when more is ready here, or soon
                if len(self._ready) == len(ready) and not self._stop:
                    self._cond.wait(_RETRY)
            return
        self._check_agree(common, gathered, offer[:n])
        jobs = [ready[i] for i in sorted(common)]
        with self._cond:
            for job in jobs:
                del self._ready[job.id]
        try:
            self._execute(jobs)
        except BaseException as exc:
            for job in jobs:
                if not job.finished:
                    job.finished = True
                    job.done(exc)
            raise

    def _check_agree(self, common: set[int], gathered: np.ndarray, mine: np.ndarray) -> None:
        """Every worker's rows of the common jobs must equal this worker's."""
        want = [row for row in mine.tolist() if row[0] in common]  # sorted by id everywhere
        for rank in range(self.size):
            if rank == self.rank:
                continue
            theirs = [row for row in gathered[rank].tolist() if row[0] in common]
            if theirs == want:
                continue
            bad = next(w[0] for w, t in zip(want, theirs, strict=False) if w != t)
            job = self._ready_job(bad)
            shape = None if job.array is None else job.array.shape
            dtype = None if job.array is None else job.array.dtype
            raise KVStoreCommError(
                f"kvstore: workers disagree on collective #{bad} ({job.what or job.kind}): rank "
                f"{self.rank} has {job.kind} of {dtype} {shape}, rank "
                f"{rank} has a different key, kind, dtype, shape or root (every worker must "
                f"push and pull the same keys with the same shapes, in the same order)"
            )

    def _ready_job(self, job_id: int) -> _Job:
        with self._cond:
            return self._ready[job_id]

    def _execute(self, jobs: list[_Job]) -> None:
        reduces = [j for j in jobs if j.kind == "allreduce"]
        others = [j for j in jobs if j.kind != "allreduce"]
        for bucket in plan_buckets(reduces, self.bucket_bytes):
            if len(bucket) == 1:
                job = bucket[0]
                buf = job.array.reshape(-1)  # 0-d arrays too: a 1-d view
                send = self._mpi.IN_PLACE if job.send is None else job.send.reshape(-1)
                self._wait(self._call(self._world.Iallreduce, send, buf))
            else:
                flat = np.concatenate(
                    [(j.array if j.send is None else j.send).ravel() for j in bucket]
                )
                self._wait(self._call(self._world.Iallreduce, self._mpi.IN_PLACE, flat))
                start = 0
                for j in bucket:
                    arr = j.array
                    assert arr is not None
                    np.copyto(arr, flat[start : start + arr.size].reshape(arr.shape))
                    start += arr.size
            for j in bucket:
                j.finished = True
                j.done(None)
        for job in others:
            if job.kind == "bcast":
                buf = job.array.reshape(-1)  # type: ignore[union-attr]
                self._wait(self._call(self._world.Ibcast, buf, root=job.root), patient=True)
            else:
                self._wait(self._call(self._world.Ibarrier), patient=True)
            job.finished = True
            job.done(None)

    # -- MPI calls, each under the lock --------------------------------------------------------

    def _call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        with self._mpi_lock:
            return fn(*args, **kwargs)

    def _wait(self, request: Any, patient: bool = False) -> None:
        """Poll `request` until done; a peer's abort message or the deadline raises.

        MPICH advances a non-blocking collective only inside MPI calls on each process,
        so every moment this thread sleeps is added to the collective's latency on the
        other workers too, and a large allreduce, which moves its data in many steps, pays
        it at every step. Hence: test in a tight loop for `_SPIN` seconds (a peer that is
        already there answers within microseconds), then yield the core between tests.
        Only a `patient` wait (negotiation, barrier, broadcast: a peer may still be
        computing for a long time) goes on to nap after `_YIELD`, at most `_NAP_MAX`
        (the peer pays at most that on arrival, and this thread costs little CPU). The
        data collectives of a round never nap: every worker has agreed to run them now.
        """
        test, lock = request.Test, self._mpi_lock
        with lock:
            if test():
                return
        now = time.monotonic
        started = now()
        deadline = started + self.timeout
        spin_until = started + _SPIN
        yield_until = started + _YIELD if patient else deadline
        nap, spins = _NAP_MIN, 0
        while True:
            with lock:
                if test():
                    return
            spins += 1
            t = now()
            if t < spin_until:
                continue
            if spins % 64 == 0 or t >= yield_until:  # every 64th test, or before a nap
                self._poll_abort()
                if t > deadline:
                    raise KVStoreCommError(
                        f"kvstore: rank {self.rank} waited {self.timeout:g} s for the other "
                        f"workers (NNVMPY_KVSTORE_TIMEOUT): a worker hung, died or stopped pushing"
                    )
            if t < yield_until:
                _yield_core()
            else:
                time.sleep(nap)
                nap = min(nap * 2, _NAP_MAX)

    def _poll_abort(self) -> None:
        with self._mpi_lock:
            status = self._mpi.Status()
            if not self._world.Iprobe(source=self._mpi.ANY_SOURCE, tag=_ABORT_TAG, status=status):
                return
            source = status.Get_source()
            message = self._world.recv(source=source, tag=_ABORT_TAG)
        self._peer_failed = True  # our abort need not echo it back
        raise KVStoreCommError(f"kvstore: worker {source} failed: {message}")


_COMM: Comm | None = None
_COMM_LOCK = threading.Lock()


def get_comm() -> Comm:
    """The process's communicator (created, with MPI, on first use); from then on an
    uncaught exception aborts the job, telling the other workers why."""
    global _COMM
    with _COMM_LOCK:
        if _COMM is None:
            _COMM = Comm()
            _abort_on_uncaught(_COMM)
        return _COMM


def _abort_on_uncaught(comm: Comm) -> None:
    """An exception that ends this worker must not leave the others waiting until the
    timeout: print it as usual, then abort with its one-line summary."""
    previous = sys.excepthook

    def hook(exc_type: type[BaseException], exc: BaseException, tb: Any) -> None:
        previous(exc_type, exc, tb)
        if not issubclass(exc_type, KeyboardInterrupt | SystemExit):
            comm.abort(f"{exc_type.__name__}: {exc}".splitlines()[0])

    sys.excepthook = hook
