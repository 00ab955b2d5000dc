"""FullyConnected: y = x W^T + b, the dense layer.

    data (N, K) (or (N, d1, ...) flattened to K = d1*..., or (..., K) with flatten=False)
    weight (num_hidden, K), bias (num_hidden,), out (N, num_hidden) (or (..., num_hidden))

    dx = dy W        dW = dy^T x        db = sum over rows of dy

A node marked for bfloat16 (ops/amp_bf16.py) reads its weight as packed bfloat16 bits
and multiplies bfloat16-rounded rows of x with float32 accumulation (ops/nn/_bf16.py).
The three float32 products run through matrix.gemm: NumPy's BLAS writing straight into the
output arrays on the CPU (this op is the hot path of an MLP), the tiled GEMM kernel on
the GPU. The bias is added in place (CPU) or inside the GEMM kernel (GPU).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...attrs import (
    FBFloat16Compute,
    FCompute_cpu,
    FCompute_gpu,
    FFoldScaleShift,
    FGradient,
    FInferShape,
    FInferType,
    FListInputNames,
    TIsBackward,
)
from ...base import InferError, NNVMError
from ...graph.grad import make_grad_node, make_node
from ...graph.node import NodeEntry
from ...infer import elemwise_type, shape_assign, shape_is_known, shape_str
from ...kernel.elementwise import req_mode
from ...param import Parameter, field
from ...registry import NodeAttrs, register_op
from ..amp_bf16 import BF16Weight, accepts_bf16_weight, is_bits
from ..matrix import flat, gemm, is_cpu, shape_of, view
from ..shape import fill_one_dim
from . import _blas
from .inference import FoldTarget


class FullyConnectedParam(Parameter):
    num_hidden = field(int, lower_bound=1, describe="Number of hidden nodes of the output.")
    no_bias = field(bool, default=False, describe="Whether to disable bias parameter.")
    flatten = field(
        bool,
        default=True,
        describe="Whether to collapse all but the first axis of the input data tensor.",
    )


def _input_names(attrs: NodeAttrs) -> list[str]:
    return ["data", "weight"] if attrs.parsed.no_bias else ["data", "weight", "bias"]


def _fc_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    p, op = attrs.parsed, "FullyConnected"
    n_in = 2 if p.no_bias else 3
    if len(in_shapes) != n_in:
        raise InferError(f"{op}: expects {n_in} inputs {_input_names(attrs)} "
                         f"(no_bias={p.no_bias}), got {len(in_shapes)}")  # fmt: skip
    if in_shapes[0] is None:  # as MXNet: nothing is inferred before data's rank is known
        return False
    hidden = p.num_hidden
    shape_assign(in_shapes, 1, (hidden, None), f"{op}: input 'weight' (num_hidden={hidden})")
    if not p.no_bias:  # MXNet also accepts a (num_hidden, 1) bias
        bias = in_shapes[2]
        want = (hidden, 1) if bias is not None and len(bias) == 2 else (hidden,)
        shape_assign(in_shapes, 2, want, f"{op}: input 'bias' (num_hidden={hidden})")
    data = in_shapes[0]
    if data is None:
        return False
    if len(data) == 0 or (not p.flatten and len(data) < 1):
        raise InferError(f"{op}: input 'data' must have at least one axis, got {shape_str(data)}")
    k = in_shapes[1][1]
    if p.flatten:  # (N, d1, ...) -> (N, d1*...): the weight's K can solve one unknown d
        rest = fill_one_dim(op, "input 'data'", data[1:], k)
        shape_assign(in_shapes, 0, (data[0], *rest), f"{op}: input 'data'")
        num_input = math.prod(rest) if shape_is_known(rest) else None
        out = (data[0], hidden)
    else:
        shape_assign(in_shapes, 0, (*data[:-1], k), f"{op}: input 'data'")
        num_input, out = in_shapes[0][-1], (*data[:-1], hidden)
    shape_assign(in_shapes, 1, (hidden, num_input), f"{op}: input 'weight'")
    shape_assign(out_shapes, 0, out, f"{op}: output")
    got = out_shapes[0]  # the output gives back the leading (batch) dims
    data = in_shapes[0]
    lead = got[:1] if p.flatten else got[:-1]
    shape_assign(in_shapes, 0, (*lead, *data[len(lead) :]), f"{op}: input 'data'")
    return all(shape_is_known(s) for s in (*in_shapes, *out_shapes))


def _as_matrix(x: Any, flatten: bool) -> Any:
    """data as the (rows, K) matrix the layer multiplies."""
    shape = shape_of(x)
    if flatten:
        return view(x, (shape[0], math.prod(shape[1:])))
    return view(x, (math.prod(shape[:-1]), shape[-1]))


def _gemm(
    ctx: Any, out: Any, req: Any, a: Any, ta: bool, b: Any, tb: bool, bias: Any = None
) -> None:
    """matrix.gemm, or on the CPU under MKL (_blas.routes_matmul) one cblas call on
    the 2-D views (transposes as strides, req 'add' as beta = 1)."""
    if is_cpu(out) and out.ndim == a.ndim == b.ndim == 2 and _blas.routes_matmul(out.dtype):
        mode = req_mode("FullyConnected", req)
        if mode is None:
            return
        _blas.matmul(a.T if ta else a, b.T if tb else b, out, 1.0 if mode == "add" else 0.0)
        if bias is not None:
            out += bias
        return
    gemm(ctx, out, req, a, ta, b, tb, bias)


def _fc_forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    p = attrs.parsed
    x = _as_matrix(inputs[0], p.flatten)
    bias = None if p.no_bias else flat(inputs[2])
    # y = x W^T + b
    out = view(outputs[0], (shape_of(x)[0], p.num_hidden))
    if is_bits(inputs[1]):
        _fc_forward_bf16(ctx, out, req[0], x, inputs[1], bias)
        return
    _gemm(ctx, out, req[0], x, False, inputs[1], True, bias)


def _fc_forward_bf16(ctx: Any, out: Any, req: Any, x: Any, w_bits: Any, bias: Any) -> None:
    """y = bf16(x) bf16(W)^T + b with float32 accumulation: W packed by _PackBFloat16, the
    rows of x rounded to bfloat16 bits here (ops/amp_bf16.py)."""
    if not is_cpu(out):  # the AmpBFloat16 pass runs for CPU executors only
        raise NNVMError(
            "FullyConnected: input 'weight' is bfloat16 bits; bfloat16 runs on the CPU only"
        )
    mode = req_mode("FullyConnected", req)
    if mode is None:
        return
    from nnvmpy.ops.nn import _bf16

    _bf16.gemm(_bf16.round_to_bits(x), w_bits.T, out, 1.0 if mode == "add" else 0.0)
    if bias is not None:
        out += bias


def _fc_backward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    p = attrs.parsed
    dy, x, w = inputs
    x = _as_matrix(x, p.flatten)
    dy = view(dy, (shape_of(x)[0], p.num_hidden))
    _gemm(ctx, view(outputs[0], shape_of(x)), req[0], dy, False, w, False)  # dx = dy W
    _gemm(ctx, outputs[1], req[1], dy, True, x, False)  # dW = dy^T x
    if not p.no_bias:
        _sum_rows(ctx, flat(outputs[2]), req[2], dy)  # db = sum_n dy[n, :]


_ONES: dict[tuple[int, Any], np.ndarray] = {}


def _ones(n: int, dtype: Any) -> np.ndarray:
    """A read-only vector of n ones, cached (the batch size rarely changes)."""
    ones = _ONES.get((n, dtype))
    if ones is None:
        ones = np.ones(n, dtype)
        ones.flags.writeable = False
        _ONES[(n, dtype)] = ones
    return ones


def _sum_rows(ctx: Any, out: Any, req: Any, x: Any) -> None:
    mode = req_mode("FullyConnected", req)
    if mode is None:
        return
    if is_cpu(out):  # ones(rows) @ x: BLAS gemv, ~20x faster than x.sum(axis=0) at (64, 10)
        ones = _ones(x.shape[0], x.dtype)
        if mode == "add":
            out += np.dot(ones, x)
        else:
            np.dot(ones, x, out=out)
        return
    # a thread per column over few columns would leave the GPU idle (BERT's Dense layers
    # sum 16k rows of 768 columns): the reduction kernels split long sums across blocks
    from nnvmpy.ops import _reduce_cuda

    rows, cols = shape_of(x)
    x2 = flat(x).reshape(rows, cols)
    _reduce_cuda.reduce_gpu(
        ctx, out, mode == "add", x2, (1, cols), "sum", 1.0, "_backward_FullyConnected"
    )


def _bf16_weight(attrs: NodeAttrs) -> BF16Weight:
    """FBFloat16Compute: the weight packed in its own (num_hidden, K) order."""
    return BF16Weight(1, False)


def _fold_target(attrs: NodeAttrs) -> FoldTarget:
    """FFoldScaleShift: output unit j is weight[j] . x + bias[j], on the last output axis."""
    p = attrs.parsed
    return FoldTarget(1, None if p.no_bias else 2, 1 if p.flatten else -1, {"no_bias": "False"}, 2)


def _fc_grad(node: Any, ograds: list[Any]) -> list[Any]:
    # the bias is not needed for any gradient: keep it out of the backward node's inputs
    heads = [ograds[0], node.inputs[0], node.inputs[1]]
    return make_grad_node("_backward_FullyConnected", node, heads)


(
    register_op("FullyConnected")
    .describe(
        "Applies a linear transformation: Y = X W^T + b.\n\n"
        "With flatten=True (the default) data (N, d1, ..., dk) is treated as "
        "(N, d1*...*dk); with flatten=False the transformation applies to the last axis "
        "and keeps the others: (x1, ..., xn, K) -> (x1, ..., xn, num_hidden). "
        "weight has shape (num_hidden, K) and bias (num_hidden,); both are inferred from "
        "data and num_hidden."
    )
    .set_attr_parser(FullyConnectedParam)
    .set_num_inputs(lambda attrs: 2 if attrs.parsed.no_bias else 3)
    .set_num_outputs(1)
    .set_attr(FListInputNames, _input_names)
    .set_attr(FInferShape, _fc_shape)
    .set_attr(FInferType, accepts_bf16_weight("FullyConnected", elemwise_type(-1, 1), _bf16_weight))
    .set_attr(FCompute_cpu, _fc_forward)
    .set_attr(FCompute_gpu, _fc_forward)
    .set_attr(FGradient, _fc_grad)
    .set_attr(FFoldScaleShift, _fold_target)
    .set_attr(FBFloat16Compute, _bf16_weight)
    .add_argument("data", "NDArray-or-Symbol", "Input data.")
    .add_argument("weight", "NDArray-or-Symbol", "Weight matrix.")
    .add_argument("bias", "NDArray-or-Symbol", "Bias parameter.")
    .add_arguments(FullyConnectedParam.fields())
)


def _fc_backward_grad(node: Any, ograds: list[Any]) -> list[Any]:
    """Gradients of (dx, dW[, db]) = B(dy, x, W): x W^T is bilinear (ops/_bilinear.py) and
    the bias term adds gb to d dy through FC's own bias input."""
    dy, x, w = node.inputs
    gx, gw = ograds[0], ograds[1]
    attrs, name, fwd = dict(node.attrs.dict), node.name, node.control_deps[:1]
    plain = {**attrs, "no_bias": "True"}
    with_bias = [gx, w] if node.attrs.parsed.no_bias else [gx, w, ograds[2]]
    left = make_node("FullyConnected", f"{name}_gx_w", with_bias, attrs)
    right = make_node("FullyConnected", f"{name}_x_gw", [x, gw], plain)
    d_dy = make_node("elemwise_add", f"{name}_ddy", [NodeEntry(left, 0), NodeEntry(right, 0)])
    d_x = make_node("_backward_FullyConnected", f"{name}_dx", [dy, x, gw], plain, fwd)
    d_w = make_node("_backward_FullyConnected", f"{name}_dw", [dy, gx, w], plain, fwd)
    return [NodeEntry(d_dy, 0), NodeEntry(d_x, 0), NodeEntry(d_w, 1)]


(  # inputs (dy, data, weight) -> (d data, d weight[, d bias])
    register_op("_backward_FullyConnected")
    .set_attr_parser(FullyConnectedParam)
    .set_num_inputs(3)
    .set_num_outputs(lambda attrs: 2 if attrs.parsed.no_bias else 3)
    .set_attr(TIsBackward, True)
    .set_attr(FCompute_cpu, _fc_backward)
    .set_attr(FCompute_gpu, _fc_backward)
    .set_attr(FGradient, _fc_backward_grad)  # gradients of gradients
)
