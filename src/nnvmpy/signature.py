"""Op → a real Python function with an inspect.Signature and a docstring (no exec).

Shared by nv.nd and nv.sym: inputs come from FListInputNames (or *data for variadic ops),
then the Parameter fields as keyword-only arguments, then the front-end's own extras
(`out` for nd, `name`/`attr` for sym).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from .attrs import FListInputNames
from .registry import NodeAttrs, Op, on_change

P = inspect.Parameter
_REQUIRED = P.empty


def input_names(op: Op) -> list[str] | None:
    """Names of the op's inputs with default attributes; None when they are variadic."""
    if callable(op.num_inputs) or op.key_var_num_args:
        return None
    list_fn = op.get_attr(FListInputNames)
    if list_fn is not None:
        try:
            return list(list_fn(NodeAttrs(op, "")))
        except Exception:
            pass
    if op.num_inputs == 1:
        return ["data"]
    return [f"arg{i}" for i in range(op.num_inputs)]


def param_parameters(op: Op) -> list[inspect.Parameter]:
    """Keyword-only parameters from the op's Parameter class (required ones have no default)."""
    if op.param_cls is None:
        return []
    params = []
    for name, fld in op.param_cls.field_specs().items():
        default = _REQUIRED if fld.required else fld.default
        if name == op.key_var_num_args:
            default = None  # counted from the positional inputs when not given
        params.append(P(name, P.KEYWORD_ONLY, default=default))
    return params


def op_signature(op: Op, extras: list[inspect.Parameter]) -> inspect.Signature:
    names = input_names(op)
    if names is None:
        inputs = [P("data", P.VAR_POSITIONAL)]
    else:
        inputs = [P(n, P.POSITIONAL_OR_KEYWORD, default=None) for n in names]
    params = param_parameters(op)
    taken = {p.name for p in inputs} | {p.name for p in params}
    extras = [p for p in extras if p.name not in taken]
    tail = [P("kwargs", P.VAR_KEYWORD)] if op.param_cls is None else []
    return inspect.Signature([*inputs, *params, *extras, *tail])


def op_docstring(op: Op, returns: str) -> str:
    """Docstring from describe() and the argument descriptions (numpy-doc layout, like MXNet)."""
    lines = [op.description.strip() or f"The {op.name} operator.", "", "Parameters", "----------"]
    for arg in op.arguments:
        lines.append(f"{arg.name} : {arg.type_info}")
        if arg.description:
            lines.append(f"    {arg.description}")
    lines += ["", "Returns", "-------", returns, "", f"Defined at {op.source}."]
    return "\n".join(lines)


_PLAIN_VALUES = (bool, int, float, str, tuple, list, np.generic, type(None))


def make_op_function(
    op: Op,
    call: Callable[[Op, tuple[Any, ...], dict[str, Any]], Any],
    extras: list[inspect.Parameter],
    returns: str,
) -> Callable[..., Any]:
    """A function for `op` whose signature help() and IDEs can read.

    The wrapper forwards raw args/kwargs: `call` does the binding, because the fast path of
    nd dispatch cannot afford Signature.bind on every call. As in MXNet's generated
    functions, plain values (numbers, strings, tuples) given positionally after the inputs
    fill the parameters in order: `nd.clip(x, -2, 2)` is `nd.clip(x, a_min=-2, a_max=2)`.
    """
    names = input_names(op)
    n_in = -1 if names is None else len(names)
    params = [p.name for p in param_parameters(op)]

    def fn(*args: Any, **kwargs: Any) -> Any:
        if n_in >= 0 and len(args) > n_in:
            args, kwargs = _positional_params(op, n_in, params, args, kwargs)
        return call(op, args, kwargs)

    fn.__name__ = fn.__qualname__ = op.name
    fn.__signature__ = op_signature(op, extras)  # type: ignore[attr-defined]
    fn.__doc__ = op_docstring(op, returns)
    fn.__module__ = "nnvmpy"
    fn._op = op  # type: ignore[attr-defined]
    fn._op_version = op.version  # type: ignore[attr-defined]
    return fn


def _positional_params(
    op: Op, n_in: int, params: list[str], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Move plain values after the first n_in positional arguments to the parameters.

    Arrays stay inputs: an op may take more inputs than its default attributes name
    (softmax's `length` with use_length=True)."""
    k = n_in
    while k < len(args) and not isinstance(args[k], _PLAIN_VALUES):
        k += 1
    extra = args[k:]
    if not extra:
        return args, kwargs
    if len(extra) > len(params) or not all(isinstance(a, _PLAIN_VALUES) for a in extra):
        raise TypeError(
            f"{op.name}() takes {n_in} input(s) and the parameters {params} positionally; "
            f"got {len(args)} positional arguments"
        )
    kwargs = dict(kwargs)
    for name, value in zip(params, extra):
        if name in kwargs:
            raise TypeError(f"{op.name}() got parameter {name!r} both by position and keyword")
        kwargs[name] = value
    return args[:k], kwargs


class OpNamespace:
    """Module-level __getattr__/__dir__ for a generated namespace (PEP 562).

    Looks the op up on a miss, so ops registered after import appear too. A function
    made once is stored in the module (`publish_to`, its globals), so later lookups cost
    a plain attribute read; it is dropped from there when its op changes (registry
    listener) and made again on the next access.

    With a `prefix` (MXNet's sub-namespaces: '_contrib_', '_linalg_') the namespace
    serves exactly the ops named `<prefix><name>`, under `<name>`: op `_contrib_isnan`
    is `nd.contrib.isnan`. Without one it serves the ops whose names start with an
    underscore (internal=True) or do not (internal=False).
    """

    def __init__(
        self,
        factory: Callable[[Op, str], Callable[..., Any]],
        internal: bool,
        module: str = "",
        module_globals: dict[str, Any] | None = None,
        publish_to: dict[str, Any] | None = None,
        prefix: str = "",
    ) -> None:
        self.factory = factory
        self.internal = internal
        self.prefix = prefix
        self.cache: dict[str, Callable[..., Any]] = {}
        self.module = module
        self.module_globals = module_globals  # listed by dir() beside the ops, if given
        self.publish_to = publish_to
        self.published: set[str] = set()
        on_change(self.forget)

    def module_getattr(self, name: str) -> Callable[..., Any]:
        """The module's __getattr__: an op function, or AttributeError naming the module."""
        try:
            fn = self.get(name)
        except AttributeError:
            what = "attribute or operator" if self.module_globals is not None else "operator"
            raise AttributeError(f"module {self.module!r} has no {what} {name!r}") from None
        if self.publish_to is not None and name not in self.publish_to:
            self.publish_to[name] = fn
            self.published.add(name)
        return fn

    def forget(self, op_name: str | None) -> None:
        """Registry listener: op `op_name` changed (None: every op), unpublish its function."""
        if op_name is None:
            names = list(self.published)
        elif self.prefix:
            names = [op_name[len(self.prefix) :]] if op_name.startswith(self.prefix) else []
        else:
            names = [op_name]
        for n in names:
            if n in self.published and self.publish_to is not None:
                self.publish_to.pop(n, None)
                self.published.discard(n)

    def module_dir(self) -> list[str]:
        """The module's __dir__: its own names (if given) and every op it serves."""
        own = set(self.module_globals or ()) - self.published
        return sorted(own | set(self.names()))

    def wants(self, op_name: str) -> bool:
        """Whether the registered op `op_name` belongs to this namespace."""
        if self.prefix:
            return op_name.startswith(self.prefix) and len(op_name) > len(self.prefix)
        return op_name.startswith("_") == self.internal and not op_name.startswith("__")

    def get(self, name: str) -> Callable[..., Any]:
        """The function serving `name` (an op name, or the part after the prefix)."""
        if name.startswith("__"):
            raise AttributeError(name)
        op_name = self.prefix + name
        fn = self.cache.get(name)
        op = Op._registry.get(op_name)
        if op is None or not self.wants(op_name):
            raise AttributeError(name)
        if fn is None or fn._op is not op or fn._op_version != op.version:  # type: ignore[attr-defined]
            fn = self.factory(op, op_name)
            fn.__name__ = fn.__qualname__ = name
            self.cache[name] = fn
        return fn

    def names(self) -> list[str]:
        """The names this namespace serves (without the prefix)."""
        cut = len(self.prefix)
        return [n[cut:] for n in Op.list_op_names() if self.wants(n)]


def sub_namespace(
    prefix: str, make: Callable[[Op, str], Callable[..., Any]], module: str, module_globals: dict
) -> OpNamespace:
    """The namespace of MXNet's `<prefix>` ops (nd.contrib, sym.linalg, ...) for a module."""
    return OpNamespace(make, internal=True, module=module, publish_to=module_globals, prefix=prefix)
