"""Kernel-layer benchmark (a script, not a test): bandwidth, launch overhead, compile cache.

    .venv/bin/python tools/bench_kernels.py [--n 10000000]

Prints GB/s of relu and the quadratic against np.copyto measured in the same run, the
quadratic against a hand-fused numba kernel, the per-launch overhead on a (4,) array,
the import time of nnvmpy.kernel, and first-launch time without and with the disk cache.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from typing import Any

import numba
import numpy as np
from numba import prange

import nnvmpy.kernel as K
from nnvmpy.base import OpReqType, cpu
from nnvmpy.resource import OpContext


@K.elementwise
def quadratic_map(x, a, b, c):
    return a * x * x + b * x + c


@K.elementwise
def relu(x):
    return x if x > 0 else 0.0


@numba.njit(parallel=True, nogil=True)
def fused_quadratic(out, x, a, b, c):
    for i in prange(out.size):
        v = x[i]
        out[i] = a * v * v + b * v + c


def best_of(fn: Callable[[], Any], reps: int) -> float:
    fn()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def bandwidth(n: int, reps: int) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n, dtype=np.float32)
    out = np.empty_like(x)
    gb = 2 * x.nbytes / 1e9  # one read and one write per element
    cases = {
        "np.copyto": lambda: np.copyto(out, x),
        "relu": lambda: relu.launch(None, out, "write", x),
        "quadratic": lambda: quadratic_map.launch(None, out, "write", x, 2.0, 3.0, 1.0),
        "fused numba": lambda: fused_quadratic(out, x, 2.0, 3.0, 1.0),
    }
    best = {name: float("inf") for name in cases}
    for _ in range(3):  # interleave rounds so drift affects every case alike
        for name, fn in cases.items():
            best[name] = min(best[name], best_of(fn, reps))
    print(
        f"bandwidth on {n:,} float32 ({numba.config.NUMBA_NUM_THREADS} threads, "
        f"layer {numba.threading_layer()}):"
    )
    for name, t in best.items():
        print(
            f"  {name:12s} {t * 1e3:7.2f} ms  {gb / t:6.1f} GB/s  "
            f"{best['np.copyto'] / t:5.2f}x copyto"
        )
    print(
        f"  quadratic / fused time: {best['quadratic'] / best['fused numba']:.2f} (target <= 1.3)"
    )


def launch_overhead(calls: int) -> None:
    x = np.ones(4, np.float32)
    out = np.empty_like(x)
    opctx = OpContext(run_ctx=type("R", (), {"ctx": cpu(), "stream": None})())
    print(f"launch overhead on a (4,) float32 array (median of 7 x {calls:,} calls):")
    for label, ctx, req in [
        ("ctx=None, 'write'", None, "write"),
        ("Context, kWriteTo", cpu(), OpReqType.kWriteTo),
        ("OpContext, kAddTo", opctx, OpReqType.kAddTo),
    ]:
        quadratic_map.launch(ctx, out, req, x, 2.0, 3.0, 1.0)
        samples = []
        for _ in range(7):
            t = time.perf_counter()
            for _ in range(calls):
                quadratic_map.launch(ctx, out, req, x, 2.0, 3.0, 1.0)
            samples.append((time.perf_counter() - t) / calls)
        print(f"  {label:20s} {statistics.median(samples) * 1e6:5.2f} µs")
    loop = quadratic_map._variants[("cpu", "write")]
    t = time.perf_counter()
    for _ in range(calls):
        loop(out, x, 2.0, 3.0, 1.0)
    print(f"  bare numba dispatch  {(time.perf_counter() - t) / calls * 1e6:5.2f} µs")


def import_time() -> None:
    code = (
        "import sys, time; t = time.perf_counter(); import nnvmpy.kernel; "
        "print(time.perf_counter() - t, 'numba' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    print(f"import nnvmpy.kernel: {float(out[0]) * 1e3:.1f} ms, numba imported: {out[1]}")


_MODULE = textwrap.dedent("""
    import nnvmpy.kernel as K

    @K.elementwise
    def softsign(x, k):
        return k * x / (1.0 + abs(x))
""")
_RUN = textwrap.dedent("""
    import sys, time, numpy as np
    sys.path.insert(0, sys.argv[1])
    import bench_cached_module as m
    x = np.ones(8, np.float32); out = np.empty_like(x)
    t = time.perf_counter(); m.softsign.launch(None, out, 'write', x, 2.0)
    d = m.softsign._variants[('cpu', 'write')]
    print(time.perf_counter() - t, sum(d.stats.cache_hits.values()))
""")


def compile_cache() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "bench_cached_module.py"), "w") as f:
            f.write(_MODULE)
        print("first launch in a fresh process (includes importing numba):")
        for label in ("cold (compiles)", "warm (disk cache)"):
            out = subprocess.run(
                [sys.executable, "-c", _RUN, tmp], capture_output=True, text=True, check=True
            ).stdout.split()
            print(f"  {label:18s} {float(out[0]) * 1e3:7.1f} ms, cache hits: {out[1]}")


def gpu_bench(n: int, reps: int) -> None:
    from numba import cuda

    from nnvmpy.base import gpu

    x = cuda.to_device(np.random.default_rng(0).standard_normal(n, dtype=np.float32))
    out = cuda.device_array_like(x)
    gb = 2 * n * 4 / 1e9

    def timed(fn: Callable[[], Any]) -> float:
        fn()
        cuda.synchronize()
        t = time.perf_counter()
        for _ in range(reps):
            fn()
        cuda.synchronize()
        return (time.perf_counter() - t) / reps

    @cuda.jit
    def fused(out, x, a, b, c):
        for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
            out[i] = a * x[i] * x[i] + b * x[i] + c

    cases = {
        "d2d copy": lambda: out.copy_to_device(x),
        "fused cuda": lambda: fused[1024, 256](out, x, 2.0, 3.0, 1.0),
        "relu": lambda: relu.launch(gpu(0), out, "write", x),
        "quadratic": lambda: quadratic_map.launch(gpu(0), out, "write", x, 2.0, 3.0, 1.0),
    }
    device = getattr(cuda.get_current_device(), "name", "simulator")
    print(f"gpu bandwidth on {n:,} float32 ({device!r}):")
    for name, fn in cases.items():
        t = timed(fn)
        print(f"  {name:12s} {t * 1e3:7.3f} ms  {gb / t:7.1f} GB/s")
    small_x, small_out = cuda.to_device(np.ones(4, np.float32)), cuda.device_array(4, np.float32)
    t = timed(lambda: quadratic_map.launch(gpu(0), small_out, "write", small_x, 2.0, 3.0, 1.0))
    print(f"  launch on a (4,) device array: {t * 1e6:.1f} µs (incl. the GPU running it)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=10_000_000)
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--gpu", action="store_true", help="also time the GPU launcher")
    parser.add_argument("--gpu-n", type=int, default=100_000_000)
    args = parser.parse_args()
    if args.gpu:
        gpu_bench(args.gpu_n, 50)
    bandwidth(args.n, args.reps)
    launch_overhead(20_000)
    import_time()
    compile_cache()


if __name__ == "__main__":
    main()
