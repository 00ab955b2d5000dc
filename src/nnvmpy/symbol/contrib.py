"""nv.sym.contrib: composing functions for the `_contrib_<name>` ops (MXNet's sym.contrib)."""

from __future__ import annotations

from typing import Any

from ..signature import sub_namespace


def _make(op: Any) -> Any:
    from . import make

    return make(op)


_ops = sub_namespace("_contrib_", _make, "nnvmpy.sym.contrib", globals())
__getattr__ = _ops.module_getattr
__dir__ = _ops.module_dir
