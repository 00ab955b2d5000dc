"""ScalarParam: the `scalar` parameter of MXNet's binary-scalar ops, and how a kernel meets it."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..param import Parameter, field
from ..registry import NodeAttrs


class ScalarParam(Parameter):
    scalar = field(float, default=1.0, describe="Scalar input value")
    is_int = field(
        bool,
        default=True,
        describe="Indicate whether scalar input is int type (MXNet 1.9: with False, an "
        "integer array gives a float64 result)",
    )

    @staticmethod
    def dtype_scalar(value: Any, dtype: Any) -> Any:
        """The scalar as MXNet's kernels meet it, DType(scalar), for an integer dtype.

        MXNet converts the scalar to the array's dtype before the arithmetic, so int32
        [3, -7] * 2.5 is [6, -14] and `x >= 2.5` is `x >= 2`: a float is truncated toward
        zero and wrapped into the dtype's range (uint8 meets -1.7 as 255), as a C cast
        through a wide integer does. Other dtypes keep the value (the CPU loop rounds a
        float scalar to float32 for float32 arrays itself, kernel/cpu.py)."""
        dt = np.dtype(dtype)
        if dt.kind not in "iu" or not isinstance(value, float):
            return value
        bits = 8 * dt.itemsize
        if not math.isfinite(value) or abs(value) >= 2.0**63:
            # x86's conversion gives the "integer indefinite" value (INT_MIN) here
            return int(np.iinfo(dt).min) if dt.kind == "i" and bits >= 32 else 0
        wrapped = int(value) % (1 << bits)
        return wrapped - (1 << bits) if dt.kind == "i" and wrapped >= 1 << (bits - 1) else wrapped


def scalar_values(attrs: NodeAttrs, names: tuple[str, ...], dtype: Any) -> list[Any]:
    """The node's scalar parameters `names` for an output of `dtype`: ScalarParam's
    `scalar` as DType(scalar) (see ScalarParam.dtype_scalar), anything else as parsed."""
    parsed = attrs.parsed
    values = [getattr(parsed, p) for p in names]
    if isinstance(parsed, ScalarParam):
        values = [parsed.dtype_scalar(v, dtype) for v in values]
    return values
