"""nv.nd: imperative arrays, plus every registered op as a function (generated on access).

`nv.nd.relu(x)` looks the op up in the registry when first used (PEP 562), so ops
registered after import appear too; ops whose names start with an underscore live in
`nv.nd._internal`.
"""

from __future__ import annotations

import inspect
from typing import Any

from ..imperative import invoke, parse_attrs, visible_outputs
from ..registry import Op
from ..signature import OpNamespace, input_names, make_op_function
from . import _internal
from .ndarray import NDArray, array, empty, full, ones, waitall, zeros

_P = inspect.Parameter
_EXTRAS = [_P("out", _P.KEYWORD_ONLY, default=None)]
_names_cache: dict[Op, tuple[int, list[str] | None]] = {}


def call_op(op: Op, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """nd.<op>(*inputs, out=None, **params): inputs positional or by FListInputNames name."""
    inputs = list(args)
    out = None
    if kwargs:  # the hot path, nd.relu(x), skips all of this
        out = kwargs.pop("out", None)
        kwargs.pop("name", None)  # accepted for symmetry with sym
        hit = _names_cache.get(op)
        if hit is None or hit[0] != op.version:
            hit = _names_cache[op] = (op.version, input_names(op))
        names = hit[1]
        if names is not None and any(n in kwargs for n in names):
            inputs += [None] * (len(names) - len(inputs))
            for i, n in enumerate(names):
                if n in kwargs:
                    if inputs[i] is not None:
                        raise TypeError(f"{op.name}() got input {n!r} both by position and keyword")
                    inputs[i] = kwargs.pop(n)
            while inputs and inputs[-1] is None:
                inputs.pop()
    if op.key_var_num_args and kwargs.get(op.key_var_num_args) is None:
        kwargs[op.key_var_num_args] = len(inputs)
    outputs = invoke(op, inputs, kwargs, out=out)
    if len(outputs) == 1:
        return outputs[0]
    vis = visible_outputs(op, parse_attrs(op, kwargs), outputs)
    return vis[0] if len(vis) == 1 else vis


def _make(op: Op) -> Any:
    return make_op_function(op, call_op, _EXTRAS, "out : NDArray or list of NDArrays")


_ops = OpNamespace(
    _make, internal=False, module="nnvmpy.nd", module_globals=globals(), publish_to=globals()
)
__getattr__ = _ops.module_getattr
__dir__ = _ops.module_dir


__all__ = ["NDArray", "_internal", "array", "empty", "full", "ones", "waitall", "zeros"]
