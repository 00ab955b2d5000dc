"""_sample_multinomial (alias sample_multinomial): draws from many categorical
distributions at once, optionally with the log-probability of each draw.

    data (..., k): each row along the last axis is a distribution over k outcomes (it must
                   sum to 1; the draw is the first j whose cumulative sum exceeds u)
    sample         data.shape[:-1] + shape   (shape when data is 1-d, (1,) without it)
    prob           log data[row, sample]     (get_prob=True), the dtype of data

With get_prob the op has a gradient, as in MXNet: the log-likelihood trick of
reinforcement learning, d prob[i] / d data[row, sample[i]] = 1 / data[row, sample[i]],
summed over the draws of a row (_backward_sample_multinomial). Without it the gradient
is zero.
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
    FListInputNames,
    FResourceRequest,
    TIsBackward,
)
from ...base import InferError
from ...graph.grad import make_grad_node, make_zero_grad_nodes
from ...graph.node import NodeEntry
from ...infer import elemwise_shape, shape_assign, shape_str, type_assign
from ...kernel import device_function, parallel_for
from ...kernel.launch import NULL, WRITE, is_gpu, req_code, store, uindex
from ...kernel.philox import uniform_pair
from ...param import Parameter, Shape, field
from ...registry import NodeAttrs, register_op
from ._common import check_float, launch, random_resource

_U0 = np.uint64(0)
_DTYPES = {"float16": 2, "float32": 0, "float64": 1, "int32": 4, "uint8": 3}


class SampleMultinomialParam(Parameter):
    shape = field(
        Shape,
        default=(),
        describe="Shape to be sampled from each random distribution.",
    )
    get_prob = field(
        bool,
        default=False,
        describe="Whether to also return the log probability of sampled result. This is "
        "usually used for differentiating through stochastic variables, e.g. in "
        "reinforcement learning.",
    )
    dtype = field(
        str,
        default="int32",
        enum=_DTYPES,
        describe="DType of the output in case this can't be inferred.",
    )


@device_function
def _store_draw(out, mode, prob, prob_mode, data, base, i, pick):
    """out[i] = pick and, when asked, prob[i] = log of its probability (the row at base)."""
    store(out, i, pick, mode)
    if prob_mode != NULL:
        p = float(data[base + pick])
        store(prob, i, math.log(p) if p > 0.0 else -math.inf, prob_mode)


@parallel_for
def _draw_loop(i, out, mode, prob, prob_mode, data, k, m, k0, k1, first):
    """Draw i of row i // m: the first outcome whose cumulative probability exceeds u."""
    base = (i // m) * k
    u, _v = uniform_pair(k0, k1, first + uindex(i), _U0, _U0)
    acc = np.float64(0.0)  # not 0.0: the simulator would sum float16 in float16
    pick = k - 1  # rounding left the row's sum below u: the last outcome
    for j in range(k):
        acc += data[base + j]
        if acc > u:
            pick = j
            break
    _store_draw(out, mode, prob, prob_mode, data, base, i, pick)


@parallel_for
def _draw_rows(r, out, mode, prob, prob_mode, data, k, m, k0, k1, first, cdf):
    """The m draws of row r (the CPU's items): the row's running sums once, into scratch
    `cdf` (in float64, as _draw_loop adds), then per draw a binary search for the first
    sum above u. A row with a negative or NaN entry has sums that may fall: it takes
    _draw_loop's scan, which defines the result."""
    base = r * k
    acc = np.float64(0.0)
    monotone = True
    for j in range(k):
        v = data[base + j]
        monotone = monotone and v >= 0  # False for NaN too
        acc += v
        cdf[base + j] = acc
    for s in range(m):
        i = r * m + s
        u, _v = uniform_pair(k0, k1, first + uindex(i), _U0, _U0)
        pick = k - 1
        if monotone:
            lo = 0
            hi = k  # the first j in [lo, hi) with cdf > u, or k
            while lo < hi:
                mid = (lo + hi) // 2
                if cdf[base + mid] > u:
                    hi = mid
                else:
                    lo = mid + 1
            pick = min(lo, k - 1)
        else:
            for j in range(k):
                if cdf[base + j] > u:
                    pick = j
                    break
        _store_draw(out, mode, prob, prob_mode, data, base, i, pick)


@parallel_for
def _grad_loop(r, grad, mode, ograd, data, sample, k, m):
    """Row r of d data: ograd / data at each outcome the row drew (0 elsewhere)."""
    base = r * k
    if mode == WRITE:
        for j in range(k):
            grad[base + j] = 0.0
    for s in range(m):
        i = r * m + s
        pick = int(sample[i])
        if 0 <= pick < k:
            grad[base + pick] += ograd[i] / data[base + pick]


def _num_outputs(attrs: NodeAttrs) -> int:
    return 2 if attrs.parsed.get_prob else 1


def _shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    data = in_shapes[0]
    extra = tuple(attrs.parsed.shape)
    if any(d < 0 for d in extra):
        raise InferError(
            f"_sample_multinomial: parameter 'shape' {shape_str(extra)} has a negative "
            "dimension; expected sizes >= 0"
        )
    if data is None:
        return False
    if len(data) == 0:
        raise InferError(
            "_sample_multinomial: input 'data' must have at least one axis (the outcomes), "
            "got shape ()"
        )
    if data[-1] == 0:
        raise InferError("_sample_multinomial: input 'data' has no outcomes (last axis is 0)")
    sample = (extra or (1,)) if len(data) == 1 else tuple(data[:-1]) + extra
    for o in range(len(out_shapes)):
        shape_assign(out_shapes, o, sample, f"_sample_multinomial: output {o}")
    return all(d is not None for d in data)


def _type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    type_assign(out_types, 0, np.dtype(attrs.parsed.dtype), "_sample_multinomial: output 0")
    check_float(attrs, in_types[0], "input 'data'")
    if len(out_types) > 1:
        type_assign(out_types, 1, in_types[0], "_sample_multinomial: output 1 (log prob)")
        if out_types[1] is not None:
            type_assign(in_types, 0, out_types[1], "_sample_multinomial: input 'data'")
    return in_types[0] is not None


def _forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    data, out = inputs[0], outputs[0]
    mode = req_code("_sample_multinomial", req[0])
    prob_mode = req_code("_sample_multinomial", req[1]) if len(outputs) > 1 else NULL
    if (mode == NULL and prob_mode == NULL) or out.size == 0:
        return
    k = int(tuple(data.shape)[-1])  # tuple: the simulator's shapes do not index from the end
    m = out.size // (data.size // k)
    prob = outputs[1] if len(outputs) > 1 else data  # never written when prob_mode is NULL
    k0, k1, first = ctx.requested[0].take_counters(out.size)
    written = (0,) if len(outputs) > 1 else ()
    if is_gpu(ctx):
        args: tuple[Any, ...] = (prob, prob_mode, data, k, m, k0, k1, first)
        launch(ctx, _draw_loop, out, mode, *args, written=written)
        return
    cdf = np.empty(data.size, np.float64)
    args = (prob, prob_mode, data, k, m, k0, k1, first, cdf)
    launch(ctx, _draw_rows, out, mode, *args, n=data.size // k, written=written)


def _gradient(node: Any, ograds: list[Any]) -> list[Any]:
    if not node.attrs.parsed.get_prob:
        return make_zero_grad_nodes(node, ograds)
    return make_grad_node(
        "_backward_sample_multinomial", node, [ograds[1], node.inputs[0], NodeEntry(node, 0)]
    )


def _backward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    ograd, data, sample = inputs
    grad = outputs[0]
    mode = req_code("_backward_sample_multinomial", req[0])
    if mode == NULL or grad.size == 0:
        return
    k = int(tuple(data.shape)[-1])  # tuple: the simulator's shapes do not index from the end
    rows = data.size // k
    m = sample.size // rows
    launch(ctx, _grad_loop, grad, mode, ograd, data, sample, k, m, n=rows)


(
    register_op("_sample_multinomial")
    .describe(
        "Concurrent sampling from multiple multinomial distributions.\n\n"
        "data is an n-dimensional array whose last axis has length k: the probabilities "
        "of the k outcomes of each distribution (each row must sum to 1). One draw per "
        "distribution, or `shape` draws; with get_prob=True a second output holds the "
        "log likelihood of each draw."
    )
    .set_attr_parser(SampleMultinomialParam)
    .set_num_inputs(1)
    .set_num_outputs(_num_outputs)
    .set_attr(FListInputNames, lambda attrs: ["data"])
    .set_attr(FInferShape, _shape)
    .set_attr(FInferType, _type)
    .set_attr(FResourceRequest, random_resource)
    .set_attr(FCompute_cpu, _forward)
    .set_attr(FCompute_gpu, _forward)
    .set_attr(FGradient, _gradient)
    .add_argument(
        "data",
        "NDArray-or-Symbol",
        "Distribution probabilities. Must sum to one on the last axis.",
    )
    .add_arguments(SampleMultinomialParam.fields())
)


register_op("_sample_multinomial").add_alias("sample_multinomial")


def _backward_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    return bool(elemwise_shape(1, 1)(attrs, [in_shapes[1]], out_shapes))


def _backward_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    return type_assign(out_types, 0, in_types[1], "_backward_sample_multinomial: output")


(
    register_op("_backward_sample_multinomial")
    .describe("Backward of _sample_multinomial with get_prob: inputs (d prob, data, sample).")
    .set_num_inputs(3)
    .set_num_outputs(1)
    .set_attr(TIsBackward, True)
    .set_attr(FInferShape, _backward_shape)
    .set_attr(FInferType, _backward_type)
    .set_attr(FCompute_cpu, _backward)
    .set_attr(FCompute_gpu, _backward)
)
