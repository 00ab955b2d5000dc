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

The gradient of |a - b| takes sign +1 where a >= b (as MXNet). On a GPU each output is
one work item (_corr_loop); on the CPU the forward is _correlation_cpu.py's (a task per
sample and row of displacements, on zero-padded copies of the inputs: 2x32x32x32,
displacement 4, two threads: 24 -> 0.9 ms; MXNet 1.9.1 4.2 ms). On the CPU the
gradients of both inputs are summed per (sample, channel) plane, one work item adding
into its own two planes only, a contiguous row of dy times the partner values per
displacement, tap and output row (on the same padded copies: 34 -> 2.7 ms for that
case, MXNet ~65 ms); on a GPU, whose N C plane items are far too few (2048 for FlowNet),
each input element is an item gathering the outputs that read it (_correlation_cuda.py).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ... import threads
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
from ...kernel.launch import ADD, NULL, SERIAL_CUTOFF, WRITE, is_gpu, req_code, store, uindex
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
def _tap_span(off, step, size, n):
    """[lo, hi): the j in [0, n) with 0 <= j * step + off < size."""
    lo = 0
    if off < 0:
        lo = (-off + step - 1) // step
    hi = n
    if size - off <= 0:
        hi = 0
    elif (size - 1 - off) // step + 1 < n:
        hi = (size - 1 - off) // step + 1
    return lo, max(lo, hi)


@device_function
def _grad_row(g, gi, dy, yi, ap, ai, bp, bi, lo, hi, step, scale, mult, of_b):
    """g[gi + j*step] += d f / d (data1 if not of_b, else data2) * dy[yi + j] * scale for
    j in [lo, hi): one output row of one displacement and tap; ap[ai + j*step] and
    bp[bi + j*step] are the pair's values (padded copies)."""
    if mult:
        other = ap if of_b else bp
        oi = ai if of_b else bi
        if step == 1:
            for j in range(lo, hi):
                g[uindex(gi + j)] += dy[uindex(yi + j)] * scale * other[uindex(oi + j)]
        else:
            for j in range(lo, hi):
                g[uindex(gi + j * step)] += (
                    dy[uindex(yi + j)] * scale * other[uindex(oi + j * step)]
                )
    else:  # +-dy: + for data1 where a >= b (and - for data2 there)
        for j in range(lo, hi):
            v = dy[uindex(yi + j)] * scale
            if (ap[uindex(ai + j * step)] >= bp[uindex(bi + j * step)]) == of_b:
                v = -v
            g[uindex(gi + j * step)] += v


@parallel_for
def _corr_grad_loop(
    nc, ga, gb, dy, ap, bp, C, H, W, hp, wp, th, tw, D, radius, k, d, s1, s2, pad, scale,
    mult, m_a, m_b,
):  # fmt: skip
    """Planes nc = (n, c) of d data1 (ga) and d data2 (gb) (H x W), reading the inputs'
    zero-padded copies ap, bp (hp x wp planes, the data at (pad, pad)): for each
    displacement, window tap and output row, the row's dy times the partner values adds
    into the row of ga (gb) that output row read, clipped to the plane: a run of
    contiguous elements for stride1 1. `scale` is 1 / (k k C) in dy's dtype."""
    base = nc * H * W
    pbase = nc * hp * wp + pad * wp + pad  # ap[pbase + y*wp + x] = data1[n, c, y, x]
    for e in range(H * W):
        if m_a == WRITE:
            ga[uindex(base + e)] = 0.0
        if m_b == WRITE:
            gb[uindex(base + e)] = 0.0
    n = nc // C
    for t in range(D * D):
        ox = (t % D - radius) * s2
        oy = (t // D - radius) * s2
        first = (n * D * D + t) * th * tw
        for h in range(k):
            for w in range(k):
                xa = d - pad + w  # data1's column at tj = 0 (data2's: xa + ox)
                a_lo, a_hi = _tap_span(xa, s1, W, tw)
                b_lo, b_hi = _tap_span(xa + ox, s1, W, tw)
                for ti in range(th):
                    ya = ti * s1 + d - pad + h
                    yb = ya + oy
                    yi = first + ti * tw
                    ai = pbase + ya * wp + xa
                    bi = ai + oy * wp + ox
                    if m_a != NULL and 0 <= ya < H:
                        gi = base + ya * W + xa
                        _grad_row(ga, gi, dy, yi, ap, ai, bp, bi, a_lo, a_hi, s1, scale, mult,
                                  False)  # fmt: skip
                    if m_b != NULL and 0 <= yb < H:
                        gi = base + yb * W + xa + ox
                        _grad_row(gb, gi, dy, yi, ap, ai, bp, bi, b_lo, b_hi, s1, scale, mult,
                                  True)  # fmt: skip


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
    work = out.size * a.shape[1] * attrs.parsed.kernel_size**2
    if not is_gpu(ctx):
        _forward_cpu(attrs.parsed, a, b, out, mode, work)
        return
    flat = [x.reshape(-1) for x in (out, a, b)]
    _corr_loop.launch(ctx, out.size, *flat, *_scalars(attrs, a.shape), mode, work=work)


def _padded(p: Any, a: Any, b: Any) -> tuple[Any, Any]:
    """Zero-padded copies of data1 and data2 (N, C, hp, wp) for the CPU kernels, the data
    at (pad_size, pad_size): padded by pad_size on both sides, and past the last tap any
    output reads (an even kernel_size reaches one past the padded input)."""
    N, C, H, W = a.shape
    radius, _, th, tw = geometry(p, H, W)
    k, d, s1, s2, pad = p.kernel_size, p.max_displacement, p.stride1, p.stride2, p.pad_size
    hp = max(H + 2 * pad, (th - 1) * s1 + d + radius * s2 + k)
    wp = max(W + 2 * pad, (tw - 1) * s1 + d + radius * s2 + k)
    out = []
    for x in (a, b):
        xp = np.zeros((N, C, hp, wp), x.dtype)
        xp[:, :, pad : pad + H, pad : pad + W] = x
        out.append(xp)
    return out[0], out[1]


def _forward_cpu(p: Any, a: Any, b: Any, out: Any, mode: int, work: int) -> None:
    """The CPU forward (_correlation_cpu.py): zero-padded copies of the inputs, then one
    task per sample and row of displacements."""
    from nnvmpy.ops.nn import _correlation_cpu as k

    N, C, H, W = a.shape
    radius, D, th, tw = geometry(p, H, W)
    ap, bp = _padded(p, a, b)
    geo = (C, *ap.shape[2:], th, tw, D, radius, p.kernel_size, p.max_displacement, p.stride1,
           p.stride2)  # fmt: skip
    args = (ap.reshape(-1), bp.reshape(-1), out.reshape(-1), geo, p.is_multiply, mode == ADD)
    tasks = N * D
    if work >= SERIAL_CUTOFF and tasks > 1:
        with threads.region() as width:
            parts = min(width, tasks)
            if parts > 1:
                k._corr_team(*args, parts)
                return
    k._corr_serial(*args)


@via_float32
def _backward(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    dy, a, b = inputs
    m_a, m_b = (req_code("_backward_Correlation", r) for r in req)
    if (m_a == NULL and m_b == NULL) or a.size == 0:
        return
    if is_gpu(ctx):  # an item per input element (_correlation_cuda.py says why)
        from nnvmpy.ops.nn._correlation_cuda import correlation_grad_gpu

        flat = [x.reshape(-1) for x in (*outputs, dy, a, b)]
        correlation_grad_gpu(ctx, flat, _scalars(attrs, a.shape), m_a, m_b)
        return
    p = attrs.parsed
    N, C, H, W = a.shape
    radius, D, th, tw = geometry(p, H, W)
    ap, bp = _padded(p, a, b)
    flat = [x.reshape(-1) for x in (*outputs, dy, ap, bp)]
    scale = dy.dtype.type(1.0 / (p.kernel_size**2 * C))
    scalars = (C, H, W, *ap.shape[2:], th, tw, D, radius, p.kernel_size, p.max_displacement,
               p.stride1, p.stride2, p.pad_size, scale, p.is_multiply)  # fmt: skip
    work = dy.size * C * p.kernel_size**2
    _corr_grad_loop.launch(ctx, N * C, *flat, *scalars, m_a, m_b, work=work)


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
