"""'teststore': MXNet 1.9.1's stateless store written on the KVStoreBase interface alone.

It keeps nothing: `broadcast` copies the value into the outputs and `pushpull` sums a
key's values on the first value's device and writes the sum out. MXNet ships it to test
code written against KVStoreBase (Gluon's Trainer, custom stores) without a real store;
it cannot run an optimizer (is_capable(OPTIMIZER) is False).
"""

from __future__ import annotations

from typing import Any

from ..base import NNVMError
from .keys import key_kind
from .registry import KVStoreBase


def _per_key(key: Any, value: Any, out: Any, fn: str) -> list[tuple[Any, Any, Any]]:
    """[(key, value, out)]: one triple for a single key, one per key for a list of keys."""
    if not isinstance(key, list | tuple):
        key_kind(key, fn)
        return [(key, value, out)]
    for k in key:
        key_kind(k, fn)
    outs = [None] * len(key) if out is None else out
    for what, given in (("values", value), ("outs", outs)):
        if not isinstance(given, list | tuple) or len(given) != len(key):
            raise NNVMError(f"TestStore.{fn}: {len(key)} keys need a list of {len(key)} {what}")
    return list(zip(key, value, outs, strict=True))


def _as_list(arrays: Any) -> list[Any]:
    return list(arrays) if isinstance(arrays, list | tuple) else [arrays]


@KVStoreBase.register
class TestStore(KVStoreBase):
    """A store that only sums and copies (see the module docstring); create('teststore')."""

    __test__ = False  # not a pytest test class, whatever its name

    def broadcast(self, key: Any, value: Any, out: Any, priority: int = 0) -> None:
        """Copy each key's value into its out array(s)."""
        for _, v, o in _per_key(key, value, out, "broadcast"):
            if isinstance(v, list | tuple):
                raise NNVMError("TestStore.broadcast: each key takes one value, not a list")
            for dst in _as_list(o):
                v.copyto(dst)

    def pushpull(self, key: Any, value: Any, out: Any = None, priority: int = 0) -> None:
        """Sum each key's values on the first one's device; write the sum into out (or back
        into the values when out is None)."""
        from nnvmpy import ndarray as nd

        for _, v, o in _per_key(key, value, out, "pushpull"):
            values = _as_list(v)
            ctx = values[0].context
            moved = [a if a.context == ctx else a.as_in_context(ctx) for a in values]
            total = moved[0].copy() if len(moved) == 1 else nd.add_n(*moved)
            for dst in values if o is None else _as_list(o):
                total.copyto(dst)

    @staticmethod
    def is_capable(capability: str) -> bool:
        """No capability: the store cannot run an optimizer."""
        if capability.lower() == KVStoreBase.OPTIMIZER:
            return False
        raise NNVMError(f"TestStore.is_capable: unknown capability {capability!r}")

    @property
    def type(self) -> str:
        return "teststore"

    @property
    def rank(self) -> int:
        return 0

    @property
    def num_workers(self) -> int:
        return 1


__all__ = ["TestStore"]
