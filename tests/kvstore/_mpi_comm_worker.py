"""One worker of test_mpi_comm.py: `mpiexec -n 2 python _mpi_comm_worker.py SCENARIO`.

Each worker checks its results against NumPy sums of every rank's data (each rank can
make every rank's data from its seed) and prints "rank R ok" or "rank R named error: ...".
"""

from __future__ import annotations

import os
import random
import signal
import sys
import threading
import time

import numpy as np

from nnvmpy.kvstore.mpi_comm import KVStoreCommError, get_comm

SHAPES = [(), (1,), (3, 5), (257,), (64, 1024), (300_000,)]
DTYPES = [np.float32, np.float64, np.int32]


def data(rank: int, index: int, shape: tuple[int, ...], dtype: type) -> np.ndarray:
    rng = np.random.default_rng(1000 * rank + index)
    return np.asarray(rng.standard_normal(shape) * 10).astype(dtype)


def sums(comm) -> None:  # type: ignore[no-untyped-def]
    """Jobs reserved in program order, made ready in a different order on each rank."""
    specs = [(s, d) for s in SHAPES for d in DTYPES] * 2
    bufs = [data(comm.rank, i, s, d) for i, (s, d) in enumerate(specs)]
    want = [sum(data(r, i, s, d) for r in range(comm.size)) for i, (s, d) in enumerate(specs)]
    ids = [comm.reserve() for _ in specs]
    finished = threading.Semaphore(0)
    errors: list[BaseException] = []

    def done(exc: BaseException | None) -> None:
        if exc is not None:
            errors.append(exc)
        finished.release()

    order = list(range(len(specs)))
    random.Random(comm.rank).shuffle(order)  # readiness differs between the ranks

    def make_ready(part: list[int]) -> None:
        for i in part:
            time.sleep(random.random() * 0.002)
            comm.submit(ids[i], "allreduce", bufs[i], done, priority=i % 3, what=f"job {i}")

    threads = [threading.Thread(target=make_ready, args=(order[k::2],)) for k in range(2)]
    for t in threads:
        t.start()
    for _ in specs:
        assert finished.acquire(timeout=60), "a job never finished"
    for t in threads:
        t.join()
    assert not errors, errors
    for i, (got, expect) in enumerate(zip(bufs, want, strict=True)):
        np.testing.assert_allclose(got, expect, rtol=1e-5, err_msg=f"job {i} {specs[i]}")
    root_value = data(1, 99, (4, 3), np.float64)
    buf = root_value.copy() if comm.rank == 1 else np.zeros((4, 3))
    comm.bcast(buf, root=1)
    np.testing.assert_array_equal(buf, root_value)
    comm.barrier()


def engine(comm) -> None:  # type: ignore[no-untyped-def]
    """The store's use: an engine operation hands a written gradient to the comm thread
    and completes through on_complete; later engine reads see the sum."""
    import nnvmpy as nv

    grads = [nv.nd.array(data(comm.rank, i, (50, i + 1), np.float32)) for i in range(8)]
    for i, g in enumerate(grads):
        g *= 2.0  # an engine write the allreduce must wait for
        job = comm.reserve()

        def run(_rc, on_complete, g=g, job=job, i=i):  # type: ignore[no-untyped-def]
            comm.submit(job, "allreduce", g._data, on_complete, priority=i, what=f"grad {i}")

        nv.engine.get_engine().push_async(run, nv.cpu(), [], [g._chunk.var], priority=i)
    for i, g in enumerate(grads):
        want = 2.0 * sum(data(r, i, (50, i + 1), np.float32) for r in range(comm.size))
        np.testing.assert_allclose((g + 1.0).asnumpy(), want + 1.0, rtol=1e-5)


def mismatch(comm) -> None:  # type: ignore[no-untyped-def]
    comm.allreduce(np.ones(3 + comm.rank, np.float32), what="push of key 'w'")


def raised(comm) -> None:  # type: ignore[no-untyped-def]
    comm.allreduce(np.ones(4))
    if comm.rank == 1:
        try:
            raise ValueError("a bug in the training script")
        except ValueError as exc:
            comm.abort(f"{type(exc).__name__}: {exc}")
    comm.allreduce(np.ones(4))


def killed(comm) -> None:  # type: ignore[no-untyped-def]
    comm.allreduce(np.ones(4))
    if comm.rank == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    comm.allreduce(np.ones(4))


def silent(comm) -> None:  # type: ignore[no-untyped-def]
    """Rank 1 never makes its job ready: rank 0's wait ends at the timeout."""
    if comm.rank == 1:
        time.sleep(60)
    comm.allreduce(np.ones(4))


def main() -> None:
    comm = get_comm()
    try:
        globals()[sys.argv[1]](comm)
    except KVStoreCommError as exc:
        print(f"rank {comm.rank} named error: {exc}", flush=True)
        comm.abort(str(exc))
    print(f"rank {comm.rank} ok", flush=True)


if __name__ == "__main__":
    main()
