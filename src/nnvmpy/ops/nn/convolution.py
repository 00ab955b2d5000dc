"""Convolution (1-D and 2-D, NCHW) and _backward_Convolution.

    out[n, f] = bias[f] + sum_{c in group(f)} x[n, c] (*) w[f, c]        (cross-correlation)
    Ho = (H + 2*pad - dilate*(kh - 1) - 1) // stride + 1                     (likewise Wo)

CPU: im2col + BLAS GEMM with a kTempSpace workspace (_conv_cpu.py); GPU: direct
numba.cuda kernels (_conv_cuda.py). Both are imported on their first launch, so
`import nnvmpy` compiles nothing. A 1-D convolution runs as a 2-D one of height 1.
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
from ...base import InferError, OpReqType, ParamError
from ...graph.grad import make_grad_node
from ...infer import shape_assign, shape_is_known, shape_str, type_assign
from ...param import Parameter, Shape, field
from ...registry import NodeAttrs, register_op
from ...resource import ResourceRequest
from ._geometry import (
    Window,
    as_4d,
    check_float_dtype,
    conv_out_size,
    dilated,
    run_via_float32,
    to_2d,
)


class ConvolutionParam(Parameter):
    kernel = field(Shape, describe="Convolution kernel size: (w,), (h, w) or (d, h, w)")
    stride = field(
        Shape, default=(), describe="Convolution stride: (w,), (h, w) or (d, h, w). Defaults to 1."
    )
    dilate = field(
        Shape, default=(), describe="Convolution dilate: (w,), (h, w) or (d, h, w). Defaults to 1."
    )
    pad = field(
        Shape,
        default=(),
        describe="Zero pad for convolution: (w,), (h, w) or (d, h, w). Defaults to 0.",
    )
    num_filter = field(
        int, lower_bound=1, upper_bound=100000, describe="Convolution filter(channel) number"
    )
    num_group = field(int, default=1, lower_bound=1, describe="Number of group partitions.")
    workspace = field(
        int,
        default=1024,
        lower_bound=0,
        describe="Maximum temporary workspace allowed (MB) in convolution. nnvmpy caps it "
        "at 64 MB and sizes its chunks of images (column matrices, padded copies) to fit.",
    )
    no_bias = field(bool, default=False, describe="Whether to disable bias parameter.")
    cudnn_tune = field(
        str,
        enum=["fastest", "limited_workspace", "off"],
        optional=True,
        describe="Whether to pick convolution algo by running performance test. Accepted "
        "and ignored (nnvmpy has no cuDNN).",
    )
    cudnn_off = field(bool, default=False, describe="Turn off cudnn for this layer (ignored).")
    layout = field(
        str,
        enum=["NCDHW", "NCHW", "NCW", "NDHWC", "NHWC"],
        optional=True,
        describe="Set layout for input, output and weight. Empty for default layout: NCW "
        "for 1d, NCHW for 2d. Only the default layouts are supported.",
    )

    @classmethod
    def parse(
        cls, kwargs: Mapping[str, Any], op_name: str | None = None, *, allow_unknown: bool = False
    ) -> Self:
        """Parse, check the window against the kernel, and fill stride/dilate/pad defaults."""
        op = op_name or "Convolution"
        p = super().parse(kwargs, op_name, allow_unknown=allow_unknown)
        if p.num_filter % p.num_group:
            raise ParamError(
                f"{op}: parameter 'num_filter' ({p.num_filter}) must be a multiple of "
                f"'num_group' ({p.num_group})"
            )
        return check_window_params(p, op, ("stride", "dilate"))


def check_window_params(p: Any, op: str, ones: tuple[str, ...]) -> Any:
    """Shared by Convolution and Pooling: 1-D/2-D kernel, matching stride/dilate/pad lengths."""
    nd = len(p.kernel)
    if nd not in (1, 2):
        raise ParamError(
            f"{op}: parameter 'kernel' must have 1 or 2 dimensions (NCW or NCHW), got "
            f"{p.kernel}; 3-D windows are not supported"
        )
    if min(p.kernel) < 1:
        raise ParamError(f"{op}: parameter 'kernel' must be positive, got {p.kernel}")
    changes: dict[str, tuple[int, ...]] = {}
    for name in (*ones, "pad"):
        value = getattr(p, name)
        low = 1 if name in ones else 0
        if len(value) == 0:
            changes[name] = (low,) * nd
        elif len(value) != nd:
            raise ParamError(
                f"{op}: parameter {name!r} must have {nd} entries like kernel {p.kernel}, "
                f"got {value}"
            )
        elif min(value) < low:
            raise ParamError(f"{op}: parameter {name!r} must be >= {low}, got {value}")
    expected = "NCW" if nd == 1 else "NCHW"
    if p.layout not in (None, expected):
        raise ParamError(
            f"{op}: parameter 'layout' is {p.layout!r}, but a {nd}-D {op} supports "
            f"only layout None or {expected!r}"
        )
    return p.replace(**changes) if changes else p


def _window(p: ConvolutionParam, data: tuple[int, ...]) -> Window:
    """The 2-D window of a (1-D or 2-D) convolution on data of this shape."""
    (kh, kw), (sh, sw) = to_2d(p.kernel, 1), to_2d(p.stride, 1)
    (ph, pw), (dh, dw) = to_2d(p.pad, 0), to_2d(p.dilate, 1)
    h, w = (1, data[2]) if len(data) == 3 else (data[2], data[3])
    return Window(
        kh,
        kw,
        sh,
        sw,
        ph,
        pw,
        dh,
        dw,
        conv_out_size(h, kh, sh, ph, dh),
        conv_out_size(w, kw, sw, pw, dw),
    )


def _input_names(attrs: NodeAttrs) -> list[str]:
    return ["data", "weight"] if attrs.parsed.no_bias else ["data", "weight", "bias"]


# -- inference ----------------------------------------------------------------------------


def infer_conv_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    """data (N, C, *S) -> weight (F, C/g, *kernel), bias (F,), out (N, F, *S_out).

    C comes from the weight when the data's is unknown; N from the output.
    """
    p = attrs.parsed
    nd, f, g = len(p.kernel), p.num_filter, p.num_group
    if not p.no_bias:
        shape_assign(in_shapes, 2, (f,), "Convolution: input 'bias'")
    data, weight = in_shapes[0], in_shapes[1]
    if data is None:
        return False
    if len(data) != nd + 2:
        layout = "(N, C, W)" if nd == 1 else "(N, C, H, W)"
        raise InferError(
            f"Convolution: input 'data' must be {nd + 2}-D {layout} for kernel {p.kernel}, "
            f"got shape {shape_str(data)}"
        )
    if data[1] is None and weight is not None and len(weight) == nd + 2 and weight[1] is not None:
        shape_assign(in_shapes, 0, (data[0], weight[1] * g, *data[2:]), "Convolution: input 'data'")
        data = in_shapes[0]
    c = data[1]
    if c is not None and c % g:
        raise InferError(
            f"Convolution: input 'data' has {c} channels (shape {shape_str(data)}), which "
            f"num_group={g} does not divide"
        )
    cg = None if c is None else c // g
    shape_assign(in_shapes, 1, (f, cg, *p.kernel), "Convolution: input 'weight'")
    spatial: list[int | None] = []
    for x, k, s, pad, d in zip(data[2:], p.kernel, p.stride, p.pad, p.dilate):
        if x is None:
            spatial.append(None)
            continue
        if dilated(k, d) > x + 2 * pad:
            raise InferError(
                f"Convolution: kernel {p.kernel} (dilate {p.dilate}) is larger than the "
                f"padded input: data has shape {shape_str(data)} with pad {p.pad}"
            )
        spatial.append(conv_out_size(x, k, s, pad, d))
    shape_assign(out_shapes, 0, (data[0], f, *spatial), "Convolution: output 'output'")
    out = out_shapes[0]
    if out is not None:  # as MXNet: N from the output, and a stride-1 spatial size too
        back = [out[0] if data[0] is None else data[0], data[1]]
        for x, o, k, s, pad, d in zip(data[2:], out[2:], p.kernel, p.stride, p.pad, p.dilate):
            back.append(o + dilated(k, d) - 1 - 2 * pad if x is None and o and s == 1 else x)
        shape_assign(in_shapes, 0, tuple(back), "Convolution: input 'data'")
    return all(shape_is_known(s) for s in [*in_shapes, *out_shapes])


def infer_same_float_type(op: str, names: list[str]) -> Any:
    """FInferType: every input and output shares one floating-point dtype."""

    def infer(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
        known = next((t for t in [*in_types, *out_types] if t is not None), None)
        if known is None:
            return False
        check_float_dtype(op, names[0], known)
        for i in range(len(in_types)):
            type_assign(in_types, i, known, f"{op}: input {_name(names, i)!r}")
        for j in range(len(out_types)):
            type_assign(out_types, j, known, f"{op}: output {j}")
        return True

    return infer


def _name(names: list[str], i: int) -> str:
    return names[i] if i < len(names) else f"#{i}"


def infer_backward_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    """(ograd, data, weight) -> (d data, d weight[, d bias]) have the forward inputs' shapes."""
    shape_assign(out_shapes, 0, in_shapes[1], "_backward_Convolution: output 'data_grad'")
    shape_assign(out_shapes, 1, in_shapes[2], "_backward_Convolution: output 'weight_grad'")
    if len(out_shapes) > 2:
        shape_assign(out_shapes, 2, (attrs.parsed.num_filter,), "_backward_Convolution: bias")
    return all(shape_is_known(s) for s in out_shapes)


# -- compute ------------------------------------------------------------------------------


def _conv_shape(p: ConvolutionParam, x: Any) -> Any:
    from ._conv_cpu import ConvShape

    n, c, h, w = as_4d(x).shape
    return ConvShape(n, c, h, w, p.num_filter, p.num_group, _window(p, x.shape), p.workspace)


def _forward_cpu(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    from . import _conv_cpu

    def run(ins: list[Any], reqs: list[Any], outs: list[Any]) -> None:
        bias = None if p.no_bias else ins[2]
        _conv_cpu.forward(s, as_4d(ins[0]), as_4d(ins[1]), bias, as_4d(outs[0]), reqs[0], res)

    p, s, res = attrs.parsed, _conv_shape(attrs.parsed, inputs[0]), ctx.requested[0]
    run_via_float32(run, inputs, req, outputs)


def _backward_cpu(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    from . import _conv_cpu

    def run(ins: list[Any], reqs: list[Any], outs: list[Any]) -> None:
        dy, x, w = (as_4d(a) for a in ins)
        grads = [as_4d(outs[0]), as_4d(outs[1]), *outs[2:]]
        _conv_cpu.backward(s, dy, x, w, grads, list(reqs), res)

    s, res = _conv_shape(attrs.parsed, inputs[1]), ctx.requested[0]
    run_via_float32(run, inputs, req, outputs)


def _gpu_window(p: ConvolutionParam, data_shape: tuple[int, ...]) -> tuple[int, ...]:
    return (p.num_group, *_window(p, data_shape).args()[:8])


def _forward_gpu(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    from . import _conv_cuda as cu

    cu.bind_cuda()
    p = attrs.parsed
    if req[0] == OpReqType.kNullOp:
        return
    check_float_dtype("Convolution", "data", inputs[0].dtype, gpu=True)
    x, w, out = as_4d(inputs[0]), as_4d(inputs[1]), as_4d(outputs[0])
    bias = w.reshape(w.size) if p.no_bias else inputs[2]  # a stand-in the kernel never reads
    add = req[0] == OpReqType.kAddTo
    cu._conv_forward_cuda.launch(
        ctx, out.size, x, w, bias, out, not p.no_bias, add, *_gpu_window(p, inputs[0].shape)
    )


def _backward_gpu(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    from . import _conv_cuda as cu

    cu.bind_cuda()
    p = attrs.parsed
    check_float_dtype("_backward_Convolution", "data", inputs[1].dtype, gpu=True)
    dy, x, w = (as_4d(a) for a in inputs)
    win = _gpu_window(p, inputs[1].shape)
    dx, dw = as_4d(outputs[0]), as_4d(outputs[1])
    if req[0] != OpReqType.kNullOp:
        add = req[0] == OpReqType.kAddTo
        cu._conv_backward_data_cuda.launch(ctx, dx.size, dy, w, dx, add, *win)
    if req[1] != OpReqType.kNullOp:
        add = req[1] == OpReqType.kAddTo
        cu._conv_backward_weight_cuda.launch(ctx, dw.size, dy, x, dw, add, *win)
    if len(outputs) > 2 and req[2] != OpReqType.kNullOp:
        add = req[2] == OpReqType.kAddTo
        cu._conv_backward_bias_cuda.launch(ctx, p.num_filter, dy, outputs[2], add)


def _conv_gradient(node: Any, ograds: list[Any]) -> list[Any]:
    # d data, d weight, d bias from (ograd, data, weight), as MXNet's ConvolutionGrad
    return make_grad_node("_backward_Convolution", node, [ograds[0], *node.inputs[:2]])


def _temp_space(attrs: NodeAttrs) -> list[ResourceRequest]:
    return [ResourceRequest.kTempSpace]


(
    register_op("Convolution")
    .describe(
        "Compute *N*-D convolution on *(N+2)*-D input (N = 1 or 2).\n\n"
        "For 2-D convolution, the shapes are\n\n"
        "- **data**: *(batch_size, channel, height, width)*\n"
        "- **weight**: *(num_filter, channel/num_group, kernel[0], kernel[1])*\n"
        "- **bias**: *(num_filter,)*\n"
        "- **out**: *(batch_size, num_filter, out_height, out_width)*, with::\n\n"
        "    out_height = (height + 2*pad[0] - dilate[0]*(kernel[0]-1) - 1) // stride[0] + 1\n\n"
        "With num_group > 1 the channels split into num_group groups convolved separately "
        "(num_group == channel is depthwise convolution). 1-D convolution takes "
        "*(batch_size, channel, width)*."
    )
    .set_attr_parser(ConvolutionParam)
    .set_num_inputs(lambda attrs: 2 if attrs.parsed.no_bias else 3)
    .set_num_outputs(1)
    .set_attr(FListInputNames, _input_names)
    .set_attr(FInferShape, infer_conv_shape)
    .set_attr(FInferType, infer_same_float_type("Convolution", ["data", "weight", "bias"]))
    .set_attr(FResourceRequest, _temp_space)
    .set_attr(FCompute_cpu, _forward_cpu)
    .set_attr(FCompute_gpu, _forward_gpu)
    .set_attr(FGradient, _conv_gradient)
    .add_argument("data", "NDArray-or-Symbol", "Input data to the ConvolutionOp.")
    .add_argument("weight", "NDArray-or-Symbol", "Weight matrix.")
    .add_argument("bias", "NDArray-or-Symbol", "Bias parameter.")
    .add_arguments(ConvolutionParam.fields())
)

(
    register_op("_backward_Convolution")
    .describe("Backward of Convolution: (ograd, data, weight) -> d data, d weight[, d bias].")
    .set_attr_parser(ConvolutionParam)
    .set_num_inputs(3)
    .set_num_outputs(lambda attrs: 2 if attrs.parsed.no_bias else 3)
    .set_attr(TIsBackward, True)
    .set_attr(FListInputNames, lambda attrs: ["ograd", "data", "weight"])
    .set_attr(FInferShape, infer_backward_shape)
    .set_attr(
        FInferType, infer_same_float_type("_backward_Convolution", ["ograd", "data", "weight"])
    )
    .set_attr(FResourceRequest, _temp_space)
    .set_attr(FCompute_cpu, _backward_cpu)
    .set_attr(FCompute_gpu, _backward_gpu)
)

__all__ = ["ConvolutionParam", "check_window_params", "infer_conv_shape"]
