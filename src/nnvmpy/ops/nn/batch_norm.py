"""BatchNorm: normalise each channel by batch statistics (training) or moving ones (inference).

    y = gamma * (x - mean) / sqrt(var + eps) + beta              (gamma = 1 with fix_gamma)

Training (is_train and not use_global_stats): mean and var are the batch's, over every
axis but `axis` (var biased, as MXNet), and the moving statistics are updated in place:

    moving_mean = momentum * moving_mean + (1 - momentum) * mean
    moving_var  = momentum * moving_var  + (1 - momentum) * var

Inference uses moving_mean/moving_var. The outputs mean and var (hidden unless
output_mean_var) hold the statistics used, the second as MXNet's inverse standard
deviation 1 / sqrt(var + eps) (what MXNet's BatchNorm outputs as "var"); the backward
reads them:

    xhat = (x - mean) / sqrt(var + eps),  M = elements per channel
    dbeta = sum(dy),  dgamma = sum(dy * xhat)  (0 with fix_gamma)
    training:  dx = gamma / sqrt(var + eps) * (dy - dbeta / M - xhat * dgamma / M)
    global:    dx = gamma / sqrt(var + eps) * dy

On the CPU both directions are one kernel with one parallel_for item per channel (one
pass with shifted sums for mean and var, one to normalise, each a vectorised row loop per
image). On the GPU each is three kernels, so that few channels still fill the device:
per-block partial sums over C * S blocks (each channel split among S blocks, S from the
SM count), a thread per channel combining them, then a thread per element
(_batch_norm_cuda.py).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FInplaceOption,
    FListInputNames,
    FListOutputNames,
    FMutateInputs,
    FNumVisibleOutputs,
    FScaleShift,
    FSetInputVarAttrOnCompose,
    FWithReLU,
    TIsBackward,
)
from ...graph.grad import make_grad_node, make_node
from ...graph.node import NodeEntry
from ...infer import elemwise_type, shape_assign, shape_is_known
from ...kernel import parallel_for
from ...kernel.launch import (  # cuda: a placeholder bound when a kernel compiles
    ADD,
    NULL,
    WRITE,
    check_cpu_dtypes,
    flat,
    is_gpu,
    normalize_axis,
    req_code,
    split_axis,
    store,
    uindex,
)
from ...param import Parameter, field
from ...registry import NodeAttrs, Op, register_op
from ._batch_norm_cuda import backward_gpu, forward_gpu
from ._batch_norm_relu_cpu import row_relu_bn_dx, row_relu_dy_sums, row_scale_shift_relu
from ._layer_util import row_function
from ._norm_rows import _typed, row_dy_sums, row_scale_shift
from .inference import ScaleShift

INPUTS = ["data", "gamma", "beta", "moving_mean", "moving_var"]
OUTPUTS = ["output", "mean", "var"]


class BatchNormParam(Parameter):
    eps = field(float, default=1e-3, describe="Epsilon to prevent div 0.")
    momentum = field(float, default=0.9, describe="Momentum for moving average.")
    fix_gamma = field(bool, default=True, describe="Fix gamma while training.")
    use_global_stats = field(
        bool,
        default=False,
        describe="Whether use global moving statistics instead of local batch-norm. "
        "This will force change batch-norm into a scale shift operator.",
    )
    output_mean_var = field(bool, default=False, describe="Output the mean and var as well.")
    axis = field(int, default=1, describe="Specify which shape axis the channel is specified.")
    cudnn_off = field(bool, default=False, describe="Accepted for MXNet compatibility; ignored.")
    min_calib_range = field(
        float,
        default=None,
        describe="Quantization calibration minimum (MXNet 1.9); accepted and ignored.",
    )
    max_calib_range = field(
        float,
        default=None,
        describe="Quantization calibration maximum (MXNet 1.9); accepted and ignored.",
    )


# --- inference rules -------------------------------------------------------------------------


def _infer_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    """out = data's shape; gamma, beta, moving_*, mean, var = (C,) with C = data[axis]."""
    op = attrs.op.name if attrs.op is not None else "BatchNorm"  # also BatchNormWithReLU
    shape_assign(in_shapes, 0, out_shapes[0], f"{op}: input 'data'")
    shape_assign(out_shapes, 0, in_shapes[0], f"{op}: output 'output'")
    data = in_shapes[0]
    if data is None:
        return False
    axis = normalize_axis(op, attrs.parsed.axis, data)
    channel: tuple[Any, ...] = (data[axis],)
    vectors = [(in_shapes, i, f"input '{INPUTS[i]}'") for i in range(1, 5)]
    vectors += [(out_shapes, j, f"output '{OUTPUTS[j]}'") for j in (1, 2)]
    for shapes, i, what in vectors:  # C from data, or from any vector that knows it
        shape_assign(shapes, i, channel, f"{op}: {what}")
        channel = shapes[i]
    for shapes, i, what in vectors:
        shape_assign(shapes, i, channel, f"{op}: {what}")
    data = tuple(channel[0] if k == axis else d for k, d in enumerate(data))
    shape_assign(in_shapes, 0, data, f"{op}: input 'data'")
    shape_assign(out_shapes, 0, data, f"{op}: output 'output'")
    return all(shape_is_known(s) for s in [*in_shapes, *out_shapes])


def _infer_shape_residual(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    """BatchNorm's rule, and input 'residual' of data's shape."""
    op = attrs.op.name if attrs.op is not None else "BatchNorm"
    head = in_shapes[:5]
    shape_assign(head, 0, in_shapes[5], f"{op}: input 'data'")
    known = _infer_shape(attrs, head, out_shapes)
    in_shapes[:5] = head
    shape_assign(in_shapes, 5, in_shapes[0], f"{op}: input 'residual'")
    return known and shape_is_known(in_shapes[5])


def _set_init(attrs: NodeAttrs, var: Any, index: int) -> None:
    """Auto-created moving_mean/moving_var start at zeros/ones, as MXNet marks them."""
    if "__init__" not in var.attrs.dict and index in (3, 4):
        var.attrs.dict["__init__"] = '["zero", {}]' if index == 3 else '["one", {}]'


# --- kernels -------------------------------------------------------------------------------


# The CPU bodies are `kernel.parallel_for` items, one per channel, whose loops over each
# contiguous row of `inner` elements are RowFunctions: compiled with reassociation, so the
# sums vectorise (LLVM keeps a plain float sum in order, one element per add latency).


@row_function
def _row_shifted_sums(x, base, n, shift):
    """(sum(x - shift), sum((x - shift)^2)) over x[base : base + n]."""
    s = 0.0
    ss = 0.0
    for k in range(n):
        d = x[uindex(base + k)] - shift
        s += d
        ss += d * d
    return s, ss


@row_function
def _row_bn_dx(dx, dy, x, base, n, mu, k, a, b, mode):
    """dx (+)= k * (dy - a - (x - mu) * b) over a row."""
    if mode == ADD:
        for i in range(n):
            j = uindex(base + i)
            dx[j] += k * (dy[j] - a - (x[j] - mu) * b)
    else:
        for i in range(n):
            j = uindex(base + i)
            dx[j] = k * (dy[j] - a - (x[j] - mu) * b)


@parallel_for
def _bn_forward_channel(
    c, out, mean, var, x, gamma, beta, mm, mv, res, sc, outer, C, inner,
    eps, momentum, fix_gamma, train, m_out, m_mean, m_var, invstd_out, relu, residual,
):  # fmt: skip
    # relu: relu of the output, of output + res with residual (else res is unread)
    size = outer * inner
    if train:  # sums shifted by the channel's first value: one pass, and stable
        shift = float(x[c * inner])
        s = 0.0
        ss = 0.0
        for o in range(outer):
            ds, dss = _row_shifted_sums(x, (o * C + c) * inner, inner, shift)
            s += ds
            ss += dss
        dmean = s / size
        mu = shift + dmean
        v = max(ss / size - dmean * dmean, 0.0)
        mm[c] = momentum * mm[c] + (1.0 - momentum) * mu
        mv[c] = momentum * mv[c] + (1.0 - momentum) * v
    else:
        mu = float(mm[c])
        v = float(mv[c])
    store(mean, c, mu, m_mean)
    store(var, c, 1.0 / math.sqrt(v + eps) if invstd_out else v, m_var)
    if m_out != NULL:
        # y = x * scale + shift in x's dtype (a float32 row vectorises twice as wide)
        scale = (1.0 if fix_gamma else gamma[c]) / math.sqrt(v + eps)
        a = _typed(sc, 2 * c, scale)
        b = _typed(sc, 2 * c + 1, beta[c] - mu * scale)
        for o in range(outer):
            if relu:
                base = (o * C + c) * inner
                row_scale_shift_relu(out, x, res, base, inner, a, b, m_out, residual)
            else:
                row_scale_shift(out, x, (o * C + c) * inner, inner, 1, a, b, m_out)


@parallel_for
def _bn_backward_channel(
    c, dx, dgamma, dbeta, dres, dy, x, gamma, mean, var, y, sc, outer, C, inner,
    eps, fix_gamma, batch, m_dx, m_dgamma, m_dbeta, var_is_invstd, relu, m_dres,
):  # fmt: skip
    # relu: dy is first taken through relu's gradient at relu's output y, and that
    # gradient (the residual's, when the forward added one) stored into dres unless
    # m_dres is NULL; without relu y and dres are unread
    size = outer * inner
    mu = float(mean[c])
    # the forward's output: 1 / sqrt(var + eps), or var itself (BatchNorm_v1)
    invstd = float(var[c]) if var_is_invstd else 1.0 / math.sqrt(var[c] + eps)
    sdy = 0.0
    sdyx = 0.0  # sum(dy * (x - mean))
    for o in range(outer):
        base = (o * C + c) * inner
        if relu:
            ds, dsx = row_relu_dy_sums(dy, y, x, dres, base, inner, mu, m_dres)
        else:
            ds, dsx = row_dy_sums(dy, x, gamma, base, inner, 1, mu, False)
        sdy += ds
        sdyx += dsx
    store(dgamma, c, 0.0 if fix_gamma else sdyx * invstd, m_dgamma)
    store(dbeta, c, sdy, m_dbeta)
    if m_dx != NULL:
        k = _typed(sc, 4 * c, (1.0 if fix_gamma else gamma[c]) * invstd)
        a = _typed(sc, 4 * c + 1, sdy / size if batch else 0.0)
        b = _typed(sc, 4 * c + 2, sdyx * invstd * invstd / size if batch else 0.0)
        mu_t = _typed(sc, 4 * c + 3, mu)
        for o in range(outer):
            base = (o * C + c) * inner
            if relu and m_dres == WRITE:  # relu's gradient is in dres: read it
                _row_bn_dx(dx, dres, x, base, inner, mu_t, k, a, b, m_dx)
            elif relu:
                row_relu_bn_dx(dx, dy, y, x, base, inner, mu_t, k, a, b, m_dx)
            else:
                _row_bn_dx(dx, dy, x, base, inner, mu_t, k, a, b, m_dx)


def _launch_cpu(
    ctx: Any, name: str, cpu_k: Any, arrays: list[Any], scalars: tuple[Any, ...]
) -> None:
    """One parallel_for item per channel."""
    check_cpu_dtypes(name, arrays)
    data, C = arrays[3], scalars[1]
    sc = np.empty(4 * C, np.float64 if data.dtype == np.float64 else np.float32)
    cpu_k.launch(ctx, C, *(flat(a) for a in arrays), sc, *scalars, work=data.size)


# --- compute -------------------------------------------------------------------------------


def _batch_norm_forward(
    attrs: NodeAttrs,
    ctx: Any,
    inputs: list[Any],
    req: list[Any],
    outputs: list[Any],
    invstd_out: bool = True,
    relu: bool = False,
) -> None:
    """FCompute of BatchNorm; `invstd_out` False for BatchNorm_v1, whose "var" is var;
    `relu`: relu applied to the output as it is written (batch_norm_relu.py), of the output
    plus inputs[5] when there is a sixth input (the residual)."""
    p, x = attrs.parsed, inputs[0]
    if x.size == 0:
        return
    modes = [req_code("BatchNorm", r) for r in req]
    shape = split_axis(x.shape, normalize_axis("BatchNorm", p.axis, x.shape))
    train = bool(ctx.is_train and not p.use_global_stats)
    residual = len(inputs) > 5
    arrays = [*outputs, *inputs[:5], inputs[5] if residual else x]
    if is_gpu(ctx):
        forward_gpu(ctx, arrays, shape, p, train, modes, invstd_out, relu, residual)
        return
    scalars = (*shape, p.eps, p.momentum, p.fix_gamma, train, *modes, invstd_out, relu, residual)
    _launch_cpu(ctx, "BatchNorm", _bn_forward_channel, arrays, scalars)


def _batch_norm_backward(
    attrs: NodeAttrs,
    ctx: Any,
    inputs: list[Any],
    req: list[Any],
    outputs: list[Any],
    var_is_invstd: bool = True,
    relu: bool = False,
) -> None:
    # inputs: (dy, data, gamma, mean, var) with mean/var the forward's outputs 1 and 2;
    # with relu, then the forward's output y, through whose relu dy is taken first.
    # outputs: (dx, dgamma, dbeta), and the residual's gradient when the forward added one
    p, x = attrs.parsed, inputs[1]
    modes = [req_code("_backward_BatchNorm", r) for r in req]
    if x.size == 0 or all(m == NULL for m in modes):
        return
    m_dres = modes[3] if len(outputs) > 3 else NULL
    dres = outputs[3] if len(outputs) > 3 else outputs[0]
    arrays = [*outputs[:3], dres, *inputs[:5], inputs[5] if relu else inputs[0]]
    shape = split_axis(x.shape, normalize_axis("BatchNorm", p.axis, x.shape))
    batch = bool(ctx.is_train and not p.use_global_stats)
    modes = [*modes[:3], m_dres]
    if is_gpu(ctx):
        backward_gpu(ctx, arrays, shape, p, batch, modes, var_is_invstd, relu)
        return
    scalars = (*shape, p.eps, p.fix_gamma, batch, *modes[:3], var_is_invstd, relu, m_dres)
    _launch_cpu(ctx, "_backward_BatchNorm", _bn_backward_channel, arrays, scalars)


@parallel_for
def _bn_scale_shift(c, scale, shift, gamma, beta, mm, mv, eps, fix_gamma):
    # inference: y = x * scale + shift, scale = gamma / sqrt(var + eps), shift = beta - mean*scale
    s = (1.0 if fix_gamma else gamma[c]) / math.sqrt(mv[c] + eps)
    scale[c] = s
    shift[c] = beta[c] - mm[c] * s


def _scale_shift(attrs: NodeAttrs) -> ScaleShift:
    """FScaleShift: with the moving statistics BatchNorm is a per-channel scale-shift
    (always with use_global_stats, at is_train=False otherwise)."""
    p = attrs.parsed
    return ScaleShift(
        p.axis, (1, 2, 3, 4), _bn_scale_shift, (p.eps, p.fix_gamma), p.use_global_stats
    )


def batch_norm_grad(backward_op: str) -> Any:
    """FGradient: d data, d gamma, d beta from one `backward_op` node; zeros for the moving
    statistics."""
    return lambda node, ograds: _batch_norm_grad(backward_op, node, ograds)


def _batch_norm_grad(
    backward_op: str, node: Any, ograds: list[Any], extra: tuple[Any, ...] = ()
) -> list[Any]:
    """`backward_op`'s node on (dy, data, gamma, mean, var, *extra) for data, gamma and beta;
    zeros_like nodes for the moving statistics."""
    heads = [ograds[0], node.inputs[0], node.inputs[1], NodeEntry(node, 1), NodeEntry(node, 2)]
    grads = make_grad_node(backward_op, node, [*heads, *extra])
    zeros = [
        NodeEntry(make_node("zeros_like", f"{node.name}_{INPUTS[i]}_zero_grad", [node.inputs[i]]))
        for i in (3, 4)
    ]
    return [*grads, *zeros]


def batch_norm_signature(op: Op, forward: Any, gradient: Any, residual: bool = False) -> Op:
    """BatchNorm's inputs, outputs (output, mean, var), parameters, shape and type rules and
    in-place moving statistics on `op`, with its forward and gradient: BatchNorm and the
    ops of batch_norm_relu.py share all of it. `residual`: a sixth input of data's shape
    (_BatchNormAddReLU's), which the output may take the memory of too."""
    inputs = [*INPUTS, "residual"] if residual else list(INPUTS)
    inplace = [(0, 0), (5, 0)] if residual else [(0, 0)]
    op = (
        op.set_attr_parser(BatchNormParam)
        .set_num_inputs(len(inputs))
        .set_num_outputs(3)
        .set_attr(FListInputNames, lambda attrs: list(inputs))
        .set_attr(FListOutputNames, lambda attrs: list(OUTPUTS))
        .set_attr(FNumVisibleOutputs, lambda attrs: 3 if attrs.parsed.output_mean_var else 1)
        .set_attr(FMutateInputs, lambda attrs: [3, 4])
        # each channel's statistics are read before its outputs are written, so the output
        # may take the input's memory (the planner only does so when backward does not
        # read it)
        .set_attr(FInplaceOption, lambda attrs: list(inplace))
        .set_attr(FInferShape, _infer_shape_residual if residual else _infer_shape)
        .set_attr(FInferType, elemwise_type(len(inputs), 3))
        .set_attr(FSetInputVarAttrOnCompose, _set_init)
        .set_attr(FCompute_cpu, forward)
        .set_attr(FCompute_gpu, forward)
        .set_attr(FGradient, gradient)
        .add_argument("data", "NDArray-or-Symbol", "Input data to batch normalization.")
        .add_argument("gamma", "NDArray-or-Symbol", "gamma array")
        .add_argument("beta", "NDArray-or-Symbol", "beta array")
        .add_argument("moving_mean", "NDArray-or-Symbol", "running mean of input")
        .add_argument("moving_var", "NDArray-or-Symbol", "running variance of input")
    )
    if residual:
        op.add_argument("residual", "NDArray-or-Symbol", "added to the output before relu")
    return op.add_arguments(BatchNormParam.fields())


batch_norm_signature(
    register_op("BatchNorm").describe(
        "Batch normalization: normalizes a data batch by mean and variance per channel, "
        "then applies a scale gamma and an offset beta.\n\n"
        "    out = (data - mean) / sqrt(var + eps) * gamma + beta\n\n"
        "Training uses the batch's statistics and updates moving_mean/moving_var in "
        "place (auxiliary states); inference, or use_global_stats, uses the moving ones."
    ),
    _batch_norm_forward,
    batch_norm_grad("_backward_BatchNorm"),
).set_attr(FScaleShift, _scale_shift).set_attr(
    FWithReLU, lambda attrs: ("_contrib_BatchNormWithReLU", "_BatchNormAddReLU")
)  # batch_norm_relu.py
(
    register_op("_backward_BatchNorm")
    .describe("Backward of BatchNorm: inputs (dy, data, gamma, mean, var).")
    .set_attr_parser(BatchNormParam)
    .set_num_inputs(5)
    .set_num_outputs(3)
    .set_attr(TIsBackward, True)
    .set_attr(FCompute_cpu, _batch_norm_backward)
    .set_attr(FCompute_gpu, _batch_norm_backward)
)
