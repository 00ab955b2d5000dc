"""OpCase rows for contrib_quantize.py: references written element by element from the
documented formulas. Both ops are forward-only (zero gradients, integer outputs), so
finite differences do not apply: test_contrib_quantize.py checks the zero gradient."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from op_db import OpCase


def _trunc(v: float) -> int:
    return math.trunc(v)


def quantize_ref(
    data: np.ndarray, lo: np.ndarray, hi: np.ndarray, out_type: str = "uint8"
) -> list[np.ndarray]:
    lo_, hi_ = float(lo[0]), float(hi[0])
    flat = data.ravel()
    if out_type == "uint8":
        q = [min(max((x - lo_) * 255.0 / (hi_ - lo_) + 0.5, 0.0), 255.0) for x in flat]
        out = np.array([_trunc(v) for v in q], np.uint8).reshape(data.shape)
        return [out, np.array([lo_]), np.array([hi_])]
    r = max(abs(lo_), abs(hi_))
    q = [math.copysign(_trunc(min(abs(x) * 127.0 / r + 0.5, 127.0)), x) for x in flat]
    return [np.array(q, np.int8).reshape(data.shape), np.array([-r]), np.array([r])]


def dequantize_uint8_ref(q: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    lo_, hi_ = float(lo[0]), float(hi[0])
    return np.array([lo_ + v * (hi_ - lo_) / 255.0 for v in q.ravel()]).reshape(q.shape)


def dequantize_int8_ref(q: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    r = max(abs(float(lo[0])), abs(float(hi[0])))
    return np.array([v * r / 127.0 for v in q.ravel()]).reshape(q.shape)


def _quantize_inputs(rng: np.random.Generator, dtype: Any) -> list[np.ndarray]:
    return [
        rng.uniform(-1.5, 2.5, (3, 5)).astype(np.float32),  # some outside the range: clipped
        np.array([-0.75], np.float32),
        np.array([2.0], np.float32),
    ]


def _dequantize_inputs(kind: Any) -> Any:
    info = np.iinfo(kind)

    def make(rng: np.random.Generator, dtype: Any) -> list[np.ndarray]:
        q = rng.integers(info.min, int(info.max) + 1, (4, 3)).astype(kind)
        return [q, np.array([-0.5], np.float32), np.array([3.0], np.float32)]

    return make


CASES = [
    OpCase(
        "_contrib_quantize",
        shapes=[(3, 5), (1,), (1,)],
        reference=quantize_ref,
        inputs=_quantize_inputs,
        dtypes=(np.float32,),
        grad=False,
    ),
    OpCase(
        "_contrib_quantize",
        shapes=[(3, 5), (1,), (1,)],
        params={"out_type": "int8"},
        reference=quantize_ref,
        inputs=_quantize_inputs,
        dtypes=(np.float32,),
        grad=False,
        id="int8",
    ),
    OpCase(
        "_contrib_dequantize",
        shapes=[(4, 3), (1,), (1,)],
        reference=dequantize_uint8_ref,
        inputs=_dequantize_inputs(np.uint8),
        dtypes=(np.float32,),
        grad=False,
        check_op=False,  # check_op draws float inputs; data must be uint8 or int8
    ),
    OpCase(
        "_contrib_dequantize",
        shapes=[(4, 3), (1,), (1,)],
        reference=dequantize_int8_ref,
        inputs=_dequantize_inputs(np.int8),
        dtypes=(np.float32,),
        grad=False,
        check_op=False,
        id="int8",
    ),
]
