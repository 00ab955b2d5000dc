"""_contrib_SyncBatchNorm (nd/sym.contrib.SyncBatchNorm): BatchNorm whose batch statistics
MXNet reduces across the `ndev` devices of one process (keyed by `key`).

nnvmpy runs one device per executor here, so the statistics are the local batch's: the op
is BatchNorm over axis 1 (the kernels of batch_norm.py), except that its "var" output is
the variance itself, as MXNet's SyncBatchNorm outputs it (BatchNorm outputs 1/sqrt(var+eps)).
Across processes, reduce gradients with a KVStore instead.
"""

from __future__ import annotations

from ...param import Parameter, field
from ._batch_norm_variant import register_axis1_variant


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


register_axis1_variant(
    "_contrib_SyncBatchNorm",
    "_backward_contrib_SyncBatchNorm",
    SyncBatchNormParam,
    "Batch normalization with statistics synchronized across devices (MXNet's "
    "SyncBatchNorm). On nnvmpy's single device per executor it normalizes with the "
    "local batch's statistics, as BatchNorm over axis 1; its 'var' output is the "
    "variance.",
)

__all__ = ["SyncBatchNormParam"]
