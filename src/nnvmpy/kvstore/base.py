"""KVStore: MXNet 1.9.1's key-value store of weights, the sum point of their gradients.

    kv = nv.kv.create('local')
    kv.init(3, nv.nd.zeros((2, 3)))
    kv.push(3, [g_cpu0, g_cpu1])         # the values of one key are summed
    kv.pull(3, out=[w_cpu0, w_cpu1])      # the stored value is copied to every out

Without an updater a push replaces the stored value by the sum; with one
(`set_optimizer` / `set_updater`) the store calls ``updater(key, summed, stored)``; with
gradient compression ('device' stores) each value is quantized before the sum. Every
step is an engine operation on the arrays' variables (NDArray ops, copies), so push and
pull return at once and order themselves after the writes of the pushed gradients.
Subclasses say where a key lives (`_store_ctx`); a distributed store also replaces `push`
and makes rank 0's initial values everyone's (`_init_across`).
"""

from __future__ import annotations

import pickle
from typing import Any

from ..base import Context, NNVMError, cpu
from .keys import Key, grouped, key_kind, pairs
from .registry import KVStoreBase


class KVStore(KVStoreBase):
    """The single-process store; `nv.kv.create(name)` picks the type."""

    def __init__(self, name: str = "local") -> None:
        self._type = name
        self._store: dict[Key, Any] = {}
        self._key_kind: type | None = None
        self._updater: Any = None
        self._optimizer: Any = None
        self._compression: Any = None  # a GradientCompression once set

    # -- attributes ----------------------------------------------------------------------------

    @property
    def type(self) -> str:
        """The name the store was created with ('local', 'device', 'dist_sync', ...)."""
        return self._type

    @property
    def rank(self) -> int:
        """This worker's rank among `num_workers` (0 in one process)."""
        return 0

    @property
    def num_workers(self) -> int:
        """How many worker processes share the store (1 in one process)."""
        return 1

    @staticmethod
    def is_capable(capability: str) -> bool:
        """Whether the store supports `capability` (KVStore.OPTIMIZER: updates in the store)."""
        if capability.lower() == KVStore.OPTIMIZER:
            return True
        raise NNVMError(f"KVStore.is_capable: unknown capability {capability!r}")

    def __repr__(self) -> str:
        return (
            f"<KVStore {self._type} rank {self.rank}/{self.num_workers}, {len(self._store)} keys>"
        )

    # -- init, push, pull ----------------------------------------------------------------------

    def init(self, key: Any, value: Any) -> None:
        """Create `key` with a copy of `value`; a key can be initialised once."""
        kv = pairs(key, value, "init")
        self._check_kind(kv, "init")
        seen: set[Key] = set()
        for k, _ in kv:
            if k in self._store or k in seen:
                raise NNVMError(f"KVStore.init: duplicate init of key {k!r}")
            seen.add(k)
        for k, vs in kv:
            stored = vs[0].copyto(self._store_ctx(vs[0]))
            self._init_across(k, stored)
            self._store[k] = stored

    def push(self, key: Any, value: Any, priority: int = 0) -> None:
        """Sum the values of each key (and across workers); update or replace the stored value.

        `priority`: larger runs earlier among pending communication (MXNet pushes
        parameter i with priority -i: among ready gradients, earlier layers go first).
        """
        kv = grouped(pairs(key, value, "push"))
        self._check_known(kv, "push")
        for k, vs in kv:
            stored = self._store[k]
            self._check_shapes(k, stored, vs, "push")
            if self._compression is not None:
                vs = self._compression.quantize(k, vs)
            merged = self._merge(vs, stored)
            if self._updater is not None:
                self._updater(k, merged, stored)
            elif merged is not stored:
                merged.copyto(stored)

    def pull(
        self, key: Any, out: Any = None, priority: int = 0, ignore_sparse: bool = True
    ) -> None:
        """Copy the stored value of each key into its out array(s)."""
        if out is None:
            raise NNVMError("KVStore.pull: out is required (an NDArray or a list of them)")
        kv = pairs(key, out, "pull")
        self._check_known(kv, "pull")
        for k, outs in kv:
            stored = self._store[k]
            self._check_shapes(k, stored, outs, "pull")
            for o in outs:
                stored.copyto(o)

    def pushpull(self, key: Any, value: Any, out: Any = None, priority: int = 0) -> None:
        """push then pull; without `out` the result is written back into `value`."""
        self.push(key, value, priority)
        self.pull(key, value if out is None else out, priority)

    def broadcast(self, key: Any, value: Any, out: Any, priority: int = 0) -> None:
        """init `key` with `value` (rank 0's in a distributed store), then pull it into out."""
        self.init(key, value)
        self.pull(key, out, priority)

    def row_sparse_pull(self, *args: Any, **kwargs: Any) -> None:
        raise NNVMError("KVStore.row_sparse_pull: row_sparse storage is not supported")

    def set_gradient_compression(self, compression_params: dict[str, Any]) -> None:
        """Quantize every pushed gradient ('1bit' or '2bit', with error feedback; see
        compression.py), e.g. ``{'type': '2bit', 'threshold': 0.5}``. As MXNet: only for
        stores that sum on the devices ('device'); 'local' sums on the host uncompressed."""
        from nnvmpy.kvstore.compression import GradientCompression

        if "dist" in self._type:
            raise NNVMError(
                f"KVStore.set_gradient_compression: not provided for {self._type!r} in "
                "nnvmpy (its workers allreduce full-precision sums; see docs/distributed.md)"
            )
        if "device" not in self._type:
            raise NNVMError(
                f"KVStore.set_gradient_compression: gradient compression is not supported "
                f"for a {self._type!r} store (MXNet compresses only device stores: use "
                "create('device'))"
            )
        self._compression = GradientCompression(compression_params)

    # -- updates -------------------------------------------------------------------------------

    def set_optimizer(self, optimizer: Any) -> None:
        """Apply `optimizer` in the store on every push (on every worker, after the sum)."""
        from nnvmpy.optimizer import Optimizer, get_updater

        if not isinstance(optimizer, Optimizer):
            raise NNVMError(
                f"KVStore.set_optimizer: expected an nv.optimizer.Optimizer, "
                f"got {type(optimizer).__name__}"
            )
        self._optimizer = optimizer
        self._updater = get_updater(optimizer)

    def set_updater(self, updater: Any) -> None:
        """Call ``updater(key, summed_value, stored_value)`` on every push instead of replacing."""
        if not callable(updater):
            raise NNVMError(f"KVStore.set_updater: updater must be callable, got {updater!r}")
        self._updater = updater

    _set_updater = set_updater

    def save_optimizer_states(self, fname: str, dump_optimizer: bool = False) -> None:
        """Write the optimizer's states (and the optimizer itself if asked) to `fname`."""
        updater = self._states_updater("save_optimizer_states")
        with open(fname, "wb") as f:
            f.write(updater.get_states(dump_optimizer))

    def load_optimizer_states(self, fname: str) -> None:
        """Read states written by save_optimizer_states."""
        updater = self._states_updater("load_optimizer_states")
        with open(fname, "rb") as f:
            blob = f.read()
        try:
            updater.set_states(blob)
        except (pickle.UnpicklingError, EOFError, ValueError) as exc:
            raise NNVMError(
                f"KVStore.load_optimizer_states: {fname!r} is not a file of optimizer states"
            ) from exc

    def _states_updater(self, fn: str) -> Any:
        if self._updater is None or not hasattr(self._updater, "get_states"):
            raise NNVMError(f"KVStore.{fn}: no optimizer in the store (call set_optimizer first)")
        return self._updater

    # -- synchronisation -----------------------------------------------------------------------

    def barrier(self) -> None:
        """Wait until every worker reaches the barrier (nothing to wait for in one process)."""

    _barrier = barrier

    # -- hooks for subclasses ------------------------------------------------------------------

    def _store_ctx(self, value: Any) -> Context:
        """Where the stored copy of a key lives: the CPU for 'local'."""
        return cpu()

    def _merge(self, values: list[Any], stored: Any) -> Any:
        """The sum of one key's values on the stored value's device (engine ops)."""
        ctx = stored.context
        if len(values) == 1:
            v = values[0] if values[0].context == ctx else values[0].as_in_context(ctx)
            return v if v.dtype == stored.dtype else v.astype(stored.dtype)
        from nnvmpy import ndarray as nd

        moved = [v if v.context == ctx else v.as_in_context(ctx) for v in values]
        merged = nd.add_n(*moved)
        return merged if merged.dtype == stored.dtype else merged.astype(stored.dtype)

    def _init_across(self, key: Key, stored: Any) -> None:
        """Make every worker's initial value rank 0's (one process: nothing to do)."""

    # -- checks --------------------------------------------------------------------------------

    def _check_kind(self, kv: list[tuple[Key, list[Any]]], fn: str) -> None:
        kind = key_kind(kv[0][0], fn)
        if self._key_kind is None:
            self._key_kind = kind
        elif kind is not self._key_kind:
            raise NNVMError(
                f"KVStore.{fn}: mixed key types are not allowed: the store uses "
                f"{self._key_kind.__name__} keys, got {kv[0][0]!r}"
            )

    def _check_known(self, kv: list[tuple[Key, list[Any]]], fn: str) -> None:
        self._check_kind(kv, fn)
        for k, _ in kv:
            if k not in self._store:
                raise NNVMError(f"KVStore.{fn}: key {k!r} has not been initialized (call init)")

    @staticmethod
    def _check_shapes(key: Key, stored: Any, arrays: list[Any], fn: str) -> None:
        for a in arrays:
            if a.shape != stored.shape:
                raise NNVMError(
                    f"KVStore.{fn}: key {key!r} holds shape {stored.shape}, got an array of "
                    f"shape {a.shape}"
                )
