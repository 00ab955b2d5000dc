"""quantized_concat: Concat of int8/uint8 inputs that may carry different ranges.

Inputs arg0..arg{n-1}, then (min, max) of each. The output range is (smallest min,
largest max); its codes are int8 if any input is int8, else uint8, and every input's
codes are rescaled into the output's step (MaxAbs(out) / 127 or / 255), rounded to the
nearest code (ties to even) and saturated. Inputs that already share the output's step
(or all of them, when the output's step is 0) are copied, saturated into its dtype.

One body for both devices: the (1,) range inputs are gathered into one array on the
op's device (a GPU's ranges never visit the host), a one-item kernel finds the output
range and each input's rescaling, then each input is written into its columns of the
output rows (a chunk of a row per item on the CPU, an element per item on the GPU).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ... import kernel
from ...attrs import FCompute_cpu, FCompute_gpu, FGradient, FInferShape, FInferType, FListInputNames
from ...graph.grad import make_zero_grad_nodes
from ...infer import type_assign
from ...kernel import uindex
from ...kernel.launch import NULL, req_code, run_rows, store
from ...registry import NodeAttrs, register_op
from .._index_kernels import to_ctx
from ..concat import ConcatParam, _concat_shape
from ._common import (
    INT8,
    UINT8,
    all_known,
    assign_range_shapes,
    assign_range_types,
    check_quantized,
    steps,
)
from ._kernels import (
    clamp_code,
    code_limits,
    coefficients,
    max_abs,
    range_out,
    ranges_of,
    row_chunks,
)

OP = "_contrib_quantized_concat"


def _data_names(attrs: NodeAttrs) -> list[str]:
    return [f"arg{i}" for i in range(int(attrs.parsed.num_args))]


def _names(attrs: NodeAttrs) -> list[str]:
    data = _data_names(attrs)
    return [*data, *(f"{name}_{end}" for name in data for end in ("min", "max"))]


def out_dtype(dtypes: list[Any]) -> np.dtype:
    return INT8 if any(np.dtype(d) == INT8 for d in dtypes) else UINT8


@kernel.parallel_for
def concat_coefficients(i, bounds, in_steps, n, out_steps, coef):
    """coef[0:2] = the output range (smallest min, largest max, compared in order as
    Python's min and max do, so a NaN first wins); coef[2 + 2k] = input k's output codes
    per code (step_k / out_step), coef[3 + 2k] = 1 where its codes are copied instead
    (the steps are equal, or the output's is 0)."""
    lo = bounds[0]
    hi = bounds[1]
    for k in range(1, n):
        v = bounds[2 * k]
        lo = v if v < lo else lo
        v = bounds[2 * k + 1]
        hi = v if v > hi else hi
    coef[0] = lo
    coef[1] = hi
    out_step = max_abs(lo, hi) / out_steps
    for k in range(n):
        step = max_abs(bounds[2 * k], bounds[2 * k + 1]) / in_steps[k]
        copy = step == out_step or out_step == 0
        coef[2 + 2 * k] = 1.0 if copy else step / out_step
        coef[3 + 2 * k] = 1.0 if copy else 0.0


@kernel.parallel_for
def concat_codes(t, x, out, coef, k, width, chunk, nchunk, out_width, offset, lo, hi, mode):
    """Item t: `chunk` codes of one row of input k (x viewed as (outer, width)) into out's
    row (outer, out_width) from column offset: copied (saturated into out's dtype) or
    rescaled by coef[2 + 2k] and rounded to the nearest (ties to even)."""
    row = t // nchunk
    c0 = (t - row * nchunk) * chunk
    src = row * width
    dst = row * out_width + offset
    ratio = coef[2 + 2 * k]
    if coef[3 + 2 * k] != 0.0:
        for c in range(c0, min(c0 + chunk, width)):
            store(out, dst + c, clamp_code(np.float64(x[uindex(src + c)]), lo, hi, 0), mode)
    else:
        for c in range(c0, min(c0 + chunk, width)):
            v = np.rint(np.float64(x[uindex(src + c)]) * ratio)
            store(out, dst + c, clamp_code(v, lo, hi, 0), mode)


def _compute(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    p = attrs.parsed
    n = int(p.num_args)
    modes = [req_code(OP, r) for r in req]
    data, out = inputs[:n], outputs[0]
    dtype = out_dtype([x.dtype for x in data])
    in_steps = to_ctx(ctx, np.array([steps(x.dtype) for x in data]))
    coef = coefficients(ctx, OP, concat_coefficients, 2 + 2 * n, ranges_of(ctx, inputs[n:]),
                        in_steps, n, steps(dtype))  # fmt: skip
    if modes[0] != NULL:
        shape = tuple(out.shape)
        axis = p.dim % len(shape)
        outer, inner = math.prod(shape[:axis]), math.prod(shape[axis + 1 :])
        lo, hi, _ = code_limits(dtype)
        offset = 0
        for k, x in enumerate(data):
            width = tuple(x.shape)[axis] * inner
            chunk, nchunk = row_chunks(ctx, width)
            run_rows(ctx, OP, concat_codes, outer * nchunk, x, out, coef, k, width, chunk, nchunk,
                     shape[axis] * inner, offset, lo, hi, modes[0])  # fmt: skip
            offset += width
    run_rows(ctx, OP, range_out, 1, coef, 0, *outputs[1:], *modes[1:])


def _shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    n = int(attrs.parsed.num_args)
    head, out = in_shapes[:n], out_shapes[:1]
    _concat_shape(attrs, head, out)
    in_shapes[:n], out_shapes[:1] = head, out
    assign_range_shapes(OP, _names(attrs), in_shapes, out_shapes, n, 1)
    return all_known(in_shapes, out_shapes)


def _type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    n = int(attrs.parsed.num_args)
    for i, name in enumerate(_data_names(attrs)):
        check_quantized(OP, name, in_types[i])
    assign_range_types(OP, _names(attrs), in_types, out_types, n, 1)
    if any(t is None for t in in_types[:n]):
        return False
    return type_assign(out_types, 0, out_dtype(in_types[:n]), f"{OP}: output 0")


op = (
    register_op(OP)
    .describe(
        "Joins input arrays of type int8 or uint8 along a given axis. The inputs may have "
        "different min/max ranges: the output range is (smallest min, largest max) and "
        "every input is rescaled into it. The output is int8 if any input is int8, else "
        "uint8.\n\n"
        ".. Note::\n    This operator only supports forward propagation. DO NOT use it in "
        "training.\n"
    )
    .set_attr_parser(ConcatParam)
    .set_num_inputs(lambda attrs: 3 * int(attrs.parsed.num_args))
    .set_num_outputs(3)
    .set_attr(FListInputNames, _names)
    .set_attr(FInferShape, _shape)
    .set_attr(FInferType, _type)
    .set_attr(FCompute_cpu, _compute)
    .set_attr(FCompute_gpu, _compute)
    .set_attr(FGradient, make_zero_grad_nodes)
    .add_argument("data", "NDArray-or-Symbol[]", "All data inputs, then the min and max of each")
    .add_arguments(ConcatParam.fields())
)
