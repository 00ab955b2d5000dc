"""Op → a real Python function with an inspect.Signature and a docstring (no exec).

Shared by nv.nd and nv.sym: inputs come from FListInputNames (or *data for variadic ops),
then the Parameter fields as keyword-only arguments, then the front-end's own extras
(`out` for nd, `name`/`attr` for sym).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

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


def make_op_function(
    op: Op,
    call: Callable[[Op, tuple[Any, ...], dict[str, Any]], Any],
    extras: list[inspect.Parameter],
    returns: str,
) -> Callable[..., Any]:
    """A function for `op` whose signature help() and IDEs can read.

    The wrapper forwards raw args/kwargs: `call` does the binding, because the fast path of
    nd dispatch cannot afford Signature.bind on every call.
    """

    def fn(*args: Any, **kwargs: Any) -> Any:
        return call(op, args, kwargs)

    fn.__name__ = fn.__qualname__ = op.name
    fn.__signature__ = op_signature(op, extras)  # type: ignore[attr-defined]
    fn.__doc__ = op_docstring(op, returns)
    fn.__module__ = "nnvmpy"
    fn._op = op  # type: ignore[attr-defined]
    fn._op_version = op.version  # type: ignore[attr-defined]
    return fn


class OpNamespace:
    """Module-level __getattr__/__dir__ for a generated namespace (PEP 562).

    Looks the op up on a miss, so ops registered after import appear too. A function
    made once is stored in the module (`publish_to`, its globals), so later lookups cost
    a plain attribute read; it is dropped from there when its op changes (registry
    listener) and made again on the next access.
    """

    def __init__(
        self,
        factory: Callable[[Op], Callable[..., Any]],
        internal: bool,
        module: str = "",
        module_globals: dict[str, Any] | None = None,
        publish_to: dict[str, Any] | None = None,
    ) -> None:
        self.factory = factory
        self.internal = internal
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

    def forget(self, name: str | None) -> None:
        """Registry listener: op `name` changed (None: every op), unpublish its function."""
        names = list(self.published) if name is None else [name]
        for n in names:
            if n in self.published and self.publish_to is not None:
                self.publish_to.pop(n, None)
                self.published.discard(n)

    def module_dir(self) -> list[str]:
        """The module's __dir__: its own names (if given) and every op it serves."""
        own = set(self.module_globals or ()) - self.published
        return sorted(own | set(self.names()))

    def wants(self, name: str) -> bool:
        return name.startswith("_") == self.internal and not name.startswith("__")

    def get(self, name: str) -> Callable[..., Any]:
        fn = self.cache.get(name)
        op = Op._registry.get(name)
        if op is None or not self.wants(name):
            raise AttributeError(name)
        if fn is None or fn._op is not op or fn._op_version != op.version:  # type: ignore[attr-defined]
            fn = self.cache[name] = self.factory(op)
        return fn

    def names(self) -> list[str]:
        return [n for n in Op.list_op_names() if self.wants(n)]
