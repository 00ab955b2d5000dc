"""nv.operator: MXNet's Python-facing operator front-ends, adapted onto the registry.

* legacy.py — `OperatorProperty` / `Operator`, registered with `register_op_property`
  (MXNet's MXNET_REGISTER_OP_PROPERTY), for ops with aux states, resources, hidden
  outputs and a hand-declared backward dependency.
* custom.py — `CustomOp` / `CustomOpProp` with `@register(op_type)`, used through
  `nv.nd.Custom` / `nv.sym.Custom(..., op_type=...)`, for ops written in Python.

Both only produce registry attributes; the passes, executor, nd and sym never learn
which front-end made an op. See docs/adding_ops.md for when to use which.
"""

from __future__ import annotations

from .custom import CustomOp, CustomOpProp, register, registered_op_types
from .introspect import OperatorArguments, get_all_registered_operators, get_operator_arguments
from .legacy import Operator, OperatorProperty, assign, register_op_property
from .numpy_op import NumpyOp

__all__ = [
    "CustomOp",
    "CustomOpProp",
    "NumpyOp",
    "Operator",
    "OperatorArguments",
    "OperatorProperty",
    "assign",
    "get_all_registered_operators",
    "get_operator_arguments",
    "register",
    "register_op_property",
    "registered_op_types",
]
