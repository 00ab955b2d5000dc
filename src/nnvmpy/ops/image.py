"""MXNet's deterministic image ops (`nd.image` / `sym.image`): normalize, to_tensor, flips.

    _image_normalize(x, mean, std):  out[..., c, h, w] = (x[..., c, h, w] - mean[c]) / std[c]
        x is (C, H, W) or (N, C, H, W) with C in {1, 3}; mean and std hold 1 or C values
        (MXNet's defaults, four values, fit neither: it asks for them, and so do we).
    _image_to_tensor(x):  (H, W, C) or (N, H, W, C) in [0, 255] -> float32 (C, H, W) / 255
    _image_flip_left_right(x), _image_flip_top_bottom(x):  (H, W, C), C in {1, 3}, reversed
        along W or H; the gradient is the same flip of the head gradient.

Behaviour measured on MXNet 1.9.1: the dtype of normalize's output is its input's (uint8
stays uint8), to_tensor takes any channel count and has no usable gradient there (its
backward fails on the transposed shape), so ours has none. The random colour ops, random
flips and lighting are in image_color.py and image_random.py; resize and crop in
image_resize.py.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import kernel
from ..attrs import FCompute_cpu, FCompute_gpu, FGradient, FInferShape, FInferType, TIsBackward
from ..base import InferError, OpReqType
from ..graph.grad import ElemwiseGradUseNone
from ..infer import elemwise_type, shape_assign, shape_is_known
from ..kernel import like
from ..kernel.launch import run_rows
from ..param import FloatTuple, Parameter, field
from ..registry import NodeAttrs, register_op
from ._axis_map import AFFINE, AxisMap, axis_map, identity_axes
from ._layout import register_layout_op

# -- normalize ----------------------------------------------------------------------------------


class NormalizeParam(Parameter):
    mean = field(
        FloatTuple,
        default=(0.0, 0.0, 0.0, 0.0),
        describe="Sequence of means for each channel. Default value is 0.",
    )
    std = field(
        FloatTuple,
        default=(1.0, 1.0, 1.0, 1.0),
        describe="Sequence of standard deviations for each channel. Default value is 1.",
    )


def _channels(shape: tuple[Any, ...]) -> Any:
    if len(shape) not in (3, 4):
        raise InferError(
            "_image_normalize: input 'data' must have shape (channels, height, width) or "
            f"(N, channels, height, width), got {shape}"
        )
    c = shape[-3]
    if c is not None and c not in (1, 3):
        raise InferError(
            "_image_normalize: the channel axis of input 'data' must have 1 or 3 elements, "
            f"got shape {shape}"
        )
    return c


def _check_stats(attrs: NodeAttrs, c: int) -> None:
    for name in ("mean", "std"):
        values = getattr(attrs.parsed, name)
        if len(values) not in (1, c):
            raise InferError(
                f"_image_normalize: parameter '{name}' must have 1 or {c} elements for "
                f"{c} channels, got {tuple(values)}"
            )


def _normalize_infer(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    known = in_shapes[0] if in_shapes[0] is not None else out_shapes[0]
    if known is None:
        return False
    c = _channels(tuple(known))
    if c is not None:
        _check_stats(attrs, c)
    shape_assign(out_shapes, 0, in_shapes[0], "_image_normalize: output")
    shape_assign(in_shapes, 0, out_shapes[0], "_image_normalize: input 'data'")
    return shape_is_known(in_shapes[0])


@kernel.parallel_for
def _normalize(i, out, x, plane, channels, m0, m1, m2, s0, s1, s2, add):
    # (x - mean) / std with mean and std rounded to x's type, as MXNet (float32 parameters,
    # DType arithmetic); a float64 parameter made a float32 image's arithmetic float64
    c = (i // plane) % channels
    xi = x[i]
    m = like(xi, m0) if c == 0 else (like(xi, m1) if c == 1 else like(xi, m2))
    s = like(xi, s0) if c == 0 else (like(xi, s1) if c == 1 else like(xi, s2))
    v = (xi - m) / s
    if add:
        out[i] += v
    else:
        out[i] = v


@kernel.parallel_for
def _normalize_grad(i, dx, dy, plane, channels, s0, s1, s2, add):
    c = (i // plane) % channels
    s = s0 if c == 0 else (s1 if c == 1 else s2)
    if add:
        dx[i] += dy[i] / s
    else:
        dx[i] = dy[i] / s


def _per_channel(values: tuple[float, ...], channels: int) -> list[float]:
    full = list(values) * channels if len(values) == 1 else list(values)
    return (full + [full[-1]] * 3)[:3]


def _plan(attrs: NodeAttrs, shape: tuple[int, ...]) -> tuple[int, int, list[float], list[float]]:
    c = _channels(shape)
    _check_stats(attrs, c)
    p = attrs.parsed
    return shape[-1] * shape[-2], c, _per_channel(p.mean, c), _per_channel(p.std, c)


def _mode(req: Any) -> int | None:
    r = OpReqType.parse(req)
    return None if r == OpReqType.kNullOp else int(r == OpReqType.kAddTo)


def _normalize_compute(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    add = _mode(req[0])
    if add is None:
        return
    x, out = inputs[0], outputs[0]
    plane, c, mean, std = _plan(attrs, tuple(x.shape))
    run_rows(ctx, "_image_normalize", _normalize, x.size, out, x, plane, c, *mean, *std, add)


def _normalize_backward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    add = _mode(req[0])
    if add is None:
        return
    dy, dx = inputs[0], outputs[0]
    plane, c, _, std = _plan(attrs, tuple(dx.shape))
    name = "_backward_image_normalize"
    run_rows(ctx, name, _normalize_grad, dy.size, dx, dy, plane, c, *std, add)


(
    register_op("_image_normalize")
    .describe(
        "Normalize a tensor of shape (C x H x W) or (N x C x H x W) with mean and standard "
        "deviation: output[i] = (input[i] - mean[i]) / std[i] for each channel i; mean and "
        "std hold one value for all channels or one per channel (C is 1 or 3)."
    )
    .set_num_inputs(1)
    .set_num_outputs(1)
    .set_attr_parser(NormalizeParam)
    .set_attr(FInferShape, _normalize_infer)
    .set_attr(FInferType, elemwise_type(1, 1))
    .set_attr(FCompute_cpu, _normalize_compute)
    .set_attr(FCompute_gpu, _normalize_compute)
    .set_attr(FGradient, ElemwiseGradUseNone("_backward_image_normalize"))
    .add_argument("data", "NDArray-or-Symbol", "Input ndarray")
    .add_arguments(NormalizeParam.fields())
)
(
    register_op("_backward_image_normalize")
    .set_num_inputs(1)
    .set_num_outputs(1)
    .set_attr_parser(NormalizeParam)
    .set_attr(TIsBackward, True)
    .set_attr(FCompute_cpu, _normalize_backward)
    .set_attr(FCompute_gpu, _normalize_backward)
)

# -- to_tensor ----------------------------------------------------------------------------------


def _to_tensor_infer(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    shape = in_shapes[0]
    if shape is None:
        return False
    if len(shape) not in (3, 4):
        raise InferError(
            "_image_to_tensor: input 'data' must have shape (height, width, channels) or "
            f"(N, height, width, channels), got {tuple(shape)}"
        )
    *lead, h, w, c = shape
    shape_assign(out_shapes, 0, (*lead, c, h, w), "_image_to_tensor: output")
    return shape_is_known(shape)


def _to_tensor_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    out_types[0] = np.dtype(np.float32)
    return in_types[0] is not None


@kernel.parallel_for
def _to_tensor(i, out, x, height, width, channels, add):
    # out (n, c, h, w) <- x (n, h, w, c) / 255
    plane = height * width
    n = i // (channels * plane)
    r = i - n * channels * plane
    c = r // plane
    hw = r - c * plane
    xi = x[(n * plane + hw) * channels + c]
    v = xi / like(xi, 255)  # in x's type (MXNet: / 255.0f); 255.0 made float32 float64
    if add:
        out[i] += v
    else:
        out[i] = v


def _to_tensor_compute(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    add = _mode(req[0])
    if add is None:
        return
    x, out = inputs[0], outputs[0]
    h, w, c = (int(d) for d in x.shape[-3:])
    run_rows(ctx, "_image_to_tensor", _to_tensor, out.size, out, x, h, w, c, add)


(
    register_op("_image_to_tensor")
    .describe(
        "Converts an image NDArray of shape (H x W x C) or (N x H x W x C) with values in "
        "[0, 255] to a float32 tensor of shape (C x H x W) or (N x C x H x W) with values "
        "in [0, 1]."
    )
    .set_num_inputs(1)
    .set_num_outputs(1)
    .set_attr(FInferShape, _to_tensor_infer)
    .set_attr(FInferType, _to_tensor_type)
    .set_attr(FCompute_cpu, _to_tensor_compute)
    .set_attr(FCompute_gpu, _to_tensor_compute)
    .add_argument("data", "NDArray-or-Symbol", "Input ndarray")
)

# -- flips --------------------------------------------------------------------------------------


def _image_shape(op: str, shape: tuple[Any, ...]) -> None:
    if len(shape) != 3:
        raise InferError(
            f"{op}: input 'data' must have shape (height, width, channels), got {shape}"
        )
    if shape[2] is not None and shape[2] not in (1, 3):
        raise InferError(
            f"{op}: the last axis of input 'data' must be channels with 1 or 3 elements, "
            f"got shape {shape}"
        )


def image_infer(op: str) -> Any:
    """FInferShape of an (H, W, C) image op whose output has its input's shape."""

    def infer(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
        known = in_shapes[0] if in_shapes[0] is not None else out_shapes[0]
        if known is None:
            return False
        _image_shape(op, tuple(known))
        shape_assign(out_shapes, 0, in_shapes[0], f"{op}: output")
        shape_assign(in_shapes, 0, out_shapes[0], f"{op}: input 'data'")
        return shape_is_known(in_shapes[0])

    return infer


def _flip(op: str, axis: int) -> tuple[Any, Any]:
    def plan(name: str, attrs: NodeAttrs, shape: tuple[int, ...]) -> AxisMap:
        _image_shape(op, shape)
        axes = identity_axes(shape)
        axes[axis] = (AFFINE, shape[axis], -1, shape[axis] - 1, axes[axis][4])
        return axis_map(shape, axes)

    return plan, image_infer(op)


for _name, _axis, _what in (
    ("_image_flip_left_right", 1, "left to right (along the width axis)"),
    ("_image_flip_top_bottom", 0, "top to bottom (along the height axis)"),
):
    _plan_fn, _infer_fn = _flip(_name, _axis)
    register_layout_op(
        [_name],
        "_backward" + _name,
        None,
        _plan_fn,
        _infer_fn,
        f"Flips an image of shape (H x W x C), C in {{1, 3}}, {_what}.",
    )
