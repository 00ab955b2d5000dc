"""Calibration: measure layer outputs of the float32 network on sample data, then pick
each layer's quantization range.

- naive: the smallest and largest value seen (min, max);
- entropy: a histogram of each layer (8001 bins, symmetric about zero) and the threshold
  whose quantized histogram loses least information (KL divergence, computed by the
  `_contrib_calibrate_entropy` op); the range is (-t, t), or (0, t) for non-negative
  layers when the codes will be uint8.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from ..ops.quantization.calibrate_entropy import smooth_distribution

#: what MXNet stores per layer for entropy calibration
Histogram = tuple[np.ndarray, np.ndarray, float, float, float]  # hist, edges, min, max, th


def collect_outputs(
    sym: Any,
    layers: list[str],
    arg_params: Mapping[str, Any],
    aux_params: Mapping[str, Any],
    calib_data: Any,
    num_examples: int | None,
    ctx: Any,
) -> Iterable[dict[str, np.ndarray]]:
    """Yield {layer: output as NumPy} per batch of calib_data until num_examples are seen."""
    from nnvmpy.symbol import Group

    internals = sym.get_internals()
    available = set(internals.list_outputs())
    names = [n for n in dict.fromkeys(layers) if n in available]
    if not names:
        return
    group = Group([internals[n] for n in names])
    descs = list(calib_data.provide_data)
    shapes = {d.name: tuple(d.shape) for d in descs}
    exe = group.simple_bind(ctx, grad_req="null", **shapes)
    for name, value in {**arg_params, **aux_params}.items():
        target = exe.arg_dict.get(name)
        if target is None:
            target = exe.aux_dict.get(name)
        if target is not None:
            target[:] = value
    calib_data.reset()
    seen = 0
    for batch in calib_data:
        feed = {d.name: arr for d, arr in zip(descs, batch.data)}
        outs = exe.forward(is_train=False, **feed)
        yield {n: o.asnumpy() for n, o in zip(names, outs)}
        seen += descs[0].shape[0] - (getattr(batch, "pad", 0) or 0)
        if num_examples is not None and seen >= num_examples:
            break


def naive_ranges(batches: Iterable[Mapping[str, np.ndarray]]) -> dict[str, tuple[float, float]]:
    """Per layer: (min, max) over every batch."""
    ranges: dict[str, tuple[float, float]] = {}
    for outs in batches:
        for name, arr in outs.items():
            lo, hi = float(arr.min()), float(arr.max())
            if name in ranges:
                lo, hi = min(lo, ranges[name][0]), max(hi, ranges[name][1])
            ranges[name] = (lo, hi)
    return ranges


def _merge(old: Histogram, arr: np.ndarray) -> Histogram:
    """Add arr to a histogram. When arr reaches further, whole bins of the same width are
    added on both sides (the bin count grows, the old counts stay in their bins)."""
    hist, edges, lo, hi, th = old
    lo, hi = min(lo, float(arr.min())), max(hi, float(arr.max()))
    new_th = max(abs(float(arr.min())), abs(float(arr.max())))
    if new_th <= th:
        more, _ = np.histogram(arr, bins=len(hist), range=(-th, th))
        return hist + more, edges, lo, hi, th
    if th == 0:  # everything so far was exactly 0: it lands in the middle bin
        more, wide_edges = np.histogram(arr, bins=len(hist), range=(-new_th, new_th))
        more[len(hist) // 2] += hist.sum()
        return more, wide_edges, lo, hi, new_th
    step = 2 * th / len(hist)
    extra = int((new_th - th) // step + 1)
    wide_th = th + extra * step
    more, wide_edges = np.histogram(arr, bins=len(hist) + 2 * extra, range=(-wide_th, wide_th))
    more[extra : extra + len(hist)] += hist
    return more, wide_edges, lo, hi, wide_th


def histograms(
    batches: Iterable[Mapping[str, np.ndarray]], num_bins: int = 8001
) -> dict[str, Histogram]:
    out: dict[str, Histogram] = {}
    for outs in batches:
        for name, arr in outs.items():
            if name in out:
                out[name] = _merge(out[name], arr)
                continue
            th = max(abs(float(arr.min())), abs(float(arr.max())))
            hist, edges = np.histogram(arr, bins=num_bins, range=(-th, th))
            out[name] = (hist, edges, float(arr.min()), float(arr.max()), th)
    return out


def optimal_threshold(
    hist_data: Histogram, quantized_dtype: str = "auto", num_quantized_bins: int = 255
) -> tuple[float, float, Any, Any]:
    """(min, max, threshold, divergence) of one layer's histogram."""
    from nnvmpy.ndarray import array, contrib

    hist, edges, lo, hi, _ = hist_data
    if len(hist) % 2 != 1:
        raise ValueError(f"the histogram needs an odd number of bins, got {len(hist)}")
    if lo >= 0 and quantized_dtype in ("auto", "uint8"):
        num_quantized_bins = num_quantized_bins * 2 + 1  # only the positive half is used
    th, div = contrib.calibrate_entropy(
        array(np.asarray(hist, np.float32)),
        array(np.asarray(edges, np.float32)),
        num_quantized_bins=num_quantized_bins,
    )
    return lo, hi, th.asnumpy(), div.asnumpy()


def optimal_thresholds(
    hist_dict: dict[str, Histogram],
    quantized_dtype: str,
    num_quantized_bins: int = 255,
    logger: logging.Logger | None = None,
) -> dict[str, tuple[float, float]]:
    """Per layer: (-t, t), or (0, t) for a non-negative layer quantized to uint8/auto."""
    ranges: dict[str, tuple[float, float]] = {}
    for name in list(hist_dict):
        lo, hi, th, div = optimal_threshold(hist_dict[name], quantized_dtype, num_quantized_bins)
        t = float(np.asarray(th).reshape(-1)[0])
        unsigned = lo >= 0 and quantized_dtype in ("auto", "uint8")
        ranges[name] = (0.0, t) if unsigned else (-t, t)
        del hist_dict[name]  # as MXNet: the histograms can be large
        if logger is not None:
            logger.debug(f"layer={name}, min={lo}, max={hi}, threshold={t}, divergence={div}")
    return ranges


__all__ = [
    "collect_outputs",
    "histograms",
    "naive_ranges",
    "optimal_threshold",
    "optimal_thresholds",
    "smooth_distribution",
]
