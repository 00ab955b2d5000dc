"""UpSampling (nearest neighbour with any number of inputs, or bilinear) and its backward.

Nearest: the output is (N, C_out, scale*H_0, scale*W_0) for the first input's H_0, W_0;
input k (H_k, W_k dividing that) is repeated s_k = Ho / H_k times along each axis:

    concat:  out[n, off_k + c, y, x] = in_k[n, c, y // s_k, x // s_k]   (C_out = sum C_k)
    sum:     out[n, c, y, x]         = sum_k in_k[n, c, y // s_k, x // s_k]
    backward d in_k[n, c, h, w]      = sum of dy over the s_k x s_k block that (h, w) filled

Bilinear: a depthwise Deconvolution of the data with the (C, 1, k, k) `weight` input,
k = 2*scale - scale % 2, stride = scale, pad = ceil((scale - 1) / 2), so the output is
(N, C, scale*H, scale*W); the weight is initialised with the bilinear filter
(`__init__` on the auto-created weight variable, as MXNet marks it) and gets a gradient
like any Deconvolution weight. The nearest kernels are one body for both devices, one
work item per element produced; bilinear runs on Deconvolution's functions.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self

import numpy as np

from ... import kernel
from ...attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FListInputNames,
    FResourceRequest,
    FSetInputVarAttrOnCompose,
    TIsBackward,
)
from ...base import InferError, ParamError
from ...graph.grad import make_grad_node
from ...infer import shape_assign, shape_is_known, shape_str
from ...kernel.launch import ADD, NULL, is_gpu, req_code, run_rows, store, uindex
from ...param import Parameter, field
from ...registry import NodeAttrs, register_op
from ...resource import ResourceRequest
from . import deconvolution as deconv
from ._geometry import check_float_dtype, run_via_float32
from .convolution import infer_same_float_type


class UpSamplingParam(Parameter):
    scale = field(int, lower_bound=1, describe="Up sampling scale")
    num_filter = field(
        int,
        default=0,
        lower_bound=0,
        describe="Input filter. Only used by bilinear sample_type. Since bilinear upsampling "
        "uses deconvolution, num_filters is set to the number of channels.",
    )
    sample_type = field(str, enum=["bilinear", "nearest"], describe="upsampling method")
    multi_input_mode = field(
        str,
        enum=["concat", "sum"],
        default="concat",
        describe="How to handle multiple input. concat means concatenate upsampled images "
        "along the channel dimension. sum means add all images together, only available for "
        "nearest neighbor upsampling.",
    )
    num_args = field(
        int,
        lower_bound=1,
        describe="Number of inputs to be upsampled. For nearest neighbor upsampling, this can "
        "be 1-N; the size of output will be(scale*h_0,scale*w_0) and all other inputs will be "
        "upsampled to thesame size. For bilinear upsampling this must be 2; 1 input and 1 "
        "weight.",
    )
    workspace = field(
        int, default=512, lower_bound=0, describe="Tmp workspace for deconvolution (MB)"
    )

    @classmethod
    def parse(
        cls, kwargs: Mapping[str, Any], op_name: str | None = None, *, allow_unknown: bool = False
    ) -> Self:
        """Parse and check: bilinear takes exactly one data input and one weight."""
        op = op_name or "UpSampling"
        p = super().parse(kwargs, op_name, allow_unknown=allow_unknown)
        if p.sample_type == "bilinear" and p.num_args > 2:
            raise ParamError(
                f"{op}: sample_type='bilinear' takes 2 inputs (data and weight), but "
                f"num_args is {p.num_args}"
            )
        return p


def bilinear_geometry(scale: int) -> tuple[int, int, int]:
    """(kernel, stride, pad) of the Deconvolution that bilinear upsampling by `scale` is."""
    return 2 * scale - scale % 2, scale, scale // 2  # scale // 2 == ceil((scale - 1) / 2)


def _deconv_param(p: UpSamplingParam, channels: int) -> deconv.DeconvolutionParam:
    k, s, pad = bilinear_geometry(p.scale)
    return deconv.DeconvolutionParam(
        kernel=(k, k),
        stride=(s, s),
        pad=(pad, pad),
        num_filter=channels,
        num_group=channels,
        no_bias=True,
        workspace=p.workspace,
    )


def _bilinear(attrs: NodeAttrs) -> bool:
    return bool(attrs.parsed.sample_type == "bilinear")


def _num_inputs(attrs: NodeAttrs) -> int:
    return 2 if _bilinear(attrs) else int(attrs.parsed.num_args)


def _input_names(attrs: NodeAttrs) -> list[str]:
    if _bilinear(attrs):
        return ["data", "weight"]
    return [f"arg{i}" for i in range(attrs.parsed.num_args)]


def _set_init(attrs: NodeAttrs, var: Any, index: int) -> None:
    """The auto-created bilinear weight starts as the bilinear filter, as MXNet marks it."""
    if _bilinear(attrs) and index == 1 and "__init__" not in var.attrs.dict:
        var.attrs.dict["__init__"] = '["bilinear", {}]'


# -- inference ----------------------------------------------------------------------------


def _check_4d(what: str, shape: Any) -> None:
    if shape is not None and len(shape) != 4:
        raise InferError(
            f"UpSampling: input {what} must be 4-D (batch, channel, y, x), got shape "
            f"{shape_str(shape)}"
        )


def _infer_nearest(p: Any, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    for k, shape in enumerate(in_shapes):
        _check_4d(f"'arg{k}'", shape)
    first = in_shapes[0]
    if first is not None:
        oh = None if first[2] is None else first[2] * p.scale
        ow = None if first[3] is None else first[3] * p.scale
        batch = next((s[0] for s in in_shapes if s is not None and s[0] is not None), None)
        for k, shape in enumerate(in_shapes):
            if shape is None:
                continue
            for size, o, axis in ((shape[2], oh, "height"), (shape[3], ow, "width")):
                if size is not None and o is not None and (o % size if size else o):
                    raise InferError(
                        f"UpSampling: input 'arg{k}' has {axis} {size} (shape "
                        f"{shape_str(shape)}), which does not divide the output {axis} {o}"
                    )
            shape_assign(in_shapes, k, (batch, *shape[1:]), f"UpSampling: input 'arg{k}'")
        channels = [None if s is None else s[1] for s in in_shapes]
        if p.multi_input_mode == "sum":
            known = {c for c in channels if c is not None}
            if len(known) > 1:
                raise InferError(
                    f"UpSampling: multi_input_mode='sum' needs the same number of channels "
                    f"in every input, got {[shape_str(s) for s in in_shapes]}"
                )
            c_out = known.pop() if known else None
        else:
            c_out = None if None in channels else sum(int(c) for c in channels if c is not None)
        shape_assign(out_shapes, 0, (batch, c_out, oh, ow), "UpSampling: output 'output'")
    out = out_shapes[0]
    if out is not None and len(in_shapes) == 1:  # one input: its shape from the output
        spatial = [None if o is None else o // p.scale for o in out[2:]]
        shape_assign(in_shapes, 0, (out[0], out[1], *spatial), "UpSampling: input 'arg0'")
    return all(shape_is_known(s) for s in [*in_shapes, *out_shapes])


def _infer_bilinear(p: Any, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    _check_4d("'data'", in_shapes[0])
    data = in_shapes[0] or (None, None, None, None)
    if p.num_filter > 0:  # num_filter is the number of channels
        shape_assign(in_shapes, 0, (data[0], p.num_filter, *data[2:]), "UpSampling: input 'data'")
        data = in_shapes[0]
    out = out_shapes[0]
    if out is not None:
        spatial = [None if o is None else o // p.scale for o in out[2:]]
        shape_assign(in_shapes, 0, (out[0], out[1], *spatial), "UpSampling: input 'data'")
        data = in_shapes[0]
    k = bilinear_geometry(p.scale)[0]
    shape_assign(in_shapes, 1, (data[1], 1, k, k), "UpSampling: input 'weight'")
    spatial = [None if x is None else x * p.scale for x in data[2:]]
    shape_assign(out_shapes, 0, (data[0], data[1], *spatial), "UpSampling: output 'output'")
    return all(shape_is_known(s) for s in [*in_shapes, *out_shapes])


def infer_upsampling_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    """Nearest: (N, C_k, H_k, W_k) inputs -> (N, C_out, scale*H_0, scale*W_0); bilinear:
    data (N, C, H, W), weight (C, 1, k, k) -> (N, C, scale*H, scale*W)."""
    if _bilinear(attrs):
        return _infer_bilinear(attrs.parsed, in_shapes, out_shapes)
    return _infer_nearest(attrs.parsed, in_shapes, out_shapes)


# -- nearest kernels ------------------------------------------------------------------------


@kernel.parallel_for
def nearest_up(t, x, out, c_in, c_out, c_off, h, w, sh, sw, mode, chunk, nchunk):
    # item t: output columns [z0, z1) of output row (n, c, y) of this input's channel
    # block (the CPU: the whole row, its index arithmetic once; the GPU: one element);
    # each input value is read once and stored into its sw output columns
    ow = w * sw
    oh = h * sh
    r = t // nchunk
    z0 = (t - r * nchunk) * chunk
    z1 = min(z0 + chunk, ow)
    y = r % oh
    q = r // oh
    c = q % c_in
    n = q // c_in
    src = ((n * c_in + c) * h + y // sh) * w
    dst = ((n * c_out + c_off + c) * oh + y) * ow
    for zz in range(z0 // sw, (z1 - 1) // sw + 1):
        v = x[uindex(src + zz)]
        for z in range(max(z0, zz * sw), min(z1, zz * sw + sw)):
            store(out, dst + z, v, mode)


@kernel.parallel_for
def nearest_down(t, dy, dx, c_in, c_out, c_off, h, w, sh, sw, mode, chunk, nchunk):
    # item t: input columns [z0, z0 + chunk) of input row (n, c, y) (the CPU: the whole
    # row, its index arithmetic once; the GPU: one element); each gradient sums its
    # sh x sw block of dy, row by row
    r = t // nchunk
    z0 = (t - r * nchunk) * chunk
    y = r % h
    q = r // h
    c = q % c_in
    n = q // c_in
    ow = w * sw
    base = ((n * c_out + c_off + c) * h * sh + y * sh) * ow
    for z in range(z0, z0 + chunk):
        acc = np.float64(0.0)  # not 0.0: on the simulator float + float16 stays float16
        for a in range(sh):
            for b in range(sw):
                acc += dy[uindex(base + a * ow + z * sw + b)]
        store(dx, r * w + z, acc, mode)


def _nearest_forward(ctx: Any, inputs: list[Any], req: list[Any], out: Any, p: Any) -> None:
    mode = req_code("UpSampling", req[0])
    c_out, oh, ow = out.shape[1], out.shape[2], out.shape[3]
    if out.size == 0:  # also where an input plane is empty (its scale oh // h is undefined)
        return
    c_off = 0
    for k, x in enumerate(inputs):
        n, c_in, h, w = x.shape
        step = mode if p.multi_input_mode == "concat" or k == 0 or mode == NULL else ADD
        spans = ow if is_gpu(ctx) else 1  # items per output row
        args = (x, out, c_in, c_out, c_off, h, w, oh // h, ow // w, step, ow // spans, spans)
        run_rows(ctx, "UpSampling", nearest_up, n * c_in * oh * spans, *args)
        if p.multi_input_mode == "concat":
            c_off += c_in


def _nearest_backward(ctx: Any, dy: Any, req: list[Any], outputs: list[Any], p: Any) -> None:
    c_out, oh, ow = dy.shape[1], dy.shape[2], dy.shape[3]
    c_off = 0
    for k, dx in enumerate(outputs):
        c_in, h, w = dx.shape[1:]
        mode = req_code("_backward_UpSampling", req[k])
        if mode != NULL and dx.size:
            spans = w if is_gpu(ctx) else 1  # items per input row
            args = (dy, dx, c_in, c_out, c_off, h, w, oh // h, ow // w, mode, w // spans, spans)
            run_rows(ctx, "_backward_UpSampling", nearest_down, dx.size // w * spans, *args)
        if p.multi_input_mode == "concat":
            c_off += c_in


# -- compute ------------------------------------------------------------------------------


def _forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    p = attrs.parsed
    check_float_dtype("UpSampling", "data", inputs[0].dtype)
    if p.sample_type == "nearest":
        if req_code("UpSampling", req[0]) == NULL:
            return
        if is_gpu(ctx):
            _nearest_forward(ctx, inputs, req, outputs[0], p)
        else:  # float16 through float32 copies (numba computes no float16 on the CPU)
            run_via_float32(
                lambda i, r, o: _nearest_forward(ctx, i, r, o[0], p), inputs, req, outputs
            )
        return
    dp = _deconv_param(p, inputs[0].shape[1])
    if is_gpu(ctx):
        deconv.forward_gpu_with(dp, ctx, inputs, req, outputs, "UpSampling")
    else:
        deconv.forward_cpu_with(dp, ctx, inputs, req, outputs)


def _backward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    # nearest: inputs (dy,); bilinear: (dy, data, weight)
    p = attrs.parsed
    check_float_dtype("_backward_UpSampling", "data", inputs[0].dtype)
    if p.sample_type == "nearest":
        if is_gpu(ctx):
            _nearest_backward(ctx, inputs[0], req, outputs, p)
        else:
            run_via_float32(
                lambda i, r, o: _nearest_backward(ctx, i[0], r, o, p), inputs, req, outputs
            )
        return
    dp = _deconv_param(p, inputs[1].shape[1])
    if is_gpu(ctx):
        deconv.backward_gpu_with(dp, ctx, inputs, req, outputs, "_backward_UpSampling")
    else:
        deconv.backward_cpu_with(dp, ctx, inputs, req, outputs)


def infer_upsampling_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    """Every input and the output share one floating-point dtype."""
    return bool(
        infer_same_float_type("UpSampling", _input_names(attrs))(attrs, in_types, out_types)
    )


def _gradient(node: Any, ograds: list[Any]) -> list[Any]:
    # nearest needs only dy; bilinear is a Deconvolution: (dy, data, weight)
    heads = [ograds[0], *node.inputs[:2]] if _bilinear(node.attrs) else [ograds[0]]
    return make_grad_node("_backward_UpSampling", node, heads)


def _temp_space(attrs: NodeAttrs) -> list[ResourceRequest]:
    return [ResourceRequest.kTempSpace] if _bilinear(attrs) else []


(
    register_op("UpSampling")
    .describe(
        "Upsamples the given input data.\n\n"
        "Two algorithms (``sample_type``) are available:\n\n"
        "- **nearest**: every input is repeated ``scale`` (times its size ratio to the "
        "first input) along height and width; several inputs are concatenated along the "
        "channels (``multi_input_mode='concat'``) or summed (``'sum'``). The output is "
        "*(batch, channels, scale*height_0, scale*width_0)*.\n"
        "- **bilinear**: a depthwise Deconvolution of ``data`` with ``weight`` of shape "
        "*(channels, 1, 2*scale - scale%2, same)*, stride ``scale`` and pad "
        "``ceil((scale-1)/2)``; initialise the weight with the bilinear filter "
        "(``nv.init.Bilinear``). ``num_filter`` is the number of channels.\n\n"
        "Example::\n\n"
        "    x = [[[[1, 1, 1], [1, 1, 1], [1, 1, 1]]]]\n"
        "    UpSampling(x, scale=2, sample_type='nearest') = 6x6 ones\n"
    )
    .set_attr_parser(UpSamplingParam)
    .set_num_inputs(_num_inputs)
    .set_num_outputs(1)
    .set_key_var_num_args("num_args")
    .set_attr(FListInputNames, _input_names)
    .set_attr(FInferShape, infer_upsampling_shape)
    .set_attr(FInferType, infer_upsampling_type)
    .set_attr(FSetInputVarAttrOnCompose, _set_init)
    .set_attr(FResourceRequest, _temp_space)
    .set_attr(FCompute_cpu, _forward)
    .set_attr(FCompute_gpu, _forward)
    .set_attr(FGradient, _gradient)
    .add_argument(
        "data",
        "NDArray-or-Symbol[]",
        "Array of tensors to upsample. For bilinear upsampling, there should be 2 inputs - "
        "1 data and 1 weight.",
    )
    .add_arguments(UpSamplingParam.fields())
)

(
    register_op("_backward_UpSampling")
    .describe("Backward of UpSampling: (dy) -> d inputs; bilinear (dy, data, weight).")
    .set_attr_parser(UpSamplingParam)
    .set_num_inputs(lambda attrs: 3 if _bilinear(attrs) else 1)
    .set_num_outputs(_num_inputs)
    .set_attr(TIsBackward, True)
    .set_attr(FResourceRequest, _temp_space)
    .set_attr(FCompute_cpu, _backward)
    .set_attr(FCompute_gpu, _backward)
)

__all__ = ["UpSamplingParam", "bilinear_geometry", "infer_upsampling_shape"]
