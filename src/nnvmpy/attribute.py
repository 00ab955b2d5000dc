"""Attribute scopes (MXNet's `mx.AttrScope`): attributes for every symbol made inside.

>>> import nnvmpy as nv
>>> with nv.AttrScope(ctx_group="stage1"):
...     w = nv.sym.var("w")
...     with nv.AttrScope(__mood__="calm"):
...         y = nv.sym.relu(w, name="y")
>>> w.attr("ctx_group"), y.attr("__ctx_group__"), y.attr("__mood__")
('stage1', 'stage1', 'calm')

Nested scopes merge (the inner value wins); scopes are per thread. Keys like `lr_mult`
or `ctx_group` are stored as MXNet's hidden `__lr_mult__`; an op given a key that is
neither hidden nor one of its parameters refuses it, as MXNet's parameter parser does.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from ._scope import Scope
from .base import ParamError


class AttrScope(Scope):
    """`with AttrScope(key="value", ...):` — string attributes for the symbols inside."""

    _local = threading.local()

    def __init__(self, **kwargs: str) -> None:
        super().__init__()
        for key, value in kwargs.items():
            if not isinstance(value, str):  # a ValueError too, as MXNet's
                raise ParamError(
                    f"AttrScope: attribute {key!r} must be a string, got "
                    f"{type(value).__name__} {value!r:.40}"
                )
        self._attr: dict[str, str] = dict(kwargs)

    def get(self, attr: Mapping[str, Any] | None) -> dict[str, Any]:
        """The scope's attributes updated with `attr` (a new dict; `attr` wins)."""
        merged = dict(self._attr)
        if attr:
            merged.update(attr)
        return merged

    def _on_enter(self, outer: AttrScope) -> None:
        self._attr = {**outer._attr, **self._attr}


__all__ = ["AttrScope"]
