"""Correlation: FlowNet's correlation layer, comparing patches of two feature maps.

data1, data2 (N, C, H, W), zero-padded by pad_size on each side. With k = kernel_size,
d = max_displacement, s1 = stride1, s2 = stride2 and, in padded coordinates,

    radius = d // s2, D = 2 radius + 1,  border = d + (k - 1) // 2
    top_h  = ceil((H + 2 pad - 2 border) / s1)          (top_w likewise)
    output (N, D*D, top_h, top_w):  for channel t = (ty, tx) and position (i, j)
        x1 = j s1 + d,  y1 = i s1 + d,  x2 = x1 + (tx - radius) s2,  y2 = y1 + (ty - radius) s2
        out = sum over c and the k x k window (h, w) of f(a, b) / (k k C)
        a = data1[c, y1 + h, x1 + w],  b = data2[c, y2 + h, x2 + w]
        f = a * b (is_multiply) or |a - b|

The gradient of |a - b| takes sign +1 where a >= b (as MXNet). Each output is one work
item. On the CPU the gradients of both inputs are gathered per (sample, channel) plane,
one work item adding into its own two planes only; on a GPU, whose N C plane items are
far too few (2048 for FlowNet), each input element is an item gathering the outputs that
read it (_correlation_cuda.py).
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
    TIsBackward,
)
from ...base import InferError
from ...graph.grad import ElemwiseGradUseIn
from ...infer import elemwise_type, shape_assign, shape_is_known, shape_str
from ...kernel import device_function, parallel_for
from ...kernel.launch import NULL, WRITE, is_gpu, req_code, store, uindex
from ...param import Parameter, field
from ...registry import NodeAttrs, register_op
from ._layer_util import via_float32


class CorrelationParam(Parameter):
    kernel_size = field(
        int, default=1, lower_bound=1, describe="kernel size for Correlation must be an odd number"
    )
    max_displacement = field(
        int, default=1, lower_bound=0, describe="Max displacement of Correlation "
    )
    stride1 = field(int, default=1, lower_bound=1, describe="stride1 quantize data1 globally")
    stride2 = field(
        int,
        default=1,
        lower_bound=1,
        describe="stride2 quantize data2 within the neighborhood centered around data1",
    )
    pad_size = field(int, default=0, lower_bound=0, describe="pad for Correlation")
    is_multiply = field(
        bool, default=True, describe="operation type is either multiplication or subduction"
    )


def geometry(p: Any, H: int, W: int) -> tuple[int, int, int, int]:
    """(radius, D, top_h, top_w) of the output for (H, W) inputs."""
    radius = p.max_displacement // p.stride2
    border = p.max_displacement + (p.kernel_size - 1) // 2
    top_h = math.ceil((H + 2 * p.pad_size - 2 * border) / p.stride1)
    top_w = math.ceil((W + 2 * p.pad_size - 2 * border) / p.stride1)
    return radius, 2 * radius + 1, top_h, top_w


def _infer_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    for i, j in ((0, 1), (1, 0)):
        shape_assign(in_shapes, i, in_shapes[j], f"Correlation: input 'data{i + 1}'")
    data = in_shapes[0]
    if data is None:
        return False
    if len(data) != 4:
        raise InferError(f"Correlation: inputs have shape {shape_str(data)}; expected (N, C, H, W)")
    if not shape_is_known(data):
        return False
    _, D, top_h, top_w = geometry(attrs.parsed, data[2], data[3])
    if top_h < 1 or top_w < 1:
        p = attrs.parsed
        raise InferError(
            f"Correlation: kernel_size={p.kernel_size} and max_displacement="
            f"{p.max_displacement} do not fit in inputs of shape {shape_str(data)} padded by "
            f"pad_size={p.pad_size}: the output would be {top_h}x{top_w}"
        )
    shape_assign(out_shapes, 0, (data[0], D * D, top_h, top_w), "Correlation: output 'output'")
    return True


@device_function
def _at(x, base, y, xx, H, W):
    """x[base + y * W + xx], or 0 in the padding."""
    if 0 <= y < H and 0 <= xx < W:
        return x[uindex(base + y * W + xx)]
    return 0.0


@parallel_for
def _corr_loop(i, out, a, b, C, H, W, th, tw, D, radius, k, d, s1, s2, pad, mult, mode):
    """Output element i = (n, t, ti, tj)."""
    per_t = th * tw
    nt = i // per_t
    q = i - nt * per_t
    n = nt // (D * D)
    t = nt - n * D * D
    ti = q // tw
    tj = q - ti * tw
    x1 = tj * s1 + d - pad
    y1 = ti * s1 + d - pad
    x2 = x1 + (t % D - radius) * s2
    y2 = y1 + (t // D - radius) * s2
    s = 0.0
    for c in range(C):
        base = (n * C + c) * H * W
        for h in range(k):
            for w in range(k):
                va = _at(a, base, y1 + h, x1 + w, H, W)
                vb = _at(b, base, y2 + h, x2 + w, H, W)
                s += va * vb if mult else abs(va - vb)
    store(out, i, s / (k * k * C), mode)


@device_function
def _add_at(g, base, y, xx, H, W, v):
    if 0 <= y < H and 0 <= xx < W:
        g[uindex(base + y * W + xx)] += v


@parallel_for
def _corr_grad_loop(
    nc, ga, gb, dy, a, b, C, H, W, th, tw, D, radius, k, d, s1, s2, pad, mult, m_a, m_b
):
    """Planes nc = (n, c) of d data1 (ga) and d data2 (gb)."""
    base = nc * H * W
    for e in range(H * W):
        if m_a == WRITE:
            ga[uindex(base + e)] = 0.0
        if m_b == WRITE:
            gb[uindex(base + e)] = 0.0
    n = nc // C
    scale = 1.0 / (k * k * C)
    for t in range(D * D):
        ox = (t % D - radius) * s2
        oy = (t // D - radius) * s2
        for ti in range(th):
            for tj in range(tw):
                gy = dy[uindex(((n * D * D + t) * th + ti) * tw + tj)] * scale
                x1 = tj * s1 + d - pad
                y1 = ti * s1 + d - pad
                for h in range(k):
                    for w in range(k):
                        va = _at(a, base, y1 + h, x1 + w, H, W)
                        vb = _at(b, base, y1 + oy + h, x1 + ox + w, H, W)
                        if mult:
                            da = gy * vb
                            db = gy * va
                        else:
                            da = gy if va >= vb else -gy
                            db = -da
                        if m_a != NULL:
                            _add_at(ga, base, y1 + h, x1 + w, H, W, da)
                        if m_b != NULL:
                            _add_at(gb, base, y1 + oy + h, x1 + ox + w, H, W, db)


def _scalars(attrs: NodeAttrs, shape: tuple[int, ...]) -> tuple[Any, ...]:
    p = attrs.parsed
    _, C, H, W = shape
    radius, D, th, tw = geometry(p, H, W)
    k, d = p.kernel_size, p.max_displacement
    return (C, H, W, th, tw, D, radius, k, d, p.stride1, p.stride2, p.pad_size, p.is_multiply)


@via_float32
def _forward(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    a, b = inputs
    out, mode = outputs[0], req_code("Correlation", req[0])
    if mode == NULL or out.size == 0:
        return
    flat = [x.reshape(-1) for x in (out, a, b)]
    work = out.size * a.shape[1] * attrs.parsed.kernel_size**2
    _corr_loop.launch(ctx, out.size, *flat, *_scalars(attrs, a.shape), mode, work=work)


@via_float32
def _backward(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    dy, a, b = inputs
    m_a, m_b = (req_code("_backward_Correlation", r) for r in req)
    if (m_a == NULL and m_b == NULL) or a.size == 0:
        return
    flat = [x.reshape(-1) for x in (*outputs, dy, a, b)]
    if is_gpu(ctx):  # an item per input element (_correlation_cuda.py says why)
        from nnvmpy.ops.nn._correlation_cuda import correlation_grad_gpu

        correlation_grad_gpu(ctx, flat, _scalars(attrs, a.shape), m_a, m_b)
        return
    N, C = a.shape[0], a.shape[1]
    work = dy.size * C * attrs.parsed.kernel_size**2
    _corr_grad_loop.launch(ctx, N * C, *flat, *_scalars(attrs, a.shape), m_a, m_b, work=work)


(
    register_op("Correlation")
    .describe(
        "Applies correlation to the inputs (FlowNet): every patch of data1 is compared with "
        "the patches of data2 displaced by up to max_displacement, by multiplication or "
        "absolute difference averaged over the patch and the channels; each displacement "
        "is one output channel."
    )
    .set_attr_parser(CorrelationParam)
    .set_num_inputs(2)
    .set_num_outputs(1)
    .set_attr(FListInputNames, lambda attrs: ["data1", "data2"])
    .set_attr(FInferShape, _infer_shape)
    .set_attr(FInferType, elemwise_type(2, 1))
    .set_attr(FCompute_cpu, _forward)
    .set_attr(FCompute_gpu, _forward)
    .set_attr(FGradient, ElemwiseGradUseIn("_backward_Correlation"))
    .add_argument("data1", "NDArray-or-Symbol", "Input data1 to the correlation.")
    .add_argument("data2", "NDArray-or-Symbol", "Input data2 to the correlation.")
    .add_arguments(CorrelationParam.fields())
)
(
    register_op("_backward_Correlation")
    .describe("Backward of Correlation: inputs (dy, data1, data2).")
    .set_attr_parser(CorrelationParam)
    .set_num_inputs(3)
    .set_num_outputs(2)
    .set_attr(TIsBackward, True)
    .set_attr(FCompute_cpu, _backward)
    .set_attr(FCompute_gpu, _backward)
)

__all__ = ["CorrelationParam", "geometry"]
