"""BatchNorm followed by ReLU (and a residual add before it), as one op.

    _contrib_BatchNormWithReLU (MXNet's fused op):
        output = relu(BatchNorm(data, gamma, beta, moving_mean, moving_var))
    _BatchNormAddReLU (nnvmpy's, for ResNet's blocks):
        output = relu(BatchNorm(data, gamma, beta, moving_mean, moving_var) + residual)

Same inputs, outputs (output, mean, var), parameters and moving-statistics update as
BatchNorm (batch_norm.py), and the same kernels with relu applied inside them: the
forward writes relu of the normalised value as it writes the output, and the backward,
`_backward_contrib_BatchNormWithReLU` on (dy, data, gamma, mean, var, output), takes dy
through relu's gradient (dy where the output is positive) as it reads it, in both of its
passes. Against BatchNorm then relu that is one pass over the activation fewer forward
(relu's read and write) and one fewer backward (_backward_relu's reads of dy and the
output and its write), and two kernels fewer. _BatchNormAddReLU adds the residual as it
writes (the add's pass over BatchNorm's output gone as well), and its backward
(`_backward_BatchNormAddReLU`, same inputs) also writes relu's gradient of dy, which is
the residual's gradient, in its first pass, and its second pass reads that instead of dy
and the output. Executors bound for training rewrite each BatchNorm whose output only a
relu, or an add feeding only a relu, reads into these ops (passes/fuse_bn_relu.py).
MXNet 1.9.1 runs _contrib_BatchNormWithReLU only with its MKL-DNN backend (4-D float32
data); here both take any layout and float type BatchNorm takes.
"""

from __future__ import annotations

from typing import Any

from ...attrs import FCompute_cpu, FCompute_gpu, FInferShape, FInferType, TIsBackward
from ...graph.node import NodeEntry
from ...infer import elemwise_type, shape_assign, shape_is_known
from ...registry import NodeAttrs, register_op
from .batch_norm import (
    BatchNormParam,
    _batch_norm_backward,
    _batch_norm_forward,
    _batch_norm_grad,
    batch_norm_signature,
)

OP = "_contrib_BatchNormWithReLU"
BACKWARD_OP = "_backward_contrib_BatchNormWithReLU"
ADD_OP = "_BatchNormAddReLU"
ADD_BACKWARD_OP = "_backward_BatchNormAddReLU"


def _forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    _batch_norm_forward(attrs, ctx, inputs, req, outputs, relu=True)


def _backward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    _batch_norm_backward(attrs, ctx, inputs, req, outputs, relu=True)


def _gradient(node: Any, ograds: list[Any]) -> list[Any]:
    """One backward node on (dy, data, gamma, mean, var, output); zeros for the moving
    statistics."""
    return _batch_norm_grad(BACKWARD_OP, node, ograds, (NodeEntry(node, 0),))


def _add_gradient(node: Any, ograds: list[Any]) -> list[Any]:
    """The same node with a fourth output, the residual's gradient (input 5)."""
    grads = _batch_norm_grad(ADD_BACKWARD_OP, node, ograds, (NodeEntry(node, 0),))
    return [*grads[:3], *grads[4:], grads[3]]


def _add_backward_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    """d data and d residual: data's shape; d gamma, d beta: gamma's. (Not TIsBackward:
    its outputs are not the forward's inputs in order, the residual being input 5.)"""
    for out, src in ((0, 1), (1, 2), (2, 2), (3, 1)):
        what = f"{ADD_BACKWARD_OP}: output {out}"
        shape_assign(out_shapes, out, in_shapes[src], what)
        shape_assign(in_shapes, src, out_shapes[out], what)
    return all(shape_is_known(s) for s in out_shapes)


batch_norm_signature(
    register_op(OP).describe(
        "Batch normalization with ReLU fusion: BatchNorm, then max(0, x) on its output.\n\n"
        "    out = relu((data - mean) / sqrt(var + eps) * gamma + beta)\n\n"
        "Takes BatchNorm's inputs and parameters; training uses the batch's statistics and "
        "updates moving_mean/moving_var in place, inference (or use_global_stats) the "
        "moving ones."
    ),
    _forward,
    _gradient,
)
batch_norm_signature(
    register_op(ADD_OP).describe(
        "BatchNorm, plus a residual of data's shape, then max(0, x): what ResNet's blocks "
        "end with, as one op.\n\n"
        "    out = relu((data - mean) / sqrt(var + eps) * gamma + beta + residual)\n\n"
        "Takes BatchNorm's inputs and parameters, and the residual; executors bound for "
        "training make it from BatchNorm -> elemwise_add -> relu (passes/fuse_bn_relu.py)."
    ),
    _forward,
    _add_gradient,
    residual=True,
)
(
    register_op(ADD_BACKWARD_OP)
    .describe(
        "Backward of _BatchNormAddReLU: inputs (dy, data, gamma, mean, var, output), "
        "outputs (d data, d gamma, d beta, d residual)."
    )
    .set_attr_parser(BatchNormParam)
    .set_num_inputs(6)
    .set_num_outputs(4)
    .set_attr(FInferShape, _add_backward_shape)
    .set_attr(FInferType, elemwise_type(6, 4))
    .set_attr(FCompute_cpu, _backward)
    .set_attr(FCompute_gpu, _backward)
)
(
    register_op(BACKWARD_OP)
    .describe(
        "Backward of _contrib_BatchNormWithReLU: inputs (dy, data, gamma, mean, var, output)."
    )
    .set_attr_parser(BatchNormParam)
    .set_num_inputs(6)
    .set_num_outputs(3)
    .set_attr(TIsBackward, True)
    .set_attr(FCompute_cpu, _backward)
    .set_attr(FCompute_gpu, _backward)
)
