"""_zeros_without_dtype: an array of zeros whose dtype the graph may decide (MXNet's init op).

`_zeros_without_dtype(shape, ctx='', dtype=-1)`: dtype is MXNet's type flag (0 float32,
1 float64, 2 float16, 3 uint8, 4 int32, 5 int8, 6 int64, 7 bool); -1 leaves it to type
inference from the node's consumers (`_zeros_without_dtype(shape=(2, 3)) + x` takes x's
dtype), which MXNet uses for zero gradients of unknown type. Imperatively a dtype of -1
needs out= (its dtype is used), as in MXNet; shape dimensions of 0 or -1 are inferred
from the graph, as for _zeros.
"""

from __future__ import annotations

from typing import Any

from ..attrs import FCompute_cpu, FCompute_gpu, FInferShape, FInferType
from ..infer import type_assign
from ..param import Parameter, Shape, field
from ..passes.infer_type import dtype_from_flag
from ..registry import NodeAttrs, register_op
from .init import _fill_compute, _init_shape

OP = "_zeros_without_dtype"


class InitWithoutDTypeParam(Parameter):
    shape = field(Shape, default=(), describe="The shape of the output")
    ctx = field(
        str,
        default="",
        describe="Context of output, in format [cpu|gpu|cpu_pinned](n).Only used for "
        "imperative calls.",
    )
    dtype = field(int, default=-1, lower_bound=-1, upper_bound=7, describe="Target data type.")


def _zeros_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    flag = attrs.parsed.dtype
    if flag < 0:  # left to the consumers
        return out_types[0] is not None
    return type_assign(out_types, 0, dtype_from_flag(flag), f"{OP}: output")


_compute = _fill_compute(0.0)
(
    register_op(OP)
    .describe(
        "Zeros of `shape` whose dtype, when dtype is -1, comes from type inference (the "
        "node that reads them) or from out=, not from a float32 default."
    )
    .set_attr_parser(InitWithoutDTypeParam)
    .set_num_inputs(0)
    .set_num_outputs(1)
    .set_attr(FInferShape, _init_shape)
    .set_attr(FInferType, _zeros_type)
    .set_attr(FCompute_cpu, _compute)
    .set_attr(FCompute_gpu, _compute)
    .add_arguments(InitWithoutDTypeParam.fields())
)
