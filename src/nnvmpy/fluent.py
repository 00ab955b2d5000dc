"""Fluent methods: `x.exp()`, `x.sum(axis=1)`, `s.reshape(shape=...)` for NDArray and Symbol.

One table maps each method MXNet 1.9.1 exposes fluently to the op it calls with the
array (or symbol) as the first input; `install` attaches the methods to a class with
the front-end's call function (nd's or sym's). A method whose op is not registered
yet raises the registry's "unknown op" NNVMError when called, not at import.

Positional arguments after `self` fill the op's remaining inputs, then its parameters
in declaration order, as in MXNet's generated functions: `x.clip(0, 1)` is
`nd.clip(x, a_min=0, a_max=1)`. Methods a class defines itself (NDArray.reshape, which
returns a view; NDArray.squeeze(inplace=)) are left alone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .registry import Op
from .signature import input_names

# method -> op; the same op when the names agree
_SAME = [
    "zeros_like",
    "ones_like",
    "broadcast_axes",
    "repeat",
    "pad",
    "swapaxes",
    "split",
    "slice",
    "slice_axis",
    "slice_like",
    "take",
    "one_hot",
    "pick",
    "sort",
    "topk",
    "argsort",
    "argmax",
    "argmax_channel",
    "argmin",
    "clip",
    "abs",
    "sign",
    "shape_array",
    "size_array",
    "expand_dims",
    "tile",
    "transpose",
    "flip",
    "depth_to_space",
    "space_to_depth",
    "diag",
    "sum",
    "nansum",
    "prod",
    "nanprod",
    "mean",
    "max",
    "min",
    "norm",
    "round",
    "rint",
    "fix",
    "floor",
    "ceil",
    "trunc",
    "sin",
    "cos",
    "tan",
    "arcsin",
    "arccos",
    "arctan",
    "degrees",
    "radians",
    "sinh",
    "cosh",
    "tanh",
    "arcsinh",
    "arccosh",
    "arctanh",
    "exp",
    "expm1",
    "log",
    "log10",
    "log2",
    "log1p",
    "log_sigmoid",
    "sqrt",
    "rsqrt",
    "cbrt",
    "rcbrt",
    "square",
    "reciprocal",
    "relu",
    "sigmoid",
    "softmax",
    "log_softmax",
    "softmin",
    "mish",
    "squeeze",
    "reshape_like",
    "broadcast_to",
    "broadcast_like",
]
FLUENT: dict[str, str] = {name: name for name in _SAME}
FLUENT.update(
    {
        "flatten": "Flatten",
        "reshape": "Reshape",
        "astype": "Cast",
        "split_v2": "_split_v2",
    }
)
# methods served by a namespace function of the same name rather than the op directly
# (split_v2 turns indices_or_sections into the op's indices)
NAMESPACE_FUNCTIONS = {"split_v2"}

Call = Callable[[Op, tuple[Any, ...], dict[str, Any]], Any]


def bind_positional(op: Op, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """Move positional arguments past the op's inputs into kwargs (its parameters, in order).

    Returns the positional inputs; TypeError when there are more arguments than the op
    has inputs and parameters, or one is given twice.
    """
    names = input_names(op)
    if names is None or len(args) <= len(names):
        return args
    fields = list(op.param_cls.field_specs()) if op.param_cls is not None else []
    fields = [f for f in fields if f not in names and f != op.key_var_num_args]
    extra = args[len(names) :]
    if len(extra) > len(fields):
        raise TypeError(
            f"{op.name}() takes {len(names)} inputs and {len(fields)} parameters, "
            f"got {len(args)} positional arguments"
        )
    for field, value in zip(fields, extra):
        if field in kwargs:
            raise TypeError(f"{op.name}() got multiple values for argument {field!r}")
        kwargs[field] = value
    return args[: len(names)]


def _method(name: str, op_name: str, call: Call, namespace: Callable[[], Any], named: bool) -> Any:
    hint = op_name.lower()  # a node is named after the function called, as in MXNet: flip0

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        if name in NAMESPACE_FUNCTIONS:
            fn = getattr(namespace(), name, None)
            if fn is not None:
                return fn(self, *args, **kwargs)
        op = Op.get(op_name)  # NNVMError naming the op (with close matches) if unknown
        inputs = bind_positional(op, (self, *args), kwargs)
        if named:
            return call(op, inputs, kwargs, hint)  # type: ignore[call-arg]
        return call(op, inputs, kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = (
        f"Convenience fluent method for `{op_name}`: the arguments are the same as for "
        f"the `{op_name}` op, with this array as its first input."
    )
    return method


def install(cls: type, call: Call, namespace: Callable[[], Any], named: bool = False) -> list[str]:
    """Attach every fluent method `cls` does not define itself; returns the names added.

    `call(op, inputs, kwargs)` runs the op in the front-end (nd.call_op, sym.call_op);
    named: `call` takes a fourth argument, the node's name hint (sym.call_op);
    `namespace()` returns the front-end module (for NAMESPACE_FUNCTIONS).
    """
    added = []
    for name, op_name in FLUENT.items():
        if hasattr(cls, name):
            continue
        setattr(cls, name, _method(name, op_name, call, namespace, named))
        added.append(name)
    return added


def install_ndarray() -> None:
    from nnvmpy import ndarray as nd
    from nnvmpy.ndarray import NDArray

    install(NDArray, nd.call_op, lambda: nd)


def install_symbol() -> None:
    from nnvmpy import symbol as sym
    from nnvmpy.symbol import Symbol

    install(Symbol, sym.call_op, lambda: sym, named=True)


__all__ = ["FLUENT", "bind_positional", "install", "install_ndarray", "install_symbol"]
