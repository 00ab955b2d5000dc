"""Typed operator parameters: the Python counterpart of dmlc::Parameter.

An op declares its parameters once, as class attributes made with `field`. The same
declaration parses MXNet's attribute strings (what symbol JSON files and `sym.*` keyword
arguments carry), validates Python values, documents the op (`fields()`) and writes the
strings back (`to_dict()`, MXNet's GetParams), so the four can never disagree.

>>> class PoolParam(Parameter):
...     kernel = field(Shape, describe="Pooling window: (h, w).")
...     pool_type = field(str, enum=["avg", "max", "sum"], default="max")
...     global_pool = field(bool, default=False)
>>> p = PoolParam.parse({"kernel": "(3, 3)", "global_pool": "True"}, op_name="Pooling")
>>> p.kernel, p.pool_type, p.global_pool
((3, 3), 'max', True)
>>> p.to_dict()
{'kernel': '(3, 3)', 'pool_type': 'max', 'global_pool': 'True'}
>>> PoolParam.parse({"kernal": "(3, 3)"}, op_name="Pooling")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
nnvmpy.base.ParamError: Pooling: unknown parameter 'kernal'; ...; did you mean 'kernel'?
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import numbers
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Any, ClassVar, Literal, NamedTuple, Self, TypeVar, overload

import numpy as np

from .base import ParamError

__all__ = [
    "MISSING",
    "ArgumentInfo",
    "Field",
    "FloatTuple",
    "IntOrNoneTuple",
    "Parameter",
    "Shape",
    "field",
]

_T = TypeVar("_T")


class Shape(tuple[int, ...]):
    """Field type for MXNet's TShape / Tuple<int>: "(3, 3)", "[3, 3]", "3" or (3, 3).

    Only a marker for `field`; parsed values are plain `tuple[int, ...]`. Negative entries
    are allowed (Reshape's special codes -1, -2, ...).
    """


class FloatTuple(tuple[float, ...]):
    """Field type for MXNet's Tuple<float>: "(0.5, 1.0)"; parsed values are plain tuples."""


class IntOrNoneTuple(tuple[int | None, ...]):
    """Field type for MXNet's Tuple<optional<int>> (slice's begin/end): "(None, 2)"."""


class ArgumentInfo(NamedTuple):
    """One documented argument, as MXNet's ParamFieldInfo: what `Op.add_arguments` takes."""

    name: str
    type_info: str
    description: str


class _Missing:
    """The 'no default' sentinel: a field without a default is required."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class _Invalid(Exception):
    """A value a kind cannot convert; `reason` adds detail to the ParamError message."""

    def __init__(self, reason: str = "") -> None:
        super().__init__(reason)
        self.reason = reason


# -- value kinds: one converter and one string form per field type ---------------------------


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool | np.bool_)


def _to_int(value: Any) -> int:
    """int, numpy int, an integral float, or a string of one; never a bool."""
    if _is_bool(value):
        raise _Invalid()
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, str):
        text = value.strip()
        try:
            return int(text)
        except ValueError:
            pass
        try:
            value = float(text)
        except ValueError:
            raise _Invalid() from None
    if isinstance(value, numbers.Real):
        number = float(value)
        if math.isfinite(number) and number.is_integer():
            return int(number)
        raise _Invalid("not an integer")
    raise _Invalid()


def _to_float(value: Any) -> float:
    """Any real number or a string float() reads ("1e-3", "inf"); never a bool."""
    if _is_bool(value):
        raise _Invalid()
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            raise _Invalid() from None
    raise _Invalid()


_TRUE = frozenset({"true", "1"})
_FALSE = frozenset({"false", "0"})


def _to_bool(value: Any) -> bool:
    """dmlc's rule: true/false/1/0, case-insensitive; also Python bools and the ints 0 and 1."""
    if _is_bool(value):
        return bool(value)
    if isinstance(value, numbers.Integral) and int(value) in (0, 1):
        return bool(value)
    if isinstance(value, str):
        text = value.strip().lower()
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
    raise _Invalid()


def _to_str(value: Any) -> str:
    if isinstance(value, str):
        return str(value)  # a numpy str_ becomes a plain str
    raise _Invalid()


def _to_int_or_none(value: Any) -> int | None:
    if value is None or (isinstance(value, str) and value.strip() == "None"):
        return None
    return _to_int(value)


_CLOSERS = {"(": ")", "[": "]"}


def _split_tuple(text: str) -> list[str]:
    """The elements of "(3, 3)", "[3,3]", "(2,)", "()" or a bare "3" / "3, 3"."""
    body = text.strip()
    if not body:
        raise _Invalid("empty string")
    if body[0] in _CLOSERS:
        if body[-1] != _CLOSERS[body[0]]:
            raise _Invalid("unbalanced brackets")
        body = body[1:-1]
    elif body[-1] in ")]":
        raise _Invalid("unbalanced brackets")
    parts = [part.strip() for part in body.split(",")]
    if parts == [""]:
        return []
    if len(parts) > 1 and parts[-1] == "":
        parts.pop()  # "(2,)"
    if "" in parts:
        raise _Invalid("empty element")
    return parts


class _Kind:
    """How one field type converts values, prints them and names itself in docs."""

    def __init__(
        self,
        type_name: str,
        accepted: str,
        convert: Callable[[Any], Any],
        to_str: Callable[[Any], str] = str,
    ) -> None:
        self.type_name = type_name  # MXNet's type_info spelling: "int", "boolean", ...
        self.accepted = accepted  # for error messages: "int", "Shape(tuple) of ints ..."
        self.convert = convert
        self.to_str = to_str


def _tuple_kind(
    type_name: str,
    accepted: str,
    elem: Callable[[Any], Any],
    elem_str: Callable[[Any], str],
    elem_name: str,
) -> _Kind:
    def convert(value: Any) -> tuple[Any, ...]:
        if isinstance(value, np.ndarray) and value.ndim == 0:
            value = value.item()
        if isinstance(value, str):
            items: Iterable[Any] = _split_tuple(value)
        elif isinstance(value, tuple | list | np.ndarray | range):
            items = value
        elif isinstance(value, numbers.Real) and not _is_bool(value):
            items = (value,)  # an int n for a Shape field means (n,), as in MXNet
        else:
            raise _Invalid()
        out = []
        for item in items:
            try:
                out.append(elem(item))
            except _Invalid:
                raise _Invalid(f"{item!r} is not {elem_name}") from None
        return tuple(out)

    def to_str(value: tuple[Any, ...]) -> str:
        inner = ", ".join(elem_str(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"

    return _Kind(type_name, accepted, convert, to_str)


def _none_or(to_str: Callable[[Any], str]) -> Callable[[Any], str]:
    return lambda v: "None" if v is None else to_str(v)


_SHAPE = _tuple_kind("Shape(tuple)", "Shape(tuple) of ints such as (3, 3)", _to_int, str, "an int")
_FLOAT_TUPLE = _tuple_kind(
    "tuple of <float>", "tuple of floats such as (0.5, 1.0)", _to_float, repr, "a float"
)
_INT_OR_NONE_TUPLE = _tuple_kind(
    "tuple of <int or None>",
    "tuple of ints or None such as (None, 2)",
    _to_int_or_none,
    _none_or(str),
    "an int or None",
)

# Field types `field` understands; the tuple[...] aliases let annotations double as types.
_KINDS: dict[Any, _Kind] = {
    int: _Kind("int", "int", _to_int),
    float: _Kind("float", "float", _to_float, repr),
    bool: _Kind("boolean", "boolean (True, False, 1 or 0)", _to_bool),
    str: _Kind("string", "string", _to_str),
    Shape: _SHAPE,
    tuple[int, ...]: _SHAPE,
    FloatTuple: _FLOAT_TUPLE,
    tuple[float, ...]: _FLOAT_TUPLE,
    IntOrNoneTuple: _INT_OR_NONE_TUPLE,
    tuple[int | None, ...]: _INT_OR_NONE_TUPLE,
}


def _suggest(word: str, choices: Iterable[str]) -> str:
    """'; did you mean 'x'?' for the closest choice (case-insensitive), or ''."""
    by_lower = {c.lower(): c for c in choices}
    close = difflib.get_close_matches(word.lower(), list(by_lower), n=1)
    return f"; did you mean {by_lower[close[0]]!r}?" if close else ""


# -- fields ------------------------------------------------------------------------------------


@dataclasses.dataclass(eq=False, repr=False)
class Field:
    """One declared parameter: its type, default, bounds, enum and description.

    Made by `field`; `Parameter` subclasses bind each one to its attribute name. Reading
    the attribute on the class gives the Field, on an instance the parsed value.
    """

    type: Any
    default: Any  # MISSING: required
    describe: str
    lower_bound: float | None
    upper_bound: float | None
    enum: Mapping[str, int] | None  # name -> MXNet's integer code
    optional: bool
    name: str = ""

    @property
    def required(self) -> bool:
        return self.default is MISSING

    @property
    def _kind(self) -> _Kind:
        return _KINDS[self.type]

    def _bind(self, name: str) -> Field:
        return dataclasses.replace(self, name=name)

    def __repr__(self) -> str:
        return f"Field({self.name!r}, {self.type_info!r})"

    @property
    def accepted(self) -> str:
        """What the field accepts, for error messages: "int in [1, 100000]", "one of {...}"."""
        if self.enum is not None:
            text = "one of " + _enum_set(self.enum)
        else:
            text = self._kind.accepted
            lo, hi = self.lower_bound, self.upper_bound
            if lo is not None and hi is not None:
                text += f" in [{self.format(lo)}, {self.format(hi)}]"
            elif lo is not None:
                text += f" >= {self.format(lo)}"
            elif hi is not None:
                text += f" <= {self.format(hi)}"
        return text + " or None" if self.optional else text

    @property
    def type_info(self) -> str:
        """MXNet's ParamFieldInfo.type_info: "int (non-negative), required", ..."""
        if self.enum is not None:
            names = ([None] if self.optional else []) + sorted(self.enum)
            type_name = "{" + ", ".join("None" if n is None else repr(n) for n in names) + "}"
        else:
            type_name = self._kind.type_name
            if self.type is int and self.lower_bound is not None and self.lower_bound >= 0:
                type_name = "int (non-negative)"
            if self.optional:
                type_name += " or None"
        if self.required:
            return f"{type_name}, required"
        default = self.default
        if isinstance(default, bool):
            shown = str(int(default))  # dmlc prints bools as 0/1
        elif isinstance(default, str):
            shown = repr(default)
        else:
            shown = self.format(default)
        return f"{type_name}, optional, default={shown}"

    def format(self, value: Any) -> str:
        """MXNet's string form of a parsed value: "(3, 3)", "False", "0.001", "None"."""
        return "None" if value is None else self._kind.to_str(value)

    def convert(self, value: Any, op_name: str) -> Any:
        """Parse a string or Python value; ParamError names op, field, value and what fits."""
        if value is None or (self.optional and isinstance(value, str) and value == "None"):
            if self.optional:
                return None
            raise self._error(op_name, value)
        try:
            parsed = self._kind.convert(value)
        except _Invalid as e:
            raise self._error(op_name, value, e.reason) from None
        if self.enum is not None and parsed not in self.enum:
            raise self._error(op_name, value, suffix=_suggest(parsed, self.enum))
        lo, hi = self.lower_bound, self.upper_bound
        if (lo is not None and not parsed >= lo) or (hi is not None and not parsed <= hi):
            raise self._error(op_name, value)
        return parsed

    def _error(self, op_name: str, value: Any, reason: str = "", suffix: str = "") -> ParamError:
        detail = f" ({reason})" if reason else ""
        return ParamError(
            f"{op_name}: parameter {self.name!r} expects {self.accepted}, "
            f"got {value!r}{detail}{suffix}"
        )


def _enum_set(enum: Iterable[str]) -> str:
    # sorted, as dmlc prints its std::map of enum names
    return "{" + ", ".join(repr(n) for n in sorted(enum)) + "}"


@overload
def field(
    type_: type[_T],
    *,
    default: None,
    describe: str = ...,
    lower_bound: float | None = ...,
    upper_bound: float | None = ...,
    enum: Iterable[str] | Mapping[str, int] | None = ...,
    optional: bool = ...,
) -> _T | None: ...
@overload
def field(
    type_: type[_T],
    *,
    default: _T = ...,
    describe: str = ...,
    lower_bound: float | None = ...,
    upper_bound: float | None = ...,
    enum: Iterable[str] | Mapping[str, int] | None = ...,
    optional: Literal[False] = ...,
) -> _T: ...
@overload
def field(
    type_: type[_T],
    *,
    default: _T | None = ...,
    describe: str = ...,
    lower_bound: float | None = ...,
    upper_bound: float | None = ...,
    enum: Iterable[str] | Mapping[str, int] | None = ...,
    optional: Literal[True],
) -> _T | None: ...


def field(
    type_: Any,
    *,
    default: Any = MISSING,
    describe: str = "",
    lower_bound: float | None = None,
    upper_bound: float | None = None,
    enum: Iterable[str] | Mapping[str, int] | None = None,
    optional: bool = False,
) -> Any:
    """Declare a parameter of a `Parameter` subclass (DMLC_DECLARE_FIELD).

    Args:
        type_: int, float, bool, str, Shape, FloatTuple or IntOrNoneTuple.
        default: no default means the parameter is required. It is validated when the
            class is created.
        lower_bound, upper_bound: inclusive bounds, for int and float fields.
        enum: allowed strings of a str field; a dict {"relu": 0, ...} also records
            MXNet's integer codes (kept in `Field.enum`). The parsed value is the string.
        optional: None (or the string "None", as MXNet writes it) is accepted; the default
            becomes None unless given. `default=None` implies optional.

    Typed as returning the value type so `param.kernel` type-checks; at run time it
    returns a `Field`, which the class replaces by the parsed value on each instance.
    """
    if type_ not in _KINDS:
        names = "int, float, bool, str, Shape, FloatTuple, IntOrNoneTuple"
        raise TypeError(f"field(): unsupported type {type_!r}; use one of {names}")
    if enum is not None:
        if type_ is not str:
            raise TypeError(f"field(): enum needs type str, got {type_!r}")
        enum = dict(enum) if isinstance(enum, Mapping) else {name: i for i, name in enumerate(enum)}
        if not enum or not all(isinstance(name, str) for name in enum):
            raise TypeError(f"field(): enum must be non-empty strings, got {enum!r}")
    if (lower_bound is not None or upper_bound is not None) and type_ not in (int, float):
        raise TypeError(f"field(): bounds need type int or float, got {type_!r}")
    if lower_bound is not None and upper_bound is not None and lower_bound > upper_bound:
        raise TypeError(f"field(): lower_bound {lower_bound} > upper_bound {upper_bound}")
    optional = optional or default is None
    if optional and default is MISSING:
        default = None
    return Field(type_, default, describe, lower_bound, upper_bound, enum, optional)


# -- parameters --------------------------------------------------------------------------------


def _is_hidden(key: str) -> bool:
    """MXNet's hidden node attributes (__shape__, __lr_mult__, ...) are not op parameters."""
    return len(key) > 4 and key.startswith("__") and key.endswith("__")


class Parameter:
    """Base class of an op's parameters; subclasses declare fields with `field`.

    Instances are immutable and compare by value. Subclasses inherit their bases' fields;
    redeclaring a name replaces the field in place.
    """

    _fields_: ClassVar[Mapping[str, Field]] = MappingProxyType({})
    #: names put first, in this order (the rest follow as declared): where a subclass's
    #: fields go before inherited ones in MXNet's argument order (`sgd_update(w, g, lr,
    #: wd, rescale_grad, ...)` takes lr positionally before the inherited rescale_grad)
    field_order: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        fields: dict[str, Field] = {}
        for klass in reversed(cls.__mro__):
            for name, value in list(vars(klass).items()):
                if not isinstance(value, Field):
                    continue
                if klass is cls:
                    value = _check_field(cls, name, value)
                    setattr(cls, name, value)
                fields[name] = value
        unknown = [n for n in cls.field_order if n not in fields]
        if unknown:
            raise TypeError(f"{cls.__name__}.field_order names no field {unknown}")
        first = {n: fields[n] for n in cls.field_order}
        cls._fields_ = MappingProxyType(first | fields)

    def __init__(self, **kwargs: Any) -> None:
        """Build from Python values (or strings), validated as `parse` does."""
        self._assign(kwargs, type(self).__name__, allow_unknown=False)

    @classmethod
    def parse(
        cls, kwargs: Mapping[str, Any], op_name: str | None = None, *, allow_unknown: bool = False
    ) -> Self:
        """Parse an op's attributes (MXNet strings or Python values) into an instance.

        Keys like `__shape__` are ignored, as MXNet ignores its hidden attributes.

        Args:
            op_name: named in error messages; defaults to the class name.
            allow_unknown: ignore keys that are not fields (dmlc's InitAllowUnknown), for
                front-ends that pass extra keyword arguments through.

        Raises:
            ParamError: an unknown key, a missing required field or a bad value.
        """
        self = cls.__new__(cls)
        self._assign(kwargs, op_name or cls.__name__, allow_unknown)
        return self

    def _assign(self, kwargs: Mapping[str, Any], op_name: str, allow_unknown: bool) -> None:
        fields = self._fields_
        for key in kwargs:
            if key in fields or allow_unknown or (isinstance(key, str) and _is_hidden(key)):
                continue
            valid = list(fields)
            hint = _suggest(key, valid) if isinstance(key, str) else ""
            raise ParamError(
                f"{op_name}: unknown parameter {key!r}; valid parameters are {valid}{hint}"
            )
        missing = [f for name, f in fields.items() if f.required and name not in kwargs]
        if missing:
            plural = "s" if len(missing) > 1 else ""
            names = ", ".join(f"{f.name!r} ({f.accepted})" for f in missing)
            raise ParamError(f"{op_name}: missing required parameter{plural} {names}")
        for name, f in fields.items():
            value = f.convert(kwargs[name], op_name) if name in kwargs else f.default
            object.__setattr__(self, name, value)

    @classmethod
    def fields(cls) -> list[ArgumentInfo]:
        """Documentation of every field in declaration order, for `Op.add_arguments`."""
        return [ArgumentInfo(n, f.type_info, f.describe) for n, f in cls._fields_.items()]

    @classmethod
    def field_names(cls) -> list[str]:
        return list(cls._fields_)

    @classmethod
    def field_specs(cls) -> Mapping[str, Field]:
        """The `Field` objects by name (read-only), e.g. to build a call signature."""
        return cls._fields_

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        """Default value of every optional field; required fields are absent."""
        return {n: f.default for n, f in cls._fields_.items() if not f.required}

    def values(self) -> dict[str, Any]:
        """The parsed value of every field, in declaration order."""
        return {name: getattr(self, name) for name in self._fields_}

    def to_dict(self) -> dict[str, str]:
        """MXNet's GetParams: the string form of every field, defaults included."""
        return {n: f.format(getattr(self, n)) for n, f in self._fields_.items()}

    def replace(self, **changes: Any) -> Self:
        """A copy with some fields changed, validated like the constructor."""
        return type(self).parse({**self.values(), **changes})

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, Parameter)
        return self.values() == other.values()

    def __hash__(self) -> int:
        return hash((type(self), tuple(self.values().values())))

    def __repr__(self) -> str:
        args = ", ".join(f"{n}={v!r}" for n, v in self.values().items())
        return f"{type(self).__name__}({args})"

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable; use .replace({name}=...)")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")


_RESERVED = frozenset(dir(Parameter))


def _check_field(cls: type, name: str, f: Field) -> Field:
    """Bind a field declared on `cls` to its name; reject bad names and bad defaults."""
    where = f"{cls.__name__}.{name}"
    if name.startswith("_") or name in _RESERVED:
        raise TypeError(f"{where}: field names must not start with '_' or shadow Parameter API")
    bound = f._bind(name)
    if not bound.required:
        try:
            bound.default = bound.convert(bound.default, cls.__name__)
        except ParamError as e:
            raise TypeError(f"{where}: invalid default {f.default!r}: {e}") from None
    return bound
