"""The quadratic op of MXNet's tutorial, kept as the worked example a newcomer copies.

    y = a*x^2 + b*x + c          dL/dx = dL/dy * (2*a*x + b)

Everything an op needs sits here: its Parameter, its kernels, the registration of the
forward op with its inference rules, and the backward op right below it. The GPU compute
is registered from a separate block that re-fetches the op by name, exactly as the
tutorial's quadratic_op.cu does, to show that registration is get-or-create.
"""

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
    FListInputNames,
    TIsBackward,
)
from ..graph.grad import ElemwiseGradUseIn
from ..infer import elemwise_shape, elemwise_type
from ..param import Parameter, field
from ..registry import NodeAttrs, register_op


class QuadraticParam(Parameter):
    a = field(float, default=0.0, describe="Coefficient of the quadratic term in the equation.")
    b = field(float, default=0.0, describe="Coefficient of the linear term in the equation.")
    c = field(float, default=0.0, describe="Constant term in the quadratic equation.")


@kernel.elementwise
def _quadratic(x, a, b, c):
    return a * x * x + b * x + c


@kernel.elementwise
def _quadratic_grad(dy, x, a, b):  # dL/dx = dL/dy * (2ax + b)
    return dy * (2 * a * x + b)


def quadratic_forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    p = attrs.parsed
    _quadratic.launch(ctx, outputs[0], req[0], inputs[0], p.a, p.b, p.c)


def quadratic_backward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    # inputs: (dL/dy, x) as wired by ElemwiseGradUseIn
    p = attrs.parsed
    _quadratic_grad.launch(ctx, outputs[0], req[0], inputs[0], inputs[1], p.a, p.b)


(
    register_op("quadratic")
    .describe(
        "This operators implements the quadratic function:\n\n"
        "    f(x) = a * x^2 + b * x + c\n\n"
        "where x is an input tensor and all operations in the function are element-wise.\n\n"
        "Example::\n\n"
        "    x = [[1, 2], [3, 4]]\n"
        "    y = quadratic(data=x, a=1, b=2, c=3)\n"
        "    y = [[6, 11], [18, 27]]\n"
    )
    .set_attr_parser(QuadraticParam)
    .set_num_inputs(1)
    .set_num_outputs(1)
    .set_attr(FListInputNames, lambda attrs: ["data"])
    .set_attr(FInferShape, elemwise_shape(1, 1))
    .set_attr(FInferType, elemwise_type(1, 1))
    .set_attr(FCompute_cpu, quadratic_forward)
    .set_attr(FGradient, ElemwiseGradUseIn("_backward_quadratic"))
    .set_attr(FInplaceOption, lambda attrs: [(0, 0)])
    .add_argument("data", "NDArray-or-Symbol", "Input ndarray")
    .add_arguments(QuadraticParam.fields())
)

(
    register_op("_backward_quadratic")
    .set_attr_parser(QuadraticParam)
    .set_num_inputs(2)
    .set_num_outputs(1)
    .set_attr(TIsBackward, True)
    .set_attr(FCompute_cpu, quadratic_backward)
)

# --- the tutorial's quadratic_op.cu: the same ops, found again by name, gain GPU kernels ---
register_op("quadratic").set_attr(FCompute_gpu, quadratic_forward)
register_op("_backward_quadratic").set_attr(FCompute_gpu, quadratic_backward)

# --- fusion: the scalar body FCompute launches, so `a*x*x + b*x + c` chains fuse with it ---
register_op("quadratic").set_attr(
    "FScalarFunction", kernel.scalar_function(_quadratic, params=("a", "b", "c"))
)
register_op("_backward_quadratic").set_attr(
    "FScalarFunction", kernel.scalar_function(_quadratic_grad, params=("a", "b"))
)
