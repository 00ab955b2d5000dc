"""Array initialisers (zeros_like, ones_like, _zeros, _ones, _full) and Cast."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import kernel
from ..attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    TIsBackward,
)
from ..base import InferError
from ..graph.grad import ElemwiseGradUseNone, make_zero_grad_nodes
from ..infer import elemwise_shape, partial_shape, shape_assign, type_assign
from ..param import Parameter, Shape, field
from ..registry import NodeAttrs, register_op
from .elemwise_unary import _identity

DTYPES = ["float16", "float32", "float64", "uint8", "int8", "int32", "int64", "bool"]


@kernel.elementwise
def _fill(value):
    return value


def _fill_compute(value: Any) -> Any:
    def compute(
        attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
    ) -> None:
        v = attrs.parsed.value if value is None else value
        _fill.launch(ctx, outputs[0], req[0], v)

    return compute


def _register_like(name: str, value: float, describe: str) -> None:
    compute = _fill_compute(value)
    (
        register_op(name)
        .describe(describe)
        .set_num_inputs(1)
        .set_num_outputs(1)
        .set_attr(FInferShape, elemwise_shape(1, 1))
        .set_attr(FInferType, lambda attrs, i, o: _same_type(attrs, i, o))
        .set_attr(FCompute_cpu, compute)
        .set_attr(FCompute_gpu, compute)
        .set_attr(FGradient, make_zero_grad_nodes)
        .add_argument("data", "NDArray-or-Symbol", "The input (only its shape is used).")
    )


def _same_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    from ..infer import elemwise_type

    return bool(elemwise_type(1, 1)(attrs, in_types, out_types))


_register_like("zeros_like", 0.0, "An array of zeros with the shape and dtype of the input.")
_register_like("ones_like", 1.0, "An array of ones with the shape and dtype of the input.")


class InitParam(Parameter):
    shape = field(Shape, default=(), describe="The shape of the output.")
    dtype = field(str, default="float32", enum=DTYPES, describe="The output dtype.")


class FullParam(InitParam):
    value = field(float, describe="The value to fill with.")


def _init_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    return shape_assign(
        out_shapes,
        0,
        partial_shape(attrs.parsed.shape),
        f"{attrs.op.name if attrs.op else '?'}: output",
    )


def _init_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    return type_assign(out_types, 0, np.dtype(attrs.parsed.dtype))


for _name, _value, _param, _doc in (
    ("_zeros", 0.0, InitParam, "An array of zeros."),
    ("_ones", 1.0, InitParam, "An array of ones."),
    ("_full", None, FullParam, "An array filled with value."),
):
    (
        register_op(_name)
        .describe(_doc)
        .set_attr_parser(_param)
        .set_num_inputs(0)
        .set_num_outputs(1)
        .set_attr(FInferShape, _init_shape)
        .set_attr(FInferType, _init_type)
        .set_attr(FCompute_cpu, _fill_compute(_value))
        .set_attr(FCompute_gpu, _fill_compute(_value))
        .add_arguments(_param.fields())
    )


# -- Cast -----------------------------------------------------------------------------------


class CastParam(Parameter):
    dtype = field(str, enum=DTYPES, describe="Output data type.")


def _cast_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    type_assign(out_types, 0, np.dtype(attrs.parsed.dtype), "Cast: output")
    return in_types[0] is not None


def _cast_compute(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    _identity.launch(ctx, outputs[0], req[0], inputs[0])


def _backward_cast_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    if out_types[0] is None:
        raise InferError("_backward_Cast: the input dtype comes from the forward Cast node")
    return True


(
    register_op("Cast")
    .describe("Casts all elements of the input to a new type.")
    .set_attr_parser(CastParam)
    .set_num_inputs(1)
    .set_num_outputs(1)
    .set_attr(FInferShape, elemwise_shape(1, 1))
    .set_attr(FInferType, _cast_type)
    .set_attr(FCompute_cpu, _cast_compute)
    .set_attr(FCompute_gpu, _cast_compute)
    .set_attr(FGradient, ElemwiseGradUseNone("_backward_Cast"))
    .add_argument("data", "NDArray-or-Symbol", "The input.")
    .add_arguments(CastParam.fields())
)

(
    register_op("_backward_Cast")
    .describe("Backward of Cast: casts the gradient back.")
    .set_num_inputs(1)
    .set_num_outputs(1)
    .set_attr(TIsBackward, True)
    .set_attr(FInferShape, elemwise_shape(1, 1))
    .set_attr(FCompute_cpu, _cast_compute)
    .set_attr(FCompute_gpu, _cast_compute)
)
