"""SoftmaxActivation: MXNet's older softmax layer, over each instance or across channels.

    instance: softmax over the last axis (for (N, K) data: each sample; like MXNet,
              which flattens the data to 2-D keeping the last axis)
    channel:  softmax over axis 1 at every position (data with at least 3 dimensions)
    dx = y * (dy - sum(dy * y))     over the same elements

It runs softmax.py's row loops. As in MXNet the op names no inputs, so the monitor sees
its input as `<name>_input0`.
"""

from __future__ import annotations

import math
from typing import Any

from ...attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FInplaceOption,
    TIsBackward,
)
from ...graph.grad import ElemwiseGradUseOut
from ...infer import elemwise_shape, elemwise_type
from ...kernel.launch import req_code
from ...param import Parameter, field
from ...registry import NodeAttrs, register_op
from ._layer_util import check_ndim, via_float32
from .softmax import softmax_grad_rows, softmax_rows


class SoftmaxActivationParam(Parameter):
    mode = field(
        str,
        default="instance",
        enum={"channel": 1, "instance": 0},
        describe="Specifies how to compute the softmax. If set to ``instance``, it computes "
        "softmax for each instance. If set to ``channel``, It computes cross channel softmax "
        "for each position of each instance.",
    )


_same_shape = elemwise_shape(1, 1)


def _infer_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    known = _same_shape(attrs, in_shapes, out_shapes)
    if in_shapes[0] is not None and attrs.parsed.mode == "channel":
        check_ndim("SoftmaxActivation (mode='channel')", "data", in_shapes[0], 3)
    return bool(known)


def _sizes(mode: str, shape: tuple[int, ...]) -> tuple[int, int, int]:
    """(outer, n, inner) of the softmax rows."""
    shape = tuple(shape)  # the CUDA simulator's shapes do not slice
    if mode == "channel":
        return shape[0], shape[1], math.prod(shape[2:])
    return (math.prod(shape[:-1]), shape[-1], 1) if shape else (1, 1, 1)


@via_float32
def _forward(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    x, mode = inputs[0], req_code("SoftmaxActivation", req[0])
    sizes = _sizes(attrs.parsed.mode, x.shape)
    softmax_rows(ctx, "SoftmaxActivation", outputs[0], x, sizes, 1.0, False, mode)


@via_float32
def _backward(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    dy, y = inputs
    name = "_backward_SoftmaxActivation"
    sizes = _sizes(attrs.parsed.mode, y.shape)
    softmax_grad_rows(ctx, name, outputs[0], dy, y, sizes, 1.0, False, req_code(name, req[0]))


(
    register_op("SoftmaxActivation")
    .describe(
        "Applies softmax activation to the input: over the last axis (each instance of "
        "(N, K) data) with mode='instance', or across channels (axis 1) at each position "
        "with mode='channel'.\n\nThe softmax op with an `axis` is the newer, more general form."
    )
    .set_attr_parser(SoftmaxActivationParam)
    .set_num_inputs(1)
    .set_num_outputs(1)
    .set_attr(FInferShape, _infer_shape)
    .set_attr(FInferType, elemwise_type(1, 1))
    .set_attr(FInplaceOption, lambda attrs: [(0, 0)])
    .set_attr(FCompute_cpu, _forward)
    .set_attr(FCompute_gpu, _forward)
    .set_attr(FGradient, ElemwiseGradUseOut("_backward_SoftmaxActivation"))
    .add_argument("data", "NDArray-or-Symbol", "The input array.")
    .add_arguments(SoftmaxActivationParam.fields())
)
(
    register_op("_backward_SoftmaxActivation")
    .describe("Backward of SoftmaxActivation: inputs (dy, y).")
    .set_attr_parser(SoftmaxActivationParam)
    .set_num_inputs(2)
    .set_num_outputs(1)
    .set_attr(TIsBackward, True)
    .set_attr(FInplaceOption, lambda attrs: [(0, 0)])
    .set_attr(FCompute_cpu, _backward)
    .set_attr(FCompute_gpu, _backward)
)
