"""Register a quantized op that accumulates int8 x int8 (or uint8 x int8) into int32.

quantized_fully_connected and quantized_conv share everything but the product: inputs
data, weight[, bias], then min/max of each; outputs the int32 result and its range.
One int32 step is worth step(data) * step(weight) (see _common), so the output range is
+-(2^31 - 1) * step(data) * step(weight). An int8 bias is rescaled into that step,
rounded to nearest, and added.

The products are summed in float64, which is exact for 8-bit operands at any realistic
reduction length (< 2^53 / 2^15 terms): the operands are widened to float64 on the op's
device and multiplied by the float ops' own machinery (ops.matrix.gemm for FC; for conv
the im2col + GEMM driver the GPU's Convolution uses, whose kernels run on both devices),
then a kernel adds the bias and saturates to int32. BLAS / cuBLAS do the work on both
devices; only the six range scalars and the bias travel to the host (to rescale it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ... import kernel
from ...attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FListInputNames,
    FResourceRequest,
)
from ...base import InferError
from ...graph.grad import make_zero_grad_nodes
from ...infer import type_assign
from ...kernel import scratch, uindex
from ...kernel.launch import NULL, WRITE, is_gpu, req_code, run_rows, store
from ...registry import NodeAttrs, register_op
from ...resource import ResourceRequest
from .._host_staged import to_host
from .._index_kernels import to_ctx
from ._common import (
    INT8,
    INT32,
    UINT8,
    all_known,
    assign_range_shapes,
    assign_range_types,
    check_quantized,
    input_names,
    int32_range,
    step_size,
)
from ._kernels import copy_codes

Product = Callable[..., None]


def data_names(attrs: NodeAttrs) -> list[str]:
    return ["data", "weight"] if attrs.parsed.no_bias else ["data", "weight", "bias"]


def names(attrs: NodeAttrs) -> list[str]:
    return input_names(attrs, data_names(attrs))


@kernel.parallel_for
def saturate(i, acc, bias, has_bias, inner, n_f, out, mode):
    """out[i] (=|+=) acc[i] + bias[f], f = (i // inner) % n_f, saturated to int32."""
    v = acc[uindex(i)]
    if has_bias:
        v += bias[(i // inner) % n_f]
    v = min(max(v, -2147483648.0), 2147483647.0)
    store(out, i, int(v), mode)


@kernel.parallel_for
def put_range(i, lo_out, hi_out, lo, hi, mode_lo, mode_hi):
    store(lo_out, 0, lo, mode_lo)
    store(hi_out, 0, hi, mode_hi)


def empty_on(ctx: Any, shape: tuple[int, ...], dtype: Any) -> Any:
    """An uninitialised array of `shape` on ctx's device."""
    return scratch.empty(ctx, shape, dtype)


def widened(ctx: Any, name: str, x: Any) -> Any:
    """x as a float64 array of its shape on ctx's device."""
    out = empty_on(ctx, tuple(x.shape), np.float64)
    run_rows(ctx, name, copy_codes, x.size, x, out, WRITE)  # 8-bit codes: exact
    return out


def accumulate(name: str, product: Product, bias_axis: int) -> Any:
    """The FCompute of both devices around product(ctx, name, params, data64, weight64,
    acc, res): acc (the output's shape, float64) = the exact int sums."""

    def compute(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
        p = attrs.parsed
        modes = [req_code(name, r) for r in req]
        n = 2 if p.no_bias else 3
        data, weight, out = inputs[0], inputs[1], outputs[0]
        ranges = [to_host(ctx, r) if is_gpu(ctx) else r for r in inputs[n:]]
        step = step_size(data.dtype, ranges[0], ranges[1]) * step_size(INT8, ranges[2], ranges[3])
        lo, hi = (float(v[0]) for v in int32_range(step))
        run_rows(ctx, name, put_range, 1, *outputs[1:], lo, hi, *modes[1:])
        if modes[0] == NULL or out.size == 0:
            return
        acc = empty_on(ctx, tuple(out.shape), np.float64)
        product(ctx, name, p, widened(ctx, name, data), widened(ctx, name, weight), acc,
                ctx.requested[0])  # fmt: skip
        bias = acc  # a stand-in the kernel never reads
        if not p.no_bias:
            host_bias = to_host(ctx, inputs[2]) if is_gpu(ctx) else inputs[2]
            bias_step = step_size(INT8, ranges[4], ranges[5])
            rescaled = np.rint(host_bias.astype(np.float64) * (bias_step / step if step else 0.0))
            bias = to_ctx(ctx, rescaled)
        shape = tuple(out.shape)
        axis = bias_axis % len(shape)
        inner = int(np.prod(shape[axis + 1 :], dtype=np.int64))
        run_rows(ctx, name, saturate, out.size, acc, bias, not p.no_bias, inner, shape[axis], out,
                 modes[0])  # fmt: skip

    return compute


def register_int32_op(
    name: str, doc: str, param: Any, fp32_shape: Any, product: Product, bias_axis: int
) -> Any:
    """Register `name`; fp32_shape is the float op's FInferShape for data/weight/bias."""

    def shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
        n = len(data_names(attrs))
        if len(in_shapes) != 3 * n:
            raise_arity(name, attrs, len(in_shapes))
        head, out = in_shapes[:n], out_shapes[:1]
        fp32_shape(attrs, head, out)
        in_shapes[:n], out_shapes[:1] = head, out
        assign_range_shapes(name, names(attrs), in_shapes, out_shapes, n, 1)
        return all_known(in_shapes, out_shapes)

    def dtype(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
        n = len(data_names(attrs))
        check_quantized(name, "data", in_types[0], (INT8, UINT8))
        for i in range(1, n):
            check_quantized(name, data_names(attrs)[i], in_types[i], (INT8,))
            type_assign(in_types, i, INT8, f"{name}: input {data_names(attrs)[i]!r}")
        assign_range_types(name, names(attrs), in_types, out_types, n, 1)
        type_assign(out_types, 0, INT32, f"{name}: output 0")
        return in_types[0] is not None

    compute = accumulate(name, product, bias_axis)
    op = (
        register_op(name)
        .describe(doc)
        .set_attr_parser(param)
        .set_num_inputs(lambda attrs: 3 * len(data_names(attrs)))
        .set_num_outputs(3)
        .set_attr(FListInputNames, names)
        .set_attr(FInferShape, shape)
        .set_attr(FInferType, dtype)
        .set_attr(FResourceRequest, lambda attrs: [ResourceRequest.kTempSpace])
        .set_attr(FCompute_cpu, compute)
        .set_attr(FCompute_gpu, compute)
        .set_attr(FGradient, make_zero_grad_nodes)
    )
    for arg, what in (("data", "int8 or uint8 input data"), ("weight", "int8 weight"),
                      ("bias", "int8 bias")):  # fmt: skip
        op.add_argument(arg, "NDArray-or-Symbol", what.capitalize() + ".")
    for arg in ("data", "weight", "bias"):
        for end in ("min", "max"):
            op.add_argument(
                f"{end}_{arg}", "NDArray-or-Symbol", f"{end.capitalize()}imum value of {arg}."
            )
    op.add_arguments(param.fields())
    return op


def raise_arity(name: str, attrs: NodeAttrs, got: int) -> None:
    raise InferError(f"{name}: expects {len(names(attrs))} inputs {names(attrs)}, got {got}")
