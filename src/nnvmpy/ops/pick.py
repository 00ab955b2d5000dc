"""One element per row: pick (alias choose_element_0index) and fill_element_0index.

    pick(data, index, axis, keepdims, mode)   out[..., i, ...] = data[..., index[...], ...]
                                              (index has the output's shape)
    fill_element_0index(lhs, mhs, rhs)        out = lhs; out[r, rhs[r]] = mhs[r]
                                              (lhs viewed as rows of its last axis)

    d data = dy put back at the picked positions (_backward_pick); d index = 0
    d lhs = dy with the filled positions zeroed; d mhs = dy picked there; d rhs = 0

Indices outside the axis are clipped (or wrapped with pick's mode='wrap'); floats
truncate toward zero.
"""

from __future__ import annotations

from typing import Any

from .. import kernel
from ..attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FInplaceOption,
    FListInputNames,
    TIsBackward,
)
from ..base import InferError
from ..graph.grad import make_grad_node, make_node
from ..graph.node import Node, NodeEntry
from ..infer import shape_assign, shape_is_known, shape_str, type_assign
from ..kernel.launch import ADD, NULL, WRITE, flat, normalize_axis, req_code, split_axis
from ..kernel.launch import uindex as uidx
from ..param import Parameter, field
from ..registry import NodeAttrs, register_op
from ._index_kernels import half_as_float32, norm_index, pick_elems, pick_grad, zero


class PickParam(Parameter):
    axis = field(
        int,
        default=-1,
        optional=True,
        describe="int or None. The axis to picking the elements. Negative values means "
        "indexing from right to left. If is `None`, the elements in the index w.r.t the "
        "flattened input will be picked.",
    )
    keepdims = field(
        bool,
        default=False,
        describe="If true, the axis where we pick the elements is left in the result as "
        "dimension with size one.",
    )
    mode = field(
        str,
        default="clip",
        enum={"wrap": 0, "clip": 1},
        describe='Specify how out-of-bound indices behave. Default is "clip". "clip" means '
        "clip to the range. So, if all indices mentioned are too large, they are replaced "
        'by the index that addresses the last element along an axis. "wrap" means to wrap '
        "around.",
    )


def _name(attrs: NodeAttrs) -> str:
    return attrs.op.name if attrs.op is not None else "pick"


# --- pick --------------------------------------------------------------------------------------


def _pick_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    """out = data without `axis` (size 1 with keepdims); index = data without `axis` (out's
    shape), or with keepdims either that or out's shape (MXNet takes both); and back."""
    op, p = _name(attrs), attrs.parsed
    if p.axis is None:
        raise InferError(f"{op}: axis=None is not supported; pick needs an axis")
    keep = 1 if p.keepdims else 0
    if not keep:
        shape_assign(out_shapes, 0, in_shapes[1], f"{op}: output")
    out = out_shapes[0]
    if in_shapes[0] is None and out is not None:
        ax = normalize_axis(op, p.axis, (None,) * (len(out) + 1 - keep))
        shape_assign(in_shapes, 0, (*out[:ax], None, *out[ax + keep :]), f"{op}: input 'data'")
    data = in_shapes[0]
    if data is not None:
        ax = normalize_axis(op, p.axis, data)
        picked = (*data[:ax], *((1,) if keep else ()), *data[ax + 1 :])
        shape_assign(out_shapes, 0, picked, f"{op}: output")
        out = out_shapes[0]
        shape_assign(in_shapes, 0, (*out[:ax], data[ax], *out[ax + keep :]), f"{op}: input 'data'")
        data = in_shapes[0]
        index = in_shapes[1]
        like_out = keep and index is not None and len(index) == len(data)
        index_shape = out_shapes[0] if like_out else (*data[:ax], *data[ax + 1 :])
        shape_assign(in_shapes, 1, index_shape, f"{op}: input 'index'")
    if not keep:
        shape_assign(in_shapes, 1, out_shapes[0], f"{op}: input 'index'")
    return shape_is_known(in_shapes[0]) and shape_is_known(in_shapes[1])


def _data_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    """The output has input 0's dtype (and back); indices may have any dtype."""
    type_assign(out_types, 0, in_types[0], "output")
    type_assign(in_types, 0, out_types[0], "input 0")
    return out_types[0] is not None


def _axis_sizes(op: str, p: Any, shape: Any) -> tuple[int, int, int]:
    return split_axis(tuple(shape), normalize_axis(op, p.axis, tuple(shape)))


def _pick_forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    op, p, (data, idx), out = _name(attrs), attrs.parsed, inputs, outputs[0]
    mode = req_code(op, req[0])
    if mode == NULL or out.size == 0:
        return
    outer, n, inner = _axis_sizes(op, p, data.shape)
    if n == 0:
        raise InferError(f"{op}: cannot pick from the empty axis {p.axis} of {data.shape}")
    with half_as_float32(ctx, [out], [mode], [data, idx]) as ([o], [d, i]):
        args = (flat(o), flat(d), flat(i), n, inner, p.mode == "wrap", mode)
        pick_elems.launch(ctx, outer * inner, *args)


def _pick_backward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    p, (dy, idx), (dx, didx) = attrs.parsed, inputs, outputs
    name = "_backward_pick"
    if req_code(name, req[1]) == WRITE:
        zero(ctx, didx)
    mode = req_code(name, req[0])
    if mode == NULL:
        return
    if mode == WRITE:
        zero(ctx, dx)
    outer, n, inner = _axis_sizes(name, p, dx.shape)
    if outer * n * inner == 0:
        return
    with half_as_float32(ctx, [dx], [ADD], [dy, idx]) as ([d], [g, i]):
        args = (flat(d), flat(g), flat(i), n, inner, p.mode == "wrap")
        pick_grad.launch(ctx, outer * inner, *args)


def _pick_grad(node: Node, ograds: list[NodeEntry]) -> list[NodeEntry]:
    # d data = dy at the picked positions, 0 elsewhere; d index = 0
    return make_grad_node("_backward_pick", node, [ograds[0], node.inputs[1]])


_PICK_DOC = (
    "Picks elements from an input array according to the input indices along the given "
    "axis.\n\n"
    "Given an input array of shape (d0, d1) and indices of shape (i0,), the result will be "
    "an output array of shape (i0,) with output[i] = input[i, indices[i]]. By default, an "
    "index too large is replaced by the last index of the axis (the 'clip' mode); 'wrap' "
    "wraps indices around the axis. The index array has the output's shape.\n\n"
    "Example::\n\n"
    "    x = [[1., 2.], [3., 4.], [5., 6.]]\n"
    "    pick(x, y=[0, 1], axis=0) = [1., 4.]\n"
    "    pick(x, y=[0, 1, 0], axis=1) = [1., 4., 5.]\n"
    "    pick(x, y=[2, -1, -2], axis=1, mode='wrap') = [1., 4., 5.]\n"
    "    pick(x, y=[[1.], [0.], [2.]], axis=1, keepdims=True) = [[2.], [3.], [6.]]"
)

(
    register_op("pick")
    .describe(_PICK_DOC)
    .set_attr_parser(PickParam)
    .set_num_inputs(2)
    .set_num_outputs(1)
    .set_attr(FListInputNames, lambda attrs: ["data", "index"])
    .set_attr(FInferShape, _pick_shape)
    .set_attr(FInferType, _data_type)
    .set_attr(FCompute_cpu, _pick_forward)
    .set_attr(FCompute_gpu, _pick_forward)
    .set_attr(FGradient, _pick_grad)
    .add_argument("data", "NDArray-or-Symbol", "The input array")
    .add_argument("index", "NDArray-or-Symbol", "The index array")
    .add_arguments(PickParam.fields())
)
register_op("pick").add_alias("choose_element_0index")
(
    register_op("_backward_pick")
    .set_attr_parser(PickParam)
    .set_num_inputs(2)
    .set_num_outputs(2)
    .set_attr(TIsBackward, True)
    .set_attr(FCompute_cpu, _pick_backward)
    .set_attr(FCompute_gpu, _pick_backward)
)


# --- fill_element_0index -----------------------------------------------------------------------


@kernel.parallel_for
def _fill_rows(r, out, lhs, val, idx, m, mode):
    # row r of out = row r of lhs with element idx[r] replaced by val[r]
    j = norm_index(idx[r], m, False)
    base = r * m
    for k in range(m):
        v = val[r] if k == j else lhs[uidx(base + k)]
        if mode == 2:
            out[uidx(base + k)] += v
        else:
            out[uidx(base + k)] = v


def _fill_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    """out has lhs's shape (..., M); mhs and rhs have one entry per row: lhs.shape[:-1]."""
    op = "fill_element_0index"
    shape_assign(out_shapes, 0, in_shapes[0], f"{op}: output")
    shape_assign(in_shapes, 0, out_shapes[0], f"{op}: input 'lhs'")
    lhs = in_shapes[0]
    if lhs is None:
        return False
    if len(lhs) < 1:
        raise InferError(f"{op}: input 'lhs' must have at least 1 dimension, got {shape_str(lhs)}")
    for i, arg in ((1, "mhs"), (2, "rhs")):
        shape_assign(in_shapes, i, tuple(lhs[:-1]), f"{op}: input {arg!r}")
    return all(shape_is_known(s) for s in in_shapes)


def _fill_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    """lhs, mhs and the output share a dtype; rhs (the indices) may have any."""
    for _ in range(2):
        for j in (0, 1):
            type_assign(out_types, 0, in_types[j], "fill_element_0index: output")
            type_assign(in_types, j, out_types[0], f"fill_element_0index: input {j}")
    return out_types[0] is not None


def _fill_forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    (lhs, val, idx), out = inputs, outputs[0]
    mode = req_code("fill_element_0index", req[0])
    if mode == NULL or out.size == 0:
        return
    m = int(tuple(lhs.shape)[-1]) if len(lhs.shape) else 1
    with half_as_float32(ctx, [out], [mode], [lhs, val, idx]) as ([o], [x, v, i]):
        args = (flat(o), flat(x), flat(v), flat(i), m, mode)
        kernel_rows = int(out.size) // m
        _fill_rows.launch(ctx, kernel_rows, *args, work=int(out.size))


def _fill_grad(node: Node, ograds: list[NodeEntry]) -> list[NodeEntry]:
    # d lhs = dy with the filled positions zeroed; d mhs = dy there; d rhs = 0
    _lhs, mhs, rhs = node.inputs
    zeros = make_node("zeros_like", f"{node.name}_mhs_zeros", [mhs])
    dlhs = make_node(
        "fill_element_0index", f"{node.name}_backward_lhs", [ograds[0], NodeEntry(zeros, 0), rhs]
    )
    dmhs = make_node("pick", f"{node.name}_backward_mhs", [ograds[0], rhs], {"axis": "-1"})
    drhs = make_node("zeros_like", f"{node.name}_rhs_zero_grad", [rhs])
    return [NodeEntry(dlhs, 0), NodeEntry(dmhs, 0), NodeEntry(drhs, 0)]


(
    register_op("fill_element_0index")
    .describe(
        "Fill one element of each line(row for python, column for R/Julia) in lhs according "
        "to index indicated by rhs and values indicated by mhs. This function assume rhs "
        "uses 0-based index.\n\n"
        "The result is a copy of lhs (rows along its last axis) with out[r, rhs[r]] = mhs[r]; "
        "indices outside the row are clipped.\n\n"
        "Example::\n\n"
        "    fill_element_0index([[1., 2.], [3., 4.]], [9., 8.], [1, 0]) = [[1., 9.], [8., 4.]]"
    )
    .set_num_inputs(3)
    .set_num_outputs(1)
    .set_attr(FListInputNames, lambda attrs: ["lhs", "mhs", "rhs"])
    .set_attr(FInferShape, _fill_shape)
    .set_attr(FInferType, _fill_type)
    .set_attr(FInplaceOption, lambda attrs: [(0, 0)])
    .set_attr(FCompute_cpu, _fill_forward)
    .set_attr(FCompute_gpu, _fill_forward)
    .set_attr(FGradient, _fill_grad)
    .add_argument("lhs", "NDArray", "Left operand to the function.")
    .add_argument("mhs", "NDArray", "Middle operand to the function.")
    .add_argument("rhs", "NDArray", "Right operand to the function.")
)
