"""MXNet's legacy layers Convolution_v1, Pooling_v1 and BatchNorm_v1, so old symbol files load.

They take their old parameter sets and run on the current ops' inference and kernels:

- Convolution_v1: Convolution's parameters for 2-D and 3-D kernels only (no 1-D, no NCW).
- Pooling_v1: max / avg / sum over 2-D or 3-D windows, valid or full convention, one
  output (no mask). Its average always divides by the whole kernel size, also where a
  window covers padding or runs past the input (`full_kernel_average`).
- BatchNorm_v1: BatchNorm over axis 1 without `axis`/`cudnn_off`, the same statistics,
  moving averages, outputs (output, mean, var) and gradients.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self

from ...attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FListInputNames,
    FResourceRequest,
    TIsBackward,
)
from ...base import ParamError
from ...graph.grad import make_grad_node
from ...graph.node import NodeEntry
from ...param import Parameter, Shape, field
from ...registry import register_op
from . import convolution, pooling
from ._batch_norm_variant import register_axis1_variant

# -- Convolution_v1 -------------------------------------------------------------------------


class ConvolutionV1Param(Parameter):
    kernel = field(Shape, describe="convolution kernel size: (h, w) or (d, h, w)")
    stride = field(Shape, default=(), describe="convolution stride: (h, w) or (d, h, w)")
    dilate = field(Shape, default=(), describe="convolution dilate: (h, w) or (d, h, w)")
    pad = field(Shape, default=(), describe="pad for convolution: (h, w) or (d, h, w)")
    num_filter = field(
        int, lower_bound=1, upper_bound=100000, describe="convolution filter(channel) number"
    )
    num_group = field(
        int,
        default=1,
        lower_bound=1,
        describe="Number of group partitions. Equivalent to slicing input into num_group "
        "partitions, apply convolution on each, then concatenate the results",
    )
    workspace = field(
        int,
        default=1024,
        lower_bound=0,
        describe="Maximum temporary workspace allowed for convolution (MB). nnvmpy caps it "
        "at 64 MB.",
    )
    no_bias = field(bool, default=False, describe="Whether to disable bias parameter.")
    cudnn_tune = field(
        str,
        enum=["fastest", "limited_workspace", "off"],
        optional=True,
        describe="Whether to pick convolution algo by running performance test (ignored).",
    )
    cudnn_off = field(bool, default=False, describe="Turn off cudnn for this layer (ignored).")
    layout = field(
        str,
        enum=["NCDHW", "NCHW", "NDHWC", "NHWC"],
        optional=True,
        describe="Set layout for input, output and weight. Empty for default layout: NCHW for "
        "2d and NCDHW for 3d. Only the default layouts are supported.",
    )

    @classmethod
    def parse(
        cls, kwargs: Mapping[str, Any], op_name: str | None = None, *, allow_unknown: bool = False
    ) -> Self:
        """Parse and check as Convolution does, for 2-D and 3-D kernels."""
        p = super().parse(kwargs, op_name, allow_unknown=allow_unknown)
        return convolution.check_conv_params(p, op_name or "Convolution_v1", dims=(2, 3))


def _conv_gradient(node: Any, ograds: list[Any]) -> list[Any]:
    return make_grad_node("_backward_Convolution_v1", node, [ograds[0], *node.inputs[:2]])


(
    register_op("Convolution_v1")
    .describe(
        "This operator is DEPRECATED. Apply convolution to input then add a bias.\n\n"
        "Computes Convolution (see there) over 2-D or 3-D windows."
    )
    .set_attr_parser(ConvolutionV1Param)
    .set_num_inputs(lambda attrs: 2 if attrs.parsed.no_bias else 3)
    .set_num_outputs(1)
    .set_attr(FListInputNames, convolution.input_names)
    .set_attr(FInferShape, convolution.infer_conv_shape)
    .set_attr(
        FInferType, convolution.infer_same_float_type("Convolution_v1", ["data", "weight", "bias"])
    )
    .set_attr(FResourceRequest, convolution.temp_space)
    .set_attr(FCompute_cpu, convolution.forward_cpu)
    .set_attr(FCompute_gpu, convolution.forward_gpu)
    .set_attr(FGradient, _conv_gradient)
    .add_argument("data", "NDArray-or-Symbol", "Input data to the ConvolutionV1Op.")
    .add_argument("weight", "NDArray-or-Symbol", "Weight matrix.")
    .add_argument("bias", "NDArray-or-Symbol", "Bias parameter.")
    .add_arguments(ConvolutionV1Param.fields())
)
(
    register_op("_backward_Convolution_v1")
    .describe("Backward of Convolution_v1: (ograd, data, weight) -> d data, d weight[, d bias].")
    .set_attr_parser(ConvolutionV1Param)
    .set_num_inputs(3)
    .set_num_outputs(lambda attrs: 2 if attrs.parsed.no_bias else 3)
    .set_attr(TIsBackward, True)
    .set_attr(FInferShape, convolution.infer_backward_shape)
    .set_attr(
        FInferType,
        convolution.infer_same_float_type("_backward_Convolution_v1", ["ograd", "data", "weight"]),
    )
    .set_attr(FResourceRequest, convolution.temp_space)
    .set_attr(FCompute_cpu, convolution.backward_cpu)
    .set_attr(FCompute_gpu, convolution.backward_gpu)
)

# -- Pooling_v1 -----------------------------------------------------------------------------


class PoolingV1Param(Parameter):
    kernel = field(Shape, default=(), describe="pooling kernel size: (y, x) or (d, y, x)")
    pool_type = field(
        str, enum=["avg", "max", "sum"], default="max", describe="Pooling type to be applied."
    )
    global_pool = field(
        bool,
        default=False,
        describe="Ignore kernel size, do global pooling based on current input feature map.",
    )
    pooling_convention = field(
        str, enum=["full", "valid"], default="valid", describe="Pooling convention to be applied."
    )
    stride = field(Shape, default=(), describe="stride: for pooling (y, x) or (d, y, x)")
    pad = field(Shape, default=(), describe="pad for pooling: (y, x) or (d, y, x)")

    # what Pooling's kernels read beyond the fields: v1 averages over the whole kernel
    count_include_pad = True
    p_value = None
    layout = None
    full_kernel_average = True

    @classmethod
    def parse(
        cls, kwargs: Mapping[str, Any], op_name: str | None = None, *, allow_unknown: bool = False
    ) -> Self:
        """Parse and check; stride/pad default to 1s/0s of the kernel's length."""
        op = op_name or "Pooling_v1"
        p = super().parse(kwargs, op_name, allow_unknown=allow_unknown)
        if not p.kernel:
            if not p.global_pool:
                raise ParamError(
                    f"{op}: parameter 'kernel' is required unless global_pool=True, got ()"
                )
            return p
        return convolution.check_window_params(p, op, ("stride",), dims=(2, 3))


def _pool_gradient(node: Any, ograds: list[Any]) -> list[Any]:
    # d data from (ograd, data, output); max pooling finds each window's maximum again
    heads = [ograds[0], node.inputs[0], NodeEntry(node, 0)]
    return make_grad_node("_backward_Pooling_v1", node, heads)


(
    register_op("Pooling_v1")
    .describe(
        "This operator is DEPRECATED. Perform pooling on the input.\n\n"
        "Max, average or sum pooling over 2-D or 3-D windows (valid or full convention, or "
        "global_pool). The average divides by the whole kernel size."
    )
    .set_attr_parser(PoolingV1Param)
    .set_num_inputs(1)
    .set_num_outputs(1)
    .set_attr(FListInputNames, lambda attrs: ["data"])
    .set_attr(FInferShape, pooling.infer_pool_shape)
    .set_attr(FInferType, pooling.infer_pool_type)
    .set_attr(FCompute_cpu, pooling.forward_cpu)
    .set_attr(FCompute_gpu, pooling.forward_gpu)
    .set_attr(FGradient, _pool_gradient)
    .add_argument("data", "NDArray-or-Symbol", "Input data to the pooling operator.")
    .add_arguments(PoolingV1Param.fields())
)
(
    register_op("_backward_Pooling_v1")
    .describe("Backward of Pooling_v1: (ograd, data, output) -> d data.")
    .set_attr_parser(PoolingV1Param)
    .set_num_inputs(3)
    .set_num_outputs(1)
    .set_attr(TIsBackward, True)
    .set_attr(FInferShape, pooling.infer_backward_shape)
    .set_attr(FInferType, pooling.infer_backward_type)
    .set_attr(FCompute_cpu, pooling.backward_cpu)
    .set_attr(FCompute_gpu, pooling.backward_gpu)
)

# -- BatchNorm_v1 ---------------------------------------------------------------------------


class BatchNormV1Param(Parameter):
    eps = field(float, default=1e-3, describe="Epsilon to prevent div 0")
    momentum = field(float, default=0.9, describe="Momentum for moving average")
    fix_gamma = field(bool, default=True, describe="Fix gamma while training")
    use_global_stats = field(
        bool,
        default=False,
        describe="Whether use global moving statistics instead of local batch-norm. This will "
        "force change batch-norm into a scale shift operator.",
    )
    output_mean_var = field(bool, default=False, describe="Output All,normal mean and var")


register_axis1_variant(
    "BatchNorm_v1",
    "_backward_BatchNorm_v1",
    BatchNormV1Param,
    "This operator is DEPRECATED. Perform BatchNorm on the input.\n\n"
    "BatchNorm (see there) over axis 1: batch statistics and moving averages while "
    "training, the moving statistics at inference.",
)

__all__ = ["BatchNormV1Param", "ConvolutionV1Param", "PoolingV1Param"]
