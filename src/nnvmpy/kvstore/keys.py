"""Keys and values as the KVStore API accepts them, flattened to (key, [arrays]) pairs.

MXNet takes one key or a list of keys; for each key one NDArray or a list of NDArrays
(one per device). A store uses either int keys or str keys, never both.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..base import NNVMError

Key = int | str


def key_kind(key: Any, fn: str) -> type:
    """int or str: the kind of one key; anything else raises."""
    if isinstance(key, bool) or not isinstance(key, int | np.integer | str):
        raise NNVMError(f"KVStore.{fn}: key must be an int or a str, got {key!r}")
    return str if isinstance(key, str) else int


def _as_arrays(value: Any, fn: str, key: Key) -> list[Any]:
    from nnvmpy.ndarray import NDArray

    values = list(value) if isinstance(value, list | tuple) else [value]
    if not values:
        raise NNVMError(f"KVStore.{fn}: key {key!r} has an empty list of values")
    for v in values:
        if not isinstance(v, NDArray):
            raise NNVMError(
                f"KVStore.{fn}: the value of key {key!r} must be an NDArray or a list of "
                f"NDArrays, got {type(v).__name__}"
            )
    return values


def pairs(key: Any, value: Any, fn: str) -> list[tuple[Key, list[Any]]]:
    """[(key, [NDArray, ...]), ...] from one key or a list of keys and their values."""
    if isinstance(key, list | tuple):
        if not isinstance(value, list | tuple) or len(value) != len(key):
            got = len(value) if isinstance(value, list | tuple) else type(value).__name__
            raise NNVMError(
                f"KVStore.{fn}: {len(key)} keys need a list of {len(key)} values, got {got}"
            )
        keys: Sequence[Any] = key
        values: Sequence[Any] = value
    else:
        keys, values = [key], [value]
    kinds = {key_kind(k, fn) for k in keys}
    if len(kinds) > 1:
        raise NNVMError(f"KVStore.{fn}: inconsistent types of keys {list(keys)!r} (int and str)")
    return [
        (k if isinstance(k, str) else int(k), _as_arrays(v, fn, k))
        for k, v in zip(keys, values, strict=True)
    ]


def grouped(kv_pairs: list[tuple[Key, list[Any]]]) -> list[tuple[Key, list[Any]]]:
    """Pairs with the same key merged, in first-seen order (a key pushed twice sums)."""
    out: dict[Key, list[Any]] = {}
    for k, vs in kv_pairs:
        out.setdefault(k, []).extend(vs)
    return list(out.items())
