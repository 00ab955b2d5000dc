"""AdaptiveAvgPooling2D: average pooling of NCHW data onto a fixed output grid (contrib).

`_contrib_AdaptiveAvgPooling2D(data, output_size=())`: output (N, C, OH, OW) with
output_size () -> 1 x 1, (k,) or k -> k x k, (h, w) -> h x w. Output row o averages the
input rows [floor(o * H / OH), ceil((o + 1) * H / OH)), columns likewise; windows may
overlap (and OH may exceed H).

Kernels (kernel.parallel_for): each axis's window bounds, the windows holding each input
position and 1 / window sizes are small tables made on the host per call. Forward: each
output's window mean, summed in float64 (an item is an output row on the CPU, one output
on the GPU). Backward on the GPU: each input gathers dy / window size over the windows
holding it (they overlap: no scatter, no two items write one element); on the CPU one
plane per item, separably through scratch rows. They replace window matrices in NumPy
(y = A_h x A_w^T, dx = A_h^T dy A_w), which the GPU ran by copying to the host and back;
on two cores, float32, forward / forward and backward before -> after: 8x512x7x7 -> 1x1
0.47 / 1.26 -> 0.19 / 0.72 ms, 8x64x56x56 -> 7x7 0.78 / 2.74 -> 0.62 / 1.13, 8x64x28x28 ->
56x56 3.68 / 7.00 -> 2.70 / 4.89.
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
from ..base import InferError
from ..graph.grad import ElemwiseGradUseIn
from ..infer import elemwise_type, shape_assign, shape_str
from ..kernel import uindex
from ..kernel.launch import ADD, NULL, flat, is_gpu, req_code, store
from ..param import Parameter, field
from ..param import Shape as ShapeField
from ..registry import NodeAttrs, register_op
from ._index_kernels import half_as_float32, to_ctx

OP = "_contrib_AdaptiveAvgPooling2D"
BACKWARD = "_backward_contrib_AdaptiveAvgPooling2D"


class AdaptiveAvgPoolParam(Parameter):
    output_size = field(
        ShapeField,
        default=(),
        describe="int (output size) or a tuple of int for output (height, width).",
    )


def output_hw(p: AdaptiveAvgPoolParam) -> tuple[int, int]:
    size = tuple(p.output_size)
    if len(size) > 2 or any(s < 1 for s in size):
        raise InferError(
            f"{OP}: output_size {size} must be (), one positive int or (height, width)"
        )
    if not size:
        return 1, 1
    return (size[0], size[0]) if len(size) == 1 else (size[0], size[1])


def window_bounds(n_in: int, n_out: int) -> tuple[np.ndarray, np.ndarray]:
    """An axis's tables: (starts, ends, first, last) as one int64 array and 1 / size as a
    float64 one. Window o covers [floor(o n_in / n_out), ceil((o + 1) n_in / n_out));
    input i lies in windows first[i]..last[i] (starts and ends only grow with o)."""
    o = np.arange(n_out, dtype=np.int64)
    starts, ends = o * n_in // n_out, -(-(o + 1) * n_in // n_out)
    i = np.arange(n_in, dtype=np.int64)
    first = np.searchsorted(ends, i, side="right")  # the first window ending after i
    last = np.searchsorted(starts, i, side="right") - 1  # the last one starting at or before
    return np.concatenate([starts, ends, first, last]), 1.0 / (ends - starts)


def _pool_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    data = in_shapes[0]
    if data is None:
        return False
    if len(data) != 4:
        raise InferError(f"{OP}: input 'data' has shape {shape_str(data)}; expected NCHW (4-D)")
    oh, ow = output_hw(attrs.parsed)
    if data[2] == 0 or data[3] == 0:  # empty windows: a mean of nothing
        raise InferError(
            f"{OP}: input 'data' has shape {shape_str(data)}; an output of {oh}x{ow} "
            "needs an input plane of at least 1x1"
        )
    return shape_assign(out_shapes, 0, (data[0], data[1], oh, ow), f"{OP}: output")


# Tables (see _tables): `ints` holds the rows' starts, ends (oh each), firsts, lasts (h
# each), then the same for the columns (ow, ow, w, w); `inv` 1 / window size, rows then
# columns. A work item is a run of `chunk` consecutive elements of one row: a whole row on
# the CPU (no divisions per element), one element on the GPU (coalesced).


@kernel.parallel_for
def _pool_forward(item, out, x, ints, inv, h, w, oh, ow, chunk, mode):
    first = item * chunk
    row = first // ow
    plane = row // oh
    o = row - plane * oh
    r0 = ints[o]
    r1 = ints[oh + o]
    cols = 2 * oh + 2 * h
    for k in range(first, first + chunk):
        q = k - row * ow
        c0 = ints[cols + q]
        c1 = ints[cols + ow + q]
        acc = np.float64(0.0)  # not 0.0: the simulator would sum float16 in float16
        for r in range(r0, r1):
            base = (plane * h + r) * w
            for c in range(c0, c1):
                acc += x[uindex(base + c)]
        v = acc * inv[o] * inv[oh + q]
        store(out, uindex(k), v, mode)


@kernel.parallel_for
def _pool_backward(item, dx, dy, ints, inv, h, w, oh, ow, chunk, mode):
    # the GPU's backward: input (y, z) gathers dy / window size over the windows holding
    # it (they overlap: no scatter)
    first = item * chunk
    row = first // w
    plane = row // h
    y = row - plane * h
    cols = 2 * oh + 2 * h
    for k in range(first, first + chunk):
        z = k - row * w
        acc = 0.0
        for o in range(ints[2 * oh + y], ints[2 * oh + h + y] + 1):
            src = (plane * oh + o) * ow
            part = 0.0
            for q in range(ints[cols + 2 * ow + z], ints[cols + 2 * ow + w + z] + 1):
                part += dy[uindex(src + q)] * inv[oh + q]
            acc += part * inv[o]
        store(dx, uindex(k), acc, mode)


@kernel.parallel_for
def _pool_backward_planes(item, dx, dy, ints, inv, h, w, oh, ow, scratch, mode):
    # the CPU's backward, one plane per item and separably (the gather above costs integer
    # work per element): scratch row o = dy row o / window sizes spread over the input
    # columns, then input row y = the sum of the scratch rows of the windows holding y
    cols = 2 * oh + 2 * h
    s0 = item * oh * w
    for o in range(oh):
        srow = s0 + o * w
        for z in range(w):
            scratch[uindex(srow + z)] = 0.0
        src = (item * oh + o) * ow
        for q in range(ow):
            g = dy[uindex(src + q)] * inv[o] * inv[oh + q]
            for z in range(ints[cols + q], ints[cols + ow + q]):
                scratch[uindex(srow + z)] += g
    for y in range(h):
        dst = (item * h + y) * w
        if mode != ADD:
            for z in range(w):
                dx[uindex(dst + z)] = 0.0
        for o in range(ints[2 * oh + y], ints[2 * oh + h + y] + 1):
            srow = s0 + o * w
            for z in range(w):
                dx[uindex(dst + z)] += scratch[uindex(srow + z)]


def _tables(ctx: Any, x_shape: Any, oh: int, ow: int) -> tuple[Any, Any]:
    """The rows' and columns' tables on ctx's device."""
    rows, inv_rows = window_bounds(x_shape[2], oh)
    cols, inv_cols = window_bounds(x_shape[3], ow)
    ints = to_ctx(ctx, np.concatenate([rows, cols]))
    return ints, to_ctx(ctx, np.concatenate([inv_rows, inv_cols]))


def _forward(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    mode = req_code(OP, req[0])
    x, out = inputs[0], outputs[0]
    if mode == NULL or out.size == 0:
        return
    h, w = x.shape[2], x.shape[3]
    oh, ow = out.shape[2], out.shape[3]
    if (oh, ow) == (1, 1) and is_gpu(ctx):  # PSPNet's 1x1 bin: a mean per plane
        _plane_means_gpu(ctx, x, out, mode)
        return
    chunk = 1 if is_gpu(ctx) else ow
    with half_as_float32(ctx, [out], [mode], [x]) as ([o], [xc]):
        args = (flat(o), flat(xc), *_tables(ctx, x.shape, oh, ow), h, w, oh, ow, chunk)
        _pool_forward.launch(ctx, out.size // chunk, *args, mode, work=x.size + out.size)


def _plane_means_gpu(ctx: Any, x: Any, out: Any, mode: int) -> None:
    """out (=|+=) each plane's mean on the reduction kernels: a warp or block per plane
    reading it coalesced, where _pool_forward's thread per output would sum a whole plane
    alone, a plane apart from its neighbours."""
    from nnvmpy.ops._reduce_cuda import reduce_gpu

    planes, size = x.shape[0] * x.shape[1], x.shape[2] * x.shape[3]
    x2 = flat(x).reshape(planes, size)
    reduce_gpu(ctx, out, mode == ADD, x2, (planes, 1), "sum", 1.0 / size, OP)


def _backward(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    mode = req_code(BACKWARD, req[0])
    dy, x, dx = inputs[0], inputs[1], outputs[0]
    if mode == NULL or dx.size == 0:
        return
    h, w = x.shape[2], x.shape[3]
    oh, ow = dy.shape[2], dy.shape[3]
    work = dx.size + dy.size
    with half_as_float32(ctx, [dx], [mode], [dy]) as ([d], [g]):
        args = (flat(d), flat(g), *_tables(ctx, x.shape, oh, ow), h, w, oh, ow)
        if is_gpu(ctx):
            _pool_backward.launch(ctx, dx.size, *args, 1, mode, work=work)
        else:
            planes = x.shape[0] * x.shape[1]
            scratch = np.empty(planes * oh * w, np.float64)
            _pool_backward_planes.launch(ctx, planes, *args, scratch, mode, work=work)


(
    register_op(OP)
    .describe(
        "Applies a 2D adaptive average pooling over a 4D input with the shape of (NCHW). "
        "The pooling kernel and stride sizes are automatically chosen for desired output "
        "sizes.\n\n"
        "- If a single integer is provided for output_size, the output size is "
        "(N x C x output_size x output_size) for any input (NCHW).\n\n"
        "- If a tuple of integers (height, width) are provided for output_size, the output "
        "size is (N x C x height x width) for any input (NCHW).\n"
    )
    .set_attr_parser(AdaptiveAvgPoolParam)
    .set_num_inputs(1)
    .set_num_outputs(1)
    .set_attr(FListInputNames, lambda attrs: ["data"])
    .set_attr(FInferShape, _pool_shape)
    .set_attr(FInferType, elemwise_type(1, 1))
    .set_attr(FCompute_cpu, _forward)
    .set_attr(FCompute_gpu, _forward)
    .set_attr(FGradient, ElemwiseGradUseIn(BACKWARD))
    .add_argument("data", "NDArray-or-Symbol", "Input data")
    .add_arguments(AdaptiveAvgPoolParam.fields())
)
(
    register_op(BACKWARD)
    .describe("Backward of AdaptiveAvgPooling2D: inputs (dy, data), output d data.")
    .set_attr_parser(AdaptiveAvgPoolParam)
    .set_num_inputs(2)
    .set_num_outputs(1)
    .set_attr(TIsBackward, True)
    .set_attr(FCompute_cpu, _backward)
    .set_attr(FCompute_gpu, _backward)
)
