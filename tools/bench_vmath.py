"""Single-thread ns/element of kernel.vmath's float32 bodies against NumPy/SciPy's ufuncs.

    .venv/bin/python tools/bench_vmath.py [--n N] [--reps R] [--only NAME,NAME]

For each function: a serial numba loop over n float32 elements calling the vmath body
(the loop an element-wise kernel runs on each core; for tan, vmath.trig.tan_into's
block loop), and the NumPy/SciPy ufunc on the same array, both timed with
time.thread_time() (CPU time of this thread: robust to other processes on a shared
machine, unlike wall-clock ratios), best of R; a small --n such as 65536 stays in cache
and measures compute alone. For scale: issue 11's target is 0.8x np.copyto's bandwidth
at 10M on two threads; with copy at ~54 GB/s on one thread (2026-11-30) that leaves
~0.37 ns per element and core, memory traffic included. No assertions: a report.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from typing import Any

import numba
import numpy as np
from scipy import special

from nnvmpy.kernel import vmath

_PAGE = 4096
_offsets = iter(range(10**9))


def _staggered(n: int) -> np.ndarray:
    """An empty float32 array starting at its own offset within a page (as nnvmpy's
    storage staggers large blocks): arrays that all start at one page offset alias in
    the 4K-aliasing sense and slow a 10M loop 1.1-1.5x (3x seen for asinh/acosh)."""
    raw = np.empty(n * 4 + 2 * _PAGE, np.uint8)
    start = -raw.ctypes.data % _PAGE + (next(_offsets) % 31 + 1) * 128
    return raw[start : start + n * 4].view(np.float32)


def _inputs(n: int) -> dict[str, tuple[np.ndarray, Callable[..., Any]]]:
    """name -> (float32 input as tools/bench_math.py uses, NumPy/SciPy counterpart)."""
    rng = np.random.default_rng(0)

    def u(lo: float, hi: float) -> np.ndarray:
        a = _staggered(n)
        a[:] = rng.uniform(lo, hi, n)
        return a

    x01, xpos, xsym = u(0.1, 0.9), u(0.5, 4.0), u(-2.0, 2.0)
    return {
        "asin": (x01, np.arcsin),
        "acos": (x01, np.arccos),
        "atan": (xsym, np.arctan),
        "sinh": (xsym, np.sinh),
        "cosh": (xsym, np.cosh),
        "tan": (xsym, np.tan),
        "asinh": (xsym, np.arcsinh),
        "acosh": (np.add(xpos, 1, out=_staggered(n)), np.arccosh),
        "atanh": (x01, np.arctanh),
        "rcbrt": (xpos, lambda a, out: np.reciprocal(np.cbrt(a, out=out), out=out)),
        "cbrt": (xsym, np.cbrt),
        "erf": (xsym, special.erf),
        "erfinv": (x01, special.erfinv),
        "gamma": (xpos, special.gamma),
        "gammaln": (xpos, special.gammaln),
        "exp": (xsym, np.exp),
        "log": (xpos, np.log),
        "log1p": (xpos, np.log1p),
    }


def _serial_loop(fn: vmath.VectorFunction) -> Any:
    """A plain (serial) numba loop out[i] = fn(x[i])."""
    namespace: dict[str, Any] = {"f": fn.compiled("cpu")}
    exec("def loop(out, x):\n    for i in range(x.size):\n        out[i] = f(x[i])\n", namespace)
    return numba.njit(nogil=True, error_model="numpy")(namespace["loop"])


def _tan_loop(out: np.ndarray, x: np.ndarray) -> None:
    vmath.trig.tan_into(x, out)


def _best(fn: Callable[[], Any], reps: int, inner: int = 1) -> float:
    """Best of reps of (thread time of `inner` calls) / inner."""
    fn()
    best = float("inf")
    for _ in range(reps):
        t = time.thread_time()
        for _ in range(inner):
            fn()
        best = min(best, (time.thread_time() - t) / inner)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=10_000_000)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--only", default="", help="comma-separated vmath names")
    args = parser.parse_args()
    only = set(filter(None, args.only.split(",")))
    n = args.n
    inner = max(1, 20_000_000 // n)  # small n (in cache: compute only): repeat the call
    src, dst = _staggered(n), _staggered(n)
    src[:] = 1
    t_copy = _best(lambda: np.copyto(dst, src), args.reps, inner)
    print(f"n = {n:,} float32, best of {args.reps}, thread_time; load {os.getloadavg()}")
    print(f"np.copyto {t_copy / n * 1e9:.3f} ns/element on one thread")
    print(f"{'function':10s}{'vmath ns':>10s}{'NumPy ns':>10s}  faster")
    for name, (x, ref) in _inputs(n).items():
        if only and name not in only:
            continue
        out = _staggered(n)
        # tan is vmath.trig's block loop (its body covers |x| <= 8192 only)
        loop = _serial_loop(getattr(vmath, name)) if name != "tan" else _tan_loop
        t_v = _best(lambda loop=loop, x=x, out=out: loop(out, x), args.reps, inner)
        with np.errstate(all="ignore"):
            t_n = _best(lambda ref=ref, x=x, out=out: ref(x, out=out), args.reps, inner)
        which = "vmath" if t_v < t_n else "NumPy"
        print(f"{name:10s}{t_v / n * 1e9:10.3f}{t_n / n * 1e9:10.3f}  {which}")


if __name__ == "__main__":
    main()
