"""OpCase rows for compare.py: comparisons and logical ops in their three forms.

References are NumPy's comparison / logical functions, cast to the input's dtype (MXNet
returns 0/1 in the input's dtype). Inputs are small integers (and exact zeros for the
logical ops), so every relation is both true and false somewhere. The outputs are step
functions: no finite-difference gradient (the zero gradient is tested in
tests/ops/test_compare.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from op_db import Inputs, OpCase

RELATIONS: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("equal", np.equal),
    ("not_equal", np.not_equal),
    ("greater", np.greater),
    ("greater_equal", np.greater_equal),
    ("lesser", np.less),
    ("lesser_equal", np.less_equal),
    ("logical_and", np.logical_and),
    ("logical_or", np.logical_or),
    ("logical_xor", np.logical_xor),
]
# the forms registered in broadcast.py / elemwise_scalar.py have their rows there
ELSEWHERE = {
    "broadcast_equal",
    "broadcast_greater",
    "broadcast_lesser",
    "_equal_scalar",
    "_greater_scalar",
    "_lesser_scalar",
}
ALL_DTYPES = (np.float32, np.float64, np.int32, np.uint8)


def small_ints(*shapes: tuple[int, ...]) -> Callable[[np.random.Generator, Any], Inputs]:
    def make(rng: np.random.Generator, dtype: Any) -> Inputs:
        return [rng.integers(0, 3, size=s).astype(dtype) for s in shapes]

    return make


def _ref(fn: Callable[[Any, Any], Any]) -> Callable[..., np.ndarray]:
    return lambda a, b: fn(a, b).astype(np.float64)


def _scalar_ref(fn: Callable[[Any, Any], Any]) -> Callable[..., np.ndarray]:
    return lambda a, scalar: fn(a, scalar).astype(np.float64)


def _legacy_names(rel: str) -> tuple[str, str]:
    """MXNet's older spellings, written out: _Greater_Equal, _GreaterEqualScalar."""
    words = [w[0].upper() + w[1:] for w in rel.split("_")]
    return "_" + "_".join(words), "_" + "".join(words) + "Scalar"


def cases() -> list[OpCase]:
    out = []
    common: dict[str, Any] = {"grad": False, "dtypes": ALL_DTYPES}
    for rel, fn in RELATIONS:
        same = small_ints((2, 3), (2, 3))
        legacy, legacy_scalar = _legacy_names(rel)
        out += [
            OpCase(name, [(2, 3), (2, 3)], _ref(fn), inputs=same, **common)
            for name in (f"_{rel}", legacy)
        ]
        out.append(
            OpCase(
                legacy_scalar,
                [(3, 4)],
                _scalar_ref(fn),
                params={"scalar": 1.0},
                inputs=small_ints((3, 4)),
                **common,
            )
        )
        if f"_{rel}_scalar" not in ELSEWHERE:
            out += [
                OpCase(
                    f"_{rel}_scalar",
                    [(3, 4)],
                    _scalar_ref(fn),
                    params={"scalar": value},
                    inputs=small_ints((3, 4)),
                    id=f"s{int(value)}",
                    **common,
                )
                for value in (0.0, 1.0)
            ]
        if f"broadcast_{rel}" not in ELSEWHERE:
            out += [
                OpCase(
                    f"broadcast_{rel}",
                    shapes,
                    _ref(fn),
                    inputs=small_ints(*shapes),
                    id=tag,
                    **common,
                )
                for tag, shapes in (("row", ((2, 3), (3,))), ("both", ((2, 1, 4), (3, 1))))
            ]
    return out


CASES = cases()
