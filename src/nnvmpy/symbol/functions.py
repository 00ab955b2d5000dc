"""MXNet's module-level symbol functions that are not single ops.

`maximum`/`minimum`/`pow`/`power`/`hypot` take two symbols, a symbol and a number (either
side), or two numbers, and pick the op (`_maximum`, `_maximum_scalar`, `_rpower_scalar`,
...) as MXNet's symbol.py does. `zeros`/`ones`/`full`/`arange`/`linspace`/`eye` fill in
MXNet's defaults (float32) for the `_zeros`/`_ones`/... init ops.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from ..base import numeric_types
from .arith import SymbolTypeError, apply_op
from .symbol import Symbol


def _is_number(x: Any) -> bool:
    return isinstance(x, numeric_types) and not isinstance(x, bool)


def _two_way(
    what: str,
    left: Any,
    right: Any,
    ops: tuple[str, str, str | None],
    numbers: Callable[[Any, Any], Any],
) -> Any:
    """Symbol-symbol -> ops[0]; symbol-number -> ops[1]; number-symbol -> ops[2] with the
    number as `scalar` (ops[1] when the operation is symmetric: ops[2] None)."""
    both, scalar, reflected = ops
    hint = lambda name: name.replace("_scalar", "scalar")  # noqa: E731 - MXNet's node names
    if isinstance(left, Symbol) and isinstance(right, Symbol):
        return apply_op(both, hint(both), [left, right])
    if isinstance(left, Symbol) and _is_number(right):
        return apply_op(scalar, hint(scalar), [left], scalar=right)
    if _is_number(left) and isinstance(right, Symbol):
        name = reflected or scalar
        return apply_op(name, hint(name), [right], scalar=left)
    if _is_number(left) and _is_number(right):
        return numbers(left, right)
    raise SymbolTypeError(
        f"sym.{what}: expects Symbols or numbers, got {type(left).__name__} and "
        f"{type(right).__name__}"
    )


def maximum(left: Any, right: Any) -> Any:
    """Element-wise maximum of two symbols, or of a symbol and a number."""
    return _two_way("maximum", left, right, ("_maximum", "_maximum_scalar", None), max)


def minimum(left: Any, right: Any) -> Any:
    """Element-wise minimum of two symbols, or of a symbol and a number."""
    return _two_way("minimum", left, right, ("_minimum", "_minimum_scalar", None), min)


def pow(base: Any, exp: Any) -> Any:
    """base ** exp element-wise, for symbols and numbers in any combination."""
    return _two_way("pow", base, exp, ("_power", "_power_scalar", "_rpower_scalar"), operator.pow)


def power(base: Any, exp: Any) -> Any:
    """Alias of pow."""
    return pow(base, exp)


def hypot(left: Any, right: Any) -> Any:
    """sqrt(left**2 + right**2) element-wise."""
    return _two_way("hypot", left, right, ("_hypot", "_hypot_scalar", None), np.hypot)


def _float32(dtype: Any) -> Any:
    return np.float32 if dtype is None else dtype


def zeros(shape: Any, dtype: Any = None, **kwargs: Any) -> Any:
    """A symbol of zeros of `shape` (float32 unless dtype is given)."""
    return _init_op("_zeros", shape=shape, dtype=_float32(dtype), **kwargs)


def ones(shape: Any, dtype: Any = None, **kwargs: Any) -> Any:
    """A symbol of ones of `shape` (float32 unless dtype is given)."""
    return _init_op("_ones", shape=shape, dtype=_float32(dtype), **kwargs)


def full(shape: Any, val: Any, dtype: Any = None, **kwargs: Any) -> Any:
    """A symbol of `shape` filled with `val`."""
    return _init_op("_full", shape=shape, value=float(val), dtype=_float32(dtype), **kwargs)


def arange(
    start: Any,
    stop: Any = None,
    step: float = 1.0,
    repeat: int = 1,
    infer_range: bool = False,
    name: str | None = None,
    dtype: Any = None,
) -> Any:
    """Evenly spaced values in [start, stop), each repeated `repeat` times."""
    return _init_op(
        "_arange",
        name=name,
        start=start,
        stop=stop,
        step=step,
        repeat=repeat,
        infer_range=infer_range,
        dtype=_float32(dtype),
    )


def linspace(
    start: Any,
    stop: Any,
    num: int,
    endpoint: bool = True,
    name: str | None = None,
    dtype: Any = None,
) -> Any:
    """`num` evenly spaced values from start to stop."""
    return _init_op(
        "_linspace",
        name=name,
        start=start,
        stop=stop,
        num=num,
        endpoint=endpoint,
        dtype=_float32(dtype),
    )


def eye(N: int, M: int = 0, k: int = 0, dtype: Any = None, **kwargs: Any) -> Any:
    """An N x M matrix with ones on the k-th diagonal."""
    return _init_op("_eye", N=N, M=M, k=k, dtype=_float32(dtype), **kwargs)


def split_v2(
    ary: Symbol,
    indices_or_sections: Any,
    axis: int = 0,
    squeeze_axis: bool = False,
    name: str | None = None,
    attr: Any = None,
) -> Any:
    """Split along `axis` as numpy.split (op _split_v2): an int N gives N equal parts (the
    axis must divide; checked when shapes are inferred), a tuple of indices the parts
    between them."""
    from nnvmpy.base import NNVMError
    from nnvmpy.registry import Op
    from nnvmpy.symbol.compose import compose

    if not isinstance(ary, Symbol):
        raise NNVMError(f"split_v2: ary must be a Symbol, got {type(ary).__name__}")
    params: dict[str, Any] = {"axis": axis, "squeeze_axis": squeeze_axis}
    if isinstance(indices_or_sections, int | np.integer) and not isinstance(
        indices_or_sections, bool
    ):
        params.update(indices=(), sections=int(indices_or_sections))
    elif isinstance(indices_or_sections, tuple | list):
        params.update(indices=(0, *(int(i) for i in indices_or_sections)), sections=0)
    else:
        raise NNVMError(
            "split_v2: indices_or_sections must be an int or a tuple of ints, got "
            f"{type(indices_or_sections).__name__}"
        )
    return compose(Op.get("_split_v2"), [ary], params, name, attr)


def _init_op(op_name: str, name: str | None = None, attr: Any = None, **params: Any) -> Any:
    from nnvmpy.registry import Op
    from nnvmpy.symbol.compose import compose

    if "dtype" in params:
        params["dtype"] = np.dtype(params["dtype"]).name
    return compose(Op.get(op_name), [], params, name, attr)


__all__ = [
    "arange",
    "eye",
    "full",
    "hypot",
    "linspace",
    "maximum",
    "minimum",
    "ones",
    "pow",
    "power",
    "split_v2",
    "zeros",
]
