"""Node attributes the way MXNet's symbol API stores and shows them.

A node's `attrs.dict` holds the op's parameters and free-form attributes as strings.
MXNet's hidden keys (`lr_mult`, `wd_mult`, `ctx_group`, ...) are stored as `__lr_mult__`
whichever way the user spells them, and shown under both spellings by `attr`,
`list_attr` and `attr_dict`. Keys of the form `__x__` never reach an op's parameter
parser, so they survive composition, JSON and pickling untouched.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..base import NNVMError, ParamError

# MXNet's kHiddenKeys (c_api_symbolic.cc): stored with double underscores around them
HIDDEN_KEYS = (
    "ctx_group",
    "lr_mult",
    "wd_mult",
    "force_mirroring",
    "mirror_stage",
    "profiler_scope",
)
_STORED = {f"__{k}__": k for k in HIDDEN_KEYS}


def is_dunder(key: str) -> bool:
    """`__shape__`, `__lr_mult__`, `__mood__`: attributes that are never op parameters."""
    return len(key) > 4 and key.startswith("__") and key.endswith("__")


def stored_key(key: Any, where: str) -> str:
    """The key a node stores: `lr_mult` -> `__lr_mult__`; `weight_lr_mult` is refused.

    MXNet dropped per-input hints like `weight_lr_mult=` on ops: the error says what to
    write instead, as MXNet's does.
    """
    if not isinstance(key, str) or not key:
        raise ParamError(f"{where}: attribute names must be non-empty strings, got {key!r}")
    if key in HIDDEN_KEYS:
        return f"__{key}__"
    if not is_dunder(key):
        for hidden in HIDDEN_KEYS:
            if key.endswith("_" + hidden):
                base = key[: -len(hidden) - 1]
                raise ParamError(
                    f"{where}: setting variable attributes with {key!r} is not supported; "
                    f"write w = Variable('{base}', {hidden}=...) and pass {base}=w to the op"
                )
    return key


def string_attrs(attr: Mapping[str, Any] | None, where: str) -> dict[str, str]:
    """Validated `attr={...}` of a Variable or `_set_attr`: string values, stored keys."""
    if attr is None:
        return {}
    if not isinstance(attr, Mapping):
        raise ParamError(f"{where}: attr must be a dict of strings, got {type(attr).__name__}")
    out = {}
    for key, value in attr.items():
        if not isinstance(value, str):
            raise ParamError(
                f"{where}: attribute {key!r} must be a string, got {type(value).__name__} "
                f"{value!r:.40}"
            )
        out[stored_key(key, where)] = value
    return out


def with_plain_aliases(d: Mapping[str, str]) -> dict[str, str]:
    """The dict plus `lr_mult` beside `__lr_mult__` for every hidden key (MXNet's listing)."""
    out = dict(d)
    for key, value in d.items():
        plain = _STORED.get(key)
        if plain is not None:
            out[plain] = value
    return out


def lookup(d: Mapping[str, str], key: str) -> str | None:
    """d[key], or d['__key__'] for a hidden key asked by its plain name; None if absent."""
    if not isinstance(key, str):
        raise NNVMError(f"Symbol.attr: the key must be a string, got {type(key).__name__}")
    value = d.get(key)
    if value is None and key in HIDDEN_KEYS:
        value = d.get(f"__{key}__")
    return value


__all__ = [
    "HIDDEN_KEYS",
    "is_dunder",
    "lookup",
    "stored_key",
    "string_attrs",
    "with_plain_aliases",
]
