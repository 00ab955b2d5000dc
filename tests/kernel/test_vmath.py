"""kernel.vmath: vectorised float32 math against float64 references, special values, the
other types' libm path, and that a float32 loop really is vectorised (no libm calls)."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from scipy import special

from nnvmpy import kernel
from nnvmpy.kernel import vmath

F32_EPS = float(np.finfo(np.float32).eps)


def _kernel(fn: vmath.VectorFunction) -> kernel.ElementwiseKernel:
    """An element-wise kernel whose body calls fn (a global of the body, as ops do)."""
    arity = fn.py_func.__code__.co_argcount
    names = ", ".join(f"a{k}" for k in range(arity))
    namespace = {"vf": fn}
    exec(f"def body({names}):\n    return vf({names})\n", namespace)
    return kernel.elementwise(namespace["body"])


def _log_uniform(rng: np.random.Generator, lo: float, hi: float, n: int) -> np.ndarray:
    return np.exp(rng.uniform(np.log(lo), np.log(hi), n))


def _domain(name: str, rng: np.random.Generator, n: int = 20000) -> np.ndarray:
    """Random points over the function's float32 range, both signs where it has them."""
    sym = rng.choice([-1.0, 1.0], n)
    domains = {
        "exp": rng.uniform(-104, 89, n),
        "expm1": np.concatenate(
            [rng.uniform(-20, 89, n // 2), sym[: n // 2] * _log_uniform(rng, 1e-44, 1, n // 2)]
        ),
        "log": _log_uniform(rng, 1e-44, 3e38, n),
        "log2": _log_uniform(rng, 1e-44, 3e38, n),
        "log10": _log_uniform(rng, 1e-44, 3e38, n),
        "log1p": np.concatenate(
            [rng.uniform(-0.999, 1, n // 2), _log_uniform(rng, 1, 1e30, n // 2)]
        ),
        "sinh": rng.uniform(-89.4, 89.4, n),
        "cosh": rng.uniform(-89.4, 89.4, n),
        "tanh": rng.uniform(-12, 12, n),
        "sigmoid": rng.uniform(-100, 100, n),
        "asinh": sym * _log_uniform(rng, 1e-30, 3e38, n),
        "acosh": 1 + _log_uniform(rng, 1e-7, 3e38, n),
        "atanh": rng.uniform(-1, 1, n),
        "atan": sym * _log_uniform(rng, 1e-30, 1e30, n),
        "asin": rng.uniform(-1, 1, n),
        "acos": rng.uniform(-1, 1, n),
        "cbrt": sym * _log_uniform(rng, 1e-44, 3e38, n),
        "rcbrt": sym * _log_uniform(rng, 1e-44, 3e38, n),
        "erf": rng.uniform(-5, 5, n),
        "erfinv": rng.uniform(-1, 1, n),
        "gamma": rng.uniform(-30, 35, n),
        "gammaln": np.concatenate(
            [rng.uniform(-30, 10, n // 2), _log_uniform(rng, 10, 1e36, n // 2)]
        ),
    }
    return domains[name].astype(np.float32)


# (float64 reference, largest error allowed in float32 ulps)
REFERENCES = {
    "exp": (np.exp, 1.5),
    "expm1": (np.expm1, 2),  # measured 1.46
    "log": (np.log, 1.5),
    "log2": (np.log2, 2),
    "log10": (np.log10, 2.5),
    "log1p": (np.log1p, 2.5),
    "sinh": (np.sinh, 2.5),
    "cosh": (np.cosh, 2.5),
    "tanh": (np.tanh, 2),
    "sigmoid": (special.expit, 2.5),
    "asinh": (np.arcsinh, 3),
    "acosh": (np.arccosh, 3),
    "atanh": (np.arctanh, 2),  # measured 1.32
    "atan": (np.arctan, 3),
    "asin": (np.arcsin, 3),
    "acos": (np.arccos, 2),
    "cbrt": (np.cbrt, 4),
    "rcbrt": (lambda x: 1 / np.cbrt(x), 2),
    "erf": (special.erf, 3),  # measured 2.45 (x^2 polynomial), 1.13 beyond 0.875
    "erfinv": (special.erfinv, 4),
    "gamma": (special.gamma, 3.5),
    "gammaln": (special.gammaln, 3.5),
}

# inputs every function must get right: signed zeros, infinities, NaN, subnormals, extremes
SPECIAL = np.array(
    [
        *(0.0, -0.0, np.inf, -np.inf, np.nan, 1, -1, 0.5, -0.5, 2, -2, -2.5, 1e-45, -1e-45),
        *(1e-38, 3.4e38, -3.4e38, 88.7, 89.5, -104, 35.1),
    ],
    np.float32,
)


def _ulps(got: np.ndarray, exact: np.ndarray) -> np.ndarray:
    """|got - exact| in units of the last place of exact rounded to float32."""
    spacing = np.spacing(np.abs(exact.astype(np.float32))).astype(np.float64)
    return np.abs(got.astype(np.float64) - exact) / spacing


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_float32_accuracy_over_the_range(name: str) -> None:
    ref, max_ulps = REFERENCES[name]
    x = _domain(name, np.random.default_rng(sum(map(ord, name))))
    out = np.empty_like(x)
    _kernel(getattr(vmath, name)).launch(None, out, "write", x)
    with np.errstate(all="ignore"):
        exact = ref(x.astype(np.float64))
    finite = np.isfinite(exact.astype(np.float32))
    err = _ulps(out[finite], exact[finite])
    if name == "gammaln":
        err = np.minimum(err, _gammaln_scaled_error(x[finite], out[finite], exact[finite]))
    worst = int(np.argmax(err))
    assert err[worst] <= max_ulps, f"{name}({x[finite][worst]!r}) off by {err[worst]:.2f} ulp"
    np.testing.assert_array_equal(
        np.isinf(out[~finite]), np.isinf(exact[~finite].astype(np.float32))
    )


def _gammaln_scaled_error(x: np.ndarray, got: np.ndarray, exact: np.ndarray) -> np.ndarray:
    """|got - exact| in ulps of the reflection's terms for x < 0: lgamma(x) = log(pi /
    |sin(pi x)|) - lgamma(1 - x) cancels next to its roots near -2.46, -2.75, ... and its
    poles, so there a float32 result is good to the terms' rounding, not the result's (C's
    lgammaf alike). For x > 0 the roots 1 and 2 are factored out and the error stays
    relative."""
    xd = x.astype(np.float64)
    terms = np.abs(np.log(np.pi / np.abs(np.sin(np.pi * xd)))) + np.abs(special.gammaln(1 - xd))
    scale = np.where(xd < 0, np.maximum(terms, np.abs(exact)), np.abs(exact))
    return np.abs(got.astype(np.float64) - exact) / np.spacing(scale.astype(np.float32))


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_special_values_match_c(name: str) -> None:
    """NaN in, NaN out; poles, overflow and domain edges as C's float functions."""
    ref, _ = REFERENCES[name]
    out = np.empty_like(SPECIAL)
    _kernel(getattr(vmath, name)).launch(None, out, "write", SPECIAL)
    with np.errstate(all="ignore"):
        exact = ref(SPECIAL.astype(np.float64)).astype(np.float32)
    if name == "gammaln":  # C: lgamma(-inf) = +inf (scipy says -inf)
        exact[np.isneginf(SPECIAL)] = np.inf
    if name == "erfinv":  # odd, as erf: erfinv(-0) = -0 (scipy says +0)
        exact[SPECIAL == 0] = SPECIAL[SPECIAL == 0]
    np.testing.assert_array_equal(np.isnan(out), np.isnan(exact), err_msg=name)
    both = ~np.isnan(exact) & (np.isinf(exact) | (exact == 0))
    np.testing.assert_array_equal(out[both], exact[both], err_msg=name)
    np.testing.assert_array_equal(np.signbit(out[both]), np.signbit(exact[both]), err_msg=name)


def test_hypot_neither_overflows_nor_underflows() -> None:
    x = np.array([3e38, 1e-40, 3, np.inf, np.nan, -4], np.float32)
    y = np.array([3e38, 1e-40, 4, np.nan, 1, 0], np.float32)
    out = np.empty_like(x)
    _kernel(vmath.hypot).launch(None, out, "write", x, y)
    exact = np.hypot(x.astype(np.float64), y.astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(out, exact)  # these cases are exact in float32 too


def test_hypot_is_within_one_and_a_half_ulp_over_every_magnitude() -> None:
    rng = np.random.default_rng(5)
    n = 200_000
    sign = rng.choice([-1.0, 1.0], (2, n))
    x, y = (sign * 10.0 ** rng.uniform(-44, 38, (2, n))).astype(np.float32)
    y[: n // 2] = (x[: n // 2] * rng.uniform(0.5, 2, n // 2)).astype(np.float32)  # close sizes
    out = np.empty_like(x)
    _kernel(vmath.hypot).launch(None, out, "write", x, y)
    exact = np.hypot(x.astype(np.float64), y.astype(np.float64))
    finite = exact < np.finfo(np.float32).max
    spacing = np.spacing(exact[finite].astype(np.float32)).astype(np.float64)
    ulps = np.abs(out[finite].astype(np.float64) - exact[finite]) / spacing
    assert ulps.max() <= 1.5, ulps.max()  # measured 1.07 (subnormal results round twice)
    assert np.all(np.isinf(out[~finite]))


@pytest.mark.parametrize("name", ["exp", "erf", "gammaln", "asinh"])
def test_float64_arguments_take_libm(name: str) -> None:
    """The float32 polynomials are not used for doubles: libm's precision stays."""
    x = _domain(name, np.random.default_rng(1), 2000).astype(np.float64)
    out = np.empty_like(x)
    _kernel(getattr(vmath, name)).launch(None, out, "write", x)
    ref = {"exp": math.exp, "erf": math.erf, "gammaln": math.lgamma, "asinh": math.asinh}[name]
    expected = np.array([ref(v) for v in x])
    np.testing.assert_allclose(out, expected, rtol=1e-13, atol=1e-14)  # C's vs Python's libm


def test_python_calls_run_the_reference() -> None:
    """From Python (and the CUDA simulator) the functions are total: no math domain error."""
    assert math.isnan(vmath.acosh(0.5))
    assert math.isnan(vmath.asin(2.0))
    assert vmath.log(0.0) == -math.inf
    assert vmath.gamma(-0.0) == -math.inf
    assert vmath.exp(1000.0) == math.inf
    assert vmath.sigmoid(-800.0) == 0.0
    assert vmath.erfinv(0.5) == pytest.approx(special.erfinv(0.5), rel=1e-15)


@pytest.mark.parametrize(
    "name",
    [
        "exp",
        "expm1",
        "log",
        "sinh",
        "cosh",
        "erf",
        "erfinv",
        "gamma",
        "gammaln",
        "tanh",
        "cbrt",
        "asinh",
        "atanh",
    ],
)
def test_float32_loops_are_vectorised(name: str) -> None:
    """The kernel loop's LLVM holds vector operations, no libm call, and (float32 bodies)
    no 64-bit integer lanes: bit-level code on float32 bits widened to int64 (numba's
    int32 arithmetic) costs a third of a log."""
    k = _kernel(getattr(vmath, name))
    x = np.ones(64, np.float32)
    k.launch(None, np.empty_like(x), "write", x)
    loop = k.variant(("cpu", "write"), lambda: None)
    llvm = loop.inspect_llvm(loop.signatures[0])
    assert re.search(r"<(4|8|16) x float>", llvm), f"{name}: no float32 vector code"
    libm = {"expf", "exp", "erff", "erf", "tgammaf", "lgammaf", "sinhf", "tanhf", "cbrtf", "logf"}
    libm |= {"log", "lgamma", "tgamma", "coshf", "sin", "sinf"}
    called = set(re.findall(r"call [^@]*@([\w.]+)\(", llvm))
    assert not called & libm, f"{name} calls {called & libm}"
    # a body too large for LLVM to inline stays a call, and the loop around it scalar
    bodies = {c for c in called if "vmath" in c}
    assert not bodies, f"{name}: the loop calls {bodies} instead of inlining it"
    if name != "gamma":  # its float64 half works on int64 bits by design
        wide = sorted(set(re.findall(r"(\w+) <(?:4|8|16) x i32> [^,]*to <\d+ x i64>", llvm)))
        assert not wide, f"{name}: int32 lanes widened to int64 ({wide}); use vmath's add32, ..."


def test_int32_arithmetic_wraps_as_c_does() -> None:
    """add32 ... shl32 compiled (the numba intrinsics) and from Python agree with int32
    arithmetic that wraps around, the right operand of any integer type."""
    import numba

    from nnvmpy.kernel.vmath import _dispatch

    names = ("add32", "sub32", "and32", "or32", "xor32", "sra32", "shl32")
    casts = _dispatch._bit_casts()
    a = np.array([0, 1, -1, 2**31 - 1, -(2**31), 0x3F2AAAAB, -8388608, 123456789], np.int32)
    b = np.array([0, 1, 31, 23, 1, 7, 30, 5], np.int64)
    wrapped = {
        "add32": lambda x, y: x + y,
        "sub32": lambda x, y: x - y,
        "and32": lambda x, y: x & y,
        "or32": lambda x, y: x | y,
        "xor32": lambda x, y: x ^ y,
        "sra32": lambda x, y: x >> y,
        "shl32": lambda x, y: x << y,
    }
    for name in names:
        op = casts[name]
        run = numba.njit(lambda x, y, op=op: [op(x[i], y[i]) for i in range(x.size)])
        expected = wrapped[name](a.astype(np.int64), b).astype(np.int32)  # wraps mod 2^32
        compiled = np.array(run(a, b), np.int64)
        python = np.array([getattr(_dispatch, name)(x, y) for x, y in zip(a, b)], np.int64)
        np.testing.assert_array_equal(compiled, expected, err_msg=name)
        np.testing.assert_array_equal(python, expected, err_msg=name)


@pytest.mark.parametrize("name", ["gamma", "gammaln"])
def test_gamma_region_edges(name: str) -> None:
    """Dense points around every seam of gamma.py's piecewise bodies (shift counts, the
    polynomial's interval, Stirling's start, the negative side's shifts and reflection),
    against scipy in float64, with the bounds test_float32_accuracy_over_the_range uses."""
    seams = [-6.0, -5.5, -5.0, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.5, 5.5, 6.5, 7.0]
    rng = np.random.default_rng(11)
    x = np.concatenate([s + rng.uniform(-0.02, 0.02, 2000) for s in seams])
    tiny = np.logspace(-45, -1, 400)  # subnormal to small: 1 - x and pi x round there
    x = np.concatenate([x, tiny, -tiny]).astype(np.float32)
    x = x[(x != np.floor(x)) | (x > 0)]
    out = np.empty_like(x)
    _kernel(getattr(vmath, name)).launch(None, out, "write", x)
    ref, max_ulps = REFERENCES[name]
    with np.errstate(over="ignore"):
        exact = ref(x.astype(np.float64))
        finite = np.isfinite(exact.astype(np.float32))  # gamma(1e-45) overflows: inf
    np.testing.assert_array_equal(out[~finite], exact[~finite].astype(np.float32))
    x, out, exact = x[finite], out[finite], exact[finite]
    err = _ulps(out, exact)
    if name == "gammaln":
        err = np.minimum(err, _gammaln_scaled_error(x, out, exact))
    worst = int(np.argmax(err))
    assert err[worst] <= max_ulps, f"{name}({x[worst]!r}) off by {err[worst]:.2f} ulp"


@pytest.mark.parametrize(
    ("name", "seams", "max_ulps"),
    [
        ("erf", [0.875, 3.95, 1.0, 2.0], 1.5),  # 1 - e^P(x) from 0.875 on: measured 1.13
        ("atanh", [0.5, 0.9, 0.999, 0.9999999], 2),  # the log branch from 1/2 on
    ],
)
def test_seams_of_the_piecewise_bodies(name: str, seams: list[float], max_ulps: float) -> None:
    """Dense points on both sides of each body's branch switch and near its limits, both
    signs, against the float64 reference."""
    rng = np.random.default_rng(21)
    x = np.concatenate(
        [s + rng.uniform(-0.01, 0.01, 4000) * min(s, 1 - s if s < 1 else 1) for s in seams]
    )
    x = np.concatenate([x, -x]).astype(np.float32)
    x = x[np.abs(x) < 1] if name == "atanh" else x
    out = np.empty_like(x)
    _kernel(getattr(vmath, name)).launch(None, out, "write", x)
    exact = REFERENCES[name][0](x.astype(np.float64))
    err = _ulps(out, exact)
    if name == "erf":  # below 0.875 the unchanged x^2 polynomial keeps its 3-ulp bound
        err = np.where(np.abs(x) < 0.875, np.minimum(err, max_ulps), err)
    worst = int(np.argmax(err))
    assert err[worst] <= max_ulps, f"{name}({x[worst]!r}) off by {err[worst]:.2f} ulp"


def _mxnet_mod(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """MXNet's mod (mshadow_op::mod) for float32: fmod in double, moved by b where the
    remainder has the other sign, rounded to float32 once; 0 for b = 0."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    with np.errstate(all="ignore"):
        r = np.fmod(a64, b64)
        r = np.where((r != 0) & ((r < 0) != (b64 < 0)), r + b64, r)
    return np.where(b64 == 0, 0.0, r).astype(np.float32)


def test_float32_floor_mod_is_mxnets_and_the_float64_bodys_bit_for_bit() -> None:
    """ops/_mod.py's float32 body (fix-ups in float32) against MXNet's double formula
    (while |a / b| < 2^24, as documented) and bit for bit against the generic body, on
    ordinary values, 180 binades of exponent gap and the edge values."""
    from nnvmpy.ops import _mod

    generic = kernel.device_function(_mod._floor_mod_any)
    fast = _mod.floor_mod

    def float32_body(a, b):
        return fast(a, b)

    def float64_body(a, b):
        return generic(a, b)

    new, old = kernel.elementwise(float32_body), kernel.elementwise(float64_body)
    rng = np.random.default_rng(3)
    n = 100_000
    edges = [0.0, -0.0, np.inf, -np.inf, np.nan, 1, -1, 3, -3, 1e-10, -1e-10, 0.7, -0.7]
    edges += [2.0**24, 1e-45, -1e-45, 3.4e38, -3.4e38]
    samples = [
        rng.uniform(-10, 10, n),
        np.exp(rng.uniform(-100, 85, n)) * rng.choice([-1, 1], n),
        rng.choice(edges, n),
    ]
    for a64 in samples:
        for b64 in samples:
            a, b = a64.astype(np.float32), b64.astype(np.float32)
            got, ref = np.empty_like(a), np.empty_like(a)
            new.launch(None, got, "write", a, b)
            old.launch(None, ref, "write", a, b)
            np.testing.assert_array_equal(got.view(np.int32), ref.view(np.int32))
            with np.errstate(all="ignore"):
                ok = np.isfinite(a) & np.isfinite(b) & (np.abs(a / b) < 2.0**24)
            np.testing.assert_array_equal(got[ok], _mxnet_mod(a[ok], b[ok]))


def _exp2_split(s: float) -> tuple[float, float]:
    """(hi, lo): log2 of the float32 s as a float32 pair, as _rpower_scalar passes it."""
    log2_s = math.log2(float(np.float32(s)))
    hi = float(np.float32(log2_s))
    return hi, float(np.float32(log2_s - hi))


@pytest.mark.parametrize("s", [3.0, 0.1, 2.0, 10.0, 1.0001, 0.9999, 1e-30, 1e30, 3.4e38, 1e-45])
def test_exp2_split_is_s_to_the_x_within_one_and_a_half_ulp(s: float) -> None:
    hi, lo = _exp2_split(s)
    s32 = float(np.float32(s))
    reach = 170 / abs(math.log2(s32))  # past both overflow and the smallest subnormal
    rng = np.random.default_rng(9)
    x = np.concatenate([rng.uniform(-reach, reach, 40000), rng.uniform(-3, 3, 10000)])
    x = x.astype(np.float32)
    out = np.empty_like(x)
    _kernel(vmath.exp2_split).launch(None, out, "write", x, hi, lo)
    with np.errstate(all="ignore"):
        exact = s32 ** x.astype(np.float64)
        rounded = exact.astype(np.float32)
    finite = np.isfinite(rounded) & (rounded != 0)
    err = _ulps(out[finite], exact[finite])
    assert err.max() <= 1.5, f"{s}^{x[finite][err.argmax()]!r} off by {err.max():.2f} ulp"  # 1.12
    np.testing.assert_array_equal(out[~finite], rounded[~finite])  # overflow, underflow


def test_exp2_split_special_values_match_c() -> None:
    for s in (3.0, 0.25):
        out = np.empty_like(SPECIAL)
        _kernel(vmath.exp2_split).launch(None, out, "write", SPECIAL, *_exp2_split(s))
        with np.errstate(all="ignore"):
            exact = np.power(np.float64(s), SPECIAL.astype(np.float64)).astype(np.float32)
        np.testing.assert_array_equal(np.isnan(out), np.isnan(exact))
        both = np.isinf(exact) | (exact == 0) | (exact == 1)
        np.testing.assert_array_equal(out[both], exact[both])


def test_exp2_split_loop_is_vectorised() -> None:
    k = _kernel(vmath.exp2_split)
    x = np.ones(64, np.float32)
    k.launch(None, np.empty_like(x), "write", x, 1.5, 0.0)
    loop = k.variant(("cpu", "write"), lambda: None)
    llvm = loop.inspect_llvm(loop.signatures[0])
    assert re.search(r"<(8|16) x float>", llvm)
    called = set(re.findall(r"call [^@]*@([\w.]+)\(", llvm))
    assert not {c for c in called if _is_exp_or_pow_call(c)}, called


def _is_exp_or_pow_call(name: str) -> bool:
    """A call to exp/pow code; LLVM's other intrinsics (llvm.experimental.noalias.scope.decl,
    which newer numba emits) are not."""
    if name.startswith("llvm."):
        return name.startswith(("llvm.exp.", "llvm.exp2.", "llvm.pow."))
    return "pow" in name or "exp" in name or "vmath" in name
