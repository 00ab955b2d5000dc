"""kernel.vmath.trig: float32 tan against float64 NumPy, next to its zeros and poles, on
special values, across the block loop's libm hand-off, and through nd.tan."""

from __future__ import annotations

import math
import re

import numba
import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.kernel.vmath import trig


def _tan32(x: np.ndarray) -> np.ndarray:
    x = np.ascontiguousarray(x, np.float32)
    out = np.full_like(x, 7.0)
    trig.tan_into(x, out)
    return out


def _ulps(got: np.ndarray, x: np.ndarray) -> np.ndarray:
    """|got - tan(x)| in float32 ulps of the exact (float64) result."""
    with np.errstate(all="ignore"):
        exact = np.tan(x.astype(np.float64))
    spacing = np.spacing(np.abs(exact.astype(np.float32))).astype(np.float64)
    return np.abs(got.astype(np.float64) - exact) / spacing


@pytest.mark.parametrize("bound", [1.6, 100.0, 8192.0])
def test_within_three_ulps_below_the_bound(bound: float) -> None:
    x = np.random.default_rng(int(bound)).uniform(-bound, bound, 400_000).astype(np.float32)
    assert _ulps(_tan32(x), x).max() <= 3.0


@pytest.mark.parametrize("bound", [1e6, 3e38])
@pytest.mark.parametrize("in_place", [False, True])
def test_arrays_of_large_arguments_take_numpys_loop(bound: float, in_place: bool) -> None:
    """All arguments beyond the bound: the first FAR_LIMIT get float64 tan, rounded; from
    the block where the list is full on, the array is NumPy's float32 tan, bit for bit,
    also when out is x (nothing from that block on was written before NumPy read it)."""
    x = np.random.default_rng(1).uniform(-bound, bound, 100_000).astype(np.float32)
    out = x.copy() if in_place else np.empty_like(x)
    trig.tan_into(out if in_place else x, out)
    k = trig.FAR_LIMIT
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(out[k:], np.tan(x[k:]))
        rounded = np.tan(x[:k].astype(np.float64)).astype(np.float32)
    far = np.abs(x[:k]) > trig.TAN_NEAR_MAX  # all but a few below 8192 (the body's)
    np.testing.assert_array_equal(out[:k][far], rounded[far])
    assert _ulps(out[:k], x[:k]).max() <= 3.0


def test_in_place_calls_list_large_arguments_before_writing() -> None:
    rng = np.random.default_rng(2)
    x = rng.uniform(-3, 3, 10_000).astype(np.float32)
    x[rng.choice(x.size, 50, replace=False)] = rng.uniform(1e4, 1e7, 50).astype(np.float32)
    x[7] = np.nan
    expected = _tan32(x)
    y = x.copy()
    trig.tan_into(y, y)
    np.testing.assert_array_equal(y, expected)
    assert _ulps(y[8:], x[8:]).max() <= 3.0


def test_next_to_every_zero_and_pole_below_the_bound() -> None:
    """The float32 arguments nearest k pi/2: the reduction's result is tiny there and its
    relative error is tan's. (pi/2 split from math.pi, 6e-17 off, gave 35 ulp here.)"""
    k = np.arange(1, int(8192 / (math.pi / 2)) + 1, dtype=np.float64)
    centre = (k * (math.pi / 2)).astype(np.float32)
    up = np.nextafter(centre, np.float32(np.inf))
    down = np.nextafter(centre, np.float32(0))
    x = np.concatenate([centre, up, down, np.nextafter(up, np.float32(np.inf))])
    x = np.concatenate([x, -x])
    x = x[np.abs(x) <= trig.TAN_NEAR_MAX]
    ulps = _ulps(_tan32(x), x)
    assert ulps.max() <= 3.0, f"{ulps.max():.1f} ulp at x = {x[np.argmax(ulps)]!r}"


def test_special_values_match_c() -> None:
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1e-38], np.float32)
    got = _tan32(x)
    np.testing.assert_array_equal(np.signbit(got[:2]), [False, True])
    assert np.isnan(got[2:5]).all()
    np.testing.assert_array_equal(got[5:], x[5:])  # tan(x) = x to float32 precision


@pytest.mark.parametrize("n", [1, 2047, 2048, 2049, 10_000])
def test_arguments_beyond_the_bound_go_to_libm_in_any_block(n: int) -> None:
    """Large arguments at the start, middle and end of blocks, next to small ones, and
    NaN / inf (which the body handles) beside them."""
    rng = np.random.default_rng(n)
    x = rng.uniform(-3, 3, n).astype(np.float32)
    for i in {0, n // 2, n - 1, min(2048, n - 1)}:
        x[i] = rng.choice([1e4, -5e7, 3e38, 8192.5])
    if n > 4:
        x[1], x[2] = np.inf, np.nan
    got = _tan32(x)
    finite = np.isfinite(x)
    assert _ulps(got[finite], x[finite]).max() <= 3.0
    assert np.isnan(got[~finite]).all()
    far = finite & (np.abs(x) > trig.TAN_NEAR_MAX)
    assert _ulps(got[far], x[far]).max() <= 0.5  # float64 tan, rounded


def test_the_body_is_vectorised_and_calls_no_libm() -> None:
    near = trig.tan_near_f32.compiled("cpu")

    def loop(x, out):
        for i in range(x.size):
            out[i] = near(x[i])

    compiled = numba.njit(loop)
    x = np.ones(64, np.float32)
    compiled(x, np.empty_like(x))
    llvm = compiled.inspect_llvm(compiled.signatures[0])
    assert re.search(r"<(8|16) x float>", llvm)
    assert not re.search(r"call [^@]*@(tanf|tan|llvm\.tan)", llvm)


def test_nd_tan_float32_runs_the_block_loop_on_every_chunk() -> None:
    """Big enough for nnvmpy to split it across threads; large arguments in each chunk."""
    rng = np.random.default_rng(5)
    x = rng.uniform(-4, 4, 1_000_003).astype(np.float32)
    x[::99_991] = 1e9
    got = nv.nd.tan(nv.nd.array(x, dtype="float32")).asnumpy()
    assert got.dtype == np.float32
    assert _ulps(got, x).max() <= 3.0
    same = nv.nd.array(x, dtype="float32")
    nv.nd.tan(same, out=same)  # in place: out is the input's memory
    np.testing.assert_array_equal(same.asnumpy(), got)
    x64 = x.astype(np.float64)  # float64 stays NumPy's
    np.testing.assert_array_equal(
        nv.nd.tan(nv.nd.array(x64, dtype="float64")).asnumpy(), np.tan(x64)
    )


@pytest.mark.parametrize("parts", [1, 2, 3, 7])
@pytest.mark.parametrize("in_place", [False, True])
def test_parts_give_tan_intos_values_per_part(parts: int, in_place: bool) -> None:
    """ops.unary_math._tan_parts (what nd.tan runs on large float32 arrays): each part is
    tan_into of that part, its large arguments listed in its own row. One part holds
    more of them than FAR_LIMIT (NumPy's loop from there on), the others a few."""
    from nnvmpy.ops.unary_math import _tan_parts

    rng = np.random.default_rng(parts)
    x = rng.uniform(-4, 4, 60_001).astype(np.float32)
    x[::997] = 3e4  # a few in every part
    x[-(trig.FAR_LIMIT + 3000) :] = rng.uniform(1e5, 1e9, trig.FAR_LIMIT + 3000)
    want = np.empty_like(x)
    for p in range(parts):
        lo, hi = x.size * p // parts, x.size * (p + 1) // parts
        trig.tan_into(x[lo:hi], want[lo:hi])
    out = x.copy() if in_place else np.full_like(x, 123.0)
    _tan_parts(out if in_place else x, out, parts)
    np.testing.assert_array_equal(out, want)
