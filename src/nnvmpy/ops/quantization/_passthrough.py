"""Register a quantized op whose range passes through: (data, min, max) -> (out, min, max).

quantized_flatten and quantized_act change the codes (or only their shape) but not what
one code is worth, so min/max are copied to the outputs and the dtype is kept.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...attrs import FCompute_cpu, FCompute_gpu, FGradient, FInferShape, FInferType, FListInputNames
from ...graph.grad import make_zero_grad_nodes
from ...infer import shape_assign, type_assign
from ...registry import NodeAttrs, register_op
from .._host_staged import host_compute
from ._common import F32, all_known, check_quantized

NAMES = ["data", "min_data", "max_data"]
ShapeFn = Callable[[tuple[int, ...]], tuple[int, ...]]


def register_passthrough(
    name: str,
    doc: str,
    data_fn: Callable[[Any, np.ndarray], np.ndarray],
    out_shape: ShapeFn,
    param: Any = None,
) -> Any:
    """Register `name` with out = data_fn(params, data) and the range copied through."""

    def compute(p: Any, data: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> list[np.ndarray]:
        return [data_fn(p, data), lo.astype(F32), hi.astype(F32)]

    def shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
        for i in (1, 2):
            shape_assign(in_shapes, i, (1,), f"{name}: input {NAMES[i]!r}")
            shape_assign(out_shapes, i, (1,), f"{name}: output {i}")
        data = in_shapes[0]
        if data is not None and None not in data:
            shape_assign(out_shapes, 0, out_shape(tuple(data)), f"{name}: output 0")
        return all_known(in_shapes, out_shapes)

    def dtype(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
        check_quantized(name, "data", in_types[0])
        for i in (1, 2):
            type_assign(in_types, i, F32, f"{name}: input {NAMES[i]!r}")
            type_assign(out_types, i, F32, f"{name}: output {i}")
        if in_types[0] is None:
            return False
        return type_assign(out_types, 0, in_types[0], f"{name}: output 0")

    kernel = host_compute(name, compute)
    op = register_op(name).describe(doc)
    if param is not None:
        op.set_attr_parser(param)
    (
        op.set_num_inputs(3)
        .set_num_outputs(3)
        .set_attr(FListInputNames, lambda attrs: list(NAMES))
        .set_attr(FInferShape, shape)
        .set_attr(FInferType, dtype)
        .set_attr(FCompute_cpu, kernel)
        .set_attr(FCompute_gpu, kernel)
        .set_attr(FGradient, make_zero_grad_nodes)
        .add_argument("data", "NDArray-or-Symbol", "A ndarray/symbol of type `int8` or `uint8`")
        .add_argument("min_data", "NDArray-or-Symbol", "The minimum scalar value possibly "
                      "produced for the data")
        .add_argument("max_data", "NDArray-or-Symbol", "The maximum scalar value possibly "
                      "produced for the data")
    )  # fmt: skip
    if param is not None:
        op.add_arguments(param.fields())
    return op
