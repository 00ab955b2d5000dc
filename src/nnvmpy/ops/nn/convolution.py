"""Convolution (1-D, 2-D and 3-D: NCW, NCHW, NCDHW) and _backward_Convolution.

    out[n, f] = bias[f] + sum_{c in group(f)} x[n, c] (*) w[f, c]        (cross-correlation)
    Ho = (H + 2*pad - dilate*(kh - 1) - 1) // stride + 1                (likewise Do, Wo)

CPU: im2col + BLAS GEMM with a kTempSpace workspace (_conv_cpu.py); GPU: im2col +
matrix.gemm in the same workspace (_im2col_cuda.py), or the direct one-body kernels
(_conv_cuda.py) for depthwise and tiny convolutions. A node marked for bfloat16 (the
AmpBFloat16 pass, ops/amp_bf16.py) gets its weight as packed bfloat16 bits and runs
_conv_bf16.py on the CPU instead. All are imported on their first
launch, so `import nnvmpy` compiles nothing. Every convolution runs as a 3-D one on 5-D views
(1-D and 2-D ones with a depth of 1); `conv_shape` gives its sizes. Convolution_v1
(legacy_v1.py) and Deconvolution (deconvolution.py) reuse this module's pieces.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self

from ...attrs import (
    FBFloat16Compute,
    FCompute_cpu,
    FCompute_gpu,
    FEpilogue,
    FFoldScaleShift,
    FGradient,
    FInferShape,
    FInferType,
    FListInputNames,
    FResourceRequest,
    FStampedInputs,
    TIsBackward,
)
from ...base import InferError, NNVMError, OpReqType, ParamError
from ...graph.grad import make_grad_node
from ...infer import shape_assign, shape_is_known, shape_str, type_assign
from ...kernel.launch import NULL, is_gpu, req_code, run_rows
from ...param import Parameter, Shape, field
from ...registry import NodeAttrs, register_op
from ...resource import ResourceRequest
from ..amp_bf16 import BF16Weight, accepts_bf16_weight, is_bits
from ._geometry import (
    Window,
    as_5d,
    check_float_dtype,
    conv_out_size,
    dilated,
    op_name,
    run_via_float32,
    to_3d,
)
from .inference import FoldTarget

#: the data layout of each number of spatial axes, as MXNet names it
LAYOUTS = {1: "NCW", 2: "NCHW", 3: "NCDHW"}
SHAPES = {1: "(N, C, W)", 2: "(N, C, H, W)", 3: "(N, C, D, H, W)"}


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
        p = super().parse(kwargs, op_name, allow_unknown=allow_unknown)
        return check_conv_params(p, op_name or "Convolution")


def check_conv_params(p: Any, op: str, dims: tuple[int, ...] = (1, 2, 3)) -> Any:
    """Shared by Convolution, Deconvolution and Convolution_v1: filters that the groups
    divide, then check_window_params with stride and dilate defaulting to 1s."""
    if p.num_filter % p.num_group:
        raise ParamError(
            f"{op}: parameter 'num_filter' ({p.num_filter}) must be a multiple of "
            f"'num_group' ({p.num_group})"
        )
    return check_window_params(p, op, ("stride", "dilate"), dims)


def check_window_params(
    p: Any,
    op: str,
    ones: tuple[str, ...],
    dims: tuple[int, ...] = (1, 2, 3),
    longer: tuple[str, ...] = (),
) -> Any:
    """Shared by the window ops: kernel of `dims` axes, matching stride/dilate/pad lengths.

    Empty tuples among `ones` (filled with 1s) and 'pad' (0s) take the kernel's length;
    the parameters in `longer` may be longer than the kernel (Pooling's pad, as MXNet
    reads only its leading entries), and are cut to its length.
    """
    nd = len(p.kernel)
    if nd not in dims:
        accepted = ", ".join(str(d) for d in dims[:-1]) + f" or {dims[-1]}"
        layouts = ", ".join(LAYOUTS[d] for d in dims)
        raise ParamError(
            f"{op}: parameter 'kernel' must have {accepted} dimensions ({layouts}), got {p.kernel}"
        )
    if min(p.kernel) < 1:
        raise ParamError(f"{op}: parameter 'kernel' must be positive, got {p.kernel}")
    changes: dict[str, tuple[int, ...]] = {}
    for name in (*ones, "pad"):
        value = getattr(p, name)
        low = 1 if name in ones else 0
        if len(value) == 0:
            changes[name] = (low,) * nd
            continue
        if len(value) > nd and name in longer:
            value = changes[name] = value[:nd]
        if len(value) != nd:
            raise ParamError(
                f"{op}: parameter {name!r} must have {nd} entries like kernel {p.kernel}, "
                f"got {value}"
            )
        if min(value) < low:
            raise ParamError(f"{op}: parameter {name!r} must be >= {low}, got {value}")
    layout = getattr(p, "layout", None)
    if layout not in (None, LAYOUTS[nd]):
        raise ParamError(
            f"{op}: parameter 'layout' is {layout!r}, but a {nd}-D {op} supports "
            f"only layout None or {LAYOUTS[nd]!r}"
        )
    return p.replace(**changes) if changes else p


def conv_shape(
    p: Any, data: tuple[int, ...], n_f: int, out_spatial: tuple[int, ...], pad: Any = None
) -> Any:
    """The ConvShape (_conv_cpu.py) of a convolution of `data` into n_f output channels.

    p supplies kernel, stride, dilate, num_group and workspace; `pad` overrides p.pad
    (Deconvolution's target_shape padding). Imported lazily: it loads the CPU kernels.
    """
    from nnvmpy.ops.nn._conv_cpu import ConvShape, DepthWindow

    (kd, kh, kw), (sd, sh, sw) = to_3d(p.kernel, 1), to_3d(p.stride, 1)
    (pd, ph, pw), (dd, dh, dw) = to_3d(p.pad if pad is None else pad, 0), to_3d(p.dilate, 1)
    (d, h, w), (do, ho, wo) = to_3d(data[2:], 1), to_3d(out_spatial, 1)
    win = Window(kh, kw, sh, sw, ph, pw, dh, dw, ho, wo)
    return ConvShape(
        data[0], data[1], h, w, n_f, p.num_group, win, p.workspace, d,
        DepthWindow(kd, sd, pd, dd, do),
    )  # fmt: skip


def input_names(attrs: NodeAttrs) -> list[str]:
    """FListInputNames of the convolutions: the bias only without no_bias."""
    return ["data", "weight"] if attrs.parsed.no_bias else ["data", "weight", "bias"]


# -- inference ----------------------------------------------------------------------------


def infer_conv_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    """data (N, C, *S) -> weight (F, C/g, *kernel), bias (F,), out (N, F, *S_out).

    C comes from the weight when the data's is unknown; N from the output.
    """
    p, op = attrs.parsed, op_name(attrs, "Convolution")
    nd, f, g = len(p.kernel), p.num_filter, p.num_group
    if not p.no_bias:
        shape_assign(in_shapes, 2, (f,), f"{op}: input 'bias'")
    data, weight = in_shapes[0], in_shapes[1]
    if data is None:
        return False
    if len(data) != nd + 2:
        raise InferError(
            f"{op}: input 'data' must be {nd + 2}-D {SHAPES[nd]} for kernel "
            f"{p.kernel}, got shape {shape_str(data)}"
        )
    if data[1] is None and weight is not None and len(weight) == nd + 2 and weight[1] is not None:
        shape_assign(in_shapes, 0, (data[0], weight[1] * g, *data[2:]), f"{op}: input 'data'")
        data = in_shapes[0]
    c = data[1]
    if c is not None and c % g:
        raise InferError(
            f"{op}: input 'data' has {c} channels (shape {shape_str(data)}), which "
            f"num_group={g} does not divide"
        )
    cg = None if c is None else c // g
    shape_assign(in_shapes, 1, (f, cg, *p.kernel), f"{op}: input 'weight'")
    spatial: list[int | None] = []
    for x, k, s, pad, d in zip(data[2:], p.kernel, p.stride, p.pad, p.dilate):
        if x is None:
            spatial.append(None)
            continue
        if dilated(k, d) > x + 2 * pad:
            raise InferError(
                f"{op}: kernel {p.kernel} (dilate {p.dilate}) is larger than the "
                f"padded input: data has shape {shape_str(data)} with pad {p.pad}"
            )
        spatial.append(conv_out_size(x, k, s, pad, d))
    shape_assign(out_shapes, 0, (data[0], f, *spatial), f"{op}: output 'output'")
    out = out_shapes[0]
    if out is not None:  # as MXNet: N from the output, and a stride-1 spatial size too
        back = [out[0] if data[0] is None else data[0], data[1]]
        for x, o, k, s, pad, d in zip(data[2:], out[2:], p.kernel, p.stride, p.pad, p.dilate):
            back.append(o + dilated(k, d) - 1 - 2 * pad if x is None and o and s == 1 else x)
        shape_assign(in_shapes, 0, tuple(back), f"{op}: input 'data'")
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


def infer_backward_shape_of(op: str) -> Any:
    """FInferShape of a convolution's backward `op`: (ograd, data, weight) -> (d data,
    d weight[, d bias (num_filter,)]) have the forward inputs' shapes."""

    def infer(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
        shape_assign(out_shapes, 0, in_shapes[1], f"{op}: output 'data_grad'")
        shape_assign(out_shapes, 1, in_shapes[2], f"{op}: output 'weight_grad'")
        if len(out_shapes) > 2:
            shape_assign(out_shapes, 2, (attrs.parsed.num_filter,), f"{op}: bias")
        return all(shape_is_known(s) for s in out_shapes)

    return infer


infer_backward_shape = infer_backward_shape_of("_backward_Convolution")


# -- compute ------------------------------------------------------------------------------


def _conv_shape(p: ConvolutionParam, x: Any, out: Any) -> Any:
    return conv_shape(p, tuple(x.shape), p.num_filter, tuple(out.shape[2:]))


def forward_cpu(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    """FCompute<cpu> of Convolution (and Convolution_v1)."""
    from nnvmpy.ops.nn import _conv_cpu

    def run(ins: list[Any], reqs: list[Any], outs: list[Any]) -> None:
        bias = None if p.no_bias else ins[2]
        x, w, out = as_5d(ins[0]), as_5d(ins[1]), as_5d(outs[0])
        if is_bits(w):  # packed by _PackBFloat16: compute in bfloat16 (_conv_bf16.py)
            _conv_bf16().forward(s, x, w, bias, out, reqs[0], res)
            return
        _conv_cpu.forward(s, x, w, bias, out, reqs[0], res, training=bool(ctx.is_train))

    p, res = attrs.parsed, ctx.requested[0]
    s = _conv_shape(p, inputs[0], outputs[0])
    run_via_float32(run, inputs, req, outputs)


def forward_epilogue(
    attrs: NodeAttrs,
    ctx: Any,
    inputs: list[Any],
    req: list[Any],
    outputs: list[Any],
    epilogue: Any,
) -> None:
    """FEpilogue of Convolution: out = relu?(conv(x, w) + bias + residual?).

    CPU: the bias, the residual and relu are applied chunk by chunk of images right after
    the GEMMs wrote them (_conv_cpu.forward); GPU: one pass after the kernel.
    """
    from nnvmpy.ops.nn.inference import apply_epilogue

    n = len(inputs) - int(epilogue.residual)
    if req[0] == OpReqType.kNullOp:
        return
    if req[0] == OpReqType.kAddTo:  # the pass fuses forward nodes, which write their outputs
        raise NNVMError("Convolution: an epilogue cannot add to its output (req 'add')")
    if is_gpu(ctx):
        forward_gpu(attrs, ctx, inputs[:n], req, outputs)
        residual = inputs[n] if epilogue.residual else None
        apply_epilogue(ctx, outputs[0], None, residual, epilogue.relu)
        return
    from nnvmpy.ops.nn import _conv_cpu

    def run(ins: list[Any], reqs: list[Any], outs: list[Any]) -> None:
        bias = None if p.no_bias else ins[2]
        res5 = as_5d(ins[n]) if epilogue.residual else None
        x, w, out = as_5d(ins[0]), as_5d(ins[1]), as_5d(outs[0])
        epi = (res5, epilogue.relu)
        if is_bits(w):
            _conv_bf16().forward(s, x, w, bias, out, reqs[0], ctx.requested[0], epi)
            return
        training = bool(ctx.is_train)
        _conv_cpu.forward(s, x, w, bias, out, reqs[0], ctx.requested[0], epi, training=training)

    p = attrs.parsed
    s = _conv_shape(p, inputs[0], outputs[0])
    run_via_float32(run, inputs, req, outputs)


def backward_cpu(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    """FCompute<cpu> of _backward_Convolution: (ograd, data, weight) -> gradients."""
    from nnvmpy.ops.nn import _conv_cpu

    def run(ins: list[Any], reqs: list[Any], outs: list[Any]) -> None:
        dy, x, w = (as_5d(a) for a in ins)
        grads = [as_5d(outs[0]), as_5d(outs[1]), *outs[2:]]
        _conv_cpu.backward(s, dy, x, w, grads, list(reqs), res)

    s, res = _conv_shape(attrs.parsed, inputs[1], inputs[0]), ctx.requested[0]
    run_via_float32(run, inputs, req, outputs)


def forward_gpu(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    """FCompute<gpu> of Convolution: im2col + GEMM, or the direct kernel for depthwise and
    tiny convolutions (the rule: _im2col_cuda.use_gemm)."""
    from nnvmpy.ops.nn import _im2col_cuda
    from nnvmpy.ops.nn._conv_cuda import conv_forward, geometry

    name = op_name(attrs, "Convolution")
    p, mode = attrs.parsed, req_code(name, req[0])
    check_float_dtype(name, "data", inputs[0].dtype)
    if is_bits(inputs[1]):  # the AmpBFloat16 pass runs for CPU executors only
        raise NNVMError(f"{name}: input 'weight' is bfloat16 bits; bfloat16 runs on the CPU only")
    if mode == NULL:
        return
    x, w, out = inputs[0], inputs[1], outputs[0]
    s = _conv_shape(p, x, out)
    if _im2col_cuda.use_gemm(s):
        bias = None if p.no_bias else inputs[2]
        _im2col_cuda.forward(ctx, name, s, x, w, bias, out, mode, ctx.requested[0])
        return
    bias = w if p.no_bias else inputs[2]  # a stand-in the kernel never reads
    run_rows(ctx, name, conv_forward, out.size, x, w, bias, out, not p.no_bias, mode, *geometry(s))


def backward_gpu(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    """FCompute<gpu> of _backward_Convolution: data and weight gradients as GEMMs around
    im2col/col2im (or the direct kernels, as forward_gpu decides), a bias channel sum."""
    from nnvmpy.ops.nn import _im2col_cuda
    from nnvmpy.ops.nn._conv_cuda import bias_grad, conv_data_grad, geometry, weight_grad_gpu

    name, p = op_name(attrs, "_backward_Convolution"), attrs.parsed
    check_float_dtype(name, "data", inputs[1].dtype)
    dy, x, w = inputs
    s = _conv_shape(p, x, dy)
    geo, modes = geometry(s), [req_code(name, r) for r in req]
    if len(outputs) > 2 and modes[2] != NULL:
        bias_grad(ctx, name, dy, outputs[2], s.n, s.f, s.hw, modes[2])
    if _im2col_cuda.use_gemm(s):
        dx, dw = outputs[0], outputs[1]
        _im2col_cuda.backward(ctx, name, s, dy, x, w, dx, dw, modes, ctx.requested[0])
        return
    if modes[0] != NULL:
        run_rows(ctx, name, conv_data_grad, x.size, dy, w, w, outputs[0], False, modes[0], *geo)
    if modes[1] != NULL:
        weight_grad_gpu(ctx, name, dy, x, outputs[1], s.n, modes[1], geo)


def _conv_bf16() -> Any:
    from nnvmpy.ops.nn import _conv_bf16

    return _conv_bf16


def bf16_weight(attrs: NodeAttrs) -> BF16Weight | None:
    """FBFloat16Compute: 1-D and 2-D kernels take their weight packed (F, *kernel, C)."""
    return BF16Weight(1, True) if len(attrs.parsed.kernel) <= 2 else None


def _conv_gradient(node: Any, ograds: list[Any]) -> list[Any]:
    # d data, d weight, d bias from (ograd, data, weight), as MXNet's ConvolutionGrad
    return make_grad_node("_backward_Convolution", node, [ograds[0], *node.inputs[:2]])


def fold_target(attrs: NodeAttrs) -> FoldTarget:
    """FFoldScaleShift: output channel f is weight[f] (*) x + bias[f], whatever the groups."""
    bias = None if attrs.parsed.no_bias else 2
    return FoldTarget(1, bias, 1, {"no_bias": "False"}, 2)


def temp_space(attrs: NodeAttrs) -> list[ResourceRequest]:
    """FResourceRequest of the convolutions: one kTempSpace workspace."""
    return [ResourceRequest.kTempSpace]


(
    register_op("Convolution")
    .describe(
        "Compute *N*-D convolution on *(N+2)*-D input (N = 1, 2 or 3).\n\n"
        "For 2-D convolution, the shapes are\n\n"
        "- **data**: *(batch_size, channel, height, width)*\n"
        "- **weight**: *(num_filter, channel/num_group, kernel[0], kernel[1])*\n"
        "- **bias**: *(num_filter,)*\n"
        "- **out**: *(batch_size, num_filter, out_height, out_width)*, with::\n\n"
        "    out_height = (height + 2*pad[0] - dilate[0]*(kernel[0]-1) - 1) // stride[0] + 1\n\n"
        "With num_group > 1 the channels split into num_group groups convolved separately "
        "(num_group == channel is depthwise convolution). 1-D convolution takes "
        "*(batch_size, channel, width)*, 3-D *(batch_size, channel, depth, height, width)*."
    )
    .set_attr_parser(ConvolutionParam)
    .set_num_inputs(lambda attrs: 2 if attrs.parsed.no_bias else 3)
    .set_num_outputs(1)
    .set_attr(FListInputNames, input_names)
    .set_attr(FInferShape, infer_conv_shape)
    .set_attr(
        FInferType,
        accepts_bf16_weight(
            "Convolution",
            infer_same_float_type("Convolution", ["data", "weight", "bias"]),
            bf16_weight,
        ),
    )
    .set_attr(FResourceRequest, temp_space)
    .set_attr(FCompute_cpu, forward_cpu)
    .set_attr(FCompute_gpu, forward_gpu)
    .set_attr(FGradient, _conv_gradient)
    .set_attr(FFoldScaleShift, fold_target)
    .set_attr(FEpilogue, forward_epilogue)
    .set_attr(FStampedInputs, lambda attrs: [1])  # the weight: Winograd's transform cache
    .set_attr(FBFloat16Compute, bf16_weight)
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
    .set_attr(FResourceRequest, temp_space)
    .set_attr(FCompute_cpu, backward_cpu)
    .set_attr(FCompute_gpu, backward_gpu)
)

__all__ = [
    "LAYOUTS",
    "ConvolutionParam",
    "backward_cpu",
    "backward_gpu",
    "check_conv_params",
    "check_window_params",
    "conv_shape",
    "forward_cpu",
    "forward_gpu",
    "infer_backward_shape",
    "infer_backward_shape_of",
    "infer_conv_shape",
    "infer_same_float_type",
    "input_names",
    "temp_space",
]
