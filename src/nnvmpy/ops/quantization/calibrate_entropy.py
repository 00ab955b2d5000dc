"""calibrate_entropy: the clipping threshold that loses least information (KL divergence).

`_contrib_calibrate_entropy(hist, hist_edges, num_quantized_bins=255)` -> (threshold,
divergence), each (1,). hist is a histogram (hist_edges has one more entry), normally
symmetric about zero with an odd number of bins. For every candidate width i (from
num_quantized_bins // 2 up, while the slice fits), the 2i+1 bins around the middle one
(n // 2) are the reference p, the clipped outliers added to its end bins. q merges the
slice into num_quantized_bins groups and spreads each group's sum evenly over the bins
where p is non-empty. Both are smoothed and the candidate with the least KL(p || q)
wins; its threshold is the upper edge of its last bin. This is entropy calibration as
MXNet (after TensorRT) describes it, computed as MXNet 1.9.1's operator computes it, so
that calibrated models get MXNet's thresholds, bit for bit on the histograms tried:

- q sums and counts the slice's counts as integers and leaves the slice's first bin out
  (MXNet's q never sees it);
- smoothing, normalisation and the KL sum are float32, added in order;
- an even bin count works; MXNet also tries a width whose slice ends one bin past the
  histogram (reading past hist_edges), which is left out here.

One body for both devices: prefix sums and non-empty counts of the histogram (as
floats and as integers), one item per candidate width (its groups' sums and counts from
the prefixes: no scratch, so memory does not grow with candidates x groups; one pass for
the float32 totals, one for the KL terms), then one item picking the first least
divergence. The histogram never leaves the op's device. smooth_distribution (NumPy)
stays for the Python-side calibration (contrib/_calibration.py).
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
    """The amount taken from each non-empty bin to give the empty ones eps (float32, as
    MXNet's smoothing), or -1 when the distribution cannot be smoothed (all empty, or eps
    too large)."""
    if full == 0:
        return -1.0
    taken = np.float32(np.float32(np.float32(eps) * np.float32(empty)) / np.float32(full))
    return -1.0 if taken >= 1.0 else float(taken)


@kernel.parallel_for
def _prefix(item, hist, n_bins, prefix, nonzero, iprefix, inonzero):
    """prefix[t] = the sum of hist[:t], nonzero[t] = how many of hist[:t] are non-zero;
    iprefix and inonzero the same over the counts truncated to integers (MXNet slices
    the histogram as integers for q). n_bins + 1 entries each, float64: any group's sums
    and counts in O(1)."""
    acc = 0.0
    count = 0.0
    iacc = 0.0
    icount = 0.0
    prefix[0] = 0.0
    nonzero[0] = 0.0
    iprefix[0] = 0.0
    inonzero[0] = 0.0
    for t in range(n_bins):
        v = float(hist[t])
        iv = float(int(v))
        acc += v
        count += 1.0 if v != 0 else 0.0
        iacc += iv
        icount += 1.0 if iv != 0 else 0.0
        prefix[t + 1] = acc
        nonzero[t + 1] = count
        iprefix[t + 1] = iacc
        inonzero[t + 1] = icount


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


@kernel.device_function
def _q_share(hist, iprefix, inonzero, lo, hi, start):
    """What q gives each of group [lo, hi)'s bins where p is non-empty: the group's
    integer counts summed over its non-zero ones, both without the slice's first bin
    (MXNet's calibrate_entropy leaves it out of q), in float32; 0 for no non-zero."""
    total = iprefix[hi] - iprefix[lo]
    norm = inonzero[hi] - inonzero[lo]
    if lo <= start and start < hi:
        first = float(int(float(hist[start])))
        total -= first
        norm -= 1.0 if first != 0 else 0.0
    if norm == 0:
        return np.float32(0.0)
    return np.float32(np.float32(total) / np.float32(norm))


@kernel.device_function
def _p_bin(hist, t, start, stop, left, right):
    """p's bin for hist[t]: the end bins also hold the clipped outliers (float32)."""
    v = float(hist[t])
    if t == start:
        v += left
    if t == stop - 1:
        v += right
    return np.float32(v)


@kernel.device_function
def _smoothed(v, eps, taken):
    """A bin after smoothing: eps for an empty one, less `taken` otherwise (float32)."""
    return np.float32(v + (eps if v == 0 else -taken))


@kernel.parallel_for
def _divergence(c, div, hist, prefix, nonzero, iprefix, inonzero, n_bins, n_quantized, half,
                eps):  # fmt: skip
    """div[c]: KL(p || q) of candidate width i = half + c (inf when p or q cannot be
    smoothed, or a smoothed bin is not positive).

    The groups' sums and non-empty counts come from the prefix arrays (no scratch, no
    index division). Then, in float32 as MXNet's calibrate_entropy computes them, one
    pass sums the smoothed p and q and one forms sum p log(p / q) of the normalised bins,
    so that near-equal candidates are told apart as MXNet does."""
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
        _total, count = _group(hist, prefix, nonzero, lo, hi, start, stop, left, right)
        p_full += count
        if _q_share(hist, iprefix, inonzero, lo, hi, start) != 0:
            q_full += count  # q spreads the group's share over p's non-empty bins
    eps32 = np.float32(eps)
    p_taken = _smoothing(size - p_full, p_full, eps)
    q_taken = _smoothing(size - q_full, q_full, eps)
    if p_taken < 0 or q_taken < 0:
        div[c] = math.inf
        return
    p_taken = np.float32(p_taken)
    q_taken = np.float32(q_taken)
    p_sum = np.float32(0.0)
    q_sum = np.float32(0.0)
    for g in range(n_quantized):
        lo = start + g * width
        hi = stop if g == n_quantized - 1 else lo + width
        share = _q_share(hist, iprefix, inonzero, lo, hi, start)
        for t in range(lo, hi):
            pv = _p_bin(hist, t, start, stop, left, right)
            ps = _smoothed(pv, eps32, p_taken)
            qs = _smoothed(share if pv != 0 else np.float32(0.0), eps32, q_taken)
            if not (ps > 0 and qs > 0):
                div[c] = math.inf
                return
            p_sum = np.float32(p_sum + ps)
            q_sum = np.float32(q_sum + qs)
    kl = np.float32(0.0)
    for g in range(n_quantized):
        lo = start + g * width
        hi = stop if g == n_quantized - 1 else lo + width
        share = _q_share(hist, iprefix, inonzero, lo, hi, start)
        for t in range(lo, hi):
            pv = _p_bin(hist, t, start, stop, left, right)
            pn = np.float32(_smoothed(pv, eps32, p_taken) / p_sum)
            qv = share if pv != 0 else np.float32(0.0)
            qn = np.float32(_smoothed(qv, eps32, q_taken) / q_sum)
            kl = np.float32(kl + np.float32(pn * np.float32(math.log(np.float32(pn / qn)))))
    div[c] = kl


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
    # widths half .. w with the slice inside the histogram: w = n_bins // 2 for an odd
    # count; for an even one MXNet also tries a width one bin past the end (reading past
    # hist_edges), which is left out here
    candidates = max((n_bins - 1) - n_bins // 2 - half + 1, 0)
    div = device_empty(ctx, candidates, np.float64)
    if candidates:
        sums = [device_empty(ctx, n_bins + 1, np.float64) for _ in range(4)]
        run_rows(ctx, OP, _prefix, 1, hist, n_bins, *sums)
        run_rows(ctx, OP, _divergence, candidates, div, hist, *sums, n_bins, n_quantized, half,
                 EPS)  # fmt: skip
    run_rows(ctx, OP, _pick, 1, div, edges, candidates, n_bins, half, *outputs, *modes)


def _shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    hist = in_shapes[0]
    if hist is not None and (len(hist) != 1 or hist[0] is not None):  # () is known: 0-d
        if len(hist) != 1:
            raise InferError(f"{OP}: input 'hist' must be 1-D, got {hist}")
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
