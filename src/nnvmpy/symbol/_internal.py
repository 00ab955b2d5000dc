"""nv.sym._internal: composing functions for the ops whose names start with an underscore."""

from __future__ import annotations

from typing import Any

from ..signature import OpNamespace


def _make(op: Any) -> Any:
    from . import make

    return make(op)


_ops = OpNamespace(_make, internal=True)


def __getattr__(name: str) -> Any:
    try:
        return _ops.get(name)
    except AttributeError:
        raise AttributeError(f"module 'nnvmpy.sym._internal' has no operator {name!r}") from None


def __dir__() -> list[str]:
    return _ops.names()
