"""OpCase rows for the unary math of unary_math.py / special.py / clip.py / contrib_math.py,
and for cumsum, argmax/argmin/argmax_channel, moments, nansum/nanprod.

References are NumPy formulas and scipy.special on float64 inputs, written independently of
the kernels (MXNet's rint — ties to the lower integer — spelled with floor/ceil, its
hard_sigmoid with clip, argmax with np.argmax). Inputs stay inside each function's domain
and away from kinks and jumps, so finite differences are valid where they are taken.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from cases_elemwise import S, away_from, ints, off_integers
from op_db import Inputs, OpCase
from scipy import special

F16 = (np.float16, np.float32, np.float64)  # MXNet computes these ops in float16 too


def unary(name: str, reference: Callable[..., Any], **kw: Any) -> OpCase:
    kw.setdefault("dtypes", F16)
    return OpCase(name, [S], reference, **kw)


def mxnet_rint(x: np.ndarray) -> np.ndarray:
    lo, hi = np.floor(x), np.ceil(x)
    return np.where(x - lo <= hi - x, lo, hi)


def off_halves(rng: np.random.Generator, dtype: Any) -> Inputs:
    """k + u with u away from 0, 0.5 and 1: round/rint neither jump nor tie there."""
    u = rng.choice([0.15, 0.35, 0.65, 0.85], size=S) + rng.uniform(-0.05, 0.05, size=S)
    return [(rng.integers(-3, 3, size=S) + u).astype(dtype)]


def with_specials(rng: np.random.Generator, dtype: Any) -> Inputs:
    """Numbers, NaN, +inf and -inf mixed (for isnan / isinf / isfinite)."""
    x = rng.uniform(-2, 2, size=S)
    x.flat[rng.choice(x.size, 6, replace=False)] = [np.nan, np.inf, -np.inf, np.nan, 0, -np.inf]
    return [x.astype(dtype)]


def close_pair(rng: np.random.Generator, dtype: Any) -> Inputs:
    """b = a nudged well inside the tolerance, except one element well outside (or not)."""
    a = rng.uniform(-2, 2, size=S)
    b = a * (1 + rng.uniform(-1e-5, 1e-5, size=S))
    if rng.integers(2):
        b.flat[rng.integers(b.size)] += 0.5
    a.flat[0] = b.flat[0] = np.nan  # NaN equals NaN (equal_nan defaults to True)
    return [a.astype(dtype), b.astype(dtype)]


def zero_one(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float64)


UNARY = [
    unary("tan", np.tan, low=-1.2, high=1.2),
    unary("arcsin", np.arcsin, low=-0.9, high=0.9),
    unary("arccos", np.arccos, low=-0.9, high=0.9),
    unary("arctan", np.arctan, low=-3, high=3),
    unary("sinh", np.sinh, low=-2, high=2),
    unary("cosh", np.cosh, low=-2, high=2),
    unary("arcsinh", np.arcsinh, low=-3, high=3),
    unary("arccosh", np.arccosh, low=1.2, high=4),
    unary("arctanh", np.arctanh, low=-0.9, high=0.9),
    unary("log2", np.log2, low=0.1, high=4),
    unary("log10", np.log10, low=0.1, high=4),
    unary("cbrt", np.cbrt, low=0.2, high=3, inputs=away_from(0, 0.2, 3)),
    unary("rcbrt", lambda x: 1 / np.cbrt(x), low=0.2, high=3, inputs=away_from(0, 0.2, 3)),
    unary("degrees", np.degrees, low=-3, high=3, tols={np.float16: (1e-2, 5e-2)}),
    unary("radians", np.radians, low=-90, high=90),
    unary("rint", mxnet_rint, low=0.1, high=0.4, inputs=off_halves),
    unary("fix", np.fix, low=0.1, high=0.4, inputs=off_integers),
    unary("trunc", np.trunc, low=0.1, high=0.4, inputs=off_integers),
    unary(
        "logical_not",
        lambda x: (x == 0).astype(np.float64),
        inputs=lambda rng, dt: [rng.integers(-1, 2, size=S).astype(dt)],
        grad=False,  # a step function: its zero gradient is tested in test_unary_math.py
    ),
    unary(
        "hard_sigmoid",
        lambda x, alpha, beta: np.clip(alpha * x + beta, 0, 1),
        params={"alpha": 0.3, "beta": 0.4},
        inputs=lambda rng, dt: [
            (rng.choice([-3.0, 0.0, 3.0], size=S) + rng.uniform(-0.9, 0.9, size=S)).astype(dt)
        ],
        low=-1,
        high=1,
    ),
    unary("hard_sigmoid", lambda x: np.clip(0.2 * x + 0.5, 0, 1), low=-2, high=2, id="default"),
    unary("erf", special.erf, low=-2, high=2),
    unary("erfinv", special.erfinv, low=-0.9, high=0.9),
    # gamma on both sides of its poles (not too close: the gradient grows like 1/x^2)
    unary(
        "gamma",
        special.gamma,
        low=0.3,
        high=3,
        inputs=lambda rng, dt: [
            (rng.choice([-2.5, -1.5, 0.5, 1.5, 2.5], size=S) + rng.uniform(-0.3, 0.3, S)).astype(dt)
        ],
        tols={np.float16: (2e-2, 1e-2)},
    ),
    unary("gammaln", special.gammaln, low=0.2, high=8, tols={np.float16: (2e-2, 1e-2)}),
    OpCase(
        "clip",
        [S],
        lambda x, a_min, a_max: np.clip(x, a_min, a_max),
        params={"a_min": -0.4, "a_max": 0.6},
        inputs=lambda rng, dt: [
            (rng.choice([-0.7, 0.1, 0.9], size=S) + rng.uniform(-0.2, 0.2, S)).astype(dt)
        ],
        dtypes=F16,
    ),
    OpCase(
        "clip",
        [S],
        lambda x, a_min, a_max: np.clip(x, a_min, a_max),
        params={"a_min": -3, "a_max": 4},
        inputs=ints(),
        dtypes=(np.int32, np.int64, np.int8),
        grad=False,
        check_op=False,
        id="int",
    ),
]

CONTRIB = [
    unary("_contrib_isnan", lambda x: zero_one(np.isnan(x)), inputs=with_specials, grad=False),
    unary("_contrib_isinf", lambda x: zero_one(np.isinf(x)), inputs=with_specials, grad=False),
    unary(
        "_contrib_isfinite", lambda x: zero_one(np.isfinite(x)), inputs=with_specials, grad=False
    ),
    # straight-through: round/sign forward, the finite differences of a step are 0 but the
    # gradient is dy (tested in test_unary_math.py)
    unary(
        "_contrib_round_ste",
        lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5),
        inputs=off_halves,
        grad=False,
    ),
    unary("_contrib_sign_ste", np.sign, inputs=away_from(0, 0.05, 1), grad=False),
    unary("_contrib_gradientmultiplier", lambda x, scalar: x, params={"scalar": -2.0}, grad=False),
    OpCase("_contrib_div_sqrt_dim", [(2, 3, 4)], lambda x: x / 2.0, dtypes=F16, id="last4"),
    OpCase(
        "_contrib_allclose",
        [S, S],
        lambda a, b, rtol, atol: np.array(np.allclose(a, b, rtol, atol, equal_nan=True), np.uint8),
        params={"rtol": 1e-3, "atol": 1e-3},
        inputs=close_pair,
        dtypes=F16,
        grad=False,
    ),
]


# -- cumsum --------------------------------------------------------------------------------------


def cumsum_ref(x: np.ndarray, axis: Any = None, dtype: Any = None) -> np.ndarray:
    out = np.cumsum(x.reshape(-1) if axis is None else x, axis=0 if axis is None else axis)
    return out if dtype is None else out.astype(dtype)


X = (2, 3, 4)
CUMSUM = [
    OpCase("cumsum", [X], cumsum_ref, dtypes=F16, tols={np.float16: (1e-2, 2e-2)}, id="flat"),
    OpCase("cumsum", [X], cumsum_ref, {"axis": 1}, dtypes=F16, id="axis1"),
    OpCase("cumsum", [X], cumsum_ref, {"axis": -1}, id="last"),
    OpCase("cumsum", [X], cumsum_ref, {"axis": 0, "dtype": "float64"}, id="to_float64"),
    OpCase(
        "cumsum",
        [X],
        cumsum_ref,
        {"axis": 2},
        inputs=lambda rng, dt: [rng.integers(-5, 6, size=X).astype(dt)],
        dtypes=(np.int32, np.int64, np.int8),
        grad=False,
        check_op=False,
        id="int",
    ),
]

# -- argmax / argmin ---------------------------------------------------------------------------


def distinct(rng: np.random.Generator, dtype: Any) -> Inputs:
    """No ties (a shuffled grid), so the reference's tie rule never matters here."""
    return [rng.permutation(np.arange(24) - 11.5).reshape(X).astype(dtype)]


def arg_ref(fn: Callable[..., Any]) -> Callable[..., np.ndarray]:
    def ref(x: np.ndarray, axis: Any = None, keepdims: bool = False) -> np.ndarray:
        if axis is None:
            out = np.asarray(fn(x)).reshape((1,) * x.ndim if keepdims else (1,))
        else:
            out = fn(x, axis=axis)
            out = np.expand_dims(out, axis) if keepdims else out
        return out.astype(np.float64)

    return ref


def arg_case(name: str, params: dict[str, Any], tag: str, **kw: Any) -> OpCase:
    fn = np.argmin if name == "argmin" else np.argmax
    return OpCase(
        name,
        [X],
        arg_ref(fn),
        params,
        inputs=distinct,
        dtypes=(np.float16, np.float32, np.int32),
        grad=False,  # piecewise constant: the zero gradient is tested in test_reduce_extra.py
        id=tag,
        **kw,
    )


ARG = [
    arg_case("argmax", {"axis": 1}, "axis1"),
    arg_case("argmax", {}, "all"),
    arg_case("argmax", {"axis": -1, "keepdims": True}, "keepdims"),
    arg_case("argmin", {"axis": 0}, "axis0"),
    arg_case("argmin", {"keepdims": True}, "all-keepdims"),
    OpCase(
        "argmax_channel",
        [X],
        lambda x: np.argmax(x, axis=1).astype(np.float64),
        inputs=distinct,
        grad=False,
    ),
]

# -- moments, nansum, nanprod ------------------------------------------------------------------


def moments_ref(x: np.ndarray, axes: Any, keepdims: bool = False) -> list[np.ndarray]:
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=keepdims)
    mean = mean if keepdims else mean.squeeze(axis=axes)
    return [m.reshape(-1) if m.ndim == 0 else m for m in (mean, var)]  # MXNet: (1,), not ()


def with_nans(rng: np.random.Generator, dtype: Any) -> Inputs:
    x = rng.uniform(0.5, 1.5, size=X)
    x.flat[rng.choice(x.size, 5, replace=False)] = np.nan
    return [x.astype(dtype)]


def nan_ref(fn: Callable[..., Any]) -> Callable[..., np.ndarray]:
    def ref(x: np.ndarray, axis: Any = None, keepdims: bool = False) -> np.ndarray:
        out = np.asarray(fn(x, axis=axis, keepdims=keepdims))
        return out.reshape(-1) if out.ndim == 0 else out

    return ref


MOMENTS = [
    OpCase("moments", [X], moments_ref, {"axes": (0, 2)}, dtypes=F16, id="axes02"),
    OpCase("moments", [X], moments_ref, {"axes": (1,), "keepdims": True}, id="keepdims"),
    OpCase("moments", [X], moments_ref, {"axes": (0, 1, 2)}, id="all"),
    OpCase("nansum", [X], nan_ref(np.nansum), {"axis": 1}, inputs=with_nans, id="axis1"),
    OpCase("nansum", [X], nan_ref(np.nansum), inputs=with_nans, dtypes=F16, id="all"),
    OpCase("nanprod", [X], nan_ref(np.nanprod), {"axis": 2}, inputs=with_nans, id="axis2"),
    OpCase(
        "nanprod",
        [X],
        nan_ref(np.nanprod),
        {"axis": (0, 1), "keepdims": True},
        inputs=with_nans,
        id="keepdims",
    ),
]

CASES = [*UNARY, *CONTRIB, *CUMSUM, *ARG, *MOMENTS]
