"""Regression heads: LinearRegressionOutput, LogisticRegressionOutput, MAERegressionOutput.

The forward output is the prediction (data, sigmoid(data), data); the gradient is that
of the loss against `label`, not of the output, so the head gradient is ignored:

    linear    d data = (out - label)        * grad_scale / m     (squared loss / 2)
    logistic  d data = (out - label)        * grad_scale / m     (cross-entropy)
    mae       d data = (+1 if out > label else -1) * grad_scale / m   (absolute loss)

m = label.size / label.shape[0], the number of outputs per example (MXNet's num_output).
label has data's shape, or (N,) when data is (N, 1); it gets a zero gradient.
"""

from __future__ import annotations

import math
from typing import Any

from ... import kernel
from ...attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FInplaceOption,
    FListInputNames,
    TIsBackward,
)
from ...base import InferError
from ...graph.grad import make_grad_node
from ...graph.node import NodeEntry
from ...infer import elemwise_type, shape_assign, shape_is_known, shape_str
from ...param import Parameter, field
from ...registry import NodeAttrs, register_op
from ..elemwise_unary import _identity, _sigmoid
from ..init import _fill


class RegressionOutputParam(Parameter):
    grad_scale = field(float, default=1.0, describe="Scale the gradient by a float factor")


@kernel.elementwise
def _squared_grad(out, label, scale):  # linear and logistic: d data = (out - label) * scale
    return (out - label) * scale


@kernel.elementwise
def _abs_grad(out, label, scale):  # d |out - label|; +1 only where out > label, as MXNet
    return scale if out > label else -scale


# name -> (forward kernel, backward kernel, backward op, what the output is)
_HEADS = {
    "LinearRegressionOutput": (_identity, _squared_grad, "_backward_linear_reg_out", "data"),
    "LogisticRegressionOutput": (
        _sigmoid,
        _squared_grad,
        "_backward_logistic_reg_out",
        "sigmoid(data) = 1 / (1 + exp(-data))",
    ),
    "MAERegressionOutput": (_identity, _abs_grad, "_backward_mae_reg_out", "data"),
}
_GRADS = {bwd: grad for _, grad, bwd, _ in _HEADS.values()}


def _infer_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    """out = data's shape (both ways); label = data's, or (N,) for data (N, 1)."""
    name = attrs.op.name if attrs.op is not None else "RegressionOutput"
    shape_assign(in_shapes, 0, out_shapes[0], f"{name}: input 'data'")
    shape_assign(out_shapes, 0, in_shapes[0], f"{name}: output 'output'")
    data, label = in_shapes[0], in_shapes[1]
    if not shape_is_known(data):
        return False
    if len(data) == 0:  # a batch has rows: a 0-d data or label has none
        raise InferError(f"{name}: input 'data' has shape (); expected at least one axis (N, ...)")
    if label is not None and len(label) == 0:
        _bad_label(name, label, data)
    if label is None:
        in_shapes[1] = (data[0],) if len(data) == 2 and data[1] == 1 else data
        return True
    if not shape_is_known(label):
        if len(label) != len(data):
            return False
        shape_assign(in_shapes, 1, data, f"{name}: input 'label'")
    label = in_shapes[1]
    if label[0] != data[0] or math.prod(label) != math.prod(data):
        _bad_label(name, label, data)
    return True


def _bad_label(name: str, label: tuple[Any, ...], data: tuple[int, ...]) -> None:
    raise InferError(
        f"{name}: input 'label' has shape {shape_str(label)}, but data of shape "
        f"{shape_str(data)} needs a label with {data[0]} rows and {math.prod(data)} elements"
    )


def _forward(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    assert attrs.op is not None  # a node of one of the ops registered below
    forward = _HEADS[attrs.op.name][0]
    forward.launch(ctx, outputs[0], req[0], inputs[0])


def _backward(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    label, out = inputs  # the gradient reads the output and the label, never dy
    assert attrs.op is not None
    grad = _GRADS[attrs.op.name]
    _fill.launch(ctx, outputs[1], req[1], 0.0)
    if out.size == 0:
        return
    per_example = label.size // label.shape[0]
    scale = attrs.parsed.grad_scale / per_example
    grad.launch(ctx, outputs[0], req[0], out, label.reshape(tuple(out.shape)), scale)


def _gradient(backward_op: str) -> Any:
    def gradient(node: Any, ograds: list[Any]) -> list[Any]:
        return make_grad_node(backward_op, node, [node.inputs[1], NodeEntry(node, 0)])

    return gradient


for _name, (_fwd, _grad, _bwd, _what) in _HEADS.items():
    (
        register_op(_name)
        .describe(
            f"Regression loss head: the output is {_what}; the backward pass gives data the "
            "gradient of the loss against `label` (it needs no head gradient). See "
            "nnvmpy.ops.nn.regression."
        )
        .set_attr_parser(RegressionOutputParam)
        .set_num_inputs(2)
        .set_num_outputs(1)
        .set_attr(FListInputNames, lambda attrs: ["data", "label"])
        .set_attr(FInferShape, _infer_shape)
        .set_attr(FInferType, elemwise_type(2, 1))
        .set_attr(FInplaceOption, lambda attrs: [(0, 0)])
        .set_attr(FCompute_cpu, _forward)
        .set_attr(FCompute_gpu, _forward)
        .set_attr(FGradient, _gradient(_bwd))
        .add_argument("data", "NDArray-or-Symbol", "Input data to the function.")
        .add_argument("label", "NDArray-or-Symbol", "Input label to the function.")
        .add_arguments(RegressionOutputParam.fields())
    )
    (
        register_op(_bwd)
        .describe(f"Backward of {_name}: inputs (label, output).")
        .set_attr_parser(RegressionOutputParam)
        .set_num_inputs(2)
        .set_num_outputs(2)
        .set_attr(TIsBackward, True)
        .set_attr(FInplaceOption, lambda attrs: [(1, 0)])
        .set_attr(FCompute_cpu, _backward)
        .set_attr(FCompute_gpu, _backward)
    )
