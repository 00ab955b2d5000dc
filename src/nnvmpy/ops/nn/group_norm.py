"""GroupNorm: normalise each group of channels of each sample, then scale and shift.

    x: (N, C, d1, ...), viewed as (N, G, C/G * d1 * ...) with G = num_groups
    mean, std = over each (sample, group),  std = sqrt(var + eps)        (shape (N, G))
    y = gamma[g] * (x - mean) / std + beta[g]                           (gamma, beta: (G,))

As in MXNet 1.9.1, gamma and beta have one entry per group (not per channel). Outputs
(output, mean, std), the last two visible only with output_mean_var. The kernels are
the row kernels of _norm_rows.py, one row per (sample, group).
"""

from __future__ import annotations

import math
from typing import Any

from ...base import InferError
from ...infer import shape_assign, shape_is_known, shape_str
from ...kernel.launch import req_code
from ...param import Parameter, field
from ...registry import NodeAttrs
from ._layer_util import check_ndim, via_float32
from ._norm_op import INPUTS, register_norm_op
from ._norm_rows import norm_backward, norm_forward

OUTPUTS = ["output", "mean", "std"]


class GroupNormParam(Parameter):
    num_groups = field(int, default=1, lower_bound=1, describe="Total number of groups.")
    eps = field(float, default=1e-5, describe="An `epsilon` parameter to prevent division by 0.")
    output_mean_var = field(
        bool, default=False, describe="Output the mean and std calculated along the given axis."
    )


def _infer_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    """output = data; gamma, beta = (num_groups,); mean, std = (N, num_groups)."""
    groups = attrs.parsed.num_groups
    for i in (1, 2):
        shape_assign(in_shapes, i, (groups,), f"GroupNorm: input '{INPUTS[i]}'")
    shape_assign(in_shapes, 0, out_shapes[0], "GroupNorm: input 'data'")
    shape_assign(out_shapes, 0, in_shapes[0], "GroupNorm: output 'output'")
    data = in_shapes[0]
    if data is not None:
        check_ndim("GroupNorm", "data", data, 3)
        if data[1] is not None and data[1] % groups:
            raise InferError(
                f"GroupNorm: input 'data' of shape {shape_str(data)} has {data[1]} channels, "
                f"which num_groups={groups} does not divide"
            )
        for j in (1, 2):
            shape_assign(out_shapes, j, (data[0], groups), f"GroupNorm: output '{OUTPUTS[j]}'")
    return all(shape_is_known(s) for s in [*in_shapes, *out_shapes])


def _layout(attrs: NodeAttrs, shape: tuple[int, ...]) -> tuple[int, int, int]:
    groups, shape = attrs.parsed.num_groups, tuple(shape)  # the CUDA simulator's do not slice
    return shape[0] * groups, math.prod(shape[1:]) // groups, 1


@via_float32
def _forward(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    x, gamma, beta = inputs
    p = attrs.parsed
    modes = [req_code("GroupNorm", r) for r in req]
    norm_forward(ctx, outputs, modes, x, gamma, beta, _layout(attrs, x.shape), p.num_groups, p.eps)


@via_float32
def _backward(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    dy, x, gamma, mean, std = inputs[:5]  # mean, std: the forward's outputs 1 and 2
    dstats = (inputs[5], inputs[6]) if len(inputs) == 7 else None  # their gradients
    modes = [req_code("_backward_GroupNorm", r) for r in req]
    layout = _layout(attrs, x.shape)
    groups = attrs.parsed.num_groups
    norm_backward(ctx, outputs, modes, dy, x, gamma, mean, std, layout, groups, dstats=dstats)


register_norm_op(
    "GroupNorm",
    param=GroupNormParam,
    outputs=OUTPUTS,
    describe=(
        "Group normalization: the channels of each sample are split into num_groups "
        "groups, each normalized by its own mean and standard deviation, then scaled by "
        "gamma and shifted by beta (one value per group).\n\n"
        "    out = (data - mean) / sqrt(var + eps) * gamma + beta\n\n"
        "data has shape (N, C, ...) with C divisible by num_groups; with output_mean_var "
        "the mean and std, shape (N, num_groups), are outputs too."
    ),
    infer_shape=_infer_shape,
    forward=_forward,
    backward=_backward,
    arguments=["Input data", "gamma array", "beta array"],
)
