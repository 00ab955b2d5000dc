"""Register a quantized op that accumulates int8 x int8 (or uint8 x int8) into int32.

quantized_fully_connected and quantized_conv share everything but the product: inputs
data, weight[, bias], then min/max of each; outputs the int32 result and its range.
One int32 step is worth step(data) * step(weight) (see _common), so the output range is
+-(2^31 - 1) * step(data) * step(weight). An int8 bias is rescaled into that step,
rounded to nearest, and added. The products are summed in float64 through BLAS, which
is exact for 8-bit operands at any realistic reduction length (< 2^53 / 2^15 terms).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...attrs import FCompute_cpu, FCompute_gpu, FGradient, FInferShape, FInferType, FListInputNames
from ...base import InferError
from ...graph.grad import make_zero_grad_nodes
from ...infer import type_assign
from ...registry import NodeAttrs, register_op
from .._host_staged import host_compute
from ._common import (
    INT8,
    INT32,
    UINT8,
    all_known,
    assign_range_shapes,
    assign_range_types,
    check_quantized,
    input_names,
    int32_range,
    step_size,
)

Product = Callable[[Any, np.ndarray, np.ndarray], np.ndarray]


def data_names(attrs: NodeAttrs) -> list[str]:
    return ["data", "weight"] if attrs.parsed.no_bias else ["data", "weight", "bias"]


def names(attrs: NodeAttrs) -> list[str]:
    return input_names(attrs, data_names(attrs))


def accumulate(product: Product, bias_axis: int) -> Callable[..., list[np.ndarray]]:
    """fn(params, *inputs) -> [int32 out, min_out, max_out] around a float64 product."""

    def compute(p: Any, *inputs: np.ndarray) -> list[np.ndarray]:
        n = 2 if p.no_bias else 3
        data, weight = inputs[0], inputs[1]
        ranges = inputs[n:]
        step = step_size(data.dtype, ranges[0], ranges[1]) * step_size(INT8, ranges[2], ranges[3])
        acc = product(p, data.astype(np.float64), weight.astype(np.float64))
        if not p.no_bias:
            bias_step = step_size(INT8, ranges[4], ranges[5])
            rescaled = np.rint(inputs[2].astype(np.float64) * (bias_step / step if step else 0.0))
            shape = [1] * acc.ndim
            shape[bias_axis] = -1
            acc = acc + rescaled.reshape(shape)
        out = np.clip(acc, np.iinfo(INT32).min, np.iinfo(INT32).max).astype(INT32)
        return [out, *int32_range(step)]

    return compute


def register_int32_op(
    name: str, doc: str, param: Any, fp32_shape: Any, product: Product, bias_axis: int
) -> Any:
    """Register `name`; fp32_shape is the float op's FInferShape for data/weight/bias."""

    def shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
        n = len(data_names(attrs))
        if len(in_shapes) != 3 * n:
            raise_arity(name, attrs, len(in_shapes))
        head, out = in_shapes[:n], out_shapes[:1]
        fp32_shape(attrs, head, out)
        in_shapes[:n], out_shapes[:1] = head, out
        assign_range_shapes(name, names(attrs), in_shapes, out_shapes, n, 1)
        return all_known(in_shapes, out_shapes)

    def dtype(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
        n = len(data_names(attrs))
        check_quantized(name, "data", in_types[0], (INT8, UINT8))
        for i in range(1, n):
            check_quantized(name, data_names(attrs)[i], in_types[i], (INT8,))
            type_assign(in_types, i, INT8, f"{name}: input {data_names(attrs)[i]!r}")
        assign_range_types(name, names(attrs), in_types, out_types, n, 1)
        type_assign(out_types, 0, INT32, f"{name}: output 0")
        return in_types[0] is not None

    kernel = host_compute(name, accumulate(product, bias_axis))
    op = (
        register_op(name)
        .describe(doc)
        .set_attr_parser(param)
        .set_num_inputs(lambda attrs: 3 * len(data_names(attrs)))
        .set_num_outputs(3)
        .set_attr(FListInputNames, names)
        .set_attr(FInferShape, shape)
        .set_attr(FInferType, dtype)
        .set_attr(FCompute_cpu, kernel)
        .set_attr(FCompute_gpu, kernel)
        .set_attr(FGradient, make_zero_grad_nodes)
    )
    for arg, what in (("data", "int8 or uint8 input data"), ("weight", "int8 weight"),
                      ("bias", "int8 bias")):  # fmt: skip
        op.add_argument(arg, "NDArray-or-Symbol", what.capitalize() + ".")
    for arg in ("data", "weight", "bias"):
        for end in ("min", "max"):
            op.add_argument(
                f"{end}_{arg}", "NDArray-or-Symbol", f"{end.capitalize()}imum value of {arg}."
            )
    op.add_arguments(param.fields())
    return op


def raise_arity(name: str, attrs: NodeAttrs, got: int) -> None:
    raise InferError(f"{name}: expects {len(names(attrs))} inputs {names(attrs)}, got {got}")
