"""`mx.contrib.quantization` (alias `mx.contrib.quant`): post-training quantization of a
float32 symbol, as MXNet 1.9.1's API.

    qsym, qarg_params, aux_params = quantize_model(sym, arg_params, aux_params,
                                                   calib_mode='naive', calib_data=it)

quantize_model rewrites the graph (see _quantize_graph: quantize_v2 in front of
quantized conv / FC / pooling / relu / flatten, requantize after int32 results,
dequantize where float ops read them), quantizes the weights to int8 with their ranges,
and with calib_mode 'naive' or 'entropy' measures the float network on calib_data to fix
every requantize / quantize_v2 range ahead of time (see _calibration). Only
quantize_granularity='tensor-wise' is supported.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from ..base import NNVMError, cpu
from . import _calibration
from ._quantize_graph import _entry_names, calibrate, quantize_graph

_DTYPES = ("int8", "uint8", "auto")
_MODES = ("none", "smart", "full")


def _smooth_distribution(p: np.ndarray, eps: float = 0.0001) -> np.ndarray:
    """Give the empty bins of a histogram eps, taken evenly from the others."""
    return _calibration.smooth_distribution(np.asarray(p), eps)


def _get_optimal_threshold(
    hist_data: Any, quantized_dtype: str = "auto", num_quantized_bins: int = 255
) -> tuple[float, float, Any, Any]:
    """(min, max, threshold, divergence) from (hist, hist_edges, min, max, th)."""
    return _calibration.optimal_threshold(tuple(hist_data), quantized_dtype, num_quantized_bins)


def _get_optimal_thresholds(
    hist_dict: dict[str, Any],
    quantized_dtype: str,
    num_quantized_bins: int = 255,
    logger: logging.Logger | None = None,
) -> dict[str, tuple[float, float]]:
    """Per layer name: the entropy-calibrated (min, max) range."""
    return _calibration.optimal_thresholds(hist_dict, quantized_dtype, num_quantized_bins, logger)


def _check(name: str, value: str, allowed: Iterable[str]) -> None:
    allowed = tuple(allowed)
    if value not in allowed:
        raise NNVMError(f"quantization: {name} must be one of {allowed}, got {value!r}")


def _quantize_symbol(
    sym: Any,
    ctx: Any,
    excluded_symbols: Iterable[str] | None = None,
    excluded_operators: Iterable[str] | None = None,
    offline_params: Iterable[str] | None = None,
    quantized_dtype: str = "int8",
    quantize_mode: str = "smart",
    quantize_granularity: str = "tensor-wise",
) -> tuple[Any, list[str]]:
    """The quantized symbol and the names of the layer outputs calibration should measure."""
    from nnvmpy.symbol import load_json

    _check("quantized_dtype", quantized_dtype, _DTYPES)
    _check("quantize_mode", quantize_mode, _MODES)
    _check("quantize_granularity", quantize_granularity, ("tensor-wise",))
    qjson, layers = quantize_graph(
        sym,
        excluded_symbols or [],
        excluded_operators or [],
        offline_params or [],
        quantized_dtype,
        quantize_mode,
    )
    return load_json(qjson), layers


def _calibrate_quantized_sym(qsym: Any, th_dict: Mapping[str, tuple[float, float]]) -> Any:
    """qsym with (min_calib_range, max_calib_range) set on the nodes that read a layer
    named in th_dict ('conv_output' for requantize_conv, 'data' for data_quantize)."""
    from nnvmpy.symbol import load_json

    if not th_dict:
        return qsym
    return load_json(calibrate(qsym.tojson(), _entry_names(qsym), th_dict))


def _quantize_params(
    qsym: Any, params: Mapping[str, Any], th_dict: Mapping[str, tuple[float, float]] | None = None
) -> dict[str, Any]:
    """The parameters qsym takes: `<P>_quantize` (int8 codes of P over its own min/max)
    with `<P>_quantize_min/_max`; other parameters as they are; `<layer>_min/_max` from
    th_dict."""
    from nnvmpy.ndarray import array, contrib
    from nnvmpy.ndarray import max as nd_max
    from nnvmpy.ndarray import min as nd_min

    ranges = th_dict or {}
    out: dict[str, Any] = {}
    for name in qsym.list_arguments():
        if name.endswith(("weight_quantize", "bias_quantize")):
            param = params[name[: -len("_quantize")]]
            val, vmin, vmax = contrib.quantize(param, nd_min(param), nd_max(param), out_type="int8")
            out[name], out[f"{name}_min"], out[f"{name}_max"] = val, vmin, vmax
        elif name in params:
            out[name] = params[name]
        elif name.endswith(("_min", "_max")) and name[:-4] in ranges:
            out[name] = array([ranges[name[:-4]][0 if name.endswith("_min") else 1]])
    return out


def quantize_model(
    sym: Any,
    arg_params: Mapping[str, Any],
    aux_params: Mapping[str, Any],
    data_names: Iterable[str] = ("data",),
    label_names: Iterable[str] = ("softmax_label",),
    ctx: Any = None,
    excluded_sym_names: Iterable[str] | None = None,
    excluded_op_names: Iterable[str] | None = None,
    calib_mode: str = "entropy",
    calib_data: Any = None,
    num_calib_examples: int | None = None,
    quantized_dtype: str = "int8",
    quantize_mode: str = "smart",
    quantize_granularity: str = "tensor-wise",
    logger: logging.Logger | None = None,
) -> tuple[Any, dict[str, Any], Mapping[str, Any]]:
    """Quantize a float32 model: (qsym, qarg_params, aux_params), as MXNet 1.9.1."""
    from nnvmpy.io import DataIter

    _check("calib_mode", calib_mode, ("none", "naive", "entropy"))
    ctx = ctx if ctx is not None else cpu()
    qsym, layers = _quantize_symbol(
        sym,
        ctx,
        excluded_symbols=excluded_sym_names,
        excluded_operators=excluded_op_names,
        offline_params=list(arg_params),
        quantized_dtype=quantized_dtype,
        quantize_mode=quantize_mode,
        quantize_granularity=quantize_granularity,
    )
    ranges: dict[str, tuple[float, float]] = {}
    if calib_mode != "none":
        if not isinstance(calib_data, DataIter):
            raise ValueError(
                f"calib_data must be of DataIter type when calib_mode={calib_mode}, "
                f"got {type(calib_data).__name__}"
            )
        batches = _calibration.collect_outputs(
            sym, layers, arg_params, aux_params, calib_data, num_calib_examples, ctx
        )
        if calib_mode == "naive":
            ranges = _calibration.naive_ranges(batches)
        else:
            hist = _calibration.histograms(batches)
            ranges = _calibration.optimal_thresholds(hist, quantized_dtype, logger=logger)
        if logger is not None:
            logger.info(f"calibrated {len(ranges)} layers with calib_mode={calib_mode}")
        qsym = _calibrate_quantized_sym(qsym, ranges)
    qarg_params = _quantize_params(qsym, arg_params, ranges)
    return qsym, qarg_params, aux_params


__all__ = ["quantize_model"]
