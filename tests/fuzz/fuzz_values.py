"""Hostile values: parameters by field type, shapes, dtypes and array contents.

Each generator mixes values a careful user might pass (in range, a listed enum name)
with values nobody should (out of bounds, the wrong type, NaN, 2**63, a nested list),
so that fuzzing reaches both the checks and the code behind them.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from fuzz_common import Chooser

from nnvmpy.param import MISSING, Field

SUPPORTED_DTYPES = ("float32", "float64", "float16", "int32", "int64", "int8", "uint8", "bool")
FLOAT_DTYPES = ("float32", "float64")
MAX_INPUT_ELEMENTS = 50_000  # per input: the fuzzer looks for errors, not for speed limits

_ANY_TYPE_HOSTILE: tuple[Any, ...] = (None, "", "x", "None", [], [[1]], {}, object, b"1", 1j)
_INT_HOSTILE = (-1, 0, 2**31, -(2**31) - 1, 2**63, -(2**63), 10**30, 1.5, float("nan"), True, "3")
_FLOAT_HOSTILE = (
    0.0,
    -0.0,
    -1.0,
    1e-300,
    1e300,
    -1e300,
    float("inf"),
    float("-inf"),
    float("nan"),
    "1e999",
    "nan",
    True,
)
_SHAPE_HOSTILE: tuple[Any, ...] = (
    (),
    (0,),
    (-1,),
    (-2,),
    (-3, -4),
    (0, 0),
    (1, -1),
    (2**31,),
    (2**62, 2**62),
    (1.5,),
    ("a",),
    (None,),
    tuple(range(1, 12)),
    "(",
    "(2,3",
    3,
    -5,
)


def _bounded_int(c: Chooser, f: Field) -> int:
    lo = int(f.lower_bound) if f.lower_bound is not None else -3
    hi = int(f.upper_bound) if f.upper_bound is not None else lo + 8
    hi = min(hi, lo + 8) if c.chance(0.8) else hi
    return c.integer(lo, max(lo, hi))


def field_value(c: Chooser, f: Field, hostile: bool = True) -> Any:
    """A value for field `f`: a plausible one about half the time, else (if `hostile`)
    one of the wrong type, out of bounds or absurd."""
    if hostile and c.chance(0.08):
        return c.choice(_ANY_TYPE_HOSTILE)
    plausible = not hostile or c.chance(0.5)
    if f.enum is not None:
        return c.choice(sorted(f.enum)) if plausible else c.choice(["", "bogus", 3, None, "RELU"])
    if f.type is bool:
        return c.choice([True, False]) if plausible else c.choice([2, -1, "maybe", "1", 0.5])
    if f.type is int:
        if plausible:
            return _bounded_int(c, f)
        bounds = [b for b in (f.lower_bound, f.upper_bound) if b is not None]
        edges = [int(b) + d for b in bounds for d in (-1, 1)]
        return c.choice([*_INT_HOSTILE, *edges])
    if f.type is float:
        if plausible:
            lo = f.lower_bound if f.lower_bound is not None else -4.0
            hi = f.upper_bound if f.upper_bound is not None else lo + 8.0
            return lo + (min(hi, lo + 8.0) - lo) * c.integer(0, 100) / 100
        return c.choice(_FLOAT_HOSTILE)
    if f.type is str:
        return c.choice(["", "x", "0", "None", "é", "a" * 300])
    # tuples: Shape, FloatTuple, IntOrNoneTuple (and their tuple[...] aliases)
    name = f.type_info
    if plausible:
        n = c.integer(0, 4)
        if "float" in name:
            return tuple(c.integer(-20, 20) / 4 for _ in range(n))
        if "None" in name:
            return tuple(None if c.chance(0.3) else c.integer(-4, 6) for _ in range(n))
        return tuple(c.integer(-4, 6) for _ in range(n))
    return c.choice(_SHAPE_HOSTILE)


def default_value(c: Chooser, f: Field) -> Any:
    """The field's default, or a plausible value for a required field."""
    if f.default is not MISSING:
        return f.default
    return field_value(c, f, hostile=False)


def perturb_shape(c: Chooser, shape: tuple[int, ...]) -> tuple[int, ...]:
    """shape changed a little (a dim, an axis more or less) or a random small shape."""
    dims = list(shape)
    kind = c.integer(0, 6)
    if kind == 0 and dims:
        i = c.integer(0, len(dims) - 1)
        dims[i] = c.choice([0, 1, dims[i] + 1, max(dims[i] - 1, 0), dims[i] * 2])
    elif kind == 1:
        dims.insert(c.integer(0, len(dims)), c.choice([1, 2, 3]))
    elif kind == 2 and dims:
        dims.pop(c.integer(0, len(dims) - 1))
    elif kind == 3:
        dims = []
    elif kind == 4:
        dims = [c.integer(0, 6) for _ in range(c.integer(1, 6))]
    elif kind == 5:
        dims = [c.choice([1, 7, 64, 513]) for _ in range(c.integer(1, 2))]
    return fit(tuple(dims))


def fit(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Shrink the last dims until the shape has at most MAX_INPUT_ELEMENTS elements."""
    dims = list(shape)
    while math.prod(dims) > MAX_INPUT_ELEMENTS:
        i = max(range(len(dims)), key=lambda k: dims[k])
        dims[i] = max(1, dims[i] // 2)
    return tuple(dims)


VALUE_KINDS = ("uniform", "uniform", "uniform", "ints", "indices", "special", "zeros", "huge")


def array_values(c: Chooser, shape: tuple[int, ...], dtype: str, seed: int) -> np.ndarray:
    """Contents for an input: mostly ordinary numbers, sometimes NaN, huge or odd indices."""
    rng = np.random.default_rng(seed)
    kind = c.choice(VALUE_KINDS)
    if kind == "uniform":
        x = rng.uniform(-1, 1, size=shape)
    elif kind == "ints":
        x = rng.integers(-3, 10, size=shape).astype(np.float64)
    elif kind == "indices":  # out of range for any small axis, negative, fractional
        x = rng.choice([-(2.0**31), -7.0, -1.0, 0.5, 1e9, 2.0**40], size=shape)
    elif kind == "special":
        x = rng.choice([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0], size=shape)
    elif kind == "zeros":
        x = np.zeros(shape)
    else:
        x = rng.choice([1e30, -1e30, 3e38, 1e-30], size=shape)
    with np.errstate(all="ignore"):
        if np.dtype(dtype).kind in "iub":
            x = np.nan_to_num(x, nan=0, posinf=0, neginf=0)
            info = np.iinfo(np.int64)
            x = np.clip(x, info.min // 2, info.max // 2).astype(np.int64)
        return x.astype(dtype)


__all__ = [
    "FLOAT_DTYPES",
    "SUPPORTED_DTYPES",
    "array_values",
    "default_value",
    "field_value",
    "fit",
    "perturb_shape",
]
