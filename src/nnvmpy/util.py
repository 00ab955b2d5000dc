"""MXNet's `mx.util` switches for NumPy semantics: np_shape (and np_array, recorded only).

MXNet 1.x speaks two shape conventions. The legacy one (the default) writes an unknown
dimension as 0 and an unknown shape as (); under `np_shape()` a 0 is a real zero-size
dimension, an unknown dimension is -1 and an unknown shape is None. The flag is per
thread, as in MXNet. Code that converts shapes at the user API reads `is_np_shape()`.

nnvmpy has no `mx.np` ndarray, so `np_array` only records its flag: `is_np_array()`
answers what was set and nd functions keep returning NDArray.
"""

from __future__ import annotations

import functools
import inspect
import threading
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from .base import NNVMError

F = TypeVar("F", bound=Callable[..., Any])

_local = threading.local()
_np_shape_global = False  # set_np_shape(2): on in every thread


def _check(function: str, active: Any, allowed: tuple[int, ...]) -> int:
    if not isinstance(active, int | np.integer | np.bool_) or int(active) not in allowed:
        expected = "a bool" if allowed == (0, 1) else "a bool or 0, 1, 2"
        raise NNVMError(f"{function}: 'active' expects {expected}, got {active!r}")
    return int(active)


def is_np_shape() -> bool:
    """True while NumPy shape semantics are on (-1 unknown dim, None unknown shape, 0 a size)."""
    return _np_shape_global or bool(getattr(_local, "np_shape", False))


def set_np_shape(active: bool | int) -> bool:
    """NumPy shape semantics off (0/False), on in this thread (1/True) or everywhere (2).

    Returns the previous state as a bool. Turning it off also turns off the global switch.
    """
    global _np_shape_global
    value = _check("set_np_shape", active, (0, 1, 2))
    previous = is_np_shape()
    _np_shape_global = value == 2
    _local.np_shape = value >= 1
    return previous


class _NumpyShapeScope:
    """`with np_shape(active):` the block runs with np_shape on (or off); restored after."""

    def __init__(self, is_np_shape: bool = True) -> None:
        self._enter_is_np_shape = bool(_check("np_shape", is_np_shape, (0, 1)))
        self._prev_is_np_shape: bool | None = None

    def __enter__(self) -> _NumpyShapeScope:
        self._prev_is_np_shape = set_np_shape(self._enter_is_np_shape)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._prev_is_np_shape != self._enter_is_np_shape:
            set_np_shape(bool(self._prev_is_np_shape))


class _CurrentArrayScope(type):
    """`_NumpyArrayScope._current`: this thread's scope, readable and settable on the class."""

    @property
    def _current(cls) -> _NumpyArrayScope:
        scope: _NumpyArrayScope | None = getattr(_local, "np_array_scope", None)
        if scope is None:
            scope = _local.np_array_scope = _NumpyArrayScope(False)
        return scope

    @_current.setter
    def _current(cls, scope: _NumpyArrayScope) -> None:
        _local.np_array_scope = scope


class _NumpyArrayScope(metaclass=_CurrentArrayScope):
    """`with np_array(active):` the np_array flag for a block (recorded only, see above)."""

    def __init__(self, is_np_array: bool = True) -> None:
        self._is_np_array = bool(_check("np_array", is_np_array, (0, 1)))
        self._old_scope: _NumpyArrayScope | None = None

    def __enter__(self) -> _NumpyArrayScope:
        self._old_scope = _NumpyArrayScope._current
        _NumpyArrayScope._current = self
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._old_scope is not None:
            _NumpyArrayScope._current = self._old_scope


def is_np_array() -> bool:
    """The np_array flag of this thread (recorded only: nnvmpy has no mx.np ndarray)."""
    return _NumpyArrayScope._current._is_np_array


def set_np_array(active: bool) -> bool:
    """Set the np_array flag for this thread; returns the previous state."""
    scope = _NumpyArrayScope(bool(_check("set_np_array", active, (0, 1))))
    previous = is_np_array()
    _NumpyArrayScope._current = scope
    return previous


def np_shape(active: bool = True) -> _NumpyShapeScope:
    """`with np_shape():` NumPy shape semantics for the block (off with False)."""
    return _NumpyShapeScope(active)


def np_array(active: bool = True) -> _NumpyArrayScope:
    """`with np_array():` sets the np_array flag for the block."""
    return _NumpyArrayScope(active)


def set_np(shape: bool = True, array: bool = True, dtype: bool = False) -> None:
    """Both switches at once (MXNet refuses np_array without np_shape, and so do we).

    dtype=True (mx.np's float64 default dtype) has nothing to act on in nnvmpy: an error.
    """
    if array and not shape:
        raise NNVMError("set_np: NumPy array semantics need shape=True as well")
    if dtype:
        raise NNVMError(
            "set_np: dtype=True (mx.np's float64 default) is not supported; nnvmpy has no mx.np"
        )
    set_np_shape(shape)
    set_np_array(array)


def reset_np() -> None:
    """Back to the legacy semantics in this thread."""
    set_np(shape=False, array=False)


def _scoped(func: Any, scope: Callable[[], Any], name: str) -> Any:
    """func (a function or every method of a class) run inside `scope()`."""
    if inspect.isclass(func):
        for attr, value in list(vars(func).items()):
            if inspect.isfunction(value):
                setattr(func, attr, _scoped(value, scope, name))
        return func
    if not callable(func):
        raise NNVMError(f"{name}: expects a function or a class, got {type(func).__name__}")

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with scope():
            return func(*args, **kwargs)

    return wrapper


def use_np_shape(func: F) -> F:
    """Decorator: run `func` (or each method of a class) under `np_shape(True)`."""
    return _scoped(func, np_shape, "use_np_shape")


def use_np_array(func: F) -> F:
    """Decorator: run `func` (or each method of a class) under `np_array(True)`."""
    return _scoped(func, np_array, "use_np_array")


def use_np(func: F) -> F:
    """Decorator: both np_shape and np_array on while `func` runs."""
    return use_np_shape(use_np_array(func))


def getenv(name: str) -> str | None:
    """An environment variable as the backend sees it (os.environ: no separate C runtime)."""
    import os

    return os.environ.get(name)


def setenv(name: str, value: str | None) -> None:
    """Set (or, with None, remove) an environment variable for this process."""
    import os

    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = str(value)


def get_gpu_count() -> int:
    """Number of visible GPUs (MXNet's util.get_gpu_count)."""
    from nnvmpy.base import num_gpus

    return num_gpus()


__all__ = [
    "get_gpu_count",
    "getenv",
    "is_np_array",
    "is_np_shape",
    "np_array",
    "np_shape",
    "reset_np",
    "set_np",
    "set_np_array",
    "set_np_shape",
    "setenv",
    "use_np",
    "use_np_array",
    "use_np_shape",
]
