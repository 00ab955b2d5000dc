"""CPU fast paths through NumPy's SIMD loops, split across threads for large arrays.

numba calls libm once per element for tan, arcsin, pow, ... (10-70x slower than NumPy's
AVX-512/AVX2 loops, which NumPy 2 has for these on float32 and float64), but NumPy runs
on one thread. `threaded(np.tan)` gives a `numpy_impl` (f(x, out=)) that cuts a large
array into one contiguous chunk per core and runs the ufunc on each in a small thread
pool (ufuncs release the GIL), which is how a numba prange kernel would use the cores.
The number of chunks is the team width nnvmpy.threads.region() grants: the process's
thread budget, narrowed while the machine is busy or other regions are in flight.
`numpy_compute(kernel, ufunc)` is an FCompute for ops with several array inputs that
takes the same path on the CPU and falls back to the kernel for everything else.
A NumPy ufunc on float arrays skips the pool: kernel.ufunc_loop runs its inner loop in
numba's threads and streams large outputs to memory (10M np.power float32 on two
threads: 2.8 -> 2.2 ms).
NumPy's floating-point warnings are silenced: MXNet returns NaN / inf without one.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from .. import threads as _threads
from ..base import OpReqType
from ..kernel import ufunc_loop
from ..kernel.elementwise import elementwise
from ..registry import NodeAttrs
from ._scalar_param import scalar_values

#: below this many elements one call on the calling thread is faster than a hand-off
PARALLEL_CUTOFF = 1 << 19
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_pool: ThreadPoolExecutor | None = None
_pool_pid = 0  # the process that made _pool: a forked child has none of its threads
_pool_lock = threading.Lock()


def _workers() -> int:
    """Pool size: the thread budget (capped at 8); each call uses what region() grants."""
    return max(1, min(_threads.budget(), 8))


def _get_pool() -> ThreadPoolExecutor:
    global _pool, _pool_pid
    pool = _pool
    if pool is None or _pool_pid != os.getpid():
        with _pool_lock:
            if _pool is None or _pool_pid != os.getpid():
                _pool = ThreadPoolExecutor(_workers(), thread_name_prefix="nnvmpy-ufunc")
                _pool_pid = os.getpid()
            pool = _pool
    return pool


def run_chunked(fn: Callable[..., Any], out: np.ndarray, arrays: tuple[Any, ...]) -> None:
    """fn(*arrays, out=out) with every array of out's shape; in chunks when large.

    Scalars (non-arrays) in `arrays` pass through to every chunk.
    """
    n = out.size
    contiguous = out.flags.c_contiguous and all(
        a.flags.c_contiguous for a in arrays if isinstance(a, np.ndarray)
    )
    if n < PARALLEL_CUTOFF or not contiguous:
        _quiet_call(fn, list(arrays), out)
        return
    loop = _inner_loop(fn, out, arrays)
    with _threads.region(_workers()) as k:
        if loop is not None:
            ufunc_loop.run(loop, list(arrays), out, k)
        elif k == 1:
            _quiet_call(fn, list(arrays), out)
        else:
            _run_parts(fn, out, arrays, k)


def _inner_loop(fn: Any, out: np.ndarray, arrays: tuple[Any, ...]) -> Any:
    """kernel.ufunc_loop's loop for ufunc fn on these arguments, or None: not a ufunc, not
    a float dtype, an argument that would make NumPy pick another loop, or a process
    forked after numba's OpenMP started (threads.openmp_forked: the pool is fork-safe)."""
    if type(fn) is not np.ufunc or out.dtype not in _FLOATS or _threads.openmp_forked():
        return None
    for a in arrays:
        if isinstance(a, np.ndarray):
            if a.dtype != out.dtype:
                return None
        elif np.result_type(out.dtype, a) != out.dtype:  # np.float64(2) with float32
            return None
    return ufunc_loop.find(fn, (out.dtype,) * (len(arrays) + 1))


def _run_parts(fn: Callable[..., Any], out: np.ndarray, arrays: tuple[Any, ...], k: int) -> None:
    """fn on k contiguous chunks: k - 1 in the pool, the first on the calling thread."""
    n = out.size
    o = out.reshape(-1)
    flat = [a.reshape(-1) if isinstance(a, np.ndarray) else a for a in arrays]
    step = -(-n // k)
    parts = [
        ([a[i : i + step] if isinstance(a, np.ndarray) else a for a in flat], o[i : i + step])
        for i in range(0, n, step)
    ]
    pool = _get_pool()
    futures = [pool.submit(_quiet_call, fn, args, dst) for args, dst in parts[1:]]
    _quiet_call(fn, *parts[0])  # the calling thread takes the first chunk
    for f in futures:
        f.result()


def _quiet_call(fn: Callable[..., Any], args: list[Any], out: np.ndarray) -> None:
    with np.errstate(all="ignore"):
        fn(*args, out=out)


def threaded(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A `numpy_impl` for nv.kernel.elementwise: fn(x, out=) run in chunks across cores."""

    def run(x: np.ndarray, out: np.ndarray) -> np.ndarray:
        run_chunked(fn, out, (x,))
        return out

    run.__name__ = getattr(fn, "__name__", "numpy_impl")
    return run


def numpy_but_float32(ufunc: Any) -> Callable[[Any], Any]:
    """`@elementwise(numpy_impl=threaded(ufunc))` for float64 arrays only: float32 arrays
    run the body's own vectorised (kernel.vmath) loop on every core.

    Why. NumPy's float32 SIMD loops for log2, log10, log1p, arcsin, arccosh, arctanh,
    sinh and cosh leave the vector path for a scalar one on any element outside the
    domain or overflowing: 10M float32 with negative values took 22-24 ms in np.log2
    instead of 1.9, 24 ms in np.sinh with |x| up to 200 (both threads). vmath's bodies
    select their special values, so their speed does not depend on the data, and at 10M
    on two threads they are as fast or faster on valid data too (log2 1.62 vs 1.94 ms,
    arcsin 0.98 vs 1.83, sinh 1.35 vs 2.00, cbrt 1.35 vs 1.76; arctanh 2.17 vs 2.12,
    2026-11-30). sin, cos, expm1 keep NumPy's: their bodies call libm per element (tan
    has vmath.trig's block loop, through float32_parts)."""

    def wrap(body: Any) -> Any:
        numpy_run = threaded(ufunc)
        own = elementwise(body)

        def run(x: np.ndarray, out: np.ndarray) -> np.ndarray:
            if out.dtype == np.float32:
                own.launch(None, out, "write", x)
                return out
            return numpy_run(x, out=out)

        run.__name__ = f"{ufunc.__name__}_but_float32"
        return elementwise(body, numpy_impl=run)

    return wrap


def float32_parts(
    other: Callable[..., Any], serial: Callable[..., Any], parallel: Callable[..., Any]
) -> Callable[..., Any]:
    """A `numpy_impl` for float32 loops compiled with numba: C-contiguous float32 arrays of
    one shape through parallel(x, out, k), x split into k contiguous parts across numba's
    threads (a kernel.cpu_kernel with a prange), or serial(x, out) below
    threads.parallel_size() elements or on one core; other dtypes through other(x, out=).

    Why not run_chunked: its hand-off to the ufunc pool's Python threads costs 40-50 us
    per call here, a prange starts in ~2.5 us (nd.erfinv of 1M: 0.30 -> 0.23 ms).

    Why not from fewer elements on (it was 64K): nd runs ops below parallel_size in the
    calling thread (imperative.inline_limit), and a prange there gives that thread an
    OpenMP team of its own. Once the main thread and an engine worker both have a team,
    GNU OpenMP manages more threads than there are cores and cuts every team's spin to
    100 rounds (its "throttled" spin), so each region wakes sleeping threads: nd.erfinv
    of 100K took 0.043 ms for the rest of the process instead of 0.023, after one 10M
    op had run on a worker (/work/notes/out24/scripts/teams.py)."""

    def run(x: np.ndarray, out: np.ndarray) -> np.ndarray:
        if not (out.dtype == np.float32 and out.flags.c_contiguous and x.flags.c_contiguous):
            return other(x, out=out)
        xf, of = x.reshape(-1), out.reshape(-1)
        if xf.size >= _threads.parallel_size():
            with _threads.region(_workers()) as k:
                if k > 1:
                    parallel(xf, of, k)
                    return out
        serial(xf, of)
        return out

    run.__name__ = f"{getattr(serial, '__name__', 'loop')}_or_{getattr(other, '__name__', '')}"
    return run


def vmath_parts(name: str) -> Callable[[np.ndarray, np.ndarray, int], None]:
    """ops/_vmath_parts.<name>(x, out, k) (a float32 loop over k parts in numba's
    threads), that module imported on the first call: it imports numba, which
    `import nnvmpy` must not."""

    def run(x: np.ndarray, out: np.ndarray, parts: int) -> None:
        from nnvmpy.ops import _vmath_parts

        getattr(_vmath_parts, name)(x, out, parts)

    run.__name__ = name
    return run


def float32_blocks(block_loop: Any, parts_kernel: Any) -> Callable[[Any], Any]:
    """`@elementwise` for a body whose float32 arrays run a vmath.blocks loop (a light
    body on blocks whose arguments all lie in its range) through float32_parts, with
    parts_kernel(x, out, k) its loop over k parts; other dtypes run the body's own
    kernel."""

    def serial(x: np.ndarray, out: np.ndarray) -> None:
        block_loop.compiled("cpu")(x, out)

    serial.__name__ = block_loop.__name__

    def wrap(body: Any) -> Any:
        own = elementwise(body)

        def kernel(x: np.ndarray, out: np.ndarray) -> np.ndarray:
            own.launch(None, out, "write", x)
            return out

        return elementwise(body, numpy_impl=float32_parts(kernel, serial, parts_kernel))

    return wrap


def _numpy_ok(out: Any, inputs: list[Any]) -> bool:
    """Plain float NumPy arrays of out's shape and dtype."""
    if type(out) is not np.ndarray or out.dtype not in _FLOATS:
        return False
    return all(
        type(a) is np.ndarray and a.dtype == out.dtype and a.shape == out.shape for a in inputs
    )


def numpy_compute(
    kernel: Any, fn: Callable[..., Any], params: tuple[str, ...] = ()
) -> Callable[..., None]:
    """FCompute: fn(*inputs, *params, out=) on float CPU arrays, else kernel.launch."""

    def compute(
        attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
    ) -> None:
        out = outputs[0]
        values = scalar_values(attrs, params, out.dtype)
        r = OpReqType.parse(req[0])
        if r == OpReqType.kNullOp:
            return
        if _numpy_ok(out, inputs):
            if r == OpReqType.kAddTo:
                tmp = np.empty_like(out)
                run_chunked(fn, tmp, (*inputs, *values))
                out += tmp
            else:
                run_chunked(fn, out, (*inputs, *values))
            return
        kernel.launch(ctx, out, req[0], *inputs, *values)

    compute.__name__ = f"compute_{getattr(kernel, 'name', 'kernel')}"
    return compute
