"""nv.sym._internal: composing functions for the ops whose names start with an underscore."""

from __future__ import annotations

from typing import Any

from ..signature import OpNamespace


def _make(op: Any) -> Any:
    from nnvmpy.symbol import make

    return make(op)


_ops = OpNamespace(_make, internal=True, module="nnvmpy.sym._internal", publish_to=globals())
__getattr__ = _ops.module_getattr
__dir__ = _ops.module_dir
