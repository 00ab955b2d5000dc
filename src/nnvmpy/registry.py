"""The global operator registry: Op, OpMap, NodeAttrs and register_op.

An Op is a name plus an open set of typed attributes (see attrs.py). Registration is
get-or-create, so another module can add FCompute<gpu> to an op defined elsewhere.
Each attribute remembers where it was set, for plevel errors and `nnvmpy info`.
"""

from __future__ import annotations

import builtins
import copy
import difflib
import itertools
import os
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Generic, Self, TypeVar, overload

from . import attrs as _attrs
from .attrs import AttrKey
from .base import NNVMError, OpNotFoundError
from .param import ArgumentInfo

T = TypeVar("T")

CountFn = Callable[["NodeAttrs"], int]
AttrParserFn = Callable[["NodeAttrs"], Any]


@dataclass
class AttrEntry:
    """A registered attribute value with its priority and where it was set."""

    value: Any
    plevel: int
    source: str


class NodeAttrs:
    """The attributes of one node: its op, its name, the user's strings and the parsed form."""

    __slots__ = ("dict", "name", "op", "parsed")

    def __init__(
        self,
        op: Op | None,
        name: str = "",
        dict: Mapping[str, str] | None = None,
        parsed: Any = None,
    ) -> None:
        self.op = op
        self.name = name
        self.dict: builtins.dict[str, str] = (
            {} if dict is None else {k: _attr_str(v) for k, v in dict.items()}
        )
        self.parsed = parsed

    def __repr__(self) -> str:
        op = self.op.name if self.op is not None else "null"
        return f"NodeAttrs(op={op!r}, name={self.name!r}, dict={self.dict!r})"


_versions = itertools.count(1)  # global, so a restored op never reuses a later version


class _GetAttr:
    """`Op.get_attr(key)` gives an OpMap; `op.get_attr(key, default)` gives one op's value."""

    def __get__(self, op: Op | None, owner: type | None = None) -> Callable[..., Any]:
        if op is None:
            return Op.get_attr_map
        return op._attr_value  # a bound method, not a new closure: passes call this per node


class Op:
    """One operator: a unique name, its arity, its attribute parser and its attributes."""

    _lock = threading.RLock()
    _registry: dict[str, Op] = {}

    def __init__(self, name: str) -> None:
        self.name = name
        self.description = ""
        self.num_inputs: int | CountFn = 1
        self.num_outputs: int | CountFn = 1
        self.attr_parser: AttrParserFn | None = None
        self.param_cls: Any = None  # the Parameter subclass given to set_attr_parser, if any
        self.arguments: list[ArgumentInfo] = []
        self.key_var_num_args: str | None = None  # e.g. "num_args" for Concat/add_n
        self.aliases: tuple[str, ...] = ()  # other names of this op (add_alias)
        self.source = _caller_location()
        self._attrs: dict[str, AttrEntry] = {}
        self.version = next(_versions)  # changes on every registration; caches compare it

    def _touch(self) -> Self:
        self.version = next(_versions)
        for name in (self.name, *self.aliases):
            for listener in _change_listeners:
                listener(name)
        return self

    def __repr__(self) -> str:
        return f"Op({self.name!r})"

    # -- fluent registration ---------------------------------------------------------------

    def add_alias(self, alias: str) -> Self:
        """Make `alias` another name of this op (NNVM's add_alias, MXNet's `concat` for
        `Concat`): Op.get(alias) and register_op(alias) return this op, so a node made
        through either name is this op and is saved under its name, as MXNet saves it."""
        if not isinstance(alias, str) or not alias:
            raise NNVMError(f"op {self.name!r}: add_alias expects a non-empty name, got {alias!r}")
        with Op._lock:
            other = Op._registry.get(alias)
            if other is not None and other is not self:
                raise NNVMError(
                    f"op {self.name!r}: cannot add alias {alias!r}: op {other.name!r} of "
                    f"that name is registered at {other.source}"
                )
            Op._registry[alias] = self
            if alias != self.name and alias not in self.aliases:
                self.aliases = (*self.aliases, alias)
        return self._touch()

    def describe(self, description: str) -> Self:
        self.description = description
        return self._touch()

    def set_num_inputs(self, n: int | CountFn) -> Self:
        """A fixed count, or a function of the node's attrs (e.g. Concat's num_args)."""
        self.num_inputs = _check_count(self, "num_inputs", n)
        return self._touch()

    def set_num_outputs(self, n: int | CountFn) -> Self:
        self.num_outputs = _check_count(self, "num_outputs", n)
        return self._touch()

    def set_key_var_num_args(self, key: str) -> Self:
        """Inputs are variadic; `key` receives their count (MXNet's key_var_num_args)."""
        self.key_var_num_args = key
        return self._touch()

    def set_attr_parser(self, parser: Any) -> Self:
        """A Parameter subclass, or a function attrs -> parsed value (stored in attrs.parsed)."""
        if isinstance(parser, type) and hasattr(parser, "parse") and hasattr(parser, "fields"):
            self.param_cls = parser
            param_cls = parser
            op_name = self.name

            def parse(attrs: NodeAttrs) -> Any:
                return param_cls.parse(attrs.dict, op_name=op_name)

            self.attr_parser = parse
        elif callable(parser):
            self.attr_parser = parser
        else:
            raise TypeError(
                f"op {self.name!r}: set_attr_parser expects a Parameter subclass "
                f"or a callable(attrs), got {type(parser).__name__}"
            )
        return self._touch()

    def add_argument(self, name: str, type_info: str, description: str = "") -> Self:
        self.arguments = [a for a in self.arguments if a.name != name]
        self.arguments.append(ArgumentInfo(name, type_info, description))
        return self._touch()

    def add_arguments(self, arguments: list[Any]) -> Self:
        for arg in arguments:
            self.add_argument(*tuple(arg)[:3])
        return self

    @overload
    def set_attr(self, key: AttrKey[T], value: T, plevel: int = 10) -> Self: ...
    @overload
    def set_attr(self, key: str, value: object, plevel: int = 10) -> Self: ...

    def set_attr(self, key: AttrKey[Any] | str, value: object, plevel: int = 10) -> Self:
        """Register an attribute; a second value needs a higher plevel (NNVM's rule)."""
        resolved = _attrs.resolve_key(key, value)
        if not resolved.accepts(value):
            raise TypeError(
                f"op {self.name!r}: attribute {resolved.name} expects {resolved.type_name()}, "
                f"got {type(value).__name__} ({value!r:.60})"
            )
        source = _caller_location()
        with Op._lock:
            old = self._attrs.get(resolved.name)
            if old is not None and plevel <= old.plevel:
                raise NNVMError(
                    f"op {self.name!r}: attribute {resolved.name} is already set at "
                    f"{old.source} with plevel {old.plevel}; re-setting it at {source} needs "
                    f"a plevel above {old.plevel} (got {plevel})"
                )
            self._attrs[resolved.name] = AttrEntry(value, plevel, source)
        return self._touch()

    # -- reading ----------------------------------------------------------------------------

    get_attr = _GetAttr()

    def _attr_value(self, key: AttrKey[Any] | str, default: Any = None) -> Any:
        """`op.get_attr(key, default)`: this op's value for key, or default."""
        entry = self._attrs.get(key.name if isinstance(key, AttrKey) else key)
        return default if entry is None else entry.value

    def has_attr(self, key: AttrKey[Any] | str) -> bool:
        return (key.name if isinstance(key, AttrKey) else key) in self._attrs

    def attr_entries(self) -> dict[str, AttrEntry]:
        """Every attribute with its plevel and source, in registration order."""
        return dict(self._attrs)

    def get_num_inputs(self, attrs: NodeAttrs) -> int:
        n = self.num_inputs
        return _sane_count(self, "inputs", n(attrs), attrs) if callable(n) else n

    def get_num_outputs(self, attrs: NodeAttrs) -> int:
        n = self.num_outputs
        return _sane_count(self, "outputs", n(attrs), attrs) if callable(n) else n

    def parse_attrs(self, kwargs: Mapping[str, Any] | None = None, name: str = "") -> NodeAttrs:
        """NodeAttrs for a node of this op: strings kept in .dict, parser output in .parsed."""
        attrs = NodeAttrs(self, name, {k: _attr_str(v) for k, v in (kwargs or {}).items()})
        if self.attr_parser is not None:
            try:
                attrs.parsed = self.attr_parser(attrs)
            except NNVMError:
                raise
            except Exception as e:  # a user callback: say which op and node it failed for
                node = f" (node {name!r})" if name else ""
                raise NNVMError(
                    f"op {self.name!r}{node}: attribute parser failed on "
                    f"{attrs.dict}: {type(e).__name__}: {e}"
                ) from e
        return attrs

    # -- the registry -----------------------------------------------------------------------

    @staticmethod
    def get(name: str) -> Op:
        """The registered op with this name; NNVMError with suggestions when there is none."""
        op = Op._registry.get(name)
        if op is None:
            close = difflib.get_close_matches(name, list(Op._registry), n=3, cutoff=0.6)
            hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
            raise OpNotFoundError(f"operator {name!r} is not registered{hint}")
        return op

    @staticmethod
    def list_op_names() -> list[str]:
        """Every registered name, aliases included (as MXNet's MXListAllOpNames)."""
        return sorted(Op._registry)

    @staticmethod
    def list_ops() -> list[Op]:
        """Every registered op once, by its own name (aliases left out)."""
        return [op for name, op in sorted(Op._registry.items()) if name == op.name]

    @staticmethod
    def get_attr_map(key: AttrKey[T] | str) -> OpMap[T]:
        return OpMap(key if isinstance(key, str) else key.name)


class OpMap(Generic[T]):
    """The values of one attribute key across all ops: `opmap[op]`, `.get(op, d)`, `op in m`."""

    __slots__ = ("key",)

    def __init__(self, key: str) -> None:
        self.key = key

    def _op(self, op: Op | str) -> Op:
        return Op.get(op) if isinstance(op, str) else op

    def __getitem__(self, op: Op | str) -> T:
        entry = self._op(op)._attrs.get(self.key)
        if entry is None:
            raise NNVMError(f"op {self._op(op).name!r} has no attribute {self.key}")
        return entry.value  # type: ignore[no-any-return]

    def get(self, op: Op | str | None, default: Any = None) -> Any:
        if op is None:
            return default
        entry = self._op(op)._attrs.get(self.key)
        return default if entry is None else entry.value

    def __contains__(self, op: object) -> bool:
        if isinstance(op, str):
            op = Op._registry.get(op)
        return isinstance(op, Op) and self.key in op._attrs

    def items(self) -> Iterator[tuple[Op, T]]:
        for op in list(Op._registry.values()):
            if self.key in op._attrs:
                yield op, op._attrs[self.key].value


def register_op(name: str) -> Op:
    """Get or create the op with this name (NNVM_REGISTER_OP)."""
    if not isinstance(name, str) or not name:
        raise NNVMError(f"register_op expects a non-empty op name, got {name!r}")
    with Op._lock:
        op = Op._registry.get(name)
        if op is None:
            op = Op._registry[name] = Op(name)
    return op


_change_listeners: list[Callable[[str | None], None]] = []


def on_change(listener: Callable[[str | None], None]) -> None:
    """Call `listener(name)` whenever op `name` changes, `listener(None)` when the whole
    registry is restored: for caches outside the registry (the generated namespaces)."""
    _change_listeners.append(listener)


# -- test scopes ------------------------------------------------------------------------------


def snapshot() -> Any:
    """A copy of the whole registry and the attribute key table, for `restore`."""
    with Op._lock:
        ops = {
            name: (op, copy.copy(op.__dict__), dict(op._attrs), list(op.arguments))
            for name, op in Op._registry.items()
        }
        return ops, _attrs.snapshot_keys()


def restore(saved: Any) -> None:
    """Undo every registration made since `saved = snapshot()`."""
    ops, keys = saved
    with Op._lock:
        Op._registry.clear()
        for name, (op, state, attr_table, arguments) in ops.items():
            op.__dict__.clear()
            op.__dict__.update(state)
            op._attrs = dict(attr_table)
            op.arguments = list(arguments)
            Op._registry[name] = op
        _attrs.restore_keys(keys)
    for listener in _change_listeners:
        listener(None)


@contextmanager
def scoped_registry() -> Iterator[None]:
    """Registrations inside the block are undone afterwards (torch's _scoped_library)."""
    saved = snapshot()
    try:
        yield
    finally:
        restore(saved)


# -- helpers ----------------------------------------------------------------------------------

_THIS_DIR = os.path.dirname(os.path.abspath(__file__))
_SKIP_FILES = {os.path.join(_THIS_DIR, "registry.py")}


def skip_in_source_locations(path: str) -> None:
    """Registration helpers (family tables, front-ends) report their caller's line instead."""
    _SKIP_FILES.add(os.path.abspath(path))


def _caller_location() -> str:
    frame = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename) in _SKIP_FILES:
        frame = frame.f_back  # type: ignore[assignment]
    if frame is None:
        return "<unknown>"
    path = frame.f_code.co_filename
    if path.startswith(_THIS_DIR):
        path = os.path.join("nnvmpy", os.path.relpath(path, _THIS_DIR))
    return f"{path}:{frame.f_lineno}"


MAX_COUNT = 1 << 17  # inputs or outputs of one node: more is a hostile parameter, not a model


def _sane_count(op: Op, what: str, n: Any, attrs: NodeAttrs) -> int:
    """A count computed from parameters (num_args=2**40 must not build 2**40 names)."""
    if isinstance(n, int) and not isinstance(n, bool) and 0 <= n <= MAX_COUNT:
        return n
    raise NNVMError(
        f"{op.name}: its parameters {dict(attrs.dict)!r:.120} give {n!r:.40} {what}; "
        f"expected an int in [0, {MAX_COUNT}]"
    )


def _check_count(op: Op, what: str, n: int | CountFn) -> int | CountFn:
    if callable(n) or (isinstance(n, int) and not isinstance(n, bool) and n >= 0):
        return n
    raise TypeError(
        f"op {op.name!r}: set_{what} expects a non-negative int or a callable(attrs), got {n!r}"
    )


def _attr_str(value: Any) -> str:
    """MXNet's string form of a Python attribute value: (3, 3), True, 0.001, relu."""
    if isinstance(value, str):
        return value
    if isinstance(value, list | tuple):
        inner = ", ".join(_attr_str(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if hasattr(value, "item") and getattr(value, "ndim", 1) == 0:
        value = value.item()
    if isinstance(value, type) or (hasattr(value, "name") and hasattr(value, "itemsize")):
        import numpy as np

        return str(np.dtype(value))
    return str(value)


__all__ = [
    "ArgumentInfo",
    "AttrEntry",
    "NodeAttrs",
    "Op",
    "OpMap",
    "register_op",
    "scoped_registry",
]
