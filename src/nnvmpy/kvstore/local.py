"""The single-process stores: 'local' sums on the CPU, 'device' on the values' device.

MXNet's 'local' copies every device's value to CPU memory, sums and updates there;
'device' keeps each key on a device (here: the device of the value it was initialised
with) and sums the other devices' values there, so weights and gradients of a GPU model
never cross to the host.
"""

from __future__ import annotations

from typing import Any

from ..base import Context, cpu
from .base import KVStore

LOCAL_TYPES = ("local", "local_update_cpu", "local_allreduce_cpu")
DEVICE_TYPES = ("device", "local_allreduce_device", "nccl")


class LocalStore(KVStore):
    """'local' (and MXNet's aliases local_update_cpu, local_allreduce_cpu)."""

    def _store_ctx(self, value: Any) -> Context:
        return cpu()


class DeviceStore(KVStore):
    """'device': each key is stored and summed on the device it was initialised on."""

    def _store_ctx(self, value: Any) -> Context:
        return value.context
