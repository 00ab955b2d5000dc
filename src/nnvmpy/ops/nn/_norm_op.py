"""The op table LayerNorm, GroupNorm and InstanceNorm share: (data, gamma, beta) in,
(output, mean, std-or-var) out, the statistics hidden unless `output_mean_var` asks for
them, and a backward node reading (dy, data, gamma, mean, std) plus the statistics' head
gradients when they are visible. Only the shapes, the kernel layout and the docs differ.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FInplaceOption,
    FListInputNames,
    FListOutputNames,
    FNumVisibleOutputs,
    FResourceRequest,
    TIsBackward,
)
from ...graph.grad import make_grad_node
from ...graph.node import NodeEntry
from ...infer import elemwise_type
from ...param import Parameter
from ...registry import NodeAttrs, register_op, skip_in_source_locations
from ...resource import ResourceRequest

skip_in_source_locations(__file__)  # the ops are defined where this is called

INPUTS = ["data", "gamma", "beta"]


def _same_slot(attrs: NodeAttrs) -> list[tuple[int, int]]:
    return [(0, 0)]  # a row is read whole before it is written; dx may take dy's memory


def _stats_visible(attrs: NodeAttrs) -> bool:
    return bool(getattr(attrs.parsed, "output_mean_var", False))


def register_norm_op(
    name: str,
    *,
    param: type[Parameter],
    outputs: list[str],
    describe: str,
    infer_shape: Callable[..., bool],
    forward: Callable[..., None],
    backward: Callable[..., None],
    arguments: list[str],
) -> None:
    """Register `name` and `_backward_<name>`; `arguments` describe data, gamma and beta.

    An op whose param has `output_mean_var` shows its statistics when asked and then takes
    their head gradients too; otherwise (InstanceNorm) they stay hidden.
    """
    backward_name = f"_backward_{name}"
    backward_inputs = f"dy, data, gamma, {outputs[1]}, {outputs[2]}"
    if "output_mean_var" in param.field_names():
        backward_doc = (
            f"Backward of {name}: inputs ({backward_inputs}[, d{outputs[1]}, d{outputs[2]}]); "
            "the last two with output_mean_var."
        )
    else:
        backward_doc = f"Backward of {name}: inputs ({backward_inputs})."

    def gradient(node: Any, ograds: list[Any]) -> list[Any]:
        heads = [ograds[0], node.inputs[0], node.inputs[1], NodeEntry(node, 1), NodeEntry(node, 2)]
        if _stats_visible(node.attrs):
            heads += ograds[1:3]
        return make_grad_node(backward_name, node, heads)

    op = (
        register_op(name)
        .describe(describe)
        .set_attr_parser(param)
        .set_num_inputs(3)
        .set_num_outputs(3)
        .set_attr(FListInputNames, lambda attrs: list(INPUTS))
        .set_attr(FListOutputNames, lambda attrs: list(outputs))
        .set_attr(FNumVisibleOutputs, lambda attrs: 3 if _stats_visible(attrs) else 1)
        .set_attr(FInferShape, infer_shape)
        .set_attr(FInferType, elemwise_type(3, 3))
        .set_attr(FInplaceOption, _same_slot)
        .set_attr(FResourceRequest, lambda attrs: [ResourceRequest.kTempSpace])
        .set_attr(FCompute_cpu, forward)
        .set_attr(FCompute_gpu, forward)
        .set_attr(FGradient, gradient)
    )
    for arg, text in zip(INPUTS, arguments, strict=True):
        op.add_argument(arg, "NDArray-or-Symbol", text)
    op.add_arguments(param.fields())

    (
        register_op(backward_name)
        .describe(backward_doc)
        .set_attr_parser(param)
        .set_num_inputs(lambda attrs: 7 if _stats_visible(attrs) else 5)
        .set_num_outputs(3)
        .set_attr(TIsBackward, True)
        .set_attr(FInplaceOption, _same_slot)
        .set_attr(FResourceRequest, lambda attrs: [ResourceRequest.kTempSpace])
        .set_attr(FCompute_cpu, backward)
        .set_attr(FCompute_gpu, backward)
    )
