"""nv.nd.linalg: the ops registered as `_linalg_<name>`, as `<name>` (MXNet's nd.linalg).

Generated on access like nv.nd, so ops registered later appear too.
"""

from __future__ import annotations

from typing import Any

from ..signature import sub_namespace


def _make(op: Any, name: str = "") -> Any:
    from nnvmpy.ndarray import _make as make_nd_function

    return make_nd_function(op)


_ops = sub_namespace("_linalg_", _make, "nnvmpy.nd.linalg", globals())
__getattr__ = _ops.module_getattr
__dir__ = _ops.module_dir
