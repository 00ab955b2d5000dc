"""broadcast_map: an element-wise kernel over one output with its inputs broadcast to it.

Shared by broadcast.py (forward ops) and reduce.py (gradients of reductions) — the
counterpart of MXNet's broadcast_reduce-inl.h "map" half.

`broadcast_map(fn, ctx, out, req, *arrays)` first collapses the problem: size-1 output
dims are dropped and neighbouring dims merged where every array is contiguous across
them, so (N, C, H, W) * (1, C, 1, 1) becomes (N, C, H*W) and the inner loop is a plain
vector loop with each array either contiguous (stride 1) or constant (stride 0) along it.
CPU: a numba loop over (row, chunk) work items of the collapsed shape, parallel for large
outputs; the inner loops are specialised on which arrays are constant so they vectorise.
GPU: a grid-stride numba.cuda loop with per-dim index arithmetic (shapes and strides in a
small cached device array), compiled once per process and cached on disk as the kernel
layer's loops are (kernel/disk_cache.py). Arrays of out's size take the kernel layer's
flat path.
float16 computes in float32 and is rounded once on the store on both devices (the CPU
through float32 copies, the GPU loop widening float16 loads), as kernel/cuda.py does.

Neither numba nor numba.cuda is imported until the first launch.
"""

from __future__ import annotations

import functools
import hashlib
from typing import Any

import numpy as np

from ..base import NNVMError
from ..kernel.device import for_device
from ..kernel.elementwise import req_mode
from ..threads import parallel_size

Kernel = Any  # an nv.kernel.elementwise kernel


# -- collapsing an N-d broadcast into few dims ------------------------------------------------


def collapse(out_shape: tuple[int, ...], shapes: list[tuple[int, ...]]) -> tuple[Any, list[Any]]:
    """(dims, per-array element strides) of the smallest equivalent broadcast problem.

    Strides are 0 along broadcast dims. The last dim's strides are 0 or 1: an array not
    broadcast there is contiguous along it (every later dim of the output, dropped for
    being 1, is 1 in the array too).
    """
    nd = len(out_shape)
    dims: list[int] = []
    strides: list[list[int]] = [[] for _ in shapes]
    padded = [(1,) * (nd - len(s)) + tuple(s) for s in shapes]
    own = [_contiguous_strides(p) for p in padded]
    for d in range(nd):
        if out_shape[d] == 1:
            continue
        st = [0 if p[d] == 1 else o[d] for p, o in zip(padded, own)]
        if dims and all(s[-1] == x * out_shape[d] for s, x in zip(strides, st)):
            dims[-1] *= out_shape[d]  # merge with the previous dim: contiguous across both
            for s, x in zip(strides, st):
                s[-1] = x
            continue
        dims.append(out_shape[d])
        for s, x in zip(strides, st):
            s.append(x)
    if not dims:
        dims, strides = [1], [[0] for _ in shapes]
    return np.array(dims, np.int64), [np.array(s, np.int64) for s in strides]


def _contiguous_strides(shape: tuple[int, ...]) -> list[int]:
    out, acc = [0] * len(shape), 1
    for d in range(len(shape) - 1, -1, -1):
        out[d] = acc
        acc *= shape[d]
    return out


_plans: dict[Any, tuple[Any, list[Any]]] = {}


def _plan(out_shape: tuple[int, ...], shapes: list[tuple[int, ...]]) -> tuple[Any, list[Any]]:
    key = (out_shape, *shapes)
    plan = _plans.get(key)
    if plan is None:
        if len(_plans) > 4096:
            _plans.clear()
        plan = _plans[key] = collapse(out_shape, shapes)
    return plan


# -- broadcast_map: the CPU loops -------------------------------------------------------------

CHUNK = 8192  # inner-loop length of one parallel work item
prange = range  # numba.prange once the first loop is built (numba is imported lazily)


# Each loop walks (row, chunk) work items of the collapsed shape. A row's offsets come from
# per-dim index arithmetic once; inside it, an array is either a row slice (stride 1) or one
# value (stride 0), and each combination has its own plain loop (`add` hoisted out), which
# LLVM vectorises: indexing chunk slices from 0 avoids numba's negative-index wraparound.


def _cpu_map1(f: Any) -> Any:
    def loop(out, a, shape, sa, add):
        nd = shape.size
        inner = shape[nd - 1]
        nchunk = (inner + CHUNK - 1) // CHUNK
        for w in prange(out.size // inner * nchunk):
            r = w // nchunk
            j0 = (w - r * nchunk) * CHUNK
            n = min(CHUNK, inner - j0)
            j1 = j0 + n
            rem, ao = r, 0
            for d in range(nd - 2, -1, -1):
                q = rem // shape[d]
                ao += (rem - q * shape[d]) * sa[d]
                rem = q
            o = out[r * inner + j0 : r * inner + j1]
            if sa[nd - 1] == 0:  # broadcast_to (3, 1) -> (3, 4)
                v = f(a[ao])
                if add:
                    for j in range(n):
                        o[j] += v
                else:
                    o[:] = v
            else:
                x = a[ao + j0 : ao + j1]
                if add:
                    for j in range(n):
                        o[j] += f(x[j])
                else:
                    for j in range(n):
                        o[j] = f(x[j])

    return loop


def _cpu_map2(f: Any) -> Any:
    def loop(out, a, b, shape, sa, sb, add):
        nd = shape.size
        inner = shape[nd - 1]
        nchunk = (inner + CHUNK - 1) // CHUNK
        for w in prange(out.size // inner * nchunk):
            r = w // nchunk
            j0 = (w - r * nchunk) * CHUNK
            n = min(CHUNK, inner - j0)
            j1 = j0 + n
            rem, ao, bo = r, 0, 0
            for d in range(nd - 2, -1, -1):
                q = rem // shape[d]
                k = rem - q * shape[d]
                ao += k * sa[d]
                bo += k * sb[d]
                rem = q
            o = out[r * inner + j0 : r * inner + j1]
            ia, ib = sa[nd - 1], sb[nd - 1]
            if ia == 1 and ib == 1:  # (N, C) + (C,)
                x, y = a[ao + j0 : ao + j1], b[bo + j0 : bo + j1]
                if add:
                    for j in range(n):
                        o[j] += f(x[j], y[j])
                else:
                    for j in range(n):
                        o[j] = f(x[j], y[j])
            elif ia == 1 and ib == 0:  # (N, C, HW) * (1, C, 1)
                x, yv = a[ao + j0 : ao + j1], b[bo]
                if add:
                    for j in range(n):
                        o[j] += f(x[j], yv)
                else:
                    for j in range(n):
                        o[j] = f(x[j], yv)
            elif ia == 0 and ib == 1:
                xv, y = a[ao], b[bo + j0 : bo + j1]
                if add:
                    for j in range(n):
                        o[j] += f(xv, y[j])
                else:
                    for j in range(n):
                        o[j] = f(xv, y[j])
            else:  # both constant along the row (out is wider than both inputs)
                v = f(a[ao], b[bo])
                for j in range(n):
                    o[j] = o[j] + v if add else v

    return loop


def _cpu_map3(f: Any) -> Any:
    def loop(out, a, b, c, shape, sa, sb, sc, add):
        nd = shape.size
        inner = shape[nd - 1]
        nchunk = (inner + CHUNK - 1) // CHUNK
        for w in prange(out.size // inner * nchunk):
            r = w // nchunk
            j0 = (w - r * nchunk) * CHUNK
            n = min(CHUNK, inner - j0)
            j1 = j0 + n
            rem, ao, bo, co = r, 0, 0, 0
            for d in range(nd - 2, -1, -1):
                q = rem // shape[d]
                k = rem - q * shape[d]
                ao += k * sa[d]
                bo += k * sb[d]
                co += k * sc[d]
                rem = q
            o = out[r * inner + j0 : r * inner + j1]
            ia, ib, ic = sa[nd - 1], sb[nd - 1], sc[nd - 1]
            if ia == 1 and ib == 1 and ic == 1:
                x, y, z = a[ao + j0 : ao + j1], b[bo + j0 : bo + j1], c[co + j0 : co + j1]
                if add:
                    for j in range(n):
                        o[j] += f(x[j], y[j], z[j])
                else:
                    for j in range(n):
                        o[j] = f(x[j], y[j], z[j])
            elif ia == 1 and ib == 0 and ic == 0:  # reduction gradients: (x, dy, y)
                x, yv, zv = a[ao + j0 : ao + j1], b[bo], c[co]
                if add:
                    for j in range(n):
                        o[j] += f(x[j], yv, zv)
                else:
                    for j in range(n):
                        o[j] = f(x[j], yv, zv)
            elif ia == 1 and ib == 1 and ic == 0:  # binary gradients: (dy, lhs, rhs)
                x, y, zv = a[ao + j0 : ao + j1], b[bo + j0 : bo + j1], c[co]
                if add:
                    for j in range(n):
                        o[j] += f(x[j], y[j], zv)
                else:
                    for j in range(n):
                        o[j] = f(x[j], y[j], zv)
            elif ia == 1 and ib == 0 and ic == 1:
                x, yv, z = a[ao + j0 : ao + j1], b[bo], c[co + j0 : co + j1]
                if add:
                    for j in range(n):
                        o[j] += f(x[j], yv, z[j])
                else:
                    for j in range(n):
                        o[j] = f(x[j], yv, z[j])
            else:  # any other pattern: strides are 0 or 1 (see collapse)
                for j in range(n):
                    v = f(a[ao + (j0 + j) * ia], b[bo + (j0 + j) * ib], c[co + (j0 + j) * ic])
                    o[j] = o[j] + v if add else v

    return loop


_CPU_LOOPS = {1: _cpu_map1, 2: _cpu_map2, 3: _cpu_map3}
SERIAL_CUTOFF = parallel_size()  # below this many outputs the serial loop runs (no team)
_VERSION = "4"  # part of the disk-cache key: bump when the loop templates change meaning


def _build_cpu(fn: Kernel, arity: int, parallel: bool) -> Any:
    global prange
    import numba

    from nnvmpy.kernel import cpu

    cpu.configure_threading_layer()
    prange = numba.prange
    scalar = cpu._jit_scalar(for_device(fn.py_func, "cpu"))  # its device functions bound
    loop = _CPU_LOOPS[arity](scalar)
    dispatcher = numba.njit(parallel=parallel, nogil=True)(loop)
    tag = f"cpu-bcast{arity}-{'par' if parallel else 'ser'}-v{_VERSION}-c{CHUNK}"
    cache = cpu._disk_cache(loop, fn.py_func, tag)
    if cache is not None:
        dispatcher._cache = cache  # type: ignore[attr-defined]  # = enable_caching(), see kernel/cpu.py
    return dispatcher


_HALF = np.dtype(np.float16)


def _cpu_map(fn: Kernel, out: np.ndarray, add: bool, arrays: tuple[Any, ...]) -> None:
    from nnvmpy.kernel.cpu import NATIVE_DTYPES

    for i, a in enumerate((out, *arrays)):
        if not isinstance(a, np.ndarray) or not a.flags.c_contiguous:
            what = "out" if i == 0 else f"arg {i - 1}"
            raise NNVMError(f"{fn.name}: {what} must be a C-contiguous NumPy array")
    if out.dtype == _HALF or any(a.dtype == _HALF for a in arrays):
        # numba cannot compute in float16 on the CPU: go through float32 copies
        tmp = out.astype(np.float32) if add else np.empty(out.shape, np.float32)
        _cpu_map(fn, tmp, add, tuple(a.astype(np.float32) for a in arrays))
        np.copyto(out, tmp, casting="unsafe")
        return
    bad = [a.dtype for a in (out, *arrays) if a.dtype not in NATIVE_DTYPES]
    if bad:
        names = sorted(str(d) for d in NATIVE_DTYPES | {_HALF})
        raise NNVMError(f"{fn.name}: dtype {bad[0]} is not supported on cpu; expected {names}")
    shape, strides = _plan(out.shape, [a.shape for a in arrays])
    parallel = out.size >= SERIAL_CUTOFF
    key = ("cpu-bcast", str(len(arrays)), "par" if parallel else "ser")
    loop = fn._variants.get(key) or fn.variant(key, lambda: _build_cpu(fn, len(arrays), parallel))
    loop(out.reshape(-1), *(a.reshape(-1) for a in arrays), shape, *strides, add)


# -- broadcast_map: the GPU loops -------------------------------------------------------------

cuda: Any = None  # numba.cuda, bound on the first GPU launch (a global, for the simulator)


# float16 computes as on the CPU (its float32 copies, see _cpu_map): `load` widens a
# float16 argument to float32 (the identity for other dtypes) and, for a float16 out,
# `store` rounds the float32 value once (an add sums in float32 first). Computing in
# float16 rounded every intermediate (x * y + x: two roundings to 11 bits). The load and
# store functions are device functions (see _device_helpers), inlined by NVVM.


def _gpu_map1(f: Any, load: tuple[Any, ...], store: Any) -> Any:
    (la,) = load

    def loop(out, a, meta, add):
        nd = meta.size // 2
        for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
            rem, ao = i, 0
            for d in range(nd - 1, -1, -1):
                q = rem // meta[d]
                ao += (rem - q * meta[d]) * meta[nd + d]
                rem = q
            v = f(la(a[ao]))
            store(out, i, v, add)

    return loop


def _gpu_map2(f: Any, load: tuple[Any, ...], store: Any) -> Any:
    la, lb = load

    def loop(out, a, b, meta, add):
        nd = meta.size // 3
        for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
            rem, ao, bo = i, 0, 0
            for d in range(nd - 1, -1, -1):
                q = rem // meta[d]
                k = rem - q * meta[d]
                ao += k * meta[nd + d]
                bo += k * meta[2 * nd + d]
                rem = q
            v = f(la(a[ao]), lb(b[bo]))
            store(out, i, v, add)

    return loop


def _gpu_map3(f: Any, load: tuple[Any, ...], store: Any) -> Any:
    la, lb, lc = load

    def loop(out, a, b, c, meta, add):
        nd = meta.size // 4
        for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
            rem, ao, bo, co = i, 0, 0, 0
            for d in range(nd - 1, -1, -1):
                q = rem // meta[d]
                k = rem - q * meta[d]
                ao += k * meta[nd + d]
                bo += k * meta[2 * nd + d]
                co += k * meta[3 * nd + d]
                rem = q
            v = f(la(a[ao]), lb(b[bo]), lc(c[co]))
            store(out, i, v, add)

    return loop


_GPU_LOOPS = {1: _gpu_map1, 2: _gpu_map2, 3: _gpu_map3}
_gpu_meta: dict[Any, Any] = {}


_helpers: dict[str, Any] = {}


def _keep(v):  # an argument as it is
    return v


def _widen(v):  # a float16 argument, computed on in float32
    return np.float32(v)


def _store(out, i, v, add):  # out in its own dtype: as the CPU loop stores
    if add:
        out[i] += v
    else:
        out[i] = v


def _store_half(out, i, v, add):  # float16 out: a float32 value (sum), rounded once
    if add:
        out[i] = np.float32(np.float32(out[i]) + v)
    else:
        out[i] = np.float32(v)


def _device_helpers(pattern: str, half: bool) -> tuple[tuple[Any, ...], Any]:
    """(load per argument, store): pattern 'H' (float16) widens, 'A' keeps; `half`
    (a float16 out) rounds once on the store."""
    if not _helpers:
        jit = cuda.jit(device=True)
        _helpers.update(A=jit(_keep), H=jit(_widen), store=jit(_store), half=jit(_store_half))
    return tuple(_helpers[k] for k in pattern), _helpers["half" if half else "store"]


def bind_cuda(name: str) -> Any:
    """numba.cuda as this module's global `cuda` (checked once by the kernel layer)."""
    global cuda
    if cuda is None:
        from nnvmpy.kernel.cuda import get_cuda

        cuda = get_cuda(name)
    return cuda


def device_meta(ctx: Any, name: str, values: tuple[int, ...]) -> Any:
    """A cached int64 device array of `values` (shapes and strides a kernel reads)."""
    from nnvmpy.kernel.cuda import launch_config

    _, _, _, device = launch_config(name, ctx, 1)
    dev_id = getattr(getattr(ctx, "ctx", ctx), "device_id", 0)
    key = (dev_id, values)
    found = _gpu_meta.get(key)
    if found is None:
        if len(_gpu_meta) > 4096:
            _gpu_meta.clear()
        with device:
            found = _gpu_meta[key] = cuda.to_device(np.array(values, np.int64))
    return found


def _gpu_map(fn: Kernel, ctx: Any, out: Any, add: bool, arrays: tuple[Any, ...]) -> None:
    from nnvmpy.kernel.cuda import as_device_array, launch_config, launch_kernel

    bind_cuda(fn.name)
    out = as_device_array(fn.name, "out", out)
    arrays = tuple(as_device_array(fn.name, f"arg {i}", a) for i, a in enumerate(arrays))
    shape, strides = _plan(tuple(out.shape), [tuple(a.shape) for a in arrays])
    meta = device_meta(ctx, fn.name, tuple(int(v) for s in (shape, *strides) for v in s))
    pattern = "".join("H" if a.dtype == _HALF else "A" for a in arrays)
    half = out.dtype == _HALF
    key = ("gpu-bcast", str(len(arrays)), pattern, "half" if half else "")
    loop = fn._variants.get(key) or fn.variant(
        key, lambda: _build_gpu(fn, len(arrays), pattern, half)
    )
    blocks, threads, stream, device = launch_config(fn.name, ctx, out.size)
    flat = (out.reshape(out.size), *(a.reshape(a.size) for a in arrays), meta, add)
    with device:
        launch_kernel(loop, blocks, threads, stream, flat)


def _build_gpu(fn: Kernel, arity: int, pattern: str, half: bool) -> Any:
    """The numba.cuda dispatcher of one loop variant, cached on disk as kernel/cuda.py's
    element-wise loops are: keyed by the loop template's code, fn's body and all it
    calls, and the load/store helpers' code (the tag; the loop reaches them through its
    closure, which the key does not follow)."""
    from nnvmpy.kernel.disk_cache import enable_cuda_cache

    device_fn = fn.variant(
        ("gpu", "device_fn"), lambda: cuda.jit(device=True)(for_device(fn.py_func, "gpu"))
    )
    loop = for_device(_GPU_LOOPS[arity](device_fn, *_device_helpers(pattern, half)), "gpu")
    dispatcher = cuda.jit(loop)
    tag = f"cuda-bcast{arity}-{pattern}{'-half' if half else ''}-v{_VERSION}-{_helpers_key()}"
    enable_cuda_cache(dispatcher, device_fn.py_func, tag, loop)
    return dispatcher


@functools.cache
def _helpers_key() -> str:
    from nnvmpy.kernel.disk_cache import _code_key

    code = [_code_key(h.__code__) for h in (_keep, _widen, _store, _store_half)]
    return hashlib.sha256(repr(code).encode()).hexdigest()[:12]


def broadcast_map(fn: Kernel, ctx: Any, out: Any, req: Any, *arrays: Any) -> None:
    """out (+)= fn(*arrays) element-wise, each array broadcast to out's shape.

    Arrays may have fewer dims than out (aligned from the right). Same-size arrays take
    the kernel layer's flat element-wise path.
    """
    mode = req_mode(fn.name, req)
    if mode is None or out.size == 0:
        return
    if all(a.size == out.size for a in arrays):
        fn.launch(ctx, out, req, *(a.reshape(out.shape) for a in arrays))
        return
    dev = getattr(getattr(ctx, "ctx", ctx), "device_type", None) or (
        "cpu" if isinstance(out, np.ndarray) else "gpu"
    )
    if dev == "gpu":
        _gpu_map(fn, ctx, out, mode == "add", arrays)
    else:
        _cpu_map(fn, out, mode == "add", arrays)
