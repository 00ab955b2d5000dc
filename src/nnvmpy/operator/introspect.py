"""MXNet's `mx.operator` introspection: the registered op names and an op's arguments."""

from __future__ import annotations

from typing import NamedTuple

from ..base import OpNotFoundError
from ..registry import Op


class OperatorArguments(NamedTuple):
    """An op's arguments as MXNet describes them: names, type strings, count."""

    names: list[str]
    types: list[str]
    narg: int


def get_all_registered_operators() -> list[str]:
    """Every registered op name (built-in, legacy, Custom), as MXNet's MXListAllOpNames."""
    return Op.list_op_names()


def get_operator_arguments(op_name: str) -> OperatorArguments:
    """The declared arguments of `op_name`: inputs and parameters, with MXNet's type strings
    ("NDArray-or-Symbol", "{'relu', ...}, required", "int, optional, default='1'")."""
    if not isinstance(op_name, str):
        raise OpNotFoundError(f"get_operator_arguments: op_name must be a str, got {op_name!r}")
    args = Op.get(op_name).arguments
    return OperatorArguments([a.name for a in args], [a.type_info for a in args], len(args))


__all__ = ["OperatorArguments", "get_all_registered_operators", "get_operator_arguments"]
