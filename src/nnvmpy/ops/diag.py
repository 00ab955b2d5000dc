"""diag: a diagonal taken out of an array, or a vector laid on one (numpy.diag/diagonal).

    1-d x of n:  y (n+|k|, n+|k|),  y[r, c] = x[min(r, c)] where c - r = k, else 0
    N-d x:       y = x's axes without axis1, axis2, then the diagonal:
                 y[..., d] = x[..., d + max(-k, 0) (axis1), ..., d + max(k, 0) (axis2), ...]

Taking a diagonal is an AxisMap (_axis_map.py): the diagonal axis walks stride(axis1) +
stride(axis2) from a base offset. Laying one on zeros (1-d forward, N-d backward) is
`embed`, one body for both devices: each output element reads the diagonal or is 0.
Each direction is the other's gradient.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from .. import kernel
from ..attrs import FCompute_cpu, FCompute_gpu, FGradient, FInferShape, FInferType, TIsBackward
from ..base import InferError, Shape
from ..graph.grad import ElemwiseGradUseNone
from ..infer import elemwise_type, shape_assign, shape_is_known, shape_str
from ..kernel.launch import NULL, flat, req_code
from ..param import Parameter, field
from ..registry import NodeAttrs, register_op
from ._axis_map import AFFINE, AxisMap, axis_map, contiguous_strides, gather
from ._index_kernels import half_as_float32
from ._layout import op_name
from .shape import normalize_axis


class DiagParam(Parameter):
    k = field(
        int,
        default=0,
        describe="Diagonal in question. The default is 0. Use k>0 for diagonals above the "
        "main diagonal, and k<0 for diagonals below the main diagonal. If input has shape "
        "(S0 S1) k must be between -S0 and S1",
    )
    axis1 = field(
        int,
        default=0,
        describe="The first axis of the sub-arrays of interest. Ignored when the input is a "
        "1-D array.",
    )
    axis2 = field(
        int,
        default=1,
        describe="The second axis of the sub-arrays of interest. Ignored when the input is a "
        "1-D array.",
    )


def _axes(op: str, p: Any, ndim: int) -> tuple[int, int]:
    a1 = normalize_axis(op, "axis1", p.axis1, ndim)
    a2 = normalize_axis(op, "axis2", p.axis2, ndim)
    if a1 == a2:
        raise InferError(f"{op}: axis1 ({p.axis1}) and axis2 ({p.axis2}) name the same axis {a1}")
    return a1, a2


def diag_shape(op: str, p: Any, shape: Shape) -> Shape:
    if len(shape) == 0:
        raise InferError(f"{op}: input 'data' must have at least one axis, got ()")
    if len(shape) == 1:
        side = None if shape[0] is None else shape[0] + abs(p.k)
        return (side, side)
    a1, a2 = _axes(op, p, len(shape))
    rest = tuple(d for i, d in enumerate(shape) if i not in (a1, a2))
    h, w = shape[a1], shape[a2]
    if h is None or w is None:
        return (*rest, None)
    length = min(h + min(p.k, 0), w - max(p.k, 0))
    if length < 0:
        raise InferError(
            f"{op}: diagonal k={p.k} lies outside the ({h}, {w}) matrices of input 'data' "
            f"{shape_str(shape)} (axes {a1}, {a2}); expected {-h} <= k <= {w}"
        )
    return (*rest, length)


def _diag_infer(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    op = op_name(attrs, "diag")
    if in_shapes[0] is None:
        return False
    shape_assign(out_shapes, 0, diag_shape(op, attrs.parsed, in_shapes[0]), f"{op}: output")
    return shape_is_known(in_shapes[0])


def extraction(shape: tuple[int, ...], k: int, a1: int, a2: int) -> AxisMap:
    """The AxisMap taking diagonal k of axes (a1, a2) of an array of `shape` (N >= 2)."""
    strides = contiguous_strides(shape)
    axes = [(AFFINE, n, 1, 0, strides[i]) for i, n in enumerate(shape) if i not in (a1, a2)]
    length = max(0, min(shape[a1] + min(k, 0), shape[a2] - max(k, 0)))
    axes.append((AFFINE, length, 1, 0, strides[a1] + strides[a2]))
    base = max(-k, 0) * strides[a1] + max(k, 0) * strides[a2]
    oshape = [row[1] for row in axes]
    return replace(axis_map(oshape, axes), base=base)


@kernel.parallel_for
def embed_elems(t, out, src, oshape, sstrides, a1, a2, k, mode):
    # out[t] (+)= src[other coordinates, d] on diagonal k of axes (a1, a2), else 0
    rem = t
    off = 0
    i1 = 0
    i2 = 0
    for ax in range(len(oshape) - 1, -1, -1):
        q = rem // oshape[ax]
        i = rem - q * oshape[ax]
        rem = q
        off += i * sstrides[ax]
        if ax == a1:
            i1 = i
        elif ax == a2:
            i2 = i
    if i2 - i1 == k:
        v = src[off + (i1 if k >= 0 else i2)]
        if mode == 2:
            out[t] += v
        else:
            out[t] = v
    elif mode != 2:
        out[t] = 0


def embed(name: str, ctx: Any, out: Any, req: Any, src: Any, a1: int, a2: int, k: int) -> None:
    """out (+)= zeros of out's shape with src laid on diagonal k of axes (a1, a2)."""
    mode = req_code(name, req)
    if mode == NULL or out.size == 0:
        return
    oshape = tuple(out.shape)
    # the source is out's other axes, then the diagonal (stride 1); a1, a2 contribute 0
    rest = iter(contiguous_strides(tuple(src.shape))[:-1])
    sstrides = tuple(0 if i in (a1, a2) else next(rest) for i in range(len(oshape)))
    with half_as_float32(ctx, [out], [mode], [src]) as (outs, ins):
        embed_elems.launch(
            ctx, out.size, flat(outs[0]), flat(ins[0]), oshape, sstrides, a1, a2, k, mode
        )


def _diag_forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    op, p, x = op_name(attrs, "diag"), attrs.parsed, inputs[0]
    if len(x.shape) == 1:
        embed(op, ctx, outputs[0], req[0], x, 0, 1, p.k)
    else:
        a1, a2 = _axes(op, p, len(x.shape))
        gather(op, ctx, outputs[0], req[0], x, extraction(tuple(x.shape), p.k, a1, a2))


def _diag_backward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    p, dy, dx = attrs.parsed, inputs[0], outputs[0]
    if len(dx.shape) == 1:  # dx = diagonal k of dy
        gather("_backward_diag", ctx, dx, req[0], dy, extraction(tuple(dy.shape), p.k, 0, 1))
    else:
        a1, a2 = _axes("diag", p, len(dx.shape))
        embed("_backward_diag", ctx, dx, req[0], dy, a1, a2, p.k)


(
    register_op("diag")
    .describe(
        "Extracts a diagonal or constructs a diagonal array.\n\n"
        "A 1-d input gives a 2-d array with the input on diagonal k (numpy.diag); an N-d "
        "input gives the diagonal k of the matrices spanned by axis1 and axis2, as a new "
        "last axis after the remaining axes (numpy.diagonal).\n\n"
        "x = [[1, 2, 3], [4, 5, 6]]\n"
        "diag(x) = [1, 5]\n"
        "diag(x, k=1) = [2, 6]\n"
        "diag([1, 2]) = [[1, 0], [0, 2]]"
    )
    .set_attr_parser(DiagParam)
    .set_num_inputs(1)
    .set_num_outputs(1)
    .set_attr(FInferShape, _diag_infer)
    .set_attr(FInferType, elemwise_type(1, 1))
    .set_attr(FCompute_cpu, _diag_forward)
    .set_attr(FCompute_gpu, _diag_forward)
    .set_attr(FGradient, ElemwiseGradUseNone("_backward_diag"))
    .add_argument("data", "NDArray-or-Symbol", "Input ndarray")
    .add_arguments(DiagParam.fields())
)
(  # inputs: (dy,); dx's shape from the forward node
    register_op("_backward_diag")
    .set_attr_parser(DiagParam)
    .set_num_inputs(1)
    .set_num_outputs(1)
    .set_attr(TIsBackward, True)
    .set_attr(FCompute_cpu, _diag_backward)
    .set_attr(FCompute_gpu, _diag_backward)
)
