"""nv.sym: symbolic graphs, plus every registered op as a composing function (on access).

`nv.sym.quadratic(data, a=1)` builds a node; inputs may be passed by position or by the
names FListInputNames gives, and missing ones become variables `<node>_<input>`.
"""

from __future__ import annotations

import inspect
from typing import Any

from ..registry import Op
from ..signature import OpNamespace, make_op_function
from . import _internal, contrib, image, linalg  # MXNet's _contrib_, _image_, _linalg_ ops
from . import random as random  # sym.random: MXNet's sampling functions
from .compose import Group, Variable, var
from .functions import (
    arange,
    eye,
    full,
    hypot,
    linspace,
    maximum,
    minimum,
    ones,
    pow,
    power,
    split_v2,
    zeros,
)
from .histogram import histogram
from .symbol import Symbol, load, load_json

_P = inspect.Parameter
EXTRAS = [_P("name", _P.KEYWORD_ONLY, default=None), _P("attr", _P.KEYWORD_ONLY, default=None)]


def call_op(
    op: Op, args: tuple[Any, ...], kwargs: dict[str, Any], hint: str | None = None
) -> Symbol:
    """What every generated `nv.sym.<op>` does: compose a node (see compose.py)."""
    from nnvmpy.symbol.compose import compose

    name = kwargs.pop("name", None)
    attr = kwargs.pop("attr", None)
    kwargs.pop("out", None)  # MXNet's generated functions accept and ignore out=
    return compose(op, args, kwargs, name, attr, hint=hint)


def make(op: Op, name: str = "", prefix: str = "") -> Any:
    """The composing function of `op` served as `name` (default: the op's own name). Its
    nodes are named after the name it is called by, as MXNet's: the short name in a
    sub-namespace (`box_nms0`, not `_contrib_box_nms0`), an alias's own (`split0` for
    SliceChannel through `split`)."""
    name = name or op.name
    short = name[len(prefix) :] if prefix and name.startswith(prefix) else name
    if short == op.name:
        return make_op_function(op, call_op, EXTRAS, "out : Symbol")
    hint = short.lower()

    def call_short(op: Op, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Symbol:
        return call_op(op, args, kwargs, hint)

    return make_op_function(op, call_short, EXTRAS, "out : Symbol")


_ops = OpNamespace(
    make, internal=False, module="nnvmpy.sym", module_globals=globals(), publish_to=globals()
)
__getattr__ = _ops.module_getattr
__dir__ = _ops.module_dir


__all__ = [
    "Group",
    "Symbol",
    "Variable",
    "_internal",
    "arange",
    "contrib",
    "eye",
    "full",
    "histogram",
    "hypot",
    "image",
    "linalg",
    "linspace",
    "load",
    "load_json",
    "maximum",
    "minimum",
    "ones",
    "pow",
    "power",
    "random",
    "split_v2",
    "var",
    "zeros",
]
from .. import _symbol_fluent  # noqa: E402,F401 - attaches Symbol's fluent methods
