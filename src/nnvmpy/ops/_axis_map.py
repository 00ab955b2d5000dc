"""Copies whose source is a per-axis function of the destination: the layout ops' kernels.

tile, repeat, flip, swapaxes, Pad, depth_to_space, space_to_depth and diag's extraction
move elements without arithmetic, and each output coordinate i_k reads one input
coordinate j_k = f_k(i_k) (a permutation of axes is a permutation of the input strides).
An AxisMap lists, per output axis, the kind of f_k with its two integer parameters, the
input length n_k and the input stride the coordinate is multiplied by:

    AFFINE   j = a*i + b    (a = +-1; outside [0, n) reads `fill`: constant padding)
    TILE     j = i mod n
    REPEAT   j = i div a
    EDGE     j = clip(i - b, 0, n - 1)
    REFLECT  j = |i - b| mirrored at n - 1 (numpy's 'reflect', one reflection)

Two bodies serve every op, on both devices (kernel.parallel_for):

    gather   y[i] (+)= x[base + sum_k stride_k * f_k(i_k)]      (the forward)
    adjoint  dx[j] (+)= sum of dy[i] over the i with source j  (the backward)

The adjoint enumerates each input coordinate's preimages per axis (count and p-th
member, in closed form), so it needs no atomics: every work item owns one dx element.
It decodes dx's flat index with the strides, so there the axes must cover the input
exactly (a mixed radix; an axis the input lacks has n = 1). numba cannot compute in
float16 on the CPU: CPU launches see float16 arrays as float32 copies.

A map that reads every input element once (the identity or a flip per axis, the axes in
any order: swapaxes, flip) has an inverse (`inverse`), and its adjoint is the gather
through it. On the CPU, a gather that only permutes axes runs as a tiled transpose
(_transpose_cpu.py): a row loop would walk one side a whole plane apart.

The kernels read the map as one int64 array, its six per-axis rows laid end to end
(AxisMap.meta). Passed as six tuples, every rank was a separate signature: a flip of a
4-d array compiled both bodies again after a 2-d one (3-4 s each, per dtype).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import kernel
from ..kernel.launch import NULL, flat, is_gpu, req_code
from ..kernel.launch import uindex as uidx
from ._index_kernels import half_as_float32

AFFINE, TILE, REPEAT, EDGE, REFLECT = 0, 1, 2, 3, 4

# rows of AxisMap.meta: row r of an nd-axis map starts at r * nd
OSHAPE, KIND, N, A, B, STRIDE = 0, 1, 2, 3, 4, 5


@dataclass(frozen=True)
class AxisMap:
    """Per output axis: its length, f's kind and parameters, the input length and stride."""

    oshape: tuple[int, ...]
    kinds: tuple[int, ...]
    n: tuple[int, ...]
    a: tuple[int, ...]
    b: tuple[int, ...]
    stride: tuple[int, ...]
    base: int = 0
    fill: float = 0.0

    @property
    def size(self) -> int:
        return math.prod(self.oshape)

    @functools.cached_property
    def meta(self) -> np.ndarray:
        """The six per-axis rows as one int64 array, in OSHAPE..STRIDE order."""
        rows = (self.oshape, self.kinds, self.n, self.a, self.b, self.stride)
        return np.array([v for row in rows for v in row], np.int64)


def contiguous_strides(shape: Sequence[int]) -> tuple[int, ...]:
    """Element strides of a C-contiguous array of this shape."""
    return tuple(math.prod(shape[k + 1 :]) for k in range(len(shape)))


def axis_map(oshape: Sequence[int], axes: Sequence[tuple[int, int, int, int, int]]) -> AxisMap:
    """An AxisMap from one (kind, n, a, b, stride) per output axis."""
    if not axes:  # a 0-d array is one element: a 1-d map of length 1
        return AxisMap((1,), (AFFINE,), (1,), (1,), (0,), (1,))
    cols = list(zip(*axes))
    as_ints = [tuple(int(v) for v in c) for c in cols]
    return AxisMap(tuple(int(d) for d in oshape), *as_ints)  # type: ignore[arg-type]


def identity_axes(shape: Sequence[int]) -> list[tuple[int, int, int, int, int]]:
    """(kind, n, a, b, stride) rows that copy an array of `shape` as it is."""
    return [(AFFINE, n, 1, 0, s) for n, s in zip(shape, contiguous_strides(shape))]


# --- per-axis index arithmetic ----------------------------------------------------------------


@kernel.device_function
def axis_source(kind, i, n, a, b):
    """The input coordinate output coordinate i reads (may be outside [0, n) for AFFINE)."""
    if kind == 1:
        return i % n
    if kind == 2:
        return i // a
    if kind == 3:
        j = i - b
        if j < 0:
            return 0
        if j >= n:
            return n - 1
        return j
    if kind == 4:
        j = i - b
        if j < 0:
            j = -j
        if j >= n:
            j = 2 * (n - 1) - j
        return j
    return a * i + b


@kernel.device_function
def axis_count(kind, j, n, m, a, b):
    """How many of the m output coordinates read input coordinate j."""
    if kind == 1:
        return m // n
    if kind == 2:
        return a
    if kind == 3:
        lo = 0 if j == 0 else j + b
        hi = m if j == n - 1 else j + b + 1
        return hi - lo
    if kind == 4:  # the centre, the left mirror (1 <= j <= b), the right mirror
        c = 1
        if j >= 1 and j <= b:
            c += 1
        if j < n - 1 and j >= 2 * n - 1 - m + b:
            c += 1
        return c
    i = (j - b) * a  # a = +-1 is its own inverse
    return 1 if i >= 0 and i < m else 0


@kernel.device_function
def axis_preimage(kind, j, p, n, a, b):
    """The p-th output coordinate (p < axis_count) that reads input coordinate j."""
    if kind == 1:
        return j + p * n
    if kind == 2:
        return j * a + p
    if kind == 3:
        return (0 if j == 0 else j + b) + p
    if kind == 4:
        if p == 0:
            return j + b
        if p == 1 and j >= 1 and j <= b:
            return b - j
        return b + 2 * (n - 1) - j
    return (j - b) * a


# called, not inlined at numba's IR level: LLVM still inlines a body this small, and its
# 30 call sites no longer cost a typing pass each (compile 4.5 -> 3.5 s per dtype)
@kernel.device_function(cpu_inline=False)
def at(meta, row, nd, k):
    """Axis k's entry in row `row` (OSHAPE..STRIDE) of a packed nd-axis map."""
    return meta[uidx(row * nd + k)]


# --- bodies -------------------------------------------------------------------------------------
# Items are chunks of rows along the last axis (the CPU: whole rows; the GPU: single
# elements): the other axes are decoded once per item, and the last one walks a loop
# specialised by its kind, so the common copies are plain strided loops.


@kernel.device_function
def put(a, k, v, mode):
    """a[k] = v, or += v for an add request (mode 2)."""
    if mode == 2:
        a[uidx(k)] += v
    else:
        a[uidx(k)] = v


@kernel.device_function
def row_gather(out, dst, x, src, i0, i1, kind, n, a, b, st, fill, mode):
    # out[dst + i] (+)= x[src + source(i) * st] for i in [i0, i1); fill outside the input
    if kind == 1 or kind == 2:  # tile, repeat: a running source coordinate, no divisions
        j = i0 % n if kind == 1 else i0 // a
        rep = 0 if kind == 1 else i0 - j * a
        for i in range(i0, i1):
            put(out, dst + i, x[uidx(src + j * st)], mode)
            rep += 1
            if kind == 1 or rep == a:
                rep = 0
                j += 1
                if kind == 1 and j == n:
                    j = 0
    elif kind == 0 or kind == 3:  # affine (a = +-1) or edge: [lo, hi) reads the inside
        if kind == 3:
            a = 1
            b = -b
        lo = -b if a == 1 else b - n + 1
        hi = lo + n
        lo = min(max(lo, i0), i1)
        hi = max(min(hi, i1), lo)
        left = fill if kind == 0 else x[uidx(src)]
        right = fill if kind == 0 else x[uidx(src + (n - 1) * st)]
        for i in range(i0, lo):
            put(out, dst + i, left, mode)
        if a == 1 and st == 1:  # a contiguous copy
            for i in range(lo, hi):
                put(out, dst + i, x[uidx(src + i + b)], mode)
        else:
            first = src + (a * lo + b) * st
            for i in range(hi - lo):
                put(out, dst + lo + i, x[uidx(first + a * st * i)], mode)
        for i in range(hi, i1):
            put(out, dst + i, right, mode)
    else:
        for i in range(i0, i1):
            put(out, dst + i, x[uidx(src + axis_source(kind, i, n, a, b) * st)], mode)


@kernel.parallel_for
def gather_rows(t, out, x, meta, base, fill, chunk, nchunk, mode):
    # item t: a chunk of one output row (the last axis); out[i] (+)= x[source(i)] or fill
    nd = meta.size // 6
    d = nd - 1
    r = t // nchunk
    c = t - r * nchunk
    rem = r
    src = base
    inside = True
    for k in range(d - 1, -1, -1):
        m = at(meta, OSHAPE, nd, k)
        n = at(meta, N, nd, k)
        q = rem // m
        kind, a, b = at(meta, KIND, nd, k), at(meta, A, nd, k), at(meta, B, nd, k)
        j = axis_source(kind, rem - q * m, n, a, b)
        rem = q
        if j < 0 or j >= n:
            inside = False
        src += j * at(meta, STRIDE, nd, k)
    m = at(meta, OSHAPE, nd, d)
    i0 = c * chunk
    i1 = min(i0 + chunk, m)
    if inside:
        row_gather(
            out, r * m, x, src, i0, i1, at(meta, KIND, nd, d), at(meta, N, nd, d),
            at(meta, A, nd, d), at(meta, B, nd, d), at(meta, STRIDE, nd, d), fill, mode,
        )  # fmt: skip
    else:
        for i in range(i0, i1):
            put(out, r * m + i, fill, mode)


@kernel.device_function
def row_adjoint(dx, base, dy, off, j0, j1, kind, n, m, a, b, st):
    # dx[base + j*st] += dy[off + i] for every i in [0, m) whose source j is in [j0, j1)
    if kind == 1:  # tile: whole copies of the row
        for p in range(m // n):
            for j in range(j0, j1):
                dx[uidx(base + j * st)] += dy[uidx(off + p * n + j)]
    elif kind == 2:  # repeat: runs of a
        for j in range(j0, j1):
            for p in range(a):
                dx[uidx(base + j * st)] += dy[uidx(off + j * a + p)]
    elif kind == 0:  # affine (a = +-1): one preimage (j - b) * a, for j in [lo, hi)
        lo = b if a == 1 else b - m + 1
        hi = lo + m
        lo = min(max(lo, j0), j1)
        hi = max(min(hi, j1), lo)
        if a == 1 and st == 1:  # a contiguous add
            for j in range(lo, hi):
                dx[uidx(base + j)] += dy[uidx(off + j - b)]
        else:
            for j in range(lo, hi):
                dx[uidx(base + j * st)] += dy[uidx(off + (j - b) * a)]
    elif kind == 3:  # edge: each end sums its run, an inside j has one preimage j + b
        for j in range(j0, j1):
            if j == 0 or j == n - 1:
                for i in range(0 if j == 0 else j + b, m if j == n - 1 else j + b + 1):
                    dx[uidx(base + j * st)] += dy[uidx(off + i)]
        lo = max(j0, 1)
        hi = max(min(j1, n - 1), lo)
        if st == 1:
            for j in range(lo, hi):
                dx[uidx(base + j)] += dy[uidx(off + j + b)]
        else:
            for j in range(lo, hi):
                dx[uidx(base + j * st)] += dy[uidx(off + j + b)]
    else:
        for j in range(j0, j1):
            for p in range(axis_count(kind, j, n, m, a, b)):
                dx[uidx(base + j * st)] += dy[uidx(off + axis_preimage(kind, j, p, n, a, b))]


@kernel.device_function
def axis_count_at(meta, nd, k, j):
    """axis_count of axis k of a packed map (AxisMap.meta) at input coordinate j."""
    kind, n, m = at(meta, KIND, nd, k), at(meta, N, nd, k), at(meta, OSHAPE, nd, k)
    return axis_count(kind, j, n, m, at(meta, A, nd, k), at(meta, B, nd, k))


@kernel.parallel_for
def adjoint_rows(t, dx, dy, meta, zero, chunk, nchunk, mode):
    # item t: a chunk of input coordinates along the plan's last axis, every other
    # coordinate fixed by t; dx (+)= the dy elements that read them, summed over the
    # preimages of the other axes (outer loop) and of the last axis (row_adjoint)
    nd = meta.size // 6
    d = nd - 1
    n = at(meta, N, nd, d)
    st = at(meta, STRIDE, nd, d)
    r = t // nchunk
    j0 = (t - r * nchunk) * chunk
    j1 = min(j0 + chunk, n)
    # the element of dx at last-axis coordinate 0 of this row: the other coordinates
    # are r decoded over the other axes' input lengths, placed by their strides
    rem = r
    base = 0
    total = 1
    for k in range(d - 1, -1, -1):
        nk = at(meta, N, nd, k)
        q = rem // nk
        jk = rem - q * nk
        rem = q
        base += jk * at(meta, STRIDE, nd, k)
        total *= axis_count_at(meta, nd, k, jk)
    if mode != 2:
        for j in range(j0, j1):
            dx[uidx(base + j * st)] = zero
    for combo in range(total):
        crem = combo
        rrem = r
        off = 0
        ostride = at(meta, OSHAPE, nd, d)
        for k in range(d - 1, -1, -1):
            nk = at(meta, N, nd, k)
            q = rrem // nk
            jk = rrem - q * nk
            rrem = q
            cnt = axis_count_at(meta, nd, k, jk)
            cq = crem // cnt
            p = crem - cq * cnt
            kind, a, b = at(meta, KIND, nd, k), at(meta, A, nd, k), at(meta, B, nd, k)
            off += axis_preimage(kind, jk, p, nk, a, b) * ostride
            crem = cq
            ostride *= at(meta, OSHAPE, nd, k)
        row_adjoint(
            dx, base, dy, off, j0, j1, at(meta, KIND, nd, d), n, at(meta, OSHAPE, nd, d),
            at(meta, A, nd, d), at(meta, B, nd, d), st,
        )  # fmt: skip


# --- launches -----------------------------------------------------------------------------------


def _accumulator(dtype: np.dtype) -> Any:
    """A zero of the type sums run in: float32 for float16 (as MXNet), int64 for integers."""
    if dtype.kind == "f":
        return np.float64(0) if dtype == np.float64 else np.float32(0)
    return np.int64(0)


def _meta(name: str, ctx: Any, amap: AxisMap) -> Any:
    """amap.meta where the kernel runs: cached on the device by value for a GPU."""
    if not is_gpu(ctx):
        return amap.meta
    from nnvmpy.ops import _broadcast_map as bmap

    bmap.bind_cuda(name)
    return bmap.device_meta(ctx, name, tuple(int(v) for v in amap.meta))


def gather(name: str, ctx: Any, out: Any, req: Any, x: Any, amap: AxisMap) -> None:
    """out (+)= x read through `amap` (out has amap.size elements, in amap's order)."""
    mode = req_code(name, req)
    if mode == NULL or amap.size == 0:
        return
    if _transposed(ctx, out, x, amap, mode):
        return
    m = amap.oshape[-1]
    chunk, nchunk = (1, m) if is_gpu(ctx) else (m, 1)
    with half_as_float32(ctx, [out], [mode], [x]) as (outs, ins):
        dst, src = flat(outs[0]), flat(ins[0])
        if src.size == 0:  # nothing to read: every element is the fill
            src = dst
        fill = float(amap.fill) if dst.dtype.kind == "f" else int(amap.fill)
        gather_rows.launch(
            ctx, (amap.size // m) * nchunk, dst, src, _meta(name, ctx, amap), amap.base, fill,
            chunk, nchunk, mode, work=amap.size,
        )  # fmt: skip


def _input_order(amap: AxisMap) -> list[int] | None:
    """The output axes in the input's order (outermost first) when they cover the input
    exactly, each once (a mixed radix); None otherwise."""
    # larger strides first; a length-1 axis shares its stride with the axis inside it
    order = sorted(range(len(amap.n)), key=lambda k: (-amap.stride[k], -amap.n[k]))
    if list(contiguous_strides([amap.n[k] for k in order])) != [amap.stride[k] for k in order]:
        return None
    return order


def _reads_each_once(amap: AxisMap, flips: bool) -> bool:
    """Whether every axis is the identity (or, with flips, a reversal), with no base."""
    if amap.base:
        return False
    for kind, n, m, a, b in zip(amap.kinds, amap.n, amap.oshape, amap.a, amap.b):
        if kind != AFFINE or n != m:
            return False
        if (a, b) != (1, 0) and not (flips and (a, b) == (-1, n - 1)):
            return False
    return True


def inverse(amap: AxisMap) -> AxisMap | None:
    """The map that undoes `amap` when it reads every input element exactly once (each
    axis the identity or a flip, the axes permuted: swapaxes, flip), else None.

    Its adjoint is then a gather through the inverse, which a permutation turns into a
    tiled transpose on the CPU (gather), and which reads dy as gather reads x.
    """
    order = _input_order(amap) if _reads_each_once(amap, flips=True) else None
    if order is None:
        return None
    out_strides = contiguous_strides(amap.oshape)
    axes = [(AFFINE, amap.oshape[k], amap.a[k], amap.b[k], out_strides[k]) for k in order]
    return axis_map([amap.n[k] for k in order], axes)


def _transposed(ctx: Any, out: Any, x: Any, amap: AxisMap, mode: int) -> bool:
    """out (+)= x through a map that only permutes axes, by _transpose_cpu's tiles; False
    (nothing done) on a GPU, for other maps, or where the tiles do not pay."""
    if is_gpu(ctx) or not _reads_each_once(amap, flips=False):
        return False
    order = _input_order(amap)
    if order is None:
        return False
    from nnvmpy.ops import _transpose_cpu

    axes = tuple(order.index(k) for k in range(len(order)))  # output axis k reads input axis
    shape = tuple(amap.n[k] for k in order)
    return _transpose_cpu.transpose_into(
        out.reshape(amap.oshape), x.reshape(shape), axes, mode == 2
    )


def adjoint(name: str, ctx: Any, dx: Any, req: Any, dy: Any, amap: AxisMap) -> None:
    """dx (+)= the adjoint of `amap` applied to dy: each dy element added where it was read."""
    mode = req_code(name, req)
    if mode == NULL or dx.size == 0:
        return
    if amap.base:
        raise ValueError(f"{name}: the adjoint of a map with a base offset is not a mixed radix")
    undo = inverse(amap)
    if undo is not None:
        gather(name, ctx, dx, req, dy, undo)
        return
    n = amap.n[-1]
    chunk, nchunk = (1, n) if is_gpu(ctx) else (n, 1)
    with half_as_float32(ctx, [dx], [mode], [dy]) as (outs, ins):
        dst, src = flat(outs[0]), flat(ins[0])
        if src.size == 0:
            src = dst  # no preimages anywhere: every count is 0
        adjoint_rows.launch(
            ctx, (dst.size // n) * nchunk, dst, src, _meta(name, ctx, amap),
            _accumulator(np.dtype(dst.dtype)), chunk, nchunk, mode, work=dst.size,
        )  # fmt: skip
