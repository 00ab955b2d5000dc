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
blend in y and x. Kernels for both devices, the products by BLAS / cuBLAS (_deformable.py).

The kernels take an optional mask (N, DG K, OH, OW) that scales each tap
after sampling: contrib_modulated_deformable_conv.py (DCNv2) registers that variant.
"""

from __future__ import annotations

from typing import Any

from ..attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FListInputNames,
    FResourceRequest,
    TIsBackward,
)
from ..base import InferError
from ..graph.grad import make_grad_node
from ..infer import shape_assign, shape_is_known, shape_str
from ..kernel.launch import NULL, req_code
from ..param import Parameter, Shape, field
from ..registry import NodeAttrs, register_op
from ..resource import ResourceRequest
from . import _deformable
from ._deformable import DeformShape
from ._index_kernels import half_as_float32
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
    pairs = [(p.kernel[0], p.kernel[1])]
    for name, default in (("stride", 1), ("dilate", 1), ("pad", 0)):
        v = tuple(getattr(p, name)) or (default, default)
        if len(v) != 2:
            raise InferError(f"{op}: {name} {v} must be (h, w)")
        pairs.append((v[0], v[1]))
    return tuple(pairs)


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


# --- compute ------------------------------------------------------------------------------


def temp_space(attrs: NodeAttrs) -> list[ResourceRequest]:
    return [ResourceRequest.kTempSpace]


def deformable_computes(op: str, backward_op: str, modulated: bool) -> tuple[Any, Any]:
    """FCompute of `op` (inputs data, offset[, mask], weight[, bias]) and of `backward_op`
    (inputs dy and op's; outputs the gradients of op's inputs), by _deformable's kernels.
    The CPU computes float16 in float32."""

    def split(p: Any, arrays: list[Any]) -> tuple[Any, ...]:
        """(data, offset, mask, weight, bias) of op's inputs; None where there is none."""
        data, offset, *rest = arrays
        mask = rest.pop(0) if modulated else None
        return data, offset, mask, rest[0], (None if p.no_bias else rest[1])

    def shape(p: Any, data_shape: Any, out_shape: Any) -> DeformShape:
        return DeformShape(p, tuple(data_shape), tuple(out_shape[2:]), geometry(p, op))

    def forward(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
        p, mode, out = attrs.parsed, req_code(op, req[0]), outputs[0]
        if mode == NULL or out.size == 0:
            return
        s = shape(p, inputs[0].shape, out.shape)
        with half_as_float32(ctx, [out], [mode], inputs) as ([o], ins):
            data, offset, mask, weight, bias = split(p, ins)
            _deformable.forward(ctx, op, s, data, offset, mask, weight, bias, o, mode,
                                ctx.requested[0])  # fmt: skip

    def backward(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
        p, modes = attrs.parsed, [req_code(backward_op, r) for r in req]
        if all(m == NULL for m in modes):
            return
        s = shape(p, inputs[1].shape, inputs[0].shape)
        with half_as_float32(ctx, outputs, modes, inputs) as (grads, ins):
            data, offset, mask, weight, _ = split(p, ins[1:])
            _deformable.backward(ctx, backward_op, s, ins[0], data, offset, mask, weight,
                                 list(split(p, grads)), list(split(p, modes)),
                                 ctx.requested[0])  # fmt: skip

    return forward, backward


def _deformable_gradient(node: Any, ograds: list[Any]) -> list[Any]:
    return make_grad_node(BACKWARD, node, [ograds[0], *node.inputs])


_forward, _backward = deformable_computes(OP, BACKWARD, modulated=False)
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
    .set_attr(FResourceRequest, temp_space)
    .set_attr(FCompute_cpu, _forward)
    .set_attr(FCompute_gpu, _forward)
    .set_attr(FGradient, _deformable_gradient)
    .add_argument("data", "NDArray-or-Symbol", "Input data to the DeformableConvolutionOp.")
    .add_argument("offset", "NDArray-or-Symbol", "Input offset to the DeformableConvolutionOp.")
    .add_argument("weight", "NDArray-or-Symbol", "Weight matrix.")
    .add_argument("bias", "NDArray-or-Symbol", "Bias parameter.")
    .add_arguments(DeformableConvolutionParam.fields())
)
(
    register_op(BACKWARD)
    .describe("Backward of DeformableConvolution: inputs (dy, data, offset, weight[, bias]).")
    .set_attr_parser(DeformableConvolutionParam)
    .set_num_inputs(lambda attrs: 4 if attrs.parsed.no_bias else 5)
    .set_num_outputs(lambda attrs: 3 if attrs.parsed.no_bias else 4)
    .set_attr(TIsBackward, True)
    .set_attr(FResourceRequest, temp_space)
    .set_attr(FCompute_cpu, _backward)
    .set_attr(FCompute_gpu, _backward)
)
