"""nv.sym: symbolic graphs, plus every registered op as a composing function (on access).

`nv.sym.quadratic(data, a=1)` builds a node; inputs may be passed by position or by the
names FListInputNames gives, and missing ones become variables `<node>_<input>`.
"""

from __future__ import annotations

import inspect
from typing import Any

from ..registry import Op
from ..signature import OpNamespace, make_op_function
from . import _internal
from .symbol import Group, Symbol, Variable, load, load_json, var

_P = inspect.Parameter
EXTRAS = [_P("name", _P.KEYWORD_ONLY, default=None), _P("attr", _P.KEYWORD_ONLY, default=None)]


def call_op(op: Op, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Symbol:
    from .symbol import compose

    name = kwargs.pop("name", None)
    attr = kwargs.pop("attr", None)
    return compose(op, args, kwargs, name, attr)


def make(op: Op) -> Any:
    return make_op_function(op, call_op, EXTRAS, "out : Symbol")


_ops = OpNamespace(
    make, internal=False, module="nnvmpy.sym", module_globals=globals(), publish_to=globals()
)
__getattr__ = _ops.module_getattr
__dir__ = _ops.module_dir


__all__ = ["Group", "Symbol", "Variable", "_internal", "load", "load_json", "var"]
