"""Default node names (MXNet's `mx.name`): `fullyconnected0`, `fullyconnected1`, ...

Every op a user composes without `name=` asks `NameManager.current.get(None, hint)`, hint
being the op's name in lower case. Counters belong to the manager, so

>>> import nnvmpy as nv
>>> with nv.name.NameManager():
...     nv.sym.relu(nv.sym.var("x")).name
'relu0'
>>> with nv.name.Prefix("net_"):
...     nv.sym.relu(nv.sym.var("x")).name
'net_relu0'

Managers are per thread, as in MXNet: a thread starts with a fresh one.
"""

from __future__ import annotations

import threading

from ._scope import Scope
from .base import NNVMError


class NameManager(Scope):
    """Hands out `<hint><counter>` names; `with NameManager():` starts counting afresh."""

    _local = threading.local()

    def __init__(self) -> None:
        super().__init__()
        self._counter: dict[str, int] = {}

    def get(self, name: str | None, hint: str) -> str:
        """`name` when the caller gave one, else the next `<hint><i>` of this manager."""
        if name:
            if not isinstance(name, str):
                raise NNVMError(f"NameManager.get: name must be a str, got {type(name).__name__}")
            return name
        count = self._counter.get(hint, 0)
        self._counter[hint] = count + 1
        return f"{hint}{count}"

    @classmethod
    def reset(cls) -> None:
        """Counters of this thread's current manager start from 0 again (tests, the demo)."""
        NameManager.current._counter.clear()


class Prefix(NameManager):
    """Every name (given or generated) starts with `prefix`, e.g. `'stage1_'`."""

    def __init__(self, prefix: str) -> None:
        if not isinstance(prefix, str):
            raise NNVMError(f"Prefix: prefix must be a str, got {type(prefix).__name__}")
        super().__init__()
        self._prefix = prefix

    def get(self, name: str | None, hint: str) -> str:
        return self._prefix + super().get(name, hint)


__all__ = ["NameManager", "Prefix"]
