"""DeformableConvolution: 2-D convolution whose taps are shifted by learned offsets (contrib).

`_contrib_DeformableConvolution(data (N, C, H, W), offset (N, DG 2 KH KW, OH, OW), weight
(F, C / G, KH, KW)[, bias (F,)], kernel, stride, dilate, pad, num_filter=F, num_group=G,
num_deformable_group=DG, no_bias)` -> (N, F, OH, OW), OH = (H + 2 pad - dilate (KH - 1) - 1)
// stride + 1 (Dai et al., https://arxiv.org/abs/1703.06211). Tap k = (i, j) of output
position (oh, ow) reads channel c (of deformable group g = c // (C / DG)) at

    y = oh stride - pad + i dilate + offset[n, g 2K + 2k, oh, ow]
    x = ow stride - pad + j dilate + offset[n, g 2K + 2k + 1, oh, ow]

bilinearly from the four pixels around (y, x), each counting 0 outside the map, and the
whole sample 0 when y <= -1, y >= H, x <= -1 or x >= W. The samples form a column matrix
(N, C K, OH OW) that an ordinary grouped convolution (matrix product with the weight)
turns into the output.

Gradients: the weight and bias as a convolution's; the columns' gradient goes back to the
data with the bilinear weights and to the offsets with the derivatives of the bilinear
blend in y and x. Vectorised NumPy on the host, in float64; on the GPU through
_host_staged.host_compute.

The sampling and gradients take an optional mask (N, DG K, OH, OW) that scales each tap
after sampling: contrib_modulated_deformable_conv.py (DCNv2) registers that variant.
"""

from __future__ import annotations

from typing import Any

import numpy as np

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
from ..infer import shape_assign, shape_is_known, shape_str
from ..param import Parameter, Shape, field
from ..registry import NodeAttrs, register_op
from ._host_staged import host_compute
from .contrib_bbox import same_float_type

OP = "_contrib_DeformableConvolution"
BACKWARD = "_backward_contrib_DeformableConvolution"


class DeformableConvolutionParam(Parameter):
    kernel = field(Shape, describe="Convolution kernel size: (h, w)")
    stride = field(Shape, default=(), describe="Convolution stride: (h, w). Defaults to 1.")
    dilate = field(Shape, default=(), describe="Convolution dilate: (h, w). Defaults to 1.")
    pad = field(Shape, default=(), describe="Zero pad for convolution: (h, w). Defaults to 0.")
    num_filter = field(int, lower_bound=1, describe="Convolution filter(channel) number")
    num_group = field(int, default=1, lower_bound=1, describe="Number of group partitions.")
    num_deformable_group = field(
        int, default=1, lower_bound=1, describe="Number of deformable group partitions."
    )
    workspace = field(
        int,
        default=1024,
        lower_bound=0,
        describe="Maximum temperal workspace allowed for convolution (MB). Accepted and ignored.",
    )
    no_bias = field(bool, default=False, describe="Whether to disable bias parameter.")
    layout = field(
        str,
        enum=["NCHW"],
        optional=True,
        describe="Set layout for input, output and weight. Only NCHW (the default) is supported.",
    )


def geometry(p: DeformableConvolutionParam, op: str = OP) -> tuple[tuple[int, int], ...]:
    """((KH, KW), stride, dilate, pad), each an (h, w) pair, defaults filled in."""
    if len(p.kernel) != 2:
        raise InferError(f"{op}: kernel {tuple(p.kernel)} must be (h, w): only 2-D is supported")
    pairs = [tuple(p.kernel)]
    for name, default in (("stride", 1), ("dilate", 1), ("pad", 0)):
        v = tuple(getattr(p, name)) or (default, default)
        if len(v) != 2:
            raise InferError(f"{op}: {name} {v} must be (h, w)")
        pairs.append(v)
    return tuple(pairs)  # type: ignore[return-value]


def _out_hw(p: DeformableConvolutionParam, h: int, w: int, op: str) -> tuple[int, int]:
    (kh, kw), (sh, sw), (dh, dw), (ph, pw) = geometry(p, op)
    oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    if oh < 1 or ow < 1:
        raise InferError(f"{op}: the kernel does not fit the {h} x {w} input (with padding)")
    return oh, ow


def input_names(modulated: bool) -> Any:
    """FListInputNames: data, offset[, mask], weight[, bias]."""

    def names(attrs: NodeAttrs) -> list[str]:
        return (
            ["data", "offset"]
            + (["mask"] if modulated else [])
            + ["weight"]
            + ([] if attrs.parsed.no_bias else ["bias"])
        )

    return names


_input_names = input_names(False)


def deformable_shape(op: str, modulated: bool) -> Any:
    """FInferShape from data: offset (N, DG 2K, OH, OW)[, mask (N, DG K, OH, OW)], weight,
    bias and the output."""

    def infer(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
        p = attrs.parsed
        (kh, kw), *_ = geometry(p, op)
        data = in_shapes[0]
        if data is None:
            return False
        if len(data) != 4:
            raise InferError(f"{op}: input 'data' has shape {shape_str(data)}; expected NCHW (4-D)")
        n, c, h, w = data
        for parts, name in (
            (p.num_group, "num_group"),
            (p.num_deformable_group, "num_deformable_group"),
        ):
            if c is not None and c % parts:
                raise InferError(
                    f"{op}: the {c} channels of 'data' do not split into {name}={parts}"
                )
        if p.num_filter % p.num_group:
            raise InferError(
                f"{op}: num_filter={p.num_filter} does not split into num_group={p.num_group}"
            )
        if not shape_is_known(data):
            return False
        oh, ow = _out_hw(p, h, w, op)
        taps = p.num_deformable_group * kh * kw
        shape_assign(in_shapes, 1, (n, 2 * taps, oh, ow), f"{op}: input 'offset'")
        i = 2
        if modulated:
            shape_assign(in_shapes, 2, (n, taps, oh, ow), f"{op}: input 'mask'")
            i = 3
        weight = (p.num_filter, c // p.num_group, kh, kw)
        shape_assign(in_shapes, i, weight, f"{op}: input 'weight'")
        if not p.no_bias:
            shape_assign(in_shapes, i + 1, (p.num_filter,), f"{op}: input 'bias'")
        return shape_assign(out_shapes, 0, (n, p.num_filter, oh, ow), f"{op}: output")

    return infer


_deformable_shape = deformable_shape(OP, False)


def _deformable_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    """Every input and the output share one float dtype (bias only when there is one)."""
    return same_float_type(OP, tuple(_input_names(attrs)))(attrs, in_types, out_types)


# --- sampling ---------------------------------------------------------------------------------


class _Samples:
    """Where every (channel group, tap, output position) samples, and its bilinear corners."""

    def __init__(self, p: DeformableConvolutionParam, data_shape: Any, offset: np.ndarray):
        (kh, kw), (sh, sw), (dh, dw), (ph, pw) = geometry(p)
        n, _, self.h, self.w = data_shape
        dg, k = p.num_deformable_group, kh * kw
        oh, ow = offset.shape[2:]
        off = offset.astype(np.float64).reshape(n, dg, k, 2, oh, ow)
        i, j = np.divmod(np.arange(k), kw)
        base_y = (np.arange(oh) * sh - ph)[None, :, None] + (i * dh)[:, None, None]
        base_x = (np.arange(ow) * sw - pw)[None, None, :] + (j * dw)[:, None, None]
        self.y = base_y + off[:, :, :, 0]  # (N, DG, K, OH, OW)
        self.x = base_x + off[:, :, :, 1]
        self.inside = (self.y > -1) & (self.y < self.h) & (self.x > -1) & (self.x < self.w)
        self.y0 = np.floor(self.y).astype(np.int64)
        self.x0 = np.floor(self.x).astype(np.int64)
        self.ly = self.y - self.y0
        self.lx = self.x - self.x0

    def corners(self) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
        """(rows, cols, valid, dy weight sign, dx weight sign) of the 4 corners."""
        out = []
        for a, b in ((0, 0), (0, 1), (1, 0), (1, 1)):
            rows, cols = self.y0 + a, self.x0 + b
            valid = self.inside & (rows >= 0) & (rows < self.h) & (cols >= 0) & (cols < self.w)
            out.append((np.clip(rows, 0, self.h - 1), np.clip(cols, 0, self.w - 1), valid, a, b))
        return out

    def weights(self, a: int, b: int) -> np.ndarray:
        wy = self.ly if a else 1 - self.ly
        wx = self.lx if b else 1 - self.lx
        return wy * wx


def _grouped(x: np.ndarray, dg: int) -> np.ndarray:
    """(N, C, H, W) -> (N, DG, C / DG, H, W)."""
    n, c, h, w = x.shape
    return x.reshape(n, dg, c // dg, h, w)


def _gather(xg: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """xg (N, DG, Cg, H, W) at rows/cols (N, DG, K, OH, OW) -> (N, DG, Cg, K, OH, OW)."""
    n, dg = xg.shape[:2]
    ni = np.arange(n)[:, None, None, None, None]
    gi = np.arange(dg)[None, :, None, None, None]
    return np.moveaxis(xg[ni, gi, :, rows, cols], -1, 2)


def _raw_columns(s: _Samples, xg: np.ndarray) -> np.ndarray:
    """The bilinear samples (N, DG, C / DG, K, OH, OW) of xg (N, DG, C / DG, H, W)."""
    cols = 0.0
    for rows, cs, valid, a, b in s.corners():
        cols = cols + _gather(xg, rows, cs) * (s.weights(a, b) * valid)[:, :, None]
    return np.asarray(cols)


def _mask_groups(mask: np.ndarray | None, dg: int) -> np.ndarray | None:
    """DCNv2's modulation (N, DG K, OH, OW) as (N, DG, 1, K, OH, OW), or None (DCNv1)."""
    if mask is None:
        return None
    n, dk, oh, ow = mask.shape
    return mask.astype(np.float64).reshape(n, dg, 1, dk // dg, oh, ow)


def columns(s: _Samples, data: np.ndarray, dg: int, mask: np.ndarray | None = None) -> np.ndarray:
    """The sampled columns (N, C, K, OH, OW), each tap scaled by its mask when there is one."""
    cols = _raw_columns(s, _grouped(data.astype(np.float64), dg))
    m = _mask_groups(mask, dg)
    if m is not None:
        cols = cols * m
    n, _, cg = cols.shape[:3]
    return cols.reshape(n, dg * cg, *s.y.shape[2:])


def _conv(p: DeformableConvolutionParam, cols: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """Grouped product: cols (N, C, K, OH, OW), weight (F, C/G, KH, KW) -> (N, F, OH, OW)."""
    n, c, k, oh, ow = cols.shape
    g, f = p.num_group, p.num_filter
    cg = cols.reshape(n, g, c // g * k, oh * ow)
    wg = weight.astype(np.float64).reshape(g, f // g, c // g * k)
    return np.einsum("gfk,ngkp->ngfp", wg, cg).reshape(n, f, oh, ow)


def deformable_forward_np(p: DeformableConvolutionParam, data, offset, mask, weight, bias) -> list:
    s = _Samples(p, data.shape, offset)
    out = _conv(p, columns(s, data, p.num_deformable_group, mask), weight)
    if bias is not None:
        out += bias.astype(np.float64)[None, :, None, None]
    return [out]


def deformable_grads_np(
    p: DeformableConvolutionParam, dy, data, offset, mask, weight, bias
) -> list:
    """Gradients wrt (data, offset[, mask], weight[, bias]); mask None is DCNv1."""
    n, c = data.shape[:2]
    g, f, dg = p.num_group, p.num_filter, p.num_deformable_group
    s = _Samples(p, data.shape, offset)
    xg = _grouped(data.astype(np.float64), dg)
    raw = _raw_columns(s, xg)  # (N, DG, C / DG, K, OH, OW), before the mask
    m = _mask_groups(mask, dg)
    k, oh, ow = raw.shape[3:]
    cols = (raw if m is None else raw * m).reshape(n, g, c // g * k, oh * ow)
    dyg = dy.astype(np.float64).reshape(n, g, f // g, oh * ow)
    d_weight = np.einsum("ngfp,ngkp->gfk", dyg, cols).reshape(weight.shape)
    wg = weight.astype(np.float64).reshape(g, f // g, c // g * k)
    d_cols = np.einsum("gfk,ngfp->ngkp", wg, dyg).reshape(raw.shape)
    d_mask = None if m is None else (d_cols * raw).sum(axis=2).reshape(mask.shape)
    if m is not None:
        d_cols = d_cols * m  # what reaches the bilinear samples
    d_data = np.zeros(xg.shape)
    d_y = np.zeros(s.y.shape)
    d_x = np.zeros(s.x.shape)
    ni = np.arange(n)[:, None, None, None, None, None]
    gi = np.arange(dg)[None, :, None, None, None, None]
    ci = np.arange(c // dg)[None, None, :, None, None, None]
    for rows, cs, valid, a, b in s.corners():
        wy = s.ly if a else 1 - s.ly
        wx = s.lx if b else 1 - s.lx
        scatter = d_cols * (wy * wx * valid)[:, :, None]
        np.add.at(d_data, (ni, gi, ci, rows[:, :, None], cs[:, :, None]), scatter)
        # d val / d y: the corner's value times d wy / d y (+1 for the lower row, -1 upper)
        v = _gather(xg, rows, cs) * valid[:, :, None]
        contrib = (d_cols * v).sum(axis=2)
        d_y += contrib * (1 if a else -1) * wx
        d_x += contrib * (1 if b else -1) * wy
    d_offset = np.stack([d_y * s.inside, d_x * s.inside], axis=3).reshape(offset.shape)
    grads = [d_data.reshape(data.shape), d_offset]
    if d_mask is not None:
        grads.append(d_mask)
    grads.append(d_weight)
    if bias is not None:
        grads.append(dy.astype(np.float64).sum(axis=(0, 2, 3)))
    return grads


def deformable_conv_np(p: DeformableConvolutionParam, data, offset, weight, *bias) -> list:
    return deformable_forward_np(p, data, offset, None, weight, bias[0] if bias else None)


def deformable_conv_grad_np(p: DeformableConvolutionParam, dy, data, offset, weight, *bias):
    return deformable_grads_np(p, dy, data, offset, None, weight, bias[0] if bias else None)


def _deformable_gradient(node: Any, ograds: list[Any]) -> list[Any]:
    return make_grad_node(BACKWARD, node, [ograds[0], *node.inputs])


_forward = host_compute(OP, deformable_conv_np)
(
    register_op(OP)
    .describe(
        "Compute 2-D deformable convolution on 4-D input.\n\n"
        "The deformable convolution operation is described in "
        "https://arxiv.org/abs/1703.06211\n\n"
        "For 2-D deformable convolution, the shapes are\n\n"
        "- **data**: *(batch_size, channel, height, width)*\n"
        "- **offset**: *(batch_size, num_deformable_group * kernel[0] * kernel[1] * 2, "
        "height, width)*\n"
        "- **weight**: *(num_filter, channel / num_group, kernel[0], kernel[1])*\n"
        "- **bias**: *(num_filter,)*\n"
        "- **out**: *(batch_size, num_filter, out_height, out_width)*.\n\n"
        "Define::\n\n  f(x,k,p,s,d) = floor((x+2*p-d*(k-1)-1)/s)+1\n\n"
        "then out_height=f(height, kernel[0], pad[0], stride[0], dilate[0]) and "
        "out_width=f(width, kernel[1], pad[1], stride[1], dilate[1]).\n\n"
        "If ``num_group`` is larger than 1, the data channels and the weight's filters are "
        "split into that many groups, convolved group by group and concatenated. If "
        "``num_deformable_group`` is larger than 1, the offset and the data channels are "
        "split into that many groups, the i-th offset part moving the i-th data part.\n"
    )
    .set_attr_parser(DeformableConvolutionParam)
    .set_num_inputs(lambda attrs: 3 if attrs.parsed.no_bias else 4)
    .set_num_outputs(1)
    .set_attr(FListInputNames, _input_names)
    .set_attr(FInferShape, _deformable_shape)
    .set_attr(FInferType, _deformable_type)
    .set_attr(FCompute_cpu, _forward)
    .set_attr(FCompute_gpu, _forward)
    .set_attr(FGradient, _deformable_gradient)
    .add_argument("data", "NDArray-or-Symbol", "Input data to the DeformableConvolutionOp.")
    .add_argument("offset", "NDArray-or-Symbol", "Input offset to the DeformableConvolutionOp.")
    .add_argument("weight", "NDArray-or-Symbol", "Weight matrix.")
    .add_argument("bias", "NDArray-or-Symbol", "Bias parameter.")
    .add_arguments(DeformableConvolutionParam.fields())
)
_backward = host_compute(BACKWARD, deformable_conv_grad_np)
(
    register_op(BACKWARD)
    .describe("Backward of DeformableConvolution: inputs (dy, data, offset, weight[, bias]).")
    .set_attr_parser(DeformableConvolutionParam)
    .set_num_inputs(lambda attrs: 4 if attrs.parsed.no_bias else 5)
    .set_num_outputs(lambda attrs: 3 if attrs.parsed.no_bias else 4)
    .set_attr(TIsBackward, True)
    .set_attr(FCompute_cpu, _backward)
    .set_attr(FCompute_gpu, _backward)
)
