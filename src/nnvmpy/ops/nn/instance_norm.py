"""InstanceNorm: normalise each channel of each sample over its spatial positions.

    x: (N, C, d1, ...);  mean, var over d1, ... for each (sample, channel)     ((N, C))
    y = gamma[c] * (x - mean) / sqrt(var + eps) + beta[c]                    (gamma: (C,))

The outputs mean and var are hidden (as in MXNet), kept for the backward. The kernels
are the row kernels of _norm_rows.py, one row per (sample, channel), writing var
instead of std.
"""

from __future__ import annotations

import math
from typing import Any

from ...infer import shape_assign, shape_is_known
from ...kernel.launch import req_code
from ...param import Parameter, field
from ...registry import NodeAttrs
from ._layer_util import check_ndim, via_float32
from ._norm_op import INPUTS, register_norm_op
from ._norm_rows import norm_backward, norm_forward

OUTPUTS = ["output", "mean", "var"]


class InstanceNormParam(Parameter):
    eps = field(float, default=1e-3, describe="An `epsilon` parameter to prevent division by 0.")


def _infer_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    """output = data; gamma, beta = (C,); mean, var = (N, C)."""
    shape_assign(in_shapes, 0, out_shapes[0], "InstanceNorm: input 'data'")
    shape_assign(out_shapes, 0, in_shapes[0], "InstanceNorm: output 'output'")
    data = in_shapes[0]
    channel: tuple[Any, ...] | None = None
    if data is not None:
        check_ndim("InstanceNorm", "data", data, 3)
        channel = (data[1],)
    for i in (1, 2, 1):  # C from data, gamma or beta
        shape_assign(in_shapes, i, channel, f"InstanceNorm: input '{INPUTS[i]}'")
        channel = in_shapes[i]
    if data is not None and channel is not None:
        data = (data[0], channel[0], *data[2:])
        shape_assign(in_shapes, 0, data, "InstanceNorm: input 'data'")
        shape_assign(out_shapes, 0, data, "InstanceNorm: output 'output'")
        for j in (1, 2):
            shape_assign(out_shapes, j, data[:2], f"InstanceNorm: output '{OUTPUTS[j]}'")
    return all(shape_is_known(s) for s in [*in_shapes, *out_shapes])


def _layout(shape: tuple[int, ...]) -> tuple[int, int, int]:
    shape = tuple(shape)  # the CUDA simulator's shapes do not slice
    return shape[0] * shape[1], math.prod(shape[2:]), 1


@via_float32
def _forward(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    x, gamma, beta = inputs
    modes = [req_code("InstanceNorm", r) for r in req]
    layout, eps = _layout(x.shape), attrs.parsed.eps
    norm_forward(ctx, outputs, modes, x, gamma, beta, layout, x.shape[1], eps, stat_var=True)


@via_float32
def _backward(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    dy, x, gamma, mean, var = inputs  # mean, var: the forward's outputs 1 and 2
    modes = [req_code("_backward_InstanceNorm", r) for r in req]
    layout, eps = _layout(x.shape), attrs.parsed.eps
    norm_backward(
        ctx, outputs, modes, dy, x, gamma, mean, var, layout, x.shape[1], eps, stat_var=True
    )


register_norm_op(
    "InstanceNorm",
    param=InstanceNormParam,
    outputs=OUTPUTS,
    describe=(
        "Instance normalization: each channel of each sample is normalized by the mean "
        "and variance of its spatial positions, then scaled by gamma and shifted by beta "
        "(one value per channel).\n\n"
        "    out = (data - mean) / sqrt(var + eps) * gamma + beta\n\n"
        "data has shape (N, C, d1, ...) with at least one spatial dimension."
    ),
    infer_shape=_infer_shape,
    forward=_forward,
    backward=_backward,
    arguments=[
        "An n-dimensional input array (n > 2) of the form [batch, channel, spatial_dim1, "
        "spatial_dim2, ...].",
        "A vector of length 'channel', which multiplies the normalized input.",
        "A vector of length 'channel', which is added to the product of the normalized "
        "input and the weight.",
    ],
)
