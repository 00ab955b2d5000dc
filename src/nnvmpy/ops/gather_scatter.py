"""N-d gather and scatter: gather_nd, scatter_nd, _backward_gather_nd, _scatter_set_nd.

`indices` has shape (M, Y0, ..., Yk): column (:, y) holds the coordinates of one element
(or sub-array) along the first M axes of the indexed array X of shape (X0, ..., Xn):

    gather_nd(data, indices)              out[y, ...] = data[indices[:, y], ...]
                                          shape (Y0, ..., Yk, X_M, ..., X_n)
    scatter_nd(data, indices, shape)      out = 0; out[indices[:, y], ...] = data[y, ...]
    _backward_gather_nd(data, idx, shape) out = 0; out[indices[:, y], ...] += data[y, ...]
    _scatter_set_nd(lhs, rhs, idx, shape) out = lhs; out[indices[:, y], ...] = rhs[y, ...]

Indices may have any dtype (floats are truncated, as MXNet casts them). Negative
indices count from the end of their axis; one outside [-X_m, X_m) raises an IndexError
naming the op on the CPU (at the next wait, as every kernel error), and is clipped on
the GPU. scatter_nd with duplicate indices keeps one of the values (which one is
unspecified, as in MXNet); _backward_gather_nd adds them up, which is why it is the
gradient of gather_nd. NDArray's advanced indexing (x[[1, 2], ::2] and assignment to
it) runs on gather_nd and _scatter_set_nd.
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
    FInplaceOption,
    FListInputNames,
    TIsBackward,
)
from ..base import IndexOutOfRange, InferError
from ..graph.grad import make_grad_node, make_node, make_zero_grad_nodes
from ..graph.node import Node, NodeEntry
from ..infer import shape_assign, shape_is_known, shape_str, type_assign
from ..kernel import scratch
from ..kernel.elementwise import req_mode
from ..param import Parameter, field
from ..param import Shape as ShapeField
from ..registry import NodeAttrs, register_op
from .concat import _zero
from .elemwise_unary import _identity
from .matrix import bind_cuda, flat, is_cpu, shape_of

cuda: Any = None  # numba.cuda, bound before a launch (see matrix.bind_cuda)


class ScatterNDParam(Parameter):
    shape = field(ShapeField, describe="Shape of output.")


class OptionalShapeParam(Parameter):
    """`shape` may be left out where the output shape is known otherwise (the lhs of
    _scatter_set_nd; the forward data of _backward_gather_nd in a gradient graph)."""

    shape = field(ShapeField, default=(), describe="Shape of output.")


# -- shapes -----------------------------------------------------------------------------------


def _check_m(op: str, ishape: tuple[Any, ...], xshape: tuple[Any, ...]) -> int:
    if len(ishape) < 1:
        raise InferError(f"{op}: input 'indices' must have at least 1 dimension, got ()")
    m = ishape[0]
    if m is not None and m > len(xshape):
        raise InferError(
            f"{op}: input 'indices' {shape_str(ishape)} indexes {m} axes but the indexed "
            f"array {shape_str(xshape)} has only {len(xshape)}"
        )
    return m


def _gather_nd_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    data, idx = in_shapes
    if data is None or idx is None:
        return False
    m = _check_m("gather_nd", idx, data)
    if m is None:
        return False
    shape_assign(out_shapes, 0, (*idx[1:], *data[m:]), "gather_nd: output")
    return shape_is_known(data) and shape_is_known(idx)


def _scatter_shape(op: str, target: tuple[int, ...], in_shapes: list[Any], d: int, i: int) -> bool:
    """data (input d) has shape indices.shape[1:] + target[M:]; indices is input i."""
    idx = in_shapes[i]
    if idx is None:
        return False
    m = _check_m(op, idx, target)
    if m is None:
        return False
    want = (*idx[1:], *target[m:])
    try:
        shape_assign(in_shapes, d, want, f"{op}: input 'data'")
    except InferError:
        raise InferError(
            f"{op}: input {('data', 'rhs')[d]!r} has shape {shape_str(in_shapes[d])} but "
            f"indices {shape_str(idx)} and shape {shape_str(target)} need {shape_str(want)}"
        ) from None
    return shape_is_known(idx) and shape_is_known(in_shapes[d])


def _scatter_nd_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    op = attrs.op.name if attrs.op is not None else "scatter_nd"
    target = tuple(attrs.parsed.shape)
    if not target:  # _backward_gather_nd in a gradient graph: the shape comes from forward
        return False
    shape_assign(out_shapes, 0, target, f"{op}: output")
    return _scatter_shape(op, target, in_shapes, 0, 1)


def _scatter_set_nd_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    target = tuple(attrs.parsed.shape)
    if target:
        shape_assign(out_shapes, 0, target, "_scatter_set_nd: output")
    shape_assign(out_shapes, 0, in_shapes[0], "_scatter_set_nd: output")
    shape_assign(in_shapes, 0, out_shapes[0], "_scatter_set_nd: input 'lhs'")
    out = out_shapes[0]
    if out is None or not shape_is_known(out):
        return False
    return _scatter_shape("_scatter_set_nd", out, in_shapes, 1, 2)


def _value_type(value: int) -> Any:
    """FInferType: the output has the dtype of input `value`; indices may be any dtype."""

    def infer(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
        type_assign(out_types, 0, in_types[value], "output")
        type_assign(in_types, value, out_types[0], "input")
        if value == 1:  # _scatter_set_nd: lhs and rhs share the output's dtype
            type_assign(in_types, 0, out_types[0], "input 'lhs'")
            type_assign(out_types, 0, in_types[0], "output")
            type_assign(in_types, 1, out_types[0], "input 'rhs'")
        return out_types[0] is not None

    return infer


# -- kernels ----------------------------------------------------------------------------------


def _coordinates(op: str, indices: np.ndarray, shape: tuple[int, ...]) -> tuple[np.ndarray, ...]:
    """Per-axis integer coordinates with negatives wrapped; IndexOutOfRange when outside."""
    idx = indices.astype(np.int64, copy=False)
    coords = []
    for axis in range(idx.shape[0]):
        c = idx[axis]
        n = shape[axis]
        bad = (c < -n) | (c >= n)
        if bad.any():
            raise IndexOutOfRange(
                f"{op}: index {int(c[bad].flat[0])} is out of bounds for axis {axis} with size {n}"
            )
        coords.append(np.where(c < 0, c + n, c))
    return tuple(coords)


@kernel.cuda_kernel
def _gather_nd_cuda(out, data, idx, dshape, m, n_idx, inner, add):
    # out[y*inner + j] (+)= data[offset(idx[:, y])*inner + j]
    for t in range(cuda.grid(1), n_idx * inner, cuda.gridsize(1)):
        y = t // inner
        j = t - y * inner
        off = 0
        for a in range(m):
            v = int(idx[a * n_idx + y])
            n = dshape[a]
            if v < 0:
                v += n
            v = min(max(v, 0), n - 1)  # out of range: clipped on the GPU
            off = off * n + v
        if add:
            out[t] += data[off * inner + j]
        else:
            out[t] = data[off * inner + j]


@kernel.cuda_kernel
def _scatter_nd_cuda(out, data, idx, oshape, m, n_idx, inner, accumulate):
    # out[offset(idx[:, y])*inner + j] = (or atomically +=) data[y*inner + j]
    for t in range(cuda.grid(1), n_idx * inner, cuda.gridsize(1)):
        y = t // inner
        j = t - y * inner
        off = 0
        for a in range(m):
            v = int(idx[a * n_idx + y])
            n = oshape[a]
            if v < 0:
                v += n
            v = min(max(v, 0), n - 1)
            off = off * n + v
        if accumulate:
            cuda.atomic.add(out, off * inner + j, data[t])
        else:
            out[off * inner + j] = data[t]


def rows_fit(out: np.ndarray, data: np.ndarray, add: bool) -> bool:
    """Whether _gather_nd_cpu's row loops serve these arrays: C-contiguous, not empty,
    and (when adding) of a dtype numba adds (float16 and bool keep NumPy's loops)."""
    if not (out.flags.c_contiguous and data.flags.c_contiguous and out.size and data.size):
        return False
    return not add or (
        data.dtype == out.dtype and data.dtype.kind in "fiu" and data.dtype.itemsize > 2
    )


def _row_offsets(coords: tuple[np.ndarray, ...], shape: tuple[int, ...]) -> np.ndarray:
    """The flat row number, in the first len(coords) axes of `shape`, of each column."""
    if len(coords) == 1:
        return np.ascontiguousarray(coords[0].reshape(-1))
    return np.ravel_multi_index(tuple(c.reshape(-1) for c in coords), shape[: len(coords)])


def as_kernel_dtype(out: np.ndarray, data: np.ndarray, add: bool) -> tuple[np.ndarray, np.ndarray]:
    """Flat views the kernel takes: a copy moves bits, so any dtype goes as unsigned
    integers of its width (float16 and bool included)."""
    if add:
        return out.reshape(-1), data.reshape(-1)
    bits = np.dtype(f"u{out.dtype.itemsize}")
    return out.reshape(-1).view(bits), data.reshape(-1).view(bits)


def _split(indices_shape: tuple[int, ...], shape: tuple[int, ...]) -> tuple[int, int, int]:
    """(M, number of index columns, elements per gathered sub-array)."""
    m = indices_shape[0]
    return m, math.prod(indices_shape[1:]), math.prod(shape[m:])


def gather_nd(ctx: Any, out: Any, req: Any, data: Any, indices: Any, op: str = "gather_nd") -> None:
    mode = req_mode(op, req)
    if mode is None or out.size == 0:
        return
    if is_cpu(out):
        coords = _coordinates(op, indices, data.shape)
        if rows_fit(out, data, mode == "add"):
            from nnvmpy.ops import _gather_nd_cpu

            rows = _row_offsets(coords, data.shape)
            out_, data_ = as_kernel_dtype(out, data, mode == "add")
            _gather_nd_cpu.gather_rows(out_, data_, rows, out.size // rows.size, mode == "add")
            return
        src = data[coords].reshape(out.shape)
        if mode == "add":
            out += src
        else:
            np.copyto(out, src)
        return
    global cuda
    cuda = bind_cuda(op)
    dshape = shape_of(data)
    m, n_idx, inner = _split(shape_of(indices), dshape)
    _gather_nd_cuda.launch(
        ctx, out.size, flat(out), flat(data), flat(indices), dshape, m, n_idx, inner, mode == "add"
    )


def scatter_nd(
    ctx: Any, out: Any, req: Any, data: Any, indices: Any, accumulate: bool, op: str,
    base: Any = None,
) -> None:  # fmt: skip
    """out (+)= base (or 0) with data written in at indices (added up with accumulate)."""
    mode = req_mode(op, req)
    if mode is None:
        return
    if mode == "add" and not accumulate:
        # out += (base with data written in): build that in a temporary, then add it
        temp = _empty_like(ctx, out)
        scatter_nd(ctx, temp, "write", data, indices, False, op, base)
        _identity.launch(ctx, out, "add", temp)
        return
    if mode == "write":
        if base is None:
            _zero(ctx, out)
        elif base is not out:
            _identity.launch(ctx, out, "write", base)
    if is_cpu(out):
        coords = _coordinates(op, indices, out.shape)
        if accumulate and rows_fit(out, data, True):
            from nnvmpy.ops import _gather_nd_cpu
            from nnvmpy.ops.nn._layer_util import cpu_threads

            rows = _row_offsets(coords, out.shape)
            inner = out.size // max(math.prod(out.shape[: len(coords)]), 1)
            tasks = min(cpu_threads(), math.prod(out.shape[: len(coords)]))
            _gather_nd_cpu.scatter_add_rows(out.reshape(-1), data.reshape(-1), rows, inner, tasks)
            return
        src = data.reshape(coords[0].shape + out.shape[len(coords) :])
        if accumulate:
            np.add.at(out, coords, src)
        else:
            out[coords] = src
        return
    global cuda
    cuda = bind_cuda(op)
    oshape = shape_of(out)
    m, n_idx, inner = _split(shape_of(indices), oshape)
    _scatter_nd_cuda.launch(
        ctx, n_idx * inner, flat(out), flat(data), flat(indices), oshape, m, n_idx, inner,
        accumulate,
    )  # fmt: skip


def _empty_like(ctx: Any, out: Any) -> Any:
    if is_cpu(out):
        return np.empty_like(out)
    bind_cuda("scatter_nd")  # a clear error where CUDA is unusable
    return scratch.empty(ctx, shape_of(out), out.dtype)


def _gather_nd_forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    gather_nd(ctx, outputs[0], req[0], inputs[0], inputs[1])


def _scatter_nd_forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    scatter_nd(ctx, outputs[0], req[0], inputs[0], inputs[1], False, "scatter_nd")


def _backward_gather_nd_forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    scatter_nd(ctx, outputs[0], req[0], inputs[0], inputs[1], True, "_backward_gather_nd")


def _scatter_set_nd_forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    lhs, rhs, idx = inputs
    scatter_nd(ctx, outputs[0], req[0], rhs, idx, False, "_scatter_set_nd", base=lhs)


# -- gradients --------------------------------------------------------------------------------


def _gather_nd_grad(node: Node, ograds: list[NodeEntry]) -> list[NodeEntry]:
    # d data = the ograd added back at the gathered positions; indices get no gradient
    (ddata,) = make_grad_node("_backward_gather_nd", node, [ograds[0], node.inputs[1]], {})
    return [ddata, make_zero_grad_nodes(node, ograds)[1]]


def _scatter_nd_grad(node: Node, ograds: list[NodeEntry]) -> list[NodeEntry]:
    # d data = the ograd gathered at the positions the data went to
    g = make_node("gather_nd", f"{node.name}_backward", [ograds[0], node.inputs[1]])
    return [NodeEntry(g, 0), make_zero_grad_nodes(node, ograds)[1]]


def _scatter_set_nd_grad(node: Node, ograds: list[NodeEntry]) -> list[NodeEntry]:
    # dlhs = dy with the assigned positions zeroed; drhs = dy gathered there
    _lhs, rhs, idx = node.inputs
    zeros = make_node("zeros_like", f"{node.name}_rhs_zeros", [rhs])
    dlhs = make_node(
        "_scatter_set_nd", f"{node.name}_backward_lhs", [ograds[0], NodeEntry(zeros, 0), idx]
    )
    drhs = make_node("gather_nd", f"{node.name}_backward_rhs", [ograds[0], idx])
    didx = make_node("zeros_like", f"{node.name}_indices_zero_grad", [idx])
    return [NodeEntry(dlhs, 0), NodeEntry(drhs, 0), NodeEntry(didx, 0)]


def _in_place(attrs: NodeAttrs) -> list[tuple[int, int]]:
    return [(0, 0)]


(
    register_op("gather_nd")
    .describe(
        "Gathers elements or slices of data into an array of shape (Y0, ..., Yk, X_M, "
        "..., X_n) by the coordinates in indices, of shape (M, Y0, ..., Yk):\n"
        "output[y_0, ..., y_k, x_M, ..., x_n] = data[indices[0, y], ..., indices[M-1, y], "
        "x_M, ..., x_n]. Negative indices count from the end of their axis.\n\n"
        "Example: data = [[0, 1], [2, 3]], indices = [[1, 1, 0], [0, 1, 0]] -> [2, 3, 0]."
    )
    .set_num_inputs(2)
    .set_num_outputs(1)
    .set_attr(FListInputNames, lambda attrs: ["data", "indices"])
    .set_attr(FInferShape, _gather_nd_shape)
    .set_attr(FInferType, _value_type(0))
    .set_attr(FCompute_cpu, _gather_nd_forward)
    .set_attr(FCompute_gpu, _gather_nd_forward)
    .set_attr(FGradient, _gather_nd_grad)
    .add_argument("data", "NDArray-or-Symbol", "data")
    .add_argument("indices", "NDArray-or-Symbol", "indices")
)

for _name, _param, _compute, _grad, _doc in (
    (
        "scatter_nd",
        ScatterNDParam,
        _scatter_nd_forward,
        _scatter_nd_grad,
        "Scatters data into a zero array of the given shape: the inverse of gather_nd. "
        "With duplicate indices one of the values is kept (which one is unspecified).\n\n"
        "Example: data = [2, 3, 0], indices = [[1, 1, 0], [0, 1, 0]], shape = (2, 2) -> "
        "[[0, 0], [2, 3]].",
    ),
    (
        "_backward_gather_nd",
        OptionalShapeParam,
        _backward_gather_nd_forward,
        _scatter_nd_grad,
        "Accumulates data into a zero array of the given shape at indices: values at "
        "duplicate indices add up (the gradient of gather_nd).",
    ),
):
    (
        register_op(_name)
        .describe(_doc)
        .set_attr_parser(_param)
        .set_num_inputs(2)
        .set_num_outputs(1)
        .set_attr(FListInputNames, lambda attrs: ["data", "indices"])
        .set_attr(FInferShape, _scatter_nd_shape)
        .set_attr(FInferType, _value_type(0))
        .set_attr(FCompute_cpu, _compute)
        .set_attr(FCompute_gpu, _compute)
        .set_attr(FGradient, _grad)
        .add_argument("data", "NDArray-or-Symbol", "data")
        .add_argument("indices", "NDArray-or-Symbol", "indices")
        .add_arguments(_param.fields())
    )
# in a gradient graph _backward_gather_nd takes the forward data's shape (no `shape` given)
register_op("_backward_gather_nd").set_attr(TIsBackward, True)

(
    register_op("_scatter_set_nd")
    .describe(
        "Returns lhs with the elements (or slices) at indices set to rhs, as scatter_nd "
        "places them; with out=lhs it assigns in place (x[[0, 2], 1] = v)."
    )
    .set_attr_parser(OptionalShapeParam)
    .set_num_inputs(3)
    .set_num_outputs(1)
    .set_attr(FListInputNames, lambda attrs: ["lhs", "rhs", "indices"])
    .set_attr(FInferShape, _scatter_set_nd_shape)
    .set_attr(FInferType, _value_type(1))
    .set_attr(FInplaceOption, _in_place)
    .set_attr(FCompute_cpu, _scatter_set_nd_forward)
    .set_attr(FCompute_gpu, _scatter_set_nd_forward)
    .set_attr(FGradient, _scatter_set_nd_grad)
    .add_argument("lhs", "NDArray-or-Symbol", "source input")
    .add_argument("rhs", "NDArray-or-Symbol", "value to assign")
    .add_argument("indices", "NDArray-or-Symbol", "indices")
    .add_arguments(OptionalShapeParam.fields())
)
