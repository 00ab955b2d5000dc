"""Loss heads made from any expression: MakeLoss (legacy) and make_loss.

Both output their input unchanged and start backpropagation themselves, ignoring the
head gradient: the symbol they wrap is treated as the loss.

    MakeLoss    d data = grad_scale / norm: norm is 1 ('null'), data.shape[0] ('batch'),
                or the number of elements of data > valid_thresh, at least 1 ('valid')
    make_loss   d data = 1 (no parameters: MXNet's unary op, gradient ones_like(data))

MakeLoss counts the valid elements on the device (per-chunk counts, then their sum), so
its backward does not wait for the host.
"""

from __future__ import annotations

from typing import Any

from ...attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FInplaceOption,
    FResourceRequest,
    TIsBackward,
)
from ...graph.grad import make_grad_node, make_node
from ...graph.node import NodeEntry
from ...infer import elemwise_shape, elemwise_type
from ...kernel import parallel_for
from ...kernel.launch import NULL, req_code, run_rows, store
from ...param import Parameter, field
from ...registry import NodeAttrs, register_op
from ...resource import ResourceRequest
from ..elemwise_unary import _identity
from ..init import _fill
from ._layer_util import via_float32

_CHUNK = 4096  # elements counted per work item for normalization='valid'


class MakeLossParam(Parameter):
    grad_scale = field(
        float, default=1.0, describe="Gradient scale as a supplement to unary and binary operators"
    )
    valid_thresh = field(
        float,
        default=0.0,
        describe="clip each element in the array to 0 when it is less than ``valid_thresh``. "
        "This is used when ``normalization`` is set to ``'valid'``.",
    )
    normalization = field(
        str,
        default="null",
        enum={"null": 0, "batch": 1, "valid": 2},
        describe="If this is set to null, the output gradient will not be normalized. If this "
        "is set to batch, the output gradient will be divided by the batch size. If this is "
        "set to valid, the output gradient will be divided by the number of valid input "
        "elements.",
    )


@parallel_for
def _count_chunk(c, counts, x, n, chunk, thresh):
    """counts[c] = how many elements of chunk c of x exceed thresh."""
    total = 0.0
    for i in range(c * chunk, min(n, (c + 1) * chunk)):
        if x[i] > thresh:
            total += 1.0
    counts[c] = total


@parallel_for
def _sum_counts(i, counts, chunks):
    """counts[0] = the sum of all chunk counts, at least 1 (one work item)."""
    total = 0.0
    for c in range(chunks):
        total += counts[c]
    counts[0] = max(total, 1.0)


@parallel_for
def _scale_by_count(i, dx, counts, scale, mode):
    store(dx, i, scale / counts[0], mode)


def _forward(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    _identity.launch(ctx, outputs[0], req[0], inputs[0])


@via_float32
def _backward(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    p, dx = attrs.parsed, outputs[0]  # inputs: (data) for 'valid', else none
    mode = req_code("_backward_MakeLoss", req[0])
    if mode == NULL or dx.size == 0:
        return
    if p.normalization != "valid":
        norm = dx.shape[0] if p.normalization == "batch" and len(dx.shape) else 1
        _fill.launch(ctx, dx, req[0], p.grad_scale / max(norm, 1))
        return
    x, n = inputs[0].reshape(-1), dx.size
    chunks = -(-n // _CHUNK)
    counts = ctx.requested[0].get_space((chunks,), "float64")
    _count_chunk.launch(ctx, chunks, counts, x, n, _CHUNK, p.valid_thresh, work=n)
    _sum_counts.launch(ctx, 1, counts, chunks, work=chunks)
    run_rows(ctx, "_backward_MakeLoss", _scale_by_count, n, dx, counts, p.grad_scale, mode)


def _gradient(node: Any, ograds: list[Any]) -> list[Any]:
    """A constant gradient (the head gradient is not read); 'valid' counts from data."""
    heads = [node.inputs[0]] if node.attrs.parsed.normalization == "valid" else []
    return make_grad_node("_backward_MakeLoss", node, heads)


def _temp_if_valid(attrs: NodeAttrs) -> list[Any]:
    return [ResourceRequest.kTempSpace] if attrs.parsed.normalization == "valid" else []


(
    register_op("MakeLoss")
    .describe(
        "Make your own loss function in network construction: the output is data, and the "
        "backward pass gives data grad_scale / norm (see `normalization`) without a head "
        "gradient, so the wrapped expression is trained as the loss."
    )
    .set_attr_parser(MakeLossParam)
    .set_num_inputs(1)
    .set_num_outputs(1)
    .set_attr(FInferShape, elemwise_shape(1, 1))
    .set_attr(FInferType, elemwise_type(1, 1))
    .set_attr(FInplaceOption, lambda attrs: [(0, 0)])
    .set_attr(FCompute_cpu, _forward)
    .set_attr(FCompute_gpu, _forward)
    .set_attr(FGradient, _gradient)
    .add_argument("data", "NDArray-or-Symbol", "Input array.")
    .add_arguments(MakeLossParam.fields())
)
(
    register_op("_backward_MakeLoss")
    .describe("Backward of MakeLoss: inputs (data) with normalization='valid', else none.")
    .set_attr_parser(MakeLossParam)
    .set_num_inputs(lambda attrs: 1 if attrs.parsed.normalization == "valid" else 0)
    .set_num_outputs(1)
    .set_attr(TIsBackward, True)
    .set_attr(FResourceRequest, _temp_if_valid)
    .set_attr(FCompute_cpu, _backward)
    .set_attr(FCompute_gpu, _backward)
)


def _make_loss_gradient(node: Any, ograds: list[Any]) -> list[Any]:
    """ones_like(data): the head gradient is not read."""
    ones = make_node("ones_like", f"{node.name}_backward", [node.inputs[0]], None, [node])
    return [NodeEntry(ones, 0)]


(
    register_op("make_loss")
    .describe(
        "Make your own loss function in network construction: the output is data, and its "
        "gradient is 1 for every element whatever the head gradient. Use MakeLoss for a "
        "scaled or normalized gradient."
    )
    .set_num_inputs(1)
    .set_num_outputs(1)
    .set_attr(FInferShape, elemwise_shape(1, 1))
    .set_attr(FInferType, elemwise_type(1, 1))
    .set_attr(FInplaceOption, lambda attrs: [(0, 0)])
    .set_attr(FCompute_cpu, _forward)
    .set_attr(FCompute_gpu, _forward)
    .set_attr(FGradient, _make_loss_gradient)
    .add_argument("data", "NDArray-or-Symbol", "The input array.")
)
