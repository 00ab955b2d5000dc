"""im2col and col2im: sliding blocks of an image as columns, and back (summing overlaps).

For x of shape (N, C, *S) with kernel k, stride s, dilate d and pad p over the D = len(k)
spatial axes, the output positions along axis a are O_a = (S_a + 2 p_a - d_a (k_a - 1) - 1)
div s_a + 1, and

    im2col(x)[n, c*K + kk, l] = x[n, c, o*s - p + kk*d]    (0 outside the image)
    col2im(col)[n, c, q] = sum over (kk, l) with o*s - p + kk*d = q of col[n, c*K + kk, l]

where kk and l run over the kernel (K = prod k) and output (L = prod O) positions in
row-major order. col2im is im2col's adjoint, so each is the other's gradient. On a GPU
the bodies below run one work item per output element (col2im gathers its sum, so it
needs no atomics). The CPU runs _im2col_op_cpu.py's kernels instead: a task per column
row (im2col) or image plane (col2im), copying or adding whole output rows, where the
one-body loops' several divisions per element ran 5-100x slower (8x64x28x28, 3x3 pad 1
on two threads: im2col 27 -> 1.1 ms, col2im 62 -> 0.7 ms; MXNet 1.9.1 7 and 1.7 ms).
This is MXNet's layout of Convolution's columns for one image; nn/_im2col.py holds
Convolution's own, batched CPU kernels.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import kernel, threads
from ..attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    TIsBackward,
)
from ..base import InferError, Shape
from ..graph.grad import ElemwiseGradUseNone
from ..infer import elemwise_type, shape_assign, shape_is_known, shape_str
from ..kernel.launch import ADD, NULL, SERIAL_CUTOFF, flat, is_gpu, req_code
from ..param import Parameter, field
from ..param import Shape as ShapeField
from ..registry import NodeAttrs, register_op
from ._index_kernels import half_as_float32
from ._layout import op_name

_WINDOW = {
    "kernel": "Sliding kernel size: (w,), (h, w) or (d, h, w).",
    "stride": "The stride between adjacent sliding blocks in spatial dimension: (w,), (h, w) "
    "or (d, h, w). Defaults to 1 for each dimension.",
    "dilate": "The spacing between adjacent kernel points: (w,), (h, w) or (d, h, w). "
    "Defaults to 1 for each dimension.",
    "pad": "The zero-value padding size on both sides of spatial dimension: (w,), (h, w) or "
    "(d, h, w). Defaults to no padding.",
}


class Im2colParam(Parameter):
    kernel = field(ShapeField, describe=_WINDOW["kernel"])
    stride = field(ShapeField, default=(), describe=_WINDOW["stride"])
    dilate = field(ShapeField, default=(), describe=_WINDOW["dilate"])
    pad = field(ShapeField, default=(), describe=_WINDOW["pad"])


class Col2imParam(Parameter):
    output_size = field(
        ShapeField, describe="The spatial dimension of image array: (w,), (h, w) or (d, h, w)."
    )
    kernel = field(ShapeField, describe=_WINDOW["kernel"])
    stride = field(ShapeField, default=(), describe=_WINDOW["stride"])
    dilate = field(ShapeField, default=(), describe=_WINDOW["dilate"])
    pad = field(ShapeField, default=(), describe=_WINDOW["pad"])


def window(op: str, p: Any) -> tuple[tuple[int, ...], ...]:
    """(kernel, stride, dilate, pad) with defaults filled; InferError for bad values."""
    k = tuple(p.kernel)
    if not 1 <= len(k) <= 3:
        raise InferError(f"{op}: parameter 'kernel' {k} must have 1, 2 or 3 entries")
    out = [k]
    for name, default in (("stride", 1), ("dilate", 1), ("pad", 0)):
        v = tuple(getattr(p, name)) or (default,) * len(k)
        if len(v) != len(k):
            raise InferError(
                f"{op}: parameter '{name}' {v} must have as many entries as 'kernel' {k}"
            )
        out.append(v)
    for name, v, least in (("kernel", k, 1), ("stride", out[1], 1), ("dilate", out[2], 1),
                           ("pad", out[3], 0)):  # fmt: skip
        if any(x < least for x in v):
            raise InferError(f"{op}: parameter '{name}' {v} must have entries >= {least}")
    return tuple(out)


def positions(op: str, spatial: Shape, win: tuple[tuple[int, ...], ...]) -> Shape:
    """The number of block positions along each spatial axis (None where unknown)."""
    k, s, d, p = win
    out: list[int | None] = []
    for a, n in enumerate(spatial):
        if n is None:
            out.append(None)
            continue
        span = d[a] * (k[a] - 1) + 1
        if n + 2 * p[a] < span:
            raise InferError(
                f"{op}: the dilated kernel ({span}) is larger than spatial axis {a} of the "
                f"image ({n}) padded by {p[a]} on both sides"
            )
        out.append((n + 2 * p[a] - span) // s[a] + 1)
    return tuple(out)


def _prod(dims: Shape) -> int | None:
    return math.prod(dims) if shape_is_known(dims) else None


def _im2col_infer(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    op = op_name(attrs, "im2col")
    win = window(op, attrs.parsed)
    x = in_shapes[0]
    if x is None:
        return False
    if len(x) != len(win[0]) + 2:
        raise InferError(
            f"{op}: input 'data' {shape_str(x)} must be (N, C) plus the {len(win[0])} spatial "
            f"axes of 'kernel' {win[0]}"
        )
    c = None if x[1] is None else x[1] * math.prod(win[0])
    shape_assign(out_shapes, 0, (x[0], c, _prod(positions(op, x[2:], win))), f"{op}: output")
    return shape_is_known(x)


def _col2im_infer(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    op = op_name(attrs, "col2im")
    win = window(op, attrs.parsed)
    size = tuple(attrs.parsed.output_size)
    if len(size) != len(win[0]):
        raise InferError(
            f"{op}: parameter 'output_size' {size} must have as many entries as 'kernel' {win[0]}"
        )
    col = in_shapes[0]
    if col is None:
        return False
    if len(col) != 3:
        raise InferError(f"{op}: input 'data' {shape_str(col)} must be 3-d (N, C*K, L)")
    kk, blocks = math.prod(win[0]), math.prod(positions(op, size, win))  # type: ignore[arg-type]
    if col[1] is not None and col[1] % kk:
        raise InferError(
            f"{op}: axis 1 of input 'data' {shape_str(col)} must be a multiple of the kernel "
            f"size {kk}"
        )
    if col[2] is not None and col[2] != blocks:
        raise InferError(
            f"{op}: axis 2 of input 'data' {shape_str(col)} must be {blocks}, the block "
            f"positions of an image of size {size}"
        )
    c = None if col[1] is None else col[1] // kk
    shape_assign(out_shapes, 0, (col[0], c, *size), f"{op}: output")
    return shape_is_known(col)


# -- bodies ---------------------------------------------------------------------------------------


@kernel.parallel_for
def _im2col_elems(t, col, x, spatial, blocks, ksize, stride, dilate, pad, nk, nl, mode):
    # col[n, c*K + kk, pos] (+)= x[n, c, o(pos)*s - p + kk*d], 0 outside the image
    pos = t % nl
    rest = t // nl
    kk = rest % nk
    img = rest // nk  # n * C + c
    off = 0
    plane = 1
    inside = True
    for a in range(len(spatial) - 1, -1, -1):
        o = pos % blocks[a]
        pos //= blocks[a]
        k = kk % ksize[a]
        kk //= ksize[a]
        q = o * stride[a] - pad[a] + k * dilate[a]
        if q < 0 or q >= spatial[a]:
            inside = False
        off += q * plane
        plane *= spatial[a]
    if inside:
        v = x[img * plane + off]
        if mode == 2:
            col[t] += v
        else:
            col[t] = v
    elif mode != 2:
        col[t] = 0


@kernel.parallel_for
def _col2im_elems(t, im, col, spatial, blocks, ksize, stride, dilate, pad, nk, nl, zero, mode):
    # im[n, c, q] (+)= sum of col[n, c*K + kk, pos] over the (kk, pos) that read position q
    plane = 1
    for a in range(len(spatial)):
        plane *= spatial[a]
    img = t // plane
    acc = zero
    for kk in range(nk):
        rem_q = t - img * plane
        rem_k = kk
        pos = 0
        lstride = 1
        hit = True
        for a in range(len(spatial) - 1, -1, -1):
            q = rem_q % spatial[a]
            rem_q //= spatial[a]
            k = rem_k % ksize[a]
            rem_k //= ksize[a]
            span = q + pad[a] - k * dilate[a]
            o = span // stride[a]
            if span < 0 or o * stride[a] != span or o >= blocks[a]:
                hit = False
            pos += o * lstride
            lstride *= blocks[a]
        if hit:
            acc += col[(img * nk + kk) * nl + pos]
    if mode == 2:
        im[t] += acc
    else:
        im[t] = acc


def _geometry(op: str, p: Any, spatial: tuple[int, ...]) -> tuple[Any, ...]:
    win = window(op, p)
    blocks = positions(op, spatial, win)
    return (spatial, blocks, *win, math.prod(win[0]), math.prod(blocks))


def _run_cpu(
    direction: str, src: Any, dst: Any, geo: tuple[Any, ...], mode: int, work: int, tasks: int
) -> None:
    """The CPU kernels of _im2col_op_cpu.py: im2col (src the image, dst the columns) or
    col2im (src the columns, dst the image), flat; geo as _geometry gives it; `tasks`
    column rows (im2col) or image planes (col2im) split over the team."""
    from nnvmpy.ops import _im2col_op_cpu as k

    spatial, blocks, ksize, stride, dilate, pad = geo[:6]
    lead = 3 - len(spatial)  # axes of 1 in front: one block position, one tap
    packed = (
        *(1,) * lead, *spatial, *(1,) * lead, *ksize, *(1,) * lead, *stride,
        *(1,) * lead, *dilate, *(0,) * lead, *pad, *(1,) * lead, *blocks,
    )  # fmt: skip
    add = mode == ADD
    serial, team = (
        (k._im2col_serial, k._im2col_team)
        if direction == "im2col"
        else (k._col2im_serial, k._col2im_team)
    )
    if work >= SERIAL_CUTOFF and tasks > 1:
        with threads.region() as width:
            parts = min(width, tasks)
            if parts > 1:
                team(src, dst, packed, add, parts)
                return
    serial(src, dst, packed, add)


def im2col(name: str, ctx: Any, col: Any, req: Any, x: Any, p: Any) -> None:
    """col (+)= the blocks of image x (N, C, *S) as columns (N, C*K, L)."""
    mode = req_code(name, req)
    if mode == NULL or col.size == 0:
        return
    geo = _geometry(name, p, tuple(x.shape)[2:])
    with half_as_float32(ctx, [col], [mode], [x]) as (outs, ins):
        if is_gpu(ctx):
            _im2col_elems.launch(ctx, col.size, flat(outs[0]), flat(ins[0]), *geo, mode)
        else:
            rows = col.shape[0] * col.shape[1]
            _run_cpu("im2col", flat(ins[0]), flat(outs[0]), geo, mode, col.size, rows)


def col2im(name: str, ctx: Any, im: Any, req: Any, col: Any, p: Any) -> None:
    """im (N, C, *S) (+)= the columns col (N, C*K, L) summed back into place."""
    mode = req_code(name, req)
    if mode == NULL or im.size == 0:
        return
    geo = _geometry(name, p, tuple(im.shape)[2:])
    with half_as_float32(ctx, [im], [mode], [col]) as (outs, ins):
        if not is_gpu(ctx):
            tasks = im.shape[0] * im.shape[1]
            _run_cpu("col2im", flat(ins[0]), flat(outs[0]), geo, mode, col.size, tasks)
            return
        dtype = np.dtype(outs[0].dtype)
        zero = np.float64(0) if dtype == np.float64 else np.float32(0)
        _col2im_elems.launch(ctx, im.size, flat(outs[0]), flat(ins[0]), *geo, zero, mode)


def _compute(direction: Any, name: str) -> Any:
    def compute(
        attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
    ) -> None:
        direction(name, ctx, outputs[0], req[0], inputs[0], attrs.parsed)

    return compute


for _name, _param, _fwd, _bwd, _infer, _doc in (
    (
        "im2col", Im2colParam, im2col, col2im, _im2col_infer,
        "Extract sliding blocks from input array.\n\n"
        "An input of shape (N, C, *) with * the spatial axes (1 to 3 of them, as many as "
        "in `kernel`) gives (N, C * prod(kernel), W): each column holds one block of every "
        "channel, in row-major order of the kernel positions, and W is the number of block "
        "positions: prod over the spatial axes of "
        "(size + 2 * pad - dilate * (kernel - 1) - 1) // stride + 1.",
    ),
    (
        "col2im", Col2imParam, col2im, im2col, _col2im_infer,
        "Combining the output column matrix of im2col back to image array.\n\n"
        "Like im2col, an input of shape (N, C * prod(kernel), W) gives (N, C, *output_size); "
        "overlapping values are summed (col2im is im2col's adjoint).",
    ),
):  # fmt: skip
    (
        register_op(_name)
        .describe(_doc)
        .set_attr_parser(_param)
        .set_num_inputs(1)
        .set_num_outputs(1)
        .set_attr(FInferShape, _infer)
        .set_attr(FInferType, elemwise_type(1, 1))
        .set_attr(FCompute_cpu, _compute(_fwd, _name))
        .set_attr(FCompute_gpu, _compute(_fwd, _name))
        .set_attr(FGradient, ElemwiseGradUseNone(f"_backward_{_name}"))
        .add_argument("data", "NDArray-or-Symbol", "Input array to extract sliding blocks.")
        .add_arguments(_param.fields())
    )
    (  # inputs: (dy,); the gradient is the other direction, into the forward input's shape
        register_op(f"_backward_{_name}")
        .set_attr_parser(_param)
        .set_num_inputs(1)
        .set_num_outputs(1)
        .set_attr(TIsBackward, True)
        .set_attr(FCompute_cpu, _compute(_bwd, f"_backward_{_name}"))
        .set_attr(FCompute_gpu, _compute(_bwd, f"_backward_{_name}"))
    )
