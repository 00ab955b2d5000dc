"""'dist_sync' / 'dist_device_sync': one KVStore per MPI process, summed by allreduce.

Every worker keeps the full store. A push sums the key's local values (as 'local' or
'device' does), then an allreduce sums those over the workers; the updater (set_optimizer)
then runs on every worker on the same sum from the same weights, so the weights stay
equal without a parameter server. init takes rank 0's value (a broadcast). The MPI
calls run on the communication thread (mpi_comm.py), reached through engine operations.
"""

from __future__ import annotations

from typing import Any

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
        """Sum each key's values here, then over the workers; update or replace the stored value.

        The allreduce writes the sum into a buffer that needs no copy afterwards where
        possible: without an updater, in the stored value itself (the pull then reads the
        sum); with one, in the local sum when that is already a temporary of ours (several
        values, or one from another device or dtype), else in the key's receive buffer,
        which the updater then reads. The caller's gradient is never written.
        """
        kv = grouped(pairs(key, value, "push"))
        self._check_known(kv, "push")
        updates: list[tuple[Key, Any]] = []
        for k, vs in kv:
            stored = self._store[k]
            self._check_shapes(k, stored, vs, "push")
            merged = self._merge(vs, stored)
            owned = merged is not vs[0]  # the sum, or a copy: nobody else holds it
            if merged.context.device_type != "cpu":
                merged, owned = merged.as_in_context(cpu()), True
            if self._updater is None and stored.context.device_type == "cpu":
                self._allreduce(k, merged, stored, priority)
                continue
            target = merged if owned else self._recv_buffer(k, merged)
            self._allreduce(k, merged, target, priority)
            updates.append((k, target))
        for k, summed in updates:
            stored = self._store[k]
            if summed.context != stored.context:
                summed = summed.as_in_context(stored.context)
            if self._updater is not None:
                self._updater(k, summed, stored)
            else:
                summed.copyto(stored)

    def pushpull(self, key: Any, value: Any, out: Any = None, priority: int = 0) -> None:
        """push then pull; without `out` the result is written back into `value`.

        Without an updater the sum goes straight into the first out array (in place when
        that is the pushed value itself), and the stored value is copied from it after:
        the caller's `out` is ready as soon as the allreduce is, one copy sooner than a
        push followed by a pull. Otherwise (an updater, several values for one key listed
        twice, another device or dtype) it is push, then pull."""
        if self._updater is not None:
            super().pushpull(key, value, out, priority)
            return
        kv = pairs(key, value, "pushpull")
        outs = kv if out is None else pairs(key, out, "pushpull")
        if len(grouped(kv)) != len(kv):
            super().pushpull(key, value, out, priority)
            return
        self._check_known(kv, "pushpull")
        for (k, vs), (_, os_) in zip(kv, outs, strict=True):
            stored = self._store[k]
            self._check_shapes(k, stored, vs, "pushpull")
            self._check_shapes(k, stored, os_, "pushpull")
            dst = os_[0]
            on_host = stored.context.device_type == "cpu" and dst.context.device_type == "cpu"
            if not on_host or dst.dtype != stored.dtype:
                super().pushpull(k, vs, os_, priority)
                continue
            self._allreduce(k, self._merge(vs, stored), dst, priority)  # the sum is on the host
            dst.copyto(stored)
            for o in os_[1:]:
                dst.copyto(o)

    def _recv_buffer(self, key: Key, like: Any) -> Any:
        from nnvmpy import ndarray as nd

        recv = self._recv.get(key)
        if recv is None:
            recv = self._recv[key] = nd.empty(like.shape, ctx=cpu(), dtype=like.dtype)
        return recv

    def _allreduce(self, key: Key, src: Any, dst: Any, priority: int) -> None:
        """An engine operation: once `src` is written, hand it to the communication thread,
        which writes the sum of every worker's `src` into `dst` (in place when they are one
        array; small ones fused into one call) and then completes the operation.

        The hand-off itself is short (no copy: MPI reads `src` and writes `dst`), so the
        engine may run it in the pushing thread when `src` is ready at push time."""
        comm, job = self._comm, self._comm.reserve()  # program order: the same on every worker
        what = f"push of key {key!r}"
        buf = dst._data
        send = None if src is dst else src._data

        def run(_rc: Any, on_complete: Any) -> None:
            comm.submit(job, "allreduce", buf, on_complete, priority, what, send=send)

        engine.get_engine().push_async(
            run,
            cpu(),
            [] if send is None else [src._chunk.var],
            [dst._chunk.var],
            priority=priority,
            name="kvstore_allreduce",
            prop=engine.FnProperty.INLINE,
        )
