"""nv.sym.image: composing functions for the `_image_<name>` ops (MXNet's sym.image)."""

from __future__ import annotations

from typing import Any

from ..signature import sub_namespace


def _make(op: Any, name: str) -> Any:
    from nnvmpy.symbol import make

    return make(op, name, "_image_")


_ops = sub_namespace("_image_", _make, "nnvmpy.sym.image", globals())
__getattr__ = _ops.module_getattr
__dir__ = _ops.module_dir
