"""Indices to one-hot rows: one_hot and the legacy _onehot_encode (nd.onehot_encode).

    one_hot(indices, depth, on_value, off_value, dtype)
        out[..., d] = on_value if d == indices[...] else off_value,
        shape indices.shape + (depth,); an index outside [0, depth) gives a row of off_value
    _onehot_encode(indices, out)     the same with depth = out.shape[1], values 1 and 0,
                                     in out's shape and dtype (MXNet's legacy function)

Indices may have any dtype; floats truncate toward zero. Neither op has a gradient
(zero for every input, as in MXNet).
"""

from __future__ import annotations

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
)
from ..base import InferError
from ..graph.grad import make_zero_grad_nodes
from ..infer import shape_assign, shape_is_known, shape_str, type_assign
from ..kernel.launch import NULL, flat, is_gpu, req_code
from ..kernel.launch import uindex as uidx
from ..param import Parameter, field
from ..registry import NodeAttrs, register_op
from ._index_kernels import half_as_float32
from .init import DTYPES


class OneHotParam(Parameter):
    depth = field(int, lower_bound=0, describe="Depth of the one hot dimension.")
    on_value = field(
        float, default=1.0, describe="The value assigned to the locations represented by indices."
    )
    off_value = field(
        float,
        default=0.0,
        describe="The value assigned to the locations not represented by indices.",
    )
    dtype = field(
        str,
        default="float32",
        enum=[d for d in DTYPES if d != "bool"],
        describe="DType of the output",
    )


@kernel.parallel_for
def _one_hot_items(item, out, idx, depth, chunk, on, off, mode):
    # `chunk` consecutive elements of one row of out: on at column idx[row] (when in
    # range), off everywhere else. A whole row on the CPU (no division per element), one
    # element on a GPU (neighbouring threads write neighbouring elements; a thread per row
    # wrote rows of a 32k vocabulary a row apart)
    first = item * chunk
    i = first // depth
    j = int(idx[i])
    base = i * depth
    for k in range(first, first + chunk):
        v = on if k - base == j else off
        if mode == 2:
            out[uidx(k)] += v
        else:
            out[uidx(k)] = v


def one_hot_rows(ctx: Any, out: Any, mode: int, idx: Any, on: float, off: float) -> None:
    """out (idx.size, depth) (+)= the one-hot rows of idx."""
    if mode == NULL or out.size == 0:
        return
    depth = int(out.size) // int(idx.size)
    chunk = 1 if is_gpu(ctx) else depth
    with half_as_float32(ctx, [out], [mode], [idx]) as ([o], [i]):
        cast = np.dtype(o.dtype).type  # the values in the output's dtype, as C converts
        args = (flat(o), flat(i), depth, chunk, cast(on), cast(off), mode)
        _one_hot_items.launch(ctx, int(out.size) // chunk, *args, work=int(out.size))


def _one_hot_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    """out = indices.shape + (depth,), and back."""
    depth = attrs.parsed.depth
    if in_shapes[0] is not None:
        shape_assign(out_shapes, 0, (*in_shapes[0], depth), "one_hot: output")
    out = out_shapes[0]
    if out is not None:
        if not out or out[-1] not in (None, depth):
            raise InferError(
                f"one_hot: output has shape {shape_str(out)} but its last dimension must be "
                f"depth={depth}"
            )
        shape_assign(in_shapes, 0, tuple(out[:-1]), "one_hot: input 'indices'")
    return shape_is_known(in_shapes[0])


def _one_hot_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    type_assign(out_types, 0, np.dtype(attrs.parsed.dtype), "one_hot: output")
    return True


def _one_hot_forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    p = attrs.parsed
    mode = req_code("one_hot", req[0])
    one_hot_rows(ctx, outputs[0], mode, inputs[0], p.on_value, p.off_value)


(
    register_op("one_hot")
    .describe(
        "Returns a one-hot array.\n\n"
        "The locations represented by `indices` take value `on_value`, while all other "
        "locations take value `off_value`. The output has shape indices.shape + (depth,); "
        "an index outside [0, depth) gives a row of off_value.\n\n"
        "Examples::\n\n"
        "    one_hot([1, 0, 2, 0], 3) = [[0, 1, 0], [1, 0, 0], [0, 0, 1], [1, 0, 0]]\n"
        "    one_hot([1, 0, 2, 0], 3, on_value=8, off_value=1, dtype='int32')\n"
        "        = [[1, 8, 1], [8, 1, 1], [1, 1, 8], [8, 1, 1]]"
    )
    .set_attr_parser(OneHotParam)
    .set_num_inputs(1)
    .set_num_outputs(1)
    .set_attr(FListInputNames, lambda attrs: ["indices"])
    .set_attr(FInferShape, _one_hot_shape)
    .set_attr(FInferType, _one_hot_type)
    .set_attr(FCompute_cpu, _one_hot_forward)
    .set_attr(FCompute_gpu, _one_hot_forward)
    .set_attr(FGradient, make_zero_grad_nodes)
    .add_argument("indices", "NDArray-or-Symbol", "array of locations where to set on_value")
    .add_arguments(OneHotParam.fields())
)


# --- the legacy _onehot_encode -----------------------------------------------------------------


def _encode_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    """out has the shape of input 'out' (N, depth); the indices are (N,)."""
    shape_assign(out_shapes, 0, in_shapes[1], "_onehot_encode: output")
    shape_assign(in_shapes, 1, out_shapes[0], "_onehot_encode: input 'out'")
    out = out_shapes[0]
    if out is not None:
        if len(out) != 2:
            raise InferError(
                f"_onehot_encode: input 'out' must be 2-D (N, depth), got {shape_str(out)}"
            )
        shape_assign(in_shapes, 0, (out[0],), "_onehot_encode: input 'indices'")
    return shape_is_known(in_shapes[0]) and shape_is_known(in_shapes[1])


def _encode_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    type_assign(out_types, 0, in_types[1], "_onehot_encode: output")
    type_assign(in_types, 1, out_types[0], "_onehot_encode: input 'out'")
    return out_types[0] is not None


def _encode_forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    mode = req_code("_onehot_encode", req[0])
    one_hot_rows(ctx, outputs[0], mode, inputs[0], 1.0, 0.0)


(
    register_op("_onehot_encode")
    .describe(
        "One-hot encodes indices into an array of out's shape (N, depth): row i is 1 at "
        "column indices[i] and 0 elsewhere (MXNet's legacy function behind "
        "nd.onehot_encode; one_hot is the general op)."
    )
    .set_num_inputs(2)
    .set_num_outputs(1)
    .set_attr(FListInputNames, lambda attrs: ["indices", "out"])
    .set_attr(FInferShape, _encode_shape)
    .set_attr(FInferType, _encode_type)
    .set_attr(FInplaceOption, lambda attrs: [(1, 0)])  # `out` only gives shape and dtype
    .set_attr(FCompute_cpu, _encode_forward)
    .set_attr(FCompute_gpu, _encode_forward)
    .set_attr(FGradient, make_zero_grad_nodes)
    .add_argument("indices", "NDArray", "The indices (N,).")
    .add_argument("out", "NDArray", "An array of the output's shape (N, depth) and dtype.")
)
