"""_histogram: counts of the elements of data in bins, as numpy.histogram.

Two forms, as in MXNet: `bin_cnt` equal-width bins over `range` (the edges are
`linspace(lo, hi, bin_cnt + 1)`, a zero-width range widened by 0.5 each side), or the
edges given as a second input `bins`. Element x falls in bin i when
edges[i] <= x < edges[i + 1], the last bin also holding x == edges[-1]; elements outside
the edges (and NaN) are not counted. Outputs: the counts (int64) and the edges (in data's
dtype). The counts are piecewise constant in data, so there is no gradient to speak of:
gradients through the op are zero (MakeZeroGradNodes), as for the comparison ops.

Counting without races: on the CPU each work item counts a chunk of elements into its own
row of a scratch table and a second pass sums the rows per bin; on the GPU the items add
into one row with atomics. Equal-width bins guess the bin arithmetically and then correct
the guess against the stored edges, so the result agrees with NumPy's edge comparisons.
"""

from __future__ import annotations

import math
from typing import Any, Self

import numpy as np

from ..attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FListInputNames,
    FResourceRequest,
)
from ..base import InferError, ParamError
from ..graph.grad import make_zero_grad_nodes
from ..infer import shape_assign, shape_is_known, shape_str, type_assign
from ..kernel import device_function, parallel_for
from ..kernel.launch import ADD, NULL, WRITE, check_cpu_dtypes, flat, is_gpu, req_code
from ..param import FloatTuple, Parameter, field
from ..registry import NodeAttrs, register_op
from ..resource import ResourceRequest
from ._index_kernels import atomic_add

OP = "_histogram"
_CPU_CHUNK = 1 << 14  # elements per CPU work item
_GPU_CHUNK = 16  # elements per GPU work item (they add into shared counts atomically)
_TABLE_CAP = 1 << 22  # at most this many partial counts on the CPU (rows x bins)


class HistogramParam(Parameter):
    bin_cnt = field(int, default=None, describe="Number of bins for uniform case")
    range = field(
        FloatTuple,
        default=None,
        describe="The lower and upper range of the bins. if not provided, range is simply "
        "(a.min(), a.max()). values outside the range are ignored. the first element of the "
        "range must be less than or equal to the second. range affects the automatic bin "
        "computation as well. while bin width is computed to be optimal based on the actual "
        "data within range, the bin count will fill the entire range including portions "
        "containing no data.",
    )

    @classmethod
    def parse(cls, kwargs: Any, op_name: str | None = None, *, allow_unknown: bool = False) -> Self:
        param = super().parse(kwargs, op_name, allow_unknown=allow_unknown)
        param.check(op_name or OP)
        return param

    def check(self, name: str) -> None:
        """ParamError naming the op and argument for a bin count or range NumPy refuses."""
        if (self.bin_cnt is None) != (self.range is None):
            raise ParamError(
                f"{name}: 'bin_cnt' and 'range' must both be given (equal-width bins) or "
                f"neither (edges as input 'bins'), got bin_cnt={self.bin_cnt}, "
                f"range={self.range}"
            )
        if self.bin_cnt is None or self.range is None:
            return
        if self.bin_cnt < 1:
            raise ParamError(f"{name}: parameter 'bin_cnt' must be >= 1, got {self.bin_cnt}")
        r = self.range
        if len(r) != 2:
            raise ParamError(f"{name}: parameter 'range' must be (lower, upper), got {r}")
        if not (math.isfinite(r[0]) and math.isfinite(r[1])):
            raise ParamError(f"{name}: parameter 'range' must be finite, got {r}")
        if r[0] > r[1]:
            raise ParamError(
                f"{name}: parameter 'range' must have lower <= upper, got ({r[0]}, {r[1]})"
            )


def equal_width_edges(param: HistogramParam) -> tuple[float, float]:
    """(lo, hi) of the equal-width edges: the range, widened by 0.5 when it is empty."""
    assert param.range is not None
    lo, hi = float(param.range[0]), float(param.range[1])
    return (lo - 0.5, hi + 0.5) if lo == hi else (lo, hi)


def _input_names(attrs: NodeAttrs) -> list[str]:
    return ["data"] if attrs.parsed.bin_cnt is not None else ["data", "bins"]


def _infer_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    cnt = attrs.parsed.bin_cnt
    if cnt is not None:
        shape_assign(out_shapes, 0, (cnt,), f"{OP}: output 'histogram'")
        shape_assign(out_shapes, 1, (cnt + 1,), f"{OP}: output 'bin_edges'")
    else:
        bins = in_shapes[1]
        if bins is None and shape_is_known(out_shapes[1]):
            bins = out_shapes[1]
        if bins is not None:
            if len(bins) != 1 or (bins[0] is not None and bins[0] < 2):
                raise InferError(
                    f"{OP}: input 'bins' must be a 1-d array of at least 2 edges, "
                    f"got shape {shape_str(bins)}"
                )
            shape_assign(in_shapes, 1, bins, f"{OP}: input 'bins'")
            shape_assign(out_shapes, 1, bins, f"{OP}: output 'bin_edges'")
            if bins[0] is not None:
                shape_assign(out_shapes, 0, (bins[0] - 1,), f"{OP}: output 'histogram'")
    return all(shape_is_known(s) for s in [*in_shapes, *out_shapes])


def _infer_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    type_assign(out_types, 0, np.int64, f"{OP}: output 'histogram'")
    if in_types[0] is None and out_types[1] is not None:
        type_assign(in_types, 0, out_types[1], f"{OP}: input 'data'")
    type_assign(out_types, 1, in_types[0], f"{OP}: output 'bin_edges'")
    if len(in_types) > 1 and in_types[1] is None:  # edges are read as float64: any dtype does
        type_assign(in_types, 1, in_types[0], f"{OP}: input 'bins'")
    return all(t is not None for t in [*in_types, *out_types])


# --- kernels ---------------------------------------------------------------------------------


@device_function
def _put(out, j, mode, v):
    if mode == ADD:
        out[j] += v
    elif mode == WRITE:
        out[j] = v


@device_function
def _bin_of(v, edges, nb, uniform, lo, hi):
    """The bin of v (a float64) among the nb + 1 sorted edges, or -1 outside them / NaN."""
    if not (v >= edges[0] and v <= edges[nb]):
        return -1
    if uniform:  # a guess within a bin or two, corrected against the stored edges
        b = int((v - lo) * nb / (hi - lo)) if hi > lo else 0
        b = min(max(b, 0), nb - 1)
        while b > 0 and v < edges[b]:
            b -= 1
        while b < nb - 1 and v >= edges[b + 1]:
            b += 1
        return b
    low = 0  # largest b with edges[b] <= v, in [0, nb - 1]
    high = nb - 1
    while low < high:
        mid = (low + high + 1) // 2
        if edges[mid] <= v:
            low = mid
        else:
            high = mid - 1
    return low


@parallel_for
def _fill_edges(k, edges, nb, lo, step, hi):
    # numpy.linspace(lo, hi, nb + 1): lo + k * step, the last edge exactly hi
    if k == nb:
        edges[k] = hi
    else:
        edges[k] = k * step + lo


@parallel_for
def _zero(i, a):
    a[i] = 0


@parallel_for
def _count_chunk(c, table, x, n, per, edges, nb, uniform, lo, hi, shared):
    """Count chunk c of x into table row c (row 0 for every chunk when shared: atomics)."""
    row = 0 if shared else c * nb
    for i in range(c * per, min(n, (c + 1) * per)):
        b = _bin_of(x[i] * 1.0, edges, nb, uniform, lo, hi)
        if b >= 0:
            atomic_add(table, row + b, 1)


@parallel_for
def _sum_rows(b, counts, table, rows, nb, mode):
    total = 0
    for r in range(rows):
        total += table[r * nb + b]
    _put(counts, b, mode, total)


@parallel_for
def _copy(k, out, src, mode):
    _put(out, k, mode, src[k])


def _compute(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    p = attrs.parsed
    counts, edges_out = outputs
    mode_counts = req_code(OP, req[0])
    mode_edges = req_code(OP, req[1])
    gpu = is_gpu(ctx)
    if not gpu:
        check_cpu_dtypes(OP, [*inputs, *outputs])
    x = flat(inputs[0])
    n, nb = x.size, counts.size
    if nb == 0 or (mode_counts == NULL and mode_edges == NULL):
        return
    if gpu:
        rows, per = 1, _GPU_CHUNK
        chunks = -(-n // per)
    else:
        chunks = max(1, min(-(-n // _CPU_CHUNK), _TABLE_CAP // nb))
        rows, per = chunks, -(-n // chunks)
    table_bytes = rows * nb * 8
    uniform = p.bin_cnt is not None
    edge_bytes = (nb + 1) * x.dtype.itemsize if uniform else 0
    space = ctx.requested[0].get_space((table_bytes + edge_bytes,), np.uint8)
    lo, hi = (0.0, 0.0)
    if uniform:
        lo, hi = equal_width_edges(p)
        edges = space[table_bytes:].view(x.dtype)
        _fill_edges.launch(ctx, nb + 1, edges, nb, lo, (hi - lo) / nb, hi)
    else:
        edges = flat(inputs[1])
    if mode_edges != NULL:
        _copy.launch(ctx, nb + 1, flat(edges_out), edges, mode_edges)
    if mode_counts == NULL:
        return
    table = space[:table_bytes].view(np.int64)
    _zero.launch(ctx, rows * nb, table)
    if n:
        _count_chunk.launch(ctx, chunks, table, x, n, per, edges, nb, uniform, lo, hi, gpu, work=n)
    _sum_rows.launch(ctx, nb, flat(counts), table, rows, nb, mode_counts, work=rows * nb)


(
    register_op(OP)
    .describe(
        "Counts of the elements of data in bins, as numpy.histogram: `bin_cnt` equal-width "
        "bins over `range`, or the bin edges as input `bins`. Returns the counts (int64) "
        "and the bin edges; the last bin includes its right edge, elements outside the "
        "edges are ignored."
    )
    .set_attr_parser(HistogramParam)
    .set_num_inputs(lambda attrs: 1 if attrs.parsed.bin_cnt is not None else 2)
    .set_num_outputs(2)
    .set_attr(FListInputNames, _input_names)
    .set_attr(FResourceRequest, lambda attrs: [ResourceRequest.kTempSpace])
    .set_attr(FInferShape, _infer_shape)
    .set_attr(FInferType, _infer_type)
    .set_attr(FCompute_cpu, _compute)
    .set_attr(FCompute_gpu, _compute)
    .set_attr(FGradient, make_zero_grad_nodes)
    .add_argument("data", "NDArray-or-Symbol", "Input ndarray")
    .add_argument("bins", "NDArray-or-Symbol", "Input ndarray")
    .add_arguments(HistogramParam.fields())
)
