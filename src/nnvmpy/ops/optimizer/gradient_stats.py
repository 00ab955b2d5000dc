"""What a training step computes about its weights and gradients besides the update.

    multi_sum_sq(a_0, ..., a_{n-1})   -> [sum(a_0^2), ..., sum(a_{n-1}^2)]   (float32, (n,))
    multi_lars(lrs, w_sq, g_sq, wds)  -> per-layer LARS learning rates
    all_finite(data)                  -> [1.] if every element is finite, else [0.]
    multi_all_finite(a_0, ...)        -> the same over several arrays
    reset_arrays(a_0, ...)            -> sets every input to 0 in place (no outputs)

The reductions run in two passes with one body for both devices: pass one reduces chunks
into a float64 scratch buffer (contiguous chunks on the CPU, interleaved ones on the GPU so
neighbouring threads read neighbouring elements), pass two reduces the chunks of an array
into its output element.
"""

from __future__ import annotations

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
from ...kernel import device_function, parallel_for
from ...kernel.launch import is_gpu, uindex
from ...param import Parameter, field
from ...registry import NodeAttrs, Op, register_op
from ...resource import ResourceRequest
from ._common import ADD, assign, launch, op_name, req_code, size_of

_F32 = np.dtype(np.float32)
SUM_SQ, ALL_FINITE = 0, 1  # what pass one computes per chunk
CPU_CHUNK = 1 << 14  # elements per CPU work item (contiguous)
GPU_ITEMS = 1 << 15  # work items per array on the GPU (interleaved)


@device_function
def term_sum(x, start, stop, step, scale):
    """sum(x[j] * x[j] * scale) for j in range(start, stop, step), in float64.

    scale 1: the sum of squares. scale 0: 0 when every x[j] is finite, else nan (inf * 0 and
    nan * 0 are nan), which checks finiteness without a branch per element. Four running
    sums: one is a chain of dependent adds (floats are added in order), four overlap.
    """
    s0 = s1 = s2 = s3 = 0.0
    j = start
    while j + 3 * step < stop:
        a, b = np.float64(x[j]), np.float64(x[j + step])  # float() keeps float32 in numba
        c, d = np.float64(x[j + 2 * step]), np.float64(x[j + 3 * step])
        s0 += a * a * scale
        s1 += b * b * scale
        s2 += c * c * scale
        s3 += d * d * scale
        j += 4 * step
    while j < stop:
        a = np.float64(x[j])
        s0 += a * a * scale
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


@parallel_for
def combine_loop(k, out, slot, partial, begin, end, kind, mode, init):
    """out[slot] gets the reduction of partial[begin:end] (one work item)."""
    acc = 0.0 if kind == SUM_SQ else 1.0
    for j in range(begin, end):
        if kind == SUM_SQ:
            acc += partial[j]
        else:
            acc = min(acc, partial[j])
    # all_finite(init_output=False) writes only to clear the flag it is given
    if kind == SUM_SQ or init or acc == 0.0 or mode == ADD:
        assign(out, slot, mode, acc)


def _chunking(ctx: Any, n: int) -> tuple[int, int, bool]:
    """(work items, elements per item, interleaved) for an array of n elements."""
    if is_gpu(ctx):
        items = min(n, GPU_ITEMS)
        return items, 0, True
    return max(1, math.ceil(n / CPU_CHUNK)), CPU_CHUNK, False


def reduce_arrays(
    ctx: Any, arrays: list[Any], kind: int, out: Any, mode: int, per_array: bool, init: bool
) -> None:
    """Pass one over every array into scratch space, then pass two into out (one element
    per array when per_array, else out[0] for all of them)."""
    plans = [_chunking(ctx, size_of(a)) for a in arrays]
    offsets, offset = [], 0
    for a, (items, _, _) in zip(arrays, plans, strict=True):
        offsets.append(offset)
        offset += items if size_of(a) else 0
    total = max(offset, 1)
    partial = ctx.requested[0].get_space((total,), np.float64)
    for a, (items, per, interleaved), off in zip(arrays, plans, offsets, strict=True):
        if size_of(a):
            args = (partial, off, a, size_of(a), items, per, interleaved, kind)
            launch(ctx, chunk_loop, items, args, work=size_of(a))
    if per_array:
        for k, (a, off) in enumerate(zip(arrays, offsets, strict=True)):
            end = off + (plans[k][0] if size_of(a) else 0)
            launch(ctx, combine_loop, 1, (out, k, partial, off, end, kind, mode, init), (0,))
    else:
        launch(ctx, combine_loop, 1, (out, 0, partial, 0, offset, kind, mode, init), (0,))


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
    reduce_arrays(ctx, inputs, SUM_SQ, outputs[0], mode, per_array=True, init=True)


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
    reduce_arrays(ctx, inputs, ALL_FINITE, outputs[0], mode, per_array=False, init=init)


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
    for x in inputs:
        launch(ctx, zero_loop, size_of(x), (x,), (0,))


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
