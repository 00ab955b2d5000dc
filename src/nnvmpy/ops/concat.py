"""Joining and cutting along one axis: Concat, SliceChannel (split) and slice_axis.

An array is viewed as (outer, axis, inner) without copying, so all three (and their
gradients) are loops of one primitive, `copy_band`: copy a [begin, begin + length) band
of the axis from one array into another. NumPy slicing does it on the CPU, one
grid-stride kernel on the GPU.

    Concat:       y = [x_0 | x_1 | ...] along dim    dx_i = the band of dy that x_i filled
    SliceChannel: y_j = x[band j of n]               dx = [dy_0 | dy_1 | ...]
    slice_axis:   y = x[begin:end] along axis        dx = dy in the band, 0 elsewhere
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import kernel
from ..attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FListInputNames,
    FListOutputNames,
    TIsBackward,
)
from ..base import InferError, Shape
from ..graph.grad import ElemwiseGradUseNone
from ..infer import elemwise_type, merge_shapes, shape_assign, shape_is_known, shape_str
from ..kernel.elementwise import req_mode
from ..param import Parameter, field
from ..registry import NodeAttrs, register_op
from .matrix import bind_cuda, flat, is_cpu, shape_of, view
from .shape import normalize_axis

cuda: Any = None  # numba.cuda, bound before a launch (see matrix.bind_cuda)


@kernel.cuda_kernel
def _copy_band_cuda(dst, src, rows, cols, dst_ld, dst_off, src_ld, src_off, add):
    # dst[r*dst_ld + dst_off + c] (+)= src[r*src_ld + src_off + c]  for r < rows, c < cols
    for t in range(cuda.grid(1), rows * cols, cuda.gridsize(1)):
        r = t // cols
        c = t - r * cols
        if add:
            dst[r * dst_ld + dst_off + c] += src[r * src_ld + src_off + c]
        else:
            dst[r * dst_ld + dst_off + c] = src[r * src_ld + src_off + c]


def _split3(shape: tuple[int, ...], axis: int) -> tuple[int, int]:
    """(outer, inner) of the (outer, axis, inner) view of a C-contiguous array."""
    return math.prod(shape[:axis]), math.prod(shape[axis + 1 :])


def copy_band(
    ctx: Any, req: Any, dst: Any, dst_begin: int, src: Any, src_begin: int, length: int,
    outer: int, inner: int,
) -> None:  # fmt: skip
    """dst[:, dst_begin + l, :] (+)= src[:, src_begin + l, :] for l < length.

    Both arrays are seen as (outer, their own axis length, inner).
    """
    mode = req_mode("copy_band", req)
    if mode is None or length == 0 or outer * inner == 0:
        return
    n_dst, n_src = dst.size // (outer * inner), src.size // (outer * inner)
    if is_cpu(dst):
        d = view(dst, (outer, n_dst, inner))[:, dst_begin : dst_begin + length]
        s = view(src, (outer, n_src, inner))[:, src_begin : src_begin + length]
        if mode == "add":
            d += s
        else:
            np.copyto(d, s)
        return
    global cuda
    cuda = bind_cuda("copy_band")
    _copy_band_cuda.launch(
        ctx, outer * length * inner, flat(dst), flat(src), outer, length * inner,
        n_dst * inner, dst_begin * inner, n_src * inner, src_begin * inner, mode == "add",
    )  # fmt: skip


def _zero(ctx: Any, out: Any) -> None:
    if is_cpu(out):
        out[...] = 0
    else:
        from nnvmpy.ops.init import _fill

        _fill.launch(ctx, out, "write", 0.0)


def _op_name(attrs: NodeAttrs, default: str) -> str:
    return attrs.op.name if attrs.op is not None else default


# -- Concat -----------------------------------------------------------------------------------


class ConcatParam(Parameter):
    num_args = field(int, lower_bound=1, describe="Number of inputs to be concated.")
    dim = field(int, default=1, describe="the dimension to be concated.")


def _concat_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    op, dim = _op_name(attrs, "Concat"), attrs.parsed.dim
    known = [s for s in (*in_shapes, *out_shapes) if s is not None]
    if not known:
        return False
    axis = normalize_axis(op, "dim", dim, len(known[0]), "the inputs")
    common: Shape | None = None  # every shape with the concatenated axis unknown
    for i, s in enumerate([*in_shapes, *out_shapes]):
        slot = f"input 'arg{i}'" if i < len(in_shapes) else "output"
        if s is None:
            continue
        if len(s) != len(known[0]):  # else a shorter shape loses its last axis below
            raise InferError(
                f"{op}: {slot} has shape {shape_str(s)} but another has "
                f"{shape_str(known[0])}; all inputs must have the same number of dimensions"
            )
        try:
            common = merge_shapes(common, (*s[:axis], None, *s[axis + 1 :]))
        except InferError:
            raise InferError(
                f"{op}: {slot} has shape {shape_str(s)} but the other inputs have "
                f"{shape_str(common)}; all inputs must agree except along dim={dim}"
            ) from None
    assert common is not None
    sizes = [None if s is None else s[axis] for s in in_shapes]
    total = None if None in sizes else sum(sizes)  # type: ignore[arg-type]
    shape_assign(out_shapes, 0, (*common[:axis], total, *common[axis + 1 :]), f"{op}: output")
    out_total = out_shapes[0][axis]
    if out_total is not None and sizes.count(None) == 1:  # the one missing size is the rest
        rest = out_total - sum(d for d in sizes if d is not None)
        if rest < 0:
            raise InferError(f"{op}: the inputs are larger along dim={dim} than the output "
                             f"{shape_str(out_shapes[0])}")  # fmt: skip
        sizes[sizes.index(None)] = rest
    for i, d in enumerate(sizes):
        shape_assign(in_shapes, i, (*common[:axis], d, *common[axis + 1 :]), f"{op}: arg{i}")
    return all(shape_is_known(s) for s in (*in_shapes, *out_shapes))


def _bands(ctx: Any, req: list[Any], joined: Any, parts: list[Any], axis: int, join: bool) -> None:
    """Concatenate `parts` into `joined` (join) or cut `joined` into `parts` along axis."""
    outer, inner = _split3(shape_of(joined), axis)
    begin = 0
    for j, part in enumerate(parts):
        length = part.size // (outer * inner) if outer * inner else 0
        if join:
            copy_band(ctx, req[0], joined, begin, part, 0, length, outer, inner)
        else:
            copy_band(ctx, req[j], part, 0, joined, begin, length, outer, inner)
        begin += length


def _concat_forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    axis = normalize_axis("Concat", "dim", attrs.parsed.dim, outputs[0].ndim)
    _bands(ctx, req, outputs[0], inputs, axis, join=True)


def _concat_backward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    axis = normalize_axis("Concat", "dim", attrs.parsed.dim, inputs[0].ndim)
    _bands(ctx, req, inputs[0], outputs, axis, join=False)


def _num_args(attrs: NodeAttrs) -> int:
    return int(attrs.parsed.num_args)


(
    register_op("Concat")
    .describe(
        "Joins input arrays along a given axis (dim). All inputs must have the same "
        "shape except along dim; e.g. (2, 2) and (2, 3) along dim=1 give (2, 5)."
    )
    .set_attr_parser(ConcatParam)
    .set_key_var_num_args("num_args")
    .set_num_inputs(_num_args)
    .set_num_outputs(1)
    .set_attr(FListInputNames, lambda attrs: [f"arg{i}" for i in range(_num_args(attrs))])
    .set_attr(FInferShape, _concat_shape)
    .set_attr(FInferType, elemwise_type(-1, 1))
    .set_attr(FCompute_cpu, _concat_forward)
    .set_attr(FCompute_gpu, _concat_forward)
    .set_attr(FGradient, ElemwiseGradUseNone("_backward_Concat"))
    .add_argument("data", "NDArray-or-Symbol[]", "List of arrays to concatenate")
    .add_arguments(ConcatParam.fields())
)

register_op("Concat").add_alias("concat")
(  # inputs (dy,) -> one gradient per forward input; shapes from the forward node
    register_op("_backward_Concat")
    .set_attr_parser(ConcatParam)
    .set_num_inputs(1)
    .set_num_outputs(_num_args)
    .set_attr(TIsBackward, True)
    .set_attr(FCompute_cpu, _concat_backward)
    .set_attr(FCompute_gpu, _concat_backward)
)

# -- SliceChannel -----------------------------------------------------------------------------


class SliceChannelParam(Parameter):
    num_outputs = field(
        int,
        lower_bound=1,
        describe="Number of splits. Note that this should evenly divide the length of the `axis`.",
    )
    axis = field(int, default=1, describe="Axis along which to split.")
    squeeze_axis = field(
        bool,
        default=False,
        describe="If true, Removes the axis with length 1 from the shapes of the output "
        "arrays. **Note** that setting `squeeze_axis` to ``true`` removes axis with length 1 "
        "only along the `axis` which it is split. Also `squeeze_axis` can be set to ``true`` "
        "only if ``input.shape[axis] == num_outputs``.",
    )


def _slice_channel_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    p, op = attrs.parsed, _op_name(attrs, "SliceChannel")
    n, data = p.num_outputs, in_shapes[0]
    ndim = len(data) if data is not None else None
    for o in out_shapes:
        if ndim is None and o is not None:
            ndim = len(o) + (1 if p.squeeze_axis else 0)
    if ndim is None:
        return False
    axis = normalize_axis(op, "axis", p.axis, ndim)
    parts = list(out_shapes)  # every output as the (unsqueezed) part of the input it is
    if p.squeeze_axis:
        parts = [None if o is None else (*o[:axis], 1, *o[axis:]) for o in out_shapes]
    part: Shape | None = None
    if data is not None:
        d = data[axis]
        if d is not None and d % n:
            raise InferError(
                f"{op}: cannot split axis {axis} of input 'data' {shape_str(data)} into "
                f"num_outputs={n} equal parts: {d} is not a multiple of {n}"
            )
        part = (*data[:axis], None if d is None else d // n, *data[axis + 1 :])
    for j, o in enumerate(parts):
        try:
            part = merge_shapes(part, o)
        except InferError:
            raise InferError(
                f"{op}: output 'output{j}' has shape {shape_str(out_shapes[j])} "
                f"but {shape_str(part)} was inferred from the input"
            ) from None
    assert part is not None
    if p.squeeze_axis and part[axis] not in (None, 1):
        raise InferError(
            f"{op}: squeeze_axis=True needs input 'data' axis {axis} of length "
            f"num_outputs={n}, got {shape_str(data)}"
        )
    whole = (*part[:axis], None if part[axis] is None else part[axis] * n, *part[axis + 1 :])
    shape_assign(in_shapes, 0, whole, f"{op}: input 'data'")
    out = (*part[:axis], *part[axis + 1 :]) if p.squeeze_axis else part
    for j in range(n):
        shape_assign(out_shapes, j, out, f"{op}: output 'output{j}'")
    return shape_is_known(in_shapes[0])


def _slice_channel_forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    axis = normalize_axis("SliceChannel", "axis", attrs.parsed.axis, inputs[0].ndim)
    _bands(ctx, req, inputs[0], outputs, axis, join=False)


def _slice_channel_backward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    axis = normalize_axis("SliceChannel", "axis", attrs.parsed.axis, outputs[0].ndim)
    _bands(ctx, req, outputs[0], inputs, axis, join=True)


def _num_outputs(attrs: NodeAttrs) -> int:
    return int(attrs.parsed.num_outputs)


(
    register_op("SliceChannel")
    .describe(
        "Splits an array along an axis into num_outputs equal parts; e.g. (2, 6) with "
        "num_outputs=3 gives three (2, 2) arrays. squeeze_axis=True drops the split axis "
        "when each part has length 1 there."
    )
    .set_attr_parser(SliceChannelParam)
    .set_num_inputs(1)
    .set_num_outputs(_num_outputs)
    .set_attr(FListInputNames, lambda attrs: ["data"])
    .set_attr(FListOutputNames, lambda attrs: [f"output{i}" for i in range(_num_outputs(attrs))])
    .set_attr(FInferShape, _slice_channel_shape)
    .set_attr(FInferType, elemwise_type(1, -1))
    .set_attr(FCompute_cpu, _slice_channel_forward)
    .set_attr(FCompute_gpu, _slice_channel_forward)
    .set_attr(FGradient, ElemwiseGradUseNone("_backward_SliceChannel"))
    .add_argument("data", "NDArray-or-Symbol", "The input")
    .add_arguments(SliceChannelParam.fields())
)

register_op("SliceChannel").add_alias("split")
(  # inputs (dy_0, ..., dy_{n-1}) -> dx
    register_op("_backward_SliceChannel")
    .set_attr_parser(SliceChannelParam)
    .set_num_inputs(_num_outputs)
    .set_num_outputs(1)
    .set_attr(TIsBackward, True)
    .set_attr(FCompute_cpu, _slice_channel_backward)
    .set_attr(FCompute_gpu, _slice_channel_backward)
)

# -- slice_axis -------------------------------------------------------------------------------


class SliceAxisParam(Parameter):
    axis = field(int, describe="Axis along which to be sliced, supports negative indexes.")
    begin = field(
        int, describe="The beginning index along the axis to be sliced,  supports negative indexes."
    )
    end = field(
        int,
        optional=True,
        describe="The ending index along the axis to be sliced,  supports negative indexes.",
    )


def _slice_range(attrs: NodeAttrs, shape: Shape) -> tuple[int, int, int]:
    """(axis, begin, end) with negatives resolved; InferError naming the bad parameter."""
    p, op = attrs.parsed, "slice_axis"
    axis = normalize_axis(op, "axis", p.axis, len(shape))
    size = shape[axis]
    assert size is not None
    begin = p.begin + size if p.begin < 0 else p.begin
    end = size if p.end is None else (p.end + size if p.end < 0 else p.end)
    if not 0 <= begin < size:
        raise InferError(f"{op}: parameter 'begin' is {p.begin}, out of range for axis "
                         f"{axis} of length {size} in input 'data' {shape_str(shape)}")  # fmt: skip
    if not 0 < end <= size:
        raise InferError(f"{op}: parameter 'end' is {p.end}, out of range for axis "
                         f"{axis} of length {size} in input 'data' {shape_str(shape)}")  # fmt: skip
    if begin >= end:
        raise InferError(
            f"{op}: parameters 'begin' {p.begin} and 'end' {p.end} select nothing of "
            f"axis {axis} (length {size}); begin must come before end"
        )
    return axis, begin, end


def _slice_axis_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    data = in_shapes[0]
    if data is None:
        return False
    axis = normalize_axis("slice_axis", "axis", attrs.parsed.axis, len(data))
    length = None
    if data[axis] is not None:
        _, begin, end = _slice_range(attrs, data)
        length = end - begin
    shape_assign(out_shapes, 0, (*data[:axis], length, *data[axis + 1 :]), "slice_axis: output")
    out = out_shapes[0]
    shape_assign(in_shapes, 0, (*out[:axis], data[axis], *out[axis + 1 :]), "slice_axis: data")
    return shape_is_known(in_shapes[0])


def _slice_axis_forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    x = inputs[0]
    axis, begin, end = _slice_range(attrs, shape_of(x))
    outer, inner = _split3(shape_of(x), axis)
    copy_band(ctx, req[0], outputs[0], 0, x, begin, end - begin, outer, inner)


def _slice_axis_backward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    # dx = dy inside [begin, end) of axis, 0 elsewhere (with req='add' only the band changes)
    dx = outputs[0]
    mode = req_mode("_backward_slice_axis", req[0])
    if mode is None:
        return
    axis, begin, end = _slice_range(attrs, shape_of(dx))
    outer, inner = _split3(shape_of(dx), axis)
    if mode == "write":
        _zero(ctx, dx)
    copy_band(ctx, req[0], dx, begin, inputs[0], 0, end - begin, outer, inner)


(
    register_op("slice_axis")
    .describe(
        "Slices along a given axis: data[..., begin:end, ...]. begin and end may be "
        "negative (counted from the end); end=None means the length of the axis."
    )
    .set_attr_parser(SliceAxisParam)
    .set_num_inputs(1)
    .set_num_outputs(1)
    .set_attr(FInferShape, _slice_axis_shape)
    .set_attr(FInferType, elemwise_type(1, 1))
    .set_attr(FCompute_cpu, _slice_axis_forward)
    .set_attr(FCompute_gpu, _slice_axis_forward)
    .set_attr(FGradient, ElemwiseGradUseNone("_backward_slice_axis"))
    .add_argument("data", "NDArray-or-Symbol", "Source input")
    .add_arguments(SliceAxisParam.fields())
)

(  # inputs (dy,) -> dx with the forward input's shape
    register_op("_backward_slice_axis")
    .set_attr_parser(SliceAxisParam)
    .set_num_inputs(1)
    .set_num_outputs(1)
    .set_attr(TIsBackward, True)
    .set_attr(FCompute_cpu, _slice_axis_backward)
    .set_attr(FCompute_gpu, _slice_axis_backward)
)
