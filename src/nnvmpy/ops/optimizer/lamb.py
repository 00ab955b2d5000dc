"""LAMB's two phases (You et al., https://arxiv.org/abs/1904.00962) and their mp_* versions.

    phase 1:  g = clip(rescale_grad * grad, clip_gradient)
              mean = beta1 * mean + (1 - beta1) * g;  var = beta2 * var + (1 - beta2) * g^2
              (bias_correction: mean /= 1 - beta1^t, var /= 1 - beta2^t, for this step only)
              out = mean / (sqrt(var) + epsilon) + wd * weight
    phase 2:  r1 = ||weight|| clamped to [lower_bound, upper_bound] (each when >= 0)
              ratio = r1 / r2 (r2 = ||g||), or 1 when either is 0
              weight = weight - lr * ratio * g

Between the phases the caller computes r1 = norm(weight) and r2 = norm(g), arrays of shape
(1,), which phase 2 reads on the device. The mp_* versions use the float32 master copy
`weight32`: phase 1 decays it (output float32), phase 2 updates it in place, as MXNet
documents, and outputs it in the weight's dtype.
"""

from __future__ import annotations

import math
from typing import Any

from ...base import InferError
from ...infer import shape_assign, shape_is_known, shape_str
from ...kernel import like, parallel_for
from ...kernel.launch import uindex
from ...param import Parameter, field
from ...registry import NodeAttrs
from ._common import (
    WD_DESCRIPTION,
    ClipParam,
    assign,
    clip,
    launch,
    mp_type,
    op_name,
    register_update,
    req_code,
    size_of,
)


class LambUpdatePhaseOneParam(ClipParam):
    field_order = (  # MXNet's argument order
        "beta1",
        "beta2",
        "epsilon",
        "t",
        "bias_correction",
        "wd",
        "rescale_grad",
        "clip_gradient",
    )
    beta1 = field(float, default=0.9, describe="The decay rate for the 1st moment estimates.")
    beta2 = field(float, default=0.999, describe="The decay rate for the 2nd moment estimates.")
    epsilon = field(float, default=1e-6, describe="A small constant for numerical stability.")
    t = field(int, describe="Index update count.")
    bias_correction = field(bool, default=True, describe="Whether to use bias correction.")
    wd = field(float, describe=WD_DESCRIPTION)


class LambUpdatePhaseTwoParam(Parameter):
    lr = field(float, describe="Learning rate")
    lower_bound = field(
        float,
        default=-1.0,
        describe="Lower limit of norm of weight. If lower_bound <= 0, Lower limit is not set",
    )
    upper_bound = field(
        float,
        default=-1.0,
        describe="Upper limit of norm of weight. If upper_bound <= 0, Upper limit is not set",
    )


@parallel_for
def phase1_loop(
    t, out, mean, var, master, grad, mode, beta1, beta2, rest1, rest2, c1, c2, epsilon, wd,
    rescale, bound,
):  # fmt: skip
    i = uindex(t)  # unsigned: no wraparound checks, so the loop vectorises
    g = clip(rescale * grad[i], bound)
    m = beta1 * mean[i] + rest1 * g  # rest = 1 - beta: no float64 literal in float32 math
    v = beta2 * var[i] + rest2 * g * g
    mean[i] = m
    var[i] = v
    # c1, c2: 1 / (1 - beta^t) with bias correction, else 1
    assign(out, i, mode, m * c1 / (math.sqrt(v * c2) + epsilon) + wd * master[i])


def _phase1(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    p = attrs.parsed
    weight, grad, mean, var = inputs[:4]
    master = inputs[4] if len(inputs) == 5 else weight
    c1 = 1.0 / (1.0 - p.beta1**p.t) if p.bias_correction else 1.0
    c2 = 1.0 / (1.0 - p.beta2**p.t) if p.bias_correction else 1.0
    args = (outputs[0], mean, var, master, grad, req_code(op_name(attrs), req[0]), p.beta1,
            p.beta2, 1.0 - p.beta1, 1.0 - p.beta2, c1, c2, p.epsilon, p.wd, p.rescale_grad,
            p.clip_gradient)  # fmt: skip
    launch(ctx, phase1_loop, size_of(weight), args, written=(0, 1, 2))


@parallel_for
def phase2_loop(t, out, master, g, r1, r2, mode, has_master, lr, lower, upper):
    i = uindex(t)  # unsigned: no wraparound checks, so the loop vectorises
    r = r1[0]
    if lower >= 0:
        r = max(r, lower)
    if upper >= 0:
        r = min(r, upper)
    ratio = like(r, 1.0)  # in r's type: a Python 1.0 made the update float64
    if r != 0 and r2[0] != 0:
        ratio = r / r2[0]
    new = master[i] - lr * ratio * g[i]
    if has_master:
        master[i] = new
    assign(out, i, mode, new)


def _phase2(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    p = attrs.parsed
    has_master = len(inputs) == 5
    weight, g, r1, r2 = inputs[:4]
    master = inputs[4] if has_master else weight
    args = (outputs[0], master, g, r1, r2, req_code(op_name(attrs), req[0]), has_master, p.lr,
            p.lower_bound, p.upper_bound)  # fmt: skip
    launch(ctx, phase2_loop, size_of(weight), args, (0, 1) if has_master else (0,))


def _phase2_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    """weight, g (and weight32) and the output share a shape; r1 and r2 are (1,)."""
    op = op_name(attrs) if attrs.op is not None else "lamb_update_phase2"
    for i, name in ((2, "r1"), (3, "r2")):
        s = in_shapes[i]
        if s is not None and tuple(s) not in ((1,), (None,)):
            raise InferError(
                f"{op}: input '{name}' has shape {shape_str(s)}; expected (1,), the norm "
                f"computed between the two phases"
            )
        shape_assign(in_shapes, i, (1,), f"{op}: input '{name}'")
    same = [0, 1, *range(4, len(in_shapes))]
    names = {0: "weight", 1: "g", 4: "weight32"}
    known = next((in_shapes[i] for i in same if in_shapes[i] is not None), out_shapes[0])
    if known is not None:
        for i in same:
            shape_assign(in_shapes, i, known, f"{op}: input '{names[i]}'")
        shape_assign(out_shapes, 0, known, f"{op}: output")
    return all(shape_is_known(s) for s in (*in_shapes, *out_shapes))


_PHASE1_DOC = """Phase I of lamb update: the Adam-like direction g, decayed.

    grad = clip(rescale_grad * grad, clip_gradient)
    mean = beta1 * mean + (1 - beta1) * grad
    var = beta2 * var + (1 - beta2) * grad^2
    if bias_correction: mean_hat = mean / (1 - beta1^t); var_hat = var / (1 - beta2^t)
    g = mean_hat / (sqrt(var_hat) + epsilon) + wd * weight

`mean` and `var` are updated in place; returns g."""
_PHASE2_DOC = """Phase II of lamb update: the layer-wise trust ratio step.

    r1 = min(max(r1, lower_bound), upper_bound)   (each bound when >= 0)
    lr = lr * r1 / r2 if r1 != 0 and r2 != 0 else lr
    weight = weight - lr * g

r1 = norm(weight) and r2 = norm(g) have shape (1,). Returns the new weight (out=weight)."""

register_update(
    "lamb_update_phase1", LambUpdatePhaseOneParam, ["weight", "grad", "mean", "var"], _phase1,
    _PHASE1_DOC, mutate=[2, 3],
)  # fmt: skip
register_update(
    "mp_lamb_update_phase1", LambUpdatePhaseOneParam,
    ["weight", "grad", "mean", "var", "weight32"], _phase1,
    "Mixed Precision version of " + _PHASE1_DOC + "\n\nwd decays the float32 master copy "
    "weight32; g is float32.",
    mutate=[2, 3], infer_type=mp_type(2, out_float32=True),
)  # fmt: skip
register_update(
    "lamb_update_phase2", LambUpdatePhaseTwoParam, ["weight", "g", "r1", "r2"], _phase2,
    _PHASE2_DOC, infer_shape=_phase2_shape,
)  # fmt: skip
register_update(
    "mp_lamb_update_phase2", LambUpdatePhaseTwoParam, ["weight", "g", "r1", "r2", "weight32"],
    _phase2,
    "Mixed Precision version of " + _PHASE2_DOC + "\n\nThe step is applied to the float32 "
    "master copy weight32 (updated in place); the output is weight32 in weight's dtype.",
    mutate=[4], infer_type=mp_type(1), infer_shape=_phase2_shape,
)  # fmt: skip
