"""Dropout: zero a random fraction p of the input while training, scaling the rest by 1/(1-p).

    training (is_train, or mode='always'):  mask = Bernoulli(1 - p) / (1 - p);  y = x * mask
    inference:                              mask = 1;                          y = x
    backward:                               dx = dy * mask

The mask is the op's second, hidden output (FNumVisibleOutputs 1), so the backward op
reads exactly the mask the forward pass drew. It holds the scaled values {0, 1/(1-p)}
and always has the data's shape: with `axes` (variational dropout) one draw is shared
along those axes, and the mask repeats it (MXNet keeps size-1 dims there instead).
Writing ones at inference keeps the backward right whatever mode the forward ran in.
As in MXNet, p = 1 in training gives NaN (0 * 1/0): nothing survives to be rescaled.

The draws come from the op's kRandom resource, the device's Philox stream (the one the
random ops use, so nv.random.seed makes them reproducible): draw d is the uniform of
stream counter first + d, and the mask is made where the data is, by one kernel body for
the CPU and the GPU.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferenceIdentity,
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
from ...kernel import parallel_for, scratch
from ...kernel.launch import NULL, WRITE, is_gpu, req_code, store, uindex
from ...kernel.philox import uniform_pair
from ...param import Parameter, Shape, field
from ...registry import NodeAttrs, register_op
from ...resource import ResourceRequest
from .._second_order import unary_backward_gradient
from ..elemwise_binary import _mul
from ..elemwise_unary import _identity
from ..init import _fill
from ..random._common import launch

_U0 = np.uint64(0)


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


@parallel_for
def _dropout_loop(i, out, mode, mask, mask_mode, x, keep, scale, k0, k1, first, strides, steps):
    """Element i takes draw d: i itself, or with `axes` its position in the draw shape."""
    d = i
    if strides.shape[0] > 0:  # i's coordinate along each axis, times its draw stride
        d = 0
        rest = i
        for a in range(strides.shape[0]):
            q = rest // strides[a]
            rest -= q * strides[a]
            d += q * steps[a]
    u, _v = uniform_pair(k0, k1, first + uindex(d), _U0, _U0)
    m = (1.0 if u < keep else 0.0) * scale
    store(mask, i, m, mask_mode)
    store(out, i, x[i] * m, mode)


@parallel_for
def _mask_loop(i, mask, mode, keep, scale, k0, k1, first):
    u, _v = uniform_pair(k0, k1, first + uindex(i), _U0, _U0)
    store(mask, i, (1.0 if u < keep else 0.0) * scale, mode)


def draw_mask(ctx: Any, mask: Any, p: float) -> None:
    """Write a fresh mask into `mask` (any shape, contiguous): Bernoulli(1 - p) / (1 - p)
    from ctx's kRandom Philox stream, drawn as Dropout draws its own. For ops with dropout
    inside (RNN between layers): the mask is made where it lives, with no host draw or
    upload, and nv.random.seed makes it reproducible on either device."""
    keep = 1.0 - p
    scale = 1.0 / keep if keep > 0 else math.inf  # p = 1: NaN in use, as Dropout
    k0, k1, first = ctx.requested[0].take_counters(math.prod(tuple(mask.shape)))
    launch(ctx, _mask_loop, mask, WRITE, keep, scale, k0, k1, first)


def _draw_layout(shape: tuple[int, ...], axes: tuple[int, ...]) -> tuple[int, Any, Any]:
    """(draws, data strides, draw strides) in elements; no strides when axes is empty.

    The draw shape is the data's with the `axes` set to 1; their draw stride is 0, so all
    elements along them share a draw.
    """
    if not axes:
        return math.prod(shape), _NO_AXES, _NO_AXES
    ndim = len(shape)
    shared = {ax % ndim for ax in axes}
    strides = np.ones(ndim, dtype=np.int64)
    steps = np.zeros(ndim, dtype=np.int64)
    stride = step = 1
    for a in reversed(range(ndim)):
        strides[a] = stride
        stride *= shape[a]
        if a not in shared:
            steps[a] = step
            step *= shape[a]
    return step, strides, steps


_NO_AXES = np.zeros(0, dtype=np.int64)


def _on_device(ctx: Any, a: np.ndarray) -> Any:
    if not is_gpu(ctx):
        return a
    return scratch.upload(ctx, a)


def _dropout_forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    p = attrs.parsed
    x, (out, mask) = inputs[0], outputs
    if not (ctx.is_train or p.mode == "always") or p.p == 0:
        _fill.launch(ctx, mask, req[1], 1.0)
        _identity.launch(ctx, out, req[0], x)  # may be in place: out is x
        return
    mode, mask_mode = req_code("Dropout", req[0]), req_code("Dropout", req[1])
    if (mode == NULL and mask_mode == NULL) or x.size == 0:
        return
    draws, dims, steps = _draw_layout(tuple(x.shape), tuple(p.axes))
    keep = 1.0 - p.p
    scale = 1.0 / keep if keep > 0 else math.inf  # p = 1: 0 * inf = NaN, as in MXNet
    k0, k1, first = ctx.requested[0].take_counters(draws)
    args = (mask, mask_mode, x, keep, scale, k0, k1, first)
    dims, steps = _on_device(ctx, dims), _on_device(ctx, steps)
    launch(ctx, _dropout_loop, out, mode, *args, dims, steps, written=(0,))


def _dropout_backward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    _mul.launch(ctx, outputs[0], req[0], inputs[0], inputs[1])  # dx = dy * mask


def _dropout_grad(node: Any, ograds: list[Any]) -> list[Any]:
    return make_grad_node("_backward_Dropout", node, [ograds[0], NodeEntry(node, 1)])


def _inference_identity(attrs: NodeAttrs) -> int | None:
    """FInferenceIdentity: at is_train=False the output is the data (mode 'always' drops)."""
    return 0 if attrs.parsed.mode == "training" else None


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
    .set_attr(FInferenceIdentity, _inference_identity)
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
    # dy * mask is linear in dy and piecewise constant in the data behind the mask: the
    # gradient of gradients goes through (autograd.grad(create_graph=True)), zero for x
    .set_attr(FGradient, unary_backward_gradient(None))
)
