"""Activation (relu, sigmoid, tanh, softrelu, softsign) and LeakyReLU (leaky, elu, selu, gelu).

Activation picks one of the element-wise kernels of elemwise_unary.py by `act_type`, so
the math lives in one place. Its backward reads the output y (dx = f'(y) dy), except
softsign, whose derivative is cheaper from the input x; LeakyReLU's backward reads x.

    leaky: y = x if x > 0 else slope * x
    elu:   y = x if x > 0 else slope * (exp(x) - 1)
    selu:  y = lambda * (x if x > 0 else alpha * (exp(x) - 1))
    gelu:  y = 0.5 * x * (1 + erf(x / sqrt(2)))

MXNet's prelu (a learned slope input) and rrelu (a random slope) are not implemented;
asking for them is a ParamError listing the act_types that are.
"""

from __future__ import annotations

import math
from typing import Any

from ... import kernel
from ...attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FInplaceOption,
    FListInputNames,
    TIsBackward,
)
from ...graph.grad import ElemwiseGradUseIn, make_grad_node
from ...graph.node import NodeEntry
from ...infer import elemwise_shape, elemwise_type
from ...param import Parameter, field
from ...registry import NodeAttrs, register_op
from ..elemwise_unary import (
    _relu,
    _relu_grad,
    _sigmoid,
    _sigmoid_grad,
    _softrelu,
    _softrelu_grad,
    _softsign,
    _softsign_grad,
    _tanh,
    _tanh_grad,
)

elementwise = kernel.elementwise

# --- Activation ----------------------------------------------------------------------------

# act_type -> (forward kernel, backward kernel (dy, y or x)); codes as MXNet's enum
_ACTIVATIONS = {
    "relu": (_relu, _relu_grad),
    "sigmoid": (_sigmoid, _sigmoid_grad),
    "tanh": (_tanh, _tanh_grad),
    "softrelu": (_softrelu, _softrelu_grad),
    "softsign": (_softsign, _softsign_grad),
}


class ActivationParam(Parameter):
    act_type = field(
        str,
        enum={"relu": 0, "sigmoid": 1, "tanh": 2, "softrelu": 3, "softsign": 4},
        describe="Activation function to be applied.",
    )


def _activation_forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    _ACTIVATIONS[attrs.parsed.act_type][0].launch(ctx, outputs[0], req[0], inputs[0])


def _activation_backward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    # inputs: (dy, y), or (dy, x) for softsign
    _ACTIVATIONS[attrs.parsed.act_type][1].launch(ctx, outputs[0], req[0], inputs[0], inputs[1])


def _activation_grad(node: Any, ograds: list[Any]) -> list[Any]:
    """dx = f'(.) dy from the output y, or from the input x for softsign."""
    used = node.inputs[0] if node.attrs.parsed.act_type == "softsign" else NodeEntry(node, 0)
    return make_grad_node("_backward_Activation", node, [ograds[0], used])


def _same_slot(attrs: NodeAttrs) -> list[tuple[int, int]]:
    return [(0, 0)]


def _register_elemwise(name: str, param: type[Parameter], n_in: int, forward: Any) -> Any:
    return (
        register_op(name)
        .set_attr_parser(param)
        .set_num_inputs(n_in)
        .set_num_outputs(1)
        .set_attr(FInferShape, elemwise_shape(n_in, 1))
        .set_attr(FInferType, elemwise_type(n_in, 1))
        .set_attr(FInplaceOption, _same_slot)
        .set_attr(FCompute_cpu, forward)
        .set_attr(FCompute_gpu, forward)
    )


(
    _register_elemwise("Activation", ActivationParam, 1, _activation_forward)
    .describe(
        "Applies an activation function element-wise to the input.\n\n"
        "- relu: y = max(x, 0)\n- sigmoid: y = 1 / (1 + exp(-x))\n- tanh: y = tanh(x)\n"
        "- softrelu: y = log(1 + exp(x))\n- softsign: y = x / (1 + |x|)"
    )
    .set_attr(FListInputNames, lambda attrs: ["data"])
    .set_attr(FGradient, _activation_grad)
    .add_argument("data", "NDArray-or-Symbol", "The input array.")
    .add_arguments(ActivationParam.fields())
)
(
    _register_elemwise("_backward_Activation", ActivationParam, 2, _activation_backward)
    .describe("Backward of Activation: inputs (dy, y), or (dy, x) for softsign.")
    .set_attr(TIsBackward, True)
)

# --- LeakyReLU -----------------------------------------------------------------------------

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_LAMBDA = 1.0507009873554804934193349852946
_SQRT_HALF = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


@elementwise
def _leaky(x, slope):
    return x if x > 0 else slope * x


@elementwise
def _leaky_grad(dy, x, slope):  # dx = dy if x > 0 else slope dy
    return dy if x > 0 else slope * dy


@elementwise
def _elu(x, slope):
    return x if x > 0 else slope * math.expm1(x)


@elementwise
def _elu_grad(dy, x, slope):  # dx = dy if x > 0 else slope e^x dy
    return dy if x > 0 else slope * math.exp(x) * dy


@elementwise
def _selu(x, slope):
    return _SELU_LAMBDA * (x if x > 0 else _SELU_ALPHA * math.expm1(x))


@elementwise
def _selu_grad(dy, x, slope):  # dx = lambda dy if x > 0 else lambda alpha e^x dy
    return _SELU_LAMBDA * (dy if x > 0 else _SELU_ALPHA * math.exp(x) * dy)


@elementwise
def _gelu(x, slope):
    return 0.5 * x * (1.0 + math.erf(x * _SQRT_HALF))


@elementwise
def _gelu_grad(dy, x, slope):  # dx = dy (Phi(x) + x phi(x))
    cdf = 0.5 * (1.0 + math.erf(x * _SQRT_HALF))
    return dy * (cdf + x * _INV_SQRT_2PI * math.exp(-0.5 * x * x))


_LEAKY = {
    "leaky": (_leaky, _leaky_grad),
    "elu": (_elu, _elu_grad),
    "selu": (_selu, _selu_grad),
    "gelu": (_gelu, _gelu_grad),
}


class LeakyReLUParam(Parameter):
    act_type = field(
        str,
        default="leaky",
        enum={"elu": 0, "gelu": 5, "leaky": 1, "selu": 4},
        describe="Activation function to be applied (prelu and rrelu are not implemented).",
    )
    slope = field(float, default=0.25, describe="Init slope for the activation (leaky, elu).")
    lower_bound = field(float, default=0.125, describe="Lower bound of random slope (rrelu).")
    upper_bound = field(float, default=0.334, describe="Upper bound of random slope (rrelu).")


def _leaky_forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    p = attrs.parsed
    _LEAKY[p.act_type][0].launch(ctx, outputs[0], req[0], inputs[0], p.slope)


def _leaky_backward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    p = attrs.parsed  # inputs: (dy, x)
    _LEAKY[p.act_type][1].launch(ctx, outputs[0], req[0], inputs[0], inputs[1], p.slope)


(
    _register_elemwise("LeakyReLU", LeakyReLUParam, 1, _leaky_forward)
    .describe(
        "Leaky rectified linear units and their relatives, element-wise.\n\n"
        "- leaky: y = x if x > 0 else slope * x\n"
        "- elu: y = x if x > 0 else slope * (exp(x) - 1)\n"
        "- selu: y = lambda * (x if x > 0 else alpha * (exp(x) - 1))\n"
        "- gelu: y = 0.5 * x * (1 + erf(x / sqrt(2)))"
    )
    .set_attr(FListInputNames, lambda attrs: ["data"])
    .set_attr(FGradient, ElemwiseGradUseIn("_backward_LeakyReLU"))
    .add_argument("data", "NDArray-or-Symbol", "Input data to activation function.")
    .add_arguments(LeakyReLUParam.fields())
)
(
    _register_elemwise("_backward_LeakyReLU", LeakyReLUParam, 2, _leaky_backward)
    .describe("Backward of LeakyReLU: inputs (dy, x).")
    .set_attr(TIsBackward, True)
)
