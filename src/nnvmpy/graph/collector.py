"""Python's cyclic garbage collector held off while a large graph is built.

Binding a graph allocates several container objects per node (nodes, entries, per-pass
lists and dicts), and CPython starts a full collection each time enough of them
accumulate: each walks every live object, the growing graph included. On a 6600-node
unrolled LSTM that was 0.7 s of a 3 s bind, for nothing: binding leaves no cycles worth
collecting early. `paused_collector()` turns the collector off for the block and back on
at its end (when it was on), and nests and overlaps across threads: the collector runs
again when the last block open anywhere ends.

When it does, what the blocks built goes straight to the oldest generation (gc.freeze then
gc.unfreeze: two list splices). Left young, the bound graph's ~170k objects (that LSTM)
were walked by a generation-1 pass and then a full collection in the first step after the
bind: ~250 of its ~520 ms. They live as long as the executor, so a young collection never
frees them; cycles among them wait for the next full collection, as any survivor's do.
Skipped while the application keeps objects frozen itself (unfreeze would release them).
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

_lock = threading.Lock()
_open = 0  # blocks open in any thread
_was_enabled = False  # the collector's state when the first of them opened


@contextlib.contextmanager
def paused_collector() -> Iterator[None]:
    """Run the block with gc disabled; restore gc's previous state after the last one."""
    global _open, _was_enabled
    with _lock:
        if _open == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _open += 1
    try:
        yield
    finally:
        with _lock:
            _open -= 1
            if _open == 0 and _was_enabled:
                if gc.get_freeze_count() == 0:
                    gc.freeze()  # every tracked object to the permanent generation...
                    gc.unfreeze()  # ...and back, into the oldest one
                gc.enable()


__all__ = ["paused_collector"]
