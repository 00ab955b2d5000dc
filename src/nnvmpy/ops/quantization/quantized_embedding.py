"""quantized_embedding: Embedding lookup in an int8 weight; the weight's range passes
through to the output. Indices are rounded to the nearest (ties to even) and clipped into
[0, input_dim - 1]; a NaN index reads row 0.

One body for both devices: a chunk of an output row per item on the CPU, one code per
item on the GPU (float16 indices go through a float32 copy on the CPU, which numba
cannot compute in).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import kernel
from ...attrs import FCompute_cpu, FCompute_gpu, FGradient, FInferShape, FInferType, FListInputNames
from ...graph.grad import make_zero_grad_nodes
from ...infer import type_assign
from ...kernel import uindex
from ...kernel.launch import NULL, req_code, run_rows, store
from ...registry import NodeAttrs, register_op
from .._index_kernels import half_as_float32
from ..indexing import EmbeddingParam, _embedding_shape
from ._common import INT8, all_known, assign_range_shapes, assign_range_types, check_quantized
from ._kernels import clamp_code, pass_range, row_chunks

OP = "_contrib_quantized_embedding"
NAMES = ["data", "weight", "min_weight", "max_weight"]


@kernel.parallel_for
def embedding_rows(t, out, data, weight, top, dim, chunk, nchunk, mode):
    """Item t: `chunk` codes of output row r = t // nchunk, copied from the weight row
    data[r] rounded to the nearest (ties to even) and clipped into [0, top] (NaN: 0)."""
    r = t // nchunk
    k0 = (t - r * nchunk) * chunk
    src = clamp_code(np.rint(np.float64(data[uindex(r)])), 0.0, top, 0) * dim
    dst = r * dim
    for k in range(k0, min(k0 + chunk, dim)):
        store(out, dst + k, weight[uindex(src + k)], mode)


def _compute(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    p = attrs.parsed
    modes = [req_code(OP, r) for r in req]
    data, weight, lo, hi = inputs
    if modes[0] != NULL:
        chunk, nchunk = row_chunks(ctx, p.output_dim)
        with half_as_float32(ctx, [], [], [data]) as (_, (indices,)):
            # out first: the CPU's serial cutoff counts its elements
            run_rows(ctx, OP, embedding_rows, data.size * nchunk, outputs[0], indices, weight,
                     float(p.input_dim - 1), p.output_dim, chunk, nchunk, modes[0])  # fmt: skip
    run_rows(ctx, OP, pass_range, 1, lo, hi, *outputs[1:], *modes[1:])


def _shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    head, out = in_shapes[:2], out_shapes[:1]
    _embedding_shape(attrs, head, out)
    in_shapes[:2], out_shapes[:1] = head, out
    assign_range_shapes(OP, NAMES, in_shapes, out_shapes, 2, 1)
    return all_known(in_shapes, out_shapes)


def _type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    check_quantized(OP, "weight", in_types[1], (INT8,))
    type_assign(in_types, 1, INT8, f"{OP}: input 'weight'")
    assign_range_types(OP, NAMES, in_types, out_types, 2, 1)
    type_assign(out_types, 0, INT8, f"{OP}: output 0")
    return in_types[0] is not None


op = (
    register_op(OP)
    .describe(
        "Maps integer indices to int8 vector representations (embeddings); the weight's "
        "min/max range passes through.\n\n"
        ".. Note::\n    This operator only supports forward propagation. DO NOT use it in "
        "training.\n"
    )
    .set_attr_parser(EmbeddingParam)
    .set_num_inputs(4)
    .set_num_outputs(3)
    .set_attr(FListInputNames, lambda attrs: list(NAMES))
    .set_attr(FInferShape, _shape)
    .set_attr(FInferType, _type)
    .set_attr(FCompute_cpu, _compute)
    .set_attr(FCompute_gpu, _compute)
    .set_attr(FGradient, make_zero_grad_nodes)
    .add_argument("data", "NDArray-or-Symbol", "The input array to the embedding operator.")
    .add_argument("weight", "NDArray-or-Symbol", "The embedding weight matrix (int8).")
    .add_argument("min_weight", "NDArray-or-Symbol", "Minimum value of weight.")
    .add_argument("max_weight", "NDArray-or-Symbol", "Maximum value of weight.")
    .add_arguments(EmbeddingParam.fields())
)
