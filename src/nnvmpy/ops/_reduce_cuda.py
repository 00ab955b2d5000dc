"""reduce_to on a GPU: numba.cuda kernels, accumulating in float64, on the mapping that
reads x coalesced (reduce.py has the ops and the CPU path).

When the reduced elements of an output are adjacent (x's innermost dim is reduced): a warp
per output for short reductions, a block per output for long ones, each with a
shared-memory tree. When the outputs are adjacent: a thread per output. Few outputs over a
long reduction are cut into slices whose partial results a second launch combines. Each
kernel steps through the reduced dims by digits carried on the host's table, with no
division per element.

reduce_dot_gpu sums x * y of two arrays of one shape on the same kernels (the product of
the two loaded as float64), so a caller need not write the products to scratch first;
reduce_clip_sq_gpu likewise sums clip(rescale * x, bound)^2 (an optimizer's preprocessed
gradient, squared) without writing the clipped gradient anywhere.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import kernel
from ..kernel import scratch
from ..kernel.launch import uindex
from . import _broadcast_map as bmap

# Reducer codes; every value is loaded as float64, so one kernel serves every dtype (and
# float16 accumulates in float64: MXNet accumulates it in float32, the CPU path here too).
# Code 8 combines partial results of 'nrm2' (a sum, then the square root); 'sumsq' is
# 'nrm2' without the root (no sqrt-then-square round trip for a caller that wants the
# sum); code 10 (_DOT, reduce_dot_gpu's) loads x * y; code 11 (_CLIP_SQ,
# reduce_clip_sq_gpu's) loads clip(y[0] * x, y[1])^2, y holding (rescale, bound).
_CODES = {"sum": 0, "max": 1, "min": 2, "prod": 3, "nrm2": 4, "nrm1": 5, "nansum": 6, "nanprod": 7}
_CODES["sumsq"] = 9
_DOT = 10
_CLIP_SQ = 11
_PARTIAL = {0: 0, 1: 1, 2: 2, 3: 3, 4: 8, 5: 0, 6: 0, 7: 3, 9: 0, 10: 0, 11: 0}  # partials' rule

# The mapping (see _launch); module constants, so tests can send tiny shapes down each path.
BLOCK = 256  # threads of a warp-per-output or block-per-output block (a power of two, <= 256)
SIM_BLOCK = 64  # the same under the simulator, where every thread is a Python thread
WARP = 32
GRID = 4096  # most blocks of those two kernels (they grid-stride beyond)
SIM_GRID = 4
SPLIT_MIN = 1024  # shorter reductions are never split into slices
SPLIT_THREADS = 1 << 17  # split a reduction until about this many threads share it
BLOCK_SLICE_MIN = 32  # elements per thread, at least, in a block's slice
MAX_SLICES = 1024
_SHARED = 256  # float64 words of shared memory per block
_MAX_GROUPS = 16  # reduced dim groups: at most 16 of 32 dims (merged groups alternate)
cuda: Any = None  # numba.cuda in the kernels' device copies (kernel.device.for_device)


@kernel.device_function
def _start(op):  # the identity of the reducer
    if op == 1:
        return -math.inf
    if op == 2:
        return math.inf
    return 1.0 if op == 3 or op == 7 else 0.0


@kernel.device_function
def _load(op, v):
    # float64, explicitly: numba types `v * 1.0` as float64, but the simulator runs NumPy,
    # where a Python float is weak and a float16 (float32) v stays float16 (float32), so
    # a float16 sum there accumulated in float16 (2048 + 1 == 2048)
    v = np.float64(v)
    if op == 6 or op == 7:  # NaN is the identity of nansum / nanprod
        return v if v == v else (0.0 if op == 6 else 1.0)
    return v * v if op == 4 or op == 9 else (abs(v) if op == 5 else v)


@kernel.device_function
def _element(op, x, y, off):
    """The value element `off` adds (_value's)."""
    v = x[off]
    return _value(op, v, y[off] if op == 10 else v, y)


@kernel.device_function
def _value(op, v, w, y):
    """The value an element adds, given x's element v (and y's, w, for _DOT): v * w for
    _DOT (each as float64, so the product is exact for float16/float32 and rounded once
    for float64); for _CLIP_SQ clip(rescale * v, bound)^2 in float64, y the float64
    (rescale, bound) (a negative bound: no clipping, the optimizers' rule); else v as
    _load takes it. Apart from _element, so a caller may load several elements before
    it computes with any."""
    if op == 10:
        return np.float64(v) * np.float64(w)
    if op == 11:
        v, bound = np.float64(v) * np.float64(y[0]), np.float64(y[1])
        if bound >= 0:
            v = min(max(v, -bound), bound)
        return v * v
    return _load(op, v)


@kernel.device_function
def _combine(op, a, b):
    if op == 1:  # NaN wins, from either side (np.maximum, the CPU path)
        return a if a >= b or a != a else b
    if op == 2:
        return a if a <= b or a != a else b
    return a * b if op == 3 or op == 7 else a + b


@kernel.device_function
def _finish(op, a, scale):
    return (math.sqrt(a) if op == 4 or op == 8 else a) * scale


@kernel.device_function
def _offset(i, meta, start, nd):
    """Element offset of row-major index i over dims meta[start:start+nd] (strides after)."""
    off = 0
    for d in range(nd - 1, -1, -1):
        q = i // meta[start + d]
        off += (i - q * meta[start + d]) * meta[start + nd + d]
        i = q
    return off


@kernel.device_function
def _carry(idx, meta, at, nr, off, carry):
    """Adds the step's digits of the outer reduced dims (and the innermost's carry) to idx;
    returns the element offset moved along."""
    for d in range(nr - 2, -1, -1):
        n, s = meta[at + d], meta[at + nr + d]
        k = meta[at + 2 * nr + d] + carry
        idx[d] += k
        off += k * s
        carry = 0
        if idx[d] >= n:  # digits are < n: one wrap at most
            idx[d] -= n
            off -= n * s
            carry = 1
    return off


@kernel.device_function
def _fold(op, acc, x, y, meta, at, nr, off, r, end):
    """acc combined with x's (_DOT: x * y's) elements at reduced positions r, r + step, ...
    below `end` (`off`: the output's first element). The reduced index is carried digit by
    digit as r advances (the step's digits are in meta): one division chain per call, none
    per element. One reduced dim (nr == 1: r is its index) is a plain strided walk that
    loads four elements before it combines any, in the same order: a thread's loads are
    otherwise one at a time, and so few in flight that memory latency bounds the sum."""
    if r >= end:
        return acc
    if nr == 1:
        stride, step = meta[at + 1], meta[at + 4]
        off += r * stride
        jump = step * stride
        while r + 3 * step < end:
            v0 = x[uindex(off)]
            v1 = x[uindex(off + jump)]
            v2 = x[uindex(off + 2 * jump)]
            v3 = x[uindex(off + 3 * jump)]
            w0, w1, w2, w3 = v0, v1, v2, v3
            if op == 10:
                w0 = y[uindex(off)]
                w1 = y[uindex(off + jump)]
                w2 = y[uindex(off + 2 * jump)]
                w3 = y[uindex(off + 3 * jump)]
            acc = _combine(op, acc, _value(op, v0, w0, y))
            acc = _combine(op, acc, _value(op, v1, w1, y))
            acc = _combine(op, acc, _value(op, v2, w2, y))
            acc = _combine(op, acc, _value(op, v3, w3, y))
            r += 4 * step
            off += 4 * jump
        while r < end:
            acc = _combine(op, acc, _element(op, x, y, uindex(off)))
            r += step
            off += jump
        return acc
    idx = cuda.local.array(_MAX_GROUPS, np.int64)
    q = r
    for d in range(nr - 1, -1, -1):
        k = q // meta[at + d]
        idx[d] = q - k * meta[at + d]
        off += idx[d] * meta[at + nr + d]
        q = k
    last = at + nr - 1
    n_in, s_in, d_in = meta[last], meta[last + nr], meta[last + 2 * nr]
    outer, step = meta[at + 3 * nr], meta[at + 3 * nr + 1]
    j = idx[nr - 1]
    while True:
        acc = _combine(op, acc, _element(op, x, y, off))
        r += step
        if r >= end:
            return acc
        j += d_in
        off += d_in * s_in
        carry = 0
        if j >= n_in:
            j -= n_in
            off -= n_in * s_in
            carry = 1
        if carry or outer:
            off = _carry(idx, meta, at, nr, off, carry)


@kernel.device_function
def _tree(op, buf, tid, lane, width, acc):
    """acc combined over `width` threads (a power of two) sharing the segment of buf that
    starts at tid - lane; every thread of the block must call it."""
    buf[tid] = acc
    cuda.syncthreads()
    step = width // 2
    while step > 0:
        if lane < step:
            buf[tid] = _combine(op, buf[tid], buf[tid + step])
        cuda.syncthreads()
        step //= 2
    acc = buf[tid - lane]
    cuda.syncthreads()  # read before the segment is written again
    return acc


@kernel.device_function
def _store(out, part, o, s, slices, op, acc, scale, add):
    if slices > 1:  # one slice's partial result
        part[s * out.size + o] = acc
    elif add:
        out[o] += _finish(op, acc, scale)
    else:
        out[o] = _finish(op, acc, scale)


@kernel.cuda_kernel
def _reduce_thread_cuda(out, part, x, y, meta, nk, nr, total, chunk, slices, op, scale, add):
    # a thread per (output, slice); neighbouring threads take neighbouring outputs
    n = out.size
    for item in range(cuda.grid(1), n * slices, cuda.gridsize(1)):
        s = item // n
        o = item - s * n
        base, start = _offset(o, meta, 0, nk), s * chunk
        end = min(total, start + chunk)
        acc = _fold(op, _start(op), x, y, meta, 2 * nk, nr, base, start, end)
        _store(out, part, o, s, slices, op, acc, scale, add)


@kernel.cuda_kernel
def _reduce_warp_cuda(out, x, y, meta, nk, nr, total, op, scale, add):
    # 32 threads per output, lanes on neighbouring elements; a block holds several
    buf = cuda.shared.array(_SHARED, np.float64)
    tid = cuda.threadIdx.x
    lane, per_block, n = tid % 32, cuda.blockDim.x // 32, out.size
    for first in range(cuda.blockIdx.x * per_block, n, cuda.gridDim.x * per_block):
        o = first + tid // 32
        acc = _start(op)
        if o < n:
            acc = _fold(op, acc, x, y, meta, 2 * nk, nr, _offset(o, meta, 0, nk), lane, total)
        acc = _tree(op, buf, tid, lane, 32, acc)
        if lane == 0 and o < n:
            _store(out, out, o, 0, 1, op, acc, scale, add)


@kernel.cuda_kernel
def _reduce_block_cuda(out, part, x, y, meta, nk, nr, total, chunk, slices, op, scale, add):
    # a block per (output, slice), threads on neighbouring elements
    buf = cuda.shared.array(_SHARED, np.float64)
    tid, nt, n = cuda.threadIdx.x, cuda.blockDim.x, out.size
    for item in range(cuda.blockIdx.x, n * slices, cuda.gridDim.x):
        s = item // n
        o = item - s * n
        base, start = _offset(o, meta, 0, nk), s * chunk
        acc = _fold(
            op, _start(op), x, y, meta, 2 * nk, nr, base, start + tid, min(total, start + chunk)
        )
        acc = _tree(op, buf, tid, tid, nt, acc)
        if tid == 0:
            _store(out, part, o, s, slices, op, acc, scale, add)


def reduce_plan(big: tuple[int, ...], small: tuple[int, ...]) -> tuple[list[int], list[int]]:
    """(kept dims, their strides in x), (reduced dims, their strides): merged where adjacent."""
    groups: dict[bool, tuple[list[int], list[int]]] = {True: ([], []), False: ([], [])}
    stride, last = 1, None
    for d in range(len(big) - 1, -1, -1):
        if big[d] != 1:
            kind = small[d] == 1  # True: reduced
            dims, strides = groups[kind]
            if last is kind:  # adjacent in x and of one kind: one dim
                dims[0] *= big[d]
            else:
                dims.insert(0, big[d])
                strides.insert(0, stride)
            last = kind
        stride *= big[d]
    kept, red = groups[False], groups[True]
    return (kept[0] or [1]) + (kept[1] or [0]), (red[0] or [1]) + (red[1] or [0])


def _step_meta(reduced: list[int], step: int) -> list[int]:
    """The reduced dims and strides, then `step` in their mixed radix (innermost last),
    whether a digit other than the innermost is set, and step: what _fold reads."""
    nr = len(reduced) // 2
    digits, rest = [0] * nr, step
    if math.prod(reduced[:nr]) > 0:
        for d in range(nr - 1, -1, -1):
            rest, digits[d] = divmod(rest, reduced[d])
    return [*reduced, *digits, int(any(digits[:-1])), step]


def _slices(total: int, n: int, threads: int, per_thread: int) -> int:
    """How many slices to cut each output's reduction into: enough for about
    SPLIT_THREADS threads, at most about sqrt(total) (which balances the serial work of
    the two passes), MAX_SLICES, and slices of per_thread elements per thread."""
    if total < SPLIT_MIN:
        return 1
    want = min(SPLIT_THREADS // (n * threads), MAX_SLICES, math.isqrt(total))
    want = min(want, -(-total // (threads * per_thread)))
    if want < 2:
        return 1
    return -(-total // -(-total // want))  # every slice non-empty


def _launch(
    ctx: Any,
    name: str,
    out: Any,
    x: Any,
    plan: Any,
    op: int,
    scale: float,
    add: bool,
    split: bool = True,
    y: Any = None,
) -> None:
    """out (+)= reduce(x) by `plan` (reduce_plan's), on the kernel that reads x coalesced
    (_DOT: of x * y, y laid out as x).

    Reduced side contiguous (x's innermost dim is reduced): a warp per output below
    2 * block elements, else a block per output. Kept side contiguous: a thread per
    output. With few outputs and a long reduction (_slices), the block and thread
    kernels cut the reduced range into slices whose partial results go to scratch, and
    a second launch of this function combines them (a (slices, n) array reduced over
    its first axis).
    """
    from nnvmpy.kernel.cuda import launch_config, launch_kernel, simulated

    kept, reduced = plan
    y = x if y is None else y
    nk, nr = len(kept) // 2, len(reduced) // 2
    assert nr <= _MAX_GROUPS
    total, n = math.prod(reduced[:nr]), out.size
    # the simulator's threads are Python threads
    block, grid = (SIM_BLOCK, SIM_GRID) if simulated() else (BLOCK, GRID)
    assert block <= _SHARED  # and a power of two, >= WARP
    if reduced[-1] == 1 and total < 2 * block:
        meta = bmap.device_meta(ctx, name, tuple(kept + _step_meta(reduced, WARP)))
        _, _, stream, device = launch_config(name, ctx, 1)
        blocks = min(-(-n // (block // WARP)), grid)
        with device:
            warp_args = (out, x, y, meta, nk, nr, total, op, scale, add)
            launch_kernel(_reduce_warp_cuda.dispatcher, blocks, block, stream, warp_args)
        return
    if reduced[-1] == 1:
        k, step = _reduce_block_cuda, block
        slices = _slices(total, n, block, BLOCK_SLICE_MIN) if split else 1
        _, _, stream, device = launch_config(name, ctx, 1)
        blocks, threads = min(n * slices, grid), block
    else:
        k, step = _reduce_thread_cuda, 1
        slices = _slices(total, n, 1, 1) if split else 1
        blocks, threads, stream, device = launch_config(name, ctx, n * slices)
    chunk = -(-total // slices)
    meta = bmap.device_meta(ctx, name, tuple(kept + _step_meta(reduced, step)))
    with device:
        if slices == 1:  # `out` stands in for the unused scratch
            args = (out, out, x, y, meta, nk, nr, total, chunk, 1, op, scale, add)
            launch_kernel(k.dispatcher, blocks, threads, stream, args)
            return
        part = scratch.empty(ctx, slices * n, np.float64)  # this call's, on its stream
        args = (out, part, x, y, meta, nk, nr, total, chunk, slices, op, 1.0, False)
        launch_kernel(k.dispatcher, blocks, threads, stream, args)
        plan2 = ([n, 1], [slices, n])
        _launch(ctx, name, out, part, plan2, _PARTIAL[op], scale, add, split=False)


def reduce_gpu(
    ctx: Any, out: Any, add: bool, x: Any, small: Any, red: str, scale: float,
    name: str | None = None,
) -> None:  # fmt: skip
    """out (+)= x reduced by `red` down to shape `small` (x's shape with 1 on each reduced
    axis), times scale. Other ops' sums (bias gradients) pass their own `name` for errors."""
    from nnvmpy.kernel.cuda import as_device_array

    name = name or f"reduce_{red}"
    bmap.bind_cuda(name)
    x = as_device_array(name, "data", x)
    out = as_device_array(name, "out", out)
    plan = reduce_plan(tuple(x.shape), tuple(small))
    flat_out, flat_x = out.reshape(out.size), x.reshape(x.size)
    _launch(ctx, name, flat_out, flat_x, plan, _CODES[red], float(scale), add)


def reduce_dot_gpu(
    ctx: Any, out: Any, add: bool, x: Any, y: Any, small: Any, scale: float,
    name: str | None = None,
) -> None:  # fmt: skip
    """out (+)= sum of x * y (x, y of one shape) down to shape `small`, times scale: the
    products are taken in the reduction's loads (float64, see _element), none is stored,
    and the layouts and slices are reduce_gpu's for x."""
    from nnvmpy.kernel.cuda import as_device_array

    name = name or "reduce_dot"
    bmap.bind_cuda(name)
    x = as_device_array(name, "data", x)
    y = as_device_array(name, "data2", y)
    out = as_device_array(name, "out", out)
    if tuple(x.shape) != tuple(y.shape):
        raise ValueError(
            f"{name}: x * y needs one shape, got {tuple(x.shape)} and {tuple(y.shape)}"
        )
    plan = reduce_plan(tuple(x.shape), tuple(small))
    flat_x, flat_y = x.reshape(x.size), y.reshape(y.size)
    _launch(ctx, name, out.reshape(out.size), flat_x, plan, _DOT, float(scale), add, y=flat_y)


_clip_params: dict[tuple[Any, ...], Any] = {}  # (device, rescale, bound) -> device array


def reduce_clip_sq_gpu(
    ctx: Any, out: Any, add: bool, x: Any, small: Any, rescale: float, bound: float,
    scale: float, name: str | None = None,
) -> None:  # fmt: skip
    """out (+)= sum of clip(rescale * x, bound)^2 (a negative bound: none) down to shape
    `small`, times scale, each term float64 from x's load, no clipped x stored. (rescale,
    bound) reach the loads as a float64 device array cached by value, as device_meta's
    tables are (an optimizer's are the same every step: no upload per call)."""
    from nnvmpy.kernel.cuda import as_device_array, launch_config

    name = name or "reduce_clip_sq"
    cuda_ = bmap.bind_cuda(name)
    x, out = as_device_array(name, "data", x), as_device_array(name, "out", out)
    key = (getattr(getattr(ctx, "ctx", ctx), "device_id", 0), float(rescale), float(bound))
    params = _clip_params.get(key)
    if params is None:
        if len(_clip_params) > 4096:
            _clip_params.clear()
        with launch_config(name, ctx, 1)[3]:
            params = _clip_params[key] = cuda_.to_device(np.array(key[1:], np.float64))
    plan = reduce_plan(tuple(x.shape), tuple(small))
    flat_out, flat_x = out.reshape(out.size), x.reshape(x.size)
    _launch(ctx, name, flat_out, flat_x, plan, _CLIP_SQ, float(scale), add, y=params)
