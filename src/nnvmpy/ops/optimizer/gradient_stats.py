"""What a training step computes about its weights and gradients besides the update.

    multi_sum_sq(a_0, ..., a_{n-1})   -> [sum(a_0^2), ..., sum(a_{n-1}^2)]   (float32, (n,))
    multi_lars(lrs, w_sq, g_sq, wds)  -> per-layer LARS learning rates
    all_finite(data)                  -> [1.] if every element is finite, else [0.]
    multi_all_finite(a_0, ...)        -> the same over several arrays
    reset_arrays(a_0, ...)            -> sets every input to 0 in place (no outputs)

The reductions run in two passes. Pass one, one body for both devices, reduces chunks into
a float64 scratch buffer (contiguous chunks on the CPU, interleaved ones on the GPU so
neighbouring threads read neighbouring elements). Pass two reduces the chunks of an array
into its output element: a loop per output on the CPU; on the GPU the reduction kernels
(_reduce_cuda) over the chunk sums laid out in rows, then a thread per output adding its
array's few row sums (see _combine_gpu).
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from ... import kernel
from ...attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FInferShape,
    FInferType,
    FListInputNames,
    FMutateInputs,
    FResourceRequest,
)
from ...infer import elemwise_shape, elemwise_type, shape_assign, shape_is_known, type_assign
from ...kernel import device_function, parallel_for, scratch
from ...kernel.launch import is_gpu, uindex
from ...param import Parameter, field
from ...registry import NodeAttrs, Op, register_op
from ...resource import ResourceRequest
from .. import _broadcast_map as bmap
from .. import _reduce_cuda
from ._common import ADD, assign, launch, launch_groups, op_name, req_code, size_of

_F32 = np.dtype(np.float32)
SUM_SQ, ALL_FINITE = 0, 1  # what pass one computes per chunk
CPU_CHUNK = 1 << 14  # elements per CPU work item (contiguous)
GPU_ITEMS = 1 << 15  # work items per array on the GPU (interleaved), at most
GPU_ROW = 1 << 10  # chunk sums per row of the GPU's pass two, at most (see _combine_gpu)


@device_function
def term_sum(x, start, stop, step, scale):
    """sum(x[j] * scale * x[j]) for j in range(start, stop, step), in float64.

    scale 1: the sum of squares. scale 0: 0 when every x[j] is finite, else nan (inf * 0 and
    nan * 0 are nan), which checks finiteness without a branch per element; x * 0 first,
    since the square of a finite float64 above 1.3e154 is inf. Four running
    sums: one is a chain of dependent adds (floats are added in order), four overlap.
    """
    s0 = s1 = s2 = s3 = 0.0
    j = start
    while j + 3 * step < stop:
        a, b = np.float64(x[j]), np.float64(x[j + step])  # float() keeps float32 in numba
        c, d = np.float64(x[j + 2 * step]), np.float64(x[j + 3 * step])
        s0 += a * scale * a
        s1 += b * scale * b
        s2 += c * scale * c
        s3 += d * scale * d
        j += 4 * step
    while j < stop:
        a = np.float64(x[j])
        s0 += a * scale * a
        j += step
    return (s0 + s1) + (s2 + s3)


@parallel_for
def chunk_loop(c, partial, offset, x, n, items, per, interleaved, kind):
    """partial[offset + c] = the reduction of chunk c of x (kind: SUM_SQ or ALL_FINITE)."""
    if interleaved:
        start, stop, step = c, n, items
    else:
        start, stop, step = c * per, min(c * per + per, n), 1
    if kind == SUM_SQ:
        partial[offset + c] = term_sum(x, start, stop, step, 1.0)
    else:  # 1 when the chunk is finite, else 0
        partial[offset + c] = 1.0 if term_sum(x, start, stop, step, 0.0) == 0.0 else 0.0


@device_function
def combine(out, slot, partial, begin, end, kind, mode, init):
    """out[slot] gets the reduction of partial[begin:end]."""
    acc = 0.0 if kind == SUM_SQ else 1.0
    for j in range(begin, end):
        if kind == SUM_SQ:
            acc += partial[j]
        else:
            acc = min(acc, partial[j])
    # all_finite(init_output=False) writes only to clear the flag it is given
    if kind == SUM_SQ or init or acc == 0.0 or mode == ADD:
        assign(out, slot, mode, acc)


@parallel_for
def combine_loop(k, out, slot, partial, begin, end, kind, mode, init):
    """out[slot] gets the reduction of partial[begin:end] (one work item)."""
    combine(out, slot, partial, begin, end, kind, mode, init)


@parallel_for
def segment_loop(k, out, partial, starts, kind, mode, init):
    """out[k] gets the reduction of partial[starts[k]:starts[k + 1]] (a work item per output)."""
    combine(out, k, partial, starts[k], starts[k + 1], kind, mode, init)


def work_items(ctx: Any, sizes: list[int]) -> tuple[list[int], int]:
    """Pass one's work items per array (0 for an empty one, each writes one chunk sum) and
    the GPU's row width (0 on the CPU).

    On the GPU an array's items are rounded up to whole rows of the width: the items past
    its end sum nothing and write the identity, so the chunk sums of all arrays form one
    (rows, width) matrix that one reduction call sums. The width is the longest array's
    item count when that is below GPU_ROW, so small arrays are padded to no more than it.
    Rows, not one row per array padded to GPU_ITEMS: BERT-large LAMB norms ~500 arrays
    of 1024 elements, which that would pad with over 100 MB of identities.
    """
    if not is_gpu(ctx):
        return [math.ceil(n / CPU_CHUNK) for n in sizes], 0
    longest = max((min(n, GPU_ITEMS) for n in sizes), default=0)
    width = max(1, min(GPU_ROW, longest))
    return [-(-min(n, GPU_ITEMS) // width) * width for n in sizes], width


def partial_count(ctx: Any, sizes: list[int]) -> int:
    """float64 chunk sums reduce_arrays asks the temp space for (at least 1)."""
    return max(sum(work_items(ctx, sizes)[0]), 1)


def _combine_gpu(
    ctx: Any, name: str, out: Any, partial: Any, items: list[int], width: int,
    kind: int, mode: int, per_array: bool, init: bool,
) -> None:  # fmt: skip
    """Pass two on a GPU, without a long serial loop: the reduction kernels sum each row of
    chunk sums (split across blocks when long), then a thread per output combines its
    array's rows, at most GPU_ITEMS / GPU_ROW of them. For all arrays at once (per_array
    False) the chunk sums are one row."""
    total = sum(items)
    if per_array:
        rows_of = [k // width for k in items]
    else:
        width, rows_of = total, [1 if total else 0]
    rows = sum(rows_of)
    sums = scratch.empty(ctx, max(rows, 1), np.float64)  # per row, for this call only
    if rows:
        matrix = partial[:total].reshape(rows, width)
        red = "sum" if kind == SUM_SQ else "min"  # ALL_FINITE chunk flags are 1. or 0.
        _reduce_cuda.reduce_gpu(ctx, sums, False, matrix, (rows, 1), red, 1.0, name)
    bmap.bind_cuda(name)
    # cached on the device by value: a training step's arrays give the same table each step
    starts = bmap.device_meta(ctx, name, (0, *itertools.accumulate(rows_of)))
    launch(ctx, segment_loop, len(rows_of), (out, sums, starts, kind, mode, init), (0,))


def reduce_arrays(
    ctx: Any, arrays: list[Any], kind: int, out: Any, mode: int, per_array: bool, init: bool,
    name: str = "reduce_arrays",
) -> None:  # fmt: skip
    """Pass one over every array into scratch space, then pass two into out (one element
    per array when per_array, else out[0] for all of them). `name`: the op, for errors."""
    sizes = [size_of(a) for a in arrays]
    items, width = work_items(ctx, sizes)
    offsets = [0, *itertools.accumulate(items)]
    partial = ctx.requested[0].get_space((partial_count(ctx, sizes),), np.float64)
    per, interleaved = (0, True) if width else (CPU_CHUNK, False)
    for a, n, k, off in zip(arrays, sizes, items, offsets[:-1], strict=True):
        if n:
            args = (partial, off, a, n, k, per, interleaved, kind)
            launch(ctx, chunk_loop, k, args, work=n)
    if width:
        _combine_gpu(ctx, name, out, partial, items, width, kind, mode, per_array, init)
    elif per_array:
        for k in range(len(arrays)):
            args = (out, k, partial, offsets[k], offsets[k + 1], kind, mode, init)
            launch(ctx, combine_loop, 1, args, (0,))
    else:
        launch(ctx, combine_loop, 1, (out, 0, partial, 0, offsets[-1], kind, mode, init), (0,))


def _temp_space(attrs: NodeAttrs) -> list[ResourceRequest]:
    return [ResourceRequest.kTempSpace]


def _array_names(attrs: NodeAttrs) -> list[str]:
    return [f"array_{i}" for i in range(attrs.parsed.num_arrays if attrs.parsed else 1)]


def _num_arrays(attrs: NodeAttrs) -> int:
    return int(attrs.parsed.num_arrays)


def _float32_out(length: Any) -> tuple[Any, Any]:
    """FInferShape and FInferType of an op with a float32 output of shape (length(attrs),)."""

    def shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
        shape_assign(out_shapes, 0, (length(attrs),), f"{op_name(attrs)}: output")
        return all(shape_is_known(s) for s in in_shapes)

    def dtype(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
        type_assign(out_types, 0, _F32, f"{op_name(attrs)}: output")
        return all(t is not None for t in in_types)

    return shape, dtype


def _register_reduction(name: str, param: type[Parameter], n_in: Any, length: Any) -> Op:
    shape, dtype = _float32_out(length)
    return (
        register_op(name)
        .set_attr_parser(param)
        .set_num_inputs(n_in)
        .set_num_outputs(1)
        .set_attr(FInferShape, shape)
        .set_attr(FInferType, dtype)
        .set_attr(FResourceRequest, _temp_space)
        .add_arguments(param.fields())
    )


# -- multi_sum_sq ------------------------------------------------------------------------------


class MultiSumSqParam(Parameter):
    num_arrays = field(int, lower_bound=1, describe="number of input arrays.")


def _multi_sum_sq(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    mode = req_code("multi_sum_sq", req[0])
    reduce_arrays(ctx, inputs, SUM_SQ, outputs[0], mode, per_array=True, init=True,
                  name="multi_sum_sq")  # fmt: skip


(
    _register_reduction("multi_sum_sq", MultiSumSqParam, _num_arrays, _num_arrays)
    .describe(
        "Compute the sums of squares of multiple arrays: output i is sum(array_i ** 2), "
        "a float32 array of shape (num_arrays,) (for LARS/LAMB norms)."
    )
    .set_key_var_num_args("num_arrays")
    .set_attr(FListInputNames, _array_names)
    .set_attr(FCompute_cpu, _multi_sum_sq)
    .set_attr(FCompute_gpu, _multi_sum_sq)
    .add_argument("data", "NDArray-or-Symbol[]", "Arrays")
)


# -- all_finite, multi_all_finite ----------------------------------------------------------------


class AllFiniteParam(Parameter):
    init_output = field(bool, default=True, describe="Initialize output to 1.")


class MultiAllFiniteParam(Parameter):
    num_arrays = field(int, default=1, lower_bound=1, describe="Number of arrays.")
    init_output = field(bool, default=True, describe="Initialize output to 1.")


def _all_finite(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    mode = req_code(op_name(attrs), req[0])
    init = attrs.parsed.init_output
    reduce_arrays(ctx, inputs, ALL_FINITE, outputs[0], mode, per_array=False, init=init,
                  name=op_name(attrs))  # fmt: skip


_FINITE_DOC = (
    "Check if all the float numbers in {what} are finite (used for AMP): the output, a "
    "float32 array of shape (1,), is 1 if they all are and 0 otherwise. With "
    "init_output=False the output is only ever cleared to 0, so a flag can be carried "
    "across several calls with out=."
)
(
    _register_reduction("all_finite", AllFiniteParam, 1, lambda attrs: 1)
    .describe(_FINITE_DOC.format(what="the array"))
    .set_attr(FListInputNames, lambda attrs: ["data"])
    .set_attr(FCompute_cpu, _all_finite)
    .set_attr(FCompute_gpu, _all_finite)
    .add_argument("data", "NDArray", "Array")
)
(
    _register_reduction("multi_all_finite", MultiAllFiniteParam, _num_arrays, lambda attrs: 1)
    .describe(_FINITE_DOC.format(what="the arrays"))
    .set_key_var_num_args("num_arrays")
    .set_attr(FListInputNames, _array_names)
    .set_attr(FCompute_cpu, _all_finite)
    .set_attr(FCompute_gpu, _all_finite)
    .add_argument("data", "NDArray-or-Symbol[]", "Arrays")
)


# -- multi_lars --------------------------------------------------------------------------------


@kernel.elementwise
def _lars(lr, w_sq, g_sq, wd, eta, eps, rescale):
    # lr * eta * |w| / (|g| * rescale_grad + wd * |w| + eps) where both norms are > 0
    w_norm = math.sqrt(w_sq)
    if w_norm > 0 and g_sq > 0:
        return lr * eta * w_norm / (math.sqrt(g_sq) * rescale + wd * w_norm + eps)
    return lr


class LARSParam(Parameter):
    eta = field(float, describe="LARS eta")
    eps = field(float, describe="LARS eps")
    rescale_grad = field(float, default=1.0, describe="Gradient rescaling factor")


def _multi_lars(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    p = attrs.parsed
    _lars.launch(ctx, outputs[0], req[0], *inputs, p.eta, p.eps, p.rescale_grad)


_LARS_INPUTS = ["lrs", "weights_sum_sq", "grads_sum_sq", "wds"]
_op = (
    register_op("multi_lars")
    .describe(
        "Compute the LARS coefficients of multiple weights and grads from their sums of "
        "squares (multi_sum_sq):\n\n"
        "    lr_i = lrs_i * eta * ||w_i|| / (||g_i|| * rescale_grad + wds_i * ||w_i|| + eps)\n\n"
        "where both norms are positive, else lrs_i."
    )
    .set_attr_parser(LARSParam)
    .set_num_inputs(4)
    .set_num_outputs(1)
    .set_attr(FListInputNames, lambda attrs: list(_LARS_INPUTS))
    .set_attr(FInferShape, elemwise_shape(4, 1))
    .set_attr(FInferType, elemwise_type(4, 1))
    .set_attr(FCompute_cpu, _multi_lars)
    .set_attr(FCompute_gpu, _multi_lars)
)
for _name in _LARS_INPUTS:
    _op.add_argument(_name, "NDArray-or-Symbol", _name)
_op.add_arguments(LARSParam.fields())


# -- reset_arrays ------------------------------------------------------------------------------


@parallel_for
def zero_loop(t, x):
    i = uindex(t)  # unsigned: no wraparound checks, so the loop vectorises
    x[i] = 0


class ResetArraysParam(Parameter):
    num_arrays = field(int, lower_bound=1, describe="number of input arrays.")


def _reset_arrays(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    launch_groups(ctx, zero_loop, [(size_of(x), (x,), (0,)) for x in inputs])


def _no_outputs(attrs: NodeAttrs, in_attrs: list[Any], out_attrs: list[Any]) -> bool:
    return all(a is not None for a in in_attrs)


(
    register_op("reset_arrays")
    .describe("Set to zero multiple arrays, in place (e.g. gradient buffers between steps).")
    .set_attr_parser(ResetArraysParam)
    .set_num_inputs(_num_arrays)
    .set_num_outputs(0)
    .set_key_var_num_args("num_arrays")
    .set_attr(FListInputNames, _array_names)
    .set_attr(FMutateInputs, lambda attrs: list(range(attrs.parsed.num_arrays)))
    .set_attr(FInferShape, _no_outputs)
    .set_attr(FInferType, _no_outputs)
    .set_attr(FCompute_cpu, _reset_arrays)
    .set_attr(FCompute_gpu, _reset_arrays)
    .add_argument("data", "NDArray-or-Symbol[]", "Arrays")
    .add_arguments(ResetArraysParam.fields())
)
