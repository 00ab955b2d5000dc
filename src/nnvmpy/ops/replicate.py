"""tile and repeat: an array copied whole (tile) or element by element (repeat).

    tile(x, reps)[i] = x[i_k mod n_k]                  dx[j] = sum of dy over the tiles
    repeat(x, r, axis)[..., i, ...] = x[..., i div r, ...]   dx = sum of each run of r

Both are AxisMaps (_axis_map.py): the forward gathers, the backward sums each input
element's copies (its preimages) without atomics.
"""

from __future__ import annotations

import math
from typing import Any

from ..base import InferError, Shape
from ..infer import shape_assign, shape_is_known, shape_str
from ..param import Parameter, field
from ..param import Shape as ShapeField
from ..registry import NodeAttrs
from ._axis_map import AFFINE, REPEAT, TILE, AxisMap, axis_map, contiguous_strides, identity_axes
from ._layout import op_name, register_layout_op
from .shape import normalize_axis

# -- tile ---------------------------------------------------------------------------------------


class TileParam(Parameter):
    reps = field(
        ShapeField,
        describe="The number of times for repeating the tensor a. Each dim size of reps must "
        "be a positive integer. If reps has length d, the result will have dimension of "
        "max(d, a.ndim); If a.ndim < d, a is promoted to be d-dimensional by prepending new "
        "axes. If a.ndim > d, reps is promoted to a.ndim by pre-pending 1's to it.",
    )


def _aligned(op: str, reps: tuple[int, ...], shape: Shape) -> tuple[tuple[int, ...], Shape]:
    """(reps, shape) both promoted to max(len) dims with leading 1s; reps checked > 0."""
    bad = [r for r in reps if r <= 0]
    if bad:
        raise InferError(
            f"{op}: parameter 'reps' {tuple(reps)} has {bad[0]}; every entry must be a "
            "positive integer"
        )
    d = max(len(reps), len(shape))
    return (1,) * (d - len(reps)) + tuple(reps), (1,) * (d - len(shape)) + tuple(shape)


def tile_shape(op: str, reps: tuple[int, ...], shape: Shape) -> Shape:
    if not reps:
        return tuple(shape)
    r, s = _aligned(op, reps, shape)
    return tuple(None if n is None else n * k for n, k in zip(s, r))


def _tile_infer(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    op = op_name(attrs, "tile")
    if in_shapes[0] is None:
        return False
    out = tile_shape(op, tuple(attrs.parsed.reps), in_shapes[0])
    shape_assign(out_shapes, 0, out, f"{op}: output")
    return shape_is_known(in_shapes[0])


def _tile_plan(op: str, attrs: NodeAttrs, shape: tuple[int, ...]) -> AxisMap:
    reps = tuple(attrs.parsed.reps)
    if not reps:
        return axis_map(shape, identity_axes(shape))
    r, promoted = _aligned(op, reps, shape)
    s = [int(d or 0) for d in promoted]  # known: a real array's shape
    strides = contiguous_strides(s)
    axes = [
        (AFFINE, n, 1, 0, st) if k == 1 else (TILE, n, 0, 0, st) for n, k, st in zip(s, r, strides)
    ]
    return axis_map(tile_shape(op, reps, shape), axes)  # type: ignore[arg-type]


register_layout_op(
    ["tile"],
    "_backward_tile",
    TileParam,
    _tile_plan,
    _tile_infer,
    "Repeats the whole array multiple times.\n\n"
    "If reps has length d and the input has a.ndim dimensions, the result has "
    "max(d, a.ndim) dimensions: a shorter input gets leading axes of size 1, shorter reps "
    "leading 1s. tile(x=[[1, 2], [3, 4]], reps=(2, 3)) has shape (4, 6): "
    "[[1, 2, 1, 2, 1, 2], [3, 4, 3, 4, 3, 4], [1, 2, 1, 2, 1, 2], [3, 4, 3, 4, 3, 4]].",
)

# -- repeat -------------------------------------------------------------------------------------


class RepeatParam(Parameter):
    repeats = field(int, lower_bound=0, describe="The number of repetitions for each element.")
    axis = field(
        int,
        default=None,
        describe="The axis along which to repeat values. The negative numbers are "
        "interpreted counting from the backward. By default, use the flattened input array, "
        "and return a flat output array.",
    )


def _repeat_infer(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    op = op_name(attrs, "repeat")
    p = attrs.parsed
    dshape, oshape = in_shapes[0], out_shapes[0]
    if p.repeats == 0:  # MXNet: an empty 1-d array, whatever the axis
        if dshape is not None and p.axis is not None:
            normalize_axis(op, "axis", p.axis, len(dshape))
        shape_assign(out_shapes, 0, (0,), f"{op}: output")
        return shape_is_known(dshape)
    if p.axis is None:
        if dshape is None:
            return False
        total = math.prod(dshape) if shape_is_known(dshape) else None
        shape_assign(
            out_shapes, 0, (None if total is None else total * p.repeats,), f"{op}: output"
        )
        return shape_is_known(dshape)
    if dshape is None and oshape is None:
        return False
    ndim = len(dshape) if dshape is not None else len(oshape)
    a = normalize_axis(op, "axis", p.axis, ndim)
    if dshape is not None:
        d = dshape[a]
        out = (*dshape[:a], None if d is None else d * p.repeats, *dshape[a + 1 :])
        shape_assign(out_shapes, 0, out, f"{op}: output")
    oshape = out_shapes[0]
    if oshape[a] is not None and oshape[a] % p.repeats:
        raise InferError(
            f"{op}: output {shape_str(oshape)} has {oshape[a]} entries along axis {a}, not "
            f"a multiple of repeats={p.repeats}"
        )
    back = (*oshape[:a], None if oshape[a] is None else oshape[a] // p.repeats, *oshape[a + 1 :])
    shape_assign(in_shapes, 0, back, f"{op}: input 'data'")
    return shape_is_known(in_shapes[0])


def _repeat_plan(op: str, attrs: NodeAttrs, shape: tuple[int, ...]) -> AxisMap:
    p = attrs.parsed
    r = p.repeats
    if p.axis is None or r == 0:  # the flattened input
        n = math.prod(shape)
        return axis_map((n * r,), [(REPEAT, n, r, 0, 1)])
    a = normalize_axis(op, "axis", p.axis, len(shape))
    axes = identity_axes(shape)
    axes[a] = (REPEAT, shape[a], r, 0, axes[a][4])
    return axis_map((*shape[:a], shape[a] * r, *shape[a + 1 :]), axes)


register_layout_op(
    ["repeat"],
    "_backward_repeat",
    RepeatParam,
    _repeat_plan,
    _repeat_infer,
    "Repeats each element of an array `repeats` times along `axis` (by default of the "
    "flattened array, giving a 1-d result).\n\n"
    "repeat(x=[[1, 2], [3, 4]], repeats=2) = [1, 1, 2, 2, 3, 3, 4, 4]; with axis=1 it is "
    "[[1, 1, 2, 2], [3, 3, 4, 4]]. repeats=0 gives an empty 1-d array.",
)
