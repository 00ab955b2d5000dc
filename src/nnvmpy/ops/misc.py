"""Graph-shaping identities: BlockGrad (stop_gradient) and _identity_with_attr_like_rhs.

Both copy their (first) input forward. What they change is the graph around them:
BlockGrad's gradient is zero, so nothing upstream of it is differentiated through it
(and the Gradient pass needs none of the forward values behind it); the identity with
a right-hand side ties its input's shape and type to another entry's, which lets
shape inference run backwards through ops that cannot (a broadcast_add of a weight).
"""

from __future__ import annotations

from typing import Any

from ..attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FInplaceIdentity,
    FInplaceOption,
    FListInputNames,
)
from ..graph.grad import make_node, make_zero_grad_nodes
from ..graph.node import Node, NodeEntry
from ..infer import elemwise_shape, elemwise_type
from ..kernel import scalar_function
from ..registry import NodeAttrs, register_op
from .elemwise_unary import _identity


def _copy_first(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    """out = inputs[0] (kNullOp / kAddTo honoured by the kernel launch)."""
    _identity.launch(ctx, outputs[0], req[0], inputs[0])


def _same_slot(attrs: NodeAttrs) -> list[tuple[int, int]]:
    return [(0, 0)]


def _identity_flag(attrs: NodeAttrs) -> list[bool]:
    return [True]


(
    register_op("BlockGrad")
    .describe(
        "Stops gradient computation: the output is the input, and the gradient "
        "flowing back through it is zero."
    )
    .set_num_inputs(1)
    .set_attr(FInferShape, elemwise_shape(1, 1))
    .set_attr(FInferType, elemwise_type(1, 1))
    .set_attr(FInplaceOption, _same_slot)
    .set_attr(FInplaceIdentity, _identity_flag)
    .set_attr(FCompute_cpu, _copy_first)
    .set_attr(FCompute_gpu, _copy_first)
    .set_attr(FGradient, make_zero_grad_nodes)
    .set_attr("FScalarFunction", scalar_function(_identity))  # fuses as a copy
    .add_argument("data", "NDArray-or-Symbol", "The input array.")
)


register_op("BlockGrad").add_alias("stop_gradient")


def _like_rhs_gradient(node: Node, ograds: list[NodeEntry]) -> list[NodeEntry]:
    # d(lhs) = dy (through the copy op); the rhs only lends its shape: zero
    lhs = make_node("_copy", f"{node.name}_lhs_backward", [ograds[0]])
    rhs = make_node("zeros_like", f"{node.name}_rhs_backward", [node.inputs[1]])
    return [NodeEntry(lhs, 0), NodeEntry(rhs, 0)]


(
    register_op("_identity_with_attr_like_rhs")
    .describe(
        "Returns lhs, and makes shape and type inference treat lhs like rhs (both must "
        "have the same shape and type); rhs is not read."
    )
    .set_num_inputs(2)
    .set_attr(FListInputNames, lambda attrs: ["lhs", "rhs"])
    .set_attr(FInferShape, elemwise_shape(2, 1))
    .set_attr(FInferType, elemwise_type(2, 1))
    .set_attr(FInplaceOption, _same_slot)
    .set_attr(FCompute_cpu, _copy_first)
    .set_attr(FCompute_gpu, _copy_first)
    .set_attr(FGradient, _like_rhs_gradient)
    .add_argument("lhs", "NDArray-or-Symbol", "The array returned.")
    .add_argument("rhs", "NDArray-or-Symbol", "The array whose shape and type lhs takes.")
)
