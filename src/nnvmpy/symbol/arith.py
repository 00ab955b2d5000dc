"""Python operators on symbols, as MXNet's Symbol defines them.

Two symbols use the same-shape element-wise ops (`elemwise_add`, `_maximum`, `_equal`,
...); a symbol and a number use the `_scalar` ops. Nodes are named as MXNet names them
(`_plus0`, `_mulscalar0`, `_equal0`), after the aliases MXNet's symbol.py calls. Comparisons
build symbols, so `bool(symbol)` raises (Symbol.__bool__) instead of answering.
"""

from __future__ import annotations

from typing import Any

from ..base import NNVMError, numeric_types

# operator -> (op for two symbols, its name hint, op for symbol-and-number, its hint)
_BINARY: dict[str, tuple[str | None, str, str, str]] = {
    "add": ("elemwise_add", "_plus", "_plus_scalar", "_plusscalar"),
    "sub": ("elemwise_sub", "_minus", "_minus_scalar", "_minusscalar"),
    "rsub": (None, "", "_rminus_scalar", "_rminusscalar"),
    "mul": ("elemwise_mul", "_mul", "_mul_scalar", "_mulscalar"),
    "div": ("elemwise_div", "_div", "_div_scalar", "_divscalar"),
    "rdiv": (None, "", "_rdiv_scalar", "_rdivscalar"),
    "mod": ("_mod", "_mod", "_mod_scalar", "_modscalar"),
    "rmod": (None, "", "_rmod_scalar", "_rmodscalar"),
    "pow": ("_power", "_power", "_power_scalar", "_powerscalar"),
    "rpow": (None, "", "_rpower_scalar", "_rpowerscalar"),
    "eq": ("_equal", "_equal", "_equal_scalar", "_equal_scalar"),
    "ne": ("_not_equal", "_not_equal", "_not_equal_scalar", "_not_equal_scalar"),
    "gt": ("_greater", "_greater", "_greater_scalar", "_greater_scalar"),
    "ge": ("_greater_equal", "_greater_equal", "_greater_equal_scalar", "_greater_equal_scalar"),
    "lt": ("_lesser", "_lesser", "_lesser_scalar", "_lesser_scalar"),
    "le": ("_lesser_equal", "_lesser_equal", "_lesser_equal_scalar", "_lesser_equal_scalar"),
}


class SymbolTypeError(NNVMError, TypeError):
    """An operand a symbol operator cannot take (MXNet raises TypeError)."""


def apply_op(op_name: str, hint: str, inputs: list[Any], **params: Any) -> Any:
    """Compose `op_name` on `inputs` with an MXNet-style default name `<hint><i>`."""
    from nnvmpy.registry import Op
    from nnvmpy.symbol.compose import compose

    return compose(Op.get(op_name), inputs, params, None, hint=hint)


def binary(kind: str, lhs: Any, rhs: Any) -> Any:
    from nnvmpy.symbol.symbol import Symbol

    same, same_hint, scalar, scalar_hint = _BINARY[kind]
    if isinstance(rhs, Symbol):
        if same is None:  # reflected operators only see a non-symbol on the left
            raise SymbolTypeError(f"Symbol: __{kind}__ expects a number, got a Symbol")
        return apply_op(same, same_hint, [lhs, rhs])
    if isinstance(rhs, numeric_types) and not isinstance(rhs, bool):
        return apply_op(scalar, scalar_hint, [lhs], scalar=rhs)
    raise SymbolTypeError(
        f"Symbol: operator __{kind}__ does not support operands of type {type(rhs).__name__}"
    )


class SymbolArithmetic:
    """The operator methods of Symbol (a mixin so symbol.py stays about graphs)."""

    __slots__ = ()

    def __add__(self, other: Any) -> Any:
        return binary("add", self, other)

    __radd__ = __add__

    def __sub__(self, other: Any) -> Any:
        return binary("sub", self, other)

    def __rsub__(self, other: Any) -> Any:
        return binary("rsub", self, other)

    def __mul__(self, other: Any) -> Any:
        return binary("mul", self, other)

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> Any:
        return binary("div", self, other)

    def __rtruediv__(self, other: Any) -> Any:
        return binary("rdiv", self, other)

    __div__ = __truediv__
    __rdiv__ = __rtruediv__

    def __mod__(self, other: Any) -> Any:
        return binary("mod", self, other)

    def __rmod__(self, other: Any) -> Any:
        return binary("rmod", self, other)

    def __pow__(self, other: Any) -> Any:
        return binary("pow", self, other)

    def __rpow__(self, other: Any) -> Any:
        return binary("rpow", self, other)

    def __neg__(self) -> Any:
        return binary("mul", self, -1.0)

    def __abs__(self) -> Any:
        return apply_op("abs", "abs", [self])

    def __eq__(self, other: Any) -> Any:
        return binary("eq", self, other)

    def __ne__(self, other: Any) -> Any:
        return binary("ne", self, other)

    def __gt__(self, other: Any) -> Any:
        return binary("gt", self, other)

    def __ge__(self, other: Any) -> Any:
        return binary("ge", self, other)

    def __lt__(self, other: Any) -> Any:
        return binary("lt", self, other)

    def __le__(self, other: Any) -> Any:
        return binary("le", self, other)


__all__ = ["SymbolArithmetic", "SymbolTypeError", "apply_op", "binary"]
