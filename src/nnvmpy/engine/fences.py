"""Stream-ordered completion of GPU functions (NNVMPY_GPU_STREAM_ORDER=1): device fences
left on variables.

Why. With events (streams.py), a GPU function completes when its stream has run it, so
in a chain of dependent GPU ops each waits for the previous one to finish on the device,
plus the event's poll and a thread switch, before it is even launched: on an H200,
`x = x + 1` ran at 140-200 us per op on the threaded engine and at 25 us on the
NaiveEngine. On one stream that wait buys nothing: the stream runs its kernels in order.
PyTorch and MXNet 2 launch dependents at once and order them on the device.

How. A GPU compute function (synchronous, on its worker's stream S) completes as soon as
its kernels are queued: its worker records an event E on S and leaves the fence (S, E)
on each variable it used (`leave`), then releases them. A write replaces the variable's
fences (its stream waited on all of them first); a read replaces only the fence of its
own stream (a later event on a stream implies the earlier ones), so a variable holds at
most one fence per stream. Whoever takes a variable over honours its fences before it
runs (`honour`): a function on the same stream needs nothing; one on another stream
(a copy worker's, another GPU worker's) makes its stream wait for E on the device
(cuStreamWaitEvent, no host wait); anything on the host (a CPU function, an asynchronous
function, wait_to_read, waitall) waits for E (`settle`, `settle_all`). A delete frees
memory another stream could take over at once, so a variable whose fences have not
passed is not deleted on the spot (`passed`): its delete waits on the device's
completion thread.

The events come from a ring of RING per stream, recorded in turn (creating one per
function cost a driver call and a finalizer each). A fence whose event was recorded again
since stands for later work of the same stream: waiting on it waits for more than needed,
never for less, and never for work queued after the wait (a wait uses the event's record
at the time of the call), so it cannot deadlock.

Off by default until it has passed on hardware: a kernel's failure then surfaces at a
later synchronisation instead of in the function that launched it.
"""

from __future__ import annotations

import threading
from typing import Any

from .. import config

RING = 64  # events per stream
_on: list[bool] = []  # read once
_rings: dict[int, list[Any]] = {}  # id(stream) -> [next slot, event, event, ...]
_streams: dict[int, Any] = {}  # id -> stream of every stream that left a fence
_streams_lock = threading.Lock()


def on() -> bool:
    """Whether GPU compute functions complete when queued (NNVMPY_GPU_STREAM_ORDER=1)."""
    if not _on:
        _on.append(config.GPU_STREAM_ORDER.get() == "1")
    return _on[0]


def set_on(value: bool | None) -> None:
    """Turn the mode on or off in this process (None: back to the knob); for tests. Only
    while the engine is idle and every fence has been settled."""
    _on.clear()
    if value is not None:
        _on.append(value)


def record(stream: Any, new_event: Any) -> Any:
    """An event of `stream`'s ring (made by `new_event()` while the ring fills), recorded
    on it now. A stream is its worker thread's alone, so its ring needs no lock."""
    ring = _rings.get(id(stream))
    if ring is None:
        ring = _rings[id(stream)] = [0]
    slot = ring[0]
    if slot + 1 < len(ring):
        event = ring[slot + 1]
    else:
        event = new_event()
        ring.append(event)
    ring[0] = (slot + 1) % RING
    event.record(stream)
    return event


def leave(const_vars: Any, mutate_vars: Any, stream: Any, event: Any) -> None:
    """Leave the fence (stream, event) on the variables a function used (engine lock held:
    concurrent readers of one variable update its fences)."""
    key = id(stream)
    fence = (stream, event)
    for v in const_vars:
        fences = v.fence
        if fences is None:
            v.fence = {key: fence}
        else:
            fences[key] = fence
    for v in mutate_vars:
        v.fence = {key: fence}
    if key not in _streams:
        with _streams_lock:
            _streams[key] = stream


def honour(variables: Any, stream: Any) -> None:
    """Before a function runs: order `stream` (None: the host) after every fence left on
    `variables` by other streams."""
    for v in variables:
        fences = v.fence
        if fences:
            for s, event in list(fences.values()):
                if stream is None:
                    event.synchronize()
                elif s is not stream:
                    event.wait(stream)


def settle(var: Any) -> None:
    """Wait on the host until the device has run everything `var`'s fences stand for."""
    fences = var.fence
    if fences:
        for _, event in list(fences.values()):
            event.synchronize()


def passed(var: Any) -> bool:
    """Whether every fence on `var` has passed (an event that cannot be queried has)."""
    fences = var.fence
    if not fences:
        return True
    for _, event in list(fences.values()):
        query = getattr(event, "query", None)
        if query is not None and not query():
            return False
    return True


def pending_events(variables: Any) -> list[Any]:
    """The events of the fences on `variables` not passed yet."""
    events = []
    for v in variables:
        fences = v.fence
        if fences:
            for _, event in list(fences.values()):
                query = getattr(event, "query", None)
                if query is not None and not query():
                    events.append(event)
    return events


def settle_all() -> None:
    """Wait on the host until every stream that left a fence has run all it was given."""
    with _streams_lock:
        streams = list(_streams.values())
    for s in streams:
        s.synchronize()


__all__ = [
    "RING", "honour", "leave", "on", "passed", "pending_events", "record", "set_on", "settle",
    "settle_all",
]  # fmt: skip
