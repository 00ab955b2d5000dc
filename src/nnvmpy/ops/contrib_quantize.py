"""quantize / dequantize: float32 <-> 8-bit integers over a given real range (contrib).

`_contrib_quantize(data, min_range, max_range, out_type='uint8')` -> (q, min_output,
max_output); min_range and max_range are (1,) float32 arrays:

- uint8: q = clamp((x - min_range) * 255 / (max_range - min_range) + 0.5, 0, 255),
  truncated; the range passes through (min_output, max_output = min_range, max_range);
- int8 (zero stays zero): r = max(|min_range|, |max_range|), s = 127 / r,
  q = sign(x) * min(|x| * s + 0.5, 127), truncated; the range becomes (-r, r).

`_contrib_dequantize(q, min_range, max_range, out_type='float32')` inverts it: uint8
gives min_range + q * (max_range - min_range) / 255 (MXNet's docstring leaves out the
min_range offset, which the inverse of quantize needs), int8 gives q * r / 127.

Forward only, as in MXNet: the gradients are zero. Element-wise kernels for both devices
(quantization/_kernels.py), in float64.
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
)
from ..base import InferError
from ..graph.grad import make_zero_grad_nodes
from ..infer import dtype_str, shape_assign, shape_is_known, type_assign
from ..kernel.launch import NULL, req_code, run_rows
from ..param import Parameter, field
from ..registry import NodeAttrs, register_op
from .quantization import _kernels as qk

QUANTIZE = "_contrib_quantize"
DEQUANTIZE = "_contrib_dequantize"
INPUTS = ["data", "min_range", "max_range"]
_QUANTIZED = {"uint8": np.dtype(np.uint8), "int8": np.dtype(np.int8)}
_F32 = np.dtype(np.float32)


class QuantizeParam(Parameter):
    out_type = field(str, default="uint8", enum=["int8", "uint8"], describe="Output data type.")


class DequantizeParam(Parameter):
    out_type = field(str, default="float32", enum=["float32"], describe="Output data type.")


def _range_shape(op: str, n_out: int) -> Any:
    """FInferShape: the data's shape passes to output 0; the ranges (and outputs 1, 2) are (1,)."""

    def infer(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
        shape_assign(in_shapes, 0, out_shapes[0], f"{op}: input 'data'")
        shape_assign(out_shapes, 0, in_shapes[0], f"{op}: output 0")
        for i, name in ((1, "min_range"), (2, "max_range")):
            shape_assign(in_shapes, i, (1,), f"{op}: input '{name}'")
        for j in range(1, n_out):
            shape_assign(out_shapes, j, (1,), f"{op}: output {j}")
        return all(shape_is_known(s) for s in [*in_shapes, *out_shapes])

    return infer


def _float32_ranges(op: str, in_types: list[Any]) -> None:
    for i, name in ((1, "min_range"), (2, "max_range")):
        type_assign(in_types, i, _F32, f"{op}: input '{name}'")


def _quantize_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    type_assign(in_types, 0, _F32, f"{QUANTIZE}: input 'data'")
    _float32_ranges(QUANTIZE, in_types)
    type_assign(out_types, 0, _QUANTIZED[attrs.parsed.out_type], f"{QUANTIZE}: output 0")
    type_assign(out_types, 1, _F32, f"{QUANTIZE}: output 1 (min_output)")
    return type_assign(out_types, 2, _F32, f"{QUANTIZE}: output 2 (max_output)")


def _dequantize_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    data = in_types[0]
    if data is not None and np.dtype(data) not in _QUANTIZED.values():
        raise InferError(
            f"{DEQUANTIZE}: input 'data' has dtype {dtype_str(data)}; expected uint8 or int8"
        )
    _float32_ranges(DEQUANTIZE, in_types)
    type_assign(out_types, 0, _F32, f"{DEQUANTIZE}: output")
    return data is not None


def _quantize(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    """codes over (min_range, max_range), and the codes' range."""
    modes = [req_code(QUANTIZE, r) for r in req]
    data, lo, hi = inputs
    signed = attrs.parsed.out_type == "int8"
    bounds = qk.range_of(ctx, lo, hi)
    qk.quantize(ctx, QUANTIZE, data, bounds, signed, outputs, modes)


def _dequantize(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    mode = req_code(DEQUANTIZE, req[0])
    q, lo, hi = inputs
    if mode != NULL:
        signed = q.dtype == np.int8
        bounds = qk.range_of(ctx, lo, hi)
        coef = qk.coefficients(ctx, DEQUANTIZE, qk.dequantize_coefficients, 2, bounds, signed)
        run_rows(ctx, DEQUANTIZE, qk.dequantize_codes, q.size, q, outputs[0], coef, signed, mode)


_ARGS = (
    ("data", "A ndarray/symbol of type `float32`"),
    ("min_range", "The minimum scalar value possibly produced for the input"),
    ("max_range", "The maximum scalar value possibly produced for the input"),
)

op = (
    register_op(QUANTIZE)
    .describe(
        "Quantize a input tensor from float to `out_type`, with user-specified `min_range` "
        "and `max_range`.\n\n"
        "When out_type is `uint8`: `out[i] = (in[i] - min_range) * 255 / (max_range - "
        "min_range) + 0.5`, clipped to [0, 255].\n\n"
        "When out_type is `int8` (zero stays zero): `out[i] = sign(in[i]) * min(abs(in[i]) "
        "* scale + 0.5, 127)`, where `scale = 127 / MaxAbs(min_range, max_range)`.\n\n"
        ".. Note::\n    This operator only supports forward propagation. DO NOT use it in "
        "training.\n"
    )
    .set_attr_parser(QuantizeParam)
    .set_num_inputs(3)
    .set_num_outputs(3)
    .set_attr(FListInputNames, lambda attrs: list(INPUTS))
    .set_attr(FInferShape, _range_shape(QUANTIZE, 3))
    .set_attr(FInferType, _quantize_type)
    .set_attr(FCompute_cpu, _quantize)
    .set_attr(FCompute_gpu, _quantize)
    .set_attr(FGradient, make_zero_grad_nodes)
)
for _name, _doc in _ARGS:
    op.add_argument(_name, "NDArray-or-Symbol", _doc)
op.add_arguments(QuantizeParam.fields())

op = (
    register_op(DEQUANTIZE)
    .describe(
        "Dequantize the input tensor into a float tensor. min_range and max_range are "
        "scalar floats that specify the range for the output data.\n\n"
        "When input data type is `uint8`: `out[i] = min_range + in[i] * (max_range - "
        "min_range) / 255.0`.\n\n"
        "When input data type is `int8` (zero stays zero): `out[i] = in[i] * "
        "MaxAbs(min_range, max_range) / 127.0`.\n\n"
        ".. Note::\n    This operator only supports forward propagation. DO NOT use it in "
        "training.\n"
    )
    .set_attr_parser(DequantizeParam)
    .set_num_inputs(3)
    .set_num_outputs(1)
    .set_attr(FListInputNames, lambda attrs: list(INPUTS))
    .set_attr(FInferShape, _range_shape(DEQUANTIZE, 1))
    .set_attr(FInferType, _dequantize_type)
    .set_attr(FCompute_cpu, _dequantize)
    .set_attr(FCompute_gpu, _dequantize)
    .set_attr(FGradient, make_zero_grad_nodes)
)
op.add_argument("data", "NDArray-or-Symbol", "A ndarray/symbol of type `uint8` or `int8`")
for _name, _doc in _ARGS[1:]:
    op.add_argument(_name, "NDArray-or-Symbol", _doc + " in float32")
op.add_arguments(DequantizeParam.fields())
