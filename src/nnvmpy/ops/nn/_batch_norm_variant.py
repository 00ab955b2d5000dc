"""BatchNorm over axis 1 under another name and parameter set, with the variance as its
"var" output: how BatchNorm_v1 (legacy_v1.py) and _contrib_SyncBatchNorm
(sync_batch_norm.py) are registered, on batch_norm.py's inference and kernels."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from ...attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FListInputNames,
    FListOutputNames,
    FMutateInputs,
    FNumVisibleOutputs,
    FSetInputVarAttrOnCompose,
    TIsBackward,
)
from ...infer import elemwise_type
from ...param import Parameter
from ...registry import NodeAttrs, register_op, skip_in_source_locations
from . import batch_norm

skip_in_source_locations(__file__)  # the ops are defined where this is called


def register_axis1_variant(name: str, backward: str, param: type[Parameter], doc: str) -> None:
    """Register `name` and its backward op `backward`: BatchNorm over axis 1 on BatchNorm's
    kernels, with the fields of `param` BatchNorm shares, whose "var" output is the variance
    (BatchNorm outputs 1/sqrt(var + eps)). BatchNorm_v1 and _contrib_SyncBatchNorm are it."""
    shared = [n for n in param.field_names() if n in batch_norm.BatchNormParam.field_names()]

    def as_batch_norm(attrs: NodeAttrs) -> Any:
        values = attrs.parsed.values()
        parsed = batch_norm.BatchNormParam(**{k: values[k] for k in shared})
        return SimpleNamespace(parsed=parsed, op=attrs.op, name=attrs.name, dict=attrs.dict)

    def infer_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
        return bool(batch_norm._infer_shape(as_batch_norm(attrs), in_shapes, out_shapes))

    def forward(
        attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
    ) -> None:
        batch_norm._batch_norm_forward(as_batch_norm(attrs), ctx, inputs, req, outputs, False)

    def gradient(
        attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
    ) -> None:
        batch_norm._batch_norm_backward(as_batch_norm(attrs), ctx, inputs, req, outputs, False)

    (
        register_op(name)
        .describe(doc)
        .set_attr_parser(param)
        .set_num_inputs(5)
        .set_num_outputs(3)
        .set_attr(FListInputNames, lambda attrs: list(batch_norm.INPUTS))
        .set_attr(FListOutputNames, lambda attrs: list(batch_norm.OUTPUTS))
        .set_attr(FNumVisibleOutputs, lambda attrs: 3 if attrs.parsed.output_mean_var else 1)
        .set_attr(FMutateInputs, lambda attrs: [3, 4])
        .set_attr(FInferShape, infer_shape)
        .set_attr(FInferType, elemwise_type(5, 3))
        .set_attr(FSetInputVarAttrOnCompose, batch_norm._set_init)
        .set_attr(FCompute_cpu, forward)
        .set_attr(FCompute_gpu, forward)
        .set_attr(FGradient, batch_norm.batch_norm_grad(backward))
        .add_argument("data", "NDArray-or-Symbol", "Input data to batch normalization")
        .add_argument("gamma", "NDArray-or-Symbol", "gamma array")
        .add_argument("beta", "NDArray-or-Symbol", "beta array")
        .add_argument("moving_mean", "NDArray-or-Symbol", "running mean of input")
        .add_argument("moving_var", "NDArray-or-Symbol", "running variance of input")
        .add_arguments(param.fields())
    )
    (
        register_op(backward)
        .describe(f"Backward of {name}: inputs (dy, data, gamma, mean, var).")
        .set_attr_parser(param)
        .set_num_inputs(5)
        .set_num_outputs(3)
        .set_attr(TIsBackward, True)
        .set_attr(FCompute_cpu, gradient)
        .set_attr(FCompute_gpu, gradient)
    )
