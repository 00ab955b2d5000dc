"""nv.nd._internal: the registered ops whose names start with an underscore."""

from __future__ import annotations

from typing import Any

from ..signature import OpNamespace, make_op_function


def _make(op: Any) -> Any:
    from nnvmpy.ndarray import _EXTRAS, call_op

    return make_op_function(op, call_op, _EXTRAS, "out : NDArray or list of NDArrays")


_ops = OpNamespace(_make, internal=True, module="nnvmpy.nd._internal", publish_to=globals())
__getattr__ = _ops.module_getattr
__dir__ = _ops.module_dir
