"""OpCase rows for broadcast.py and reduce.py: broadcasting arithmetic, broadcast_to/axis,
and the reductions with axis / keepdims / exclude.

References are NumPy's own broadcasting and reductions on float64 inputs; the MXNet axis
rules (None = every axis, exclude, (1,) for a full reduction) are spelled out in
`reduce_ref`. Ops with a kink (maximum/minimum, max/min, |x|) get inputs on grids kept
well apart, so finite differences never step across the kink.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from op_db import Inputs, OpCase

# (lhs, rhs) pairs: row bias, rank extension both sides, per-channel NCHW, a scalar (1,)
PAIRS = {
    "row": ((2, 3), (3,)),
    "rank": ((2, 1, 4), (3, 1)),
    "nchw": ((2, 3, 4, 5), (1, 3, 1, 1)),
    "scalar": ((2, 3), (1,)),
}

InputFn = Callable[[np.random.Generator, Any], Inputs]


def pair(lhs_range: tuple[float, float], rhs_range: tuple[float, float]) -> Callable[..., InputFn]:
    """Inputs uniform in each side's range, random sign when the range is positive."""

    def for_shapes(shapes: tuple[tuple[int, ...], ...], signed_rhs: bool = False) -> InputFn:
        def make(rng: np.random.Generator, dtype: Any) -> Inputs:
            lhs = rng.uniform(*lhs_range, size=shapes[0])
            rhs = rng.uniform(*rhs_range, size=shapes[1])
            if signed_rhs:
                rhs *= rng.choice([-1.0, 1.0], size=shapes[1])
            return [lhs.astype(dtype), rhs.astype(dtype)]

        return make

    return for_shapes


def separated(shapes: tuple[tuple[int, ...], ...]) -> InputFn:
    """lhs on the grid k/10 + 0.05, rhs on k/10: every lhs - rhs is at least 0.05 from 0."""

    def make(rng: np.random.Generator, dtype: Any) -> Inputs:
        lhs = rng.integers(-10, 10, size=shapes[0]) / 10 + 0.05
        rhs = rng.integers(-10, 11, size=shapes[1]) / 10
        return [lhs.astype(dtype), rhs.astype(dtype)]

    return make


def distinct(shape: tuple[int, ...], low: float = -1.0, high: float = 1.0) -> InputFn:
    """A shuffled even grid on [low, high]: no ties, neighbours at least (high-low)/n apart."""

    def make(rng: np.random.Generator, dtype: Any) -> Inputs:
        n = int(np.prod(shape))
        grid = low + (high - low) * (np.arange(n) + 0.5) / n
        return [rng.permutation(grid).reshape(shape).astype(dtype)]

    return make


def integer_pairs(shapes: tuple[tuple[int, ...], ...]) -> InputFn:
    """Small integers, so equal / greater / lesser all happen."""

    def make(rng: np.random.Generator, dtype: Any) -> Inputs:
        return [rng.integers(-2, 3, size=s).astype(dtype) for s in shapes]

    return make


def mod_pair(shapes: tuple[tuple[int, ...], ...], signed_rhs: bool = False) -> InputFn:
    """rhs = ±c (one magnitude c in [0.6, 1.4]) and lhs = q c with q 0.1 away from the
    integers: every broadcast lhs / rhs is ±q, so lhs mod rhs is smooth there."""

    def make(rng: np.random.Generator, dtype: Any) -> Inputs:
        c = rng.uniform(0.6, 1.4)
        rhs = c * rng.choice([-1.0, 1.0], size=shapes[1])
        q = rng.integers(-3, 3, size=shapes[0]) + rng.uniform(0.1, 0.9, size=shapes[0])
        return [(q * c).astype(dtype), rhs.astype(dtype)]

    return make


def py_mod(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a mod b with the sign of b, and 0 where b == 0 (MXNet's mod)."""
    a, b = np.broadcast_arrays(a, b)
    safe = np.where(b == 0, 1, b)
    return np.where(b == 0, 0, a - np.floor(a / safe) * safe)


BINARY: list[tuple[str, Callable[..., Any], dict[str, Any]]] = [
    ("broadcast_add", np.add, {}),
    ("broadcast_plus", np.add, {}),
    ("broadcast_sub", np.subtract, {}),
    ("broadcast_minus", np.subtract, {}),
    ("broadcast_mul", np.multiply, {}),
    ("broadcast_div", np.divide, {"make": pair((-1.0, 1.0), (0.5, 1.5)), "signed": True}),
    ("broadcast_power", np.power, {"make": pair((0.5, 1.5), (-1.5, 1.5))}),
    ("broadcast_maximum", np.maximum, {"make": separated}),
    ("broadcast_minimum", np.minimum, {"make": separated}),
    ("broadcast_hypot", np.hypot, {"make": pair((0.3, 1.5), (0.3, 1.5)), "signed": True}),
    ("broadcast_mod", py_mod, {"make": mod_pair}),
]
COMPARE: list[tuple[str, Callable[..., Any]]] = [
    ("broadcast_equal", np.equal),
    ("broadcast_greater", np.greater),
    ("broadcast_lesser", np.less),
]


def binary_cases() -> list[OpCase]:
    cases = []
    for name, fn, kw in BINARY:
        for tag, shapes in PAIRS.items():
            make = kw.get("make")
            inputs = None
            if make is separated:
                inputs = separated(shapes)
            elif make is not None:
                inputs = make(shapes, kw.get("signed", False))
            # check_op draws its own inputs uniformly in [low, high]: keep them in the domain
            domain = {"low": 0.5, "high": 1.5} if "make" in kw and make is not separated else {}
            cases.append(OpCase(name, shapes, fn, inputs=inputs, id=tag, **domain))
    for name, fn in COMPARE:
        for tag in ("row", "nchw"):
            shapes = PAIRS[tag]
            cases.append(
                OpCase(
                    name,
                    shapes,
                    lambda a, b, fn=fn: fn(a, b).astype(np.float64),
                    inputs=integer_pairs(shapes),
                    grad=False,  # a step function: the zero gradient is tested in the test file
                    id=tag,
                )
            )
    return cases


# -- broadcast_to / broadcast_axis ---------------------------------------------------------


def broadcast_to_ref(x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    x = x.reshape((1,) * (len(shape) - x.ndim) + x.shape)
    return np.broadcast_to(x, tuple(s if s else d for s, d in zip(shape, x.shape)))


def broadcast_axis_ref(x: np.ndarray, axis: Any, size: Any) -> np.ndarray:
    axis = (axis,) if isinstance(axis, int) else axis
    size = (size,) if isinstance(size, int) else size
    target = list(x.shape)
    for a, s in zip(axis, size):
        target[a] = s
    return np.broadcast_to(x, tuple(target))


EXPAND = [
    OpCase("broadcast_to", [(2, 1, 4)], broadcast_to_ref, {"shape": (2, 3, 4)}, id="mid"),
    OpCase("broadcast_to", [(1, 3, 1)], broadcast_to_ref, {"shape": (2, 0, 4)}, id="zero-keeps"),
    OpCase("broadcast_to", [(3,)], broadcast_to_ref, {"shape": (2, 3)}, id="rank"),
    OpCase("broadcast_axis", [(2, 1, 4)], broadcast_axis_ref, {"axis": 1, "size": 3}, id="one"),
    OpCase(
        "broadcast_axis",
        [(1, 3, 1)],
        broadcast_axis_ref,
        {"axis": (0, -1), "size": (2, 4)},
        id="two",
    ),
    OpCase("broadcast_axes", [(2, 1)], broadcast_axis_ref, {"axis": 1, "size": 5}),
]

# -- reductions ----------------------------------------------------------------------------


def reduce_ref(fn: Callable[..., Any]) -> Callable[..., np.ndarray]:
    """MXNet's axis rules around a NumPy reduction."""

    def ref(x: np.ndarray, axis: Any = None, keepdims: bool = False, exclude: bool = False):
        if axis is None or axis == ():
            axes = tuple(range(x.ndim))
        else:
            axes = tuple(a % x.ndim for a in ((axis,) if isinstance(axis, int) else axis))
            if exclude:
                axes = tuple(d for d in range(x.ndim) if d not in axes)
        out = fn(x, axis=axes, keepdims=keepdims)
        return np.asarray(out).reshape(-1) if not keepdims and out.ndim == 0 else out

    return ref


def norm_ref(x: np.ndarray, ord: int = 2, axis: Any = None, keepdims: bool = False):
    def fn(v: np.ndarray, axis: Any, keepdims: bool) -> np.ndarray:
        if ord == 1:
            return np.abs(v).sum(axis=axis, keepdims=keepdims)
        return np.sqrt((v * v).sum(axis=axis, keepdims=keepdims))

    return reduce_ref(fn)(x, axis, keepdims)


X = (2, 3, 4)
REDUCE = [
    OpCase("sum", [X], reduce_ref(np.sum), id="all"),
    OpCase("sum", [X], reduce_ref(np.sum), {"axis": 1}, id="axis1"),
    OpCase("sum", [X], reduce_ref(np.sum), {"axis": (0, 2), "keepdims": True}, id="keepdims"),
    OpCase("sum", [X], reduce_ref(np.sum), {"axis": 1, "exclude": True}, id="exclude"),
    OpCase("sum", [X], reduce_ref(np.sum), {"axis": -1}, id="negative"),
    OpCase("sum", [X], reduce_ref(np.sum), {"axis": (0, 1, 2)}, id="every-axis"),
    OpCase("sum_axis", [X], reduce_ref(np.sum), {"axis": 0}),
    OpCase("mean", [X], reduce_ref(np.mean), {"axis": 1, "keepdims": True}, id="keepdims"),
    OpCase("mean", [X], reduce_ref(np.mean), {"axis": 0, "exclude": True}, id="exclude"),
    OpCase("mean", [X], reduce_ref(np.mean), id="all"),
    OpCase("max", [X], reduce_ref(np.max), {"axis": 1}, inputs=distinct(X), id="axis1"),
    OpCase(
        "max",
        [X],
        reduce_ref(np.max),
        {"axis": (0, 2), "keepdims": True},
        inputs=distinct(X),
        id="keepdims",
    ),
    OpCase("max", [X], reduce_ref(np.max), inputs=distinct(X), id="all"),
    OpCase("max_axis", [X], reduce_ref(np.max), {"axis": 2}, inputs=distinct(X)),
    OpCase("min", [X], reduce_ref(np.min), {"axis": 0}, inputs=distinct(X), id="axis0"),
    OpCase(
        "min",
        [X],
        reduce_ref(np.min),
        {"axis": 2, "exclude": True},
        inputs=distinct(X),
        id="exclude",
    ),
    OpCase("min_axis", [X], reduce_ref(np.min), {"axis": -1}, inputs=distinct(X)),
    OpCase("prod", [X], reduce_ref(np.prod), {"axis": 1}, low=0.5, high=1.5, id="axis1"),
    OpCase("prod", [(2, 3)], reduce_ref(np.prod), low=0.5, high=1.5, id="all"),
    OpCase("norm", [X], norm_ref, id="all"),
    OpCase("norm", [X], norm_ref, {"axis": (0, 2), "keepdims": True}, id="keepdims"),
    OpCase("norm", [X], norm_ref, {"ord": 1, "axis": 1}, inputs=distinct(X), id="ord1"),
]

# -- broadcast_like ------------------------------------------------------------------------------


def like_ref(lhs: np.ndarray, rhs: np.ndarray, lhs_axes: Any = None, rhs_axes: Any = None):
    if lhs_axes is None:
        return np.broadcast_to(lhs, rhs.shape)
    target = list(lhs.shape)
    for la, ra in zip(lhs_axes, rhs_axes):
        target[la] = rhs.shape[ra]
    return np.broadcast_to(lhs, tuple(target))


LIKE = [
    OpCase("broadcast_like", [(1, 3), (2, 3)], like_ref, grad_inputs=[0], id="shape"),
    OpCase("broadcast_like", [(2, 1, 1), (2, 3, 4)], like_ref, grad_inputs=[0], id="two-axes"),
    OpCase(
        "broadcast_like",
        [(2, 1, 3), (4, 5, 6)],
        like_ref,
        {"lhs_axes": (1,), "rhs_axes": (-1,)},
        grad_inputs=[0],
        id="axes",
    ),
]

CASES = binary_cases() + EXPAND + REDUCE + LIKE
