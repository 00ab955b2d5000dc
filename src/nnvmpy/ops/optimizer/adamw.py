"""AdamW update ops (MXNet's contrib adamw.cc): _adamw_update, _mp_adamw_update and the
multi-weight _multi_adamw_update, _multi_mp_adamw_update.

AdamW decouples the weight decay from the gradient step (Loshchilov & Hutter):

    g = clip(rescale_grad * grad, clip_gradient)
    mean = beta1 * mean + (1 - beta1) * g;  var = beta2 * var + (1 - beta2) * g^2
    weight = weight - eta * (lr * mean / (sqrt(var) + epsilon) + wd * weight)

`rescale_grad` is an input array (its first element is used), not a parameter, so a
loss scaler can compute it on the device; when it is NaN, infinite or 0 the update is
skipped: nothing, neither the states nor the output, is written. `mean` and `var` (and
the float32 master copy `weight32` of the mp_* ops) are updated in place; the output is
the new weight (call with out=weight). nd.contrib.adamw_update & co. accept a float or an
NDArray as rescale_grad and lists of arrays for the multi_* ops.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FInferShape,
    FInferType,
    FInplaceOption,
    FListInputNames,
    FMutateInputs,
)
from ...base import InferError
from ...infer import elemwise_shape, elemwise_type, shape_assign, shape_is_known, type_assign
from ...kernel import parallel_for
from ...kernel.launch import uindex
from ...param import FloatTuple, Parameter, field
from ...registry import NodeAttrs, register_op
from ._common import (
    WD_DESCRIPTION,
    assign,
    check_per_weight,
    clip,
    infer_groups,
    launch_groups,
    mp_type,
    req_code,
    size_of,
)

_F32 = np.dtype(np.float32)


@parallel_for
def adamw_loop(t, out, mean, var, src, grad, rescale, mode, has_master, lr, eta, beta1, beta2,
               rest1, rest2, epsilon, wd, bound):  # fmt: skip
    s = rescale[0]
    if math.isnan(s) or math.isinf(s) or s == 0.0:
        return  # the update is skipped
    i = uindex(t)  # unsigned: no wraparound checks, so the loop vectorises
    w = src[i]
    g = clip(s * grad[i], bound)
    m = beta1 * mean[i] + rest1 * g  # rest = 1 - beta, passed in (see adam_loop)
    v = beta2 * var[i] + rest2 * g * g
    mean[i] = m
    var[i] = v
    new = w - eta * (lr * m / (math.sqrt(v) + epsilon) + wd * w)
    if has_master:
        src[i] = new
    assign(out, i, mode, new)


class _AdamWCommon(Parameter):
    beta1 = field(float, default=0.9, describe="The decay rate for the 1st moment estimates.")
    beta2 = field(float, default=0.999, describe="The decay rate for the 2nd moment estimates.")
    epsilon = field(float, default=1e-8, describe="A small constant for numerical stability.")
    clip_gradient = field(
        float,
        default=-1.0,
        describe="Clip gradient to the range of [-clip_gradient, clip_gradient] If "
        "clip_gradient <= 0, gradient clipping is turned off. "
        "grad = max(min(grad, clip_gradient), -clip_gradient).",
    )


class AdamWParam(_AdamWCommon):
    # MXNet's argument order
    field_order = ("lr", "beta1", "beta2", "epsilon", "wd", "eta", "clip_gradient")
    lr = field(float, describe="Learning rate")
    wd = field(float, default=0.0, describe=WD_DESCRIPTION)
    eta = field(float, describe="Learning rate schedule multiplier")


class MultiAdamWParam(_AdamWCommon):
    field_order = (  # MXNet's argument order
        "lrs",
        "beta1",
        "beta2",
        "epsilon",
        "wds",
        "etas",
        "clip_gradient",
        "num_weights",
    )
    lrs = field(FloatTuple, describe="Learning rates")
    wds = field(FloatTuple, describe=WD_DESCRIPTION)
    etas = field(FloatTuple, describe="Learning rates schedule multiplier")
    num_weights = field(int, default=1, lower_bound=1, describe="Number of updated weights.")


_RULE = """    g = clip(rescale_grad * grad, clip_gradient)
    mean = beta1 * mean + (1 - beta1) * g
    var = beta2 * var + (1 - beta2) * g^2
    weight = weight - eta * (lr * mean / (sqrt(var) + epsilon) + wd * weight)

rescale_grad is an array input (its first element is used); if it is NaN, Inf or 0 the
update is skipped and nothing is written."""


class _Variant:
    """One of the four ops: one weight or many (multi), with a float32 master copy or not."""

    def __init__(self, multi: bool, mp: bool) -> None:
        self.multi, self.mp = multi, mp
        self.slots = ["weight", "grad", "mean", "var"] + ["weight32"] * mp
        self.stride = len(self.slots)
        self.name = "_" + "multi_" * multi + "mp_" * mp + "adamw_update"

    def count(self, attrs: NodeAttrs) -> int:
        return attrs.parsed.num_weights if self.multi and attrs.parsed is not None else 1

    def n_in(self, attrs: NodeAttrs) -> int:
        return self.stride * self.count(attrs) + 1

    def input_names(self, attrs: NodeAttrs) -> list[str]:
        if not self.multi:
            return [*self.slots, "rescale_grad"]
        n = self.count(attrs)
        return [f"{slot}_{i}" for i in range(n) for slot in self.slots] + ["rescale_grad"]

    def mutated(self, attrs: NodeAttrs) -> list[int]:
        n, stride = self.count(attrs), self.stride
        return [stride * i + j for i in range(n) for j in range(2, stride)]  # states, master

    def inplace(self, attrs: NodeAttrs) -> list[tuple[int, int]]:
        return [(self.stride * i, i) for i in range(self.count(attrs))]

    def infer_shape(self, attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
        n = self.count(attrs)
        if self.multi:
            check_per_weight(self.name, attrs.parsed, ("lrs", "wds", "etas"), n)
        rule = elemwise_shape(self.stride, 1)
        done = infer_groups(rule, attrs, self.stride, n, in_shapes, out_shapes)
        last = len(in_shapes) - 1
        if not shape_is_known(in_shapes[last]):
            shape_assign(in_shapes, last, (1,), f"{self.name}: input 'rescale_grad'")
        elif math.prod(in_shapes[last]) < 1:
            raise InferError(
                f"{self.name}: input 'rescale_grad' expects at least one element, "
                f"got shape {tuple(in_shapes[last])}"
            )
        return done and all(shape_is_known(s) for s in in_shapes)

    def infer_type(self, attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
        rule = mp_type(2) if self.mp else elemwise_type(self.stride, 1)
        done = infer_groups(rule, attrs, self.stride, self.count(attrs), in_types, out_types)
        last = len(in_types) - 1
        if in_types[last] is None:
            type_assign(in_types, last, _F32, f"{self.name}: input 'rescale_grad'")
        return done

    def compute(
        self, attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
    ) -> None:
        p = attrs.parsed
        rescale = inputs[-1]
        groups = []
        for i in range(self.count(attrs)):
            weight, grad, mean, var = inputs[self.stride * i : self.stride * i + 4]
            src = inputs[self.stride * i + 4] if self.mp else weight
            lr, wd, eta = (p.lrs[i], p.wds[i], p.etas[i]) if self.multi else (p.lr, p.wd, p.eta)
            args = (outputs[i], mean, var, src, grad, rescale, req_code(self.name, req[i]),
                    self.mp, lr, eta, p.beta1, p.beta2, 1.0 - p.beta1, 1.0 - p.beta2,
                    p.epsilon, wd, p.clip_gradient)  # fmt: skip
            written = [0, 1, 2] + [3] * self.mp  # never the weight: out may alias it
            groups.append((size_of(weight), args, written))
        launch_groups(ctx, adamw_loop, groups)  # on a GPU, several weights a launch

    def register(self) -> None:
        param = MultiAdamWParam if self.multi else AdamWParam
        op = (
            register_op(self.name)
            .describe(self.doc())
            .set_attr_parser(param)
            .set_num_inputs(self.n_in)
            .set_num_outputs(self.count)
            .set_attr(FListInputNames, self.input_names)
            .set_attr(FInferShape, self.infer_shape)
            .set_attr(FInferType, self.infer_type)
            .set_attr(FInplaceOption, self.inplace)
            .set_attr(FMutateInputs, self.mutated)
            .set_attr(FCompute_cpu, self.compute)
            .set_attr(FCompute_gpu, self.compute)
        )
        if self.multi:
            what = "Groups (weight, grad, mean, var" + ", weight32" * self.mp
            op.add_argument("data", "NDArray-or-Symbol[]", what + ") per weight, then rescale_grad")
        else:
            for slot in self.slots:
                op.add_argument(slot, "NDArray-or-Symbol", slot.capitalize())
            op.add_argument(
                "rescale_grad",
                "NDArray-or-Symbol",
                "Rescale gradient to rescale_grad * grad. If NaN, Inf, or 0, the update is "
                "skipped.",
            )
        op.add_arguments(param.fields())

    def doc(self) -> str:
        head = (
            f"Update function for {'multiple weights of the ' * self.multi}"
            f"{'multi-precision ' * self.mp}AdamW optimizer (Adam with decoupled weight decay)"
        )
        multi = (
            " Inputs are groups (" + ", ".join(self.slots) + ") per weight, then rescale_grad; "
            "weight i uses lrs[i], wds[i], etas[i]."
            if self.multi
            else ""
        )
        mp = (
            " The update runs on the float32 master copy weight32 (updated in place); the "
            "output is weight32 in the weight's dtype."
            if self.mp
            else ""
        )
        return f"{head}:\n\n{_RULE}{multi}{mp}"


for _multi in (False, True):
    for _mp in (False, True):
        _Variant(_multi, _mp).register()
