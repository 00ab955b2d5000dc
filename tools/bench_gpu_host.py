"""The host side of GPU dispatch, measurable without a GPU (issue 16's <= 20 us per op).

    NUMBA_ENABLE_CUDASIM=1 taskset -c 0 python3 tools/bench_gpu_host.py [--ops N]

`x = x + 1` on a 16-element GPU array, as tools/bench_gpu.py's dispatch section, but on
numba's simulator with the kernel launch and the CUDA events faked: a launch does nothing
and an event has passed when first asked, as a short kernel's has on hardware by the time
the worker polls it. What is left is what nnvmpy's Python costs per op on the host:

  async        ops pushed back to back, then one wait: wall and process CPU per op. The
               pushing thread and the engine worker share the GIL, so the process CPU per
               op (both threads) is the floor of the async dispatch on any GPU.
  main         the pushing thread's CPU per op (invoke, output, push).
  worker       the engine worker alone per op (FCompute, launch arguments, event, complete):
               the ops are queued behind a held variable first, then released.
  per op       calls of the engine (push, push_sync, delete_variable) and storage
               allocations.
  bound graph  an executor's forward over a chain of 32 unfused scalar adds on the GPU:
               process CPU per node (the executor's planned launches, its bulk pushes).

Ratios are against the 20 us target. The simulator's arrays cost more to touch than
numba-cuda's, and a real launch adds its own host time (numba-cuda's path, or
kernel/cuda_fast.py's direct one): on hardware, bench_gpu.py's dispatch rows are the
measure. Pin to one core (taskset): on two cores the GIL's hand-offs between the threads
make the times vary 3x from run to run.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import threading
import time
from collections.abc import Iterator
from typing import Any

TARGET_US = 20.0


class _PassedEvent:
    """A CUDA event that has passed when first queried (a short kernel's, on hardware)."""

    def record(self, stream: Any) -> None:
        pass

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        pass


_launches = [0]


def _fake_launch(dispatcher: Any, blocks: int, threads: int, stream: Any, args: Any) -> None:
    _launches[0] += 1


def _fake_device() -> None:
    from nnvmpy.engine import streams
    from nnvmpy.kernel import cuda

    cuda.launch_kernel = _fake_launch
    streams._new_event = lambda device_id: _PassedEvent()


def _process_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


@contextlib.contextmanager
def _counting_pushes(counts: dict[str, int]) -> Iterator[None]:
    """counts["push"] += 1 per call of the engine's push, push_sync or delete_variable
    while active: what a caller asks of the engine, whichever path then runs it (the
    NaiveEngine and the INLINE fast path run a push without ever reaching _push)."""
    from nnvmpy import engine

    cls = type(engine.get_engine())
    saved = {name: getattr(cls, name) for name in ("push", "push_sync", "delete_variable")}

    def counted(method: Any) -> Any:
        def call(self: Any, *args: Any, **kwargs: Any) -> Any:
            counts["push"] += 1
            return method(self, *args, **kwargs)

        return call

    for name, method in saved.items():
        setattr(cls, name, counted(method))
    try:
        yield
    finally:
        for name, method in saved.items():
            setattr(cls, name, method)


def _counting(n_ops: int, x: Any) -> tuple[Any, float, float]:
    """(x, engine pushes per op, storage allocations per op) over n_ops ops."""
    from nnvmpy import nd
    from nnvmpy.kernel import storage

    counts = {"push": 0, "alloc": 0}
    alloc = storage.alloc

    def counted_alloc(*args: Any) -> Any:
        counts["alloc"] += 1
        return alloc(*args)

    storage.alloc = counted_alloc
    try:
        with _counting_pushes(counts):
            for _ in range(n_ops):
                x = x + 1
            x.wait_to_read()
    finally:
        storage.alloc = alloc
    nd.waitall()
    return x, counts["push"] / n_ops, counts["alloc"] / n_ops


def _graph_per_node(n_nodes: int, runs: int) -> tuple[float, int]:
    """Process CPU per node of a bound graph's forward on the GPU: a chain of n_nodes
    scalar adds, unfused (NNVMPY_FUSION=0 at bind), best of three batches of runs; and
    the engine pushes per forward (the executor may bulk nodes into one push)."""
    import nnvmpy as nv

    os.environ["NNVMPY_FUSION"] = "0"
    try:
        y = nv.sym.Variable("x")
        for _ in range(n_nodes):
            y = y + 1.0
        exe = y.simple_bind(ctx=nv.gpu(0), x=(16,), grad_req="null")
    finally:
        del os.environ["NNVMPY_FUSION"]
    exe.forward(is_train=False)
    nv.nd.waitall()
    counts = {"push": 0}
    with _counting_pushes(counts):
        exe.forward(is_train=False)
        nv.nd.waitall()
    best = float("inf")
    for _ in range(3):
        launched = _launches[0]
        cpu0 = _process_cpu()
        for _ in range(runs):
            exe.forward(is_train=False)
        nv.nd.waitall()
        best = min(best, (_process_cpu() - cpu0) / (runs * n_nodes) * 1e6)
        assert _launches[0] - launched == runs * n_nodes, "a node did not launch"
    return best, counts["push"]


def measure_chain(x: Any, n: int, rounds: int) -> tuple[Any, dict[str, float]]:
    """`x = x + 1` n times per round on x's GPU, best of the rounds, in us per op: async
    wall and process CPU, the pushing thread's CPU, and the engine worker alone (the
    ops queued behind a held variable first; nan under the NaiveEngine, which has no
    worker). Launches 2 * n * rounds kernels (n * rounds under the NaiveEngine)."""
    from nnvmpy import engine, nd

    best: dict[str, float] = {}
    for _ in range(rounds):
        cpu0, main0, wall0 = _process_cpu(), time.thread_time(), time.perf_counter()
        for _ in range(n):
            x = x + 1
        main_us = (time.thread_time() - main0) / n * 1e6
        nd.waitall()
        wall_us = (time.perf_counter() - wall0) / n * 1e6
        cpu_us = (_process_cpu() - cpu0) / n * 1e6
        worker_us = float("nan")  # a NaiveEngine runs each push in the pushing thread:
        if not isinstance(engine.get_engine(), engine.NaiveEngine):  # no worker to time
            gate = threading.Event()  # the worker alone: queue n ops behind a held variable
            engine.get_engine().push_sync(
                lambda rc, gate=gate: gate.wait(), x.context, (), (x._chunk.var,)
            )
            for _ in range(n):
                x = x + 1
            start = time.perf_counter()
            gate.set()
            x.wait_to_read()
            worker_us = (time.perf_counter() - start) / n * 1e6
            nd.waitall()
        for key, value in (
            ("async_wall", wall_us),
            ("async_cpu", cpu_us),
            ("main", main_us),
            ("worker", worker_us),
        ):
            best[key] = min(best.get(key, value), value)
    return x, best


ROWS = (
    ("async_wall", "async, wall"),
    ("async_cpu", "async, process CPU"),
    ("main", "pushing thread CPU"),
    ("worker", "engine worker alone"),
)


def print_rows(best: dict[str, float]) -> None:
    for key, label in ROWS:
        us = best[key]
        print(
            f"  {label:22s} {us:6.1f} us/op   {us / TARGET_US:5.2f}x the {TARGET_US:.0f} us target"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ops", type=int, default=4000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if os.environ.get("NUMBA_ENABLE_CUDASIM") != "1":
        raise SystemExit("run on the simulator: NUMBA_ENABLE_CUDASIM=1 (see the docstring)")
    import nnvmpy as nv
    from nnvmpy import engine, nd

    _fake_device()
    n = args.ops
    x = nd.ones((16,), ctx=nv.gpu(0))
    for _ in range(50):
        x = x + 1
    nd.waitall()
    done = 51  # launches: nd.ones fills on the device, then one per op
    x, best = measure_chain(x, n, args.rounds)
    done += (1 if isinstance(engine.get_engine(), engine.NaiveEngine) else 2) * n * args.rounds
    x, pushes, allocs = _counting(n, x)
    done += n
    assert _launches[0] == done, f"{_launches[0]} launches for {done} ops"  # none skipped
    nodes = 32
    graph_us, graph_pushes = _graph_per_node(nodes, max(n // nodes, 10))
    print(f"GPU dispatch, host side (simulator, launches and events faked), {n} ops")
    print_rows(best)
    print(f"  per op: {pushes:.2f} engine pushes, {allocs:.2f} storage allocations")
    ratio = graph_us / TARGET_US
    print(
        f"  {'bound graph, per node':22s} {graph_us:6.1f} us/op   {ratio:5.2f}x the "
        f"{TARGET_US:.0f} us target  ({nodes} unfused scalar adds, {graph_pushes} engine "
        "pushes per forward, process CPU)"
    )
    print(f"  load average {os.getloadavg()[0]:.2f}, cores {os.sched_getaffinity(0)}")


if __name__ == "__main__":
    main()
