"""Kernel bodies the indexing ops share: row gathers and scatter-adds by an index array.

An indexed array is viewed as (outer, n, inner) around its indexed axis; an index array
of m entries selects rows of `inner` contiguous elements. One body per loop serves both
devices (kernel.parallel_for); only the launch geometry differs:

    take_rows   out[o, j, :] (+)= data[o, idx[j], :]      CPU: one row per item;
                                                          GPU: one element per item
    take_grad   da[o, idx[j], :] += dy[o, j, :]           CPU: items own column blocks
                                                          (no two write one element);
                                                          GPU: items own (row chunk,
                                                          column) and add atomically
    pick_elems  out[o, i] (+)= data[o, idx[o, i], i]      one element per item
    pick_grad   dx[o, idx[o, i], i] += dy[o, i]           one element per item: each
                                                          (o, i) writes its own slot

Indices may have any dtype; floats truncate toward zero as a C cast does. `wrap` wraps
an index around n (Python's modulo); otherwise it is clipped to [0, n). numba cannot
compute in float16 on the CPU, so CPU launches see float16 arrays as float32 copies
(`half_as_float32`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from .. import kernel
from ..kernel import scratch
from ..kernel.device import DeviceFunction, for_device
from ..kernel.launch import ADD, NULL, flat, is_gpu
from ..kernel.launch import uindex as uidx

_HALF = np.dtype(np.float16)


# --- index arithmetic ------------------------------------------------------------------------


@kernel.device_function
def norm_index(v, n, wrap):
    """An index into an axis of size n: wrapped around it, or clipped to [0, n)."""
    j = int(v)
    if wrap:
        j = j % n
        if j < 0:
            j += n
    elif j < 0:
        j = 0
    elif j >= n:
        j = n - 1
    return j


class _AtomicAdd(DeviceFunction):
    """a[i] += v: plain on the CPU (its loops give each item its own elements), an atomic
    add on the GPU (where items of one loop may add into the same element)."""

    def _build(self, device: str) -> Any:
        if device != "gpu":
            return super()._build(device)
        from nnvmpy.kernel.cuda import get_cuda

        # for_device binds the copy's global `cuda` (the simulator swaps that global)
        return get_cuda(self.__name__).jit(device=True)(for_device(_atomic_add_gpu, "gpu"))


cuda: Any = None  # numba.cuda in the GPU build of _atomic_add_gpu (bound by for_device)


def _atomic_add_gpu(a, i, v):
    cuda.atomic.add(a, i, v)


def _plain_add(a, i, v):
    a[i] += v


atomic_add = _AtomicAdd(_plain_add)


# --- bodies ----------------------------------------------------------------------------------


@kernel.parallel_for
def take_rows(t, out, data, idx, n, m, inner, chunk, nchunk, wrap, mode):
    # item t: column chunk c of output row r = (o, j); out[o, j, k] (+)= data[o, idx[j], k]
    r = t // nchunk
    c = t - r * nchunk
    o = r // m
    src = (o * n + norm_index(idx[r - o * m], n, wrap)) * inner
    dst = r * inner
    k0 = c * chunk
    k1 = min(k0 + chunk, inner)
    if mode == 2:
        for k in range(k0, k1):
            out[uidx(dst + k)] += data[uidx(src + k)]
    else:
        for k in range(k0, k1):
            out[uidx(dst + k)] = data[uidx(src + k)]


@kernel.parallel_for
def take_grad(t, da, dy, idx, n, m, inner, jchunk, njc, kchunk, nkc, wrap, atomic):
    # item t: (o, row chunk jc, column chunk kc); da[o, idx[j], k] += dy[o, j, k]
    kc = t % nkc
    rest = t // nkc
    jc = rest % njc
    o = rest // njc
    k0 = kc * kchunk
    k1 = min(k0 + kchunk, inner)
    for j in range(jc * jchunk, min(jc * jchunk + jchunk, m)):
        dst = (o * n + norm_index(idx[j], n, wrap)) * inner
        src = (o * m + j) * inner
        if atomic:
            for k in range(k0, k1):
                atomic_add(da, dst + k, dy[src + k])
        else:
            for k in range(k0, k1):
                da[uidx(dst + k)] += dy[uidx(src + k)]


@kernel.parallel_for
def pick_elems(t, out, data, idx, n, inner, wrap, mode):
    # out[o, i] (+)= data[o, idx[o, i], i]   with t = o * inner + i
    o = t // inner
    v = data[uidx((o * n + norm_index(idx[t], n, wrap)) * inner + t - o * inner)]
    if mode == 2:
        out[t] += v
    else:
        out[t] = v


@kernel.parallel_for
def pick_grad(t, dx, dy, idx, n, inner, wrap):
    # dx[o, idx[o, i], i] += dy[o, i]; each (o, i) owns its target, so no two items collide
    o = t // inner
    dx[uidx((o * n + norm_index(idx[t], n, wrap)) * inner + t - o * inner)] += dy[t]


@kernel.parallel_for
def fill_value(i, out, value):
    out[i] = value


@kernel.parallel_for
def flag_bad_index(i, flag, idx, n):
    j = int(idx[i])
    if j < 0 or j >= n:
        flag[0] = 1  # every writer writes the same value


# --- launch helpers --------------------------------------------------------------------------


def zero(ctx: Any, out: Any) -> None:
    """out[...] = 0 on either device (a write request's start for scatter-adds)."""
    if out.size == 0:
        return
    if is_gpu(ctx):
        fill_value.launch(ctx, out.size, flat(out), 0)
    else:
        out[...] = 0


def gather_rows(ctx: Any, out: Any, data: Any, idx: Any, sizes: tuple[int, int, int, int],
                wrap: bool, mode: int) -> None:  # fmt: skip
    """out (outer, m, inner) (+)= data (outer, n, inner) at rows idx (m entries)."""
    outer, n, m, inner = sizes
    rows = outer * m
    if mode == NULL or rows * inner == 0:
        return
    nchunk = inner if is_gpu(ctx) else 1  # the GPU reads one row with adjacent threads
    chunk = _ceil(inner, nchunk)
    args = (flat(out), flat(data), flat(idx), n, m, inner, chunk, nchunk, wrap, mode)
    take_rows.launch(ctx, rows * nchunk, *args, work=rows * inner)


def scatter_add_rows(ctx: Any, da: Any, dy: Any, idx: Any, sizes: tuple[int, int, int, int],
                     wrap: bool) -> None:  # fmt: skip
    """da (outer, n, inner) += dy (outer, m, inner) at rows idx; duplicates add up."""
    outer, n, m, inner = sizes
    if outer * m * inner == 0:
        return
    if is_gpu(ctx) and np.dtype(da.dtype) == np.float16:  # no float16 atomics: add in float32
        from nnvmpy.ops._atomic_grad import atomic_target

        with atomic_target(ctx, da, ADD) as acc:
            scatter_add_rows(ctx, acc, dy, idx, sizes, wrap)
        return
    if is_gpu(ctx):
        atomic = np.dtype(da.dtype) in (np.float32, np.float64)
        # atomics: many row chunks per column; otherwise each column is one item's
        njc = _ceil(m, 32) if atomic else 1
        jchunk, kchunk, nkc = _ceil(m, njc), 1, inner
    else:
        atomic, njc, jchunk = False, 1, m
        # enough column blocks to keep the threads busy, each a multiple of 16 elements
        # wide (whole cache lines of float32: threads then never write one line)
        nkc = max(1, min(_ceil(inner, 16), 64 // max(outer, 1)))
        kchunk = _ceil(_ceil(inner, nkc), 16) * 16
        nkc = _ceil(inner, kchunk)
    args = (flat(da), flat(dy), flat(idx), n, m, inner, jchunk, njc, kchunk, nkc, wrap, atomic)
    take_grad.launch(ctx, outer * njc * nkc, *args, work=outer * m * inner)


def has_bad_index(ctx: Any, idx: Any, n: int) -> bool:
    """Whether a GPU index array holds an index (cast to int) outside [0, n); waits."""
    flag = device_ints(ctx, [0])
    flag_bad_index.launch(ctx, int(idx.size), flag, flat(idx), n)
    stream = getattr(getattr(ctx, "run_ctx", None), "stream", None) or 0
    return bool(flag.copy_to_host(stream=stream)[0])


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def assign(out: np.ndarray, mode: int, value: Any) -> None:
    """Write a NumPy result into out as the request says (cast as C does)."""
    if mode == NULL:
        return
    if mode == ADD:
        out += np.asarray(value).astype(out.dtype, copy=False)
    else:
        np.copyto(out, value, casting="unsafe")


def device_ints(ctx: Any, values: Sequence[int]) -> Any:
    """A small int64 array of `values` on ctx's device (shapes and strides for kernels)."""
    return to_ctx(ctx, np.asarray(values, dtype=np.int64))


def device_empty(ctx: Any, size: int, dtype: Any) -> Any:
    """A flat scratch array of `size` (at least 1) elements on ctx's device, uninitialised:
    NumPy on the CPU (where tests run the device kernels too), pooled scratch on the op's
    stream on a GPU (kernel/scratch.py)."""
    return scratch.empty(ctx, max(int(size), 1), dtype)


def to_ctx(ctx: Any, host: np.ndarray) -> Any:
    """A small host array (a kernel's table) on ctx's device: itself on the CPU."""
    if not is_gpu(ctx):
        return host
    return scratch.upload(ctx, host)


def _is_half(a: Any) -> bool:
    return getattr(a, "dtype", None) == _HALF


@contextmanager
def half_as_float32(
    ctx: Any, outputs: Sequence[Any], modes: Sequence[int], inputs: Sequence[Any]
) -> Iterator[tuple[list[Any], list[Any]]]:
    """(outputs, inputs) with CPU float16 arrays as float32 copies; written back on exit.

    numba has no float16 arithmetic on the CPU. An output with an add request starts from
    its current values; the GPU computes in float16 directly and gets the arrays as given.
    """
    if is_gpu(ctx) or not any(map(_is_half, [*outputs, *inputs])):
        yield list(outputs), list(inputs)
        return
    ins = [a.astype(np.float32) if _is_half(a) else a for a in inputs]
    outs = [
        (a.astype(np.float32) if m == ADD else np.empty(a.shape, np.float32)) if _is_half(a) else a
        for a, m in zip(outputs, modes)
    ]
    yield outs, ins
    for a, b, m in zip(outputs, outs, modes):
        if b is not a and m != NULL:
            np.copyto(a, b, casting="unsafe")
