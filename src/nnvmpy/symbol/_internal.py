"""nv.sym._internal: composing functions for the ops whose names start with an underscore."""

from __future__ import annotations

from typing import Any

from ..signature import OpNamespace


def _make(op: Any, name: str) -> Any:
    from nnvmpy.symbol import make

    return make(op, name)


_ops = OpNamespace(_make, internal=True, module="nnvmpy.sym._internal", publish_to=globals())
__getattr__ = _ops.module_getattr
__dir__ = _ops.module_dir
