"""LRN: local response normalisation across nearby channels (AlexNet).

    t_c = knorm + alpha / nsize * sum_{c' in W(c)} x_c'^2,    y_c = x_c * t_c^(-beta)
    W(c) = [c - nsize//2, c - nsize//2 + nsize) within [0, C)   (centred for odd nsize)

    dx_c' = dy_c' t_c'^(-beta)
            - 2 beta alpha / nsize * x_c' * sum_{c : c' in W(c)} dy_c x_c t_c^(-beta-1)

t is the hidden output tmp_norm (MXNet's name), which the backward reads. On the GPU each
work item is one position of one sample: its C channels, `inner` elements apart. The
backward first stores q_c = dy_c x_c t_c^(-beta-1) for its channels in temp space, then
sums q over the windows, so each pow is taken once. The CPU runs _lrn_cpu.py's kernels
(a span of positions per task, vector loops over it).
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
    FListInputNames,
    FListOutputNames,
    FNumVisibleOutputs,
    FResourceRequest,
    TIsBackward,
)
from ...graph.grad import make_grad_node
from ...graph.node import NodeEntry
from ...infer import elemwise_type, shape_assign, shape_is_known
from ...kernel import like, parallel_for
from ...kernel.launch import NULL, is_gpu, req_code, store, uindex
from ...param import Parameter, field
from ...registry import NodeAttrs, register_op
from ...resource import ResourceRequest
from ._layer_util import check_ndim, via_float32


class LRNParam(Parameter):
    alpha = field(
        float,
        default=1e-4,
        describe="The variance scaling parameter alpha in the LRN expression.",
    )
    beta = field(float, default=0.75, describe="The power parameter beta in the LRN expression.")
    knorm = field(float, default=2.0, describe="The parameter k in the LRN expression.")
    nsize = field(int, lower_bound=1, describe="normalization window width in elements.")


def _infer_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    for j in (0, 1):
        shape_assign(in_shapes, 0, out_shapes[j], "LRN: input 'data'")
    for j in (0, 1):
        shape_assign(out_shapes, j, in_shapes[0], f"LRN: output '{('output', 'tmp_norm')[j]}'")
    if in_shapes[0] is not None:
        check_ndim("LRN", "data", in_shapes[0], 2)
    return all(shape_is_known(s) for s in [*in_shapes, *out_shapes])


@parallel_for
def _lrn_forward_row(r, out, tmp, x, C, inner, nsize, salpha, knorm, beta, m_out, m_tmp):
    o = r // inner
    base = o * C * inner + (r - o * inner)
    h = nsize // 2
    zero = like(x[uindex(base)], 0.0)  # the parameters in x's type: float32 stays float32
    k, a, e = like(zero, knorm), like(zero, salpha), like(zero, -beta)
    for c in range(C):
        s = zero
        for w in range(max(c - h, 0), min(c - h + nsize, C)):
            v = x[uindex(base + w * inner)]
            s += v * v
        t = k + a * s
        j = uindex(base + c * inner)
        store(tmp, j, t, m_tmp)
        store(out, j, x[j] * math.pow(t, e), m_out)


@parallel_for
def _lrn_backward_row(r, dx, q, dy, x, tmp, C, inner, nsize, salpha, beta, mode):
    o = r // inner
    base = o * C * inner + (r - o * inner)
    h = nsize // 2
    zero = like(x[uindex(base)], 0.0)  # the parameters in x's type: float32 stays float32
    e, e1 = like(zero, -beta), like(zero, -beta - 1.0)
    two_ba = like(zero, 2.0 * beta * salpha)
    for c in range(C):
        j = uindex(base + c * inner)
        q[j] = dy[j] * x[j] * math.pow(tmp[j], e1)
    for c in range(C):  # c is in W(w) for w in [c + h - nsize + 1, c + h]
        s = zero
        for w in range(max(c + h - nsize + 1, 0), min(c + h + 1, C)):
            s += q[uindex(base + w * inner)]
        j = uindex(base + c * inner)
        store(dx, j, dy[j] * math.pow(tmp[j], e) - two_ba * x[j] * s, mode)


def _layout(shape: tuple[int, ...]) -> tuple[int, int, int]:
    """(positions, channels, elements between channels)."""
    shape = tuple(shape)  # the CUDA simulator's shapes do not slice
    inner = math.prod(shape[2:])
    return shape[0] * inner, shape[1], inner


@via_float32
def _forward(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    x, p = inputs[0], attrs.parsed
    modes = [req_code("LRN", r) for r in req]
    rows, C, inner = _layout(x.shape)
    if rows == 0 or C == 0 or all(m == NULL for m in modes):
        return
    out, tmp = (a.reshape(-1) for a in outputs)
    if not is_gpu(ctx):
        from nnvmpy.ops.nn import _lrn_cpu

        _lrn_cpu.forward(out, tmp, x.reshape(-1), C, inner, p, *modes)
        return
    args = (out, tmp, x.reshape(-1), C, inner, p.nsize, p.alpha / p.nsize, p.knorm, p.beta)
    _lrn_forward_row.launch(ctx, rows, *args, *modes, work=x.size * p.nsize)


@via_float32
def _backward(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    dy, x, tmp = inputs  # tmp: the forward's tmp_norm
    p, mode = attrs.parsed, req_code("_backward_LRN", req[0])
    rows, C, inner = _layout(x.shape)
    if rows == 0 or C == 0 or mode == NULL:
        return
    if not is_gpu(ctx):
        from nnvmpy.ops.nn import _lrn_cpu

        flat = [a.reshape(-1) for a in (outputs[0], dy, x, tmp)]
        _lrn_cpu.backward(*flat, C, inner, p, mode)
        return
    q = ctx.requested[0].get_space((x.size,), x.dtype)
    flat = [a.reshape(-1) for a in (outputs[0], q, dy, x, tmp)]
    scalars = (C, inner, p.nsize, p.alpha / p.nsize, p.beta, mode)
    _lrn_backward_row.launch(ctx, rows, *flat, *scalars, work=x.size * p.nsize)


def _gradient(node: Any, ograds: list[Any]) -> list[Any]:
    return make_grad_node("_backward_LRN", node, [ograds[0], node.inputs[0], NodeEntry(node, 1)])


(
    register_op("LRN")
    .describe(
        "Applies local response normalization to the input, across channels (axis 1).\n\n"
        "    out[n, c] = data[n, c] / (knorm + alpha / nsize * sum(data[n, c']^2))^beta\n\n"
        "where c' runs over the nsize channels centred on c (odd nsize)."
    )
    .set_attr_parser(LRNParam)
    .set_num_inputs(1)
    .set_num_outputs(2)
    .set_attr(FListInputNames, lambda attrs: ["data"])
    .set_attr(FListOutputNames, lambda attrs: ["output", "tmp_norm"])
    .set_attr(FNumVisibleOutputs, lambda attrs: 1)
    .set_attr(FInferShape, _infer_shape)
    .set_attr(FInferType, elemwise_type(1, 2))
    .set_attr(FCompute_cpu, _forward)
    .set_attr(FCompute_gpu, _forward)
    .set_attr(FGradient, _gradient)
    .add_argument("data", "NDArray-or-Symbol", "Input data to LRN")
    .add_arguments(LRNParam.fields())
)
(
    register_op("_backward_LRN")
    .describe("Backward of LRN: inputs (dy, data, tmp_norm).")
    .set_attr_parser(LRNParam)
    .set_num_inputs(3)
    .set_num_outputs(1)
    .set_attr(TIsBackward, True)
    .set_attr(FResourceRequest, lambda attrs: [ResourceRequest.kTempSpace])
    .set_attr(FCompute_cpu, _backward)
    .set_attr(FCompute_gpu, _backward)
)

__all__ = ["LRNParam"]
