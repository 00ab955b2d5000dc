"""Element-wise arithmetic of two same-shape arrays, and add_n (sum of any number)."""

from __future__ import annotations

from typing import Any

from .. import kernel
from ..attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FInplaceOption,
)
from ..base import OpReqType
from ..graph.grad import ElemwiseGradUseIn, ElemwiseGradUseNone
from ..infer import elemwise_shape, elemwise_type
from ..param import Parameter, field
from ..registry import NodeAttrs, register_op
from ._family import register_backward, register_binary, same_slot
from .elemwise_unary import _identity, _negative

elementwise = kernel.elementwise


@elementwise
def _add(a, b):
    return a + b


@elementwise
def _sub(a, b):
    return a - b


@elementwise
def _mul(a, b):
    return a * b


@elementwise
def _div(a, b):
    return a / b


@elementwise
def _mul_grad_lhs(dy, lhs, rhs):  # d(l*r)/dl = r
    return dy * rhs


@elementwise
def _mul_grad_rhs(dy, lhs, rhs):  # d(l*r)/dr = l
    return dy * lhs


@elementwise
def _div_grad_lhs(dy, lhs, rhs):  # d(l/r)/dl = 1/r
    return dy / rhs


@elementwise
def _div_grad_rhs(dy, lhs, rhs):  # d(l/r)/dr = -l/r^2
    return -dy * lhs / (rhs * rhs)


register_binary(
    "elemwise_add", _add, "y = lhs + rhs, element-wise.", ElemwiseGradUseNone("_backward_add")
)
register_backward("_backward_add", [_identity, _identity], 1)

register_binary(
    "elemwise_sub", _sub, "y = lhs - rhs, element-wise.", ElemwiseGradUseNone("_backward_sub")
)
register_backward("_backward_sub", [_identity, _negative], 1)

register_binary(
    "elemwise_mul", _mul, "y = lhs * rhs, element-wise.", ElemwiseGradUseIn("_backward_mul")
)
register_backward("_backward_mul", [_mul_grad_lhs, _mul_grad_rhs], 3)

register_binary(
    "elemwise_div", _div, "y = lhs / rhs, element-wise.", ElemwiseGradUseIn("_backward_div")
)
register_backward("_backward_div", [_div_grad_lhs, _div_grad_rhs], 3)


# -- add_n: y = sum of all inputs ----------------------------------------------------------


class AddNParam(Parameter):
    num_args = field(int, lower_bound=1, describe="Number of inputs to be summed.")


def _add_n_compute(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    out, r = outputs[0], OpReqType.parse(req[0])
    if r == OpReqType.kNullOp:
        return
    rest = inputs
    if r != OpReqType.kAddTo:
        if len(inputs) == 1:
            _identity.launch(ctx, out, r, inputs[0])
            return
        _add.launch(ctx, out, r, inputs[0], inputs[1])  # out may be inputs[0] (in-place)
        rest = inputs[2:]
    for x in rest:
        _identity.launch(ctx, out, OpReqType.kAddTo, x)


def _add_n_grad(node: Any, ograds: list[Any]) -> list[Any]:
    # every input gets the output gradient unchanged
    return [ograds[0] for _ in node.inputs]


def _num_args(attrs: NodeAttrs) -> int:
    return int(attrs.parsed.num_args)


for _name in ("add_n", "ElementWiseSum"):
    (
        register_op(_name)
        .describe("Adds all input arguments element-wise: y = x_0 + x_1 + ... + x_{n-1}.")
        .set_attr_parser(AddNParam)
        .set_key_var_num_args("num_args")
        .set_num_inputs(_num_args)
        .set_num_outputs(1)
        .set_attr(FInferShape, elemwise_shape(-1, 1))
        .set_attr(FInferType, elemwise_type(-1, 1))
        .set_attr(FInplaceOption, same_slot)
        .set_attr(FCompute_cpu, _add_n_compute)
        .set_attr(FCompute_gpu, _add_n_compute)
        .set_attr(FGradient, _add_n_grad)
        .add_argument("args", "NDArray-or-Symbol[]", "Positional input arrays")
        .add_arguments(AddNParam.fields())
    )
