"""OpCase rows for the element-wise families: unary, binary, scalar, init/Cast, quadratic.

References are NumPy formulas on float64 inputs, written independently of the kernels
(e.g. MXNet's round-half-away-from-zero spelled with floor, softrelu as logaddexp).
Ops with a kink or a jump get inputs kept away from it, so finite differences are valid
there: the piecewise-constant ops then check that their gradient graph gives zeros.
"""

from __future__ import annotations

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

BINARY = [
    binary("elemwise_add", np.add),
    binary("elemwise_sub", np.subtract),
    binary("elemwise_mul", np.multiply),
    binary("elemwise_div", np.divide, inputs=away_from(0, 0.5, 1.5, n=2), low=0.5, high=1.5),
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

CASES = [*UNARY, *BINARY, *SCALAR, *INIT, *QUADRATIC, *INTEGER]
