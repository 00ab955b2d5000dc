"""softmax_cross_entropy: the summed cross-entropy of softmax(data) against class labels.

    out[0]  = sum_n ( logsumexp(data[n]) - data[n, label[n]] )       data (N, K), label (N,)
    d data  = (softmax(data) - one_hot(label)) * dy[0];   label gets a zero gradient

An ordinary op (its gradient multiplies the head gradient), computed stably in float64
per row; the rows' losses are summed by one more work item, so nothing waits for the
host but the label check: a label outside [0, K) is a named error.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FListInputNames,
    FResourceRequest,
    TIsBackward,
)
from ...base import InferError, NNVMError
from ...graph.grad import make_grad_node
from ...infer import shape_assign, shape_is_known, shape_str, type_assign
from ...kernel import parallel_for
from ...kernel.launch import NULL, req_code, run_rows, store
from ...registry import NodeAttrs, register_op
from ...resource import ResourceRequest
from ..init import _fill
from ._layer_util import host_copy, via_float32

_NAME = "softmax_cross_entropy"


@parallel_for
def _row_loss(r, x, losses, label, k_len):
    """losses[r] = logsumexp(x[r]) - x[r, label[r]]."""
    base = r * k_len
    m = x[base]
    for k in range(1, k_len):
        m = max(m, x[base + k])
    s = 0.0
    for k in range(k_len):
        s += math.exp(x[base + k] - m)
    losses[r] = m + math.log(s) - x[base + int(label[r])]


@parallel_for
def _sum_losses(i, out, losses, rows, mode):
    total = 0.0
    for r in range(rows):
        total += losses[r]
    store(out, 0, total, mode)


@parallel_for
def _row_grad(r, dx, x, label, dy, k_len, mode):
    """dx[r] = (softmax(x[r]) - one_hot(label[r])) * dy[0]."""
    base = r * k_len
    m = x[base]
    for k in range(1, k_len):
        m = max(m, x[base + k])
    s = 0.0
    for k in range(k_len):
        s += math.exp(x[base + k] - m)
    gold = int(label[r])
    g = dy[0]
    for k in range(k_len):
        p = math.exp(x[base + k] - m) / s
        store(dx, base + k, (p - 1.0 if k == gold else p) * g, mode)


def _check_labels(ctx: Any, name: str, label: Any, classes: int) -> None:
    values = host_copy(ctx, label).reshape(-1)
    with np.errstate(invalid="ignore"):
        bad = np.flatnonzero(~((values >= 0) & (values < classes)))
    if bad.size:
        i = int(bad[0])
        raise NNVMError(
            f"{name}: label[{i}] = {values[i]} is not a class of data with {classes} "
            f"classes; expected 0 <= label < {classes}"
        )


def _infer_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    """data (N, K), label (N,), out (1,); N flows both ways between data and label."""
    data, label = in_shapes
    if data is not None and len(data) != 2:
        raise InferError(f"{_NAME}: input 'data' has shape {shape_str(data)}; expected (N, K)")
    if label is not None and len(label) != 1:
        raise InferError(f"{_NAME}: input 'label' has shape {shape_str(label)}; expected (N,)")
    if data is not None:
        shape_assign(in_shapes, 1, (data[0],), f"{_NAME}: input 'label'")
    if in_shapes[1] is not None:
        shape_assign(in_shapes, 0, (in_shapes[1][0], None), f"{_NAME}: input 'data'")
    shape_assign(out_shapes, 0, (1,), f"{_NAME}: output 'output'")
    return shape_is_known(in_shapes[0]) and shape_is_known(in_shapes[1])


def _infer_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    # the label may have its own dtype (int class ids); by default it follows data
    type_assign(in_types, 0, out_types[0], f"{_NAME}: input 'data'")
    type_assign(out_types, 0, in_types[0], f"{_NAME}: output 'output'")
    if in_types[1] is None:
        type_assign(in_types, 1, in_types[0])
    return in_types[0] is not None and in_types[1] is not None


@via_float32
def _forward(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    x, label = inputs
    mode = req_code(_NAME, req[0])
    if mode == NULL:
        return
    rows, k_len = (int(d) for d in x.shape)
    if rows == 0:
        _fill.launch(ctx, outputs[0], req[0], 0.0)
        return
    _check_labels(ctx, _NAME, label, k_len)
    losses = ctx.requested[0].get_space((rows,), "float64")
    run_rows(ctx, _NAME, _row_loss, rows, x, losses, label, k_len)
    _sum_losses.launch(ctx, 1, outputs[0].reshape(-1), losses, rows, mode, work=rows)


@via_float32
def _backward(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    dy, x, label = inputs
    name = f"_backward_{_NAME}"
    _fill.launch(ctx, outputs[1], req[1], 0.0)
    mode = req_code(name, req[0])
    rows, k_len = (int(d) for d in x.shape)
    if mode == NULL or rows == 0:
        return
    _check_labels(ctx, name, label, k_len)
    run_rows(ctx, name, _row_grad, rows, outputs[0], x, label, dy, k_len, mode)


def _gradient(node: Any, ograds: list[Any]) -> list[Any]:
    return make_grad_node(f"_backward_{_NAME}", node, [ograds[0], *node.inputs])


(
    register_op(_NAME)
    .describe(
        "Calculate cross entropy of softmax output and one-hot label: the sum over the "
        "batch of -log(softmax(data)[n, label[n]]), for data (N, K) and label (N,) of class "
        "ids; the output has shape (1,)."
    )
    .set_num_inputs(2)
    .set_num_outputs(1)
    .set_attr(FListInputNames, lambda attrs: ["data", "label"])
    .set_attr(FInferShape, _infer_shape)
    .set_attr(FInferType, _infer_type)
    .set_attr(FResourceRequest, lambda attrs: [ResourceRequest.kTempSpace])
    .set_attr(FCompute_cpu, _forward)
    .set_attr(FCompute_gpu, _forward)
    .set_attr(FGradient, _gradient)
    .add_argument("data", "NDArray-or-Symbol", "Input data")
    .add_argument("label", "NDArray-or-Symbol", "Input label")
)
(
    register_op(f"_backward_{_NAME}")
    .describe(f"Backward of {_NAME}: inputs (dy, data, label).")
    .set_num_inputs(3)
    .set_num_outputs(2)
    .set_attr(TIsBackward, True)
    .set_attr(FCompute_cpu, _backward)
    .set_attr(FCompute_gpu, _backward)
)
