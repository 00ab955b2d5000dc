"""Per-thread state of the threaded engines, shared by their modules.

A worker thread records the pool it serves; every thread the blocks running on it
(innermost last: pushes made there are nested, see var.py) and its private waker.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nnvmpy.engine.threaded import _Pool, _Waker
    from nnvmpy.engine.var import OprBlock


class _ThreadState(threading.local):
    """Per thread (class defaults make the lookups cheap on threads that never set them)."""

    pool: _Pool | None = None  # the pool a worker thread serves
    stack: list[OprBlock] | None = None  # blocks running on this thread, innermost last
    waker: _Waker | None = None


_tls = _ThreadState()
