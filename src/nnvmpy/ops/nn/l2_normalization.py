"""L2Normalization: divide by the L2 norm over the instance, the channels or the positions.

    norm = sqrt(sum(x^2) + eps),   y = x / norm
    dx   = (dy - y * sum(dy * y)) / norm           (sums over the same elements)

    mode      sums over                       norm shape (a hidden output)
    instance  all axes but 0                  (N,)
    channel   axis 1                          x.shape without axis 1
    spatial   all axes after 1                (N, C)

Each norm is one row of the row kernels (_norm_rows.py): n elements `inner` apart, a
thread per row on the CPU. On a GPU that is a few long rows (instance) or rows whose
neighbours are far apart (spatial; channel with few positions), so there the sums go to
the reduction kernels and the scaling a thread per element (_l2_norm_cuda.py).
"""

from __future__ import annotations

import math
from typing import Any

from ...attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FInplaceOption,
    FListInputNames,
    FListOutputNames,
    FNumVisibleOutputs,
    TIsBackward,
)
from ...graph.grad import make_grad_node
from ...graph.node import NodeEntry
from ...infer import elemwise_type, shape_assign, shape_is_known
from ...kernel import parallel_for
from ...kernel.launch import NULL, is_gpu, req_code, store
from ...param import Parameter, field
from ...registry import NodeAttrs, register_op
from ._layer_util import check_ndim, via_float32
from ._norm_rows import row_axpby, row_dy_sums, row_scale_shift, row_sqdev


class L2NormalizationParam(Parameter):
    eps = field(float, default=1e-10, describe="A small constant for numerical stability.")
    mode = field(
        str,
        default="instance",
        enum={"channel": 1, "instance": 0, "spatial": 2},
        describe="Specify the dimension along which to compute L2 norm.",
    )


def _norm_shape(mode: str, shape: tuple[Any, ...]) -> tuple[Any, ...]:
    if mode == "instance":
        return shape[:1]
    if mode == "channel":
        return shape[:1] + shape[2:]
    return shape[:2]


def _infer_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    shape_assign(in_shapes, 0, out_shapes[0], "L2Normalization: input 'data'")
    shape_assign(out_shapes, 0, in_shapes[0], "L2Normalization: output 'output'")
    data, mode = in_shapes[0], attrs.parsed.mode
    if data is None:
        return False
    check_ndim(f"L2Normalization (mode={mode!r})", "data", data, 1 if mode == "instance" else 3)
    shape_assign(out_shapes, 1, _norm_shape(mode, data), "L2Normalization: output 'norm'")
    return all(shape_is_known(s) for s in [*in_shapes, *out_shapes])


def _layout(mode: str, shape: tuple[int, ...]) -> tuple[int, int, int]:
    """(rows, n, inner): the norms and where their elements lie."""
    shape = tuple(shape)  # the CUDA simulator's shapes do not slice
    if mode == "instance":
        return shape[0], math.prod(shape[1:]), 1
    if mode == "channel":
        inner = math.prod(shape[2:])
        return shape[0] * inner, shape[1], inner
    return shape[0] * shape[1], math.prod(shape[2:]), 1


@parallel_for
def _l2_forward_row(r, out, norm, x, n, inner, eps, m_out, m_norm):
    o = r // inner
    base = o * n * inner + (r - o * inner)
    s = math.sqrt(row_sqdev(x, base, n, inner, 0.0) + eps)
    store(norm, r, s, m_norm)
    if m_out != NULL:
        row_scale_shift(out, x, base, n, inner, 1.0 / s, 0.0, m_out)


@parallel_for
def _l2_backward_row(r, dx, dy, y, norm, n, inner, mode):
    o = r // inner
    base = o * n * inner + (r - o * inner)
    _sdy, sdyy = row_dy_sums(dy, y, y, base, n, inner, 0.0, False)
    inv = 1.0 / norm[r]
    row_axpby(dx, dy, y, base, n, inner, inv, -sdyy * inv, mode)


@via_float32
def _forward(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    x, p = inputs[0], attrs.parsed
    modes = [req_code("L2Normalization", r) for r in req]
    rows, n, inner = _layout(p.mode, x.shape)
    if rows == 0 or all(m == NULL for m in modes):
        return
    if is_gpu(ctx):
        from nnvmpy.ops.nn._l2_norm_cuda import forward_gpu

        forward_gpu(ctx, outputs, x, (rows, n, inner), p.eps, modes)
        return
    out, norm = (a.reshape(-1) for a in outputs)
    _l2_forward_row.launch(
        ctx, rows, out, norm, x.reshape(-1), n, inner, p.eps, *modes, work=x.size
    )


@via_float32
def _backward(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    dy, y, norm = inputs  # y, norm: the forward's outputs
    mode = req_code("_backward_L2Normalization", req[0])
    rows, n, inner = _layout(attrs.parsed.mode, y.shape)
    if rows == 0 or mode == NULL:
        return
    if is_gpu(ctx):
        from nnvmpy.ops.nn._l2_norm_cuda import backward_gpu

        backward_gpu(ctx, outputs[0], dy, y, norm, (rows, n, inner), mode)
        return
    flat = [a.reshape(-1) for a in (outputs[0], dy, y, norm)]
    _l2_backward_row.launch(ctx, rows, *flat, n, inner, mode, work=y.size)


def _gradient(node: Any, ograds: list[Any]) -> list[Any]:
    heads = [ograds[0], NodeEntry(node, 0), NodeEntry(node, 1)]
    return make_grad_node("_backward_L2Normalization", node, heads)


(
    register_op("L2Normalization")
    .describe(
        "Normalizes the input by its L2 norm: out = data / sqrt(sum(data ** 2) + eps).\n\n"
        "- instance: one norm per sample (all axes but the first)\n"
        "- channel: one norm per position, across axis 1\n"
        "- spatial: one norm per (sample, channel), across the axes after 1"
    )
    .set_attr_parser(L2NormalizationParam)
    .set_num_inputs(1)
    .set_num_outputs(2)
    .set_attr(FListInputNames, lambda attrs: ["data"])
    .set_attr(FListOutputNames, lambda attrs: ["output", "norm"])
    .set_attr(FNumVisibleOutputs, lambda attrs: 1)
    .set_attr(FInferShape, _infer_shape)
    .set_attr(FInferType, elemwise_type(1, 2))
    .set_attr(FInplaceOption, lambda attrs: [(0, 0)])  # a row is read whole first
    .set_attr(FCompute_cpu, _forward)
    .set_attr(FCompute_gpu, _forward)
    .set_attr(FGradient, _gradient)
    .add_argument("data", "NDArray-or-Symbol", "Input array to normalize.")
    .add_arguments(L2NormalizationParam.fields())
)
(
    register_op("_backward_L2Normalization")
    .describe("Backward of L2Normalization: inputs (dy, y, norm).")
    .set_attr_parser(L2NormalizationParam)
    .set_num_inputs(3)
    .set_num_outputs(1)
    .set_attr(TIsBackward, True)
    .set_attr(FInplaceOption, lambda attrs: [(0, 0)])  # the row sum is taken first
    .set_attr(FCompute_cpu, _backward)
    .set_attr(FCompute_gpu, _backward)
)
