"""OpCase rows for quantization/quantized_elemwise_mul.py and quantized_batch_norm.py,
written from the formulas: an int8 code stands for code * MaxAbs(min, max) / 127 in the
int32 range output, and MXNet's kernels rescale by 127.5 (uint8: 255.5) codes per MaxAbs
where they leave or enter int32 / float. Loops over elements, scalar arithmetic."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from op_db import OpCase

I32 = 2147483647
_NO_CHECK = {"dtypes": (np.float32,), "grad": False, "check_op": False}


def _r(v: float) -> np.ndarray:
    return np.array([v], np.float32)


def _mul_inputs(rng: np.random.Generator, dtype: Any) -> list[np.ndarray]:
    a = rng.integers(-127, 128, (3, 4)).astype(np.int8)
    b = rng.integers(-127, 128, (3, 4)).astype(np.int8)
    return [a, b, _r(-2.0), _r(1.5), _r(-0.5), _r(3.0)]


def mul_ref(a: np.ndarray, b: np.ndarray, *r: Any, **p: Any) -> list[np.ndarray]:
    """Ranges MaxAbs 2 and 3 (see _mul_inputs)."""
    codes = [int(x) * int(y) for x, y in zip(a.ravel(), b.ravel())]
    if p.get("enable_float_output"):
        return [np.array([c * 2.0 * 3.0 / (127.5 * 127.5) for c in codes]).reshape(a.shape)]
    if "min_calib_range" in p:
        span = max(abs(p["min_calib_range"]), abs(p["max_calib_range"]))
        q = [max(-128, min(127, math.trunc(c * 2 * 3 / 127.5 / span))) for c in codes]
        return [np.array(q).reshape(a.shape), _r(p["min_calib_range"]), _r(p["max_calib_range"])]
    top = I32 * (2.0 / 127) * (3.0 / 127)
    return [np.array(codes).reshape(a.shape), _r(-top), _r(top)]


def _bn_inputs(data_dtype: Any) -> Any:
    def make(rng: np.random.Generator, dtype: Any) -> list[np.ndarray]:
        lo = -127 if data_dtype == np.int8 else 0
        x = rng.integers(lo, 128, (2, 3, 2, 2)).astype(data_dtype)
        gamma, beta = rng.uniform(0.5, 1.5, 3), rng.normal(size=3)
        mean, var = rng.normal(size=3) * 0.3, rng.uniform(0.5, 2.0, 3)
        vectors = [v.astype(np.float32) for v in (gamma, beta, mean, var)]
        return [x, *vectors, _r(-1.5 if lo else 0.0), _r(2.5)]

    return make


def bn_ref(x: np.ndarray, gamma, beta, mean, var, lo, hi, **p: Any) -> list[np.ndarray]:
    step = 2.5 / (127.5 if lo[0] < 0 else 255.5)  # MaxAbs(min_data, max_data) = 2.5
    span = max(abs(p["min_calib_range"]), abs(p["max_calib_range"]))
    out = np.zeros(x.shape)
    for idx in np.ndindex(x.shape):
        c = idx[1]
        y = (x[idx] * step - mean[c]) / math.sqrt(var[c] + p.get("eps", 1e-3)) * gamma[c]
        out[idx] = max(-128, min(127, round((y + beta[c]) * 127.5 / span)))
    return [out, _r(p["min_calib_range"]), _r(p["max_calib_range"])]


CASES = [
    OpCase("_contrib_quantized_elemwise_mul", shapes=[(3, 4), (3, 4)] + [(1,)] * 4,
           reference=mul_ref, inputs=_mul_inputs, rtol=1e-6, **_NO_CHECK),
    OpCase("_contrib_quantized_elemwise_mul", shapes=[(3, 4), (3, 4)] + [(1,)] * 4,
           reference=mul_ref, params={"min_calib_range": -4.0, "max_calib_range": 5.0},
           inputs=_mul_inputs, id="calib", atol=1.0, rtol=0.0, **_NO_CHECK),
    OpCase("_contrib_quantized_elemwise_mul", shapes=[(3, 4), (3, 4)] + [(1,)] * 4,
           reference=mul_ref, params={"enable_float_output": True},
           inputs=_mul_inputs, id="float", **_NO_CHECK),
    OpCase("_contrib_quantized_batch_norm", shapes=[(2, 3, 2, 2)] + [(3,)] * 4 + [(1,)] * 2,
           reference=bn_ref, params={"min_calib_range": -3.0, "max_calib_range": 4.0,
                                     "fix_gamma": False},
           inputs=_bn_inputs(np.int8), atol=1.0, rtol=0.0, **_NO_CHECK),
    OpCase("_contrib_quantized_batch_norm", shapes=[(2, 3, 2, 2)] + [(3,)] * 4 + [(1,)] * 2,
           reference=bn_ref, params={"min_calib_range": -1.0, "max_calib_range": 2.0,
                                     "eps": 1e-2},
           inputs=_bn_inputs(np.uint8), atol=1.0, rtol=0.0, id="uint8", **_NO_CHECK),
]  # fmt: skip
