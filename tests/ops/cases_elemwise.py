"""OpCase rows for the element-wise families: unary, binary, scalar, init/Cast, quadratic.

References are NumPy formulas on float64 inputs, written independently of the kernels
(e.g. MXNet's round-half-away-from-zero spelled with floor, softrelu as logaddexp).
Ops with a kink or a jump get inputs kept away from it, so finite differences are valid
there: the piecewise-constant ops then check that their gradient graph gives zeros.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np
from op_db import Inputs, OpCase

S = (3, 4)  # the default shape: small enough for the GPU simulator and finite differences
INTS = (np.int32, np.int64, np.uint8)

InputFn = Callable[[np.random.Generator, Any], Inputs]


def away_from(point: float, low: float, high: float, n: int = 1, shape: Any = S) -> InputFn:
    """Inputs point ± uniform(low, high): at least `low` away from a kink or jump at `point`."""

    def make(rng: np.random.Generator, dtype: Any) -> Inputs:
        return [
            (
                point + rng.choice([-1.0, 1.0], size=shape) * rng.uniform(low, high, size=shape)
            ).astype(dtype)
            for _ in range(n)
        ]

    return make


def off_integers(rng: np.random.Generator, dtype: Any) -> Inputs:
    """k + u with u in [0.1, 0.4]: away from the jumps of floor/ceil (k) and round (k + 0.5)."""
    return [(rng.integers(-3, 3, size=S) + rng.uniform(0.1, 0.4, size=S)).astype(dtype)]


def ints(n: int = 1, low: int = -10, high: int = 10) -> InputFn:
    """Small integers (non-negative for unsigned dtypes), so no result overflows."""

    def make(rng: np.random.Generator, dtype: Any) -> Inputs:
        lo = 0 if np.dtype(dtype).kind == "u" else low
        return [rng.integers(lo, high, size=S, endpoint=True).astype(dtype) for _ in range(n)]

    return make


def round_half_away(x: np.ndarray) -> np.ndarray:
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


def unary(name: str, reference: Callable[..., Any], **kw: Any) -> OpCase:
    return OpCase(name, [S], reference, **kw)


def binary(name: str, reference: Callable[..., Any], **kw: Any) -> OpCase:
    return OpCase(name, [S, S], reference, **kw)


def scalar(name: str, value: float, reference: Callable[..., Any], **kw: Any) -> OpCase:
    return OpCase(name, [S], reference, params={"scalar": value}, **kw)


UNARY = [
    unary("relu", lambda x: np.maximum(x, 0), inputs=away_from(0, 0.05, 1)),
    unary("sigmoid", lambda x: 1 / (1 + np.exp(-x)), low=-4, high=4),
    unary("tanh", np.tanh, low=-3, high=3),
    unary("exp", np.exp, low=-2, high=2),
    unary("log", np.log, low=0.1, high=3),
    unary("sqrt", np.sqrt, low=0.1, high=3),
    unary("rsqrt", lambda x: 1 / np.sqrt(x), low=0.2, high=3),
    unary("square", lambda x: x * x, low=-2, high=2),
    unary("abs", np.abs, inputs=away_from(0, 0.05, 1)),
    unary("negative", lambda x: -x),
    # 1/x: both signs, |x| >= 0.5 (low/high are what check_op draws from)
    unary("reciprocal", lambda x: 1 / x, low=0.5, high=1.5, inputs=away_from(0, 0.5, 1.5)),
    unary("sin", np.sin, low=-3, high=3),
    unary("cos", np.cos, low=-3, high=3),
    unary("log1p", np.log1p, low=-0.5, high=2),
    unary("expm1", np.expm1, low=-2, high=2),
    unary("softsign", lambda x: x / (1 + np.abs(x)), low=-3, high=3),
    unary("softrelu", lambda x: np.logaddexp(0, x), low=-4, high=4),
    unary("sign", np.sign, inputs=away_from(0, 0.05, 1)),
    unary("floor", np.floor, low=0.1, high=0.4, inputs=off_integers),
    unary("ceil", np.ceil, low=0.1, high=0.4, inputs=off_integers),
    unary("round", round_half_away, low=0.1, high=0.4, inputs=off_integers),
    unary("_copy", lambda x: x),
    unary("identity", lambda x: x),
    unary("zeros_like", np.zeros_like),
    unary("ones_like", np.ones_like),
]


def py_mod(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a mod b with the sign of b, and 0 where b == 0 (MXNet's mod)."""
    safe = np.where(b == 0, 1, b)
    return np.where(b == 0, 0, a - np.floor(a / safe) * safe)


def mod_inputs(rng: np.random.Generator, dtype: Any) -> Inputs:
    """|b| in [0.6, 1.4], a/b kept 0.1 away from integers: mod is smooth there."""
    b = rng.uniform(0.6, 1.4, size=S) * rng.choice([-1.0, 1.0], size=S)
    q = rng.integers(-3, 3, size=S) + rng.uniform(0.1, 0.9, size=S)
    return [(q * b).astype(dtype), b.astype(dtype)]


def separated_pair(rng: np.random.Generator, dtype: Any) -> Inputs:
    """lhs - rhs at least 0.05 from 0 (max/min have a kink at lhs == rhs)."""
    rhs = rng.uniform(-1, 1, size=S)
    lhs = rhs + rng.choice([-1.0, 1.0], size=S) * rng.uniform(0.05, 0.5, size=S)
    return [lhs.astype(dtype), rhs.astype(dtype)]


BINARY = [
    binary("elemwise_add", np.add),
    binary("elemwise_sub", np.subtract),
    binary("elemwise_mul", np.multiply),
    binary("elemwise_div", np.divide, inputs=away_from(0, 0.5, 1.5, n=2), low=0.5, high=1.5),
    binary("_power", np.power, low=0.5, high=1.5, dtypes=(np.float16, np.float32, np.float64)),
    binary("_maximum", np.maximum, inputs=separated_pair),
    binary("_minimum", np.minimum, inputs=separated_pair),
    binary("_hypot", np.hypot, inputs=away_from(0, 0.3, 2, n=2), low=0.3, high=2),
    binary("_mod", py_mod, inputs=mod_inputs, low=0.6, high=1.4),
    OpCase("add_n", [S, S, S], lambda a, b, c, num_args: a + b + c, params={"num_args": 3}, id="3"),
    OpCase("ElementWiseSum", [S, S], lambda a, b, num_args: a + b, params={"num_args": 2}),
]

SCALAR = [
    scalar("_plus_scalar", 0.75, lambda x, scalar: x + scalar),
    scalar("_minus_scalar", 0.75, lambda x, scalar: x - scalar),
    scalar("_rminus_scalar", 0.75, lambda x, scalar: scalar - x),
    scalar("_mul_scalar", -2.5, lambda x, scalar: x * scalar),
    scalar("_div_scalar", -2.5, lambda x, scalar: x / scalar),
    scalar(
        "_rdiv_scalar",
        1.5,
        lambda x, scalar: scalar / x,
        low=0.5,
        high=1.5,
        inputs=away_from(0, 0.5, 1.5),
    ),
    scalar("_power_scalar", 2.5, lambda x, scalar: x**scalar, low=0.2, high=2),
    scalar("_rpower_scalar", 3.0, lambda x, scalar: scalar**x, low=-2, high=2),
    scalar(
        "_maximum_scalar",
        0.25,
        lambda x, scalar: np.maximum(x, scalar),
        inputs=away_from(0.25, 0.05, 1),
    ),
    scalar(
        "_minimum_scalar",
        0.25,
        lambda x, scalar: np.minimum(x, scalar),
        inputs=away_from(0.25, 0.05, 1),
    ),
    # small integers hit the scalar exactly; the finite difference at x == scalar is 0 too
    scalar(
        "_equal_scalar",
        1.0,
        lambda x, scalar: (x == scalar).astype(x.dtype),
        inputs=lambda rng, dt: [rng.integers(-2, 3, size=S).astype(dt)],
    ),
    scalar(
        "_greater_scalar",
        0.25,
        lambda x, scalar: (x > scalar).astype(x.dtype),
        inputs=away_from(0.25, 0.05, 1),
    ),
    scalar(
        "_mod_scalar",
        -1.5,
        lambda x, scalar: py_mod(x, np.full_like(x, scalar)),
        inputs=lambda rng, dt: [
            (-1.5 * (rng.integers(-3, 3, size=S) + rng.uniform(0.1, 0.9, size=S))).astype(dt)
        ],
    ),
    scalar(
        "_rmod_scalar",
        2.5,
        lambda x, scalar: py_mod(np.full_like(x, scalar), x),
        # 2.5 / x stays 0.1 away from integers for x in these bands
        inputs=lambda rng, dt: [
            (rng.choice([-1.0, 1.0], size=S) * rng.choice([0.9, 1.1, 1.5], size=S)).astype(dt)
        ],
        low=0.9,
        high=1.1,
    ),
    scalar("_hypot_scalar", 0.75, lambda x, scalar: np.hypot(x, scalar)),
    scalar(
        "_lesser_scalar",
        0.25,
        lambda x, scalar: (x < scalar).astype(x.dtype),
        inputs=away_from(0.25, 0.05, 1),
    ),
]


def cast(to: str, dtypes: tuple[Any, ...], **kw: Any) -> OpCase:
    kw.setdefault("id", f"to_{to}")
    return OpCase(
        "Cast",
        [S],
        lambda x, dtype: x.astype(dtype),
        params={"dtype": to},
        dtypes=dtypes,
        **kw,
    )


def init(name: str, reference: Callable[..., Any], **params: Any) -> OpCase:
    """An initialiser: no inputs, the shape and dtype are parameters."""
    return OpCase(
        name, [], reference, params=params, dtypes=(np.dtype(params["dtype"]),), grad=False
    )


INIT = [
    init("_zeros", lambda shape, dtype: np.zeros(shape), shape=(2, 3), dtype="float32"),
    init("_ones", lambda shape, dtype: np.ones(shape), shape=(4,), dtype="int32"),
    init(
        "_full",
        lambda shape, dtype, value: np.full(shape, value),
        shape=(2, 1, 3),
        dtype="float64",
        value=2.5,
    ),
    cast("float64", (np.float32,)),
    cast("float32", (np.float64,)),
    # float -> int truncates toward zero, as astype; no gradient through an integer output
    cast("int32", (np.float32, np.float64), low=-100, high=100, grad=False),
    cast("uint8", (np.float32,), low=0, high=250, grad=False),
    cast("float32", (np.int32, np.uint8), inputs=ints(), grad=False, check_op=False, id="from_int"),
]

QUADRATIC = [
    OpCase(
        "quadratic",
        [S],
        lambda x, a, b, c: a * x**2 + b * x + c,
        params={"a": 2.0, "b": 3.0, "c": 1.0},
        low=-2,
        high=2,
    ),
    OpCase(
        "quadratic",
        [(2, 3, 5)],
        lambda x, a, b, c: a * x**2 + b * x + c,
        params={"a": -0.5, "b": 0.0, "c": 4.0},
        id="3d",
    ),
]


def int_case(name: str, n_in: int, reference: Callable[..., Any], **params: Any) -> OpCase:
    """Forward only on integer dtypes (MXNet supports these ops for ints)."""
    return OpCase(
        name,
        [S] * n_in,
        reference,
        params=params,
        inputs=ints(n_in),
        dtypes=INTS,
        grad=False,
        check_op=False,
        id="int",
    )


INTEGER = [
    int_case("elemwise_add", 2, np.add),
    int_case("elemwise_sub", 2, np.subtract),  # wraps around for uint8, as in C
    int_case("elemwise_mul", 2, np.multiply),
    int_case("relu", 1, lambda x: np.maximum(x, 0)),
    int_case("abs", 1, np.abs),
    int_case("negative", 1, lambda x: -x),
    int_case("square", 1, lambda x: x * x),
    int_case("_copy", 1, lambda x: x),
    int_case("_plus_scalar", 1, lambda x, scalar: x + scalar, scalar=3.0),
    int_case("_mul_scalar", 1, lambda x, scalar: x * scalar, scalar=3.0),
    int_case("quadratic", 1, lambda x, a, b, c: a * x * x + b * x + c, a=2.0, b=3.0, c=1.0),
]

INTEGER += [
    int_case("_mod", 2, py_mod),
    int_case("_maximum", 2, np.maximum),
    int_case("_mod_scalar", 1, lambda x, scalar: py_mod(x, np.full_like(x, scalar)), scalar=3.0),
]

# MXNet's other names for the same ops: each alias is its own registry entry, so each
# gets the rows of its op (ids keep the op's id)
ALIASES = {
    "elemwise_add": ("_add", "_plus", "_Plus", "_grad_add"),
    "elemwise_sub": ("_sub", "_minus", "_Minus"),
    "elemwise_mul": ("_mul", "_Mul"),
    "elemwise_div": ("_div", "_Div"),
    "_power": ("_Power",),
    "_maximum": ("_Maximum",),
    "_minimum": ("_Minimum",),
    "_hypot": ("_Hypot",),
    "_mod": ("_Mod",),
    "_plus_scalar": ("_PlusScalar",),
    "_minus_scalar": ("_MinusScalar",),
    "_rminus_scalar": ("_RMinusScalar",),
    "_mul_scalar": ("_MulScalar",),
    "_div_scalar": ("_DivScalar",),
    "_rdiv_scalar": ("_RDivScalar",),
    "_power_scalar": ("_PowerScalar",),
    "_rpower_scalar": ("_RPowerScalar",),
    "_maximum_scalar": ("_MaximumScalar",),
    "_minimum_scalar": ("_MinimumScalar",),
    "_mod_scalar": ("_ModScalar",),
    "_rmod_scalar": ("_RModScalar",),
    "_hypot_scalar": ("_HypotScalar",),
}
ALIAS_CASES = [
    dataclasses.replace(case, name=alias)
    for case in [*BINARY, *SCALAR]
    for alias in ALIASES.get(case.name, ())
]

CASES = [*UNARY, *BINARY, *SCALAR, *INIT, *QUADRATIC, *INTEGER, *ALIAS_CASES]
