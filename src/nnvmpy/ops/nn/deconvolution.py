"""Deconvolution (transposed convolution, 1-D/2-D/3-D) and _backward_Deconvolution.

Deconvolution is the adjoint of the Convolution with the same kernel, stride, dilation,
padding and groups, whose input has the deconvolution's output shape:

    out = conv_data_grad(x, w) (+ bias)      x (N, C, *S), w (C, F/g, *k), out (N, F, *So)
    So  = stride*(S - 1) + dilate*(k - 1) + 1 - 2*pad + adj

With `target_shape` the padding is chosen to produce it (pad and adj are ignored):
total = stride*(S - 1) + dilate*(k - 1) + 1 - target, adj = total % 2, pad = ceil(total/2).
So the forward is Convolution's data gradient, and the backward is Convolution's forward
(d data) and weight gradient with data and output gradient exchanged:

    d x = conv(dy, w)      d w = conv_weight_grad(dy_conv=x, x_conv=dy)      d bias = sum dy

Both run on Convolution's machinery with the ConvShape of that convolution: _conv_cpu.py
on the CPU (GEMMs, col2im); on the GPU _im2col_cuda.py's im2col/col2im around GEMMs
(cuBLAS with CuPy), or the one-body kernels of _conv_cuda.py where Convolution would use
them too (depthwise, as UpSampling's bilinear kernels, and tiny ones).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self

import numpy as np

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
from ...base import InferError, OpReqType, ParamError
from ...graph.grad import make_grad_node
from ...infer import shape_assign, shape_is_known, shape_str
from ...kernel.launch import NULL, req_code, run_rows
from ...param import Parameter, Shape, field
from ...registry import NodeAttrs, register_op
from ._geometry import as_5d, check_float_dtype, dilated, op_name, run_via_float32
from .convolution import (
    SHAPES,
    check_conv_params,
    conv_shape,
    infer_backward_shape_of,
    infer_same_float_type,
    input_names,
    temp_space,
)


class DeconvolutionParam(Parameter):
    kernel = field(
        Shape,
        describe="Deconvolution kernel size: (w,), (h, w) or (d, h, w). This is same as the "
        "kernel size used for the corresponding convolution",
    )
    stride = field(
        Shape,
        default=(),
        describe="The stride used for the corresponding convolution: (w,), (h, w) or "
        "(d, h, w). Defaults to 1 for each dimension.",
    )
    dilate = field(
        Shape,
        default=(),
        describe="Dilation factor for each dimension of the input: (w,), (h, w) or (d, h, w). "
        "Defaults to 1 for each dimension.",
    )
    pad = field(
        Shape,
        default=(),
        describe="The amount of implicit zero padding added during convolution for each "
        "dimension of the input: (w,), (h, w) or (d, h, w). ``(kernel-1)/2`` is usually a good "
        "choice. If `target_shape` is set, `pad` will be ignored and a padding that will "
        "generate the target shape will be used. Defaults to no padding.",
    )
    adj = field(
        Shape,
        default=(),
        describe="Adjustment for output shape: (w,), (h, w) or (d, h, w). If `target_shape` "
        "is set, `adj` will be ignored and computed accordingly.",
    )
    target_shape = field(
        Shape, default=(), describe="Shape of the output tensor: (w,), (h, w) or (d, h, w)."
    )
    num_filter = field(int, lower_bound=1, upper_bound=100000, describe="Number of output filters.")
    num_group = field(int, default=1, lower_bound=1, describe="Number of groups partition.")
    workspace = field(
        int,
        default=512,
        lower_bound=0,
        describe="Maximum temporary workspace allowed (MB) in deconvolution. nnvmpy caps it "
        "at 64 MB and sizes its chunks of images to fit.",
    )
    no_bias = field(bool, default=True, describe="Whether to disable bias parameter.")
    cudnn_tune = field(
        str,
        enum=["fastest", "limited_workspace", "off"],
        optional=True,
        describe="Whether to pick convolution algorithm by running performance test. "
        "Accepted and ignored (nnvmpy has no cuDNN).",
    )
    cudnn_off = field(bool, default=False, describe="Turn off cudnn for this layer (ignored).")
    layout = field(
        str,
        enum=["NCDHW", "NCHW", "NCW", "NDHWC", "NHWC"],
        optional=True,
        describe="Set layout for input, output and weight. Empty for default layout, NCW for "
        "1d, NCHW for 2d and NCDHW for 3d. Only the default layouts are supported.",
    )

    @classmethod
    def parse(
        cls, kwargs: Mapping[str, Any], op_name: str | None = None, *, allow_unknown: bool = False
    ) -> Self:
        """Parse and check; stride/dilate/pad/adj default to 1s/1s/0s/0s of the kernel's length."""
        op = op_name or "Deconvolution"
        p = check_conv_params(super().parse(kwargs, op_name, allow_unknown=allow_unknown), op)
        nd = len(p.kernel)
        for name in ("adj", "target_shape"):
            value = getattr(p, name)
            if value and len(value) != nd:
                raise ParamError(
                    f"{op}: parameter {name!r} must have {nd} entries like kernel {p.kernel}, "
                    f"got {value}"
                )
        if p.adj and min(p.adj) < 0:
            raise ParamError(f"{op}: parameter 'adj' must be >= 0, got {p.adj}")
        if has_target(p) and min(p.target_shape) < 1:
            raise ParamError(
                f"{op}: parameter 'target_shape' must be positive in every dimension, got "
                f"{p.target_shape}"
            )
        if not has_target(p) and p.adj and any(a >= s for a, s in zip(p.adj, p.stride)):
            raise ParamError(
                f"{op}: parameter 'adj' {p.adj} must be smaller than 'stride' {p.stride} "
                "in every dimension"
            )
        return p.replace(adj=(0,) * nd) if not p.adj else p


def has_target(p: Any) -> bool:
    """target_shape given (MXNet: any non-zero entry); it then decides pad and adj."""
    return any(p.target_shape)


def padding(p: Any, spatial: tuple[Any, ...], op: str = "Deconvolution") -> tuple[list, list]:
    """(pad, adj) per spatial axis for input sizes `spatial` (None where a size is unknown)."""
    if not has_target(p):
        return list(p.pad), list(p.adj)
    pads: list[Any] = []
    adjs: list[Any] = []
    for x, k, s, d, t in zip(spatial, p.kernel, p.stride, p.dilate, p.target_shape):
        if x is None:
            pads.append(None)
            adjs.append(None)
            continue
        total = s * (x - 1) + dilated(k, d) - t
        if total < 0:
            raise InferError(
                f"{op}: target_shape {p.target_shape} is too big for input size {x}: at most "
                f"{s * (x - 1) + dilated(k, d)} with kernel {p.kernel}, stride {p.stride}"
            )
        if total % 2 >= s:
            raise InferError(
                f"{op}: target_shape {p.target_shape} needs adj {total % 2}, which must be "
                f"smaller than stride {p.stride}"
            )
        pads.append((total + 1) // 2)
        adjs.append(total % 2)
    return pads, adjs


def output_size(x: int, k: int, s: int, d: int, pad: int, adj: int) -> int:
    """stride*(x - 1) + dilate*(k - 1) + 1 - 2*pad + adj."""
    return s * (x - 1) + dilated(k, d) - 2 * pad + adj


# -- inference ----------------------------------------------------------------------------


def infer_deconv_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    """data (N, C, *S) -> weight (C, F/g, *kernel), bias (F,), out (N, F, *So).

    C comes from the weight when the data's is unknown; N from the output, and with
    stride 1 (and no target_shape) a spatial size too, as MXNet does.
    """
    p, op = attrs.parsed, op_name(attrs, "Deconvolution")
    nd, f, g = len(p.kernel), p.num_filter, p.num_group
    if not p.no_bias:
        shape_assign(in_shapes, 2, (f,), f"{op}: input 'bias'")
    data, weight = in_shapes[0], in_shapes[1]
    if data is None:
        return False
    if len(data) != nd + 2:
        raise InferError(
            f"{op}: input 'data' must be {nd + 2}-D {SHAPES[nd]} for kernel {p.kernel}, "
            f"got shape {shape_str(data)}"
        )
    if data[1] is None and weight is not None and len(weight) == nd + 2:
        shape_assign(in_shapes, 0, (data[0], weight[0], *data[2:]), f"{op}: input 'data'")
        data = in_shapes[0]
    c = data[1]
    if c is not None and c % g:
        raise InferError(
            f"{op}: input 'data' has {c} channels (shape {shape_str(data)}), which "
            f"num_group={g} does not divide"
        )
    shape_assign(in_shapes, 1, (c, f // g, *p.kernel), f"{op}: input 'weight'")
    pads, adjs = padding(p, data[2:], op)
    spatial: list[int | None] = []
    for x, k, s, d, pad, adj in zip(data[2:], p.kernel, p.stride, p.dilate, pads, adjs):
        size = None if x is None else output_size(x, k, s, d, pad, adj)
        if size is not None and size < 1:
            raise InferError(
                f"{op}: the output would have size {size} < 1 along an axis: data has shape "
                f"{shape_str(data)}, kernel {p.kernel}, stride {p.stride}, pad {p.pad}"
            )
        spatial.append(size)
    shape_assign(out_shapes, 0, (data[0], f, *spatial), f"{op}: output 'output'")
    out = out_shapes[0]
    if out is not None:  # N from the output; with stride 1 the input size too
        back = [data[0] if data[0] is not None else out[0], data[1]]
        for x, o, k, s, d, pad in zip(data[2:], out[2:], p.kernel, p.stride, p.dilate, p.pad):
            known = x is None and o is not None and s == 1 and not has_target(p)
            back.append(o + 2 * pad - dilated(k, d) + 1 if known else x)
        shape_assign(in_shapes, 0, tuple(back), f"{op}: input 'data'")
    return all(shape_is_known(s) for s in [*in_shapes, *out_shapes])


infer_backward_shape = infer_backward_shape_of("_backward_Deconvolution")


# -- compute ------------------------------------------------------------------------------


def adjoint_shape(p: Any, data: tuple[int, ...], out: tuple[int, ...]) -> Any:
    """The ConvShape of the convolution whose data gradient this deconvolution is."""
    pads, _ = padding(p, tuple(data[2:]))
    return conv_shape(p, tuple(out), data[1], tuple(data[2:]), pad=tuple(pads))


def forward_cpu_with(
    p: Any, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    """out (=|+=) deconv(x, w) (+ bias) for parsed parameters p (UpSampling's bilinear too)."""
    from nnvmpy.ops.nn import _conv_cpu, _im2col

    def run(ins: list[Any], reqs: list[Any], outs: list[Any]) -> None:
        out = as_5d(outs[0])
        grads, modes = [out, None], [reqs[0], OpReqType.kNullOp]
        _conv_cpu.backward(s, as_5d(ins[0]), None, as_5d(ins[1]), grads, modes, res)
        if not p.no_bias:
            _im2col._add_bias(out.reshape(s.n, s.c, -1), ins[2], 0, s.n)

    if req[0] == OpReqType.kNullOp:
        return
    s, res = adjoint_shape(p, inputs[0].shape, outputs[0].shape), ctx.requested[0]
    run_via_float32(run, inputs, req, outputs)


def backward_cpu_with(
    p: Any, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    """(ograd, data, weight) -> d data, d weight[, d bias] per req, on the CPU."""
    from nnvmpy.ops.nn import _conv_cpu

    def run(ins: list[Any], reqs: list[Any], outs: list[Any]) -> None:
        dy, x, w = (as_5d(a) for a in ins)
        _conv_cpu.forward(s, dy, w, None, as_5d(outs[0]), reqs[0], res)
        if reqs[1] != OpReqType.kNullOp:
            grads, modes = [None, as_5d(outs[1])], [OpReqType.kNullOp, reqs[1]]
            _conv_cpu.backward(s, x, dy, w, grads, modes, res)
        if len(outs) > 2 and reqs[2] != OpReqType.kNullOp:
            total = dy.reshape(s.n, s.c, -1).sum(axis=(0, 2), dtype=np.float64)
            if reqs[2] == OpReqType.kAddTo:
                outs[2] += total.astype(outs[2].dtype)
            else:
                outs[2][...] = total

    s, res = adjoint_shape(p, inputs[1].shape, inputs[0].shape), ctx.requested[0]
    run_via_float32(run, inputs, req, outputs)


def forward_gpu_with(
    p: Any, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any], name: str
) -> None:
    """The GPU forward: Convolution's data gradient, as GEMMs around col2im where the
    adjoint convolution takes im2col + GEMM (_im2col_cuda.use_gemm), else its direct
    body (depthwise: UpSampling's bilinear kernels; tiny), one output element per item."""
    from nnvmpy.ops.nn import _im2col_cuda
    from nnvmpy.ops.nn._conv_cuda import conv_data_grad, geometry

    check_float_dtype(name, "data", inputs[0].dtype)
    mode = req_code(name, req[0])
    if mode == NULL:
        return
    x, w, out = inputs[0], inputs[1], outputs[0]
    s = adjoint_shape(p, x.shape, out.shape)
    if _im2col_cuda.use_gemm(s):
        res = ctx.requested[0]
        _im2col_cuda.backward(ctx, name, s, x, None, w, out, None, [mode, NULL], res)
        if not p.no_bias:
            inner = s.d * s.h * s.w
            run_rows(ctx, name, _im2col_cuda.add_bias, out.size, out, inputs[2], s.c, inner)
        return
    bias = w if p.no_bias else inputs[2]  # a stand-in the kernel never reads
    run_rows(ctx, name, conv_data_grad, out.size, x, w, bias, out, not p.no_bias, mode,
             *geometry(s))  # fmt: skip


def backward_gpu_with(
    p: Any, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any], name: str
) -> None:
    """The GPU backward: Convolution's forward (d data) and weight gradient with data and
    output gradient exchanged, on im2col + GEMM or the direct bodies as the forward; a
    bias sum."""
    from nnvmpy.ops.nn import _im2col_cuda
    from nnvmpy.ops.nn._conv_cuda import bias_grad, conv_forward, geometry, weight_grad_gpu

    check_float_dtype(name, "data", inputs[1].dtype)
    dy, x, w = inputs
    s = adjoint_shape(p, x.shape, dy.shape)
    geo, modes = geometry(s), [req_code(name, r) for r in req]
    if len(outputs) > 2 and modes[2] != NULL:
        bias_grad(ctx, name, dy, outputs[2], s.n, s.c, s.h * s.w * s.d, modes[2])
    if _im2col_cuda.use_gemm(s):
        res = ctx.requested[0]
        if modes[0] != NULL:
            _im2col_cuda.forward(ctx, name, s, dy, w, None, outputs[0], modes[0], res)
        if modes[1] != NULL:
            _im2col_cuda.backward(ctx, name, s, x, dy, w, None, outputs[1], [NULL, modes[1]], res)
        return
    if modes[0] != NULL:
        run_rows(ctx, name, conv_forward, x.size, dy, w, w, outputs[0], False, modes[0], *geo)
    if modes[1] != NULL:
        weight_grad_gpu(ctx, name, x, dy, outputs[1], s.n, modes[1], geo)


def _forward_cpu(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    forward_cpu_with(attrs.parsed, ctx, inputs, req, outputs)


def _backward_cpu(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    backward_cpu_with(attrs.parsed, ctx, inputs, req, outputs)


def _forward_gpu(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    forward_gpu_with(attrs.parsed, ctx, inputs, req, outputs, "Deconvolution")


def _backward_gpu(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    backward_gpu_with(attrs.parsed, ctx, inputs, req, outputs, "_backward_Deconvolution")


def _deconv_gradient(node: Any, ograds: list[Any]) -> list[Any]:
    # d data, d weight, d bias from (ograd, data, weight)
    return make_grad_node("_backward_Deconvolution", node, [ograds[0], *node.inputs[:2]])


(
    register_op("Deconvolution")
    .describe(
        "Computes 1-D, 2-D or 3-D transposed convolution (aka fractionally strided "
        "convolution) of the input tensor: the gradient of Convolution with respect to its "
        "input, so it upsamples.\n\n"
        "- **data**: *(batch_size, channel, [depth,] [height,] width)*\n"
        "- **weight**: *(channel, num_filter/num_group, *kernel)*\n"
        "- **bias**: *(num_filter,)* (only with no_bias=False; the default has no bias)\n"
        "- **out**: *(batch_size, num_filter, *out_size)*, with::\n\n"
        "    out_size = stride*(size-1) + dilate*(kernel-1) + 1 - 2*pad + adj\n\n"
        "or ``target_shape`` when given (pad and adj then follow from it)."
    )
    .set_attr_parser(DeconvolutionParam)
    .set_num_inputs(lambda attrs: 2 if attrs.parsed.no_bias else 3)
    .set_num_outputs(1)
    .set_attr(FListInputNames, input_names)
    .set_attr(FInferShape, infer_deconv_shape)
    .set_attr(FInferType, infer_same_float_type("Deconvolution", ["data", "weight", "bias"]))
    .set_attr(FResourceRequest, temp_space)
    .set_attr(FCompute_cpu, _forward_cpu)
    .set_attr(FCompute_gpu, _forward_gpu)
    .set_attr(FGradient, _deconv_gradient)
    .add_argument("data", "NDArray-or-Symbol", "Input tensor to the deconvolution operation.")
    .add_argument("weight", "NDArray-or-Symbol", "Weights representing the kernel.")
    .add_argument(
        "bias", "NDArray-or-Symbol", "Bias added to the result after the deconvolution operation."
    )
    .add_arguments(DeconvolutionParam.fields())
)

(
    register_op("_backward_Deconvolution")
    .describe("Backward of Deconvolution: (ograd, data, weight) -> d data, d weight[, d bias].")
    .set_attr_parser(DeconvolutionParam)
    .set_num_inputs(3)
    .set_num_outputs(lambda attrs: 2 if attrs.parsed.no_bias else 3)
    .set_attr(TIsBackward, True)
    .set_attr(FListInputNames, lambda attrs: ["ograd", "data", "weight"])
    .set_attr(FInferShape, infer_backward_shape)
    .set_attr(
        FInferType, infer_same_float_type("_backward_Deconvolution", ["ograd", "data", "weight"])
    )
    .set_attr(FResourceRequest, temp_space)
    .set_attr(FCompute_cpu, _backward_cpu)
    .set_attr(FCompute_gpu, _backward_gpu)
)

__all__ = [
    "DeconvolutionParam",
    "backward_cpu_with",
    "backward_gpu_with",
    "forward_cpu_with",
    "forward_gpu_with",
    "infer_deconv_shape",
    "padding",
]
