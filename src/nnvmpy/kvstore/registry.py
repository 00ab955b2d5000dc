"""KVStoreBase: MXNet 1.9.1's interface of a key-value store, and its registry of stores.

A store written in Python (Horovod, BytePS, a test double) subclasses `KVStoreBase`,
implements `broadcast` and `pushpull` (and what else it supports), and registers itself;
`nv.kv.create(name)` then looks the lower-cased class name up here before the built-in
types::

    @nv.kv.KVStoreBase.register
    class MyStore(nv.kv.KVStoreBase):
        ...

    kv = nv.kv.create('mystore')

The built-in stores ('local', 'device', 'dist_sync') are subclasses too, created by name
in `create`, so code written against this interface runs on every store.
"""

from __future__ import annotations

import warnings
from typing import Any, ClassVar, TypeVar

from ..base import NNVMError

_K = TypeVar("_K", bound=type)


class KVStoreBase:
    """The operations every key-value store offers (each raises NotImplementedError here)."""

    OPTIMIZER = "optimizer"

    kv_registry: ClassVar[dict[str, type[KVStoreBase]]] = {}

    def broadcast(self, key: Any, value: Any, out: Any, priority: int = 0) -> None:
        """Give every key rank 0's `value` and write it into `out` (one array or a list)."""
        raise NotImplementedError()

    def pushpull(self, key: Any, value: Any, out: Any = None, priority: int = 0) -> None:
        """Sum the values of each key over devices (and workers) and write the result into
        `out`, or back into `value` when `out` is None."""
        raise NotImplementedError()

    def set_optimizer(self, optimizer: Any) -> None:
        """Run `optimizer` inside the store on every push (where is_capable(OPTIMIZER))."""
        raise NotImplementedError()

    @staticmethod
    def is_capable(capability: str) -> bool:
        """Whether stores of this class support `capability` (e.g. KVStoreBase.OPTIMIZER)."""
        raise NotImplementedError()

    def save_optimizer_states(self, fname: str, dump_optimizer: bool = False) -> None:
        """Write the states of the optimizer in the store to `fname`."""
        raise NotImplementedError()

    def load_optimizer_states(self, fname: str) -> None:
        """Read optimizer states written by save_optimizer_states."""
        raise NotImplementedError()

    @property
    def type(self) -> str:
        """The name the store is created by."""
        raise NotImplementedError()

    @property
    def rank(self) -> int:
        """This worker's rank among `num_workers`."""
        raise NotImplementedError()

    @property
    def num_workers(self) -> int:
        """How many workers share the store."""
        raise NotImplementedError()

    @staticmethod
    def register(klass: _K) -> _K:
        """Register a store class under its lower-cased name (a class decorator); a later
        class of the same name replaces the earlier one, with a warning."""
        if not isinstance(klass, type) or not issubclass(klass, KVStoreBase):
            raise NNVMError(
                f"KVStoreBase.register: expected a subclass of KVStoreBase, got {klass!r:.80}"
            )
        name = klass.__name__.lower()
        old = KVStoreBase.kv_registry.get(name)
        if old is not None and old is not klass:
            warnings.warn(
                f"KVStoreBase.register: {klass.__module__}.{klass.__name__} replaces the "
                f"store {old.__module__}.{old.__name__} registered as {name!r}",
                stacklevel=2,
            )
        KVStoreBase.kv_registry[name] = klass
        return klass


__all__ = ["KVStoreBase"]
