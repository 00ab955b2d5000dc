"""Pooling (1-D, 2-D and 3-D: NCW, NCHW, NCDHW; max / avg / sum / lp) and _backward_Pooling.

    valid:  Ho = floor((H + 2*pad - kernel) / stride) + 1
    full:   Ho = ceil((H + 2*pad - kernel) / stride) + 1
    same:   Ho = ceil(H / stride), padded as TensorFlow does (pad is ignored)

Max pooling has two outputs, as in MXNet 1.9.1's MKL-DNN build (node_row_ptr in saved
symbol files counts them): the pooled values and a hidden int32 mask holding, per
output, the flat index (d*H + h)*W + w of the maximum in its input volume; backward
routes the gradient through it. The mask is always overwritten (req 'add' adds to the values only).
Max pooling skips NaN in every kernel (_pool_window.replaces): an all-NaN window gives NaN and
a mask of -1, so no gradient.
Kernels: _pool_window.py (one body for both devices: every forward but the CPU's 2-D
max pooling, the GPU's backward and the CPU's 3-D one) and _pool_cpu.py (CPU-only 2-D
max pooling and backward kernels, faster there; numba, imported on the first CPU launch).
Pooling_v1 (legacy_v1.py) runs on the same functions.
"""

from __future__ import annotations

import math
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
from ...kernel import scratch
from ...kernel.cuda import get_cuda
from ...kernel.launch import flat, run_rows
from ...param import Parameter, Shape, field
from ...registry import NodeAttrs, register_op
from ._geometry import (
    as_4d,
    as_5d,
    check_float_dtype,
    op_name,
    pool_out_size,
    run_via_float32,
    same_pad,
    to_3d,
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
        if p.pooling_convention == "same" and any(p.pad):
            raise ParamError(
                f"{op}: pooling_convention='same' pads by itself; parameter 'pad' must be "
                f"zero, got {p.pad}"
            )
        return check_window_params(p, op, ("stride",), longer=("pad",))


def _num_outputs(attrs: NodeAttrs) -> int:
    return 2 if attrs.parsed.pool_type == "max" else 1


def _output_names(attrs: NodeAttrs) -> list[str]:
    return ["output", "mask"] if attrs.parsed.pool_type == "max" else ["output"]


def window(p: Any, data: tuple[int, ...]) -> tuple[int, ...]:
    """(kd, kh, kw, sd, sh, sw, pd, ph, pw, ed, eh, ew) on the 5-D view of data's shape.

    ed/eh/ew: where the padding ends (the avg divisor counts up to there). Pooling_v1's
    average always divides by the whole kernel: its parameters say `full_kernel_average`.
    """
    spatial = to_3d(tuple(data[2:]), 1)
    if p.global_pool:
        return (*spatial, 1, 1, 1, 0, 0, 0, *spatial)
    kernel, stride = to_3d(p.kernel, 1), to_3d(p.stride, 1)
    pad: tuple[int, ...] = to_3d(p.pad, 0)
    if p.pooling_convention == "same":
        pad = tuple(same_pad(x, k, s) for x, k, s in zip(spatial, kernel, stride))
        out = [pool_out_size(x, k, s, 0, "same") for x, k, s in zip(spatial, kernel, stride)]
        # where the padding ends: the input plus the trailing pad
        ends = tuple((o - 1) * s + k - q for o, s, k, q in zip(out, stride, kernel, pad))
    elif getattr(p, "full_kernel_average", False):
        ends = (_NO_END,) * 3
    else:
        ends = tuple(x + q for x, q in zip(spatial, pad))
    return (*kernel, *stride, *pad, *ends)


#: an end of the padding no window reaches
_NO_END = 1 << 40


# -- inference ----------------------------------------------------------------------------


def infer_pool_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    """data (N, C, *S) -> output (N, C, *S_out) [and the max mask, same shape]."""
    p, op = attrs.parsed, op_name(attrs, "Pooling")
    data = in_shapes[0]
    if data is None:
        return False
    nd = len(data) - 2 if p.global_pool else len(p.kernel)
    if len(data) != nd + 2 or nd not in (1, 2, 3):
        want = f"{nd + 2}-D for kernel {p.kernel}" if not p.global_pool else "3-D, 4-D or 5-D"
        raise InferError(
            f"{op}: input 'data' must be {want} (NCW, NCHW or NCDHW), got shape {shape_str(data)}"
        )
    spatial: list[int | None] = []
    for d, x in enumerate(data[2:]):
        if x is None or p.global_pool:
            spatial.append(None if x is None else 1)
            continue
        k, s, pad = p.kernel[d], p.stride[d], p.pad[d]
        if p.pooling_convention != "same" and k > x + 2 * pad:
            raise InferError(
                f"{op}: kernel {p.kernel} is larger than the padded input: data has "
                f"shape {shape_str(data)} with pad {p.pad}"
            )
        spatial.append(pool_out_size(x, k, s, pad, p.pooling_convention))
    out = (data[0], data[1], *spatial)
    for j in range(len(out_shapes)):
        shape_assign(out_shapes, j, out, f"{op}: output {_output_names(attrs)[j]!r}")
    known = out_shapes[0]
    if known is not None and (data[0] is None or data[1] is None):
        shape_assign(in_shapes, 0, (known[0], known[1], *data[2:]), f"{op}: input 'data'")
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


def _scalars(p: Any, data_shape: tuple[int, ...]) -> tuple[Any, ...]:
    """(mode, *window, include_pad, p): the one-body kernels' trailing arguments."""
    include = p.count_include_pad is not False
    return (_MODES[p.pool_type], *window(p, data_shape), include, p.p_value or 1)


def _planar(scalars: tuple[Any, ...]) -> tuple[Any, ...]:
    """The 2-D CPU kernels' arguments (mode, kh, kw, sh, sw, ph, pw, eh, ew, include, p)."""
    mode, win, rest = scalars[0], scalars[1:13], scalars[13:]
    return (mode, *win[1:3], *win[4:6], *win[7:9], *win[10:12], *rest)


def _is_planar(data_shape: tuple[int, ...]) -> bool:
    return len(data_shape) < 5


def _mask_or_dummy(outputs: list[Any], req: list[Any]) -> tuple[Any, bool]:
    if len(outputs) > 1 and req[1] != OpReqType.kNullOp:
        return outputs[1], True
    return _dummy_mask(), False


def _dummy_mask() -> Any:
    return np.zeros((1, 1, 1, 1, 1), _MASK_DTYPE)


def _volume_args(x: Any, out: Any) -> tuple[int, ...]:
    """depth, height, width, do, ho, wo of the 5-D views."""
    x5, o5 = as_5d(x), as_5d(out)
    return (*x5.shape[2:], *o5.shape[2:])


def _windows_inside(
    shape: tuple[int, ...],
    out: tuple[int, ...],
    kh: int,
    kw: int,
    sh: int,
    sw: int,
    ph: int,
    pw: int,
) -> bool:
    """No padding and no window clipped at the end (2-D views): _max_pool_inside applies."""
    return (
        ph == 0
        and pw == 0
        and (out[2] - 1) * sh + kh <= shape[2]
        and (out[3] - 1) * sw + kw <= shape[3]
    )


def _windows_3x3(
    shape: tuple[int, ...],
    out: tuple[int, ...],
    kh: int,
    kw: int,
    sh: int,
    sw: int,
    ph: int,
    pw: int,
) -> bool:
    """A 3x3 window and none empty (padding < 3, every window starts inside the input):
    _max_pool_3x3 and _max_pool_backward_3x3 apply."""
    return (
        (kh, kw) == (3, 3)
        and ph < 3
        and pw < 3
        and (out[2] - 1) * sh - ph < shape[2]
        and (out[3] - 1) * sw - pw < shape[3]
    )


def forward_cpu(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    """FCompute<cpu> of Pooling (and Pooling_v1)."""
    from nnvmpy.ops.nn import _pool_cpu

    def run(ins: list[Any], reqs: list[Any], outs: list[Any]) -> None:
        if reqs[0] == OpReqType.kNullOp and (len(outs) < 2 or reqs[1] == OpReqType.kNullOp):
            return
        mask, masked = _mask_or_dummy(outs, reqs)
        # the kernels always produce output 0; with req 'null' they write a scratch copy
        out = outs[0] if reqs[0] != OpReqType.kNullOp else np.empty_like(outs[0])
        add = reqs[0] == OpReqType.kAddTo
        if scalars[0] == _MODES["max"] and _is_planar(ins[0].shape):
            _, kh, kw, sh, sw, ph, pw = _planar(scalars)[:7]
            x, out4 = as_4d(ins[0]), as_4d(out)
            if not masked and _windows_3x3(x.shape, out4.shape, kh, kw, sh, sw, ph, pw):
                _pool_cpu._max_pool_3x3(x, out4, sh, sw, ph, pw, add)
                return
            if not masked and _windows_inside(x.shape, out4.shape, kh, kw, sh, sw, ph, pw):
                if (kh, kw) == x.shape[2:]:  # the window is the plane (global pooling)
                    _pool_cpu._max_pool_plane(x, out4, add)
                elif (kh, kw) == (2, 2):
                    _pool_cpu._max_pool_2x2(x, out4, sh, sw, add)
                else:
                    _pool_cpu._max_pool_inside(x, out4, kh, kw, sh, sw, add)
                return
            if not masked:
                _pool_cpu._max_pool_values(x, out4, kh, kw, sh, sw, ph, pw, add)
                return
            _pool_cpu._max_pool_forward(x, out4, as_4d(mask), kh, kw, sh, sw, ph, pw, add, True)
            return
        if _separable_sum(attrs.parsed, scalars[0], ins[0].shape):
            x, out4 = as_4d(ins[0]), as_4d(out)
            average, rows, cols = _divisors(scalars, x.shape, out4.shape)
            args = (*_planar(scalars)[1:7], average, rows, cols, add)
            _pool_cpu._sum_pool_values(x, out4, *args)
            return
        sizes = _volume_args(ins[0], out)
        volumes = ins[0].shape[0] * ins[0].shape[1]
        args = (ins[0], out, mask, *sizes, math.prod(sizes[3:]), *scalars, add, masked)
        run_rows(ctx, op_name(attrs, "Pooling"), pool_forward, volumes, *args)  # a volume per item

    scalars = _scalars(attrs.parsed, inputs[0].shape)
    run_via_float32(run, inputs, req, outputs)


def _separable_sum(p: Any, mode: int, data_shape: tuple[int, ...]) -> bool:
    """_sum_pool_values applies: 2-D avg or sum pooling, not global (there an output row
    is one window over the whole row, which the one-body kernel sums as fast)."""
    return mode in (_MODES["avg"], _MODES["sum"]) and _is_planar(data_shape) and not p.global_pool


def _divisors(
    scalars: tuple[Any, ...], data: tuple[int, ...], out: tuple[int, ...]
) -> tuple[bool, Any, Any]:
    """(average, rows, cols) for _sum_pool_values / _sum_pool_backward on 4-D views."""
    _, kh, kw, sh, sw, ph, pw, eh, ew, include = _planar(scalars)[:10]
    rows = _counts(out[2], kh, sh, ph, eh, data[2], include)
    cols = _counts(out[3], kw, sw, pw, ew, data[3], include)
    return scalars[0] == _MODES["avg"], rows, cols


def _counts(n_out: int, k: int, s: int, pad: int, end: int, size: int, include: bool) -> Any:
    """Per output index along one axis, the extent avg pooling divides by: the window up
    to where the padding ends (count_include_pad), else its part inside the input."""
    start = np.arange(n_out, dtype=np.int64) * s - pad
    if include:
        return np.minimum(start + k, end) - start
    return np.maximum(np.minimum(start + k, size) - np.maximum(start, 0), 0)


def backward_cpu(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    """FCompute<cpu> of _backward_Pooling: (ograd, data, output[, mask]) -> d data."""
    from nnvmpy.ops.nn import _pool_cpu

    def run(ins: list[Any], reqs: list[Any], outs: list[Any]) -> None:
        use_mask = len(ins) > 3
        mask = ins[3] if use_mask else _dummy_mask()
        add = reqs[0] == OpReqType.kAddTo
        if not _is_planar(ins[1].shape):  # 3-D: the one-body gather, an input per item
            args = (*ins[:3], mask, outs[0], *_volume_args(ins[1], ins[0]), *scalars)
            run_rows(
                ctx, op_name(attrs, "Pooling"), pool_backward, outs[0].size, *args, add, use_mask
            )
            return
        dy, x, y = (as_4d(a) for a in ins[:3])
        planar = _planar(scalars)
        if _separable_sum(attrs.parsed, scalars[0], ins[1].shape):
            average, rows, cols = _divisors(scalars, x.shape, dy.shape)
            args = (*planar[1:7], average, rows, cols, add)
            _pool_cpu._sum_pool_backward(dy, as_4d(outs[0]), *args)
            return
        if scalars[0] == _MODES["max"] and not use_mask:
            kh, kw, sh, sw = planar[1:5]
            if (kh, kw) == (2, 2) and _windows_inside(x.shape, dy.shape, *planar[1:7]):
                _pool_cpu._max_pool_backward_2x2(dy, x, y, as_4d(outs[0]), sh, sw, add)
                return
            if _windows_3x3(x.shape, dy.shape, *planar[1:7]):
                _pool_cpu._max_pool_backward_3x3(dy, x, y, as_4d(outs[0]), *planar[3:7], add)
                return
            _pool_cpu._max_pool_backward(dy, x, y, as_4d(outs[0]), *planar[1:7], add)
            return
        mask4 = as_4d(mask) if use_mask else np.zeros((1, 1, 1, 1), _MASK_DTYPE)
        _pool_cpu._pool_backward(dy, x, y, mask4, as_4d(outs[0]), *planar, add, use_mask)

    if req[0] == OpReqType.kNullOp:
        return
    scalars = _scalars(attrs.parsed, inputs[1].shape)
    run_via_float32(run, inputs, req, outputs)


def forward_gpu(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    """FCompute<gpu> of Pooling: one output per work item."""
    get_cuda(op_name(attrs, "Pooling"))  # a clear error where CUDA is unusable
    check_float_dtype(op_name(attrs, "Pooling"), "data", inputs[0].dtype)
    if req[0] == OpReqType.kNullOp and (len(outputs) < 2 or req[1] == OpReqType.kNullOp):
        return
    out = outputs[0]
    if req[0] == OpReqType.kNullOp:
        out = scratch.empty(ctx, out.shape, out.dtype)
    masked = len(outputs) > 1 and req[1] != OpReqType.kNullOp
    add = req[0] == OpReqType.kAddTo
    if _global_sum(attrs.parsed, inputs[0].shape) and not masked:
        _global_sum_gpu(ctx, op_name(attrs, "Pooling"), attrs.parsed, inputs[0], out, add)
        return
    mask = outputs[1] if masked else scratch.empty(ctx, 1, _MASK_DTYPE)
    scalars = _scalars(attrs.parsed, inputs[0].shape)
    args = (inputs[0], out, mask, *_volume_args(inputs[0], out), 1, *scalars, add, masked)
    run_rows(ctx, op_name(attrs, "Pooling"), pool_forward, out.size, *args)


def _global_sum(p: Any, data_shape: tuple[int, ...]) -> bool:
    """Global average or sum pooling of non-empty planes: a sum per plane, which a GPU
    runs on the reduction kernels (a warp or block per plane, reading it coalesced)
    rather than a thread per plane, whose neighbours read a plane apart (SE blocks pool
    56x56 planes)."""
    return p.global_pool and p.pool_type in ("avg", "sum") and math.prod(data_shape[2:]) > 0


def _global_sum_gpu(ctx: Any, name: str, p: Any, x: Any, out: Any, add: bool) -> None:
    from nnvmpy.ops import _reduce_cuda

    planes, size = math.prod(x.shape[:2]), math.prod(x.shape[2:])
    scale = 1.0 / size if p.pool_type == "avg" else 1.0
    x2 = flat(x).reshape(planes, size)
    _reduce_cuda.reduce_gpu(ctx, out, add, x2, (planes, 1), "sum", scale, name)


def backward_gpu(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    """FCompute<gpu> of _backward_Pooling: one input element per work item."""
    get_cuda(op_name(attrs, "Pooling"))  # a clear error where CUDA is unusable
    check_float_dtype(op_name(attrs, "Pooling"), "data", inputs[1].dtype)
    if req[0] == OpReqType.kNullOp:
        return
    use_mask = len(inputs) > 3
    mask = inputs[3] if use_mask else scratch.empty(ctx, 1, _MASK_DTYPE)
    add = req[0] == OpReqType.kAddTo
    scalars = _scalars(attrs.parsed, inputs[1].shape)
    sizes = _volume_args(inputs[1], inputs[0])
    args = (*inputs[:3], mask, outputs[0], *sizes, *scalars, add, use_mask)
    run_rows(ctx, op_name(attrs, "Pooling"), pool_backward, outputs[0].size, *args)


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
        "Max pooling has a second, hidden output (an int32 argmax mask for backward). "
        "It skips NaN, as MXNet's CPU pooling does: a window's value is its largest "
        "non-NaN element (NaN only when the whole window is NaN; MXNet gives the "
        "lowest float there), and the gradient goes to the first position holding it."
    )
    .set_attr_parser(PoolingParam)
    .set_num_inputs(1)
    .set_num_outputs(_num_outputs)
    .set_attr(FNumVisibleOutputs, lambda attrs: 1)
    .set_attr(FListInputNames, lambda attrs: ["data"])
    .set_attr(FListOutputNames, _output_names)
    .set_attr(FInferShape, infer_pool_shape)
    .set_attr(FInferType, infer_pool_type)
    .set_attr(FCompute_cpu, forward_cpu)
    .set_attr(FCompute_gpu, forward_gpu)
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
    .set_attr(FCompute_cpu, backward_cpu)
    .set_attr(FCompute_gpu, backward_gpu)
)

__all__ = ["PoolingParam", "infer_pool_shape"]
