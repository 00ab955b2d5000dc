"""How a Module trains through a KVStore: MXNet 1.9.1's rules (mxnet/model.py).

- `create_kvstore`: which store, and whether the store runs the optimizer
  (``update_on_kvstore``). A str names a type; in one process with one device 'local' or
  'device' need no store at all (MXNet's rule: nothing to sum), a 'dist_*' type always
  makes one; a KVStore object is used as given. MXNET_UPDATE_ON_KVSTORE=0 keeps the
  optimizer in the Module (the store then only sums gradients).
- `initialize_kvstore`: every parameter becomes a key named after it, holding rank 0's
  initial value, which every worker then pulls, so all replicas start equal.
- `update_params_on_kvstore`: ``pushpull(name, grad, out=weight, priority=-index)``: the
  store sums the gradients (over workers too) and applies the optimizer; the weight
  comes back. Priority -index: the allreduce of a later layer, whose gradient backward
  writes first, starts while earlier layers still compute, and among ready gradients
  the first layers go first, since the next forward needs them first.
- `update_params`: ``pushpull(name, grad)`` sums in place, then the Module's own updater.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..base import ParamError


def _update_on_kvstore_default() -> bool:
    raw = os.environ.get("MXNET_UPDATE_ON_KVSTORE", "1")
    try:
        return bool(int(raw))
    except ValueError:
        raise ParamError(
            f"Module.init_optimizer: MXNET_UPDATE_ON_KVSTORE must be 0 or 1, got {raw!r}"
        ) from None


def create_kvstore(kvstore: Any, num_device: int, arg_params: dict[str, Any]) -> tuple[Any, bool]:
    """(the store or None, whether the store applies the optimizer)."""
    from nnvmpy import kvstore as kvs

    update_on_kvstore = _update_on_kvstore_default()
    if kvstore is None:
        kv = None
    elif isinstance(kvstore, kvs.KVStoreBase):  # ours or a registered custom store
        kv = kvstore
    elif isinstance(kvstore, str):
        if num_device == 1 and "dist" not in kvstore:
            kv = None  # one device, one process: there is nothing to sum
        else:
            kv = kvs.create(kvstore)
            if kvstore == "local" and arg_params:
                largest = max(int(np.prod(p.shape)) for p in arg_params.values())
                if largest > 1024 * 1024 * 16:
                    update_on_kvstore = False  # MXNet: huge weights update on the devices
    else:
        raise ParamError(
            "Module.init_optimizer: kvstore must be an nv.kv.KVStoreBase, a type name "
            f"('local', 'device', 'dist_sync', ...) or None, got {type(kvstore).__name__}"
        )
    if kv is None:
        return None, False
    return kv, update_on_kvstore and kv.is_capable(kvs.KVStoreBase.OPTIMIZER)


def initialize_kvstore(
    kv: Any,
    param_arrays: dict[str, list[Any]],
    arg_params: dict[str, Any],
    names: Sequence[str],
) -> None:
    """One key per parameter, named after it: rank 0's value, pulled into every device's
    copy. (MXNet skips the pull when the Module updates the weights itself, which leaves
    each worker with its own initial weights; pulling keeps the replicas equal.)"""
    for name in names:
        kv.broadcast(name, arg_params[name], out=param_arrays[name])


def update_params_on_kvstore(
    param_arrays: dict[str, list[Any]],
    grad_arrays: dict[str, list[Any]],
    kv: Any,
    names: Sequence[str],
) -> None:
    """The store sums each gradient over the devices (and workers) and runs the optimizer;
    the new weight is pulled back into every device's copy."""
    for index, name in enumerate(names):
        grads = grad_arrays.get(name)
        if grads is None:
            continue
        kv.pushpull(name, grads, out=param_arrays[name], priority=-index)


def update_params(
    param_arrays: dict[str, list[Any]],
    grad_arrays: dict[str, list[Any]],
    updater: Any,
    kv: Any,
    names: Sequence[str],
) -> None:
    """Sum each gradient through the store (when there is one; the sum lands in every
    device's gradient), then update each device's copy locally. The updater's index of
    parameter i on device k is i * devices + k (MXNet's numbering: one optimizer state per
    copy)."""
    per_device: dict[int, tuple[list[int], list[Any], list[Any]]] = {}
    for index, name in enumerate(names):
        grad_list = grad_arrays.get(name)
        if grad_list is None:
            continue
        if kv is not None:
            kv.pushpull(name, grad_list, priority=-index)
        devices = len(grad_list)
        for k, (g, w) in enumerate(zip(grad_list, param_arrays[name])):
            indices, grads, weights = per_device.setdefault(k, ([], [], []))
            indices.append(index * devices + k)
            grads.append(g)
            weights.append(w)
    for indices, grads, weights in per_device.values():  # one call per device
        updater(indices, grads, weights)
