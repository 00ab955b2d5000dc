"""Updater: the per-weight states of one optimizer, and the call a KVStore or trainer makes.

    updater = nv.optimizer.get_updater(nv.optimizer.SGD(momentum=0.9))
    updater(index, grad, weight)          # or lists of indices, grads and weights
    blob = updater.get_states()           # pickled states (and the optimizer, if asked)
    updater.set_states(blob)

States are created on the first update of each index. An optimizer with
`aggregate_num > 0` (SGD) gets the weights in groups of that size, one dtype per group, so
it can update a group with one multi_* op.
"""

from __future__ import annotations

import pickle
from typing import Any

from ..base import py_str
from .optimizer import Optimizer


class Updater:
    """Keeps the optimizer's state of every weight and applies updates (MXNet's Updater)."""

    def __init__(self, optimizer: Optimizer) -> None:
        self.optimizer = optimizer
        self.states: dict[Any, Any] = {}
        self.states_synced: dict[Any, bool] = {}
        self.aggregate_updates = optimizer.aggregate_num > 0

    def __call__(self, index: Any, grad: Any, weight: Any) -> None:
        """Update `weight` (or each of a list of weights) in place from its gradient."""
        if isinstance(index, list | tuple):
            indices, grads, weights = list(index), list(grad), list(weight)
        else:
            indices, grads, weights = [index], [grad], [weight]
        if weights:
            self.optimizer._set_current_context(weights[0].context.device_id)
        for i, idx in enumerate(indices):
            if isinstance(idx, bytes):
                indices[i] = idx = py_str(idx)
            if idx not in self.states:
                self.states[idx] = self.optimizer.create_state_multi_precision(idx, weights[i])
                self.states_synced[idx] = True
            elif not self.states_synced[idx]:
                self.states[idx] = self.sync_state_context(self.states[idx], weights[i].context)
                self.states_synced[idx] = True
        if not self.aggregate_updates:
            for idx, w, g in zip(indices, weights, grads, strict=True):
                self.optimizer.update_multi_precision(idx, w, g, self.states[idx])
            return
        by_dtype: dict[Any, list[tuple[Any, Any, Any]]] = {}
        for idx, w, g in zip(indices, weights, grads, strict=True):
            by_dtype.setdefault(w.dtype, []).append((idx, w, g))
        size = self.optimizer.aggregate_num
        for group in by_dtype.values():
            for start in range(0, len(group), size):
                chunk = group[start : start + size]
                ids = [c[0] for c in chunk]
                self.optimizer.update_multi_precision(
                    ids, [c[1] for c in chunk], [c[2] for c in chunk], [self.states[i] for i in ids]
                )

    def sync_state_context(self, state: Any, context: Any) -> Any:
        """The state (an NDArray or nested tuples/lists of them) moved to `context`."""
        if hasattr(state, "as_in_context"):
            return state.as_in_context(context)
        if isinstance(state, tuple | list):
            synced = [self.sync_state_context(s, context) for s in state]
            return tuple(synced) if isinstance(state, tuple) else synced
        return state

    def set_states(self, states: bytes) -> None:
        """Load states from get_states(); with the optimizer too if it was dumped."""
        loaded = pickle.loads(states)
        if isinstance(loaded, tuple) and len(loaded) == 2:
            self.states, self.optimizer = loaded
        else:
            self.states = loaded
        self.states_synced = dict.fromkeys(self.states, False)

    def get_states(self, dump_optimizer: bool = False) -> bytes:
        """The states pickled; with dump_optimizer also the optimizer (its lr schedule, counts)."""
        return pickle.dumps((self.states, self.optimizer) if dump_optimizer else self.states)


def get_updater(optimizer: Optimizer) -> Updater:
    """An Updater for `optimizer` (the callable a KVStore or a training loop uses)."""
    return Updater(optimizer)
