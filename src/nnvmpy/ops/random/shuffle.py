"""_shuffle (alias shuffle): a random permutation of the rows (the first axis).

The permutation is a Fisher-Yates shuffle (MXNet's algorithm) driven by a 64-bit Philox
key per row (stream counters first + row): step i = rows - 1 .. 1 swaps position i with
j = floor(u_i (i + 1)), u_i the key's top 53 bits as a uniform in [0, 1), so every
order is equally likely (up to rows / 2^53). The keys (in parallel) and the swaps (one
serial pass) are computed on the host for both devices, so cpu(0) and gpu(0) shuffle
alike; the rows are then gathered on the array's own device (the CPU copies whole rows
with NumPy; a GPU runs a kernel). An argsort of the keys gave the same distribution at
4x the cost (NumPy's stable sort of 64-bit keys: 3.9 ms for 65536 rows).
Shuffling has no gradient (MXNet registers none: a gradient through it is an error).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import kernel
from ...attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FInferShape,
    FInferType,
    FInplaceOption,
    FResourceRequest,
)
from ...base import Context
from ...infer import elemwise_shape, elemwise_type
from ...kernel import parallel_for, scratch
from ...kernel.launch import ADD, NULL, is_gpu, req_code, store
from ...registry import NodeAttrs, register_op
from ._common import launch, random_resource
from .samplers import keys_loop


@parallel_for
def _gather_rows_loop(i, out, mode, x, order, inner):
    """out row r = x row order[r]; element i is in row i // inner."""
    row = i // inner
    store(out, i, x[order[row] * inner + (i - row * inner)], mode)


@kernel.cpu_kernel(parallel=False)
def _fisher_yates(keys, order):
    # order = range(n), then for i = n - 1 .. 1 swap order[i] with order[j], j uniform in
    # [0, i] from keys[i] (its top 53 bits as a float64 in [0, 1); the min guards the
    # product rounding up to i + 1)
    n = order.size
    for i in range(n):
        order[i] = i
    for i in range(n - 1, 0, -1):
        u = np.float64(keys[i] >> np.uint64(11)) * 1.1102230246251565e-16  # 2^-53
        j = min(np.int64(u * np.float64(i + 1)), i)
        order[i], order[j] = order[j], order[i]


def row_order(resource: Any, rows: int) -> np.ndarray:
    """A random permutation of range(rows) from `rows` stream counters of `resource`."""
    k0, k1, first = resource.take_counters(rows)
    keys = np.empty(rows, dtype=np.uint64)
    keys_loop.launch(Context("cpu", 0), rows, keys, k0, k1, first)
    order = np.empty(rows, dtype=np.int64)
    _fisher_yates(keys, order)
    return order


def _private_copy(ctx: Any, x: Any, out: Any) -> Any:
    """x, or a copy of it when out may be the same memory (in place, or out=x)."""
    if not is_gpu(ctx):
        return x.copy() if np.may_share_memory(x, out) else x
    a, b = _device_pointer(x), _device_pointer(out)
    if a is not None and b is not None and (a + x.nbytes <= b or b + out.nbytes <= a):
        return x
    copy = scratch.empty(ctx, tuple(x.shape), x.dtype)
    copy.copy_to_device(x, stream=scratch.stream_of(ctx))
    return copy


def _device_pointer(a: Any) -> int | None:
    """The start of a device array's memory (None where unknown: the simulator's arrays)."""
    interface = getattr(a, "__cuda_array_interface__", None)
    return None if interface is None else int(interface["data"][0])


def _shuffle_forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    x, out = inputs[0], outputs[0]
    mode = req_code("_shuffle", req[0])
    if mode == NULL or out.size == 0:
        return
    rows = int(x.shape[0]) if len(x.shape) else 1
    order = row_order(ctx.requested[0], rows)
    if is_gpu(ctx):
        order = scratch.upload(ctx, order)
    source = _private_copy(ctx, x, out)
    inner = out.size // rows
    if not is_gpu(ctx):  # whole rows: NumPy copies each as one block
        rows_of = source.reshape(rows, inner)
        if mode == ADD:
            out.reshape(rows, inner)[...] += rows_of[order]
        else:
            np.take(rows_of, order, axis=0, out=out.reshape(rows, inner))
        return
    launch(ctx, _gather_rows_loop, out, mode, source, order, inner)


(
    register_op("_shuffle")
    .describe(
        "Randomly shuffle the elements.\n\nThis shuffles the array along the first axis. "
        "The order of the elements in each subarray does not change: for a 2-D array "
        "the order of the rows changes randomly, not the order within each row."
    )
    .set_num_inputs(1)
    .set_num_outputs(1)
    .set_attr(FInferShape, elemwise_shape(1, 1))
    .set_attr(FInferType, elemwise_type(1, 1))
    .set_attr(FInplaceOption, lambda attrs: [(0, 0)])
    .set_attr(FResourceRequest, random_resource)
    .set_attr(FCompute_cpu, _shuffle_forward)
    .set_attr(FCompute_gpu, _shuffle_forward)
    .add_argument("data", "NDArray-or-Symbol", "Data to be shuffled.")
)
register_op("_shuffle").add_alias("shuffle")
