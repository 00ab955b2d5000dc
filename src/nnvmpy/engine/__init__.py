"""The dependency engine: run pushed functions in the order their variables demand.

``get_engine()`` returns the process-wide engine, chosen by NNVMPY_ENGINE_TYPE
(``config.ENGINE_TYPE``) on first use. Tests switch engines with ``engine_type(...)``.
"""

from __future__ import annotations

import operator
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from .. import config
from ..base import NNVMError
from .base import (
    AsyncFn,
    Engine,
    FnProperty,
    OnComplete,
    Opr,
    RunContext,
    SyncFn,
    Var,
)
from .naive import NaiveEngine
from .per_device import ThreadedEnginePerDevice
from .threaded import ThreadedEngine

__all__ = [
    "ENGINE_TYPES",
    "AsyncFn",
    "Engine",
    "FnProperty",
    "NaiveEngine",
    "OnComplete",
    "Opr",
    "RunContext",
    "SyncFn",
    "ThreadedEngine",
    "ThreadedEnginePerDevice",
    "Var",
    "bulk",
    "create_engine",
    "engine_type",
    "get_engine",
    "reset_engine",
    "set_bulk_size",
    "set_engine",
]

ENGINE_TYPES: dict[str, type[Engine]] = {
    "NaiveEngine": NaiveEngine,
    "ThreadedEngine": ThreadedEngine,
    "ThreadedEnginePerDevice": ThreadedEnginePerDevice,
}

_engine: Engine | None = None
_engine_lock = threading.Lock()


def create_engine(name: str | None = None) -> Engine:
    """A new engine of type ``name``; None reads NNVMPY_ENGINE_TYPE now."""
    if name is None:
        name = config.ENGINE_TYPE.get()
    cls = ENGINE_TYPES.get(name)
    if cls is None:
        raise NNVMError(
            f"unknown engine type {name!r} ({config.ENGINE_TYPE.name}); "
            f"expected one of {sorted(ENGINE_TYPES)}"
        )
    return cls()


def get_engine() -> Engine:
    """The process-wide engine, created from NNVMPY_ENGINE_TYPE on first use."""
    global _engine
    eng = _engine
    if eng is None:
        with _engine_lock:
            eng = _engine
            if eng is None:
                eng = _engine = create_engine()
    return eng


def set_engine(engine: str | Engine) -> Engine | None:
    """Make ``engine`` (a name from ENGINE_TYPES, or an instance) the process-wide engine.

    Returns the previous engine once the functions pushed to it so far have finished (it
    keeps its threads: call its ``shutdown()`` if nothing else will use it). Variables
    outlive the engine that made them (every NDArray's, and each device's temp space and
    random generator, created once per process), and engines do not see each other's
    queues: work still pending on the old engine would otherwise run unordered with the
    new engine's pushes on the same variables (a ``random.seed`` pushed before the switch
    landing after a draw made after it).
    """
    global _engine
    new = create_engine(engine) if isinstance(engine, str) else engine
    with _engine_lock:
        old, _engine = _engine, new
    if old is not None and old is not new:
        old.quiesce()
    return old


def reset_engine() -> None:
    """Finish and stop the process-wide engine; the next get_engine() re-reads the config."""
    global _engine
    with _engine_lock:
        old, _engine = _engine, None
    if old is not None:
        old.shutdown()


@contextmanager
def engine_type(engine: str | Engine) -> Iterator[Engine]:
    """Temporarily switch the process-wide engine (for tests).

    On exit, an engine created here from a name is finished and shut down; the previous
    engine is restored.
    """
    global _engine
    new = create_engine(engine) if isinstance(engine, str) else engine
    old = set_engine(new)  # waits for the work pushed to `old` so far (see set_engine)
    try:
        yield new
    finally:
        with _engine_lock:
            _engine = old
        new.quiesce()  # and `old` must not overtake what was pushed to `new`
        if isinstance(engine, str):
            new.shutdown()


# -- MXNet's bulk execution API ---------------------------------------------------------------
# MXNet merges up to `size` consecutive pushes of one thread into a single engine operation
# to save per-op overhead; results are the same as without bulking. nnvmpy's pushes are
# already cheap (small CPU ops run inline, see imperative.inline_limit), so the engine
# merges nothing: the size is kept per thread and reported back as MXNet does, and ops run
# exactly as they would unbulked.

_bulk = threading.local()


def set_bulk_size(size: int) -> int:
    """Set this thread's bulk size (MXNet's engine.set_bulk_size); returns the previous one."""
    try:
        value = operator.index(size)
    except TypeError:
        value = -1
    if isinstance(size, bool) or value < 0:
        raise NNVMError(f"engine.set_bulk_size: size expects an int >= 0, got {size!r}")
    previous: int = getattr(_bulk, "size", 0)
    _bulk.size = value
    return previous


@contextmanager
def bulk(size: int) -> Iterator[None]:
    """`with engine.bulk(size):` MXNet's bulking scope; the previous size comes back on exit."""
    previous = set_bulk_size(size)
    try:
        yield
    finally:
        set_bulk_size(previous)
