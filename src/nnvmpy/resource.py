"""What a running kernel is handed: OpContext and the resources it asked for.

FResourceRequest lists ResourceRequest kinds; at run time the executor or imperative
invoke puts one Resource per request in OpContext.requested, in the same order.
"""

from __future__ import annotations

import enum
import math
import threading
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import engine
from .base import Context, current_context
from .engine import fences
from .kernel import storage
from .kernel.philox import seed_key


class ResourceRequest(enum.Enum):
    """Kinds of run-time resources an op may ask for (MXNet's ResourceRequest::Type)."""

    kTempSpace = "temp_space"
    kRandom = "random"


class Resource:
    """One granted resource: scratch memory or a random generator, tied to a device.

    A kRandom resource is the device's Philox-4x32 stream (kernel/philox.py): a key from
    the seed and a 64-bit counter that each launch advances by the counters it used
    (`take_counters`). Ops mutate the resource's engine var, so launches take their
    counters in push order and a seed gives the same numbers on every engine.
    """

    _key: tuple[np.uint64, np.uint64]
    _counter: int
    _rng: np.random.Generator | None

    def __init__(self, kind: ResourceRequest, ctx: Context, seed: int | None = None) -> None:
        self.kind = kind
        self.ctx = ctx
        self._space: Any = None
        self._lock = threading.Lock()
        self._key: tuple[np.uint64, np.uint64] = (np.uint64(0), np.uint64(0))
        self._counter = 0
        self._rng = None
        self._reseed(0 if seed is None else seed)

    def get_space(self, shape: tuple[int, ...], dtype: Any = np.float32) -> Any:
        """Scratch array of this shape; its content is undefined (reused between calls)."""
        if self.kind is not ResourceRequest.kTempSpace:
            raise TypeError("get_space() needs a kTempSpace resource")
        dtype = dtype if isinstance(dtype, np.dtype) else np.dtype(dtype)
        if not isinstance(shape, tuple):
            shape = tuple(shape) if hasattr(shape, "__len__") else (shape,)
        # math.prod: np.prod costs ~4 us a call, ~40 calls in a ResNet-18 batch-1 step
        nbytes = int(math.prod(shape)) * dtype.itemsize
        if self._space is None or self._space.nbytes < nbytes:
            if self._space is not None and self.ctx.device_type == "gpu" and fences.on():
                _wait_for_device(self.ctx)  # before the outgrown space goes back to the pool
            self._space = _alloc_bytes(self.ctx, max(nbytes, 1))
        if storage.poisoning:  # NNVMPY_POISON_MEMORY: scratch content is undefined
            storage.poison(self._space)
        # device_view: numba's slice, view and reshape cost ~20 us on a device array
        return storage.device_view(self._space, shape, dtype)

    def take_counters(self, n: int) -> tuple[np.uint64, np.uint64, np.uint64]:
        """Reserve n Philox stream counters: (key0, key1, first counter), all np.uint64.

        Element i of a launch draws from stream counter `first + i` (see kernel/philox.py),
        so its numbers depend only on the seed, the counters used before and i.
        """
        self._check_random("take_counters")
        with self._lock:
            first = self._counter
            self._counter = (first + int(n)) % _COUNTER_SPAN
        return self._key[0], self._key[1], np.uint64(first)

    def get_random(self) -> np.random.Generator:
        """A NumPy Generator seeded from this device's seed, for host-side Python kernels.

        Built-in ops draw from the Philox stream instead (`take_counters`); this one is
        for legacy and custom operators, and nv.random.seed re-seeds it too.
        """
        self._check_random("get_random")
        if self._rng is None:
            key = (int(self._key[1]) << 32) | int(self._key[0])
            self._rng = np.random.Generator(np.random.Philox(key=key))
        return self._rng

    def _check_random(self, what: str) -> None:
        if self.kind is not ResourceRequest.kRandom:
            raise TypeError(f"{what}() needs a kRandom resource, this one is {self.kind.name}")

    def _reseed(self, seed: int) -> None:
        self._key = seed_key(seed, self.ctx.device_id)
        self._counter = 0
        self._rng = None


_COUNTER_SPAN = 1 << 64


def _wait_for_device(ctx: Context) -> None:
    """Wait on the host until ctx's device has run everything queued on it.

    Why. With stream-ordered completion (engine/fences.py) the earlier users of a temp
    space completed when their kernels were queued, so some may still run on other
    streams, or earlier in this op on its own. CuPy hands a dropped block out again on the
    stream it was allocated on, not after the streams that used it: the outgrown space
    could become another array while those kernels still read or write it. A space grows
    a few times in a process (to the largest request), so one device-wide wait each time
    costs nothing that matters."""
    from nnvmpy.kernel.cuda import get_cuda

    cuda = get_cuda("temp_space")
    with cuda.gpus[ctx.device_id]:
        cuda.synchronize()


def _alloc_bytes(ctx: Context, nbytes: int) -> Any:
    """A temp space's bytes: from CuPy's pool where the GPU library layer is on (a space
    outgrown is dropped only when the op now holding the resource asks for more, after its
    earlier users completed: the engine orders them by the resource's variable; with
    stream-ordered completion, after the device ran them: _wait_for_device)."""
    if ctx.device_type == "gpu":
        from nnvmpy.kernel import gpu_lib

        if gpu_lib.available():
            return storage.cupy_block(ctx, nbytes)
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
        return self.run_ctx.ctx if self.run_ctx is not None else current_context()


# -- the shared resources, one per (device, kind) -----------------------------------------

_resources: dict[tuple[Context, ResourceRequest], tuple[Resource, Any]] = {}
_resources_lock = threading.Lock()
_global_seed = 0  # MXNet's ResourceManager starts from seed 0 as well
_device_seeds: dict[Context, int] = {}  # seed(s, ctx=...) for one device


def get_resource(kind: ResourceRequest, ctx: Context) -> tuple[Resource, Any]:
    """The shared resource of this kind on this device and the engine var guarding it."""
    key = (ctx, kind)
    with _resources_lock:
        found = _resources.get(key)
        if found is None:
            found = _resources[key] = (
                Resource(kind, ctx, seed=_device_seeds.get(ctx, _global_seed)),
                engine.get_engine().new_var(),
            )
    return found


def seed(value: int, ctx: Context | None = None) -> None:
    """Re-seed the kRandom resources: every device (ctx None) or only `ctx` (nv.random.seed).

    The re-seeding is pushed to the engine as a write of each resource's var, so random
    ops pushed before it use the old stream and those pushed after it the new one, as in
    MXNet. Devices without a resource yet start from this seed when first used.
    """
    global _global_seed
    value = int(value)
    with _resources_lock:
        if ctx is None:
            _global_seed = value
            _device_seeds.clear()
        else:
            _device_seeds[ctx] = value
        targets = [
            found
            for (dev, kind), found in _resources.items()
            if kind is ResourceRequest.kRandom and (ctx is None or dev == ctx)
        ]
    eng = engine.get_engine()
    for res, var in targets:
        eng.push_sync(_reseeder(res, value), res.ctx, (), (var,), 0, "random_seed")


def _reseeder(res: Resource, value: int) -> Any:
    def run(run_ctx: Any) -> None:
        res._reseed(value)

    return run
