"""_contrib_BatchNormWithReLU: BatchNorm followed by ReLU, as one op (MXNet's fused op).

    output = relu(BatchNorm(data, gamma, beta, moving_mean, moving_var))

Same inputs, outputs (output, mean, var), parameters and moving-statistics update as
BatchNorm (batch_norm.py), and the same kernels with relu applied inside them: the
forward writes relu of the normalised value as it writes the output, and the backward,
`_backward_contrib_BatchNormWithReLU` on (dy, data, gamma, mean, var, output), takes dy
through relu's gradient (dy where the output is positive) as it reads it, in both of its
passes. Against BatchNorm then relu that is one pass over the activation fewer forward
(relu's read and write) and one fewer backward (_backward_relu's reads of dy and the
output and its write), and two kernels fewer. Executors bound for training rewrite each
BatchNorm whose output only a relu reads into this op (passes/fuse_bn_relu.py). MXNet
1.9.1 runs this op only with its MKL-DNN backend (4-D float32 data); here it takes any
layout and float type BatchNorm takes.
"""

from __future__ import annotations

from typing import Any

from ...attrs import FCompute_cpu, FCompute_gpu, TIsBackward
from ...graph.node import NodeEntry
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
