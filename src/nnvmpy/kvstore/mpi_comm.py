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
The round also compares dtype and shape of each job across workers: a mismatch raises
KVStoreCommError on every worker instead of summing garbage.

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
import os
import sys
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..base import NNVMError
from .bucket import plan_buckets

Done = Callable[[BaseException | None], None]

KINDS = ("allreduce", "bcast", "barrier")
_ABORT_TAG = 31337
_MAX_OFFER = 64  # jobs one worker offers per negotiation round
_ABORT_GRACE = 0.5  # seconds between telling the peers and MPI_Abort
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
    finished: bool = False
    row: np.ndarray = field(default_factory=lambda: np.zeros(5, np.int64))


def _describe(kind: str, array: np.ndarray | None, root: int) -> np.ndarray:
    """[kind, dtype, nbytes, shape crc, root]: what every worker must agree on for one job."""
    if array is None:
        return np.array([KINDS.index(kind), 0, 0, 0, root], np.int64)
    shape_crc = zlib.crc32(repr(array.shape).encode())
    dtype_code = zlib.crc32(array.dtype.str.encode())
    return np.array([KINDS.index(kind), dtype_code, array.nbytes, shape_crc, root], np.int64)


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
    ) -> None:
        """Hand a ready job to the thread; `done` is called from it once the job has run."""
        if kind not in KINDS:
            raise NNVMError(f"kvstore comm: unknown job kind {kind!r}; expected one of {KINDS}")
        if array is not None and not (
            isinstance(array, np.ndarray) and array.flags.c_contiguous and array.flags.writeable
        ):
            raise NNVMError(
                f"kvstore comm: {what or kind} needs a writeable C-contiguous numpy array, "
                f"got {type(array).__name__}"
            )
        job = _Job(
            job_id, kind, array, priority, done, what, root, row=_describe(kind, array, root)
        )
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
        """Agree with the other workers on the jobs ready everywhere, then run them."""
        ids = sorted(ready)[:_MAX_OFFER]  # the lowest ids: the oldest job is always offered
        rows = np.stack([np.concatenate(([i], ready[i].row)) for i in ids]).astype(np.int64)
        tables = self._allgather_rows(rows)
        common = set(ids)
        for table in tables:
            common &= set(table[:, 0].tolist())
        if not common:
            time.sleep(0.0005)  # peers are behind; ask again when more is ready
            return
        self._check_agree(common, tables, ready)
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

    def _allgather_rows(self, rows: np.ndarray) -> list[np.ndarray]:
        """Every worker's offered rows, in one fixed-size allgather (padding: id -1)."""
        offer = np.full((_MAX_OFFER, rows.shape[1]), -1, np.int64)
        offer[: len(rows)] = rows
        gathered = np.empty((self.size, *offer.shape), np.int64)
        self._wait(self._call(self._world.Iallgather, offer, gathered))
        return [table[table[:, 0] >= 0] for table in gathered]

    def _check_agree(
        self, common: set[int], tables: list[np.ndarray], ready: dict[int, _Job]
    ) -> None:
        for rank, table in enumerate(tables):
            for row in table:
                job_id = int(row[0])
                if job_id in common and not np.array_equal(row[1:], ready[job_id].row):
                    mine = ready[job_id]
                    shape = None if mine.array is None else mine.array.shape
                    dtype = None if mine.array is None else mine.array.dtype
                    label = mine.what or mine.kind
                    raise KVStoreCommError(
                        f"kvstore: workers disagree on collective #{job_id} ({label}): rank "
                        f"{self.rank} has {mine.kind} of {dtype} {shape}, rank "
                        f"{rank} has a different kind, dtype, shape or root (every worker must "
                        f"push and pull the same keys with the same shapes, in the same order)"
                    )

    def _execute(self, jobs: list[_Job]) -> None:
        reduces = [j for j in jobs if j.kind == "allreduce"]
        others = [j for j in jobs if j.kind != "allreduce"]
        for bucket in plan_buckets(reduces, self.bucket_bytes):
            if len(bucket) == 1:
                buf = bucket[0].array.reshape(-1)  # 0-d arrays too: a 1-d view
                self._wait(self._call(self._world.Iallreduce, self._mpi.IN_PLACE, buf))
            else:
                flat = np.concatenate([j.array.ravel() for j in bucket])
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
                self._wait(self._call(self._world.Ibcast, buf, root=job.root))
            else:
                self._wait(self._call(self._world.Ibarrier))
            job.finished = True
            job.done(None)

    # -- MPI calls, each under the lock --------------------------------------------------------

    def _call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        with self._mpi_lock:
            return fn(*args, **kwargs)

    def _wait(self, request: Any) -> None:
        """Poll `request` until done; a peer's abort message or the deadline raises."""
        deadline = time.monotonic() + self.timeout
        spins = 0
        spin_until = time.monotonic() + 2e-4  # then back off to 1 ms naps: compute needs cores
        nap = 2e-5
        while True:
            with self._mpi_lock:
                if request.Test():
                    return
            spins += 1
            if spins % 64 == 0:
                self._poll_abort()
                if time.monotonic() > deadline:
                    raise KVStoreCommError(
                        f"kvstore: rank {self.rank} waited {self.timeout:g} s for the other "
                        f"workers (NNVMPY_KVSTORE_TIMEOUT): a worker hung, died or stopped pushing"
                    )
            if time.monotonic() < spin_until:
                time.sleep(0)
            else:
                time.sleep(nap)
                nap = min(nap * 2, 1e-3)

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
