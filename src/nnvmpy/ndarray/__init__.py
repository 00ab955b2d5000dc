"""nv.nd: imperative arrays, plus every registered op as a function (generated on access).

`nv.nd.relu(x)` looks the op up in the registry when first used (PEP 562), so ops
registered after import appear too; ops whose names start with an underscore live in
`nv.nd._internal`.
"""

from __future__ import annotations

import inspect
from typing import Any

from ..attrs import FListInputNames, TParseEveryCall
from ..autograd.state import STATE as _AG
from ..base import NNVMError
from ..cached_op import CachedOp as CachedOp  # nd.CachedOp: a symbol called on NDArrays
from ..imperative import _plans_positional as _positional
from ..imperative import invoke_visible, parse_attrs
from ..registry import Op
from ..signature import OpNamespace, input_names, make_op_function
from . import _internal, contrib, image, linalg  # MXNet's _contrib_, _image_, _linalg_ ops
from . import arith as _arith  # noqa: F401 - attaches NDArray's operators
from . import random as random  # nd.random: MXNet's sampling functions
from .arith import (
    add,
    divide,
    equal,
    greater,
    greater_equal,
    lesser,
    lesser_equal,
    logical_and,
    logical_or,
    logical_xor,
    maximum,
    minimum,
    modulo,
    multiply,
    not_equal,
    power,
    subtract,
    true_divide,
)
from .creation import arange, concatenate, eye, linspace, moveaxis, onehot_encode, split_v2
from .histogram import histogram
from .interop import from_dlpack, from_numpy, to_dlpack_for_read, to_dlpack_for_write
from .io import load, load_frombuffer, save
from .ndarray import NDArray, array, empty, full, ones, waitall, zeros

_P = inspect.Parameter
_EXTRAS = [_P("out", _P.KEYWORD_ONLY, default=None)]
# op -> (version, its fixed input names or None, whether inputs may come by keyword)
_names_cache: dict[Op, tuple[int, list[str] | None, bool]] = {}


def call_op(op: Op, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """nd.<op>(*inputs, out=None, **params): inputs positional or by FListInputNames name."""
    if not kwargs and not op.key_var_num_args:  # the hot path: nd.relu(x)
        if len(args) == 1 and not _AG.recording:  # invoke's plan lookup inlined: a frame less
            x = args[0]
            try:
                ctx = x._ctx
                plan = _positional.get((op, ctx.device_type, ctx.device_id, x.shape, x.dtype))
            except AttributeError:
                plan = None
            if plan is not None and plan.simple and plan.version == op.version:
                return plan.run(args, _AG.training)[0]
        vis = invoke_visible(op, args, kwargs)
        return vis[0] if len(vis) == 1 else vis
    inputs = list(args)
    out = None
    if kwargs:
        out = kwargs.pop("out", None)
        kwargs.pop("name", None)  # accepted for symmetry with sym
        hit = _names_cache.get(op)
        if hit is None or hit[0] != op.version:
            # Custom's input names come from the user's prop, built by parsing: as in MXNet,
            # its inputs are positional (parsing here would build the prop twice per call)
            by_keyword = not op.get_attr(TParseEveryCall, False)
            hit = _names_cache[op] = (op.version, input_names(op), by_keyword)
        if not hit[2]:
            _refuse_keyword_inputs(op, kwargs)
        names = hit[1] if hit[1] is not None or not hit[2] else _inputs_by_params(op, kwargs)
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
    vis = invoke_visible(op, inputs, kwargs, out=out)
    return vis[0] if len(vis) == 1 else vis


def _refuse_keyword_inputs(op: Op, kwargs: dict[str, Any]) -> None:
    given = [k for k, v in kwargs.items() if isinstance(v, NDArray)]
    if given:
        raise NNVMError(
            f"{op.name}: inputs are passed by position, but NDArray(s) came by keyword "
            f"{given}; call {op.name}(x, y, ..., params)"
        )


def _inputs_by_params(op: Op, kwargs: dict[str, Any]) -> list[str] | None:
    """Input names of an op whose inputs depend on its params (CTCLoss's data_lengths),
    from FListInputNames of the params in kwargs; input keywords passed as None dropped."""
    list_fn = op.get_attr(FListInputNames)
    if list_fn is None or op.key_var_num_args:
        return None
    declared = {a.name for a in op.arguments if a.type_info.startswith("NDArray")}
    for name in [k for k in declared if k in kwargs and kwargs[k] is None]:
        del kwargs[name]
    params = {k: v for k, v in kwargs.items() if k not in declared}
    try:
        attrs = parse_attrs(op, params)
        op.get_num_inputs(attrs)  # a hostile count (num_weights=2**40) is refused first
        return list(list_fn(attrs))
    except Exception:  # a bad parameter: the call itself reports it
        return None


def _make(op: Op, name: str = "") -> Any:
    return make_op_function(op, call_op, _EXTRAS, "out : NDArray or list of NDArrays")


_ops = OpNamespace(
    _make, internal=False, module="nnvmpy.nd", module_globals=globals(), publish_to=globals()
)
__getattr__ = _ops.module_getattr
__dir__ = _ops.module_dir


__all__ = [
    "NDArray",
    "_internal",
    "add",
    "arange",
    "array",
    "concatenate",
    "contrib",
    "divide",
    "empty",
    "equal",
    "eye",
    "from_dlpack",
    "from_numpy",
    "full",
    "greater",
    "greater_equal",
    "histogram",
    "image",
    "lesser",
    "lesser_equal",
    "linalg",
    "linspace",
    "load",
    "load_frombuffer",
    "logical_and",
    "logical_or",
    "logical_xor",
    "maximum",
    "minimum",
    "modulo",
    "moveaxis",
    "multiply",
    "not_equal",
    "onehot_encode",
    "ones",
    "power",
    "random",
    "save",
    "split_v2",
    "subtract",
    "to_dlpack_for_read",
    "to_dlpack_for_write",
    "true_divide",
    "waitall",
    "zeros",
]

from ..fluent import install_ndarray  # noqa: E402 - needs call_op, defined above

install_ndarray()
