"""Dispatch overhead per engine: µs for the main thread to push N trivial ops on a chain and wait.

Not a test (no timing assertions in tests, STYLE §10). Run:
    .venv/bin/python tools/bench_engine.py [N]
"""

from __future__ import annotations

import sys
import time

from nnvmpy.base import cpu
from nnvmpy.engine import ENGINE_TYPES, Engine, RunContext


def _noop(run_ctx: RunContext) -> None:
    pass


def chain_us_per_op(eng: Engine, n: int, repeats: int = 5) -> float:
    """Best of ``repeats``: push n trivial writers of one var, then wait_for_var."""
    ctx = cpu()
    v = eng.new_var()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(n):
            eng.push_sync(_noop, ctx, (), (v,))
        eng.wait_for_var(v)
        best = min(best, time.perf_counter() - t0)
    return best / n * 1e6


def read_write_chain_us_per_op(eng: Engine, n: int, repeats: int = 5) -> float:
    """Each op reads the previous var and writes the next (two vars per push)."""
    ctx = cpu()
    vs = [eng.new_var() for _ in range(n + 1)]
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for i in range(n):
            eng.push_sync(_noop, ctx, (vs[i],), (vs[i + 1],))
        eng.wait_for_all()
        best = min(best, time.perf_counter() - t0)
    return best / n * 1e6


def round_trip_us(eng: Engine, n: int) -> float:
    """Push one op and wait for it, n times: the latency of waking a worker (not a chain)."""
    ctx = cpu()
    v = eng.new_var()
    t0 = time.perf_counter()
    for _ in range(n):
        eng.push_sync(_noop, ctx, (), (v,))
        eng.wait_for_var(v)
    return (time.perf_counter() - t0) / n * 1e6


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    for name, cls in ENGINE_TYPES.items():
        eng = cls()
        chain_us_per_op(eng, 1000, repeats=1)  # warm up: start threads
        a = chain_us_per_op(eng, n)
        b = read_write_chain_us_per_op(eng, n)
        c = round_trip_us(eng, min(n, 5000))
        eng.shutdown()
        print(
            f"{name:25s} write chain {a:6.2f} us/op   read->write chain {b:6.2f} us/op   "
            f"push+wait round trip {c:6.1f} us"
        )


if __name__ == "__main__":
    main()
