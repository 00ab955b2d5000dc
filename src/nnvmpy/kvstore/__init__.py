"""nv.kv / nv.kvstore: MXNet 1.9.1's KVStore (``create('local' | 'device' | 'dist_sync')``).

Stores written in Python register with `KVStoreBase.register` and are created by their
lower-cased class name ('teststore' ships here). See docs/distributed.md for the
distributed types and how they run over MPI.
"""

from __future__ import annotations

from ..base import NNVMError
from . import teststore as _teststore  # noqa: F401 - registers 'teststore'
from .base import KVStore
from .local import DEVICE_TYPES, LOCAL_TYPES, DeviceStore, LocalStore
from .registry import KVStoreBase

DIST_TYPES = ("dist_sync", "dist_device_sync", "dist_sync_device", "dist")


def create(name: str = "local") -> KVStoreBase:
    """A new KVStore of type `name` (case-insensitive): a registered store class (see
    KVStoreBase.register), 'local', 'device' (one process) or 'dist_sync',
    'dist_device_sync' (processes started by `nnvmpy launch` / mpiexec)."""
    if not isinstance(name, str):
        raise NNVMError(f"kvstore.create: name must be a str, got {type(name).__name__}")
    name = name.lower()
    registered = KVStoreBase.kv_registry.get(name)
    if registered is not None:
        return registered()
    if name in LOCAL_TYPES:
        return LocalStore(name)
    if name in DEVICE_TYPES:
        return DeviceStore(name)
    if name in DIST_TYPES:
        from nnvmpy.kvstore.dist import DistSyncStore

        return DistSyncStore(name)
    if name.startswith("dist_async"):
        raise NNVMError(
            "kvstore.create: 'dist_async' is not provided (asynchronous updates need "
            "parameter servers; use 'dist_sync', see docs/distributed.md)"
        )
    raise NNVMError(
        f"kvstore.create: unknown KVStore type {name!r}; expected one of "
        f"{list(LOCAL_TYPES + DEVICE_TYPES + DIST_TYPES) + sorted(KVStoreBase.kv_registry)}"
    )


__all__ = ["DIST_TYPES", "DeviceStore", "KVStore", "KVStoreBase", "LocalStore", "create"]
