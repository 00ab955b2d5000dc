"""Inputs of a Correlation case, shared by the CPU and GPU tests of its kernels."""

from __future__ import annotations

from typing import Any

import numpy as np


def correlation_geometry(shape: tuple[int, ...], k: int, d: int, s1: int, s2: int, pad: int):
    """(radius, D, out height, out width) as MXNet documents them (not the op's code)."""
    radius = d // s2
    border = d + (k - 1) // 2
    th = -(-(shape[2] + 2 * pad - 2 * border) // s1)
    tw = -(-(shape[3] + 2 * pad - 2 * border) // s1)
    return radius, 2 * radius + 1, th, tw


def correlation_inputs(
    rng: np.random.Generator, shape: tuple[int, ...], k: int, d: int, s1: int, s2: int,
    pad: int, mult: bool, dtype: Any,
) -> tuple[dict[str, Any], np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """(params, data1, data2, output gradient): normal values for a product, and values
    in {-0.5, 0, 0.5} for |a - b|, so a and b (and the padding's zeros) tie often."""
    params = {"kernel_size": k, "max_displacement": d, "stride1": s1, "stride2": s2,
              "pad_size": pad, "is_multiply": mult}  # fmt: skip
    if mult:
        a, b = rng.standard_normal(shape), rng.standard_normal(shape)
    else:
        a, b = rng.integers(-1, 2, shape) / 2.0, rng.integers(-1, 2, shape) / 2.0
    _, D, th, tw = correlation_geometry(shape, k, d, s1, s2, pad)
    dy = rng.standard_normal((shape[0], D * D, th, tw))
    return params, a.astype(dtype), b.astype(dtype), dy.astype(dtype)
