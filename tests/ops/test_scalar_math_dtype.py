"""mod, hypot and power on float32 compute in float32 and give MXNet 1.9.1's values.

The MXNet values below were measured with .mxenv (MXNet 1.9.1) on the same inputs;
MXNet computes `x op DType(scalar)`, mod with fmod in double (mshadow_op::mod) and hypot
with C's hypot. CPU only: the GPU launcher still passes the scalar as float64.
"""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.kernel.cpu import SERIAL_CUTOFF
from nnvmpy.ops import elemwise_scalar

nd = nv.nd
F = np.float32
NAN, INF = np.nan, np.inf

# lhs, rhs and MXNet 1.9.1's lhs % rhs (elemwise _mod and broadcast_mod agree),
# _mod_scalar(lhs, scalar=0.7) and _rmod_scalar(lhs, scalar=0.7), as float32
MOD_TABLE = [
    (5.0, 3.0, 2.0, 0.10000008344650269, 0.699999988079071),
    (-5.0, 3.0, 1.0, 0.5999999046325684, -4.300000190734863),
    (5.0, -3.0, -1.0, 0.10000008344650269, 0.699999988079071),
    (-5.0, -3.0, -2.0, 0.5999999046325684, -4.300000190734863),
    (0.0, 3.0, 0.0, 0.0, 0.0),
    (-0.0, 3.0, -0.0, -0.0, 0.0),
    (2.0, 1.0, 0.0, 0.6000000238418579, 0.699999988079071),
    (-2.0, 1.0, 0.0, 0.09999996423721313, -1.2999999523162842),
    (2.0, -1.0, 0.0, 0.6000000238418579, 0.699999988079071),
    (-2.0, -1.0, -0.0, 0.09999996423721313, -1.2999999523162842),
    (
        3.000000645916e-39,
        0.699999988079071,
        3.000000645916e-39,
        3.000000645916e-39,
        1.2767286360401981e-39,
    ),
    (-1.000000013351432e-10, 1.0, 1.0, 0.699999988079071, -6.693104404043027e-11),
    (INF, 3.0, NAN, NAN, 0.699999988079071),
    (-INF, 3.0, NAN, NAN, -INF),
    (NAN, 3.0, NAN, NAN, NAN),
    (5.0, INF, 5.0, 0.10000008344650269, 0.699999988079071),
    (-5.0, INF, INF, 0.5999999046325684, -4.300000190734863),
    (5.0, NAN, NAN, 0.10000008344650269, 0.699999988079071),
    (7.5, 0.0, 0.0, 0.5000001192092896, 0.699999988079071),
]
MOD_LHS, MOD_RHS, MXNET_MOD, MXNET_MOD_07, MXNET_RMOD_07 = (F(c) for c in zip(*MOD_TABLE))
# rmod entries 10 and 11 (0.7 % 3e-39, 0.7 % -1e-10) have quotients above 2**24, where
# floor_mod is not exact (ops/_mod.py: it gives 0.0 and -6.693101628e-11); they are left out
RMOD_EXACT = np.array([k not in (10, 11) for k in range(len(MOD_LHS))])


def _same_bits(got: np.ndarray, want: np.ndarray) -> None:
    """Equal values with equal zero signs; NaN matches NaN."""
    got, want = np.asarray(got, F), np.asarray(want, F)
    same = (got.view(np.int32) == want.view(np.int32)) | (np.isnan(got) & np.isnan(want))
    assert same.all(), f"at {np.nonzero(~same)[0]}: got {got[~same]}, want {want[~same]}"


def _tiled(a: np.ndarray, n: int) -> nv.NDArray:
    return nd.array(np.resize(a, n))


@pytest.mark.parametrize("n", [len(MOD_LHS), SERIAL_CUTOFF])  # serial and parallel loops
def test_mod_edge_values_are_mxnets(n: int) -> None:
    k = len(MOD_LHS)
    lhs, rhs = _tiled(MOD_LHS, n), _tiled(MOD_RHS, n)
    _same_bits(nd._internal._mod(lhs, rhs).asnumpy()[:k], MXNET_MOD)
    _same_bits(nd.broadcast_mod(lhs, rhs).asnumpy()[:k], MXNET_MOD)
    _same_bits(nd._internal._mod_scalar(lhs, scalar=0.7).asnumpy()[:k], MXNET_MOD_07)
    got = nd._internal._rmod_scalar(lhs, scalar=0.7).asnumpy()[:k]
    _same_bits(got[RMOD_EXACT], MXNET_RMOD_07[RMOD_EXACT])


def test_mod_by_a_zero_scalar_is_zero_as_mxnet() -> None:
    # MXNet 1.9.1: _mod_scalar(x, scalar=0) is 0 for every x, inf and nan included
    got = nd._internal._mod_scalar(nd.array(MOD_LHS), scalar=0.0).asnumpy()
    _same_bits(got, np.zeros_like(MOD_LHS))
    # ... and _rmod_scalar(x, scalar=0) is 0 % x: 0 except 0 % nan
    got = nd._internal._rmod_scalar(nd.array(MOD_LHS), scalar=0.0).asnumpy()
    np.testing.assert_array_equal(got, np.where(np.isnan(MOD_LHS), NAN, 0))


@pytest.mark.parametrize("n", [1000, SERIAL_CUTOFF])
@pytest.mark.parametrize("s", [0.1, -0.7, 3.0])
def test_mod_scalar_is_numpy_in_float32(n: int, s: float) -> None:
    x = np.random.default_rng(5).uniform(-100, 100, n).astype(F)
    want = np.mod(x, F(s))
    got = nd._internal._mod_scalar(nd.array(x), scalar=s).asnumpy()
    np.testing.assert_array_equal(got, want)  # NumPy's zeros take b's sign; none occur here
    rgot = nd._internal._rmod_scalar(nd.array(x), scalar=s).asnumpy()
    np.testing.assert_array_equal(rgot, np.mod(F(s), x))
    if F(s) != s:  # computing with the float64 scalar gives other values: the test can fail
        assert (np.mod(x.astype(np.float64), s).astype(F) != want).any()


def test_mod_of_arrays_is_numpy_below_2_to_the_24() -> None:
    rng = np.random.default_rng(6)
    a = (rng.uniform(-1, 1, 50_000) * 10.0 ** rng.integers(-3, 7, 50_000)).astype(F)
    b = (rng.choice([-1, 1], 50_000) * rng.uniform(0.5, 4, 50_000)).astype(F)
    assert np.abs(a / b).max() < 2**24
    got = nd._internal._mod(nd.array(a), nd.array(b)).asnumpy()
    want = np.mod(a, b)
    np.testing.assert_array_equal(got, want)  # == ignores the zero sign, checked above
    got = nd.broadcast_mod(nd.array(a.reshape(100, 500)), nd.array(b[:500])).asnumpy()
    np.testing.assert_array_equal(got, np.mod(a.reshape(100, 500), b[:500]))


def test_float16_mod_scalar_rounds_the_scalar_to_float16_as_mxnet() -> None:
    # MXNet 1.9.1: _mod_scalar(float16 [1.7, -1.7, 1000], scalar=0.1)
    x = nd.array(np.float16([1.7, -1.7, 1000]), dtype=np.float16)
    got = nd._internal._mod_scalar(x, scalar=0.1).asnumpy()
    np.testing.assert_array_equal(
        got, np.float16([0.0006103515625, 0.099365234375, 0.044189453125])
    )


def test_integer_mod_scalar_is_unchanged() -> None:
    x = np.arange(-7, 8, dtype=np.int32)
    got = nd._internal._mod_scalar(nd.array(x, dtype=np.int32), scalar=3).asnumpy()
    np.testing.assert_array_equal(got, np.mod(x, 3))
    got = nd._internal._mod_scalar(nd.array(x, dtype=np.int32), scalar=0).asnumpy()
    np.testing.assert_array_equal(got, np.zeros_like(x))  # MXNet 1.9.1: [0, 0, 0]


def test_hypot_scalar_is_float32_hypot_as_mxnet() -> None:
    # MXNet 1.9.1: _hypot_scalar([1.1, 3.3, 100.7], scalar=0.1)
    x = nd.array(F([1.1, 3.3, 100.7]))
    got = nd._internal._hypot_scalar(x, scalar=0.1).asnumpy()
    # MXNet's std::hypot is correctly rounded; vmath's float32 hypot (an FMA'd sum of
    # squares, power-of-two scaling) is within one ulp of it, at ~4x less cost than
    # rounding a float64 hypot
    mxnet = F([1.1045361757278442, 3.3015148639678955, 100.7000503540039])
    np.testing.assert_array_max_ulp(got, mxnet, maxulp=1)
    assert got.dtype == np.float32
    r = np.random.default_rng(7).uniform(-1e25, 1e25, 1 << 16).astype(F)
    got = nd._internal._hypot_scalar(nd.array(r), scalar=3e24).asnumpy()
    np.testing.assert_array_max_ulp(got, np.hypot(r, F(3e24)), maxulp=1)
    assert np.isfinite(got).all()  # r * r overflows float32


def test_power_scalar_takes_a_float32_exponent() -> None:
    # MXNet 1.9.1: _power_scalar([2, 0.5, -2, 0, 0], scalar=0.3)
    x = F([2.0, 0.5, -2, 0, 0])
    got = nd._internal._power_scalar(nd.array(x), scalar=0.3).asnumpy()
    np.testing.assert_array_equal(got, F([1.2311444282531738, 0.812252402305603, NAN, 0, 0]))
    # the kernel body (fusion, the GPU) as well: x ** float32(s) within NumPy's accuracy
    r = np.random.default_rng(8).uniform(0.1, 10, 1000).astype(F)
    out = np.empty_like(r)
    elemwise_scalar._power.launch(None, out, "write", r, 2.7)
    np.testing.assert_array_max_ulp(out, np.power(r, F(2.7)), maxulp=2)


# MXNet 1.9.1's _power_scalar(POWER_X, scalar=s) for the exponents with an exact path
POWER_X = F([-0.0, -INF, 4, -4, 0.0, INF, NAN, 1e-45])
MXNET_POWER = {
    0.5: F([0.0, INF, 2.0, NAN, 0.0, INF, NAN, 3.743392e-23]),  # C's powf: not sqrt at -0, -inf
    -1.0: F([-INF, -0.0, 0.25, -0.25, INF, 0.0, NAN, INF]),
    2.0: F([0.0, INF, 16.0, 16.0, 0.0, INF, NAN, 0.0]),
}
# MXNet 1.9.1's _rpower_scalar(RPOWER_X, scalar=s)
RPOWER_X = F([0.0, -0.0, INF, -INF, NAN, 1.5, -3.7, 100, -100, 0.1])
MXNET_RPOWER = {
    3.0: [1.0, 1.0, INF, 0.0, NAN, 5.196152210235596, 0.017165297642350197, INF, 0.0, 1.1161231994],
    0.1: [1.0, 1.0, 0.0, INF, NAN, 0.03162277862429619, 5011.87255859375, 0.0, INF, 0.79432821273],
    1.0: [1.0] * 10,
    0.0: [1.0, 1.0, 0.0, INF, NAN, 0.0, INF, 0.0, INF, 0.0],
    -2.0: [1.0, 1.0, INF, 0.0, NAN, NAN, NAN, 1.2676506002282294e30, 7.888609052210118e-31, NAN],
}


@pytest.mark.parametrize("n", [len(POWER_X), SERIAL_CUTOFF])
@pytest.mark.parametrize("s", sorted(MXNET_POWER))
def test_exact_powers_are_mxnets_bit_for_bit(n: int, s: float) -> None:
    """x ** 2, x ** -1 and x ** 0.5 are one correctly rounded operation, as powf's result."""
    got = nd._internal._power_scalar(_tiled(POWER_X, n), scalar=s).asnumpy()[: len(POWER_X)]
    _same_bits(got, MXNET_POWER[s])
    x = np.random.default_rng(8).uniform(-50, 50, 5000).astype(F)
    want = {2.0: x * x, -1.0: F(1) / x, 0.5: np.sqrt(np.abs(x)) * np.where(x < 0, NAN, 1)}[s]
    _same_bits(nd._internal._power_scalar(nd.array(x), scalar=s).asnumpy(), want.astype(F))
    x64 = x.astype(np.float64)  # float64 arrays take the same kernels
    got64 = nd._internal._power_scalar(nd.array(x64, dtype=np.float64), scalar=s).asnumpy()
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(got64, np.power(x64, s))


@pytest.mark.parametrize("n", [len(RPOWER_X), SERIAL_CUTOFF])
@pytest.mark.parametrize("s", sorted(MXNET_RPOWER))
def test_rpower_scalar_is_mxnets_within_an_ulp(n: int, s: float) -> None:
    """s ** x through vmath.exp2_split for 0 < s != 1 (within 1.5 ulp of the exact
    power, C's powf within 0.5), through NumPy for the other bases (bit for bit)."""
    got = nd._internal._rpower_scalar(_tiled(RPOWER_X, n), scalar=s).asnumpy()[: len(RPOWER_X)]
    want = F(MXNET_RPOWER[s])
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_max_ulp(got[~np.isnan(got)], want[~np.isnan(want)], maxulp=1)
    if not 0 < s != 1:
        _same_bits(got, want)


def test_rpower_scalar_rounds_the_base_to_float32_as_mxnet() -> None:
    """MXNet computes DType(s) ** x: 0.1 is 0.100000001490116 in float32, and at x = -38
    the difference is 5.7e-7 relative (~10 ulp)."""
    x = nd.array(F([-38.0, 30.5]))
    got = nd._internal._rpower_scalar(x, scalar=0.1).asnumpy()
    exact = np.float64(F(0.1)) ** np.float64([-38.0, 30.5])
    np.testing.assert_array_max_ulp(got, exact.astype(F), maxulp=1)
    assert abs(got[0] / 0.1**-38.0 - 1) > 4e-7  # the float64 base gives other values
