"""_contrib_group_adagrad_update: AdaGrad with one accumulated rate per row (contrib).

    g = clip(rescale_grad * grad, clip_gradient)
    history[r] += mean(g[r]^2)                  # over every element of row r
    weight[r] -= lr * g[r] / sqrt(history[r] + epsilon)

A row is weight[r] (everything after axis 0): an embedding's rows share one rate each.
`history` holds one value per row, shape (rows,) or (rows, 1) (the optimizer's state);
it is updated in place (FMutateInputs), the new weight is the output (out=weight updates
in place). MXNet 1.9.1 runs this only with a row_sparse gradient on the CPU (lazily: rows
absent from the gradient stay as they are); here the gradient is dense, and a row whose
gradient is all zeros is left unchanged likewise (its history grows by 0, its step is 0).
No weight decay, as in MXNet. The CPU runs a row per iteration; a GPU sums the rows on
the reduction kernels and updates a thread per row, then a thread per element
(_group_adagrad_cuda.py).
"""

from __future__ import annotations

import math
from typing import Any

from ...base import InferError
from ...infer import shape_assign, shape_is_known, shape_str
from ...kernel import parallel_for
from ...kernel.launch import is_gpu
from ...param import Parameter, field
from ...registry import NodeAttrs
from ._common import ClipParam, assign, clip, launch, register_update, req_code, size_of

OP = "_contrib_group_adagrad_update"


@parallel_for
def group_adagrad_loop(r, out, history, weight, grad, cols, mode, lr, epsilon, rescale, bound):
    start = r * cols
    total = 0.0
    for j in range(cols):
        g = clip(rescale * grad[start + j], bound)
        total += g * g
    h = history[r] + total / cols
    history[r] = h
    step = lr / math.sqrt(h + epsilon)
    for j in range(cols):
        i = start + j
        assign(out, i, mode, weight[i] - step * clip(rescale * grad[i], bound))


class GroupAdagradParam(Parameter):
    """MXNet's order (lr first), which positional parameters follow: nd.op(w, g, h, 0.1)."""

    lr = field(float, describe="Learning rate")
    rescale_grad = ClipParam.rescale_grad
    clip_gradient = ClipParam.clip_gradient
    epsilon = field(float, default=1e-5, describe="Epsilon for numerical stability")


def _group_adagrad_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    """weight, grad and the output share a shape; history has one value per row."""
    for i, name in ((0, "weight"), (1, "grad")):
        shape_assign(out_shapes, 0, in_shapes[i], f"{OP}: input '{name}'")
    for i, name in ((0, "weight"), (1, "grad")):
        shape_assign(in_shapes, i, out_shapes[0], f"{OP}: input '{name}'")
    weight, history = in_shapes[0], in_shapes[2]
    if weight is not None and len(weight) == 0:
        raise InferError(f"{OP}: input 'weight' must have at least one dimension (its rows)")
    if weight is not None and weight[0] is not None:
        rows = weight[0]
        if history is None:
            in_shapes[2] = (rows, 1)
        elif shape_is_known(history) and (
            len(history) == 0 or history[0] != rows or math.prod(history) != rows
        ):  # a known 0-d history holds one value, not one per row
            raise InferError(
                f"{OP}: input 'history' has shape {shape_str(history)}; expected one value "
                f"per row of 'weight' {shape_str(weight)}: ({rows},) or ({rows}, 1)"
            )
    return all(shape_is_known(s) for s in [*in_shapes, *out_shapes])


def _group_adagrad(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    p = attrs.parsed
    weight, grad, history = inputs
    rows = weight.shape[0]
    if rows == 0:
        return
    cols = size_of(weight) // rows
    if is_gpu(ctx):
        from nnvmpy.ops.optimizer import _group_adagrad_cuda

        _group_adagrad_cuda.update_gpu(
            ctx, outputs[0], history, weight, grad, rows, cols, req_code(OP, req[0]),
            p.lr, p.epsilon, p.rescale_grad, p.clip_gradient,
        )  # fmt: skip
        return
    args = (outputs[0], history, weight, grad, cols, req_code(OP, req[0]), p.lr, p.epsilon,
            p.rescale_grad, p.clip_gradient)  # fmt: skip
    launch(ctx, group_adagrad_loop, rows, args, written=(0, 1), work=size_of(weight))


register_update(
    OP, GroupAdagradParam, ["weight", "grad", "history"], _group_adagrad,
    """Update function for Group AdaGrad optimizer: AdaGrad (Duchi et al., 2011) with a
single learning rate for every row of the parameter array.

    grad = clip(grad * rescale_grad, clip_gradient)
    history += mean(square(grad), axis=1, keepdims=True)
    div = grad / sqrt(history + epsilon)
    weight -= div * lr

`history` (one value per row) is updated in place; returns the new weight (call with
out=weight). Weight decay is not supported.""",
    mutate=[2],
    infer_shape=_group_adagrad_shape,
)  # fmt: skip
