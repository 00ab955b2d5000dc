"""OpCase rows of the random ops, at parameters where the distribution is (numerically) a point.

A sampler has no fixed reference, but at the edge of its domain it has one: uniform on
[c, c] is c, normal with scale 1e-30 is loc to every float's precision, Poisson(0) is 0,
negative binomial with p = 1 is 0, randint on [7, 8) is 7, a one-hot multinomial draws
its hot index, shuffling one row keeps it. Those rows put every random op through the
generic checks (each dtype and device, out=, req write/add/null, shape and type
inference both ways, in place) with a real reference. Their distributions are tested with
SciPy statistics in test_random.py; as in MXNet they have no gradient, so grad=False.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from op_db import OpCase

S = (3, 4)


def point(value: float) -> Any:
    """Reference of a no-input sampler that always gives `value`."""
    return lambda shape, dtype, **_: np.full(shape, value)


def point_like(value: float) -> Any:
    return lambda x, **_: np.full(x.shape, value)


# (op suffix, public aliases, parameters making it a point, the point)
POINTS: list[tuple[str, tuple[str, ...], dict[str, Any], float]] = [
    ("uniform", ("uniform", "random_uniform"), {"low": 0.25, "high": 0.25}, 0.25),
    ("normal", ("normal", "random_normal"), {"loc": 0.5, "scale": 1e-30}, 0.5),
    ("gamma", ("random_gamma",), {"alpha": 2.0, "beta": 1e-30}, 0.0),
    ("exponential", ("random_exponential",), {"lam": 1e30}, 0.0),
    ("poisson", ("random_poisson",), {"lam": 0.0}, 0.0),
    ("negative_binomial", ("random_negative_binomial",), {"k": 3, "p": 1.0}, 0.0),
    (
        "generalized_negative_binomial",
        ("random_generalized_negative_binomial",),
        {"mu": 0.0, "alpha": 0.5},
        0.0,
    ),
]

CASES: list[OpCase] = []
for _suffix, _aliases, _params, _value in POINTS:
    CASES.extend(
        OpCase(
            name,
            [],
            point(_value),
            params={**_params, "shape": S, "dtype": "float32"},
            dtypes=(np.dtype(np.float32),),
            grad=False,
        )
        for name in (f"_random_{_suffix}", *_aliases)
    )
    CASES.append(OpCase(f"_random_{_suffix}_like", [S], point_like(_value), params=_params))

# float16 and float64 outputs (float16 runs on float32 copies on the cpu)
CASES += [
    OpCase(
        "_random_uniform",
        [],
        point(-1.5),
        params={"low": -1.5, "high": -1.5, "shape": (2, 5), "dtype": dt},
        dtypes=(np.dtype(dt),),
        grad=False,
        id=dt,
    )
    for dt in ("float16", "float64")
]
CASES += [
    OpCase(
        name,
        [],
        lambda shape, dtype, low, **_: np.full(shape, low),
        params={"low": 7, "high": 8, "shape": (5, 2), "dtype": "int32"},
        dtypes=(np.dtype(np.int32),),
        grad=False,
    )
    for name in ("_random_randint", "random_randint")
]


# -- per-row samplers: degenerate parameter arrays ---------------------------------------------


def rows_of(first: Any, shape: tuple[int, ...]) -> Any:
    """Reference of a per-row sampler whose samples all equal first(*inputs)."""

    def reference(*inputs: np.ndarray, **params: Any) -> np.ndarray:
        value = first(*inputs)
        extra = tuple(params.get("shape", ()))
        return np.broadcast_to(value.reshape(value.shape + (1,) * len(extra)), shape + extra)

    return reference


def params_from(make: Any) -> Any:
    """An `inputs` function: the parameter arrays make(rng, dtype) returns."""
    return lambda rng, dtype: [np.asarray(a, dtype=dtype) for a in make(rng)]


def same_pair(rng: np.random.Generator) -> list[np.ndarray]:
    x = rng.uniform(-1, 1, size=S)
    return [x, x.copy()]


# (distribution, degenerate inputs, the value every sample takes, check_op's input value)
MULTI: list[tuple[str, Any, Any, float]] = [
    ("uniform", same_pair, lambda low, high: low, 0.5),
    ("normal", lambda rng: [rng.uniform(-1, 1, S), np.zeros(S)], lambda mu, sigma: mu, 0.0),
    ("gamma", lambda rng: [np.zeros(S), rng.uniform(0.5, 2, S)], lambda a, b: 0 * a, 0.0),
    ("exponential", lambda rng: [np.full(S, 1e30)], lambda lam: 0 * lam, 1e30),
    ("poisson", lambda rng: [np.zeros(S)], lambda lam: lam, 0.0),
    (
        "negative_binomial",
        lambda rng: [rng.integers(1, 5, S), np.ones(S)],
        lambda k, p: 0 * k,
        1.0,
    ),
    (
        "generalized_negative_binomial",
        lambda rng: [np.zeros(S), rng.uniform(0, 2, S)],
        lambda mu, alpha: mu,
        0.0,
    ),
]

for _dist, _make, _first, _at in MULTI:
    _n_in = 1 if _dist in ("exponential", "poisson") else 2
    for _name in (f"_sample_{_dist}", f"sample_{_dist}"):
        CASES.append(
            OpCase(
                _name,
                [S] * _n_in,
                rows_of(_first, S),
                params={"shape": (2,)},
                inputs=params_from(_make),
                low=_at,
                high=_at,
                grad=False,
            )
        )


# -- multinomial and shuffle --------------------------------------------------------------------


def one_hot(rng: np.random.Generator, dtype: Any) -> list[np.ndarray]:
    hot = rng.integers(0, 5, size=(4,))
    return [np.eye(5, dtype=dtype)[hot]]


def multinomial_ref(data: np.ndarray, shape: Any = (), get_prob: bool = False, **_: Any) -> Any:
    hot = np.argmax(data, axis=-1)
    extra = tuple(shape)
    sample = np.broadcast_to(hot.reshape(hot.shape + (1,) * len(extra)), hot.shape + extra)
    return [sample, np.zeros(sample.shape)] if get_prob else sample


for _name in ("_sample_multinomial", "sample_multinomial"):
    CASES += [
        OpCase(
            _name,
            [(4, 5)],
            multinomial_ref,
            params={"shape": (3,)},
            inputs=one_hot,
            grad=False,
            check_op=False,  # check_op draws its own (not one-hot) inputs
        ),
        OpCase(
            _name,
            [(4, 5)],
            multinomial_ref,
            params={"get_prob": True},
            inputs=one_hot,
            grad=False,
            check_op=False,
            id="get_prob",
        ),
    ]

CASES += [
    OpCase(name, [(1, 7)], lambda x: x, grad=False, dtypes=(np.float32, np.float64, np.int32))
    for name in ("_shuffle", "shuffle")
]
