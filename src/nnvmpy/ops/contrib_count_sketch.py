"""count_sketch: project rows of d features onto out_dim buckets with random signs (contrib).

`_contrib_count_sketch(data (..., d), h (1, d), s (1, d), out_dim, processing_batch_size)`
-> (..., out_dim): for every row x of data, out[h[j]] += s[j] * x[j] over j. h holds
bucket indices in [0, out_dim) (any dtype; floats truncate), s the signs (+1 or -1, any
values work: they multiply). The leading axes of data are rows (MXNet accepts 2-D and 4-D
data; any rank works here); h and s may also be given as (d,) vectors.

Gradient: data gets dx[..., j] = s[j] * dy[..., h[j]]; h and s get zeros (MXNet leaves
them unwritten). `processing_batch_size` (rows per GPU launch in MXNet) is accepted and
does not change the result. An index outside [0, out_dim) is an error (MXNet's GPU kernel
writes out of bounds).

MXNet 1.9.1 has a GPU kernel only; here kernels for both devices (kernel.parallel_for):
the forward gathers, one output element per item, the features of its bucket (listed
bucket by bucket on the host from h, which is checked there), so no two items write one
element and the sums run in feature order; the gradient gathers dy per element.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import kernel
from ..attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FListInputNames,
    TIsBackward,
)
from ..base import InferError, NNVMError
from ..graph.grad import make_grad_node
from ..infer import shape_assign, shape_is_known, shape_str
from ..kernel import uindex
from ..kernel.launch import NULL, WRITE, flat, is_gpu, req_code, store
from ..param import Parameter, field
from ..registry import NodeAttrs, register_op
from ._host_staged import to_host
from ._index_kernels import half_as_float32, to_ctx, zero
from .contrib_bbox import same_float_type

OP = "_contrib_count_sketch"
BACKWARD = "_backward_contrib_count_sketch"
INPUTS = ["data", "h", "s"]


class CountSketchParam(Parameter):
    out_dim = field(int, lower_bound=1, describe="The output dimension.")
    processing_batch_size = field(
        int, default=32, lower_bound=1, describe="How many sketch vectors to process at one time."
    )


def _count_sketch_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    k = attrs.parsed.out_dim
    data, out = in_shapes[0], out_shapes[0]
    for shape, what in ((data, "input 'data'"), (out, "output")):
        if shape is not None and len(shape) == 0:
            raise InferError(f"{OP}: {what} must have at least one dimension")
    if data is not None:
        shape_assign(out_shapes, 0, (*data[:-1], k), f"{OP}: output")
    out = out_shapes[0]
    if out is not None:
        shape_assign(in_shapes, 0, (*out[:-1], in_shapes[0][-1] if in_shapes[0] else None),
                     f"{OP}: input 'data'")  # fmt: skip
    d = in_shapes[0][-1] if in_shapes[0] is not None else None
    for i in (1, 2):
        vec = in_shapes[i]
        if vec is None:
            if d is not None:
                in_shapes[i] = (1, d)
            continue
        ok = len(vec) in (1, 2) and (len(vec) == 1 or vec[0] in (1, None))
        if not ok or (d is not None and vec[-1] is not None and vec[-1] != d):
            raise InferError(
                f"{OP}: input '{INPUTS[i]}' has shape {shape_str(vec)}; expected (1, {d or 'd'}) "
                f"(one entry per feature of 'data' {shape_str(in_shapes[0])})"
            )
    return all(shape_is_known(s) for s in [*in_shapes, *out_shapes])


def _buckets(ctx: Any, h: Any, k: int, what: str) -> np.ndarray:
    """h's bucket indices (int64, on the host: a GPU's h is copied there), checked."""
    flat = (to_host(ctx, h) if is_gpu(ctx) else h).reshape(-1)
    idx = flat.astype(np.int64)
    bad = (idx < 0) | (idx >= k)
    if bad.any():
        j = int(np.flatnonzero(bad)[0])
        raise NNVMError(f"{what}: h[{j}] = {flat[j]} is out of range for out_dim={k}")
    return idx


@kernel.parallel_for
def _sketch(item, x, s, out, order, starts, d, k, mode):
    """out[row, b] for item = row k + b: the signed sum of the row's features in bucket b
    (order lists the features bucket by bucket, each bucket's in increasing order, from
    starts[b]), summed in that order in float64."""
    b = item % k
    base = (item // k) * d
    acc = np.float64(0.0)  # not 0.0: the simulator would sum float16 in float16
    for t in range(starts[b], starts[b + 1]):
        j = order[t]
        acc += s[j] * x[uindex(base + j)]
    store(out, item, acc, mode)


@kernel.parallel_for
def _sketch_grad(item, dy, s, buckets, dx, d, k, mode):
    """dx[row, j] = s[j] dy[row, h[j]] for item = row d + j."""
    j = item % d
    store(dx, item, s[j] * dy[uindex((item // d) * k + buckets[j])], mode)


def _forward(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    mode = req_code(OP, req[0])
    data, h, s = inputs
    out, k = outputs[0], attrs.parsed.out_dim
    idx = _buckets(ctx, h, k, OP)
    if mode == NULL or out.size == 0:
        return
    order = np.argsort(idx, kind="stable")
    starts = np.concatenate([[0], np.cumsum(np.bincount(idx, minlength=k))])
    d = tuple(data.shape)[-1]  # the simulator's device shapes refuse [-1]
    with half_as_float32(ctx, [out], [mode], [data, s]) as ([o], [x, signs]):
        _sketch.launch(ctx, out.size, flat(x), flat(signs), flat(o), to_ctx(ctx, order),
                       to_ctx(ctx, starts), d, k, mode, work=data.size)  # fmt: skip


def _backward(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    """(dy, h, s) -> (d data, d h = 0, d s = 0)."""
    modes = [req_code(BACKWARD, r) for r in req]
    dy, h, s = inputs
    idx = _buckets(ctx, h, attrs.parsed.out_dim, BACKWARD)
    for grad, mode in zip(outputs[1:], modes[1:]):
        if mode == WRITE:
            zero(ctx, grad)
    dx = outputs[0]
    if modes[0] == NULL or dx.size == 0:
        return
    with half_as_float32(ctx, [dx], modes[:1], [dy, s]) as ([g], [d_out, signs]):
        _sketch_grad.launch(ctx, dx.size, flat(d_out), flat(signs), to_ctx(ctx, idx), flat(g),
                            tuple(dx.shape)[-1], tuple(dy.shape)[-1], modes[0])  # fmt: skip


def _count_sketch_gradient(node: Any, ograds: list[Any]) -> list[Any]:
    return make_grad_node(BACKWARD, node, [ograds[0], node.inputs[1], node.inputs[2]])


(
    register_op(OP)
    .describe(
        "Projects each row of d features onto out_dim buckets with random signs (a count "
        "sketch): out[..., h[j]] += s[j] * data[..., j] for every feature j, where h "
        "(1, d) holds bucket indices in [0, out_dim) and s (1, d) the signs.\n\n"
        "With data [[1, 2, 3]], h [[2, 0, 2]], s [[1, -1, -1]] and out_dim 3 the output "
        "is [[-2, 0, -2]].\n\n"
        "MXNet runs this on the GPU only; nnvmpy on both devices."
    )
    .set_attr_parser(CountSketchParam)
    .set_num_inputs(3)
    .set_num_outputs(1)
    .set_attr(FListInputNames, lambda attrs: list(INPUTS))
    .set_attr(FInferShape, _count_sketch_shape)
    .set_attr(FInferType, same_float_type(OP, INPUTS))
    .set_attr(FCompute_cpu, _forward)
    .set_attr(FCompute_gpu, _forward)
    .set_attr(FGradient, _count_sketch_gradient)
    .add_argument("data", "NDArray-or-Symbol", "Input data to the CountSketchOp.")
    .add_argument("h", "NDArray-or-Symbol", "The index vector")
    .add_argument("s", "NDArray-or-Symbol", "The sign vector")
    .add_arguments(CountSketchParam.fields())
)
(
    register_op(BACKWARD)
    .describe("Backward of count_sketch: inputs (dy, h, s), outputs (d_data, d_h, d_s).")
    .set_attr_parser(CountSketchParam)
    .set_num_inputs(3)
    .set_num_outputs(3)
    .set_attr(TIsBackward, True)
    .set_attr(FCompute_cpu, _backward)
    .set_attr(FCompute_gpu, _backward)
)
