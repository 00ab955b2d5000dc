"""The numba side of ufunc_loop: a NumPy inner loop called block by block over parts of
an array, its output streamed to memory. Imported on first use (it imports numba).

Nothing in the streaming loop may count references: numba's reference counts are atomic
instructions, and on x86 an atomic waits until every streaming store in flight has
reached memory. The loop is therefore handed addresses, not arrays (call_loop), and its
per-call helper is inlined (a call with array arguments counts them): with counts in
the loop, 10M np.power float32 on one thread took 7.5 ms streamed, 5.2 plain, 4.3 here.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from llvmlite import ir
from numba import prange, types
from numba.core import cgutils
from numba.extending import intrinsic

from .cpu import cached_njit

LINE = 64  # bytes per cache line: the unit of a streaming store
BLOCK = 2048  # bytes of output per call of the loop when streaming: a block in L1


@intrinsic
def stream_line(typingctx: Any, dst: Any, i: Any, src: Any, j: Any) -> Any:
    """Copy the 64 bytes at src[j] to dst[i] with a streaming (non-temporal) store: the
    line goes to memory without first being read into the caches, as a plain store's
    line is (read for ownership). dst[i] must sit on a 64-byte boundary."""
    arrays = isinstance(dst, types.Array) and isinstance(src, types.Array)
    if not arrays or not isinstance(i, types.Integer) or not isinstance(j, types.Integer):
        return None

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        line = ir.VectorType(ir.IntType(32), 16)

        def at(array_type: Any, value: Any, index: Any, index_type: Any) -> Any:
            array = context.make_array(array_type)(context, builder, value)
            index = context.cast(builder, index, index_type, types.intp)
            item = cgutils.get_item_pointer(
                context, builder, array_type, array, [index], wraparound=False
            )
            return builder.bitcast(item, line.as_pointer())

        value = builder.load(at(src, args[2], args[3], j), align=1)
        store = builder.store(value, at(dst, args[0], args[1], i), align=LINE)
        store.set_metadata(
            "nontemporal", builder.module.add_metadata([ir.Constant(ir.IntType(32), 1)])
        )
        return context.get_dummy_value()

    return types.none(dst, i, src, j), codegen


@intrinsic
def store_fence(typingctx: Any) -> Any:
    """Order this thread's streaming stores before its later stores, which they are not
    otherwise (x86: mfence): the caller's thread reads the output after the parts end."""

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        builder.fence("seq_cst")
        return context.get_dummy_value()

    return types.none(), codegen


@intrinsic
def call_loop(typingctx: Any, fn: Any, args: Any, dims: Any, steps: Any, data: Any) -> Any:
    """fn(args, dims, steps, data): the NumPy inner loop at address fn, every argument an
    address (no arrays: no reference counts, see the module)."""
    if not all(isinstance(a, types.Integer) for a in (fn, args, dims, steps, data)):
        return None

    def codegen(context: Any, builder: Any, signature: Any, values: Any) -> Any:
        byte = ir.IntType(8).as_pointer()
        loop_type = ir.FunctionType(ir.VoidType(), [byte, byte, byte, byte])
        fn_at, *pointers = (builder.inttoptr(v, byte) for v in values)
        builder.call(builder.bitcast(fn_at, loop_type.as_pointer()), pointers)
        return context.get_dummy_value()

    return types.none(fn, args, dims, steps, data), codegen


@cached_njit(cache_tag="ufl1", inline="always")
def _call(fn, data, bases, advance, steps, start, count, out_at, args, dims):
    """The loop over items [start, start + count) of every argument (argument k at
    bases[k] + start * advance[k]: 0 for a scalar's block), the output written at
    address out_at (its own place, or a scratch block)."""
    if count <= 0:
        return
    last = bases.size - 1
    for k in range(last):
        args[k] = bases[k] + start * advance[k]
    args[last] = out_at
    dims[0] = count
    call_loop(fn, args.ctypes.data, dims.ctypes.data, steps.ctypes.data, data)


def _parts(fn, data, bases, advance, steps, out_bytes, n, parts, stream, chunk):
    """See ufunc_parts. Streaming, each part calls the loop on its items up to the first
    64-byte line of the output, then on blocks of BLOCK bytes written into an L1 scratch
    block and streamed out; then (or not streaming: from the start) on the rest, at most
    `chunk` items per call."""
    last = bases.size - 1
    size = steps[last]
    block = BLOCK // size
    for p in prange(parts):
        lo, hi = n * p // parts, n * (p + 1) // parts
        args = np.empty(bases.size, np.intp)
        dims = np.empty(1, np.intp)
        start = lo
        if stream:
            scratch = np.empty(BLOCK + LINE, np.uint8)
            skew = (LINE - scratch.ctypes.data % LINE) % LINE
            scratch_at = scratch.ctypes.data + skew
            head = min(hi - lo, (LINE - (bases[last] + lo * size) % LINE) % LINE // size)
            _call(fn, data, bases, advance, steps, lo, head, bases[last] + lo * size, args, dims)
            start = lo + head
            while start + block <= hi:
                _call(fn, data, bases, advance, steps, start, block, scratch_at, args, dims)
                for b in range(0, BLOCK, LINE):
                    stream_line(out_bytes, start * size + b, scratch, skew + b)
                start += block
            store_fence()
        while start < hi:
            count = min(chunk, hi - start)
            _call(
                fn,
                data,
                bases,
                advance,
                steps,
                start,
                count,
                bases[last] + start * size,
                args,
                dims,
            )
            start += count


_parts_parallel = cached_njit(cache_tag="ufl1p", parallel=True, nogil=True)(_parts)
_parts_serial = cached_njit(cache_tag="ufl1s", nogil=True)(_parts)


def ufunc_parts(
    fn: int,
    data: int,
    bases: np.ndarray,
    advance: np.ndarray,
    steps: np.ndarray,
    out_bytes: np.ndarray,
    n: int,
    parts: int,
    stream: bool,
    chunk: int,
) -> None:
    """The loop at address fn over n items in `parts` contiguous parts: argument k (the
    output last, its bytes also as out_bytes) at address bases[k], advance[k] bytes per
    item between calls and steps[k] within one; at most `chunk` items per call (BLOCK
    bytes of output when streaming). One part runs on this thread without a prange (no
    OpenMP team)."""
    kernel = _parts_parallel if parts > 1 else _parts_serial
    kernel(fn, data, bases, advance, steps, out_bytes, n, parts, stream, chunk)
