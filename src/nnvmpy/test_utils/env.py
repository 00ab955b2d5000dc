"""Test scaffolding from MXNet's test_utils: environment variables, stderr, retries."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ..base import NNVMError


def _env_dict(args: tuple[Any, ...]) -> dict[str, str | None]:
    if len(args) == 1 and isinstance(args[0], dict):
        env = args[0]
    elif len(args) == 2:
        env = {args[0]: args[1]}
    else:
        raise NNVMError(
            f"environment: expects one dict or (name, value), got {len(args)} arguments"
        )
    for name, value in env.items():
        if not isinstance(name, str) or not (value is None or isinstance(value, str)):
            raise NNVMError(
                f"environment: expects str names and str-or-None values, got {name!r}={value!r}"
            )
    return env


def _apply(env: dict[str, str | None]) -> None:
    for name, value in env.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@contextmanager
def environment(*args: Any) -> Iterator[None]:
    """Set environment variables for a block: environment(name, value) or environment(dict).

    A value of None unsets the variable. The previous values come back on exit, after
    pending engine work has finished (it may still read the variables).
    """
    env = _env_dict(args)
    snapshot = {name: os.environ.get(name) for name in env}
    _apply(env)
    try:
        yield
    finally:
        from nnvmpy import nd

        try:
            nd.waitall()
        finally:
            _apply(snapshot)


def set_env_var(key: str, val: str, default_val: str = "") -> str:
    """Set os.environ[key] = val; returns the previous value (default_val when unset)."""
    if not isinstance(key, str) or not isinstance(val, str):
        raise NNVMError(f"set_env_var: expects str key and value, got {key!r}={val!r}")
    previous = os.environ.get(key, default_val)
    os.environ[key] = val
    return previous


def is_cd_run() -> bool:
    """True inside MXNet's continuous-delivery jobs (CD_JOB=1)."""
    return os.environ.get("CD_JOB", "0") == "1"


@contextmanager
def discard_stderr() -> Iterator[None]:
    """Send file descriptor 2 to /dev/null for a block (also silences C-level writes)."""
    try:
        fd = sys.stderr.fileno()
    except (
        AttributeError,
        OSError,
        ValueError,
    ):  # a captured or virtual stream: nothing to redirect
        yield
        return
    sys.stderr.flush()
    saved = os.dup(fd)
    try:
        with open(os.devnull, "w", encoding="utf-8") as devnull:
            os.dup2(devnull.fileno(), fd)
            try:
                yield
            finally:
                sys.stderr.flush()
                os.dup2(saved, fd)
    finally:
        os.close(saved)


def retry(n: int) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator for stochastic tests: run up to n times, fail only if every run fails."""
    if not isinstance(n, int) or n < 1:
        raise NNVMError(f"retry: n expects an int >= 1, got {n!r}")

    def decorate(f: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(f)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            for attempt in range(n):
                try:
                    return f(*args, **kwargs)
                except AssertionError:
                    if attempt == n - 1:
                        raise
            return None

        return wrapper

    return decorate


def same_array(array1: Any, array2: Any) -> bool:
    """True when two NDArrays share memory: a change through one shows through the other."""
    from nnvmpy.test_utils.compare import same

    before = array2.asnumpy()
    array1 += 1
    try:
        return not same(before, array2.asnumpy())
    finally:
        array1 -= 1
