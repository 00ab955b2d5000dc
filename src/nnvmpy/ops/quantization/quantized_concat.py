"""quantized_concat: Concat of int8/uint8 inputs that may carry different ranges.

Inputs arg0..arg{n-1}, then (min, max) of each. The output range is (smallest min,
largest max); its codes are int8 if any input is int8, else uint8, and every input's
codes are rescaled into the output's step (MaxAbs(out) / 127 or / 255), rounded to the
nearest code. Inputs that already share the output's step are copied unchanged.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...attrs import FCompute_cpu, FCompute_gpu, FGradient, FInferShape, FInferType, FListInputNames
from ...graph.grad import make_zero_grad_nodes
from ...infer import type_assign
from ...registry import NodeAttrs, register_op
from .._host_staged import host_compute
from ..concat import ConcatParam, _concat_shape
from ._common import (
    F32,
    INT8,
    UINT8,
    all_known,
    assign_range_shapes,
    assign_range_types,
    check_quantized,
    max_abs,
    steps,
)

OP = "_contrib_quantized_concat"


def _data_names(attrs: NodeAttrs) -> list[str]:
    return [f"arg{i}" for i in range(int(attrs.parsed.num_args))]


def _names(attrs: NodeAttrs) -> list[str]:
    data = _data_names(attrs)
    return [*data, *(f"{name}_{end}" for name in data for end in ("min", "max"))]


def out_dtype(dtypes: list[Any]) -> np.dtype:
    return INT8 if any(np.dtype(d) == INT8 for d in dtypes) else UINT8


def concat_np(p: Any, *inputs: np.ndarray) -> list[np.ndarray]:
    n = int(p.num_args)
    data, ranges = inputs[:n], inputs[n:]
    lows, highs = [ranges[2 * i] for i in range(n)], [ranges[2 * i + 1] for i in range(n)]
    lo = min(float(x.reshape(-1)[0]) for x in lows)
    hi = max(float(x.reshape(-1)[0]) for x in highs)
    dtype = out_dtype([d.dtype for d in data])
    out_step = max(abs(lo), abs(hi)) / steps(dtype)
    info = np.iinfo(dtype)
    parts = []
    for x, a, b in zip(data, lows, highs):
        step = max_abs(a, b) / steps(x.dtype)
        if step == out_step or out_step == 0:
            parts.append(x.astype(dtype) if x.dtype == dtype else np.clip(x, info.min, info.max))
            continue
        scaled = np.rint(x.astype(np.float64) * (step / out_step))
        parts.append(np.clip(scaled, info.min, info.max))
    axis = p.dim % data[0].ndim
    out = np.concatenate([part.astype(dtype) for part in parts], axis=axis)
    return [out, np.array([lo], F32), np.array([hi], F32)]


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


_kernel = host_compute(OP, concat_np)
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
    .set_attr(FCompute_cpu, _kernel)
    .set_attr(FCompute_gpu, _kernel)
    .set_attr(FGradient, make_zero_grad_nodes)
    .add_argument("data", "NDArray-or-Symbol[]", "All data inputs, then the min and max of each")
    .add_arguments(ConcatParam.fields())
)
