"""What a running kernel is handed: OpContext and the resources it asked for.

FResourceRequest lists ResourceRequest kinds; at run time the executor or imperative
invoke puts one Resource per request in OpContext.requested, in the same order.
"""

from __future__ import annotations

import enum
import threading
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import engine
from .base import Context


class ResourceRequest(enum.Enum):
    """Kinds of run-time resources an op may ask for (MXNet's ResourceRequest::Type)."""

    kTempSpace = "temp_space"
    kRandom = "random"


class Resource:
    """One granted resource: scratch memory or a random generator, tied to a device."""

    def __init__(self, kind: ResourceRequest, ctx: Context, seed: int | None = None) -> None:
        self.kind = kind
        self.ctx = ctx
        self._space: Any = None
        self._rng = np.random.default_rng(seed)

    def get_space(self, shape: tuple[int, ...], dtype: Any = np.float32) -> Any:
        """Scratch array of this shape; its content is undefined (reused between calls)."""
        if self.kind is not ResourceRequest.kTempSpace:
            raise TypeError("get_space() needs a kTempSpace resource")
        dtype = np.dtype(dtype)
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        if self._space is None or self._space.nbytes < nbytes:
            self._space = _alloc_bytes(self.ctx, max(nbytes, 1))
        flat = self._space[:nbytes].view(dtype)
        return flat.reshape(shape)

    def get_random(self) -> np.random.Generator:
        """The NumPy Generator backing this kRandom resource (kernels draw from it)."""
        if self.kind is not ResourceRequest.kRandom:
            raise TypeError("get_random() needs a kRandom resource")
        return self._rng


def _alloc_bytes(ctx: Context, nbytes: int) -> Any:
    if ctx.device_type == "gpu":
        from numba import cuda

        return cuda.device_array(nbytes, dtype=np.uint8)
    return np.empty(nbytes, dtype=np.uint8)


@dataclass(slots=True)  # made once per kernel launch: slots make that cheaper
class OpContext:
    """Passed to every FCompute: is_train, the engine's RunContext, granted resources."""

    is_train: bool = False
    run_ctx: Any = None  # engine.base.RunContext: .ctx (Context) and .stream
    requested: list[Resource] = field(default_factory=list)

    @property
    def ctx(self) -> Context:
        """The device this kernel runs on."""
        return self.run_ctx.ctx if self.run_ctx is not None else Context.default_ctx()


# -- the shared resources, one per (device, kind) -----------------------------------------

_resources: dict[tuple[Context, ResourceRequest], tuple[Resource, Any]] = {}
_resources_lock = threading.Lock()


def get_resource(kind: ResourceRequest, ctx: Context) -> tuple[Resource, Any]:
    """The shared resource of this kind on this device and the engine var guarding it."""
    key = (ctx, kind)
    with _resources_lock:
        found = _resources.get(key)
        if found is None:
            found = _resources[key] = (
                Resource(kind, ctx, seed=_seed_for(ctx)),
                engine.get_engine().new_var(),
            )
    return found


def _seed_for(ctx: Context) -> int:
    return _random_seed + 1000 * (ctx.device_id + (ctx.device_type == "gpu") * 100)


_random_seed = 0


def seed(value: int) -> None:
    """Re-seed every kRandom resource (nv.random.seed)."""
    global _random_seed
    with _resources_lock:
        _random_seed = int(value)
        for (ctx, kind), (res, _) in _resources.items():
            if kind is ResourceRequest.kRandom:
                res._rng = np.random.default_rng(_seed_for(ctx))
