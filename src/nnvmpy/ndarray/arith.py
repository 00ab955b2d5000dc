"""NDArray's operators and nd's element-wise functions (add, equal, maximum, ...), one table.

Each row names the ops MXNet dispatches to: one for two arrays of one shape, one for
two arrays that broadcast, one for array-op-scalar and one for scalar-op-array.
`nd.add(a, b)`, `a + b` and `b + a` all come from the same row, so the operator, the
reflected operator and the function agree. In-place operators (`a += b`) write into
`a` through the op's out= (a broadcast result is computed aside, then copied in).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from ..base import NNVMError
from ..imperative import invoke
from ..registry import Op
from .errors import NDArrayTypeError
from .ndarray import NDArray

NUMERIC_TYPES = (int, float, np.generic)


class Row(NamedTuple):
    """How one binary operation dispatches."""

    same: str | None  # two arrays of one shape (None: use `bcast`)
    bcast: str  # two arrays that broadcast
    scalar: str  # array op scalar
    rscalar: str  # scalar op array
    python: Callable[[Any, Any], Any]  # scalar op scalar


def _cmp(fn: Callable[[Any, Any], bool]) -> Callable[[Any, Any], int]:
    return lambda x, y: 1 if fn(x, y) else 0


TABLE: dict[str, Row] = {
    "add": Row("elemwise_add", "broadcast_add", "_plus_scalar", "_plus_scalar", operator.add),
    "subtract": Row(
        "elemwise_sub", "broadcast_sub", "_minus_scalar", "_rminus_scalar", operator.sub
    ),
    "multiply": Row("elemwise_mul", "broadcast_mul", "_mul_scalar", "_mul_scalar", operator.mul),
    "divide": Row("elemwise_div", "broadcast_div", "_div_scalar", "_rdiv_scalar", operator.truediv),
    "modulo": Row(None, "broadcast_mod", "_mod_scalar", "_rmod_scalar", operator.mod),
    "power": Row(None, "broadcast_power", "_power_scalar", "_rpower_scalar", operator.pow),
    "maximum": Row(
        None, "broadcast_maximum", "_maximum_scalar", "_maximum_scalar", lambda x, y: max(x, y)
    ),
    "minimum": Row(
        None, "broadcast_minimum", "_minimum_scalar", "_minimum_scalar", lambda x, y: min(x, y)
    ),
    "equal": Row(None, "broadcast_equal", "_equal_scalar", "_equal_scalar", _cmp(operator.eq)),
    "not_equal": Row(
        None, "broadcast_not_equal", "_not_equal_scalar", "_not_equal_scalar", _cmp(operator.ne)
    ),
    "greater": Row(
        None, "broadcast_greater", "_greater_scalar", "_lesser_scalar", _cmp(operator.gt)
    ),
    "greater_equal": Row(
        None,
        "broadcast_greater_equal",
        "_greater_equal_scalar",
        "_lesser_equal_scalar",
        _cmp(operator.ge),
    ),
    "lesser": Row(None, "broadcast_lesser", "_lesser_scalar", "_greater_scalar", _cmp(operator.lt)),
    "lesser_equal": Row(
        None,
        "broadcast_lesser_equal",
        "_lesser_equal_scalar",
        "_greater_equal_scalar",
        _cmp(operator.le),
    ),
    "logical_and": Row(
        None,
        "broadcast_logical_and",
        "_logical_and_scalar",
        "_logical_and_scalar",
        _cmp(lambda x, y: bool(x) and bool(y)),
    ),
    "logical_or": Row(
        None,
        "broadcast_logical_or",
        "_logical_or_scalar",
        "_logical_or_scalar",
        _cmp(lambda x, y: bool(x) or bool(y)),
    ),
    "logical_xor": Row(
        None,
        "broadcast_logical_xor",
        "_logical_xor_scalar",
        "_logical_xor_scalar",
        _cmp(lambda x, y: bool(x) != bool(y)),
    ),
}


def _call(name: str, inputs: list[NDArray], out: Any = None, **params: Any) -> NDArray:
    return invoke(Op.get(name), inputs, params, out=out)[0]


def apply(fn: str, lhs: Any, rhs: Any, out: NDArray | None = None) -> Any:
    """lhs <fn> rhs for arrays and scalars in either order (MXNet's _ufunc_helper)."""
    row = TABLE[fn]
    if isinstance(lhs, NDArray):
        if isinstance(rhs, NDArray):
            name = row.same if (row.same is not None and lhs.shape == rhs.shape) else row.bcast
            return _call(name, [lhs, rhs], out)
        if isinstance(rhs, NUMERIC_TYPES):
            return _call(row.scalar, [lhs], out, scalar=float(rhs))
    elif isinstance(lhs, NUMERIC_TYPES):
        if isinstance(rhs, NDArray):
            return _call(row.rscalar, [rhs], out, scalar=float(lhs))
        if isinstance(rhs, NUMERIC_TYPES):
            return row.python(lhs, rhs)
    bad = rhs if isinstance(lhs, (NDArray, *NUMERIC_TYPES)) else lhs
    raise NDArrayTypeError(
        f"nd.{fn}: operands must be NDArrays or numbers, got {type(bad).__name__}"
    )


def _inplace(fn: str, lhs: NDArray, rhs: Any) -> NDArray:
    """lhs = lhs <fn> rhs, written into lhs's storage."""
    if isinstance(rhs, NDArray) and rhs.shape != lhs.shape:
        result = apply(fn, lhs, rhs)
        if result.shape != lhs.shape:
            raise NNVMError(
                f"nd.{fn} in place: the result of shapes {lhs.shape} and {rhs.shape} "
                f"broadcasts to {result.shape}, which does not fit the left operand"
            )
        _call("_copy", [result], lhs)
        return lhs
    if not isinstance(rhs, (NDArray, *NUMERIC_TYPES)):
        raise NDArrayTypeError(
            f"nd.{fn} in place: the operand must be an NDArray or a number, got "
            f"{type(rhs).__name__}"
        )
    row = TABLE[fn]
    if isinstance(rhs, NDArray) and row.same is None:  # no in-place op: compute aside
        _call("_copy", [apply(fn, lhs, rhs)], lhs)
        return lhs
    return apply(fn, lhs, rhs, out=lhs)


# -- nd functions -------------------------------------------------------------------------------


def _function(fn: str) -> Callable[[Any, Any], Any]:
    def f(lhs: Any, rhs: Any) -> Any:
        return apply(fn, lhs, rhs)

    row = TABLE[fn]
    f.__name__ = f.__qualname__ = fn
    f.__doc__ = (
        f"Element-wise {fn} of two NDArrays (broadcasting, op {row.bcast}), an NDArray and "
        f"a number (op {row.scalar}) or a number and an NDArray (op {row.rscalar})."
    )
    return f


add = _function("add")
subtract = _function("subtract")
multiply = _function("multiply")
divide = _function("divide")
modulo = _function("modulo")


def power(base: Any, exp: Any) -> Any:
    """Element-wise `base ** exp` of two NDArrays (broadcasting, op broadcast_power), an
    NDArray and a number (op _power_scalar) or a number and an NDArray (op _rpower_scalar).
    The parameter names are MXNet's: `nd.power(base=..., exp=...)`."""
    return apply("power", base, exp)


maximum = _function("maximum")
minimum = _function("minimum")
equal = _function("equal")
not_equal = _function("not_equal")
greater = _function("greater")
greater_equal = _function("greater_equal")
lesser = _function("lesser")
lesser_equal = _function("lesser_equal")
logical_and = _function("logical_and")
logical_or = _function("logical_or")
logical_xor = _function("logical_xor")


def true_divide(lhs: Any, rhs: Any) -> Any:
    """The same as divide."""
    return apply("divide", lhs, rhs)


# -- NDArray's operators ------------------------------------------------------------------------


def _forward(fn: str) -> Callable[[NDArray, Any], Any]:
    return lambda self, other: apply(fn, self, other)


def _reflected(fn: str) -> Callable[[NDArray, Any], Any]:
    return lambda self, other: apply(fn, other, self)


def _in_place_method(fn: str) -> Callable[[NDArray, Any], NDArray]:
    return lambda self, other: _inplace(fn, self, other)


# dunder -> (function, how): "fwd" self op other, "rev" other op self, "in" in place
OPERATORS: dict[str, tuple[str, str]] = {
    "__add__": ("add", "fwd"),
    "__radd__": ("add", "rev"),
    "__iadd__": ("add", "in"),
    "__sub__": ("subtract", "fwd"),
    "__rsub__": ("subtract", "rev"),
    "__isub__": ("subtract", "in"),
    "__mul__": ("multiply", "fwd"),
    "__rmul__": ("multiply", "rev"),
    "__imul__": ("multiply", "in"),
    "__truediv__": ("divide", "fwd"),
    "__rtruediv__": ("divide", "rev"),
    "__itruediv__": ("divide", "in"),
    "__mod__": ("modulo", "fwd"),
    "__rmod__": ("modulo", "rev"),
    "__imod__": ("modulo", "in"),
    "__pow__": ("power", "fwd"),
    "__rpow__": ("power", "rev"),
    "__eq__": ("equal", "fwd"),
    "__ne__": ("not_equal", "fwd"),
    "__gt__": ("greater", "fwd"),
    "__ge__": ("greater_equal", "fwd"),
    "__lt__": ("lesser", "fwd"),
    "__le__": ("lesser_equal", "fwd"),
}
_MAKERS = {"fwd": _forward, "rev": _reflected, "in": _in_place_method}


def _neg(self: NDArray) -> NDArray:
    return _call("negative", [self])


def _abs(self: NDArray) -> NDArray:
    return _call("abs", [self])


def install(cls: type) -> None:
    """Attach the operators to NDArray (keeps __hash__: arrays stay usable as dict keys)."""
    for dunder, (fn, how) in OPERATORS.items():
        method = _MAKERS[how](fn)
        method.__name__ = method.__qualname__ = dunder
        method.__doc__ = f"x.{dunder}(y): nd.{fn} ({how})."
        setattr(cls, dunder, method)
    setattr(cls, "__neg__", _neg)  # noqa: B010 - cls is any class here
    setattr(cls, "__abs__", _abs)  # noqa: B010


install(NDArray)

__all__ = [
    "add",
    "divide",
    "equal",
    "greater",
    "greater_equal",
    "lesser",
    "lesser_equal",
    "logical_and",
    "logical_or",
    "logical_xor",
    "maximum",
    "minimum",
    "modulo",
    "multiply",
    "not_equal",
    "power",
    "subtract",
    "true_divide",
]
