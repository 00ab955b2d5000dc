"""calibrate_entropy: the clipping threshold that loses least information (KL divergence).

`_contrib_calibrate_entropy(hist, hist_edges, num_quantized_bins=255)` -> (threshold,
divergence), each (1,). hist is a histogram with an odd number of bins, symmetric about
zero (hist_edges has one more entry). For every candidate width i (from
num_quantized_bins // 2 to the middle), the 2i+1 middle bins are the reference p (the
clipped outliers added to its end bins) and q is the same bins merged into
num_quantized_bins groups and spread back evenly over each group's non-empty bins. Both
are smoothed (_smooth_distribution) and the candidate with the least KL(p || q) wins;
its threshold is the upper edge of its last bin. This is entropy calibration as MXNet
(after TensorRT) describes it.

One body for both devices: prefix sums and non-empty counts of the histogram, one item
per candidate width (its groups' sums and counts from the prefixes: no scratch, so
memory does not grow with candidates x groups; one pass over its bins, rounded to
float32 as the NumPy reference does, sums and the KL terms in float64), then one item
picking the first least divergence. The histogram never leaves the op's device.
smooth_distribution (NumPy) stays for the Python-side calibration
(contrib/_calibration.py).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ... import kernel
from ...attrs import FCompute_cpu, FCompute_gpu, FInferShape, FInferType, FListInputNames
from ...base import InferError
from ...infer import shape_assign, type_assign
from ...kernel.launch import NULL, req_code, run_rows, store
from ...param import Parameter, field
from ...registry import NodeAttrs, register_op
from .._index_kernels import device_empty
from ._common import F32, all_known

OP = "_contrib_calibrate_entropy"


class CalibrateEntropyParam(Parameter):
    num_quantized_bins = field(
        int, default=255, lower_bound=1, describe="The number of quantized bins."
    )


EPS = 0.0001  # what smoothing gives each empty bin


def smooth_distribution(p: np.ndarray, eps: float = EPS) -> np.ndarray:
    """Give every empty bin eps, taking it evenly from the non-empty ones, so that
    KL(p || q) stays finite. ValueError when every bin is empty or eps is too large."""
    empty = p == 0
    n_empty = int(empty.sum())
    n_full = p.size - n_empty
    if n_full == 0:
        raise ValueError("The discrete probability distribution is malformed. All entries are 0.")
    taken = eps * n_empty / n_full
    if taken >= 1.0:
        raise ValueError(f"n_zeros={n_empty}, n_nonzeros={n_full}, eps1={taken}")
    smoothed = p.astype(np.float32) + np.where(empty, eps, -taken).astype(np.float32)
    if (smoothed <= 0).any():
        raise ValueError("smoothing left a bin that is not positive; eps is too large")
    return smoothed


# -- kernels: one item per candidate width, then one picking the least divergence --------


@kernel.device_function
def _smoothing(empty, full, eps):
    """The amount taken from each non-empty bin to give the empty ones eps, or -1 when
    the distribution cannot be smoothed (all empty, or eps too large)."""
    if full == 0:
        return -1.0
    taken = eps * empty / full
    return -1.0 if taken >= 1.0 else taken


@kernel.parallel_for
def _prefix(item, hist, n_bins, prefix, nonzero):
    """prefix[t] = the sum of hist[:t], nonzero[t] = how many of hist[:t] are non-zero
    (n_bins + 1 entries each, float64): any group's sum and count in O(1)."""
    acc = 0.0
    count = 0.0
    prefix[0] = 0.0
    nonzero[0] = 0.0
    for t in range(n_bins):
        v = float(hist[t])
        acc += v
        count += 1.0 if v != 0 else 0.0
        prefix[t + 1] = acc
        nonzero[t + 1] = count


@kernel.device_function
def _end_fix(v, pv):
    """How p's end bin pv (hist's v plus outliers) changes the count of non-empty bins."""
    return (1.0 if pv != 0 else 0.0) - (1.0 if v != 0 else 0.0)


@kernel.device_function
def _group(hist, prefix, nonzero, lo, hi, start, stop, left, right):
    """(sum of hist[lo:hi], how many of p's bins there are non-empty), from the prefix
    arrays: p's end bins carry the outliers left and right of the slice [start, stop)."""
    total = prefix[hi] - prefix[lo]
    count = nonzero[hi] - nonzero[lo]
    last = stop - 1
    if lo <= start and start < hi:
        v = float(hist[start])
        count += _end_fix(v, v + left + (right if last == start else 0.0))
    if last != start and lo <= last and last < hi:
        v = float(hist[last])
        count += _end_fix(v, v + right)
    return total, count


@kernel.parallel_for
def _divergence(c, div, hist, prefix, nonzero, n_bins, n_quantized, half, eps):
    """div[c]: KL(p || q) of candidate width i = half + c (inf when p or q cannot be
    smoothed).

    The groups' sums and non-empty counts come from the prefix arrays (no scratch, no
    index division); one pass over the smoothed bins (rounded to float32 as the NumPy
    reference rounds them) forms their totals P, Q and S = sum p log(p / q), so that
    KL = S / P + log(Q / P) without normalising every bin first."""
    i = half + c
    start = n_bins // 2 - i
    size = 2 * i + 1
    stop = start + size
    left = prefix[start]  # the outliers, added to the end bins of p
    right = prefix[n_bins] - prefix[stop]
    width = size // n_quantized
    p_full = 0.0
    q_full = 0.0
    for g in range(n_quantized):
        lo = start + g * width
        hi = stop if g == n_quantized - 1 else lo + width
        total, count = _group(hist, prefix, nonzero, lo, hi, start, stop, left, right)
        p_full += count
        q_full += count if total != 0 else 0.0  # q spreads the group's sum over them
    p_taken = _smoothing(size - p_full, p_full, eps)
    q_taken = _smoothing(size - q_full, q_full, eps)
    if p_taken < 0 or q_taken < 0:
        div[c] = math.inf
        return
    p_sum = 0.0
    q_sum = 0.0
    s = 0.0
    for g in range(n_quantized):
        lo = start + g * width
        hi = stop if g == n_quantized - 1 else lo + width
        total, count = _group(hist, prefix, nonzero, lo, hi, start, stop, left, right)
        share = total / count if count > 0 else 0.0
        for t in range(lo, hi):
            pv = float(hist[t]) + (left if t == start else 0.0) + (right if t == stop - 1 else 0.0)
            qv = share if pv != 0 else 0.0
            ps = float(np.float32(pv) + np.float32(eps if pv == 0 else -p_taken))
            qs = float(np.float32(qv) + np.float32(eps if qv == 0 else -q_taken))
            if not (ps > 0 and qs > 0):
                div[c] = math.inf
                return
            p_sum += ps
            q_sum += qs
            s += ps * math.log(ps / qs)
    div[c] = s / p_sum + math.log(q_sum / p_sum)


@kernel.parallel_for
def _pick(item, div, edges, candidates, n_bins, half, threshold, divergence, t_mode, d_mode):
    """The first candidate of least divergence: its threshold (the upper edge of its last
    bin) and divergence; (last edge, inf) when none is finite."""
    best_edge = float(edges[n_bins])
    best = math.inf
    for c in range(candidates):
        if div[c] < best:
            best = div[c]
            best_edge = float(edges[n_bins // 2 + half + c + 1])
    store(threshold, 0, best_edge, t_mode)
    store(divergence, 0, best, d_mode)


def _compute(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any],
             outputs: list[Any]) -> None:  # fmt: skip
    modes = [req_code(OP, r) for r in req]
    if all(m == NULL for m in modes):
        return
    hist, edges = inputs
    n_bins, n_quantized = int(hist.size), attrs.parsed.num_quantized_bins
    half = n_quantized // 2
    candidates = max(n_bins // 2 - half + 1, 0)
    div = device_empty(ctx, candidates, np.float64)
    if candidates:
        prefix, nonzero = (device_empty(ctx, n_bins + 1, np.float64) for _ in "pn")
        run_rows(ctx, OP, _prefix, 1, hist, n_bins, prefix, nonzero)
        run_rows(ctx, OP, _divergence, candidates, div, hist, prefix, nonzero, n_bins,
                 n_quantized, half, EPS)  # fmt: skip
    run_rows(ctx, OP, _pick, 1, div, edges, candidates, n_bins, half, *outputs, *modes)


def _shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    hist = in_shapes[0]
    if hist is not None and (len(hist) != 1 or hist[0] is not None):  # () is known: 0-d
        if len(hist) != 1 or hist[0] % 2 == 0:
            raise InferError(
                f"{OP}: input 'hist' must be 1-D with an odd number of bins, got {hist}"
            )
        shape_assign(in_shapes, 1, (hist[0] + 1,), f"{OP}: input 'hist_edges' (one more than hist)")
    for j in (0, 1):
        shape_assign(out_shapes, j, (1,), f"{OP}: output {j}")
    return all_known(in_shapes, out_shapes)


def _type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    for i, name in ((0, "hist"), (1, "hist_edges")):
        type_assign(in_types, i, F32, f"{OP}: input {name!r}")
    for j in (0, 1):
        type_assign(out_types, j, F32, f"{OP}: output {j}")
    return True


op = (
    register_op(OP)
    .describe(
        "Provide calibrated min/max for input histogram: the threshold whose quantized "
        "histogram has the least KL divergence from the original, and that divergence.\n\n"
        ".. Note::\n    This operator only supports forward propagation. DO NOT use it in "
        "training.\n"
    )
    .set_attr_parser(CalibrateEntropyParam)
    .set_num_inputs(2)
    .set_num_outputs(2)
    .set_attr(FListInputNames, lambda attrs: ["hist", "hist_edges"])
    .set_attr(FInferShape, _shape)
    .set_attr(FInferType, _type)
    .set_attr(FCompute_cpu, _compute)
    .set_attr(FCompute_gpu, _compute)
    .add_argument("hist", "NDArray-or-Symbol", "A ndarray/symbol of type `float32`")
    .add_argument("hist_edges", "NDArray-or-Symbol", "A ndarray/symbol of type `float32`")
    .add_arguments(CalibrateEntropyParam.fields())
)
