"""_contrib_SyncBatchNorm (nd/sym.contrib.SyncBatchNorm): BatchNorm whose batch statistics
MXNet reduces across the `ndev` devices of one process (keyed by `key`).

nnvmpy runs one device per executor here, so the statistics are the local batch's: the op
is BatchNorm over axis 1 (the kernels of batch_norm.py), except that its "var" output is
the variance itself, as MXNet's SyncBatchNorm outputs it (BatchNorm outputs 1/sqrt(var+eps)).
Across processes, reduce gradients with a KVStore instead.
"""

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
from ...param import Parameter, field
from ...registry import NodeAttrs, register_op
from . import batch_norm


class SyncBatchNormParam(Parameter):
    eps = field(float, default=1e-3, describe="Epsilon to prevent div 0")
    momentum = field(float, default=0.9, describe="Momentum for moving average")
    fix_gamma = field(bool, default=True, describe="Fix gamma while training")
    use_global_stats = field(
        bool,
        default=False,
        describe="Whether use global moving statistics instead of local batch-norm. This will "
        "force change batch-norm into a scale shift operator.",
    )
    output_mean_var = field(bool, default=False, describe="Output All,normal mean and var")
    ndev = field(int, default=1, lower_bound=1, describe="The count of GPU devices")
    key = field(str, default="", describe="Hash key for synchronization, please set the same "
                "hash key for same layer, Block.prefix is typically used as in "
                ":class:`gluon.nn.contrib.SyncBatchNorm`.")  # fmt: skip


_SHARED = ("eps", "momentum", "fix_gamma", "use_global_stats", "output_mean_var")


def _as_batch_norm(attrs: NodeAttrs) -> Any:
    """BatchNorm's view of the node: the same statistics parameters, channel axis 1."""
    values = attrs.parsed.values()
    parsed = batch_norm.BatchNormParam(**{k: values[k] for k in _SHARED})
    return SimpleNamespace(parsed=parsed, op=attrs.op, name=attrs.name, dict=attrs.dict)


def _shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    return bool(batch_norm._infer_shape(_as_batch_norm(attrs), in_shapes, out_shapes))


def _forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    batch_norm._batch_norm_forward(_as_batch_norm(attrs), ctx, inputs, req, outputs, False)


def _backward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    batch_norm._batch_norm_backward(_as_batch_norm(attrs), ctx, inputs, req, outputs, False)


(
    register_op("_contrib_SyncBatchNorm")
    .describe(
        "Batch normalization with statistics synchronized across devices (MXNet's "
        "SyncBatchNorm). On nnvmpy's single device per executor it normalizes with the "
        "local batch's statistics, as BatchNorm over axis 1; its 'var' output is the "
        "variance."
    )
    .set_attr_parser(SyncBatchNormParam)
    .set_num_inputs(5)
    .set_num_outputs(3)
    .set_attr(FListInputNames, lambda attrs: list(batch_norm.INPUTS))
    .set_attr(FListOutputNames, lambda attrs: list(batch_norm.OUTPUTS))
    .set_attr(FNumVisibleOutputs, lambda attrs: 3 if attrs.parsed.output_mean_var else 1)
    .set_attr(FMutateInputs, lambda attrs: [3, 4])
    .set_attr(FInferShape, _shape)
    .set_attr(FInferType, elemwise_type(5, 3))
    .set_attr(FSetInputVarAttrOnCompose, batch_norm._set_init)
    .set_attr(FCompute_cpu, _forward)
    .set_attr(FCompute_gpu, _forward)
    .set_attr(FGradient, batch_norm.batch_norm_grad("_backward_contrib_SyncBatchNorm"))
    .add_argument("data", "NDArray-or-Symbol", "Input data to batch normalization")
    .add_argument("gamma", "NDArray-or-Symbol", "gamma array")
    .add_argument("beta", "NDArray-or-Symbol", "beta array")
    .add_argument("moving_mean", "NDArray-or-Symbol", "running mean of input")
    .add_argument("moving_var", "NDArray-or-Symbol", "running variance of input")
    .add_arguments(SyncBatchNormParam.fields())
)
(
    register_op("_backward_contrib_SyncBatchNorm")
    .describe("Backward of SyncBatchNorm: inputs (dy, data, gamma, mean, var).")
    .set_attr_parser(SyncBatchNormParam)
    .set_num_inputs(5)
    .set_num_outputs(3)
    .set_attr(TIsBackward, True)
    .set_attr(FCompute_cpu, _backward)
    .set_attr(FCompute_gpu, _backward)
)

__all__ = ["SyncBatchNormParam"]
