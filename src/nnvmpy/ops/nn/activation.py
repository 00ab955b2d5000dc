"""Activation: relu, sigmoid, tanh, softrelu, softsign (LeakyReLU is in leaky_relu.py).

Activation picks one of the element-wise kernels of elemwise_unary.py by `act_type`, so
the math lives in one place. Its backward reads the output y (dx = f'(y) dy), except
softsign, whose derivative is cheaper from the input x. As in MXNet the op names no
inputs (its one input is `data` as a keyword, `<name>_input0` to the monitor).
"""

from __future__ import annotations

from typing import Any

from ...attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FEpilogueStep,
    FGradient,
    FInferShape,
    FInferType,
    FInplaceOption,
    FScalarFunction,
    TIsBackward,
)
from ...graph.grad import make_grad_node
from ...graph.node import NodeEntry
from ...infer import elemwise_shape, elemwise_type
from ...kernel import ScalarBody
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


def _scalar_forward(attrs: NodeAttrs) -> ScalarBody:
    """The kernel FCompute launches, for fusion."""
    return ScalarBody((_ACTIVATIONS[attrs.parsed.act_type][0],))


def _scalar_backward(attrs: NodeAttrs) -> ScalarBody:
    return ScalarBody((_ACTIVATIONS[attrs.parsed.act_type][1],))


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
    .set_attr(FGradient, _activation_grad)
    .set_attr(FScalarFunction, _scalar_forward)
    # relu can run in a producer's output loop (passes/fuse_epilogue.py)
    .set_attr(FEpilogueStep, lambda attrs: "relu" if attrs.parsed.act_type == "relu" else None)
    .add_argument("data", "NDArray-or-Symbol", "The input array.")
    .add_arguments(ActivationParam.fields())
)
(
    _register_elemwise("_backward_Activation", ActivationParam, 2, _activation_backward)
    .describe("Backward of Activation: inputs (dy, y), or (dy, x) for softsign.")
    .set_attr(TIsBackward, True)
    .set_attr(FScalarFunction, _scalar_backward)
)
