"""The per-thread "current" object behind `with NameManager():` and `with AttrScope():`.

MXNet keeps the innermost scope in a thread-local and exposes it as a class property
(`NameManager.current`, settable). A thread that never entered a scope gets a fresh
default one, so names and attributes never leak between threads.
"""

from __future__ import annotations

import threading
from typing import Any


class ScopeMeta(type):
    """`cls.current`: a class property over the thread-local of the class defining `_local`.

    A subclass without its own `_local` (Prefix) shares its base's: one stack per kind.
    """

    @property
    def current(cls) -> Any:
        """The innermost scope of this thread (a default one when none was entered)."""
        local: threading.local = cls._root_class().__dict__["_local"]
        value = getattr(local, "value", None)
        if value is None:
            value = local.value = cls._root_class()()
        return value

    @current.setter
    def current(cls, value: Any) -> None:
        cls._root_class().__dict__["_local"].value = value

    def _root_class(cls) -> type:
        """The class that owns the thread-local (NameManager for Prefix)."""
        for klass in cls.__mro__:
            if "_local" in vars(klass):
                return klass
        return cls


class Scope(metaclass=ScopeMeta):
    """`with scope:` makes it current in this thread until the block ends.

    Subclasses define `_local = threading.local()` to get a stack of their own.
    """

    _local: threading.local

    def __init__(self) -> None:
        self._old: Any = None

    def __enter__(self) -> Any:
        cls = type(self)
        self._old = cls.current
        self._on_enter(self._old)
        cls.current = self
        return self

    def __exit__(self, *exc: object) -> None:
        type(self).current = self._old
        self._old = None

    def _on_enter(self, outer: Any) -> None:
        """Hook: combine with the scope being shadowed (AttrScope merges attributes)."""
