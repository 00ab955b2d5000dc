"""Pad (pad): widen each axis with a constant, the edge values, or a reflection.

    pad_width = (before_1, after_1, ..., before_N, after_N)
    constant: y[i] = x[i - before] inside, constant_value outside
    edge:     y[i] = x[clip(i - before, 0, n - 1)]
    reflect:  y[i] = x[|i - before| mirrored at n - 1]      (numpy.pad's 'reflect')

An AxisMap per axis (_axis_map.py); the gradient adds every output element to the input
element it copies (edge and reflect copy some several times). MXNet 1.9.1 pads only 4-d
and 5-d arrays and only their spatial axes; here any rank and any axis may be padded
(a superset). Reflection needs before, after < n, as in MXNet.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..base import InferError, Shape
from ..infer import shape_assign, shape_is_known, shape_str
from ..param import Parameter, field
from ..param import Shape as ShapeField
from ..registry import NodeAttrs
from ._axis_map import AFFINE, EDGE, REFLECT, AxisMap, axis_map, contiguous_strides
from ._layout import op_name, register_layout_op


class PadParam(Parameter):
    mode = field(
        str,
        enum={"constant": 0, "edge": 1, "reflect": 2},
        describe='Padding type to use. "constant" pads with `constant_value` "edge" pads '
        'using the edge values of the input array "reflect" pads by reflecting values with '
        "respect to the edges.",
    )
    pad_width = field(
        ShapeField,
        describe="Widths of the padding regions applied to the edges of each axis. It is a "
        "tuple of integer padding widths for each axis of the format ``(before_1, after_1, "
        "... , before_N, after_N)``. It should be of length ``2*N`` where ``N`` is the number "
        "of dimensions of the array.This is equivalent to pad_width in numpy.pad, but "
        "flattened.",
    )
    constant_value = field(
        float,
        default=0.0,
        describe="The value used for padding when `mode` is 'constant'.",
    )


def _widths(op: str, p: Any, shape: Shape) -> list[tuple[int, int]]:
    """(before, after) per axis, checked against the input shape."""
    w = tuple(p.pad_width)
    if len(w) != 2 * len(shape):
        raise InferError(
            f"{op}: parameter 'pad_width' {w} has {len(w)} entries; input 'data' "
            f"{shape_str(shape)} needs 2*{len(shape)} = {2 * len(shape)} (before, after) pairs"
        )
    if any(v < 0 for v in w):
        raise InferError(f"{op}: parameter 'pad_width' {w} has a negative width")
    pairs = [(w[2 * k], w[2 * k + 1]) for k in range(len(shape))]
    for k, ((before, after), n) in enumerate(zip(pairs, shape)):
        if n is None or not before + after or p.mode == "constant":
            continue
        if p.mode == "reflect" and max(before, after) >= n:
            raise InferError(
                f"{op}: mode 'reflect' pads axis {k} of input 'data' {shape_str(shape)} by "
                f"({before}, {after}); the widths must be smaller than the axis ({n})"
            )
        if n == 0:
            raise InferError(
                f"{op}: mode '{p.mode}' cannot pad the empty axis {k} of input 'data' "
                f"{shape_str(shape)}"
            )
    return pairs


def _pad_infer(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    op = op_name(attrs, "Pad")
    dshape, oshape = in_shapes[0], out_shapes[0]
    if dshape is None and oshape is None:
        return False
    if dshape is None:  # the input is the output less the widths
        dshape = (None,) * len(oshape)
    pairs = _widths(op, attrs.parsed, dshape)
    out = tuple(None if n is None else n + b + a for n, (b, a) in zip(dshape, pairs))
    shape_assign(out_shapes, 0, out, f"{op}: output")
    oshape = out_shapes[0]
    back = tuple(None if m is None else m - b - a for m, (b, a) in zip(oshape, pairs))
    if any(d is not None and d < 0 for d in back):
        raise InferError(f"{op}: output {shape_str(oshape)} is smaller than 'pad_width' allows")
    shape_assign(in_shapes, 0, back, f"{op}: input 'data'")
    _widths(op, attrs.parsed, in_shapes[0])
    return shape_is_known(in_shapes[0])


def _pad_plan(op: str, attrs: NodeAttrs, shape: tuple[int, ...]) -> AxisMap:
    p = attrs.parsed
    axes = []
    oshape = []
    for n, (b, a), s in zip(shape, _widths(op, p, shape), contiguous_strides(shape)):
        oshape.append(n + b + a)
        if p.mode == "constant" or not b + a:
            axes.append((AFFINE, n, 1, -b, s))  # j = i - before
        else:
            axes.append((EDGE if p.mode == "edge" else REFLECT, n, 0, b, s))
    return replace(axis_map(oshape, axes), fill=p.constant_value)


register_layout_op(
    ["Pad", "pad"],
    "_backward_Pad",
    PadParam,
    _pad_plan,
    _pad_infer,
    "Pads an input array with a constant or edge values of the array.\n\n"
    "`pad_width` is a tuple of integer padding widths for each axis of the format "
    "(before_1, after_1, ... , before_N, after_N), of length 2*N for an N-d input.\n\n"
    "x = [[1, 2], [3, 4]]\n"
    "pad(x, mode='constant', pad_width=(0, 0, 1, 1)) = [[0, 1, 2, 0], [0, 3, 4, 0]]\n"
    "pad(x, mode='edge', pad_width=(0, 0, 1, 1)) = [[1, 1, 2, 2], [3, 3, 4, 4]]\n"
    "pad(x, mode='reflect', pad_width=(0, 0, 1, 1)) = [[2, 1, 2, 1], [4, 3, 4, 3]]\n\n"
    "MXNet 1.9.1 pads only the last two or three axes of 4-d and 5-d arrays; nnvmpy pads "
    "any axis of any rank.",
)
