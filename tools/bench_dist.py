"""Distributed KVStore numbers on this machine: allreduce bandwidth and 2-worker training.

    python tools/bench_dist.py [--workers 2] [--steps 20] [--max-mb 64] [--phases]

Starts itself on N workers with `nnvmpy launch` and prints, from rank 0:
1. allreduce of 1 KB .. 64 MB float32 buffers: raw mpi4py Allreduce and kv.pushpull
   (through the engine and the communication thread), as algorithm bandwidth (bytes /
   time) and bus bandwidth (x 2(n-1)/n, what a ring moves per link);
2. MLP (784-512-512-10) and LeNet steps/s with --kvstore dist_sync (per-worker batch 32)
   against one process without a store, and the same dist step with the communication
   started only after the whole backward finished (no overlap).
--phases prints only where the time of one pushpull goes (see bench_phases).
The one-process rows run with every core, then with one worker's share of them (what
a worker could reach without any communication); `nnvmpy launch` gives each worker
cores / workers compute threads. Every section prints the load average beside its
numbers.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

SIZES = [1 << 10, 16 << 10, 256 << 10, 4 << 20, 16 << 20, 64 << 20]


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} cores"


def _time(fn, reps: int) -> float:
    """The median seconds of one call (a shared machine's hiccups spoil a mean)."""
    fn()  # warm up
    times = []
    for _ in range(reps):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return float(np.median(times))


def bench_phases(kv, nbytes: int, reps: int = 100) -> dict[str, float]:
    """Median milliseconds of each phase of one kv.pushpull (rank 0's view): the call
    until the job is handed to the communication thread (push, engine), from there until
    its allreduce starts (thread wake-up, negotiation, waiting for the peer), the
    allreduce, and from its end until out.wait_to_read() returns (engine completion, the
    copy into out). The Comm methods are wrapped only to read the clock."""
    import nnvmpy as nv
    from nnvmpy.kvstore import mpi_comm

    marks: dict[str, list[float]] = {"submit": [], "exec": [], "exec_done": []}
    cls = mpi_comm.Comm
    submit, execute = cls.submit, cls._execute

    def timed_submit(self, *a, **k):
        marks["submit"].append(time.perf_counter())
        return submit(self, *a, **k)

    def timed_execute(self, jobs):
        marks["exec"].append(time.perf_counter())
        execute(self, jobs)
        marks["exec_done"].append(time.perf_counter())

    key = f"phases{nbytes}"
    arr, out = nv.nd.ones((nbytes // 4,)), nv.nd.empty((nbytes // 4,))
    kv.init(key, arr)
    cls.submit, cls._execute = timed_submit, timed_execute
    try:
        calls, ends = [], []
        for i in range(reps + 10):
            if i == 10:  # warmed up
                kv.barrier()
                calls, ends = [], []
                for v in marks.values():
                    v.clear()
            calls.append(time.perf_counter())
            kv.pushpull(key, arr, out=out)
            out.wait_to_read()
            ends.append(time.perf_counter())
    finally:
        cls.submit, cls._execute = submit, execute
    m = {k: np.array(v[-reps:]) for k, v in marks.items()}
    c, e = np.array(calls), np.array(ends)

    def ms(a):
        return float(np.median(a) * 1e3)

    return {
        "call -> comm thread": ms(m["submit"] - c),
        "-> allreduce starts": ms(m["exec"] - m["submit"]),
        "allreduce": ms(m["exec_done"] - m["exec"]),
        "-> out ready": ms(e - m["exec_done"]),
        "total": ms(e - c),
    }


def bench_allreduce(kv, comm, max_bytes: int) -> list[tuple[int, float, float]]:
    import nnvmpy as nv

    rows = []
    for key, nbytes in enumerate(s for s in SIZES if s <= max_bytes):
        n = nbytes // 4
        send, recv = np.ones(n, np.float32), np.empty(n, np.float32)
        reps = max(3, min(200, (64 << 20) // max(nbytes, 1) // 8))
        with kv._comm._mpi_lock:  # MPI_THREAD_SERIALIZED: the comm thread stays out
            comm.Barrier()
            raw = _time(lambda send=send, recv=recv: comm.Allreduce(send, recv), reps)
        arr = nv.nd.ones((n,))
        kv.init(key, arr)
        out = nv.nd.empty((n,))

        def through_kv(arr=arr, out=out, key=key) -> None:
            kv.pushpull(key, arr, out=out)
            out.wait_to_read()

        kv.barrier()
        via_kv = _time(through_kv, reps)
        rows.append((nbytes, raw, via_kv))
    return rows


def bench_training(net: str, steps: int) -> dict[str, float]:
    import nnvmpy as nv
    from nnvmpy.training import (
        Trainer,
        cluster_dataset,
        lenet_symbol,
        mlp_symbol,
        stroke_dataset,
    )

    batch = 32
    if net == "mlp":
        sym, (x, y) = mlp_symbol(), cluster_dataset(batch * (steps + 1), seed=1)
    else:
        sym, (x, y) = lenet_symbol(), stroke_dataset(batch * (steps + 1), seed=2)
    shape = (batch, *x.shape[1:])

    def run(trainer, step) -> float:
        step(trainer, x[:batch], y[:batch])  # compile, warm up
        nv.nd.waitall()
        started = time.perf_counter()
        for i in range(1, steps + 1):
            step(trainer, x[i * batch : (i + 1) * batch], y[i * batch : (i + 1) * batch])
        nv.nd.waitall()
        return steps / (time.perf_counter() - started)

    def overlapped(t, bx, by) -> None:
        t.step(bx, by)

    def after_backward(t, bx, by) -> None:  # communication only once backward is done
        exe = t.exe
        out = exe.forward(is_train=True, data=bx, softmax_label=by)[0]
        exe.backward()
        nv.nd.waitall()
        for i, name in enumerate(t.params):
            t.kvstore.push(i, exe.grad_dict[name], priority=-i)
            t.kvstore.pull(i, out=exe.arg_dict[name], priority=-i)
        out.asnumpy()

    result = {}
    result["dist"] = run(Trainer(sym, shape, kvstore="dist_sync"), overlapped)
    result["dist_no_overlap"] = run(Trainer(sym, shape, kvstore="dist_sync"), after_backward)
    return result


def phases(kv) -> list[str]:
    rows = {size: bench_phases(kv, size) for size in (1 << 10, 256 << 10, 4 << 20)}
    names = list(next(iter(rows.values())))
    lines = ["## one kv.pushpull, phase by phase (median ms, rank 0)", ""]
    lines.append("| size | " + " | ".join(names) + " |")
    lines.append("|---:|" + "---:|" * len(names))
    for size, r in rows.items():
        label = f"{size >> 20} MB" if size >= 1 << 20 else f"{size >> 10} KB"
        lines.append(f"| {label} | " + " | ".join(f"{r[n]:.3f}" for n in names) + " |")
    lines.append(f"({_load()})")
    return lines


def worker(args: argparse.Namespace) -> None:
    import nnvmpy as nv

    kv = nv.kv.create("dist_sync")
    if args.phases:
        lines = phases(kv)
        if kv.rank == 0:
            print("\n".join(lines), flush=True)
        return
    from mpi4py import MPI

    comm = MPI.COMM_WORLD  # raw numbers from this thread, holding the comm thread's MPI lock
    rows = bench_allreduce(kv, comm, args.max_mb << 20)
    n = kv.num_workers
    lines = [f"## allreduce on {n} workers (loopback), float32", ""]
    lines += [
        "| size | mpi4py ms | algbw GB/s | busbw GB/s | kv.pushpull ms | kv algbw GB/s |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for nbytes, raw, via_kv in rows:
        size = f"{nbytes >> 20} MB" if nbytes >= 1 << 20 else f"{nbytes >> 10} KB"
        alg, alg_kv = nbytes / raw / 1e9, nbytes / via_kv / 1e9
        lines.append(
            f"| {size} | {raw * 1e3:.3f} | {alg:.2f} | {alg * 2 * (n - 1) / n:.2f} "
            f"| {via_kv * 1e3:.3f} | {alg_kv:.2f} |"
        )
    for net in ("mlp", "lenet"):
        res = bench_training(net, args.steps)
        lines.append("")
        lines.append(
            f"{net}: {n} workers, batch 32 each: {res['dist']:.2f} steps/s "
            f"(communication after backward: {res['dist_no_overlap']:.2f} steps/s)"
        )
    threads = os.environ.get("NUMBA_NUM_THREADS", "?")
    lines.append("")
    lines.append(f"(workers: {threads} compute threads each; {_load()})")
    if kv.rank == 0:
        print("\n".join(lines), flush=True)


def single(args: argparse.Namespace) -> str:
    import nnvmpy as nv
    from nnvmpy.training import Trainer, cluster_dataset, lenet_symbol, mlp_symbol, stroke_dataset

    out = []
    batch, steps = 32, args.steps
    for net in ("mlp", "lenet"):
        if net == "mlp":
            sym, (x, y) = mlp_symbol(), cluster_dataset(batch * (steps + 1), seed=1)
        else:
            sym, (x, y) = lenet_symbol(), stroke_dataset(batch * (steps + 1), seed=2)
        t = Trainer(sym, (batch, *x.shape[1:]))
        t.step(x[:batch], y[:batch])
        nv.nd.waitall()
        started = time.perf_counter()
        for i in range(1, steps + 1):
            t.step(x[i * batch : (i + 1) * batch], y[i * batch : (i + 1) * batch])
        nv.nd.waitall()
        threads = os.environ.get("NUMBA_NUM_THREADS", f"{os.cpu_count()} (all cores)")
        out.append(
            f"{net}: 1 process, batch 32, no store, {threads} threads: "
            f"{steps / (time.perf_counter() - started):.2f} steps/s"
        )
    out.append(f"({_load()})")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--max-mb", type=int, default=64)
    parser.add_argument(
        "--phases", action="store_true", help="only the phase-by-phase time of one pushpull"
    )
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--single", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return
    if args.single:
        print(single(args), flush=True)
        return
    from nnvmpy.kvstore import launch

    if not args.phases:
        print(single(args), flush=True)
        # one process with a worker's share of the cores: what each worker can reach
        share = str(launch.worker_threads(args.workers))
        env = dict(os.environ, **dict.fromkeys(launch.THREAD_VARS, share))
        me = [sys.executable, str(Path(__file__).resolve()), "--single"]
        subprocess.run([*me, "--steps", str(args.steps)], env=env, check=True)
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker"]
    cmd += ["--steps", str(args.steps), "--max-mb", str(args.max_mb)]
    cmd += ["--phases"] if args.phases else []
    done = launch.run(args.workers, cmd, timeout=300)
    sys.exit(done.returncode)


if __name__ == "__main__":
    os.environ.setdefault("NNVMPY_KVSTORE_TIMEOUT", "300")
    main()
