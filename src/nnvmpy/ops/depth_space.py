"""depth_to_space and space_to_depth: blocks of channels moved into space and back (NCHW).

With b = block_size, both are a reshape to 6-d, a transpose and a reshape back:

    depth_to_space: (N, C, H, W) -> (N, b, b, C/b^2, H, W) -> axes (0, 3, 4, 1, 5, 2)
                    -> (N, C/b^2, H*b, W*b)
    space_to_depth: (N, C, H, W) -> (N, C, H/b, b, W/b, b) -> axes (0, 3, 5, 1, 2, 4)
                    -> (N, C*b^2, H/b, W/b)

so each is an AxisMap over the 6-d output whose strides are the 6-d input's, permuted.
The two undo each other; the backward ops apply the forward map's adjoint.
"""

from __future__ import annotations

from typing import Any

from ..base import InferError, Shape
from ..infer import shape_assign, shape_is_known, shape_str
from ..param import Parameter, field
from ..registry import NodeAttrs
from ._axis_map import AFFINE, AxisMap, axis_map, contiguous_strides
from ._layout import op_name, register_layout_op


class DepthToSpaceParam(Parameter):
    block_size = field(int, lower_bound=1, describe="Blocks of [block_size. block_size] are moved")


def _check_4d(op: str, shape: Shape) -> None:
    if len(shape) != 4:
        raise InferError(f"{op}: input 'data' {shape_str(shape)} must be a 4-d (N, C, H, W) array")
    for k, d in enumerate(shape):
        if d == 0:
            raise InferError(f"{op}: input 'data' {shape_str(shape)} has an empty axis {k}")


def _divides(op: str, shape: Shape, axis: int, by: int, what: str) -> None:
    d = shape[axis]
    if d is not None and d % by:
        raise InferError(
            f"{op}: axis {axis} ({what}) of input 'data' {shape_str(shape)} is {d}, not a "
            f"multiple of {by}"
        )


def _scaled(d: int | None, mul: int, div: int) -> int | None:
    return None if d is None else d * mul // div


def _d2s_shape(op: str, b: int, shape: Shape) -> Shape:
    _check_4d(op, shape)
    _divides(op, shape, 1, b * b, "depth, block_size^2")
    n, c, h, w = shape
    return (n, _scaled(c, 1, b * b), _scaled(h, b, 1), _scaled(w, b, 1))


def _s2d_shape(op: str, b: int, shape: Shape) -> Shape:
    _check_4d(op, shape)
    _divides(op, shape, 2, b, "height, block_size")
    _divides(op, shape, 3, b, "width, block_size")
    n, c, h, w = shape
    return (n, _scaled(c, b * b, 1), _scaled(h, 1, b), _scaled(w, 1, b))


def _infer(forward: Any, backward: Any, default: str) -> Any:
    """Mutual inference: the output from the input, the input from the output."""

    def infer(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
        op = op_name(attrs, default)
        b = attrs.parsed.block_size
        if in_shapes[0] is not None:
            shape_assign(out_shapes, 0, forward(op, b, in_shapes[0]), f"{op}: output")
        if out_shapes[0] is not None:
            shape_assign(in_shapes, 0, backward(op, b, out_shapes[0]), f"{op}: input 'data'")
        return shape_is_known(in_shapes[0])

    return infer


def _permuted(out6: tuple[int, ...], in6: tuple[int, ...], perm: tuple[int, ...]) -> AxisMap:
    """out6[i] = in6[i permuted back]: output axis k walks input axis perm[k]."""
    strides = contiguous_strides(in6)
    return axis_map(out6, [(AFFINE, in6[p], 1, 0, strides[p]) for p in perm])


def _d2s_plan(op: str, attrs: NodeAttrs, shape: tuple[int, ...]) -> AxisMap:
    b = attrs.parsed.block_size
    n, c, h, w = shape
    cb = c // (b * b)
    return _permuted((n, cb, h, b, w, b), (n, b, b, cb, h, w), (0, 3, 4, 1, 5, 2))


def _s2d_plan(op: str, attrs: NodeAttrs, shape: tuple[int, ...]) -> AxisMap:
    b = attrs.parsed.block_size
    n, c, h, w = shape
    return _permuted((n, b, b, c, h // b, w // b), (n, c, h // b, b, w // b, b), (0, 3, 5, 1, 2, 4))


register_layout_op(
    ["depth_to_space"],
    "_backward_depth_to_space",
    DepthToSpaceParam,
    _d2s_plan,
    _infer(_d2s_shape, _s2d_shape, "depth_to_space"),
    "Rearranges (permutes) data from depth into blocks of spatial data; the reverse of "
    "space_to_depth. An input of shape (N, C, H, W) gives (N, C / block_size^2, "
    "H * block_size, W * block_size): reshape to (N, b, b, C / b^2, H, W), transpose to "
    "(0, 3, 4, 1, 5, 2), reshape to the output shape.",
)

register_layout_op(
    ["space_to_depth"],
    "_backward_space_to_depth",
    DepthToSpaceParam,
    _s2d_plan,
    _infer(_s2d_shape, _d2s_shape, "space_to_depth"),
    "Rearranges (permutes) blocks of spatial data into depth; the reverse of "
    "depth_to_space. An input of shape (N, C, H, W) gives (N, C * block_size^2, "
    "H / block_size, W / block_size): reshape to (N, C, H / b, b, W / b, b), transpose to "
    "(0, 3, 5, 1, 2, 4), reshape to the output shape.",
)
