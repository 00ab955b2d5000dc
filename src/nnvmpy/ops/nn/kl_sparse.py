"""IdentityAttachKLSparseReg: the identity, whose gradient adds a KL sparseness penalty.

Forward: y = x. Backward, with rho = sparseness_target and the auxiliary state
moving_avg (one entry per channel, axis 1):

    avg        = mean of x over every axis but 1
    moving_avg = momentum * moving_avg + (1 - momentum) * avg        (updated in place)
    dx         = dy + penalty * (-rho / moving_avg + (1 - rho) / (1 - moving_avg))

the gradient of penalty * KL(rho || moving_avg) per activation, as in MXNet (which
updates the average in the backward pass too). MXNet averages 2-D data (N, C) over the
batch; for more dimensions nnvmpy averages over every axis but the channels, which
matches the (C,) shape of moving_avg. The CPU runs a work item per channel; a GPU sums
the channels on the reduction kernels, then updates a thread per channel and writes dx a
thread per element (_kl_sparse_cuda.py).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FInplaceOption,
    FListInputNames,
    FMutateInputs,
    FSetInputVarAttrOnCompose,
    TIsBackward,
)
from ...graph.grad import make_grad_node, make_node
from ...graph.node import NodeEntry
from ...infer import elemwise_type, shape_assign, shape_is_known
from ...kernel import parallel_for
from ...kernel.launch import NULL, is_gpu, req_code, store, uindex
from ...param import Parameter, field
from ...registry import NodeAttrs, register_op
from ..elemwise_unary import _identity
from ._geometry import run_via_float32
from ._layer_util import check_ndim


class IdentityAttachKLSparseRegParam(Parameter):
    sparseness_target = field(
        float, default=0.1, lower_bound=0.0, upper_bound=1.0, describe="The sparseness target"
    )
    penalty = field(
        float, default=0.001, describe="The tradeoff parameter for the sparseness penalty"
    )
    momentum = field(
        float,
        default=0.9,
        lower_bound=0.0,
        upper_bound=1.0,
        describe="The momentum for running average",
    )


def _infer_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    shape_assign(in_shapes, 0, out_shapes[0], "IdentityAttachKLSparseReg: input 'data'")
    shape_assign(out_shapes, 0, in_shapes[0], "IdentityAttachKLSparseReg: output 'output'")
    data = in_shapes[0]
    if data is not None:
        check_ndim("IdentityAttachKLSparseReg", "data", data, 2)
        shape_assign(in_shapes, 1, (data[1],), "IdentityAttachKLSparseReg: input 'moving_avg'")
    return all(shape_is_known(s) for s in [*in_shapes, *out_shapes])


@parallel_for
def _kl_grad_channel(c, dx, dy, x, avg, outer, C, inner, rho, penalty, momentum, mode):
    s = 0.0
    for o in range(outer):
        base = (o * C + c) * inner
        for i in range(inner):
            s += x[uindex(base + i)]
    ma = momentum * avg[c] + (1.0 - momentum) * s / (outer * inner)
    avg[c] = ma
    if mode == NULL:
        return
    reg = penalty * (-rho / ma + (1.0 - rho) / (1.0 - ma))
    for o in range(outer):
        base = (o * C + c) * inner
        for i in range(inner):
            j = uindex(base + i)
            store(dx, j, dy[j] + reg, mode)


def _forward(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    _identity.launch(ctx, outputs[0], req[0], inputs[0])  # may be in place


def _backward(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    """float16 on the CPU goes through float32 copies; the state's copy is written back."""
    if is_gpu(ctx) or all(a.dtype != np.float16 for a in (*inputs, *outputs)):
        _backward_compute(attrs, ctx, inputs, req, outputs)
        return
    state = inputs[2]

    def run(ins: list[Any], reqs: list[Any], outs: list[Any]) -> None:
        _backward_compute(attrs, ctx, ins, reqs, outs)
        np.copyto(state, ins[2], casting="unsafe")

    run_via_float32(run, inputs, req, outputs)


def _backward_compute(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    dy, x, avg = inputs  # avg: the moving_avg state, updated here
    p, mode = attrs.parsed, req_code("_backward_IdentityAttachKLSparseReg", req[0])
    if x.size == 0:
        return
    outer, C, inner = x.shape[0], x.shape[1], math.prod(tuple(x.shape)[2:])
    if is_gpu(ctx):
        from nnvmpy.ops.nn import _kl_sparse_cuda

        _kl_sparse_cuda.backward_gpu(
            ctx, outputs[0], dy, x, avg, (outer, C, inner),
            p.sparseness_target, p.penalty, p.momentum, mode,
        )  # fmt: skip
        return
    flat = [a.reshape(-1) for a in (outputs[0], dy, x, avg)]
    scalars = (outer, C, inner, p.sparseness_target, p.penalty, p.momentum, mode)
    _kl_grad_channel.launch(ctx, C, *flat, *scalars, work=x.size)


def _gradient(node: Any, ograds: list[Any]) -> list[Any]:
    """dx from the backward node (which updates moving_avg); zero for moving_avg."""
    heads = [ograds[0], node.inputs[0], node.inputs[1]]
    dx = make_grad_node("_backward_IdentityAttachKLSparseReg", node, heads)[0]
    zero = make_node("zeros_like", f"{node.name}_moving_avg_zero_grad", [node.inputs[1]])
    return [dx, NodeEntry(zero, 0)]


def _set_init(attrs: NodeAttrs, var: Any, index: int) -> None:
    """An auto-created moving_avg starts at zeros (MXNet's initializer does the same)."""
    if index == 1 and "__init__" not in var.attrs.dict:
        var.attrs.dict["__init__"] = '["zero", {}]'


(
    register_op("IdentityAttachKLSparseReg")
    .describe(
        "Apply a sparse regularization to the output of a sigmoid activation function: "
        "the forward pass is the identity, and the backward pass adds the gradient of a "
        "KL divergence between sparseness_target and the moving average of the "
        "activations (an auxiliary state, updated during backward)."
    )
    .set_attr_parser(IdentityAttachKLSparseRegParam)
    .set_num_inputs(2)
    .set_num_outputs(1)
    .set_attr(FListInputNames, lambda attrs: ["data", "moving_avg"])
    .set_attr(FMutateInputs, lambda attrs: [1])
    .set_attr(FInferShape, _infer_shape)
    .set_attr(FInferType, elemwise_type(2, 1))
    .set_attr(FInplaceOption, lambda attrs: [(0, 0)])
    .set_attr(FSetInputVarAttrOnCompose, _set_init)
    .set_attr(FCompute_cpu, _forward)
    .set_attr(FCompute_gpu, _forward)
    .set_attr(FGradient, _gradient)
    .add_argument("data", "NDArray-or-Symbol", "Input data.")
    .add_arguments(IdentityAttachKLSparseRegParam.fields())
)
(
    register_op("_backward_IdentityAttachKLSparseReg")
    .describe("Backward of IdentityAttachKLSparseReg: inputs (dy, data, moving_avg).")
    .set_attr_parser(IdentityAttachKLSparseRegParam)
    .set_num_inputs(3)
    .set_num_outputs(1)
    .set_attr(TIsBackward, True)
    .set_attr(FMutateInputs, lambda attrs: [2])
    .set_attr(FCompute_cpu, _backward)
    .set_attr(FCompute_gpu, _backward)
)
