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
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...attrs import FCompute_cpu, FCompute_gpu, FInferShape, FInferType, FListInputNames
from ...base import InferError
from ...infer import shape_assign, type_assign
from ...param import Parameter, field
from ...registry import NodeAttrs, register_op
from .._host_staged import host_compute
from ._common import F32, all_known

OP = "_contrib_calibrate_entropy"


class CalibrateEntropyParam(Parameter):
    num_quantized_bins = field(
        int, default=255, lower_bound=1, describe="The number of quantized bins."
    )


def smooth_distribution(p: np.ndarray, eps: float = 0.0001) -> np.ndarray:
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


def _kl(p: np.ndarray, q: np.ndarray) -> float:
    p = p / p.sum()
    q = q / q.sum()
    return float(np.sum(p * np.log(p / q)))


def _spread(sliced: np.ndarray, nonzero: np.ndarray, n_groups: int) -> np.ndarray:
    """Merge sliced into n_groups (the last takes the remainder) and spread each group's
    sum evenly over its non-empty bins."""
    group = np.minimum(np.arange(sliced.size) // (sliced.size // n_groups), n_groups - 1)
    sums = np.bincount(group, weights=sliced, minlength=n_groups)
    counts = np.bincount(group, weights=nonzero, minlength=n_groups)
    per_bin = np.divide(sums, counts, out=np.zeros_like(sums), where=counts > 0)
    return np.where(nonzero, per_bin[group], 0.0)


def optimal_threshold(hist: np.ndarray, edges: np.ndarray, n_quantized: int) -> tuple[float, float]:
    hist = hist.astype(np.float64)
    middle, half = hist.size // 2, n_quantized // 2
    best = (float(edges[-1]), np.inf)
    for i in range(half, middle + 1):
        start, stop = middle - i, middle + i + 1
        sliced = hist[start:stop]
        p = sliced.copy()
        p[0] += hist[:start].sum()
        p[-1] += hist[stop:].sum()
        q = _spread(sliced, p != 0, n_quantized)
        try:
            divergence = _kl(smooth_distribution(p), smooth_distribution(q))
        except ValueError:
            divergence = np.inf
        if divergence < best[1]:
            best = (float(edges[stop]), divergence)
    return best


def _compute(p: Any, hist: np.ndarray, edges: np.ndarray) -> list[np.ndarray]:
    threshold, divergence = optimal_threshold(hist, edges, p.num_quantized_bins)
    return [np.array([threshold], F32), np.array([divergence], F32)]


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


_kernel = host_compute(OP, _compute)
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
    .set_attr(FCompute_cpu, _kernel)
    .set_attr(FCompute_gpu, _kernel)
    .add_argument("hist", "NDArray-or-Symbol", "A ndarray/symbol of type `float32`")
    .add_argument("hist_edges", "NDArray-or-Symbol", "A ndarray/symbol of type `float32`")
    .add_arguments(CalibrateEntropyParam.fields())
)
