"""LeakyReLU and its relatives, element-wise: leaky, elu, selu, gelu, prelu, rrelu.

    leaky: y = x if x > 0 else slope * x
    elu:   y = x if x > 0 else slope * (exp(x) - 1)
    selu:  y = lambda * (x if x > 0 else alpha * (exp(x) - 1))
    gelu:  y = 0.5 * x * (1 + erf(x / sqrt(2)))
    prelu: y = x if x > 0 else gamma * x          gamma: a learned input
    rrelu: y = x if x > 0 else mask * x           mask: a second output

prelu's gamma is (C,) = (x.shape[1],) by default; as in MXNet it may also be any shape
whose last axes line up with x's first two (e.g. (N, C) or (1,)), broadcast over the
rest: element (a, b, ...) of x takes gamma[a?, b?]. Its gradient sums dy * x (x <= 0)
over the elements sharing a gamma: on the CPU one work item per gamma entry; on a GPU the
terms, a thread per element, then the reduction kernels (ops/_reduce_cuda.py).

rrelu draws each element's slope uniformly from [lower_bound, upper_bound) while
training, from the op's kRandom resource (the device's Philox stream, as Dropout); at
inference the slope is their mean. Both outputs are visible, as in MXNet; the mask
holds the slope each element used, and the backward reads it with the output.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ... import kernel
from ...attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FInplaceOption,
    FListInputNames,
    FListOutputNames,
    FResourceRequest,
    FScalarFunction,
    FSetInputVarAttrOnCompose,
    TIsBackward,
)
from ...base import InferError
from ...graph.grad import ElemwiseGradUseIn, make_grad_node
from ...graph.node import NodeEntry
from ...infer import elemwise_type, shape_assign, shape_is_known, shape_str
from ...kernel import parallel_for, scratch, vmath
from ...kernel.launch import ADD, NULL, is_gpu, req_code, store, uindex
from ...kernel.philox import uniform_pair
from ...param import Parameter, field
from ...registry import NodeAttrs, register_op
from ...resource import ResourceRequest
from ..init import _fill
from ..random._common import launch
from ._layer_util import via_float32

elementwise = kernel.elementwise

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_LAMBDA = 1.0507009873554804934193349852946
_SQRT_HALF = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_U0 = np.uint64(0)


@elementwise
def _leaky(x, slope):
    return x if x > 0 else slope * x


@elementwise
def _leaky_grad(dy, x, slope):  # dx = dy if x > 0 else slope dy
    return dy if x > 0 else slope * dy


# The exp/expm1/erf below are vmath's: on float32 they are vectorised bodies (libm's
# math.expm1 or math.erf made these loops scalar, 10-15x slower than MXNet). Each side
# of an `x > 0` choice is computed for every element, so the choice is a select.
v_exp, v_expm1, v_erf = vmath.exp, vmath.expm1, vmath.erf
# The constants are like(x, c): c in x's type. numba makes float32 * a Python float a
# float64, which sent GPU gelu through double-precision erf (and the CPU's erf to libm).
like = kernel.like


@elementwise
def _elu(x, slope):
    e = slope * v_expm1(x)
    return x if x > 0 else e


@elementwise
def _elu_grad(dy, x, slope):  # dx = dy if x > 0 else slope e^x dy
    g = slope * v_exp(x) * dy
    return dy if x > 0 else g


@elementwise
def _selu(x, slope):
    e = like(x, _SELU_ALPHA) * v_expm1(x)
    return like(x, _SELU_LAMBDA) * (x if x > 0 else e)


@elementwise
def _selu_grad(dy, x, slope):  # dx = lambda dy if x > 0 else lambda alpha e^x dy
    g = like(x, _SELU_ALPHA) * v_exp(x) * dy
    return like(x, _SELU_LAMBDA) * (dy if x > 0 else g)


@elementwise
def _gelu(x, slope):
    return like(x, 0.5) * x * (like(x, 1.0) + v_erf(x * like(x, _SQRT_HALF)))


@elementwise
def _gelu_grad(dy, x, slope):  # dx = dy (Phi(x) + x phi(x)), phi(x) = e^(-t^2) / sqrt(2 pi)
    t = x * like(x, _SQRT_HALF)
    phi = like(x, _INV_SQRT_2PI) * v_exp(-(t * t))
    return dy * (like(x, 0.5) * (like(x, 1.0) + v_erf(t)) + x * phi)


@elementwise
def _prelu_gamma_term(dy, x):  # what prelu's dgamma sums: dy * x where x <= 0
    return dy * x if x <= 0 else 0.0


@elementwise
def _rrelu_grad(dy, y, mask):  # dx = dy if y > 0 else mask dy (y > 0 exactly when x > 0)
    return dy if y > 0 else mask * dy


_FIXED = {
    "leaky": (_leaky, _leaky_grad),
    "elu": (_elu, _elu_grad),
    "selu": (_selu, _selu_grad),
    "gelu": (_gelu, _gelu_grad),
}


class LeakyReLUParam(Parameter):
    act_type = field(
        str,
        default="leaky",
        enum={"elu": 0, "gelu": 5, "leaky": 1, "prelu": 2, "rrelu": 3, "selu": 4},
        describe="Activation function to be applied.",
    )
    slope = field(
        float, default=0.25, describe="Init slope for the activation. (For leaky and elu only)"
    )
    lower_bound = field(
        float, default=0.125, describe="Lower bound of random slope. (For rrelu only)"
    )
    upper_bound = field(
        float, default=0.334, describe="Upper bound of random slope. (For rrelu only)"
    )


def _is(attrs: NodeAttrs, act_type: str) -> bool:
    return attrs.parsed.act_type == act_type


# --- prelu's gamma layout ----------------------------------------------------------------------


def gamma_layout(data: tuple[int, ...], gamma: tuple[int, ...]) -> tuple[int, int]:
    """(ga, gb): gamma as a (ga, gb) block over x's axes 0 and 1 (sizes 1 broadcast).

    gamma's last axes line up with x's axes 1 and 0 (MXNet's rule): each must equal x's
    size there or be 1; any axis of gamma left over is an InferError.
    """
    aligned = [1] * len(data)
    s = len(gamma) - 1
    for i in range(min(len(data), 2) - 1, -1, -1):
        if s >= 0 and (gamma[s] == data[i] or gamma[s] == 1):
            aligned[i] = gamma[s]
            s -= 1
    if s != -1 or len(data) == 0:
        raise InferError(
            f"LeakyReLU (act_type='prelu'): input 'gamma' of shape {shape_str(gamma)} cannot "
            f"broadcast to input 'data' of shape {shape_str(data)}; expected (C,) with C = "
            "data.shape[1], or a shape matching data's first two axes (1 broadcasts)"
        )
    return aligned[0], (aligned[1] if len(data) > 1 else 1)


def _infer_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    """output (and rrelu's mask) = data; prelu's gamma = (data.shape[1],) unless given."""
    for j in range(len(out_shapes)):
        shape_assign(in_shapes, 0, out_shapes[j], "LeakyReLU: input 'data'")
    for j in range(len(out_shapes)):
        name = ("output", "mask")[j]
        shape_assign(out_shapes, j, in_shapes[0], f"LeakyReLU: output '{name}'")
    data = in_shapes[0]
    if _is(attrs, "prelu") and data is not None and shape_is_known(data):
        if in_shapes[1] is None:
            if len(data) < 2:
                raise InferError(
                    f"LeakyReLU (act_type='prelu'): input 'data' of shape {shape_str(data)} "
                    "has no channel axis 1 to give gamma's default shape; pass gamma"
                )
            in_shapes[1] = (data[1],)
        elif shape_is_known(in_shapes[1]):
            gamma_layout(data, in_shapes[1])
    return all(shape_is_known(s) for s in [*in_shapes, *out_shapes])


def _layout(x: Any, gamma: Any) -> tuple[int, int, int, int]:
    """(B, R, ga, gb): x as (A, B, R) around axes 0 and 1, gamma as (ga, gb)."""
    shape = tuple(x.shape)
    ga, gb = gamma_layout(shape, tuple(gamma.shape))
    return (shape[1] if len(shape) > 1 else 1), math.prod(shape[2:]), ga, gb


# --- kernels -----------------------------------------------------------------------------------


@kernel.device_function
def _gamma_index(i, B, R, ga, gb):
    a = i // (B * R)
    b = (i - a * B * R) // R
    return (a if ga > 1 else 0) * gb + (b if gb > 1 else 0)


@parallel_for
def _prelu_loop(i, out, x, gamma, B, R, ga, gb, mode):
    v = x[i]
    store(out, i, v if v > 0 else gamma[_gamma_index(i, B, R, ga, gb)] * v, mode)


@parallel_for
def _prelu_grad_x(i, dx, dy, x, gamma, B, R, ga, gb, mode):
    store(dx, i, dy[i] if x[i] > 0 else gamma[_gamma_index(i, B, R, ga, gb)] * dy[i], mode)


@parallel_for
def _prelu_grad_gamma(j, dgamma, dy, x, A, B, R, ga, gb, mode):
    """dgamma[j] = sum of dy * x over x <= 0 among the elements taking gamma[j]."""
    ja = j // gb
    jb = j - ja * gb
    a0, a1 = (ja, ja + 1) if ga > 1 else (0, A)
    b0, b1 = (jb, jb + 1) if gb > 1 else (0, B)
    s = 0.0
    for a in range(a0, a1):
        for b in range(b0, b1):
            base = (a * B + b) * R
            for r in range(R):
                v = x[uindex(base + r)]
                if v <= 0:
                    s += dy[uindex(base + r)] * v
    store(dgamma, j, s, mode)


@parallel_for
def _rrelu_loop(i, out, mode, mask, mask_mode, x, lower, width, k0, k1, first):
    u, _v = uniform_pair(k0, k1, first + uindex(i), _U0, _U0)
    m = lower + width * u
    store(mask, i, m, mask_mode)
    v = x[i]
    store(out, i, v if v > 0 else m * v, mode)


# --- compute -----------------------------------------------------------------------------------


def _forward(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    p, x = attrs.parsed, inputs[0]
    if p.act_type in _FIXED:
        _FIXED[p.act_type][0].launch(ctx, outputs[0], req[0], x, p.slope)
    elif p.act_type == "prelu":
        _prelu(attrs, ctx, inputs, req, outputs)
    elif not ctx.is_train:  # rrelu at inference: the mean slope
        slope = 0.5 * (p.lower_bound + p.upper_bound)
        _fill.launch(ctx, outputs[1], req[1], slope)
        _leaky.launch(ctx, outputs[0], req[0], x, slope)
    else:
        modes = [req_code("LeakyReLU", r) for r in req]
        if all(m == NULL for m in modes) or x.size == 0:
            return
        k0, k1, first = ctx.requested[0].take_counters(x.size)
        width = p.upper_bound - p.lower_bound
        args = (outputs[1], modes[1], x, p.lower_bound, width, k0, k1, first)
        launch(ctx, _rrelu_loop, outputs[0], modes[0], *args, written=(0,))


@via_float32
def _prelu(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    x, gamma = inputs
    mode = req_code("LeakyReLU", req[0])
    if mode != NULL and x.size:
        B, R, ga, gb = _layout(x, gamma)
        flat = (outputs[0].reshape(-1), x.reshape(-1), gamma.reshape(-1))
        _prelu_loop.launch(ctx, x.size, *flat, B, R, ga, gb, mode)


@via_float32
def _prelu_backward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    dy, x, gamma = inputs
    m_dx, m_dg = (req_code("_backward_LeakyReLU", r) for r in req)
    if x.size == 0:
        return
    B, R, ga, gb = _layout(x, gamma)
    A = x.shape[0]
    dy1, x1, g1 = dy.reshape(-1), x.reshape(-1), gamma.reshape(-1)
    if m_dg != NULL and is_gpu(ctx):  # first: dx may be dy's memory
        _prelu_grad_gamma_gpu(ctx, outputs[1], dy1, x1, (A, B, R, ga, gb), m_dg)
    elif m_dg != NULL:
        args = (outputs[1].reshape(-1), dy1, x1, A, B, R, ga, gb, m_dg)
        _prelu_grad_gamma.launch(ctx, ga * gb, *args, work=x.size)
    if m_dx != NULL:
        _prelu_grad_x.launch(ctx, x.size, outputs[0].reshape(-1), dy1, x1, g1, B, R, ga, gb, m_dx)


def _prelu_grad_gamma_gpu(
    ctx: Any, dgamma: Any, dy: Any, x: Any, layout: tuple[int, ...], mode: int
) -> None:
    """dgamma (=|+=) dy * x (x <= 0) summed over the elements sharing each gamma entry.

    The terms go to scratch, a thread per element (products in float32 for float16, as
    the CPU's copies), then the reduction kernels sum them as (A, B, R) down to gamma's
    (ga, gb, 1), coalesced and split across blocks: a thread per gamma entry left 64
    threads summing 400k elements each for a (128, 64, 56, 56) layer, and gluon's
    default gamma of shape (1,) a single thread summing all of it.
    """
    from nnvmpy.ops import _reduce_cuda

    A, B, R, ga, gb = layout
    term = scratch.empty(ctx, x.size, np.float64 if x.dtype == np.float64 else np.float32)
    _prelu_gamma_term.launch(ctx, term, "write", dy, x)
    terms, name = term.reshape((A, B, R)), "_backward_LeakyReLU"
    _reduce_cuda.reduce_gpu(ctx, dgamma, mode == ADD, terms, (ga, gb, 1), "sum", 1.0, name)


def _backward(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    p = attrs.parsed
    if p.act_type in _FIXED:  # inputs: (dy, x)
        _FIXED[p.act_type][1].launch(ctx, outputs[0], req[0], inputs[0], inputs[1], p.slope)
    elif p.act_type == "prelu":  # (dy, x, gamma)
        _prelu_backward(attrs, ctx, inputs, req, outputs)
    else:  # rrelu: (dy, y, mask)
        _rrelu_grad.launch(ctx, outputs[0], req[0], inputs[0], inputs[1], inputs[2])


_elemwise_gradient = ElemwiseGradUseIn("_backward_LeakyReLU")


def _gradient(node: Any, ograds: list[Any]) -> list[Any]:
    if _is(node.attrs, "prelu"):
        heads = [ograds[0], *node.inputs]
    elif _is(node.attrs, "rrelu"):
        heads = [ograds[0], NodeEntry(node, 0), NodeEntry(node, 1)]
    else:
        return _elemwise_gradient(node, ograds)
    return make_grad_node("_backward_LeakyReLU", node, heads)


def _same_slot(attrs: NodeAttrs) -> list[tuple[int, int]]:
    return [(0, 0)]


def _scalar_forward(attrs: NodeAttrs) -> kernel.ScalarBody | None:
    """The fixed modes' scalar body, for fusion (prelu broadcasts gamma, rrelu draws)."""
    p = attrs.parsed
    return kernel.ScalarBody((_FIXED[p.act_type][0],), (p.slope,)) if p.act_type in _FIXED else None


def _scalar_backward(attrs: NodeAttrs) -> kernel.ScalarBody | None:
    p = attrs.parsed
    if p.act_type in _FIXED:
        return kernel.ScalarBody((_FIXED[p.act_type][1],), (p.slope,))
    return kernel.ScalarBody((_rrelu_grad,)) if p.act_type == "rrelu" else None


def _set_init(attrs: NodeAttrs, var: Any, index: int) -> None:
    """prelu's gamma starts at 0.25 unless the variable names its own initializer (MXNet)."""
    if index == 1 and _is(attrs, "prelu") and "__init__" not in var.attrs.dict:
        var.attrs.dict["__init__"] = '["Constant", {"value": 0.25}]'


(
    register_op("LeakyReLU")
    .describe(
        "Leaky rectified linear units and their relatives, element-wise.\n\n"
        "- leaky: y = x if x > 0 else slope * x\n"
        "- elu: y = x if x > 0 else slope * (exp(x) - 1)\n"
        "- selu: y = lambda * (x if x > 0 else alpha * (exp(x) - 1))\n"
        "- gelu: y = 0.5 * x * (1 + erf(x / sqrt(2)))\n"
        "- prelu: y = x if x > 0 else gamma * x, gamma a learned input (channel-wise)\n"
        "- rrelu: y = x if x > 0 else s * x, s uniform in [lower_bound, upper_bound) "
        "while training (the second output), their mean at inference"
    )
    .set_attr_parser(LeakyReLUParam)
    .set_num_inputs(lambda attrs: 2 if _is(attrs, "prelu") else 1)
    .set_num_outputs(lambda attrs: 2 if _is(attrs, "rrelu") else 1)
    .set_attr(FListInputNames, lambda attrs: ["data", "gamma"] if _is(attrs, "prelu") else ["data"])
    .set_attr(
        FListOutputNames, lambda attrs: ["output", "mask"] if _is(attrs, "rrelu") else ["output"]
    )
    .set_attr(FInferShape, _infer_shape)
    .set_attr(FInferType, lambda attrs, i, o: elemwise_type(len(i), len(o))(attrs, i, o))
    .set_attr(FInplaceOption, _same_slot)
    .set_attr(
        FResourceRequest, lambda attrs: [ResourceRequest.kRandom] if _is(attrs, "rrelu") else []
    )
    .set_attr(FCompute_cpu, _forward)
    .set_attr(FCompute_gpu, _forward)
    .set_attr(FScalarFunction, _scalar_forward)
    .set_attr(FGradient, _gradient)
    .set_attr(FSetInputVarAttrOnCompose, _set_init)
    .add_argument("data", "NDArray-or-Symbol", "Input data to activation function.")
    .add_argument("gamma", "NDArray-or-Symbol", "Input data to activation function.")
    .add_arguments(LeakyReLUParam.fields())
)
(
    register_op("_backward_LeakyReLU")
    .describe(
        "Backward of LeakyReLU: inputs (dy, x), (dy, x, gamma) for prelu, (dy, y, mask) for rrelu."
    )
    .set_attr_parser(LeakyReLUParam)
    .set_num_inputs(lambda attrs: 2 if attrs.parsed.act_type in _FIXED else 3)
    .set_num_outputs(lambda attrs: 2 if _is(attrs, "prelu") else 1)
    .set_attr(TIsBackward, True)
    .set_attr(FInplaceOption, _same_slot)  # prelu: dgamma is summed before dx is written
    .set_attr(FCompute_cpu, _backward)
    .set_attr(FCompute_gpu, _backward)
    .set_attr(FScalarFunction, _scalar_backward)
)

__all__ = ["LeakyReLUParam", "gamma_layout"]
