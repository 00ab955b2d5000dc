"""Adaptive update ops: adam, rmsprop, rmspropalex, ftrl and ftml, one fused body each.

Each reads the weight, the gradient and its states once and writes the states and the
output once: adam_update moves 4 reads + 3 writes per element (2 fewer than the
grad-rewriting, three-pass formulation of MXNet's early versions).

    adam:        g = clip(rescale_grad * grad + wd * weight)
                 mean = beta1 * mean + (1 - beta1) * g;  var = beta2 * var + (1 - beta2) * g^2
                 weight = weight - lr * mean / (sqrt(var) + epsilon)
    rmsprop:     g = clip(rescale_grad * grad + wd * weight)
                 n = (1 - gamma1) * g^2 + gamma1 * n
                 weight = clip_w(weight - lr * g / sqrt(n + epsilon))
    rmspropalex: n as rmsprop; gs = (1 - gamma1) * g + gamma1 * gs
                 delta = gamma2 * delta - lr * g / sqrt(n - gs^2 + epsilon)
                 weight = clip_w(weight + delta)
    ftrl:        g = clip(rescale_grad * grad)
                 z += g - (sqrt(n + g^2) - sqrt(n)) * weight / lr;  n += g^2
                 weight = (sign(z) * lamda1 - z) / ((beta + sqrt(n)) / lr + wd) * (|z| > lamda1)
    ftml:        g = clip(rescale_grad * grad + wd * weight)
                 v = beta2 * v + (1 - beta2) * g^2
                 d_t = (1 - beta1^t) / lr * (sqrt(v / (1 - beta2^t)) + epsilon)
                 z = beta1 * z + (1 - beta1) * g - (d_t - beta1 * d) * weight;  d = d_t
                 weight = -z / d_t

clip(x) is clip_gradient's clipping (off when negative), clip_w clip_weights'.
"""

from __future__ import annotations

import math
from typing import Any

from ...kernel import like, parallel_for
from ...kernel.launch import uindex
from ...param import Parameter, field
from ...registry import NodeAttrs
from ._common import (
    LAZY_DESCRIPTION,
    WD_DESCRIPTION,
    ClipParam,
    assign,
    clip,
    launch,
    op_name,
    register_update,
    req_code,
    sign,
    size_of,
)

# -- adam ---------------------------------------------------------------------------------------


@parallel_for
def adam_loop(t, out, mean, var, weight, grad, mode, lr, beta1, beta2, rest1, rest2, epsilon, wd,
              rescale, bound):  # fmt: skip
    i = uindex(t)  # unsigned: no wraparound checks, so the loop vectorises
    w = weight[i]
    g = clip(rescale * grad[i] + wd * w, bound)
    m = beta1 * mean[i] + rest1 * g  # rest = 1 - beta, passed in: a 1.0 here is a float64
    v = beta2 * var[i] + rest2 * g * g  # and would drag float32 math into float64
    mean[i] = m
    var[i] = v
    assign(out, i, mode, w - lr * m / (math.sqrt(v) + epsilon))


class AdamParam(ClipParam):
    field_order = (  # MXNet's argument order
        "lr",
        "beta1",
        "beta2",
        "epsilon",
        "wd",
        "rescale_grad",
        "clip_gradient",
        "lazy_update",
    )
    lr = field(float, describe="Learning rate")
    beta1 = field(float, default=0.9, describe="The decay rate for the 1st moment estimates.")
    beta2 = field(float, default=0.999, describe="The decay rate for the 2nd moment estimates.")
    epsilon = field(float, default=1e-8, describe="A small constant for numerical stability.")
    wd = field(float, default=0.0, describe=WD_DESCRIPTION)
    lazy_update = field(bool, default=True, describe=LAZY_DESCRIPTION)


def _adam(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    p = attrs.parsed
    weight, grad, mean, var = inputs
    args = (outputs[0], mean, var, weight, grad, req_code("adam_update", req[0]), p.lr, p.beta1,
            p.beta2, 1.0 - p.beta1, 1.0 - p.beta2, p.epsilon, p.wd, p.rescale_grad,
            p.clip_gradient)  # fmt: skip
    launch(ctx, adam_loop, size_of(weight), args, written=(0, 1, 2))


register_update(
    "adam_update", AdamParam, ["weight", "grad", "mean", "var"], _adam,
    """Update function for Adam optimizer. Adam is seen as a generalization of AdaGrad.

    g = clip(rescale_grad * grad + wd * weight, clip_gradient)
    mean = beta1 * mean + (1 - beta1) * g
    var = beta2 * var + (1 - beta2) * g^2
    weight = weight - lr * mean / (sqrt(var) + epsilon)

The bias correction of Adam is the optimizer's (it scales lr). `mean` and `var` are
updated in place; returns the new weight (call with out=weight).""",
    mutate=[2, 3],
)  # fmt: skip


# -- rmsprop, rmspropalex ------------------------------------------------------------------------


@parallel_for
def rmsprop_loop(t, out, n, gs, delta, weight, grad, mode, centered, lr, gamma1, rest1, gamma2,
                 epsilon, wd, rescale, bound, clip_weights):  # fmt: skip
    i = uindex(t)  # unsigned: no wraparound checks, so the loop vectorises
    w = weight[i]
    g = clip(rescale * grad[i] + wd * w, bound)
    nn = rest1 * g * g + gamma1 * n[i]  # rest1 = 1 - gamma1
    n[i] = nn
    if centered:  # Graves 2013, eq. 38-45
        gg = rest1 * g + gamma1 * gs[i]
        d = gamma2 * delta[i] - lr * g / math.sqrt(nn - gg * gg + epsilon)
        gs[i] = gg
        delta[i] = d
        new = w + d
    else:  # Tieleman & Hinton 2012
        new = w - lr * g / math.sqrt(nn + epsilon)
    assign(out, i, mode, clip(new, clip_weights))


class RMSPropParam(ClipParam):
    # MXNet's argument order
    field_order = ("lr", "gamma1", "epsilon", "wd", "rescale_grad", "clip_gradient", "clip_weights")
    lr = field(float, describe="Learning rate")
    gamma1 = field(float, default=0.95, describe="The decay rate of momentum estimates.")
    epsilon = field(float, default=1e-8, describe="A small constant for numerical stability.")
    wd = field(float, default=0.0, describe=WD_DESCRIPTION)
    clip_weights = field(
        float,
        default=-1.0,
        describe="Clip weights to the range of [-clip_weights, clip_weights] If clip_weights "
        "<= 0, weight clipping is turned off. "
        "weights = max(min(weights, clip_weights), -clip_weights).",
    )


class RMSPropAlexParam(RMSPropParam):
    field_order = (  # MXNet's argument order
        "lr",
        "gamma1",
        "gamma2",
        "epsilon",
        "wd",
        "rescale_grad",
        "clip_gradient",
        "clip_weights",
    )
    gamma2 = field(float, default=0.9, describe="Decay rate.")


def _rmsprop(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    p = attrs.parsed
    centered = len(inputs) == 5
    weight, grad, n = inputs[:3]
    gs, delta = inputs[3:] if centered else (n, n)  # unused without centering
    gamma2 = p.gamma2 if centered else 0.0
    args = (outputs[0], n, gs, delta, weight, grad, req_code(op_name(attrs), req[0]), centered,
            p.lr, p.gamma1, 1.0 - p.gamma1, gamma2, p.epsilon, p.wd, p.rescale_grad,
            p.clip_gradient, p.clip_weights)  # fmt: skip
    launch(ctx, rmsprop_loop, size_of(weight), args, (0, 1, 2, 3) if centered else (0, 1))


register_update(
    "rmsprop_update", RMSPropParam, ["weight", "grad", "n"], _rmsprop,
    """Update function for the RMSProp optimizer (Tieleman & Hinton, 2012).

    g = clip(rescale_grad * grad + wd * weight, clip_gradient)
    n = (1 - gamma1) * g^2 + gamma1 * n
    weight = clip(weight - lr * g / sqrt(n + epsilon), clip_weights)

`n` is updated in place; returns the new weight (call with out=weight).""",
    mutate=[2],
)  # fmt: skip
register_update(
    "rmspropalex_update", RMSPropAlexParam, ["weight", "grad", "n", "g", "delta"], _rmsprop,
    """Update function for the centered RMSProp optimizer (Graves, 2013, eq. 38-45).

    grad = clip(rescale_grad * grad + wd * weight, clip_gradient)
    n = (1 - gamma1) * grad^2 + gamma1 * n
    g = (1 - gamma1) * grad + gamma1 * g
    delta = gamma2 * delta - lr * grad / sqrt(n - g^2 + epsilon)
    weight = clip(weight + delta, clip_weights)

`n`, `g` and `delta` are updated in place; returns the new weight (call with out=weight).""",
    mutate=[2, 3, 4],
)  # fmt: skip


# -- ftrl ----------------------------------------------------------------------------------------


@parallel_for
def ftrl_loop(t, out, z, n, weight, grad, mode, lr, lamda1, beta, wd, rescale, bound):
    i = uindex(t)  # unsigned: no wraparound checks, so the loop vectorises
    g = clip(rescale * grad[i], bound)
    nv = n[i]
    zz = z[i] + g - (math.sqrt(nv + g * g) - math.sqrt(nv)) * weight[i] / lr
    nn = nv + g * g
    z[i] = zz
    n[i] = nn
    new = like(zz, 0.0)
    if abs(zz) > lamda1:
        new = (sign(zz) * lamda1 - zz) / ((beta + math.sqrt(nn)) / lr + wd)
    assign(out, i, mode, new)


class FtrlParam(ClipParam):
    # MXNet's argument order
    field_order = ("lr", "lamda1", "beta", "wd", "rescale_grad", "clip_gradient")
    lr = field(float, describe="Learning rate")
    lamda1 = field(float, default=0.01, describe="The L1 regularization coefficient.")
    beta = field(float, default=1.0, describe="Per-Coordinate Learning Rate beta.")
    wd = field(float, default=0.0, describe=WD_DESCRIPTION)


def _ftrl(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    p = attrs.parsed
    weight, grad, z, n = inputs
    args = (outputs[0], z, n, weight, grad, req_code("ftrl_update", req[0]), p.lr, p.lamda1,
            p.beta, p.wd, p.rescale_grad, p.clip_gradient)  # fmt: skip
    launch(ctx, ftrl_loop, size_of(weight), args, written=(0, 1, 2))


register_update(
    "ftrl_update", FtrlParam, ["weight", "grad", "z", "n"], _ftrl,
    """Update function for Ftrl optimizer (McMahan et al., "Ad Click Prediction").

    g = clip(rescale_grad * grad, clip_gradient)
    z += g - (sqrt(n + g^2) - sqrt(n)) * weight / lr
    n += g^2
    weight = (sign(z) * lamda1 - z) / ((beta + sqrt(n)) / lr + wd) * (|z| > lamda1)

`z` and `n` are updated in place; returns the new weight (call with out=weight).""",
    mutate=[2, 3],
)  # fmt: skip


# -- ftml ------------------------------------------------------------------------------------------


@parallel_for
def ftml_loop(
    t, out, d, v, z, weight, grad, mode, lr, beta1, beta2, rest1, rest2, c1, c2, epsilon, wd,
    rescale, bound,
):  # fmt: skip
    i = uindex(t)  # unsigned: no wraparound checks, so the loop vectorises
    w = weight[i]
    g = clip(rescale * grad[i] + wd * w, bound)
    vv = beta2 * v[i] + rest2 * g * g  # rest = 1 - beta
    d_t = c1 / lr * (math.sqrt(vv * c2) + epsilon)  # c1 = 1 - beta1^t, c2 = 1 / (1 - beta2^t)
    zz = beta1 * z[i] + rest1 * g - (d_t - beta1 * d[i]) * w
    v[i] = vv
    z[i] = zz
    d[i] = d_t
    assign(out, i, mode, -zz / d_t)


class FTMLParam(Parameter):
    lr = field(float, describe="Learning rate.")
    beta1 = field(
        float, default=0.6, lower_bound=0, upper_bound=1, describe="Generally close to 0.5."
    )
    beta2 = field(
        float, default=0.999, lower_bound=0, upper_bound=1, describe="Generally close to 1."
    )
    epsilon = field(float, default=1e-8, describe="Epsilon to prevent div 0.")
    t = field(int, describe="Number of update.")
    wd = field(float, default=0.0, describe=WD_DESCRIPTION)
    rescale_grad = ClipParam.rescale_grad
    clip_grad = ClipParam.clip_gradient  # FTML's spelling of clip_gradient


def _ftml(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    p = attrs.parsed
    weight, grad, d, v, z = inputs
    c1, c2 = 1.0 - p.beta1**p.t, 1.0 / (1.0 - p.beta2**p.t)
    args = (outputs[0], d, v, z, weight, grad, req_code("ftml_update", req[0]), p.lr, p.beta1,
            p.beta2, 1.0 - p.beta1, 1.0 - p.beta2, c1, c2, p.epsilon, p.wd, p.rescale_grad,
            p.clip_grad)  # fmt: skip
    launch(ctx, ftml_loop, size_of(weight), args, written=(0, 1, 2, 3))


register_update(
    "ftml_update", FTMLParam, ["weight", "grad", "d", "v", "z"], _ftml,
    """The FTML optimizer (Zheng & Kwok, "Follow the Moving Leader in Deep Learning").

    g = clip(rescale_grad * grad + wd * weight, clip_grad)
    v = beta2 * v + (1 - beta2) * g^2
    d_t = (1 - beta1^t) / lr * (sqrt(v / (1 - beta2^t)) + epsilon)
    z = beta1 * z + (1 - beta1) * g - (d_t - beta1 * d) * weight
    d = d_t;  weight = -z / d_t

`d`, `v` and `z` are updated in place; returns the new weight (call with out=weight).""",
    mutate=[2, 3, 4],
)  # fmt: skip
