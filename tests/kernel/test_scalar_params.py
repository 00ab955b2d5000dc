"""Scalar parameters on the CPU reach the kernel in the array's dtype (MXNet's DType(scalar)).

A Python float is float64; for a float32 `out` the loop converts it to float32 first, so
`x * 0.1` is NumPy's `x * np.float32(0.1)` (one float32 rounding), not float32(x * 0.1)
computed in float64. float16 arrays compute in float32 with the scalar rounded to
float16; float64 and integer outputs see the scalar as it is.
"""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy.kernel as K
from nnvmpy.kernel.cpu import SERIAL_CUTOFF


@K.elementwise
def _scale(x, s):
    return x * s


@K.elementwise
def _shift_scale(x, s, t):
    return (x + t) * s


SIZES = [7, SERIAL_CUTOFF + 1]  # the serial loop and the parallel one


def _x(n: int, dtype: type = np.float32) -> np.ndarray:
    return np.random.default_rng(3).uniform(-10, 10, n).astype(dtype)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("req", ["write", "add"])
def test_float32_out_gets_a_float32_scalar(n: int, req: str) -> None:
    x = _x(n)
    out = np.ones(n, np.float32)
    _scale.launch(None, out, req, x, 0.1)
    want = x * np.float32(0.1) + (np.float32(1) if req == "add" else np.float32(0))
    np.testing.assert_array_equal(out, want)
    # the float64 product rounded once differs from the float32 one somewhere: the check
    # above would fail if the loop still computed in float64
    assert (np.float32(x.astype(np.float64) * 0.1) != x * np.float32(0.1)).any()


@pytest.mark.parametrize("n", SIZES)
def test_imperative_plan_and_numpy_scalars_take_the_same_rule(n: int) -> None:
    x = _x(n)
    want = (x + np.float32(0.3)) * np.float32(0.7)
    planned = _shift_scale.cpu_launcher("write", ((n,), x.dtype), [((n,), x.dtype)], (0.7, 0.3))
    assert planned is not None
    out = np.empty_like(x)
    planned([x], [out])
    np.testing.assert_array_equal(out, want)
    out2 = np.empty_like(x)  # NumPy scalars go through the checked path
    _shift_scale.launch(None, out2, "write", x, np.float64(0.7), np.float64(0.3))
    np.testing.assert_array_equal(out2, want)


def test_float64_out_keeps_the_float64_scalar() -> None:
    x = _x(100, np.float64)
    out = np.empty_like(x)
    _scale.launch(None, out, "write", x, 0.1)
    np.testing.assert_array_equal(out, x * 0.1)


def test_float16_computes_in_float32_with_the_scalar_rounded_to_float16() -> None:
    # MXNet computes x op half_t(scalar): 1.7 % 0.1 in float16 is 6.1035e-4 in MXNet 1.9.1;
    # here (x + t) * s with t, s rounded to float16 and the arithmetic in float32
    x = _x(50, np.float16)
    out = np.empty_like(x)
    _shift_scale.launch(None, out, "write", x, 0.7, 0.3)
    s, t = np.float32(np.float16(0.7)), np.float32(np.float16(0.3))
    np.testing.assert_array_equal(out, ((x.astype(np.float32) + t) * s).astype(np.float16))


def test_integer_out_keeps_the_python_float() -> None:
    # unchanged for integers: the product is computed in float64 and truncated on store
    x = np.arange(-5, 6, dtype=np.int32)
    out = np.empty_like(x)
    _scale.launch(None, out, "write", x, 2.5)
    np.testing.assert_array_equal(out, np.trunc(x * 2.5).astype(np.int32))
