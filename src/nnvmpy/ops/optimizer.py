"""Optimizer update ops: sgd_update and sgd_mom_update, element-wise on every device.

    g      = clip(rescale_grad * grad, clip_gradient)          (no clipping when < 0)
    sgd:     weight' = weight - lr * (g + wd * weight)
    sgd_mom: mom'    = momentum * mom - lr * (g + wd * weight);   weight' = weight + mom'

The new weight is the op's output; pass `out=weight` to update in place, as MXNet's
optimizers do (FInplaceOption (0, 0) allows that alias). sgd_mom_update also writes
`mom` in place (FMutateInputs [2]), so in a symbol it is an auxiliary state. These ops
have no gradient.
"""

from __future__ import annotations

from typing import Any

from .. import kernel
from ..attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FInferShape,
    FInferType,
    FInplaceOption,
    FListInputNames,
    FMutateInputs,
)
from ..base import OpReqType
from ..infer import elemwise_shape, elemwise_type
from ..param import Parameter, field
from ..registry import NodeAttrs, register_op
from .elemwise_binary import _add

elementwise = kernel.elementwise


@elementwise
def _sgd(weight, grad, lr, wd, rescale_grad, clip_gradient):
    g = rescale_grad * grad
    if clip_gradient >= 0:
        g = min(max(g, -clip_gradient), clip_gradient)
    return weight - lr * (g + wd * weight)


@elementwise
def _sgd_mom(mom, weight, grad, lr, momentum, wd, rescale_grad, clip_gradient):
    g = rescale_grad * grad
    if clip_gradient >= 0:
        g = min(max(g, -clip_gradient), clip_gradient)
    return momentum * mom - lr * (g + wd * weight)


class SGDParam(Parameter):
    lr = field(float, describe="Learning rate.")
    wd = field(float, default=0.0, describe="Weight decay: adds wd * weight to the gradient.")
    rescale_grad = field(
        float, default=1.0, describe="Rescale gradient to grad = rescale_grad*grad."
    )
    clip_gradient = field(
        float,
        default=-1.0,
        describe="Clip gradient to [-clip_gradient, clip_gradient] after rescaling; "
        "a negative value turns clipping off.",
    )
    lazy_update = field(
        bool, default=True, describe="For row_sparse gradients only (accepted and ignored)."
    )


class SGDMomParam(SGDParam):
    momentum = field(float, default=0.0, describe="The decay rate of momentum estimates.")


def _sgd_update(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    p = attrs.parsed
    weight, grad = inputs
    _sgd.launch(ctx, outputs[0], req[0], weight, grad, p.lr, p.wd, p.rescale_grad, p.clip_gradient)


def _sgd_mom_update(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    p = attrs.parsed
    weight, grad, mom = inputs
    # mom first, from the old weight: out may be the weight itself
    _sgd_mom.launch(
        ctx,
        mom,
        OpReqType.kWriteInplace,
        mom,
        weight,
        grad,
        p.lr,
        p.momentum,
        p.wd,
        p.rescale_grad,
        p.clip_gradient,
    )
    _add.launch(ctx, outputs[0], req[0], weight, mom)


def _same_slot(attrs: NodeAttrs) -> list[tuple[int, int]]:
    return [(0, 0)]


def _register(name: str, param: type[Parameter], inputs: list[str], compute: Any) -> Any:
    n = len(inputs)
    op = (
        register_op(name)
        .set_attr_parser(param)
        .set_num_inputs(n)
        .set_num_outputs(1)
        .set_attr(FListInputNames, lambda attrs: list(inputs))
        .set_attr(FInferShape, elemwise_shape(n, 1))
        .set_attr(FInferType, elemwise_type(n, 1))
        .set_attr(FInplaceOption, _same_slot)
        .set_attr(FCompute_cpu, compute)
        .set_attr(FCompute_gpu, compute)
    )
    for arg in inputs:
        op.add_argument(arg, "NDArray-or-Symbol", f"The {arg} array.")
    return op.add_arguments(param.fields())


_register("sgd_update", SGDParam, ["weight", "grad"], _sgd_update).describe(
    "Update function for Stochastic Gradient Descent (SGD) optimizer.\n\n"
    "    weight = weight - lr * (clip(rescale_grad * grad, clip_gradient) + wd * weight)\n\n"
    "Returns the new weight; call with out=weight to update in place."
)
_register("sgd_mom_update", SGDMomParam, ["weight", "grad", "mom"], _sgd_mom_update).describe(
    "Momentum update function for Stochastic Gradient Descent (SGD) optimizer.\n\n"
    "    mom = momentum * mom - lr * (clip(rescale_grad * grad, clip_gradient) + wd * weight)\n"
    "    weight = weight + mom\n\n"
    "`mom` is updated in place; returns the new weight (call with out=weight)."
).set_attr(FMutateInputs, lambda attrs: [2])
