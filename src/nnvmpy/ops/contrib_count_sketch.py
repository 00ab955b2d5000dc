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

MXNet 1.9.1 has a GPU kernel only; here both devices run the NumPy scatter on the host
(np.add.at over the buckets, the gradient a gather): a rarely-used contrib op, so the GPU
path stages through the host (_host_staged.host_compute).
"""

from __future__ import annotations

from typing import Any

import numpy as np

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
from ..param import Parameter, field
from ..registry import NodeAttrs, register_op
from ._host_staged import host_compute
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


def _buckets(h: np.ndarray, k: int, what: str) -> np.ndarray:
    flat = h.reshape(-1)
    idx = flat.astype(np.int64)
    bad = (idx < 0) | (idx >= k)
    if bad.any():
        j = int(np.flatnonzero(bad)[0])
        raise NNVMError(f"{what}: h[{j}] = {flat[j]} is out of range for out_dim={k}")
    return idx


def count_sketch_np(p: Any, data: np.ndarray, h: np.ndarray, s: np.ndarray) -> list:
    d = data.shape[-1]
    idx = _buckets(h, p.out_dim, OP)
    rows = data.reshape(-1, d)
    signed = rows * s.reshape(-1).astype(data.dtype)
    out_t = np.zeros((p.out_dim, rows.shape[0]), data.dtype)
    np.add.at(out_t, idx, signed.T)  # bucket by bucket, duplicates accumulate
    return [out_t.T.reshape((*data.shape[:-1], p.out_dim))]


def count_sketch_grad_np(p: Any, dy: np.ndarray, h: np.ndarray, s: np.ndarray) -> list:
    idx = _buckets(h, p.out_dim, BACKWARD)
    dx = dy[..., idx] * s.reshape(-1).astype(dy.dtype)
    return [dx, np.zeros(h.shape, h.dtype), np.zeros(s.shape, s.dtype)]


def _count_sketch_gradient(node: Any, ograds: list[Any]) -> list[Any]:
    return make_grad_node(BACKWARD, node, [ograds[0], node.inputs[1], node.inputs[2]])


_forward = host_compute(OP, count_sketch_np)
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
_backward = host_compute(BACKWARD, count_sketch_grad_np)
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
