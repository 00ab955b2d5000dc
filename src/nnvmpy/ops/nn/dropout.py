"""Dropout: zero a random fraction p of the input while training, scaling the rest by 1/(1-p).

    training (is_train, or mode='always'):  mask = Bernoulli(1 - p) / (1 - p);  y = x * mask
    inference:                              mask = 1;                          y = x
    backward:                               dx = dy * mask

The mask is the op's second, hidden output (FNumVisibleOutputs 1), so the backward op
reads exactly the mask the forward pass drew. It holds the scaled values {0, 1/(1-p)}
and always has the data's shape: with `axes` (variational dropout) one draw is shared
along those axes, and the mask repeats it (MXNet keeps size-1 dims there instead).
Writing ones at inference keeps the backward right whatever mode the forward ran in.

Random numbers come from the op's kRandom resource, a NumPy Generator seeded per device
(nv.random.seed), so runs are reproducible; on a GPU the mask is drawn on the host and
copied over, which is simple rather than fast.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FInplaceOption,
    FListInputNames,
    FListOutputNames,
    FNumVisibleOutputs,
    FResourceRequest,
    TIsBackward,
)
from ...base import InferError
from ...graph.grad import make_grad_node
from ...graph.node import NodeEntry
from ...infer import elemwise_shape, elemwise_type, shape_str
from ...param import Parameter, Shape, field
from ...registry import NodeAttrs, register_op
from ...resource import ResourceRequest
from ..elemwise_binary import _mul
from ..elemwise_unary import _identity
from ..init import _fill
from .softmax import is_gpu


class DropoutParam(Parameter):
    p = field(
        float,
        default=0.5,
        lower_bound=0.0,
        upper_bound=1.0,
        describe="Fraction of the input that gets dropped out during training time.",
    )
    mode = field(
        str,
        default="training",
        enum={"training": 0, "always": 1},
        describe="Whether to only turn on dropout during training or to also turn on for "
        "inference.",
    )
    axes = field(Shape, default=(), describe="Axes for variational dropout kernel.")
    cudnn_off = field(
        bool, default=False, optional=True, describe="Accepted for MXNet compatibility; ignored."
    )


def _check_axes(attrs: NodeAttrs, shape: tuple[Any, ...]) -> None:
    ndim = len(shape)
    for axis in attrs.parsed.axes:
        if not -ndim <= axis < ndim:
            raise InferError(
                f"Dropout: parameter 'axes' has axis {axis}, out of range for input 'data' "
                f"of shape {shape_str(shape)}; expected -{ndim} <= axis < {ndim}"
            )


_same_shape = elemwise_shape(1, 2)


def _infer_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    known = _same_shape(attrs, in_shapes, out_shapes)
    if in_shapes[0] is not None:
        _check_axes(attrs, in_shapes[0])
    return bool(known)


def _draw_mask(attrs: NodeAttrs, ctx: Any, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """The scaled Bernoulli(1 - p) mask on the host, with the data's shape."""
    p = attrs.parsed
    keep = 1.0 - p.p
    draw_shape = list(shape)
    for axis in p.axes:
        draw_shape[axis] = 1
    rng = ctx.requested[0].get_random()
    kept = rng.random(tuple(draw_shape), dtype=np.float32) < keep
    scale = 1.0 / keep if keep > 0 else 0.0  # p = 1 drops everything
    mask = kept.astype(dtype) * np.asarray(scale, dtype=dtype)
    return np.ascontiguousarray(np.broadcast_to(mask, shape))


def _dropout_forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    p = attrs.parsed
    x, (out, mask) = inputs[0], outputs
    if not (ctx.is_train or p.mode == "always") or p.p == 0:
        _fill.launch(ctx, mask, req[1], 1.0)
        _identity.launch(ctx, out, req[0], x)
        return
    drawn = _draw_mask(attrs, ctx, tuple(x.shape), x.dtype)
    if is_gpu(ctx):
        from numba import cuda

        stream = getattr(ctx.run_ctx, "stream", None) or 0
        drawn = cuda.to_device(drawn, stream=stream)
    _identity.launch(ctx, mask, req[1], drawn)
    _mul.launch(ctx, out, req[0], x, drawn)  # x before out: out may be x itself


def _dropout_backward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    _mul.launch(ctx, outputs[0], req[0], inputs[0], inputs[1])  # dx = dy * mask


def _dropout_grad(node: Any, ograds: list[Any]) -> list[Any]:
    return make_grad_node("_backward_Dropout", node, [ograds[0], NodeEntry(node, 1)])


def _same_slot(attrs: NodeAttrs) -> list[tuple[int, int]]:
    return [(0, 0)]


(
    register_op("Dropout")
    .describe(
        "Applies dropout operation to input array.\n\n"
        "During training, each element of the input is set to zero with probability p "
        "and the rest are scaled by 1/(1-p); at inference the input passes unchanged "
        "(unless mode='always')."
    )
    .set_attr_parser(DropoutParam)
    .set_num_inputs(1)
    .set_num_outputs(2)
    .set_attr(FListInputNames, lambda attrs: ["data"])
    .set_attr(FListOutputNames, lambda attrs: ["output", "mask"])
    .set_attr(FNumVisibleOutputs, lambda attrs: 1)
    .set_attr(FInferShape, _infer_shape)
    .set_attr(FInferType, elemwise_type(1, 2))
    .set_attr(FInplaceOption, _same_slot)
    .set_attr(FResourceRequest, lambda attrs: [ResourceRequest.kRandom])
    .set_attr(FCompute_cpu, _dropout_forward)
    .set_attr(FCompute_gpu, _dropout_forward)
    .set_attr(FGradient, _dropout_grad)
    .add_argument("data", "NDArray-or-Symbol", "Input array to which dropout will be applied.")
    .add_arguments(DropoutParam.fields())
)
(
    register_op("_backward_Dropout")
    .describe("Backward of Dropout: inputs (dy, mask); dx = dy * mask.")
    .set_attr_parser(DropoutParam)
    .set_num_inputs(2)
    .set_num_outputs(1)
    .set_attr(TIsBackward, True)
    .set_attr(FInferShape, elemwise_shape(2, 1))
    .set_attr(FInferType, elemwise_type(2, 1))
    .set_attr(FInplaceOption, _same_slot)
    .set_attr(FCompute_cpu, _dropout_backward)
    .set_attr(FCompute_gpu, _dropout_backward)
)
