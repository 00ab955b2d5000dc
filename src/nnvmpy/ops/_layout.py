"""register_layout_op: the attributes every AxisMap op shares (tile, flip, Pad, ...).

A layout op is a `plan(op_name, attrs, input_shape) -> AxisMap` plus its shape rule.
Its forward gathers through the plan; its backward op applies the plan's adjoint to dy,
planning from the forward input's shape (the backward op's output). Neither is safe in
place (elements move), and the backward reads only dy.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    TIsBackward,
)
from ..graph.grad import ElemwiseGradUseNone
from ..infer import elemwise_type
from ..registry import NodeAttrs, Op, register_op, skip_in_source_locations
from ._axis_map import AxisMap, adjoint, gather

skip_in_source_locations(__file__)  # registrations name the op's own file

Plan = Callable[[str, NodeAttrs, tuple[int, ...]], AxisMap]


def op_name(attrs: NodeAttrs, default: str) -> str:
    return attrs.op.name if attrs.op is not None else default


def register_layout_op(
    names: Sequence[str],
    backward_name: str,
    param: Any,
    plan: Plan,
    infer_shape: Any,
    describe: str,
) -> Op:
    """Register forward op `names[0]` (the other names are its aliases) and `backward_name`."""

    def forward(
        attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
    ) -> None:
        name = op_name(attrs, names[0])
        x = inputs[0]
        gather(name, ctx, outputs[0], req[0], x, plan(name, attrs, tuple(x.shape)))

    def backward(  # the adjoint
        attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
    ) -> None:
        dx = outputs[0]
        adjoint(backward_name, ctx, dx, req[0], inputs[0], plan(names[0], attrs, tuple(dx.shape)))

    op = (
        register_op(names[0])
        .describe(describe)
        .set_num_inputs(1)
        .set_num_outputs(1)
        .set_attr(FInferShape, infer_shape)
        .set_attr(FInferType, elemwise_type(1, 1))
        .set_attr(FCompute_cpu, forward)
        .set_attr(FCompute_gpu, forward)
        .set_attr(FGradient, ElemwiseGradUseNone(backward_name))
        .add_argument("data", "NDArray-or-Symbol", "Input data array")
    )
    if param is not None:
        op.set_attr_parser(param).add_arguments(param.fields())
    for alias in names[1:]:
        op.add_alias(alias)
    bwd = (  # inputs: (dy,); dx's shape comes from the forward node
        register_op(backward_name)
        .set_num_inputs(1)
        .set_num_outputs(1)
        .set_attr(TIsBackward, True)
        .set_attr(FCompute_cpu, backward)
        .set_attr(FCompute_gpu, backward)
    )
    if param is not None:
        bwd.set_attr_parser(param)
    return op
