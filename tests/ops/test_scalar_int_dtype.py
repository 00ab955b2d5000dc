"""Integer arrays meet a float scalar as MXNet's DType(scalar): truncated, then wrapped.

MXNet 1.9.1 converts the scalar of its binary-scalar ops to the array's dtype before the
arithmetic (measured with .mxenv: int32 [3, 1, 7, -7] * 2.5 is [6, 2, 14, -14], `x >= 2.5`
is `x >= 2`, uint8 meets -1.7 as 255). The reference here is that rule written with NumPy
in int64 and wrapped into the dtype, not the code under test.

Not matched: where a division's quotient leaves the dtype's range (int8 -128 / -1) MXNet's
integer division wraps (-128) while our loop divides in floating point and the conversion
saturates (127); pow of integers overflowing the dtype likewise differs.
"""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.ops._scalar_param import ScalarParam

nd, sym = nv.nd, nv.sym
X = {
    "int32": np.array([3, 1, 7, -7, 0, 2, 1000, -1000], np.int32),
    "uint8": np.array([3, 1, 7, 200, 0, 2, 255, 128], np.uint8),
    "int8": np.array([3, 1, 7, -7, 0, 2, 127, -127], np.int8),  # -128 / -1: see the note below
    "int64": np.array([3, 1, 7, -7, 0, 2, 2**40, -(2**40)], np.int64),
}


def _mxnet_scalar(s: float, dtype: np.dtype) -> int:
    """C's (DType)(double) through a 64-bit integer: truncate, then keep the low bits."""
    return int(np.array(int(s), np.int64).astype(dtype))


def _floor_mod(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    b0 = np.where(b == 0, 1, b)
    return np.where(b == 0, 0, np.mod(a, b0))


def _trunc_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    b0 = np.where(b == 0, 1, b)
    q = np.abs(a) // np.abs(b0) * np.sign(a) * np.sign(b0)
    return np.where(b == 0, 0, q)


REFERENCE = {
    "_plus_scalar": lambda x, s: x + s,
    "_minus_scalar": lambda x, s: x - s,
    "_rminus_scalar": lambda x, s: s - x,
    "_mul_scalar": lambda x, s: x * s,
    "_div_scalar": _trunc_div,
    "_mod_scalar": _floor_mod,
    "_rmod_scalar": lambda x, s: _floor_mod(np.broadcast_to(s, x.shape), x),
    "_maximum_scalar": np.maximum,
    "_minimum_scalar": np.minimum,
    "_greater_scalar": lambda x, s: (x > s) * 1,
    "_greater_equal_scalar": lambda x, s: (x >= s) * 1,
    "_lesser_scalar": lambda x, s: (x < s) * 1,
    "_lesser_equal_scalar": lambda x, s: (x <= s) * 1,
    "_equal_scalar": lambda x, s: (x == s) * 1,
    "_not_equal_scalar": lambda x, s: (x != s) * 1,
}


# every op on int32 and uint8; int8 and int64 through the wrapping ops (a compile each)
CASES = [(op, dt) for op in sorted(REFERENCE) for dt in ("int32", "uint8")] + [
    (op, dt)
    for op in ("_mul_scalar", "_plus_scalar", "_greater_equal_scalar")
    for dt in ("int8", "int64")
]


@pytest.mark.parametrize("scalar", [2.5, -1.7, 3.999, -0.5])
@pytest.mark.parametrize(("op", "dtype"), CASES)
def test_integer_array_meets_the_truncated_scalar(op: str, dtype: str, scalar: float) -> None:
    x = X[dtype]
    s = _mxnet_scalar(scalar, x.dtype)
    if op == "_div_scalar" and s == 0:
        pytest.skip("MXNet stops with SIGFPE on an integer division by zero")
    got = getattr(nd._internal, op)(nd.array(x, dtype=x.dtype), scalar=scalar).asnumpy()
    want = REFERENCE[op](x.astype(np.int64), np.int64(s))
    assert got.dtype == x.dtype
    np.testing.assert_array_equal(got, np.asarray(want).astype(x.dtype))


def test_float_arrays_keep_the_fraction() -> None:
    x = np.float32([3, 1, -7])
    got = nd._internal._mul_scalar(nd.array(x), scalar=2.5).asnumpy()
    np.testing.assert_array_equal(got, x * np.float32(2.5))


def test_is_int_false_gives_float64_with_the_whole_scalar() -> None:
    # MXNet 1.9: is_int=False types an integer array's result float64 and keeps 2.5
    x = X["int32"]
    got = nd._internal._mul_scalar(nd.array(x, dtype=np.int32), scalar=2.5, is_int=False)
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got.asnumpy(), x * 2.5)


@pytest.mark.parametrize(
    ("value", "dtype", "want"),
    [
        (2.9, np.int32, 2),
        (-2.9, np.int32, -2),
        (-1.7, np.uint8, 255),
        (300.0, np.uint8, 44),
        (130.0, np.int8, -126),
        (2.0**31, np.int32, -(2**31)),
        (float("inf"), np.int32, -(2**31)),
        (float("nan"), np.uint8, 0),
        (2.5, np.float32, 2.5),
        (3, np.int32, 3),
    ],
)
def test_dtype_scalar_is_a_c_cast(value: float, dtype: type, want: float) -> None:
    assert ScalarParam.dtype_scalar(value, np.dtype(dtype)) == want


def test_a_fused_integer_chain_matches_the_unfused_ops() -> None:
    # fusion passes each member's scalar through the same conversion
    x = X["int32"]
    data = sym.Variable("data")
    net = ((data * 2.5) + 1.7) >= 6.5
    outs = []
    for fuse in ("1", "0"):
        with nv.test_utils.environment("NNVMPY_FUSION", fuse):
            exe = net.simple_bind(nv.cpu(), data=x.shape, type_dict={"data": np.int32})
            exe.arg_dict["data"][:] = x
            outs.append(exe.forward()[0].asnumpy())
    want = ((x.astype(np.int64) * 2 + 1) >= 6) * 1
    np.testing.assert_array_equal(outs[0], want)
    np.testing.assert_array_equal(outs[1], want)
