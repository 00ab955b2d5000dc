"""Pooling (1-D and 2-D, NCHW: max / avg / sum / lp) and _backward_Pooling.

    valid:  Ho = floor((H + 2*pad - kernel) / stride) + 1
    full:   Ho = ceil((H + 2*pad - kernel) / stride) + 1
    same:   Ho = ceil(H / stride), padded as TensorFlow does (pad is ignored)

Max pooling has two outputs, as in MXNet 1.9.1's MKL-DNN build (node_row_ptr in saved
symbol files counts them): the pooled values and a hidden int32 mask holding, per
output, the flat index h*W + w of the maximum in its input plane; backward routes the
gradient through it. The mask is always overwritten (req 'add' adds to the values only).
Kernels: _pool_window.py (one body for both devices: every forward but the CPU's max
pooling, and the GPU's backward) and _pool_cpu.py (CPU-only max pooling and backward
kernels, faster there; numba, imported on the first CPU launch).
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
    FListOutputNames,
    FNumVisibleOutputs,
    TIsBackward,
)
from ...base import InferError, OpReqType, ParamError
from ...graph.grad import make_grad_node
from ...graph.node import NodeEntry
from ...infer import shape_assign, shape_is_known, shape_str, type_assign
from ...kernel.cuda import get_cuda
from ...kernel.launch import run_rows
from ...param import Parameter, Shape, field
from ...registry import NodeAttrs, register_op
from ._geometry import (
    as_4d,
    check_float_dtype,
    pool_out_size,
    run_via_float32,
    same_pad,
    to_2d,
)
from ._pool_window import pool_backward, pool_forward
from .convolution import check_window_params

_MODES = {"max": 0, "avg": 1, "sum": 2, "lp": 3}
_MASK_DTYPE = np.dtype(np.int32)


class PoolingParam(Parameter):
    kernel = field(Shape, default=(), describe="Pooling kernel size: (y, x) or (d, y, x)")
    pool_type = field(
        str, enum=["avg", "lp", "max", "sum"], default="max", describe="Pooling type to be applied."
    )
    global_pool = field(
        bool,
        default=False,
        describe="Ignore kernel size, do global pooling based on current input feature map.",
    )
    cudnn_off = field(bool, default=False, describe="Turn off cudnn pooling (ignored).")
    pooling_convention = field(
        str,
        enum=["full", "same", "valid"],
        default="valid",
        describe="Pooling convention to be applied.",
    )
    stride = field(
        Shape, default=(), describe="Stride: for pooling (y, x) or (d, y, x). Defaults to 1."
    )
    pad = field(Shape, default=(), describe="Pad for pooling: (y, x) or (d, y, x). Defaults to 0.")
    p_value = field(int, optional=True, describe="Value of p for Lp pooling, can be 1 or 2.")
    count_include_pad = field(
        bool,
        optional=True,
        describe="Only used for AvgPool, specify whether to count padding elements for "
        "average calculation. None (the default) means True.",
    )
    layout = field(
        str,
        enum=["NCDHW", "NCHW", "NCW", "NDHWC", "NHWC", "NWC"],
        optional=True,
        describe="Set layout for input and output. Empty for default layout: NCW for 1d, "
        "NCHW for 2d. Only the default layouts are supported.",
    )

    @classmethod
    def parse(
        cls, kwargs: Mapping[str, Any], op_name: str | None = None, *, allow_unknown: bool = False
    ) -> Self:
        """Parse and check; stride/pad default to 1s/0s of the kernel's length."""
        op = op_name or "Pooling"
        p = super().parse(kwargs, op_name, allow_unknown=allow_unknown)
        if p.pool_type == "lp" and p.p_value is None:
            raise ParamError(f"{op}: pool_type='lp' needs parameter 'p_value' (e.g. 2), got None")
        if p.p_value is not None and p.p_value < 1:
            raise ParamError(f"{op}: parameter 'p_value' must be >= 1, got {p.p_value}")
        if not p.kernel:
            if not p.global_pool:
                raise ParamError(
                    f"{op}: parameter 'kernel' is required unless global_pool=True, got ()"
                )
            return p
        return check_window_params(p, op, ("stride",))


def _num_outputs(attrs: NodeAttrs) -> int:
    return 2 if attrs.parsed.pool_type == "max" else 1


def _output_names(attrs: NodeAttrs) -> list[str]:
    return ["output", "mask"] if attrs.parsed.pool_type == "max" else ["output"]


def _window(p: PoolingParam, data: tuple[int, ...]) -> tuple[int, ...]:
    """(kh, kw, sh, sw, ph, pw, eh, ew) on the 4-D view; eh/ew: where the padding ends."""
    spatial = (1, data[2]) if len(data) == 3 else (data[2], data[3])
    if p.global_pool:
        kh, kw = spatial
        return (kh, kw, 1, 1, 0, 0, kh, kw)
    (kh, kw), (sh, sw), (ph, pw) = to_2d(p.kernel, 1), to_2d(p.stride, 1), to_2d(p.pad, 0)
    if p.pooling_convention == "same":
        ph, pw = same_pad(spatial[0], kh, sh), same_pad(spatial[1], kw, sw)
        ho = pool_out_size(spatial[0], kh, sh, 0, "same")
        wo = pool_out_size(spatial[1], kw, sw, 0, "same")
        # where the padding ends: H + the trailing pad
        return (kh, kw, sh, sw, ph, pw, (ho - 1) * sh + kh - ph, (wo - 1) * sw + kw - pw)
    return (kh, kw, sh, sw, ph, pw, spatial[0] + ph, spatial[1] + pw)


# -- inference ----------------------------------------------------------------------------


def infer_pool_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    """data (N, C, *S) -> output (N, C, *S_out) [and the max mask, same shape]."""
    p = attrs.parsed
    data = in_shapes[0]
    if data is None:
        return False
    nd = len(data) - 2 if p.global_pool else len(p.kernel)
    if len(data) != nd + 2 or nd not in (1, 2):
        want = f"{nd + 2}-D for kernel {p.kernel}" if not p.global_pool else "3-D or 4-D"
        raise InferError(
            f"Pooling: input 'data' must be {want} (NCW or NCHW), got shape {shape_str(data)}"
        )
    spatial: list[int | None] = []
    for d, x in enumerate(data[2:]):
        if x is None or p.global_pool:
            spatial.append(None if x is None else 1)
            continue
        k, s, pad = p.kernel[d], p.stride[d], p.pad[d]
        if p.pooling_convention != "same" and k > x + 2 * pad:
            raise InferError(
                f"Pooling: kernel {p.kernel} is larger than the padded input: data has "
                f"shape {shape_str(data)} with pad {p.pad}"
            )
        spatial.append(pool_out_size(x, k, s, pad, p.pooling_convention))
    out = (data[0], data[1], *spatial)
    for j in range(len(out_shapes)):
        shape_assign(out_shapes, j, out, f"Pooling: output {_output_names(attrs)[j]!r}")
    known = out_shapes[0]
    if known is not None and (data[0] is None or data[1] is None):
        shape_assign(in_shapes, 0, (known[0], known[1], *data[2:]), "Pooling: input 'data'")
    return all(shape_is_known(s) for s in [*in_shapes, *out_shapes])


def infer_pool_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    """Output 0 has the data's float dtype; the max mask is int32."""
    if len(out_types) > 1:
        type_assign(out_types, 1, _MASK_DTYPE, "Pooling: output 'mask'")
    dtype = in_types[0] if in_types[0] is not None else out_types[0]
    if dtype is None:
        return False
    check_float_dtype("Pooling", "data", dtype)
    type_assign(in_types, 0, dtype, "Pooling: input 'data'")
    type_assign(out_types, 0, dtype, "Pooling: output 'output'")
    return True


def infer_backward_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    """(ograd, data, output[, mask]) -> d data, shaped like data."""
    return shape_assign(out_shapes, 0, in_shapes[1], "_backward_Pooling: output 'data_grad'")


def infer_backward_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    if len(in_types) > 3:
        type_assign(in_types, 3, _MASK_DTYPE, "_backward_Pooling: input 'mask'")
    known = next((t for t in [*in_types[:3], *out_types] if t is not None), None)
    if known is None:
        return False
    for i in range(3):
        type_assign(in_types, i, known, f"_backward_Pooling: input {i}")
    return type_assign(out_types, 0, known, "_backward_Pooling: output 'data_grad'")


# -- compute ------------------------------------------------------------------------------


def _scalars(p: PoolingParam, data_shape: tuple[int, ...]) -> tuple[Any, ...]:
    """(mode, *window, include_pad, p): the kernels' trailing arguments."""
    include = p.count_include_pad is not False
    return (_MODES[p.pool_type], *_window(p, data_shape), include, p.p_value or 1)


def _mask_or_dummy(outputs: list[Any], req: list[Any]) -> tuple[Any, bool]:
    if len(outputs) > 1 and req[1] != OpReqType.kNullOp:
        return as_4d(outputs[1]), True
    return _dummy_mask(), False


def _dummy_mask() -> Any:
    return np.zeros((1, 1, 1, 1), _MASK_DTYPE)


def _forward_cpu(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    from . import _pool_cpu

    def run(ins: list[Any], reqs: list[Any], outs: list[Any]) -> None:
        if reqs[0] == OpReqType.kNullOp and (len(outs) < 2 or reqs[1] == OpReqType.kNullOp):
            return
        mask, masked = _mask_or_dummy(outs, reqs)
        # the kernels always produce output 0; with req 'null' they write a scratch copy
        out = as_4d(outs[0]) if reqs[0] != OpReqType.kNullOp else np.empty_like(as_4d(outs[0]))
        add = reqs[0] == OpReqType.kAddTo
        if scalars[0] == _MODES["max"]:
            kh, kw, sh, sw, ph, pw = scalars[1:7]
            if not masked:
                _pool_cpu._max_pool_values(as_4d(ins[0]), out, kh, kw, sh, sw, ph, pw, add)
                return
            _pool_cpu._max_pool_forward(
                as_4d(ins[0]), out, mask, kh, kw, sh, sw, ph, pw, add, masked
            )
        else:
            x = as_4d(ins[0])
            n_img, n_c, height, width = x.shape
            ho, wo = out.shape[2], out.shape[3]
            args = (x, out, mask, height, width, ho, wo, ho * wo, *scalars, add, masked)
            run_rows(ctx, "Pooling", pool_forward, n_img * n_c, *args)  # a plane per item

    scalars = _scalars(attrs.parsed, inputs[0].shape)
    run_via_float32(run, inputs, req, outputs)


def _backward_cpu(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    from . import _pool_cpu

    def run(ins: list[Any], reqs: list[Any], outs: list[Any]) -> None:
        dy, x, y = (as_4d(a) for a in ins[:3])
        use_mask = len(ins) > 3
        mask = as_4d(ins[3]) if use_mask else _dummy_mask()
        add = reqs[0] == OpReqType.kAddTo
        if scalars[0] == _MODES["max"] and not use_mask:
            kh, kw, sh, sw, ph, pw = scalars[1:7]
            _pool_cpu._max_pool_backward(dy, x, y, as_4d(outs[0]), kh, kw, sh, sw, ph, pw, add)
            return
        _pool_cpu._pool_backward(dy, x, y, mask, as_4d(outs[0]), *scalars, add, use_mask)

    if req[0] == OpReqType.kNullOp:
        return
    scalars = _scalars(attrs.parsed, inputs[1].shape)
    run_via_float32(run, inputs, req, outputs)


def _forward_gpu(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    cuda = get_cuda("Pooling")
    check_float_dtype("Pooling", "data", inputs[0].dtype, gpu=True)
    if req[0] == OpReqType.kNullOp and (len(outputs) < 2 or req[1] == OpReqType.kNullOp):
        return
    out = as_4d(outputs[0])
    if req[0] == OpReqType.kNullOp:
        out = cuda.device_array(out.shape, out.dtype)
    masked = len(outputs) > 1 and req[1] != OpReqType.kNullOp
    mask = as_4d(outputs[1]) if masked else cuda.device_array((1, 1, 1, 1), _MASK_DTYPE)
    add = req[0] == OpReqType.kAddTo
    scalars = _scalars(attrs.parsed, inputs[0].shape)
    x = as_4d(inputs[0])
    height, width, ho, wo = x.shape[2], x.shape[3], out.shape[2], out.shape[3]
    args = (x, out, mask, height, width, ho, wo, 1, *scalars, add, masked)
    run_rows(ctx, "Pooling", pool_forward, out.size, *args)  # an output per item


def _backward_gpu(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    cuda = get_cuda("Pooling")
    check_float_dtype("_backward_Pooling", "data", inputs[1].dtype, gpu=True)
    if req[0] == OpReqType.kNullOp:
        return
    dy, x, y = (as_4d(a) for a in inputs[:3])
    use_mask = len(inputs) > 3
    mask = as_4d(inputs[3]) if use_mask else cuda.device_array((1, 1, 1, 1), _MASK_DTYPE)
    dx = as_4d(outputs[0])
    add = req[0] == OpReqType.kAddTo
    scalars = _scalars(attrs.parsed, inputs[1].shape)
    height, width, ho, wo = dx.shape[2], dx.shape[3], dy.shape[2], dy.shape[3]
    args = (dy, x, y, mask, dx, height, width, ho, wo, *scalars, add, use_mask)
    run_rows(ctx, "_backward_Pooling", pool_backward, dx.size, *args)  # an input per item


def _pool_gradient(node: Any, ograds: list[Any]) -> list[Any]:
    # d data from (ograd, data, output): max pooling finds each window's first maximum
    # again instead of reading the mask, so the mask is dead once written and its block
    # is reused (24.5 MiB on ResNet-18 at batch 32). Data and output stay alive for the
    # neighbouring layers' backward anyway.
    heads = [ograds[0], node.inputs[0], NodeEntry(node, 0)]
    return make_grad_node("_backward_Pooling", node, heads)


(
    register_op("Pooling")
    .describe(
        "Performs pooling on the input.\n\n"
        "The shapes for 2-D pooling are\n\n"
        "- **data** and **out**: *(batch_size, channel, height, width)*, with::\n\n"
        "    out_height = f(height, kernel[0], pad[0], stride[0])\n\n"
        "where f is, by ``pooling_convention``: valid (default) "
        "``floor((x+2*p-k)/s)+1``, full (Caffe) ``ceil((x+2*p-k)/s)+1``, same "
        "``ceil(x/s)``. ``global_pool`` pools each whole plane (kernel = (height, width)).\n"
        "``pool_type`` is avg, max, sum or lp (``(sum x^p)^(1/p)``, p = ``p_value``). "
        "1-D pooling takes *(batch_size, channel, width)*.\n\n"
        "Max pooling has a second, hidden output (an int32 argmax mask for backward)."
    )
    .set_attr_parser(PoolingParam)
    .set_num_inputs(1)
    .set_num_outputs(_num_outputs)
    .set_attr(FNumVisibleOutputs, lambda attrs: 1)
    .set_attr(FListInputNames, lambda attrs: ["data"])
    .set_attr(FListOutputNames, _output_names)
    .set_attr(FInferShape, infer_pool_shape)
    .set_attr(FInferType, infer_pool_type)
    .set_attr(FCompute_cpu, _forward_cpu)
    .set_attr(FCompute_gpu, _forward_gpu)
    .set_attr(FGradient, _pool_gradient)
    .add_argument("data", "NDArray-or-Symbol", "Input data to the pooling operator.")
    .add_arguments(PoolingParam.fields())
)

(
    register_op("_backward_Pooling")
    .describe("Backward of Pooling: (ograd, data, output[, mask]) -> d data.")
    .set_attr_parser(PoolingParam)
    .set_num_inputs(lambda attrs: 4 if attrs.parsed.pool_type == "max" else 3)
    .set_num_outputs(1)
    .set_attr(TIsBackward, True)
    .set_attr(FInferShape, infer_backward_shape)
    .set_attr(FInferType, infer_backward_type)
    .set_attr(FCompute_cpu, _backward_cpu)
    .set_attr(FCompute_gpu, _backward_gpu)
)

__all__ = ["PoolingParam", "infer_pool_shape"]
