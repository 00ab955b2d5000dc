"""Bandwidth of the element-wise math, scalar and broadcast ops against np.copyto, in one run.

    .venv/bin/python tools/bench_math.py [--n N] [--reps R] [--only NAME,NAME]

For each op: `nd.<op>(..., out=out).wait_to_read()` on n float32 elements (10M by default),
best of R, as GB/s of the bytes it must move (each array read + the output written) and
as a ratio to np.copyto's GB/s on the same n (issue 11's target: >= 0.8x). The NumPy
counterpart's time is printed beside it for context. No assertions: a report. On a
machine shared with other jobs the ratios move by 10-20% between runs; run it twice.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numba
import numpy as np
from scipy import special

import nnvmpy as nv

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=10_000_000)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--only", default="", help="comma-separated labels")
    args = parser.parse_args()
    n, reps = args.n, args.reps
    src = np.random.default_rng(1).uniform(size=n).astype(np.float32)
    dst = np.empty_like(src)
    t_copy = best_of(lambda: np.copyto(dst, src), reps)
    copy_gbs = 2 * src.nbytes / t_copy / 1e9
    print(f"n = {n:,} float32, best of {reps}; numba threads {numba.get_num_threads()}")
    print(f"np.copyto: {t_copy * 1e3:.2f} ms, {copy_gbs:.1f} GB/s (the baseline)")
    print(f"{'op':18s}{'ms':>8s}{'GB/s':>7s}{'x copy':>8s}  target   {'NumPy ms':>9s}")
    only = set(filter(None, args.only.split(",")))
    missed = []
    for label, call, inputs, ref in ops(n):
        if only and label not in only:
            continue
        arrays = [nd.array(a) for a in inputs]
        out_shape = np.broadcast_shapes(*(a.shape for a in inputs))
        out = nd.empty(out_shape)
        t = best_of(
            lambda call=call, arrays=arrays, out=out: call(*arrays, out).wait_to_read(), reps
        )
        moved = sum(a.nbytes for a in inputs) + int(np.prod(out_shape)) * 4
        gbs = moved / t / 1e9
        ratio = gbs / copy_gbs
        np_out = np.empty(out_shape, np.float32)
        with np.errstate(all="ignore"):
            t_np = best_of(lambda ref=ref, inputs=inputs, o=np_out: ref(*inputs, o), reps)
        ok = "meets" if ratio >= TARGET else "MISSES"
        if ratio < TARGET:
            missed.append(label)
        print(f"{label:18s}{t * 1e3:8.2f}{gbs:7.1f}{ratio:8.2f}  {ok:7s}  {t_np * 1e3:9.2f}")
    print(f"\n{len(missed)} below {TARGET}x copy bandwidth: {', '.join(missed) or 'none'}")


if __name__ == "__main__":
    main()
