"""reverse (flip) and SwapAxis (swapaxes): permutations of an array's elements.

    reverse(x, axis)[..., i, ...] = x[..., n - 1 - i, ...]   along every axis listed
    SwapAxis(x, dim1, dim2) = x with axes dim1 and dim2 exchanged

Both are AxisMaps (_axis_map.py); a permutation's adjoint is its inverse, so the backward
ops undo the forward.
"""

from __future__ import annotations

from typing import Any

from ..base import InferError
from ..infer import shape_assign, shape_is_known
from ..param import Parameter, field
from ..param import Shape as ShapeField
from ..registry import NodeAttrs
from ._axis_map import AFFINE, AxisMap, axis_map, identity_axes
from ._layout import op_name, register_layout_op
from .shape import normalize_axis

# -- reverse / flip -----------------------------------------------------------------------------


class ReverseParam(Parameter):
    axis = field(ShapeField, describe="The axis which to reverse elements.")


def _reversed_axes(op: str, axis: tuple[int, ...], ndim: int) -> set[int]:
    axes = [normalize_axis(op, "axis", a, ndim) for a in axis]
    if len(set(axes)) != len(axes):
        raise InferError(f"{op}: parameter 'axis' {tuple(axis)} names an axis twice")
    return set(axes)


def _reverse_infer(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    op = op_name(attrs, "reverse")
    known = in_shapes[0] if in_shapes[0] is not None else out_shapes[0]
    if known is None:
        return False
    _reversed_axes(op, tuple(attrs.parsed.axis), len(known))
    shape_assign(out_shapes, 0, in_shapes[0], f"{op}: output")
    shape_assign(in_shapes, 0, out_shapes[0], f"{op}: input 'data'")
    return shape_is_known(in_shapes[0])


def _reverse_plan(op: str, attrs: NodeAttrs, shape: tuple[int, ...]) -> AxisMap:
    flipped = _reversed_axes(op, tuple(attrs.parsed.axis), len(shape))
    axes = identity_axes(shape)
    for k in flipped:  # j = n - 1 - i
        axes[k] = (AFFINE, shape[k], -1, shape[k] - 1, axes[k][4])
    return axis_map(shape, axes)


register_layout_op(
    ["reverse", "flip"],
    "_backward_reverse",
    ReverseParam,
    _reverse_plan,
    _reverse_infer,
    "Reverses the order of elements along the given axis (or axes) while preserving the "
    "array's shape.\n\n"
    "x = [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]\n"
    "reverse(x, axis=0) = [[5, 6, 7, 8, 9], [0, 1, 2, 3, 4]]\n"
    "reverse(x, axis=1) = [[4, 3, 2, 1, 0], [9, 8, 7, 6, 5]]",
)

# -- SwapAxis / swapaxes ------------------------------------------------------------------------


class SwapAxisParam(Parameter):
    dim1 = field(int, default=0, describe="the first axis to be swapped.")
    dim2 = field(int, default=0, describe="the second axis to be swapped.")


def _swapped(op: str, attrs: NodeAttrs, ndim: int) -> tuple[int, int]:
    p = attrs.parsed
    return normalize_axis(op, "dim1", p.dim1, ndim), normalize_axis(op, "dim2", p.dim2, ndim)


def _swap(shape: Any, d1: int, d2: int) -> tuple[Any, ...]:
    out = list(shape)
    out[d1], out[d2] = out[d2], out[d1]
    return tuple(out)


def _swap_infer(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    op = op_name(attrs, "SwapAxis")
    known = in_shapes[0] if in_shapes[0] is not None else out_shapes[0]
    if known is None:
        return False
    d1, d2 = _swapped(op, attrs, len(known))
    if in_shapes[0] is not None:
        shape_assign(out_shapes, 0, _swap(in_shapes[0], d1, d2), f"{op}: output")
    shape_assign(in_shapes, 0, _swap(out_shapes[0], d1, d2), f"{op}: input 'data'")
    return shape_is_known(in_shapes[0])


def _swap_plan(op: str, attrs: NodeAttrs, shape: tuple[int, ...]) -> AxisMap:
    d1, d2 = _swapped(op, attrs, len(shape))
    axes = identity_axes(shape)  # output axis d1 walks input axis d2 and vice versa
    axes[d1], axes[d2] = axes[d2], axes[d1]
    return axis_map(_swap(shape, d1, d2), axes)


register_layout_op(
    ["SwapAxis", "swapaxes"],
    "_backward_SwapAxis",
    SwapAxisParam,
    _swap_plan,
    _swap_infer,
    "Interchanges two axes of an array.\n\n"
    "x = [[1, 2, 3]]\n"
    "swapaxes(x, dim1=0, dim2=1) = [[1], [2], [3]]\n"
    "Negative axes count from the end.",
)
