"""Bandwidth of the element-wise math, scalar and broadcast ops against np.copyto, in one run.

    .venv/bin/python tools/bench_math.py [--n N] [--reps R] [--rounds K] [--threads T]
                                         [--only NAME,NAME]

For each op: `nd.<op>(..., out=out).wait_to_read()` on n float32 elements (10M by default),
best of R, as GB/s of the bytes it must move (each array read + the output written) and
as a ratio to np.copyto's GB/s on the same n (issue 11's target: >= 0.8x). The NumPy
counterpart's time is printed beside it for context. No assertions: a report.

Why the extra columns. Memory-bound ops moved 2x between consecutive runs on the 2-core
test machine: nnvmpy's ops run on both cores, np.copyto on one, so when another process
takes the second core the op slows and the baseline does not. Here the op's thread count
is fixed (--threads, default: every core this process may use; the load governor is
off), both baselines are timed again right before each op (bests over --rounds rounds),
and a second baseline copies on as many threads as the op uses (`x copy@T`). An op whose
T-thread copy ran less than 1.3x faster than the one-thread copy is marked `busy`: the
cores were not all ours while it ran, so its ratio says little.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
from scipy import special


def _fix_threads(argv: list[str]) -> int:
    """Pin nnvmpy's thread count before it is imported (the knobs are read at start)."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    threads = parser.parse_known_args(argv)[0].threads
    os.environ["NNVMPY_THREADS_ADAPT"] = "0"
    os.environ["NNVMPY_NUM_THREADS"] = str(threads)
    return threads


THREADS = _fix_threads(sys.argv[1:])

import nnvmpy as nv  # noqa: E402

nd = nv.nd
TARGET = 0.8


def best_of(fn: Callable[[], Any], reps: int) -> float:
    fn()  # warm up: compile, fault the pages in
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def ops(n: int) -> list[tuple[str, Callable[..., Any], list[np.ndarray], Callable[..., Any]]]:
    """(label, nd call(inputs, out), NumPy inputs, NumPy counterpart(inputs, out))."""
    rng = np.random.default_rng(0)

    def u(low: float, high: float, shape: Any = (n,)) -> np.ndarray:
        return rng.uniform(low, high, size=shape).astype(np.float32)

    x01, xpos, xsym = u(0.1, 0.9), u(0.5, 4.0), u(-2.0, 2.0)
    cols = 10_000
    grid, row = u(-2, 2, (n // cols, cols)), u(0.5, 2, (cols,))
    i = nd._internal

    def unary(name: str, x: np.ndarray, ref: Any, **params: Any) -> Any:
        op = getattr(nd, name)
        return (name, lambda a, out: op(a, out=out, **params), [x], ref)

    def scalar(name: str, x: np.ndarray, s: float, ref: Any) -> Any:
        op = getattr(i, name)
        return (name, lambda a, out: op(a, scalar=s, out=out), [x], ref)

    def binary(name: str, a: np.ndarray, b: np.ndarray, ref: Any) -> Any:
        op = getattr(i, name) if name.startswith("_") else getattr(nd, name)
        return (name, lambda p, q, out: op(p, q, out=out), [a, b], ref)

    return [
        unary("tan", x01, lambda a, out: np.tan(a, out=out)),
        unary("arcsin", x01, lambda a, out: np.arcsin(a, out=out)),
        unary("arccos", x01, lambda a, out: np.arccos(a, out=out)),
        unary("arctan", xsym, lambda a, out: np.arctan(a, out=out)),
        unary("sinh", xsym, lambda a, out: np.sinh(a, out=out)),
        unary("cosh", xsym, lambda a, out: np.cosh(a, out=out)),
        unary("arcsinh", xsym, lambda a, out: np.arcsinh(a, out=out)),
        unary("arccosh", xpos + 1, lambda a, out: np.arccosh(a, out=out)),
        unary("arctanh", x01, lambda a, out: np.arctanh(a, out=out)),
        unary("log2", xpos, lambda a, out: np.log2(a, out=out)),
        unary("log10", xpos, lambda a, out: np.log10(a, out=out)),
        unary("cbrt", xsym, lambda a, out: np.cbrt(a, out=out)),
        unary("rcbrt", xpos, lambda a, out: np.reciprocal(np.cbrt(a, out=out), out=out)),
        unary("degrees", xsym, lambda a, out: np.degrees(a, out=out)),
        unary("radians", xsym, lambda a, out: np.radians(a, out=out)),
        unary("rint", xsym, lambda a, out: np.rint(a, out=out)),
        unary("fix", xsym, lambda a, out: np.fix(a, out=out)),
        unary("trunc", xsym, lambda a, out: np.trunc(a, out=out)),
        unary("logical_not", xsym, lambda a, out: np.logical_not(a, out=out)),
        unary("hard_sigmoid", xsym, lambda a, out: np.clip(0.2 * a + 0.5, 0, 1, out=out)),
        unary("clip", xsym, lambda a, out: np.clip(a, -1, 1, out=out), a_min=-1.0, a_max=1.0),
        unary("erf", xsym, lambda a, out: special.erf(a, out=out)),
        unary("erfinv", x01, lambda a, out: special.erfinv(a, out=out)),
        unary("gamma", xpos, lambda a, out: special.gamma(a, out=out)),
        unary("gammaln", xpos, lambda a, out: special.gammaln(a, out=out)),
        (
            "contrib.isnan",
            lambda a, out: nd.contrib.isnan(a, out=out),
            [xsym],
            lambda a, out: np.isnan(a, out=out),
        ),
        scalar("_mod_scalar", xsym, 0.7, lambda a, out: np.mod(a, 0.7, out=out)),
        scalar("_rmod_scalar", xpos, 3.0, lambda a, out: np.mod(3.0, a, out=out)),
        scalar("_hypot_scalar", xsym, 3.0, lambda a, out: np.hypot(a, 3.0, out=out)),
        binary("_hypot", xsym, x01, lambda a, b, out: np.hypot(a, b, out=out)),
        binary("_mod", xsym, xpos, lambda a, b, out: np.mod(a, b, out=out)),
        binary("_power", xpos, x01, lambda a, b, out: np.power(a, b, out=out)),
        binary("_maximum", xsym, x01, lambda a, b, out: np.maximum(a, b, out=out)),
        binary("broadcast_hypot", grid, row, lambda a, b, out: np.hypot(a, b, out=out)),
        binary("broadcast_mod", grid, row, lambda a, b, out: np.mod(a, b, out=out)),
    ]


def copy_seconds(n: int, reps: int, scratch: dict[str, Any], threads: int) -> float:
    """np.copyto of n float32 values split over `threads` threads, best of reps: the
    baseline, timed next to each op at the op's own width (a single-threaded copy would
    not slow down when another process takes the second core, the op would: that was
    the 2x swing)."""
    if "src" not in scratch:
        scratch["src"] = np.random.default_rng(1).uniform(size=n).astype(np.float32)
        scratch["dst"] = np.empty_like(scratch["src"])
        scratch["pool"] = ThreadPoolExecutor(max(1, threads - 1))
    src, dst, pool = scratch["src"], scratch["dst"], scratch["pool"]
    step = -(-n // max(1, threads))
    chunks = [(dst[i : i + step], src[i : i + step]) for i in range(0, n, step)]

    def copy() -> None:
        rest = [pool.submit(np.copyto, d, s) for d, s in chunks[1:]]
        np.copyto(*chunks[0])
        for fut in rest:
            fut.result()

    return best_of(copy, reps)


def measure(call: Any, inputs: list[np.ndarray], rounds: int, reps: int, scratch: dict) -> Any:
    """Best seconds of (op, one-thread copy, T-thread copy) over rounds, baselines first."""
    n, width = inputs[0].size, nv.threads.width()
    arrays = [nd.array(a) for a in inputs]
    out = nd.empty(np.broadcast_shapes(*(a.shape for a in inputs)))
    best = [float("inf")] * 3
    for _ in range(max(1, rounds)):
        times = (
            best_of(lambda: call(*arrays, out).wait_to_read(), reps),
            copy_seconds(n, reps, scratch, 1),
            copy_seconds(n, reps, scratch, width),
        )
        best = [min(b, t) for b, t in zip(best, times)]
    return best, out.shape


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=10_000_000)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=2, help="bests over K rounds")
    parser.add_argument("--threads", type=int, default=THREADS, help="nnvmpy's threads")
    parser.add_argument("--only", default="", help="comma-separated labels")
    args = parser.parse_args()
    n, reps, width = args.n, args.reps, nv.threads.width()
    scratch: dict[str, Any] = {}
    print(
        f"n = {n:,} float32, best of {reps} x {args.rounds} rounds; nnvmpy threads {width}"
        f" (governor off); load {os.getloadavg()[0]:.1f}"
    )
    print("x copy: against np.copyto (one thread, the target's baseline); x copy@T: a copy")
    print(f"on {width} threads; both retimed before each op")
    head = f"{'op':18s}{'ms':>8s}{'GB/s':>7s}{'x copy':>8s}{'x copy@T':>9s}"
    print(f"{head}  target  {'NumPy ms':>9s}")
    only = set(filter(None, args.only.split(",")))
    missed, busy = [], []
    for label, call, inputs, ref in ops(n):
        if only and label not in only:
            continue
        (t, t_one, t_wide), out_shape = measure(call, inputs, args.rounds, reps, scratch)
        moved = sum(a.nbytes for a in inputs) + int(np.prod(out_shape)) * 4
        gbs = moved / t / 1e9
        ratio, ratio_wide = gbs * t_one / (8e-9 * n), gbs * t_wide / (8e-9 * n)
        np_out = np.empty(out_shape, np.float32)
        with np.errstate(all="ignore"):
            t_np = best_of(lambda ref=ref, inputs=inputs, o=np_out: ref(*inputs, o), reps)
        ok = "meets" if ratio >= TARGET else "MISSES"
        if ratio < TARGET:
            missed.append(label)
        if width > 1 and t_one < 1.3 * t_wide:
            ok += " busy"
            busy.append(label)
        print(
            f"{label:18s}{t * 1e3:8.2f}{gbs:7.1f}{ratio:8.2f}{ratio_wide:9.2f}  {ok:7s}"
            f"  {t_np * 1e3:9.2f}"
        )
    print(f"\n{len(missed)} below {TARGET}x copy bandwidth: {', '.join(missed) or 'none'}")
    if busy:
        print(f"{len(busy)} measured while the cores were not all ours: {', '.join(busy)}")
    print(f"load {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
