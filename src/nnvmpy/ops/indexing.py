"""Row gathers by an index array: take, batch_take and Embedding, with their backward ops.

    take(a, indices, axis, mode)     out = a[:, ..., indices, ...]   (indices at `axis`)
                                     shape a.shape[:axis] + indices.shape + a.shape[axis+1:]
    batch_take(a, indices)           out[i] = a[i, indices[i]]       (a viewed as (-1, M))
    Embedding(data, weight)          out = weight[data]              shape data.shape + (D,)

    d a      = the output gradient added back at the taken rows (indices that repeat add up)
    d weight = likewise for Embedding; indices and `data` get zero gradients

Out-of-range indices are clipped (mode 'clip', Embedding, batch_take) or wrapped ('wrap');
with mode 'raise' an index outside [0, n) raises IndexOutOfRange (an IndexError) naming
the op, at the next wait on the output. The kernels live in _index_kernels.py.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FListInputNames,
    TIsBackward,
)
from ..base import IndexOutOfRange, InferError
from ..graph.grad import make_grad_node
from ..graph.node import Node, NodeEntry
from ..infer import shape_assign, shape_is_known, shape_str, type_assign
from ..kernel.launch import ADD, NULL, WRITE, flat, is_gpu, normalize_axis, req_code, split_axis
from ..param import Parameter, field
from ..registry import NodeAttrs, register_op
from ._index_kernels import (
    gather_rows,
    half_as_float32,
    has_bad_index,
    pick_elems,
    scatter_add_rows,
    zero,
)
from .init import DTYPES


class TakeParam(Parameter):
    axis = field(
        int,
        default=0,
        describe="The axis of input array to be taken. For input tensor of rank r, it could "
        "be in the range of [-r, r-1]",
    )
    mode = field(
        str,
        default="clip",
        enum={"raise": 0, "wrap": 1, "clip": 2},
        describe='Specify how out-of-bound indices bahave. Default is "clip". "clip" means '
        "clip to the range. So, if all indices mentioned are too large, they are replaced "
        'by the index that addresses the last element along an axis. "wrap" means to wrap '
        'around. "raise" means to raise an error when index out of range.',
    )


class EmbeddingParam(Parameter):
    input_dim = field(int, lower_bound=1, describe="Vocabulary size of the input indices.")
    output_dim = field(int, lower_bound=1, describe="Dimension of the embedding vectors.")
    dtype = field(
        str,
        default="float32",
        enum=[d for d in DTYPES if d != "bool"],
        describe="Data type of weight.",
    )
    sparse_grad = field(
        bool,
        default=False,
        describe="Compute row_sparse gradient in the backward calculation. nnvmpy has no "
        "sparse storage: the gradient is dense either way.",
    )


def _name(attrs: NodeAttrs, default: str) -> str:
    return attrs.op.name if attrs.op is not None else default


def _dims(shape: tuple[Any, ...] | None) -> tuple[Any, ...] | None:
    return None if shape is None else tuple(shape)


# --- take ----------------------------------------------------------------------------------


def _take_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    """out = a[:axis] + indices + a[axis+1:], and back: a's other dims and indices from out."""
    op = _name(attrs, "take")
    data, idx, out = in_shapes[0], in_shapes[1], out_shapes[0]
    if data is None and out is not None and idx is not None:
        ax = normalize_axis(op, attrs.parsed.axis, (None,) * (len(out) - len(idx) + 1))
        shape_assign(in_shapes, 0, (*out[:ax], None, *out[ax + len(idx) :]), f"{op}: input 'a'")
        data = in_shapes[0]
    if data is None:
        return False
    ax = normalize_axis(op, attrs.parsed.axis, data)
    if idx is None and out is not None:
        shape_assign(
            in_shapes, 1, out[ax : ax + len(out) - len(data) + 1], f"{op}: input 'indices'"
        )
        idx = in_shapes[1]
    if idx is None:
        return False
    shape_assign(out_shapes, 0, (*data[:ax], *idx, *data[ax + 1 :]), f"{op}: output")
    out = out_shapes[0]
    shape_assign(in_shapes, 0, (*out[:ax], data[ax], *out[ax + len(idx) :]), f"{op}: input 'a'")
    shape_assign(in_shapes, 1, out[ax : ax + len(idx)], f"{op}: input 'indices'")
    return shape_is_known(in_shapes[0]) and shape_is_known(in_shapes[1])


def _first_input_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    """The output has input 0's dtype (and back); the indices may have any dtype."""
    type_assign(out_types, 0, in_types[0], "output")
    type_assign(in_types, 0, out_types[0], "input 0")
    return out_types[0] is not None


def check_indices(ctx: Any, op: str, idx: Any, n: int) -> None:
    """IndexOutOfRange naming op when an index (cast to int) is outside [0, n)."""
    if idx.size == 0:
        return
    if is_gpu(ctx):
        if has_bad_index(ctx, flat(idx), n):
            raise IndexOutOfRange(
                f"{op}: an index is out of bounds for an axis of size {n} "
                "(mode='raise' accepts 0 <= index < size)"
            )
        return
    cast = idx.astype(np.int64)
    wrong = (cast < 0) | (cast >= n)
    if wrong.any():
        raise IndexOutOfRange(
            f"{op}: index {int(cast[wrong].flat[0])} is out of bounds for an axis of size {n} "
            "(mode='raise' accepts 0 <= index < size)"
        )


def take(ctx: Any, out: Any, mode: int, data: Any, idx: Any, axis: int, index_mode: str,
         op: str = "take") -> None:  # fmt: skip
    """out (+)= take(data, idx, axis) with index_mode 'clip', 'wrap' or 'raise'."""
    if mode == NULL or out.size == 0:
        return
    outer, n, inner = split_axis(tuple(data.shape), normalize_axis(op, axis, data.shape))
    if n == 0:
        shape = shape_str(tuple(data.shape))
        raise IndexOutOfRange(f"{op}: cannot take from the empty axis {axis} of {shape}")
    if index_mode == "raise":
        check_indices(ctx, op, idx, n)
    with half_as_float32(ctx, [out], [mode], [data, idx]) as ([o], [d, i]):
        gather_rows(ctx, o, d, i, (outer, n, int(idx.size), inner), index_mode == "wrap", mode)


def take_backward(ctx: Any, da: Any, mode: int, dy: Any, idx: Any, axis: int, wrap: bool,
                  op: str = "_backward_take") -> None:  # fmt: skip
    """da (+)= the scatter-add of dy into the rows idx selected along axis."""
    if mode == NULL:
        return
    if mode == WRITE:
        zero(ctx, da)
    outer, n, inner = split_axis(tuple(da.shape), normalize_axis(op, axis, da.shape))
    if n == 0:
        return
    with half_as_float32(ctx, [da], [ADD], [dy, idx]) as ([d], [g, i]):
        scatter_add_rows(ctx, d, g, i, (outer, n, int(idx.size), inner), wrap)


def _take_forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    p = attrs.parsed
    take(ctx, outputs[0], req_code("take", req[0]), inputs[0], inputs[1], p.axis, p.mode)


def _take_backward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    p, (dy, idx), (da, didx) = attrs.parsed, inputs, outputs
    if req_code("_backward_take", req[1]) == WRITE:
        zero(ctx, didx)
    mode = req_code("_backward_take", req[0])
    take_backward(ctx, da, mode, dy, idx, p.axis, p.mode == "wrap")


def _take_grad(node: Node, ograds: list[NodeEntry]) -> list[NodeEntry]:
    # d a = ograd scattered back (added up) at the taken rows; d indices = 0
    return make_grad_node("_backward_take", node, [ograds[0], node.inputs[1]])


(
    register_op("take")
    .describe(
        "Takes elements from an input array along the given axis.\n\n"
        "Slices the input along `axis` at the positions in `indices`: the output has shape "
        "a.shape[:axis] + indices.shape + a.shape[axis+1:]. Out-of-range indices are "
        "clipped (mode 'clip'), wrapped around ('wrap') or raise an IndexError ('raise').\n\n"
        "Example::\n\n"
        "    x = [[1., 2.], [3., 4.], [5., 6.]]\n"
        "    take(x, [[0, 1], [1, 2]]) = [[[1., 2.], [3., 4.]], [[3., 4.], [5., 6.]]]\n"
        "    take(x, [0, 3], axis=0, mode='wrap') = [[1., 2.], [1., 2.]]"
    )
    .set_attr_parser(TakeParam)
    .set_num_inputs(2)
    .set_num_outputs(1)
    .set_attr(FListInputNames, lambda attrs: ["a", "indices"])
    .set_attr(FInferShape, _take_shape)
    .set_attr(FInferType, _first_input_type)
    .set_attr(FCompute_cpu, _take_forward)
    .set_attr(FCompute_gpu, _take_forward)
    .set_attr(FGradient, _take_grad)
    .add_argument("a", "NDArray-or-Symbol", "The input array.")
    .add_argument("indices", "NDArray-or-Symbol", "The indices of the values to be extracted.")
    .add_arguments(TakeParam.fields())
)
(
    register_op("_backward_take")
    .set_attr_parser(TakeParam)
    .set_num_inputs(2)
    .set_num_outputs(2)
    .set_attr(TIsBackward, True)
    .set_attr(FCompute_cpu, _take_backward)
    .set_attr(FCompute_gpu, _take_backward)
)


# --- batch_take ------------------------------------------------------------------------------


def _batch_take_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    """out has the indices' shape; a (..., M) has out.size rows of M."""
    shape_assign(out_shapes, 0, _dims(in_shapes[1]), "batch_take: output")
    shape_assign(in_shapes, 1, _dims(out_shapes[0]), "batch_take: input 'indices'")
    data, out = in_shapes[0], out_shapes[0]
    if data is None:
        return False
    if len(data) < 2:
        raise InferError(
            f"batch_take: input 'a' must have at least 2 dimensions, got {shape_str(data)}"
        )
    if not (shape_is_known(data) and shape_is_known(out)):
        return False
    rows = int(np.prod(data[:-1], dtype=np.int64))
    if rows != int(np.prod(out, dtype=np.int64)):
        raise InferError(
            f"batch_take: input 'indices' {shape_str(in_shapes[1])} must have one index per row "
            f"of 'a' {shape_str(data)}: {rows} elements"
        )
    return True


def _batch_take_forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    (data, idx), out = inputs, outputs[0]
    mode = req_code("batch_take", req[0])
    if mode == NULL or out.size == 0:
        return
    m = int(tuple(data.shape)[-1])
    with half_as_float32(ctx, [out], [mode], [data, idx]) as ([o], [d, i]):
        pick_elems.launch(ctx, int(o.size), flat(o), flat(d), flat(i), m, 1, False, mode)


(
    register_op("batch_take")
    .describe(
        "Takes elements from a data batch: given a of shape (d0, d1) and indices of shape "
        "(d0,), output[i] = a[i, indices[i]]. Indices outside [0, d1) are clipped. "
        "(Deprecated in MXNet in favour of pick; like MXNet's, it has no gradient.)\n\n"
        "Example::\n\n"
        "    x = [[1., 2.], [3., 4.], [5., 6.]]\n"
        "    batch_take(x, [0, 1, 0]) = [1., 4., 5.]"
    )
    .set_num_inputs(2)
    .set_num_outputs(1)
    .set_attr(FListInputNames, lambda attrs: ["a", "indices"])
    .set_attr(FInferShape, _batch_take_shape)
    .set_attr(FInferType, _first_input_type)
    .set_attr(FCompute_cpu, _batch_take_forward)
    .set_attr(FCompute_gpu, _batch_take_forward)
    .add_argument("a", "NDArray-or-Symbol", "The input array")
    .add_argument("indices", "NDArray-or-Symbol", "The index array")
)


# --- Embedding -------------------------------------------------------------------------------


def _embedding_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    """weight is (input_dim, output_dim); out is data.shape + (output_dim,), and back."""
    p = attrs.parsed
    shape_assign(in_shapes, 1, (p.input_dim, p.output_dim), "Embedding: input 'weight'")
    if in_shapes[0] is not None:
        shape_assign(out_shapes, 0, (*in_shapes[0], p.output_dim), "Embedding: output")
    out = out_shapes[0]
    if out is not None:
        if not out or out[-1] not in (None, p.output_dim):
            raise InferError(
                f"Embedding: output has shape {shape_str(out)} but its last dimension must be "
                f"output_dim={p.output_dim}"
            )
        shape_assign(in_shapes, 0, tuple(out[:-1]), "Embedding: input 'data'")
        shape_assign(out_shapes, 0, (*out[:-1], p.output_dim), "Embedding: output")
    return shape_is_known(in_shapes[0])


def _embedding_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    """weight and output share a dtype: the one given, else `dtype`; data may be any."""
    dtype = in_types[1] if in_types[1] is not None else out_types[0]
    if dtype is None:
        dtype = np.dtype(attrs.parsed.dtype)
    type_assign(in_types, 1, dtype, "Embedding: input 'weight'")
    type_assign(out_types, 0, dtype, "Embedding: output")
    return True


def _embedding_forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    data, weight = inputs
    take(ctx, outputs[0], req_code("Embedding", req[0]), weight, data, 0, "clip", "Embedding")


def _embedding_backward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    (dy, data), (ddata, dweight) = inputs, outputs
    name = "_backward_Embedding"
    if req_code(name, req[0]) == WRITE:
        zero(ctx, ddata)
    take_backward(ctx, dweight, req_code(name, req[1]), dy, data, 0, False, name)


def _embedding_grad(node: Node, ograds: list[NodeEntry]) -> list[NodeEntry]:
    # d weight[i] = sum of the output gradient rows whose index is i; d data = 0
    return make_grad_node("_backward_Embedding", node, [ograds[0], node.inputs[0]])


(
    register_op("Embedding")
    .describe(
        "Maps integer indices to vector representations (embeddings).\n\n"
        "Looks up rows of `weight` (input_dim, output_dim) by the indices in `data`: the "
        "output has shape data.shape + (output_dim,). Indices outside [0, input_dim) are "
        "clipped. The gradient of weight is dense (nnvmpy has no row_sparse storage).\n\n"
        "Example::\n\n"
        "    weight = [[0., 1.], [2., 3.], [4., 5.]]\n"
        "    Embedding([[0, 2], [1, 1]], weight, input_dim=3, output_dim=2)\n"
        "        = [[[0., 1.], [4., 5.]], [[2., 3.], [2., 3.]]]"
    )
    .set_attr_parser(EmbeddingParam)
    .set_num_inputs(2)
    .set_num_outputs(1)
    .set_attr(FListInputNames, lambda attrs: ["data", "weight"])
    .set_attr(FInferShape, _embedding_shape)
    .set_attr(FInferType, _embedding_type)
    .set_attr(FCompute_cpu, _embedding_forward)
    .set_attr(FCompute_gpu, _embedding_forward)
    .set_attr(FGradient, _embedding_grad)
    .add_argument("data", "NDArray-or-Symbol", "The input array to the embedding operator.")
    .add_argument("weight", "NDArray-or-Symbol", "The embedding weight matrix.")
    .add_arguments(EmbeddingParam.fields())
)
(
    register_op("_backward_Embedding")
    .set_attr_parser(EmbeddingParam)
    .set_num_inputs(2)
    .set_num_outputs(2)
    .set_attr(TIsBackward, True)
    .set_attr(FCompute_cpu, _embedding_backward)
    .set_attr(FCompute_gpu, _embedding_backward)
)
