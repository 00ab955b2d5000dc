"""kernel.vmath.blocks: the block loops give the full bodies' bits on any mix of
arguments, their block test is right at every edge, and the ops run them."""

from __future__ import annotations

import functools
from typing import Any

import numba
import numpy as np
import pytest
from scipy import special

import nnvmpy as nv
from nnvmpy.kernel import vmath

blocks = vmath.blocks
B = blocks.BLOCK
LOOPS = {
    "gamma": (blocks.gamma_into, vmath.gamma, special.gamma, (0.2, 6.4)),
    "gammaln": (blocks.gammaln_into, vmath.gammaln, special.gammaln, (0.2, 1e30)),
    "erfinv": (blocks.erfinv_into, vmath.erfinv, special.erfinv, (-0.99, 0.99)),
}
# arguments outside each light region (and the region's own edges)
EDGES = {
    "gamma": [6.5, np.nextafter(6.5, 0), 7.0, 40.0, -0.5, -3.2, 0.0, -0.0, 1e-45, np.inf],
    "gammaln": [0.0, -0.0, 1e-45, -1e-45, -2.5, 3e38, np.inf, -np.inf, 6.5, 1e-30],
    "erfinv": [0.99, np.nextafter(0.99, 1), -0.995, 0.9999, 1.0, -1.0, 1.5, 0.0, -0.0],
}


@functools.cache
def _full_loop(name: str) -> Any:
    """The full branch-free body over x, one element at a time (compiled once: gamma's
    body takes seconds)."""
    body = LOOPS[name][1].compiled("cpu")

    @numba.njit(error_model="numpy")
    def loop(x, out):
        for i in range(x.size):
            out[i] = body(x[i])

    return loop


def _full(name: str, x: np.ndarray) -> np.ndarray:
    out = np.empty_like(x)
    _full_loop(name)(x, out)
    return out


def _blocks(name: str, x: np.ndarray) -> np.ndarray:
    out = np.full_like(x, 123.0)
    LOOPS[name][0].compiled("cpu")(x, out)
    return out


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return np.array_equal(a.view(np.int32), b.view(np.int32))


@pytest.mark.parametrize("name", sorted(LOOPS))
def test_light_blocks_match_the_full_body_and_scipy(name: str) -> None:
    lo, hi = LOOPS[name][3]
    x = np.random.default_rng(0).uniform(lo, min(hi, 30.0), 10_000).astype(np.float32)
    got = _blocks(name, x)
    assert _same_bits(got, _full(name, x))
    exact = LOOPS[name][2](x.astype(np.float64))
    ulps = np.abs(got - exact) / np.spacing(np.abs(exact.astype(np.float32)))
    assert ulps.max() <= 4.0


@pytest.mark.parametrize("name", sorted(LOOPS))
@pytest.mark.parametrize("n", [1, B - 1, B, B + 1, 6000])
def test_one_argument_outside_sends_its_block_to_the_full_body(name: str, n: int) -> None:
    lo, hi = LOOPS[name][3]
    rng = np.random.default_rng(n)
    for edge in [*EDGES[name], np.nan]:
        for at in {0, n // 2, n - 1, min(B, n - 1)}:
            x = rng.uniform(lo, min(hi, 30.0), n).astype(np.float32)
            x[at] = edge
            with np.errstate(all="ignore"):
                got, want = _blocks(name, x), _full(name, x)
            assert _same_bits(got, want), f"{name}({edge}) at {at} of {n}"


@pytest.mark.parametrize("n", [B, 6000])
@pytest.mark.parametrize("low", [0.05, 0.5])
def test_gammaln_near_blocks_match_the_full_body(n: int, low: float) -> None:
    """gammaln's block classes below 6.5, 0.5 <= x (the polynomial pieces alone) and
    0 < x (a log too): the full body's bits, also when one argument at a region's edge
    sends its block to another class."""
    rng = np.random.default_rng(n)
    x = rng.uniform(low, 6.45, n).astype(np.float32)
    x[:3] = [0.5, 1.25, 2.75]  # the pieces' edges
    assert _same_bits(_blocks("gammaln", x), _full("gammaln", x))
    exact = special.gammaln(x.astype(np.float64))
    ulps = np.abs(_blocks("gammaln", x) - exact) / np.spacing(np.abs(exact.astype(np.float32)))
    assert ulps.max() <= 3.5
    edges = (np.nextafter(np.float32(0.5), np.float32(0)), 0.25, 1e-45, -1.0, np.inf)
    for edge in (np.nextafter(np.float32(6.5), np.float32(0)), 6.5, 7.0, *edges):
        y = x.copy()
        y[n // 2] = edge
        with np.errstate(all="ignore"):
            assert _same_bits(_blocks("gammaln", y), _full("gammaln", y)), edge


@pytest.mark.parametrize("n", [B, 6000])
def test_gamma_low_blocks_match_the_full_body(n: int) -> None:
    """gamma's blocks of 0 < x < 4.5 (two shifts, not four): the full body's bits, also
    when one argument at the class's edge sends its block to the next class."""
    rng = np.random.default_rng(n)
    x = rng.uniform(0.05, 4.49, n).astype(np.float32)
    x[:4] = [1.0, 2.5, 3.5, np.nextafter(np.float32(4.5), np.float32(0))]  # shift edges
    assert _same_bits(_blocks("gamma", x), _full("gamma", x))
    exact = special.gamma(x.astype(np.float64))
    ulps = np.abs(_blocks("gamma", x) - exact) / np.spacing(np.abs(exact.astype(np.float32)))
    assert ulps.max() <= 3.5
    for edge in (4.5, 5.7, np.nextafter(np.float32(6.5), np.float32(0)), 6.5, 40.0, -0.5, 0.0):
        y = x.copy()
        y[n // 2] = edge
        with np.errstate(all="ignore"):
            assert _same_bits(_blocks("gamma", y), _full("gamma", y)), edge


@pytest.mark.parametrize(
    ("mask", "lo", "hi", "predicate"),
    [
        (blocks.ALL_BITS, blocks.SMALLEST, blocks.GAMMA_LOW_MAX, lambda x: (x > 0) & (x < 4.5)),
        (blocks.ALL_BITS, blocks.SMALLEST, blocks.GAMMA_NEAR_MAX, lambda x: (x > 0) & (x < 6.5)),
        (blocks.ALL_BITS, blocks.SMALLEST, blocks.FINITE_MAX, lambda x: (x > 0) & (x < np.inf)),
        (blocks.ABS_BITS, 0, blocks.ERFINV_CENTRAL_BITS, lambda x: np.abs(x) <= np.float32(0.99)),
    ],
)
def test_block_test_matches_the_float_comparison(mask, lo, hi, predicate) -> None:
    """any_outside against NumPy's comparisons, one value at a time, at every edge."""
    any_outside = blocks.any_outside.compiled("cpu")
    values = np.array(
        [
            0.0,
            -0.0,
            1e-45,
            -1e-45,
            0.5,
            0.99,
            1.0,
            4.5,
            4.499999,
            6.5,
            6.499999,
            7.0,
            3.4e38,
            -3.4e38,
            np.inf,
            -np.inf,
            np.nan,
            -np.nan,
            -0.99,
            -1.0,
            -6.0,
            1e-38,
        ],
        np.float32,
    )
    values = np.concatenate([values, np.nextafter(values, np.float32(np.inf))])
    for v in values:
        x = np.full(5, 0.5, np.float32)
        x[3] = v
        with np.errstate(invalid="ignore"):
            inside = bool(predicate(np.float32(v)))
        assert any_outside(x, mask, np.int32(lo), hi) == (not inside), repr(v)


@pytest.mark.parametrize("name", sorted(LOOPS))
def test_ops_run_the_block_loops_on_float32(name: str) -> None:
    """nd.<op> on an array big enough to be split across threads, with arguments outside
    the light region in some blocks: the full body's bits everywhere."""
    lo, hi = LOOPS[name][3]
    rng = np.random.default_rng(3)
    x = rng.uniform(lo, min(hi, 30.0), 300_001).astype(np.float32)
    x[::50_000] = np.float32(EDGES[name][2])
    got = getattr(nv.nd, name)(nv.nd.array(x, dtype="float32")).asnumpy()
    with np.errstate(all="ignore"):
        assert _same_bits(got, _full(name, x))
    same = nv.nd.array(x, dtype="float32")
    getattr(nv.nd, name)(same, out=same)  # in place: out is the input's memory
    assert _same_bits(same.asnumpy(), got)
    x64 = x.astype(np.float64)  # other dtypes keep the kernel (libm)
    got64 = getattr(nv.nd, name)(nv.nd.array(x64, dtype="float64")).asnumpy()
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(got64, LOOPS[name][2](x64), rtol=1e-11, atol=1e-15)


@pytest.mark.parametrize("name", sorted(LOOPS))
@pytest.mark.parametrize("parts", [1, 2, 3, 7])
def test_parts_kernels_give_the_block_loops_bits(name: str, parts: int) -> None:
    """ops.special's _<name>_parts (the block loop over contiguous parts in numba's
    threads, what nd.<name> runs on large float32 arrays) against one block loop over
    the whole array, also in place; parts that split blocks, and more parts than cores."""
    from nnvmpy.ops import special

    lo, hi = LOOPS[name][3]
    x = np.random.default_rng(parts).uniform(lo, min(hi, 30.0), 100_003).astype(np.float32)
    x[::9_999] = np.float32(EDGES[name][2])
    want = _blocks(name, x)
    out = np.full_like(x, 123.0)
    parts_kernel = getattr(special, f"_{name}_parts")
    with np.errstate(all="ignore"):
        parts_kernel(x, out, parts)
        assert _same_bits(out, want)
        same = x.copy()
        parts_kernel(same, same, parts)
    assert _same_bits(same, want)


def test_erfinv_c_is_minus_log_to_its_absolute_bound():
    """erfinv's w = -log q comes from a shorter log (f32.erfinv_c) that promises 5e-8
    absolute, not relative, precision: check it over q's whole range against float64."""
    from nnvmpy.kernel.vmath.f32 import erfinv_c

    c_of = erfinv_c.compiled("cpu")

    @numba.njit
    def loop(q, out):
        for i in range(q.size):
            out[i] = c_of(q[i])

    rng = np.random.default_rng(3)
    q = np.concatenate([rng.uniform(0, 1, 200_000), 10 ** rng.uniform(-7, 0, 200_000)])
    q = np.append(q, [1.0, 2 / 3, np.nextafter(2 / 3, 0), 1 / 3, 0.5]).astype(np.float32)
    c = np.empty_like(q)
    loop(q, c)
    log_q = np.log(q.astype(np.float64))
    exact = -2.5 - log_q
    # beyond the bound: the roundings of log q and of c (half an ulp of each)
    ulp = [np.spacing(np.abs(v).astype(np.float32)) for v in (log_q, exact)]
    rounding = (ulp[0] + ulp[1]) / 2
    assert (np.abs(c - exact) - rounding).max() < 1e-7
