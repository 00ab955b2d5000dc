"""nv.sym.linalg: composing functions for the `_linalg_<name>` ops (MXNet's sym.linalg)."""

from __future__ import annotations

from typing import Any

from ..signature import sub_namespace


def _make(op: Any, name: str) -> Any:
    from nnvmpy.symbol import make

    return make(op, name, "_linalg_")


_ops = sub_namespace("_linalg_", _make, "nnvmpy.sym.linalg", globals())
__getattr__ = _ops.module_getattr
__dir__ = _ops.module_dir
