"""Register a quantized op whose range passes through: (data, min, max) -> (out, min, max).

quantized_flatten and quantized_act change the codes (or only their shape) but not what
one code is worth, so min/max are copied to the outputs and the dtype is kept.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...attrs import FCompute_cpu, FCompute_gpu, FGradient, FInferShape, FInferType, FListInputNames
from ...graph.grad import make_zero_grad_nodes
from ...infer import shape_assign, type_assign
from ...kernel.launch import NULL, req_code, run_rows
from ...registry import NodeAttrs, register_op
from ._common import F32, all_known, check_quantized
from ._kernels import pass_range

NAMES = ["data", "min_data", "max_data"]
ShapeFn = Callable[[tuple[int, ...]], tuple[int, ...]]


def register_passthrough(
    name: str, doc: str, codes: Any, out_shape: ShapeFn, param: Any = None
) -> Any:
    """Register `name`: out[i] = codes(data[i]) element by element (`codes` a parallel_for
    body (i, x, out, mode), on both devices) and the range copied through."""

    def compute(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
        modes = [req_code(name, r) for r in req]
        data, lo, hi = inputs
        if modes[0] != NULL:
            run_rows(ctx, name, codes, data.size, data, outputs[0], modes[0])
        run_rows(ctx, name, pass_range, 1, lo, hi, *outputs[1:], *modes[1:])

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

    op = register_op(name).describe(doc)
    if param is not None:
        op.set_attr_parser(param)
    (
        op.set_num_inputs(3)
        .set_num_outputs(3)
        .set_attr(FListInputNames, lambda attrs: list(NAMES))
        .set_attr(FInferShape, shape)
        .set_attr(FInferType, dtype)
        .set_attr(FCompute_cpu, compute)
        .set_attr(FCompute_gpu, compute)
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
