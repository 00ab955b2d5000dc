"""quantized_pooling: max or avg Pooling on int8/uint8 codes; the range passes through.

Max pooling of codes is exact. Average pooling divides the window's sum of codes by the
same count the float Pooling uses (padding counted unless count_include_pad=False) and
rounds to the nearest code (ties to even). An empty window (the 'full' convention's last
one, with a stride larger than the kernel) gives 0. Windows, conventions (valid / full /
same) and global_pool come from the float op's geometry (nn.pooling.window).

One body for both devices: an output row per item on the CPU, an output per item on the
GPU, on the 5-D (N, C, D, H, W) view (1-D and 2-D pooling have D = 1).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ... import kernel
from ...attrs import FCompute_cpu, FCompute_gpu, FGradient, FInferShape, FInferType, FListInputNames
from ...base import InferError
from ...graph.grad import make_zero_grad_nodes
from ...infer import type_assign
from ...kernel import uindex
from ...kernel.launch import NULL, is_gpu, req_code, run_rows, store
from ...registry import NodeAttrs, register_op
from ..nn._pool_window import window as window_bounds
from ..nn.pooling import PoolingParam, _volume_args, infer_pool_shape, window
from ._common import all_known, assign_range_shapes, assign_range_types, check_quantized
from ._kernels import clamp_code, code_limits, pass_range

OP = "_contrib_quantized_pooling"
NAMES = ["data", "min_data", "max_data"]


@kernel.parallel_for
def pool_codes(
    item, x, out, depth, height, width, do, ho, wo, chunk,
    is_max, kd, kh, kw, sd, sh, sw, pd, ph, pw, ed, eh, ew, include_pad, lo, hi, mode,
):  # fmt: skip
    """Outputs [item * chunk, +chunk) of one output row (chunk: the row on the CPU, one
    output on the GPU), in float64: the window's largest code (0 for an empty window), or
    its sum over the divisor (at least 1) rounded to the nearest (ties to even)."""
    first = item * chunk
    row = first // wo
    z0 = first - row * wo
    plane = row // ho
    y = row - plane * ho
    t = plane // do
    v = plane - t * do
    ds, de, d0, d1 = window_bounds(v, kd, sd, pd, ed, depth)
    hs, he, h0, h1 = window_bounds(y, kh, sh, ph, eh, height)
    vol = t * depth * height * width
    for z in range(z0, z0 + chunk):
        ws, we, w0, w1 = window_bounds(z, kw, sw, pw, ew, width)
        if is_max:
            best = -math.inf
            for u in range(d0, d1):
                for h in range(h0, h1):
                    start = vol + (u * height + h) * width
                    for w in range(w0, w1):
                        xv = np.float64(x[uindex(start + w)])
                        best = xv if xv > best else best
            val = best if best > -math.inf else 0.0
        else:
            total = 0.0
            for u in range(d0, d1):
                for h in range(h0, h1):
                    start = vol + (u * height + h) * width
                    for w in range(w0, w1):
                        total += np.float64(x[uindex(start + w)])
            if include_pad:
                count = (de - ds) * (he - hs) * (we - ws)
            else:
                count = max(d1 - d0, 0) * max(h1 - h0, 0) * max(w1 - w0, 0)
            val = np.rint(total / max(count, 1))
        store(out, first + z - z0, clamp_code(val, lo, hi, 0), mode)


def _compute(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    p = attrs.parsed
    modes = [req_code(OP, r) for r in req]
    data, lo, hi = inputs
    out = outputs[0]
    if modes[0] != NULL and out.size > 0:
        chunk = 1 if is_gpu(ctx) else tuple(out.shape)[-1]
        include = p.count_include_pad is not False
        code_lo, code_hi, _ = code_limits(data.dtype)
        run_rows(ctx, OP, pool_codes, out.size // chunk, data, out, *_volume_args(data, out),
                 chunk, p.pool_type == "max", *window(p, tuple(data.shape)), include, code_lo,
                 code_hi, modes[0])  # fmt: skip
    run_rows(ctx, OP, pass_range, 1, lo, hi, *outputs[1:], *modes[1:])


def _check_pool_type(attrs: NodeAttrs) -> None:
    if attrs.parsed.pool_type not in ("max", "avg"):
        raise InferError(
            f"{OP}: pool_type must be 'max' or 'avg' for quantized data, got "
            f"{attrs.parsed.pool_type!r}"
        )


def _shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    _check_pool_type(attrs)
    head, out = in_shapes[:1], out_shapes[:1]
    infer_pool_shape(attrs, head, out)
    in_shapes[:1], out_shapes[:1] = head, out
    assign_range_shapes(OP, NAMES, in_shapes, out_shapes, 1, 1)
    return all_known(in_shapes, out_shapes)


def _type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    _check_pool_type(attrs)
    check_quantized(OP, "data", in_types[0])
    assign_range_types(OP, NAMES, in_types, out_types, 1, 1)
    if in_types[0] is None:
        return False
    return type_assign(out_types, 0, in_types[0], f"{OP}: output 0")


op = (
    register_op(OP)
    .describe(
        "Pooling operator for input and output data type of int8 or uint8. The input and "
        "output data comes with min and max thresholds for quantizing the float32 data "
        "into int8; they pass through. Supports pool_type 'max' and 'avg' (rounded to "
        "the nearest code).\n\n"
        ".. Note::\n    This operator only supports forward propagation. DO NOT use it in "
        "training.\n"
    )
    .set_attr_parser(PoolingParam)
    .set_num_inputs(3)
    .set_num_outputs(3)
    .set_attr(FListInputNames, lambda attrs: list(NAMES))
    .set_attr(FInferShape, _shape)
    .set_attr(FInferType, _type)
    .set_attr(FCompute_cpu, _compute)
    .set_attr(FCompute_gpu, _compute)
    .set_attr(FGradient, make_zero_grad_nodes)
    .add_argument("data", "NDArray-or-Symbol", "A ndarray/symbol of type `int8` or `uint8`")
    .add_argument("min_data", "NDArray-or-Symbol", "Minimum value of data.")
    .add_argument("max_data", "NDArray-or-Symbol", "Maximum value of data.")
    .add_arguments(PoolingParam.fields())
)
