"""LayerNorm: normalise along one axis, then scale and shift by gamma and beta there.

    mean = mean(x, axis),  std = sqrt(var(x, axis) + eps)    (keepdims; var biased)
    y    = gamma * (x - mean) / std + beta                   (gamma, beta: (x.shape[axis],))

Outputs (output, mean, std), the last two visible only with output_mean_var, as in MXNet;
the backward reads data, gamma and the saved mean and std. The kernels (one work item
per row along `axis`) are shared with GroupNorm and InstanceNorm: see _norm_rows.py.
"""

from __future__ import annotations

from typing import Any

from ...infer import shape_assign, shape_is_known
from ...kernel.launch import normalize_axis, req_code, split_axis
from ...param import Parameter, field
from ...registry import NodeAttrs
from ._layer_util import via_float32
from ._norm_op import INPUTS, register_norm_op
from ._norm_rows import norm_backward, norm_forward

OUTPUTS = ["output", "mean", "std"]


class LayerNormParam(Parameter):
    axis = field(
        int,
        default=-1,
        describe="The axis to perform layer normalization. Usually, this should be be axis "
        "of the channel dimension. Negative values means indexing from right to left.",
    )
    eps = field(float, default=1e-5, describe="An `epsilon` parameter to prevent division by 0.")
    output_mean_var = field(
        bool, default=False, describe="Output the mean and std calculated along the given axis."
    )


def _infer_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    """output = data; gamma, beta = (data[axis],); mean, std = data with axis -> 1."""
    shape_assign(in_shapes, 0, out_shapes[0], "LayerNorm: input 'data'")
    shape_assign(out_shapes, 0, in_shapes[0], "LayerNorm: output 'output'")
    data = in_shapes[0]
    if data is None:
        return False
    axis = normalize_axis("LayerNorm", attrs.parsed.axis, data)
    channel: tuple[Any, ...] = (data[axis],)
    for i in (1, 2):  # the axis length from data, gamma or beta
        shape_assign(in_shapes, i, channel, f"LayerNorm: input '{INPUTS[i]}'")
        channel = in_shapes[i]
    for i in (1, 2):
        shape_assign(in_shapes, i, channel, f"LayerNorm: input '{INPUTS[i]}'")
    data = tuple(channel[0] if k == axis else d for k, d in enumerate(data))
    shape_assign(in_shapes, 0, data, "LayerNorm: input 'data'")
    shape_assign(out_shapes, 0, data, "LayerNorm: output 'output'")
    stats = tuple(1 if k == axis else d for k, d in enumerate(data))
    for j in (1, 2):
        shape_assign(out_shapes, j, stats, f"LayerNorm: output '{OUTPUTS[j]}'")
    return all(shape_is_known(s) for s in [*in_shapes, *out_shapes])


def _layout(attrs: NodeAttrs, shape: tuple[int, ...]) -> tuple[int, int, int]:
    outer, n, inner = split_axis(shape, normalize_axis("LayerNorm", attrs.parsed.axis, shape))
    return outer * inner, n, inner


@via_float32
def _forward(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    x, gamma, beta = inputs
    modes = [req_code("LayerNorm", r) for r in req]
    norm_forward(ctx, outputs, modes, x, gamma, beta, _layout(attrs, x.shape), 0, attrs.parsed.eps)


@via_float32
def _backward(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    dy, x, gamma, mean, std = inputs[:5]  # mean, std: the forward's outputs 1 and 2
    dstats = (inputs[5], inputs[6]) if len(inputs) == 7 else None  # their gradients
    modes = [req_code("_backward_LayerNorm", r) for r in req]
    layout = _layout(attrs, x.shape)
    norm_backward(ctx, outputs, modes, dy, x, gamma, mean, std, layout, 0, dstats=dstats)


register_norm_op(
    "LayerNorm",
    param=LayerNormParam,
    outputs=OUTPUTS,
    describe=(
        "Layer normalization: normalizes the input along `axis` by its mean and standard "
        "deviation there, then scales by gamma and shifts by beta.\n\n"
        "    out = (data - mean(data, axis)) / sqrt(var(data, axis) + eps) * gamma + beta\n\n"
        "With output_mean_var the mean and std (axis kept, of size 1) are outputs too."
    ),
    infer_shape=_infer_shape,
    forward=_forward,
    backward=_backward,
    arguments=["Input data to layer normalization", "gamma array", "beta array"],
)
