"""Automatic mixed precision casts: amp_cast and amp_multicast (MXNet's amp_cast.cc).

AMP inserts these around ops that must run in float32 (or may run in float16). Unlike
Cast they leave non-float data alone: an int32 index array passes through unchanged.

    amp_cast(x, dtype):          floating x -> dtype; other x unchanged
    amp_multicast(x_0, ..., n):  every floating x_i -> the widest float type among them
                                 (the narrowest with cast_narrow=True)

Both are differentiable: the gradient is cast back to the dtype of the forward input.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FListInputNames,
    TIsBackward,
)
from ..graph.grad import ElemwiseGradUseNone
from ..infer import elemwise_shape, shape_assign, shape_is_known, type_assign
from ..param import Parameter, field
from ..registry import NodeAttrs, register_op
from .elemwise_unary import _identity
from .init import DTYPES

_FLOAT_ORDER = [np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)]


def _is_float(dtype: Any) -> bool:
    return dtype is not None and np.dtype(dtype) in _FLOAT_ORDER


def _cast_each(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    for x, r, y in zip(inputs, req, outputs, strict=True):
        _identity.launch(ctx, y, r, x)  # converts to y's dtype as it writes


def _name(attrs: NodeAttrs) -> str:
    return attrs.op.name if attrs.op is not None else "amp_multicast"


def _count(attrs: NodeAttrs) -> int:
    return int(getattr(attrs.parsed, "num_outputs", 1)) if attrs.parsed is not None else 1


def _backward_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    # the gradients' dtypes are the forward inputs' (the Gradient pass fills them)
    return all(t is not None for t in out_types)


# -- amp_cast -------------------------------------------------------------------------------------


class AMPCastParam(Parameter):
    dtype = field(str, enum=DTYPES, describe="Output data type.")


def _amp_cast_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    x = in_types[0]
    if x is None:
        return False
    target = np.dtype(attrs.parsed.dtype) if _is_float(x) else np.dtype(x)
    type_assign(out_types, 0, target, "amp_cast: output")
    return True


(
    register_op("amp_cast")
    .describe(
        "Cast function between low precision float/FP32 used by AMP. It casts only between "
        "low precision float/FP32 and does not do anything for other types."
    )
    .set_attr_parser(AMPCastParam)
    .set_num_inputs(1)
    .set_num_outputs(1)
    .set_attr(FListInputNames, lambda attrs: ["data"])
    .set_attr(FInferShape, elemwise_shape(1, 1))
    .set_attr(FInferType, _amp_cast_type)
    .set_attr(FCompute_cpu, _cast_each)
    .set_attr(FCompute_gpu, _cast_each)
    .set_attr(FGradient, ElemwiseGradUseNone("_backward_amp_cast"))
    .add_argument("data", "NDArray-or-Symbol", "The input.")
    .add_arguments(AMPCastParam.fields())
)
(
    register_op("_backward_amp_cast")
    .describe("Backward of amp_cast: the gradient cast back to the input's dtype.")
    .set_num_inputs(1)
    .set_num_outputs(1)
    .set_attr(TIsBackward, True)
    .set_attr(FInferShape, elemwise_shape(1, 1))
    .set_attr(FInferType, _backward_type)
    .set_attr(FCompute_cpu, _cast_each)
    .set_attr(FCompute_gpu, _cast_each)
)


# -- amp_multicast --------------------------------------------------------------------------------


class AMPMultiCastParam(Parameter):
    num_outputs = field(
        int, lower_bound=1, describe="Number of input/output pairs to be casted to the widest type."
    )
    cast_narrow = field(bool, default=False, describe="Whether to cast to the narrowest type")


def _multicast_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    for i in range(len(in_shapes)):
        shape_assign(out_shapes, i, in_shapes[i], f"{_name(attrs)}: output {i}")
        shape_assign(in_shapes, i, out_shapes[i], f"{_name(attrs)}: input {i}")
    return all(shape_is_known(s) for s in (*in_shapes, *out_shapes))


def _multicast_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    if any(t is None for t in in_types):
        return False
    floats = [np.dtype(t) for t in in_types if _is_float(t)]
    pick = min if attrs.parsed.cast_narrow else max
    target = pick(floats, key=_FLOAT_ORDER.index) if floats else None
    for i, t in enumerate(in_types):
        want = target if _is_float(t) else np.dtype(t)
        type_assign(out_types, i, want, f"amp_multicast: output {i}")
    return True


(
    register_op("amp_multicast")
    .describe(
        "Cast function used by AMP, that casts its inputs to the common widest type "
        "(the narrowest with cast_narrow=True). It casts only between low precision "
        "float/FP32 and does not do anything for other types."
    )
    .set_attr_parser(AMPMultiCastParam)
    .set_num_inputs(_count)
    .set_num_outputs(_count)
    .set_key_var_num_args("num_outputs")
    .set_attr(FListInputNames, lambda attrs: [f"data_{i}" for i in range(_count(attrs))])
    .set_attr(FInferShape, _multicast_shape)
    .set_attr(FInferType, _multicast_type)
    .set_attr(FCompute_cpu, _cast_each)
    .set_attr(FCompute_gpu, _cast_each)
    .set_attr(FGradient, ElemwiseGradUseNone("_backward_amp_multicast"))
    .add_argument("data", "NDArray-or-Symbol[]", "Weights")
    .add_arguments(AMPMultiCastParam.fields())
)
(
    register_op("_backward_amp_multicast")
    .describe("Backward of amp_multicast: each gradient cast back to its input's dtype.")
    .set_attr_parser(AMPMultiCastParam)
    .set_num_inputs(_count)
    .set_num_outputs(_count)
    .set_attr(TIsBackward, True)
    .set_attr(FInferShape, _multicast_shape)
    .set_attr(FInferType, _backward_type)
    .set_attr(FCompute_cpu, _cast_each)
    .set_attr(FCompute_gpu, _cast_each)
)
