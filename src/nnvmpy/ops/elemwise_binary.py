"""Element-wise arithmetic of two same-shape arrays, and add_n (sum of any number).

Each op is registered under MXNet's name and its aliases (`elemwise_add` is also `_add`,
`_plus` and `_Plus`, ...). Kernels of the ops that broadcast.py and elemwise_scalar.py
share live here or in elemwise_scalar.py; the backward ops of add, sub and mul are
differentiable again (autograd.grad(create_graph=True)).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

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
from ..graph.grad import ElemwiseGradUseIn, ElemwiseGradUseNone, make_node
from ..graph.node import NodeEntry
from ..infer import elemwise_shape, elemwise_type
from ..kernel import vmath
from ..param import Parameter, field
from ..registry import NodeAttrs, register_op
from ._bilinear import bilinear_backward_gradient
from ._family import register_backward, register_binary, same_slot
from ._mod import floor_mod, integer_gradients_are_zero
from .elemwise_scalar import (
    _maximum,
    _maximum_grad,
    _minimum,
    _minimum_grad,
    _power,
    _power_grad,
)
from .elemwise_unary import _identity, _negative

elementwise = kernel.elementwise
v_hypot = vmath.hypot  # float32 operands: float64 inside, vectorised (kernel/vmath)


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


@elementwise
def _rpower_grad(dy, lhs, rhs):  # d(l^r)/dr = l^r log(l)
    if lhs > 0:
        return dy * lhs**rhs * math.log(lhs)
    return dy * 0 if lhs == 0 and rhs > 0 else dy * math.nan


@elementwise
def _rmaximum_grad(dy, lhs, rhs):  # d max(l, r)/dr = 1 where l < r
    return dy if lhs < rhs else dy * 0


@elementwise
def _rminimum_grad(dy, lhs, rhs):  # d min(l, r)/dr = 1 where l > r
    return dy if lhs > rhs else dy * 0


@elementwise
def _hypot(a, b):  # sqrt(a^2 + b^2) without overflow: MXNet's hypotf(1e20f, 1e20f) is 1.4e20
    return v_hypot(a, b)


@elementwise
def _hypot_grad_lhs(dy, lhs, rhs):  # d hypot/dl = l / hypot
    return dy * lhs / v_hypot(lhs, rhs)


@elementwise
def _hypot_grad_rhs(dy, lhs, rhs):
    return dy * rhs / v_hypot(lhs, rhs)


@elementwise
def _mod(a, b):  # a mod b with the sign of b (Python's %); 0 where b == 0, as MXNet
    return floor_mod(a, b)


@elementwise
def _mod_grad_lhs(dy, lhs, rhs):  # d(l mod r)/dl = 1
    return dy


@elementwise
def _mod_grad_rhs(dy, lhs, rhs):  # d(l mod r)/dr = -floor(l / r)
    return -dy * np.floor(lhs / rhs) if rhs != 0 else dy * 0


# name, aliases, kernel, what it returns, backward kernels (dlhs, drhs) from (dy, lhs, rhs)
_BINARY: list[tuple[str, tuple[str, ...], Any, str, tuple[Any, Any]]] = [
    ("elemwise_mul", ("_mul", "_Mul"), _mul, "lhs * rhs", (_mul_grad_lhs, _mul_grad_rhs)),
    ("elemwise_div", ("_div", "_Div"), _div, "lhs / rhs", (_div_grad_lhs, _div_grad_rhs)),
    ("_power", ("_Power",), _power, "lhs ^ rhs", (_power_grad, _rpower_grad)),
    # max/min: dy goes to lhs where lhs >= rhs (<= for min), else to rhs; NaN propagates
    ("_maximum", ("_Maximum",), _maximum, "max(lhs, rhs)", (_maximum_grad, _rmaximum_grad)),
    ("_minimum", ("_Minimum",), _minimum, "min(lhs, rhs)", (_minimum_grad, _rminimum_grad)),
    ("_hypot", ("_Hypot",), _hypot, "sqrt(lhs^2 + rhs^2)", (_hypot_grad_lhs, _hypot_grad_rhs)),
    (
        "_mod",
        ("_Mod",),
        _mod,
        "lhs mod rhs (sign of rhs; 0 where rhs is 0)",
        (_mod_grad_lhs, _mod_grad_rhs),
    ),
]

# pow through NumPy's SIMD loop on the CPU: numba calls libm's pow once per element
_NUMPY = {"_power": np.power}
for _name, _aliases, _fn, _what, (_gl, _gr) in _BINARY:
    _bwd = "_backward_" + _name.removeprefix("elemwise_").removeprefix("_")
    _doc = f"y = {_what}, element-wise."
    register_binary(_name, _fn, _doc, ElemwiseGradUseIn(_bwd), _NUMPY.get(_name))
    for _alias in _aliases:
        register_op(_name).add_alias(_alias)
    register_backward(_bwd, [_gl, _gr], 3)
integer_gradients_are_zero("_backward_mod")

# _grad_add is an op of its own in MXNet (the sum the gradient pass writes), not an alias
for _name, _aliases, _fn, _what, _bwd in (
    ("elemwise_add", ("_add", "_plus", "_Plus"), _add, "lhs + rhs", "_backward_add"),
    ("_grad_add", (), _add, "lhs + rhs", "_backward_add"),
    ("elemwise_sub", ("_sub", "_minus", "_Minus"), _sub, "lhs - rhs", "_backward_sub"),
):
    _grad = ElemwiseGradUseNone(_bwd)
    register_binary(_name, _fn, f"y = {_what}, element-wise.", _grad)
    for _alias in _aliases:
        register_op(_name).add_alias(_alias)
register_backward("_backward_add", [_identity, _identity], 1)
register_backward("_backward_sub", [_identity, _negative], 1)


# Gradients of the backward ops (autograd.grad(create_graph=True)): add and sub pass dy to
# both sides (negated for sub's rhs), so with (gl, gr) flowing in, d dy = gl + gr (gl - gr).
def _pass_through_gradient(combine: str) -> Any:
    def gradient(node: Any, ograds: list[Any]) -> list[Any]:
        ddy = make_node(combine, f"{node.name}_ddy", [ograds[0], ograds[1]])
        return [NodeEntry(ddy, 0)]

    return gradient


register_op("_backward_add").set_attr(FGradient, _pass_through_gradient("elemwise_add"))
register_op("_backward_sub").set_attr(FGradient, _pass_through_gradient("elemwise_sub"))
register_op("_backward_mul").set_attr(FGradient, bilinear_backward_gradient("elemwise_mul"))


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


# add_n's scalar body, for fusion (gradient sums join their fused backward group)
@elementwise
def _sum3(a, b, c):
    return a + b + c


@elementwise
def _sum4(a, b, c, d):
    return a + b + c + d


@elementwise
def _sum5(a, b, c, d, e):
    return a + b + c + d + e


@elementwise
def _sum6(a, b, c, d, e, f):
    return a + b + c + d + e + f


_SUMS = {1: _identity, 2: _add, 3: _sum3, 4: _sum4, 5: _sum5, 6: _sum6}


def _add_n_scalar(attrs: NodeAttrs) -> kernel.ScalarBody | None:
    fn = _SUMS.get(attrs.parsed.num_args)
    return kernel.ScalarBody((fn,)) if fn is not None else None


def _add_n_grad(node: Any, ograds: list[Any]) -> list[Any]:
    # every input gets the output gradient unchanged
    return [ograds[0] for _ in node.inputs]


def _num_args(attrs: NodeAttrs) -> int:
    return int(attrs.parsed.num_args)


(
    register_op("add_n")
    .add_alias("ElementWiseSum")
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
    .set_attr("FScalarFunction", _add_n_scalar)
    .add_argument("args", "NDArray-or-Symbol[]", "Positional input arrays")
    .add_arguments(AddNParam.fields())
)
