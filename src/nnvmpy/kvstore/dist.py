"""'dist_sync' / 'dist_device_sync': one KVStore per MPI process, summed by allreduce.

Every worker keeps the full store. A push sums the key's local values (as 'local' or
'device' does), then an allreduce sums those over the workers; the updater (set_optimizer)
then runs on every worker on the same sum from the same weights, so the weights stay
equal without a parameter server. init takes rank 0's value (a broadcast). The MPI
calls run on the communication thread (mpi_comm.py), reached through engine operations.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import engine
from ..base import Context, cpu
from .base import KVStore
from .keys import Key, grouped, pairs
from .mpi_comm import Comm, get_comm


class DistSyncStore(KVStore):
    """Synchronous data-parallel store over MPI (see the module docstring)."""

    def __init__(self, name: str = "dist_sync") -> None:
        super().__init__(name)
        self._comm: Comm = get_comm()
        self._recv: dict[Key, Any] = {}

    @property
    def rank(self) -> int:
        return self._comm.rank

    @property
    def num_workers(self) -> int:
        return self._comm.size

    def _store_ctx(self, value: Any) -> Context:
        return value.context if "device" in self._type else cpu()

    def barrier(self) -> None:
        """Wait until every worker has called barrier (after this worker's pending pushes)."""
        self._comm.barrier()

    _barrier = barrier

    # -- init: rank 0's value everywhere -------------------------------------------------------

    def _init_across(self, key: Key, stored: Any) -> None:
        host = stored if stored.context.device_type == "cpu" else stored.as_in_context(cpu())
        host.wait_to_read()
        self._comm.bcast(host._data, root=0, what=f"init of key {key!r}")
        if host is not stored:
            host.copyto(stored)

    # -- push: local sum, then allreduce -------------------------------------------------------

    def push(self, key: Any, value: Any, priority: int = 0) -> None:
        kv = grouped(pairs(key, value, "push"))
        self._check_known(kv, "push")
        for k, vs in kv:
            stored = self._store[k]
            self._check_shapes(k, stored, vs, "push")
            m = self._merge(vs, stored)
            host = m if m.context.device_type == "cpu" else m.as_in_context(cpu())
            self._allreduce(k, host, priority)
        for k, _ in kv:
            stored, recv = self._store[k], self._recv[k]
            if recv.context != stored.context:
                recv = recv.as_in_context(stored.context)
            if self._updater is not None:
                self._updater(k, recv, stored)
            else:
                recv.copyto(stored)

    def _allreduce(self, key: Key, merged: Any, priority: int) -> None:
        """An engine operation: once `merged` is written, copy it into the key's receive
        buffer and hand that to the communication thread, which sums it over the workers
        in place (fusing small ones) and completes the operation."""
        from .. import ndarray as nd

        recv = self._recv.get(key)
        if recv is None:
            recv = self._recv[key] = nd.empty(merged.shape, ctx=cpu(), dtype=merged.dtype)
        src, dst = merged._data, recv._data
        comm, job = self._comm, self._comm.reserve()  # program order: the same on every worker
        what = f"push of key {key!r}"

        def run(_rc: Any, on_complete: Any) -> None:
            np.copyto(dst, src)
            comm.submit(job, "allreduce", dst, on_complete, priority=priority, what=what)

        engine.get_engine().push_async(
            run,
            cpu(),
            [merged._chunk.var],
            [recv._chunk.var],
            priority=priority,
            name="kvstore_allreduce",
        )
