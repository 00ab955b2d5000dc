"""quantized_embedding: Embedding lookup in an int8 weight; the weight's range passes
through to the output. Indices are rounded and clipped into [0, input_dim - 1], as
Embedding does."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...attrs import FCompute_cpu, FCompute_gpu, FGradient, FInferShape, FInferType, FListInputNames
from ...graph.grad import make_zero_grad_nodes
from ...infer import type_assign
from ...registry import NodeAttrs, register_op
from .._host_staged import host_compute
from ..indexing import EmbeddingParam, _embedding_shape
from ._common import F32, INT8, all_known, assign_range_shapes, assign_range_types, check_quantized

OP = "_contrib_quantized_embedding"
NAMES = ["data", "weight", "min_weight", "max_weight"]


def embedding_np(
    p: Any, data: np.ndarray, weight: np.ndarray, *ranges: np.ndarray
) -> list[np.ndarray]:
    rows = np.clip(np.rint(data.astype(np.float64)), 0, p.input_dim - 1).astype(np.int64)
    return [weight[rows], ranges[0].astype(F32), ranges[1].astype(F32)]


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


_kernel = host_compute(OP, embedding_np)
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
    .set_attr(FCompute_cpu, _kernel)
    .set_attr(FCompute_gpu, _kernel)
    .set_attr(FGradient, make_zero_grad_nodes)
    .add_argument("data", "NDArray-or-Symbol", "The input array to the embedding operator.")
    .add_argument("weight", "NDArray-or-Symbol", "The embedding weight matrix (int8).")
    .add_argument("min_weight", "NDArray-or-Symbol", "Minimum value of weight.")
    .add_argument("max_weight", "NDArray-or-Symbol", "Maximum value of weight.")
    .add_arguments(EmbeddingParam.fields())
)
