"""BilinearResize2D: bilinear resizing of NCHW data (nd.contrib / sym.contrib).

`_contrib_BilinearResize2D(data[, like], height=1, width=1, scale_height=None,
scale_width=None, mode='size', align_corners=True)`. The output size per mode:

- size: (height, width); a given scale_height (scale_width) replaces height (width) by
  int(H * scale) (the product in float32, as MXNet's float parameters give it);
- odd_scale: per dimension, int(H * scale) for an even H and int((H - 1) * scale) + 1 for an
  odd one (both scales required);
- like: the height and width of the second input `like` (which gets a zero gradient);
- to_even_down / to_even_up / to_odd_down / to_odd_up: the nearest even (odd) size at or
  below (above) the input's.

Output row o samples input row s(o): with align_corners, s = o (H - 1) / (OH - 1); without,
s = max((o + 0.5) H / OH - 0.5, 0); s = 0 when OH is 1. It blends rows floor(s) and
floor(s) + 1 (the last row alone at the edge); columns likewise. The resize is separable,
y = R_h x R_w^T with (OH, H) and (OW, W) interpolation matrices, and its gradient is
dx = R_h^T dy R_w.

Kernels (kernel.parallel_for): the rows and columns each output samples, and their
weights, are two small tables made on the host per call (_axis_tables). On the GPU a
forward item is one output (four inputs blended) and a backward item one input element,
which gathers the gradients of the outputs sampling it (no two items write one element;
neighbouring items read neighbouring gradients). On
the CPU an item is a whole plane, computed separably through a scratch row (contiguous
loops instead of gathers). Weights are in the compute type (float32 for float16 and
float32 data; the CPU computes float16 in float32, the GPU in float16 as MXNet's kernels).
Against the interpolation matrices in NumPy that ran before (and staged the GPU through
the host): 8x64x56x56 -> 112x112 float32 on two cores, forward 21.5 -> 2.9 ms, forward
and backward 39.0 -> 8.3 ms.
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
    FListInputNames,
    TIsBackward,
)
from ..base import InferError
from ..graph.grad import make_grad_node
from ..infer import shape_assign, shape_is_known, shape_str, type_assign
from ..kernel import uindex
from ..kernel.launch import ADD, NULL, WRITE, flat, is_gpu, req_code, store
from ..param import Parameter, field
from ..registry import NodeAttrs, register_op
from ._index_kernels import half_as_float32, to_ctx, zero

OP = "_contrib_BilinearResize2D"
BACKWARD = "_backward_contrib_BilinearResize2D"
MODES = ["like", "odd_scale", "size", "to_even_down", "to_even_up", "to_odd_down", "to_odd_up"]


class BilinearResizeParam(Parameter):
    height = field(
        int,
        default=1,
        lower_bound=1,
        describe="output height (required, but ignored if scale_height is defined or mode is "
        'not "size")',
    )
    width = field(
        int,
        default=1,
        lower_bound=1,
        describe="output width (required, but ignored if scale_width is defined or mode is not "
        '"size")',
    )
    scale_height = field(
        float,
        default=None,
        describe='sampling scale of the height (optional, used in modes "scale" and "odd_scale")',
    )
    scale_width = field(
        float,
        default=None,
        describe='sampling scale of the width (optional, used in modes "scale" and "odd_scale")',
    )
    mode = field(
        str,
        default="size",
        enum=MODES,
        describe='resizing mode. "size" - output height equals parameter "height" if '
        '"scale_height" parameter is not defined or input height multiplied by "scale_height" '
        'otherwise. Same for width; "odd_scale" - if original height or width is odd, then '
        "result height is calculated like result_h = (original_h - 1) * scale + 1; "
        '"like" - resize first input to the height and width of second input; '
        '"to_even_down" / "to_even_up" / "to_odd_down" / "to_odd_up" - resize input to the '
        "nearest even (odd) height and width below (above) the original ones.",
    )
    align_corners = field(
        bool,
        default=True,
        describe="With align_corners = True, the corner pixels of input and output are "
        "aligned; otherwise pixel centres are, and the output values can depend on the input "
        "size.",
    )


def _scaled(n: int, scale: float) -> int:
    with np.errstate(over="ignore", invalid="ignore"):  # float32 as MXNet: 1e300 -> inf
        size = np.float32(n) * np.float32(scale)
    if not np.isfinite(size) or size < 0:  # int() of these raised bare Python errors
        raise InferError(
            f"{OP}: scale {scale} turns a side of {n} into {size}; expected a finite, "
            "non-negative scale_height / scale_width"
        )
    return int(size)


def _parity(n: int, odd: bool, up: bool) -> int:
    if (n % 2 == 1) == odd:
        return n
    return n + 1 if up else n - 1


def output_hw(p: BilinearResizeParam, h: int, w: int, like: Any = None) -> tuple[int, int]:
    """The output (height, width) for an input of (h, w); `like` is the second input's shape."""
    if p.mode == "size":
        oh = p.height if p.scale_height is None else _scaled(h, p.scale_height)
        ow = p.width if p.scale_width is None else _scaled(w, p.scale_width)
        return oh, ow
    if p.mode == "odd_scale":
        if p.scale_height is None or p.scale_width is None:
            raise InferError(f"{OP}: mode 'odd_scale' needs both scale_height and scale_width")
        return tuple(  # type: ignore[return-value]
            _scaled(n, s) if n % 2 == 0 else _scaled(n - 1, s) + 1
            for n, s in ((h, p.scale_height), (w, p.scale_width))
        )
    if p.mode == "like":
        return like[2], like[3]
    odd, up = "odd" in p.mode, p.mode.endswith("up")
    return _parity(h, odd, up), _parity(w, odd, up)


def _n_inputs(attrs: NodeAttrs) -> int:
    return 2 if attrs.parsed.mode == "like" else 1


def _input_names(attrs: NodeAttrs) -> list[str]:
    return ["data", "like"][: _n_inputs(attrs)]


def _resize_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    p, data = attrs.parsed, in_shapes[0]
    for i, name in enumerate(_input_names(attrs)):
        s = in_shapes[i]
        if s is not None and len(s) != 4:
            raise InferError(f"{OP}: input '{name}' has shape {shape_str(s)}; expected NCHW (4-D)")
    if data is None or not shape_is_known(data):
        return False
    like = in_shapes[1] if p.mode == "like" else None
    if p.mode == "like" and (like is None or like[2] is None or like[3] is None):
        return False
    oh, ow = output_hw(p, data[2], data[3], like)
    if (data[2] == 0 or data[3] == 0) and oh * ow > 0:  # nothing to sample from
        raise InferError(
            f"{OP}: input 'data' has shape {shape_str(data)}; an output of {oh}x{ow} "
            "needs an input plane of at least 1x1"
        )
    return shape_assign(out_shapes, 0, (data[0], data[1], oh, ow), f"{OP}: output")


def _resize_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    known = in_types[0] if in_types[0] is not None else out_types[0]
    if known is None:
        return False
    for i, name in enumerate(_input_names(attrs)):
        type_assign(in_types, i, known, f"{OP}: input '{name}'")
    return type_assign(out_types, 0, known, f"{OP}: output")


def _axis_tables(n_in: int, n_out: int, align_corners: bool) -> tuple[np.ndarray, np.ndarray]:
    """((lo, hi) rows, (1 - lam, lam) weights), each of 2 * n_out: output position o
    blends inputs lo[o] and hi[o] (the same one at the last input) with those weights."""
    o = np.arange(n_out, dtype=np.float64)
    if n_out == 1:
        s = np.zeros(1)
    elif align_corners:
        s = o * ((n_in - 1) / (n_out - 1))
    else:
        s = np.maximum((o + 0.5) * (n_in / n_out) - 0.5, 0.0)
    lo = np.minimum(np.floor(s), n_in - 1).astype(np.int64)
    lam = s - lo
    hi = np.where(lo < n_in - 1, lo + 1, lo)
    return np.concatenate([lo, hi]), np.concatenate([1.0 - lam, lam])


@kernel.parallel_for
def _resize_forward(item, out, x, idx, wts, h, w, oh, ow, scratch, mode):
    # idx/wts: the rows' tables (2 * oh entries), then the columns' (2 * ow)
    if scratch.size == 0:  # the GPU's item: one output, four inputs blended
        row = item // ow
        plane = row // oh
        o = row - plane * oh
        top = (plane * h + idx[o]) * w
        bottom = (plane * h + idx[oh + o]) * w
        j = 2 * oh + item - row * ow
        b0 = wts[j]
        b1 = wts[j + ow]
        v = wts[o] * (b0 * x[uindex(top + idx[j])] + b1 * x[uindex(top + idx[j + ow])])
        v += wts[oh + o] * (b0 * x[uindex(bottom + idx[j])] + b1 * x[uindex(bottom + idx[j + ow])])
        store(out, uindex(item), v, mode)
        return
    # the CPU's item: one plane, separably: the two input rows blended into a scratch row
    # (contiguous: vectorises), then two of its entries per output (4-input gathers ran
    # 2.5x slower: AVX-512 gathers are slow on this machine's cores)
    t0 = item * w
    for o in range(oh):
        top = (item * h + idx[o]) * w
        bottom = (item * h + idx[oh + o]) * w
        a0 = wts[o]
        a1 = wts[oh + o]
        for c in range(w):
            scratch[uindex(t0 + c)] = a0 * x[uindex(top + c)] + a1 * x[uindex(bottom + c)]
        dst = (item * oh + o) * ow
        for q in range(ow):
            j = 2 * oh + q
            v = (
                wts[j] * scratch[uindex(t0 + idx[j])]
                + wts[j + ow] * scratch[uindex(t0 + idx[j + ow])]
            )
            store(out, uindex(dst + q), v, mode)


@kernel.parallel_for
def _resize_backward_gather(item, dx, dy, idx, wts, spans, h, w, oh, ow, mode):
    # the GPU's item: input element (plane, r, c) gathers dy over the output rows and
    # columns sampling it, spans[r]:spans[h + r] and spans[2h + c]:spans[2h + w + c] (the
    # outputs sampling an input are consecutive): neighbouring items read neighbouring
    # gradients, and no two items write one element
    row = item // w
    c = item - row * w
    plane = row // h
    r = row - plane * h
    acc = 0.0
    for o in range(spans[r], spans[h + r]):
        a = (wts[o] if idx[o] == r else 0.0) + (wts[oh + o] if idx[oh + o] == r else 0.0)
        src = (plane * oh + o) * ow
        part = 0.0
        for q in range(spans[2 * h + c], spans[2 * h + w + c]):
            j = 2 * oh + q
            b = (wts[j] if idx[j] == c else 0.0) + (wts[j + ow] if idx[j + ow] == c else 0.0)
            part += b * dy[uindex(src + q)]
        acc += a * part
    store(dx, uindex(item), acc, mode)


@kernel.parallel_for
def _resize_backward_planes(item, dx, dy, idx, wts, h, w, oh, ow, scratch, mode):
    # the CPU's item: one plane, separably: each gradient row spread over a scratch row of
    # input columns, which is added to the two input rows it came from (contiguous)
    plane = item * h * w
    t0 = item * w
    if mode != ADD:
        for k in range(h * w):
            dx[uindex(plane + k)] = 0
    for o in range(oh):
        for c in range(w):
            scratch[uindex(t0 + c)] = 0
        src = (item * oh + o) * ow
        for q in range(ow):
            g = dy[uindex(src + q)]
            j = 2 * oh + q
            scratch[uindex(t0 + idx[j])] += wts[j] * g
            scratch[uindex(t0 + idx[j + ow])] += wts[j + ow] * g
        top = plane + idx[o] * w
        bottom = plane + idx[oh + o] * w
        a0 = wts[o]
        a1 = wts[oh + o]
        for c in range(w):
            dx[uindex(top + c)] += a0 * scratch[uindex(t0 + c)]
        for c in range(w):
            dx[uindex(bottom + c)] += a1 * scratch[uindex(t0 + c)]


def _spans(lo_hi: np.ndarray, n_in: int) -> np.ndarray:
    """(first, past-last) output position sampling each input position, as two arrays of
    n_in; lo and hi never decrease with the output position, so those outputs are
    consecutive (an input no output samples gets an empty span)."""
    n_out = lo_hi.size // 2
    lo, hi = lo_hi[:n_out], lo_hi[n_out:]
    r = np.arange(n_in)
    starts = np.minimum(np.searchsorted(lo, r, "left"), np.searchsorted(hi, r, "left"))
    ends = np.maximum(np.searchsorted(lo, r, "right"), np.searchsorted(hi, r, "right"))
    return np.concatenate([starts, np.maximum(ends, starts)])


def _tables(ctx: Any, p: BilinearResizeParam, x_shape: Any, oh: int, ow: int, dtype: Any) -> Any:
    """The rows' and columns' index and weight tables on ctx's device; weights in the
    kernels' compute type (float32 for float16 and float32 data, float64 for float64)."""
    rows, row_w = _axis_tables(x_shape[2], oh, p.align_corners)
    cols, col_w = _axis_tables(x_shape[3], ow, p.align_corners)
    compute = np.promote_types(dtype, np.float32)
    weights = np.concatenate([row_w, col_w]).astype(compute)
    return to_ctx(ctx, np.concatenate([rows, cols])), to_ctx(ctx, weights)


def _scratch(ctx: Any, planes: int, w: int, dtype: Any) -> Any:
    """The CPU kernels' scratch rows (one per plane, in the compute type); none on the GPU."""
    if is_gpu(ctx):
        return to_ctx(ctx, np.empty(0, dtype))
    return np.empty(planes * w, np.promote_types(dtype, np.float32))


def _forward(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    mode = req_code(OP, req[0])
    x, out = inputs[0], outputs[0]
    if mode == NULL or out.size == 0:
        return
    n, c, h, w = x.shape
    oh, ow = out.shape[2], out.shape[3]
    idx, wts = _tables(ctx, attrs.parsed, x.shape, oh, ow, x.dtype)
    scratch = _scratch(ctx, n * c, w, x.dtype)
    items = out.size if is_gpu(ctx) else n * c
    with half_as_float32(ctx, [out], [mode], [x]) as ([o], [xc]):
        args = (flat(o), flat(xc), idx, wts, h, w, oh, ow, scratch, mode)
        _resize_forward.launch(ctx, items, *args, work=out.size)


def _backward(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    modes = [req_code(BACKWARD, r) for r in req]
    dy, x, dx = inputs[0], inputs[1], outputs[0]
    for out, mode in zip(outputs[1:], modes[1:]):  # `like` only gives its shape
        if mode == WRITE:
            zero(ctx, out)
    if modes[0] == NULL or dx.size == 0:
        return
    n, c, h, w = x.shape
    oh, ow = dy.shape[2], dy.shape[3]
    idx, wts = _tables(ctx, attrs.parsed, x.shape, oh, ow, x.dtype)
    with half_as_float32(ctx, [dx], modes[:1], [dy]) as ([d], [g]):
        args = (flat(d), flat(g), idx, wts, h, w, oh, ow)
        if is_gpu(ctx):
            p = attrs.parsed
            rows = _axis_tables(h, oh, p.align_corners)[0]
            cols = _axis_tables(w, ow, p.align_corners)[0]
            spans = to_ctx(ctx, np.concatenate([_spans(rows, h), _spans(cols, w)]))
            _resize_backward_gather.launch(ctx, dx.size, *args[:4], spans, *args[4:],
                                           modes[0], work=dy.size)  # fmt: skip
        else:
            scratch = _scratch(ctx, n * c, w, x.dtype)
            _resize_backward_planes.launch(ctx, n * c, *args, scratch, modes[0],
                                           work=dy.size)  # fmt: skip


def _resize_gradient(node: Any, ograds: list[Any]) -> list[Any]:
    return make_grad_node(BACKWARD, node, [ograds[0], *node.inputs])


(
    register_op(OP)
    .describe(
        "Perform 2D resizing (upsampling or downsampling) for 4D input using bilinear "
        "interpolation.\n\n"
        "Expected input is a 4 dimensional NDArray (NCHW) and the output with the shape of "
        "(N x C x height x width). The key idea of bilinear interpolation is to perform "
        "linear interpolation first in one direction, and then again in the other "
        "direction. See the wikipedia of `Bilinear interpolation "
        "<https://en.wikipedia.org/wiki/Bilinear_interpolation>`_ for more details.\n"
    )
    .set_attr_parser(BilinearResizeParam)
    .set_num_inputs(_n_inputs)
    .set_num_outputs(1)
    .set_attr(FListInputNames, _input_names)
    .set_attr(FInferShape, _resize_shape)
    .set_attr(FInferType, _resize_type)
    .set_attr(FCompute_cpu, _forward)
    .set_attr(FCompute_gpu, _forward)
    .set_attr(FGradient, _resize_gradient)
    .add_argument("data", "NDArray-or-Symbol", "Input data")
    .add_argument("like", "NDArray-or-Symbol", "Resize data to it's shape")
    .add_arguments(BilinearResizeParam.fields())
)
(
    register_op(BACKWARD)
    .describe("Backward of BilinearResize2D: inputs (dy, data[, like]), outputs their grads.")
    .set_attr_parser(BilinearResizeParam)
    .set_num_inputs(lambda attrs: 1 + _n_inputs(attrs))
    .set_num_outputs(_n_inputs)
    .set_attr(TIsBackward, True)
    .set_attr(FCompute_cpu, _backward)
    .set_attr(FCompute_gpu, _backward)
)
