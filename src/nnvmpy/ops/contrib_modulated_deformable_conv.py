"""ModulatedDeformableConvolution (DCNv2): deformable convolution whose taps are also scaled.

`_contrib_ModulatedDeformableConvolution(data (N, C, H, W), offset (N, DG 2 KH KW, OH, OW),
mask (N, DG KH KW, OH, OW), weight (F, C / G, KH, KW)[, bias (F,)], ...)` -> (N, F, OH, OW)
(Zhu et al., https://arxiv.org/abs/1811.11168). It is DeformableConvolution with one more
factor: tap k of output position (oh, ow) in deformable group g contributes its bilinear
sample times mask[n, g K + k, oh, ow]. The sampling, the column matrices and the gradients
are contrib_deformable_conv.py's, given the mask; the mask's own gradient is the column
gradient times the unscaled sample, summed over the group's channels.

`im2col_step` only bounds how many images MXNet unfolds at a time; it is checked as MXNet
checks it (the batch must be at most it or a multiple of it) and otherwise has no effect.
Computed by DeformableConvolution's kernels (_deformable.py) on both devices.
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
from ..param import field
from ..registry import NodeAttrs, register_op
from .contrib_bbox import same_float_type
from .contrib_deformable_conv import (
    DeformableConvolutionParam,
    deformable_computes,
    deformable_shape,
    input_names,
    temp_space,
)

OP = "_contrib_ModulatedDeformableConvolution"
BACKWARD = "_backward_contrib_ModulatedDeformableConvolution"


class ModulatedDeformableConvolutionParam(DeformableConvolutionParam):
    field_order = (  # MXNet's argument order
        "kernel",
        "stride",
        "dilate",
        "pad",
        "num_filter",
        "num_group",
        "num_deformable_group",
        "workspace",
        "no_bias",
        "im2col_step",
        "layout",
    )
    im2col_step = field(
        int,
        default=64,
        lower_bound=1,
        describe="Maximum number of images per im2col computation; the batch size must be "
        "at most this value or divisible by it. Checked, otherwise no effect here.",
    )


_input_names = input_names(True)
_base_shape = deformable_shape(OP, True)


def _check_batch(p: ModulatedDeformableConvolutionParam, n: int) -> None:
    step = min(n, p.im2col_step)
    if step and n % step:
        raise InferError(
            f"{OP}: the batch size {n} of input 'data' must be at most im2col_step="
            f"{p.im2col_step} or divisible by it"
        )


def _modulated_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    data = in_shapes[0]
    if data is not None and len(data) == 4 and data[0] is not None:
        _check_batch(attrs.parsed, data[0])
    return _base_shape(attrs, in_shapes, out_shapes)


def _modulated_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    """Every input and the output share one float dtype (bias only when there is one)."""
    return same_float_type(OP, tuple(_input_names(attrs)))(attrs, in_types, out_types)


def _modulated_gradient(node: Any, ograds: list[Any]) -> list[Any]:
    return make_grad_node(BACKWARD, node, [ograds[0], *node.inputs])


_forward, _backward = deformable_computes(OP, BACKWARD, modulated=True)
(
    register_op(OP)
    .describe(
        "2-D convolution whose sampling grid is shifted per output position by learned "
        "offsets and whose samples are weighted by a learned mask (Deformable ConvNets v2, "
        "Zhu et al. 2018, arXiv:1811.11168).\n\n"
        "Shapes:\n\n"
        "- **data**: *(batch_size, channel, height, width)*\n"
        "- **offset**: *(batch_size, num_deformable_group * kernel[0] * kernel[1] * 2, "
        "out_height, out_width)*\n"
        "- **mask**: *(batch_size, num_deformable_group * kernel[0] * kernel[1], "
        "out_height, out_width)*\n"
        "- **weight**: *(num_filter, channel / num_group, kernel[0], kernel[1])*\n"
        "- **bias**: *(num_filter,)*\n"
        "- **out**: *(batch_size, num_filter, out_height, out_width)*.\n\n"
        "Define::\n\n  f(x,k,p,s,d) = floor((x+2*p-d*(k-1)-1)/s)+1\n\n"
        "then out_height=f(height, kernel[0], pad[0], stride[0], dilate[0]) and "
        "out_width=f(width, kernel[1], pad[1], stride[1], dilate[1]).\n\n"
        "Each tap is sampled bilinearly at its offset position, as in DeformableConvolution, "
        "and multiplied by its mask value before the convolution's weights apply. "
        "``num_group`` and ``num_deformable_group`` split the channels as in "
        "DeformableConvolution; the i-th part of the offset and the mask moves and scales "
        "the i-th part of the data.\n\n"
    )
    .set_attr_parser(ModulatedDeformableConvolutionParam)
    .set_num_inputs(lambda attrs: 4 if attrs.parsed.no_bias else 5)
    .set_num_outputs(1)
    .set_attr(FListInputNames, _input_names)
    .set_attr(FInferShape, _modulated_shape)
    .set_attr(FInferType, _modulated_type)
    .set_attr(FResourceRequest, temp_space)
    .set_attr(FCompute_cpu, _forward)
    .set_attr(FCompute_gpu, _forward)
    .set_attr(FGradient, _modulated_gradient)
    .add_argument(
        "data", "NDArray-or-Symbol", "Input data to the ModulatedDeformableConvolutionOp."
    )
    .add_argument(
        "offset", "NDArray-or-Symbol", "Input offset to ModulatedDeformableConvolutionOp."
    )
    .add_argument(
        "mask", "NDArray-or-Symbol", "Input mask to the ModulatedDeformableConvolutionOp."
    )
    .add_argument("weight", "NDArray-or-Symbol", "Weight matrix.")
    .add_argument("bias", "NDArray-or-Symbol", "Bias parameter.")
    .add_arguments(ModulatedDeformableConvolutionParam.fields())
)
(
    register_op(BACKWARD)
    .describe(
        "Backward of ModulatedDeformableConvolution: inputs (dy, data, offset, mask, "
        "weight[, bias]); outputs the gradients of data, offset, mask, weight[, bias]."
    )
    .set_attr_parser(ModulatedDeformableConvolutionParam)
    .set_num_inputs(lambda attrs: 5 if attrs.parsed.no_bias else 6)
    .set_num_outputs(lambda attrs: 4 if attrs.parsed.no_bias else 5)
    .set_attr(TIsBackward, True)
    .set_attr(FResourceRequest, temp_space)
    .set_attr(FCompute_cpu, _backward)
    .set_attr(FCompute_gpu, _backward)
)
