"""What every quantized op shares: MXNet's range convention and the range slots.

A quantized tensor travels with two (1,) float32 arrays, min and max: the real values
its integer codes stand for. MXNet's native kernels are symmetric: one integer step of
an int8 tensor is MaxAbs(min, max) / 127, of a uint8 tensor MaxAbs(min, max) / 255 and
of an int32 accumulator MaxAbs(min, max) / (2^31 - 1). Quantized ops list their data
inputs first, then a (min, max) pair per data input; their data outputs come first,
then one (min, max) pair.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...base import InferError
from ...infer import dtype_str, shape_assign, shape_is_known, type_assign
from ...param import field
from ...registry import NodeAttrs

INT32_MAX = 2147483647
F32 = np.dtype(np.float32)
INT8 = np.dtype(np.int8)
UINT8 = np.dtype(np.uint8)
INT32 = np.dtype(np.int32)
QUANTIZED = {"int8": INT8, "uint8": UINT8}

#: integer codes per unit of MaxAbs(min, max), by dtype (MXNet: MinAbs(lowest, max) if signed)
_STEPS = {INT8: 127.0, UINT8: 255.0, INT32: float(INT32_MAX)}


def steps(dtype: Any) -> float:
    """How many integer codes span MaxAbs(min, max) for a quantized dtype."""
    return _STEPS[np.dtype(dtype)]


def max_abs(lo: np.ndarray, hi: np.ndarray) -> float:
    """MaxAbs(min, max) of two (1,) range arrays, in float64."""
    return max(abs(float(lo.reshape(-1)[0])), abs(float(hi.reshape(-1)[0])))


def step_size(dtype: Any, lo: np.ndarray, hi: np.ndarray) -> float:
    """The real value of one integer step of a tensor of `dtype` with range (lo, hi)."""
    return max_abs(lo, hi) / steps(dtype)


def int32_range(step: float) -> list[np.ndarray]:
    """min/max outputs of an int32 accumulator whose one step is worth `step`."""
    r = step * INT32_MAX
    return [np.array([-r], np.float32), np.array([r], np.float32)]


def range_names(data_names: Sequence[str]) -> list[str]:
    """MXNet's names of the range inputs: min_data, max_data, min_weight, ..."""
    return [f"{end}_{name}" for name in data_names for end in ("min", "max")]


def assign_range_shapes(
    op: str,
    names: Sequence[str],
    in_shapes: list[Any],
    out_shapes: list[Any],
    first: int,
    n_data_out: int,
) -> None:
    """Every range input from index `first` on and the two range outputs are (1,)."""
    for i in range(first, len(in_shapes)):
        shape_assign(in_shapes, i, (1,), f"{op}: input {names[i]!r}")
    for j in range(n_data_out, len(out_shapes)):
        shape_assign(out_shapes, j, (1,), f"{op}: output {j}")


def all_known(*lists: list[Any]) -> bool:
    return all(shape_is_known(s) for shapes in lists for s in shapes)


def assign_range_types(
    op: str,
    names: Sequence[str],
    in_types: list[Any],
    out_types: list[Any],
    first: int,
    n_data_out: int,
) -> None:
    """Ranges are float32, in and out."""
    for i in range(first, len(in_types)):
        type_assign(in_types, i, F32, f"{op}: input {names[i]!r}")
    for j in range(n_data_out, len(out_types)):
        type_assign(out_types, j, F32, f"{op}: output {j}")


def check_quantized(op: str, name: str, dtype: Any, allowed: Sequence[Any] = (INT8, UINT8)) -> None:
    """A clear error when a data input is not one of the quantized dtypes the op takes."""
    if dtype is not None and np.dtype(dtype) not in [np.dtype(a) for a in allowed]:
        want = " or ".join(dtype_str(a) for a in allowed)
        raise InferError(f"{op}: input {name!r} has dtype {dtype_str(dtype)}; expected {want}")


# -- the calibrated range an op may be given ---------------------------------------------------

#: out_type of quantize_v2 / requantize: 'auto' is uint8 when min_calib_range >= 0 is given
OUT_TYPES = ("auto", "int8", "uint8")


def calib_range_fields(use: str) -> tuple[float | None, float | None]:
    """The optional float fields min_calib_range and max_calib_range; `use` ends their
    description (what the op does with the range). Typed as `field` types a field: by
    the value a parsed parameter holds."""

    def bound(which: str) -> float | None:
        return field(
            float, optional=True, describe=f"The {which} scalar value in the form of float32{use}"
        )

    return bound("minimum"), bound("maximum")


def calibrated(p: Any) -> bool:
    """Both min_calib_range and max_calib_range are given."""
    return p.min_calib_range is not None and p.max_calib_range is not None


def out_dtype(p: Any) -> np.dtype:
    """The 8-bit type an out_type ('auto', 'int8', 'uint8') resolves to."""
    if p.out_type == "auto":
        unsigned = calibrated(p) and p.min_calib_range >= 0
        return UINT8 if unsigned else INT8
    return UINT8 if p.out_type == "uint8" else INT8


def input_names(attrs: NodeAttrs, data_names: Sequence[str]) -> list[str]:
    return [*data_names, *range_names(data_names)]
