"""_contrib_BatchNormWithReLU: BatchNorm followed by ReLU, as one op (MXNet's fused op).

    output = relu(BatchNorm(data, gamma, beta, moving_mean, moving_var))

Same inputs, outputs (output, mean, var), parameters and moving-statistics update as
BatchNorm (batch_norm.py). The forward runs BatchNorm's kernel and then ReLU in place on
the output; the gradient is the composition: ReLU's backward (dy where the output is
positive) feeds BatchNorm's backward node. MXNet 1.9.1 runs this op only with its MKL-DNN
backend (4-D float32 data); here it takes any layout and float type BatchNorm takes.
"""

from __future__ import annotations

from typing import Any

from ...attrs import FResourceRequest
from ...graph.grad import make_node
from ...graph.node import NodeEntry
from ...kernel.launch import ADD, req_code
from ...registry import NodeAttrs, register_op
from ...resource import ResourceRequest
from ..elemwise_unary import _relu
from .batch_norm import _batch_norm_forward, _batch_norm_grad, batch_norm_signature

OP = "_contrib_BatchNormWithReLU"


def _forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    """BatchNorm into the output (or scratch space when the output is added to), then ReLU."""
    if req_code(OP, req[0]) == ADD:
        out = outputs[0]
        normed = ctx.requested[0].get_space(tuple(out.shape), out.dtype)
        _batch_norm_forward(attrs, ctx, inputs, ["write", *req[1:]], [normed, *outputs[1:]])
        _relu.launch(ctx, out, "add", normed)
        return
    _batch_norm_forward(attrs, ctx, inputs, req, outputs)
    _relu.launch(ctx, outputs[0], req[0], outputs[0])


def _gradient(node: Any, ograds: list[Any]) -> list[Any]:
    """d relu (dy where output > 0) into BatchNorm's backward; zeros for the moving stats."""
    relu_grad = make_node(
        "_backward_relu",
        f"{node.name}_relu_backward",
        [ograds[0], NodeEntry(node, 0)],
        None,
        [node],
    )
    return _batch_norm_grad("_backward_BatchNorm", node, [NodeEntry(relu_grad, 0), *ograds[1:]])


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
).set_attr(FResourceRequest, lambda attrs: [ResourceRequest.kTempSpace])
