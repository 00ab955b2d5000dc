"""Engine-owned buffers: a pooling allocator per device, and copies between devices.

    h = storage.alloc(4096, nv.cpu())      # Handle: .ctx, .nbytes, .as_array(shape, dtype)
    x = h.as_array((32, 32), np.float32)   # NumPy view on cpu, numba device array on gpu
    storage.free(h)                        # back to the pool; the next alloc of its size reuses it

Rounding policy (MXNet's GPUPooledRoundedStorageManager): a request is rounded up to
a power of two, at least 64 bytes, up to LINEAR_CUTOFF (16 MiB); larger requests
are rounded up to a multiple of LINEAR_CUTOFF. Freed blocks wait in a free list per
rounded size, so a request reuses any freed block of its bucket; at most 50% (and,
above the cutoff, at most 16 MiB) is wasted per block. CPU blocks are 64-byte
aligned, and blocks of 64 KiB and more start at staggered offsets within a page (below).
Blocks are never returned to the system until release_all(ctx).

On a GPU with CuPy usable (kernel/gpu_lib.py), blocks come from CuPy's memory pool, so
cuBLAS, CuPy calls and this pool share one caching allocator (blocks up to 64 KiB carved
from 2 MiB ones: see SLAB_BYTES); otherwise from numba.cuda.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import config
from ..base import Context, NNVMError, as_dtype
from .elementwise import array_device

ALIGNMENT = 64
MIN_BLOCK = 64
LINEAR_CUTOFF = 16 << 20

# Large CPU blocks start at staggered offsets within a page. The system hands large
# arrays out page-aligned (plus a fixed header), so element i of every array would sit at
# the same address modulo 4 KiB; a loop storing out[i] while loading x[i + k] then hits
# 4K aliasing (the CPU takes the load as possibly depending on the store), which made
# compute-heavy float32 loops (vmath's asinh, erf) 1.1-1.5x slower at 10M elements.
PAGE = 4096
STAGGER = 128  # bytes between the possible starting offsets of large blocks
STAGGER_SLOTS = 31  # offsets STAGGER .. STAGGER_SLOTS * STAGGER, in turn
STAGGER_SPAN = STAGGER_SLOTS * STAGGER
STAGGER_MIN = 1 << 16  # smaller blocks: 64-byte alignment only
_stagger = itertools.count()


def round_size(nbytes: int) -> int:
    """The pool bucket for a request of `nbytes` (see the module docstring)."""
    if nbytes < 0:
        raise NNVMError(f"storage.alloc: nbytes must be >= 0, got {nbytes}")
    if nbytes <= LINEAR_CUTOFF:
        return max(MIN_BLOCK, 1 << (nbytes - 1).bit_length())
    return -(-nbytes // LINEAR_CUTOFF) * LINEAR_CUTOFF


@dataclass(frozen=True)
class StorageStats:
    """Counters of one device's pool. Byte counts are of rounded block sizes."""

    allocations: int  # blocks obtained from the system (pool misses)
    reuses: int  # alloc() calls served from the pool (pool hits)
    frees: int
    bytes_in_use: int  # blocks handed out and not yet freed
    bytes_pooled: int  # freed blocks kept for reuse
    peak_bytes: int  # the most bytes_in_use ever reached (since the last reset)


class Handle:
    """One block handed out by alloc(); valid until free(handle)."""

    __slots__ = ("_block", "_owner", "_pool", "ctx", "freed", "nbytes", "size")

    def __init__(
        self, ctx: Context, nbytes: int, size: int, block: Any, pool: _Pool | None
    ) -> None:
        self._pool = pool  # None: a range of another handle's block (sub_handle)
        self.ctx = ctx
        self.nbytes = nbytes  # what was asked for
        self.size = size  # the rounded block size
        self._block = block  # 1-d uint8 array of `size` bytes (NumPy or device)
        self._owner: Any = None  # what keeps a sub_handle's block alive
        self.freed = False

    @property
    def pooled(self) -> bool:
        """Whether free() returns the block to the pool (False for a sub_handle)."""
        return self._pool is not None

    def as_array(self, shape: int | tuple[int, ...], dtype: Any = np.float32) -> Any:
        """A view of the block's first bytes with this shape and dtype (no copy)."""
        if self.freed:
            raise NNVMError(f"storage: handle of {self.nbytes} bytes on {self.ctx} was freed")
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        dt = dtype if isinstance(dtype, np.dtype) else as_dtype(dtype)
        need = math.prod(shape) * dt.itemsize  # math.prod: np.prod costs ~3 µs per call
        if need > self.nbytes:
            raise NNVMError(
                f"storage: as_array{shape} of {dt} needs {need} bytes but the "
                f"handle holds {self.nbytes}"
            )
        block = self._block
        if type(block) is np.ndarray:  # a third of the cost of slice + view + reshape
            return np.ndarray(shape, dt, block)
        return device_view(block, shape, dt)

    def view(self, shape: tuple[int, ...], dtype: np.dtype) -> Any:
        """as_array for a tuple shape and np.dtype known to fit (no checks: the hot path)."""
        block = self._block
        if type(block) is np.ndarray:
            return np.ndarray(shape, dtype, block)
        return device_view(block, shape, dtype)

    def __repr__(self) -> str:
        state = "freed" if self.freed else "live"
        return f"<Handle {self.nbytes}B (block {self.size}B) on {self.ctx}, {state}>"


class _Pool:
    """Free lists by block size plus counters, for one device; guarded by one lock."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.lock = threading.Lock()
        self.free_blocks: dict[int, list[Any]] = {}
        self.allocations = self.reuses = self.frees = 0
        self.bytes_in_use = self.bytes_pooled = self.peak_bytes = 0

    def stats(self) -> StorageStats:
        with self.lock:
            return StorageStats(
                self.allocations,
                self.reuses,
                self.frees,
                self.bytes_in_use,
                self.bytes_pooled,
                self.peak_bytes,
            )


_pools: dict[Context, _Pool] = {}
_pools_lock = threading.Lock()


# Context hashes and compares in Python (~0.4 µs a lookup), and dispatch passes the same
# Context object again and again: remember the pool per object too (kept alive by the
# entry, so its id cannot be reused while cached).
_pools_by_id: dict[int, tuple[Context, _Pool]] = {}


def device_view(block: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    """A C-contiguous (shape, dtype) view of the first bytes of `block`: a device block
    (a 1-D uint8 device array), or any C-contiguous numba DeviceNDArray of some size.

    numba-cuda makes a slice, a dtype view and a reshape each through its shape checks
    (the slice also asks the driver for the current context): 11-21 us on the host for
    the three, per output of every GPU op, where issue 16 gives dispatch 20 us in all. A
    numba DeviceNDArray is therefore built directly on the block's own memory pointer
    (~1 us; the pointer keeps the block, and a CuPy pool block's owner, alive as a slice
    would). Other arrays (the simulator's) and empty views take the three steps.
    """
    cls = _device_array_type()
    if type(block) is cls and block.gpu_data is not None and math.prod(shape):
        strides = c_strides(shape, dtype.itemsize)
        return cls(shape, strides, dtype, block.stream, block.gpu_data)
    return block[: math.prod(shape) * dtype.itemsize].view(dtype).reshape(shape)


def c_strides(shape: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    """The strides in bytes of a C-contiguous array of `shape`."""
    strides = []
    step = itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= n
    return tuple(reversed(strides))


def device_reshape(a: Any, shape: tuple[int, ...]) -> Any:
    """`a` reshaped without a copy. A C-contiguous numba DeviceNDArray is rebuilt on its
    own memory (its reshape works out the new strides through numba's dummy arrays:
    ~3 us, and a ResNet-18 step reshapes ~800 times); anything else takes a.reshape."""
    cls = _device_array_type()
    if (
        type(a) is cls
        and a.gpu_data is not None
        and a.size
        and math.prod(shape) == a.size
        and a.strides == c_strides(a.shape, a.dtype.itemsize)
    ):
        return cls(shape, c_strides(shape, a.dtype.itemsize), a.dtype, a.stream, a.gpu_data)
    return a.reshape(shape)


def device_slice(a: Any, start: int, stop: int) -> Any:
    """a[start:stop] of a 1-D array. A C-contiguous numba DeviceNDArray is rebuilt on a
    view of its memory: numba's slice asks the driver for the current context and works
    the extent out through dummy arrays (~15 us; a ResNet-18 step slices its temp space
    ~140 times). Anything else, and an empty or out-of-range slice, takes a[start:stop]."""
    cls = _device_array_type()
    if (
        type(a) is cls
        and a.gpu_data is not None
        and len(a.shape) == 1
        and 0 <= start < stop <= a.shape[0]
        and a.strides[0] == a.dtype.itemsize
    ):
        size = a.dtype.itemsize
        memory = a.gpu_data.view(start * size, stop * size)
        return cls((stop - start,), (size,), a.dtype, a.stream, memory)
    return a[start:stop]


_device_array_types: list[Any] = []


def _device_array_type() -> Any:
    """numba-cuda's DeviceNDArray class (imported with the first device block)."""
    if not _device_array_types:
        try:
            from numba.cuda.cudadrv.devicearray import DeviceNDArray
        except ImportError:
            DeviceNDArray = None  # no numba-cuda: no such arrays
        _device_array_types.append(DeviceNDArray)
    return _device_array_types[0]


def _pool(ctx: Context) -> _Pool:
    hit = _pools_by_id.get(id(ctx))
    if hit is not None and hit[0] is ctx:
        return hit[1]
    if not isinstance(ctx, Context):
        raise NNVMError(f"storage: expected a Context, got {type(ctx).__name__}")
    pool = _pools.get(ctx)
    if pool is None:
        with _pools_lock:
            pool = _pools.setdefault(ctx, _Pool(ctx))
    if len(_pools_by_id) > 64:  # many short-lived Context objects: start over
        _pools_by_id.clear()
    _pools_by_id[id(ctx)] = (ctx, pool)
    return pool


def _new_block(ctx: Context, size: int) -> Any:
    if ctx.device_type == "gpu":
        from nnvmpy.kernel import gpu_lib

        if gpu_lib.available():
            return _carved_block(ctx, size) if size <= SLAB_MAX_BLOCK else cupy_block(ctx, size)
        from nnvmpy.kernel.cuda import get_cuda

        cuda = get_cuda("storage.alloc")
        with cuda.gpus[ctx.device_id]:
            return cuda.device_array(size, dtype=np.uint8)
    if ctx.device_type == "cpu_pinned":
        cuda = _pinning_cuda()
        if cuda is not None:  # page-locked (and page-aligned): host<->device copies can be
            return cuda.pinned_array(size, dtype=np.uint8)  # asynchronous (ndarray copies)
    if size < STAGGER_MIN:
        raw = np.empty(size + ALIGNMENT, dtype=np.uint8)
        offset = -raw.ctypes.data % ALIGNMENT
        return raw[offset : offset + size]
    raw = np.empty(size + PAGE + STAGGER_SPAN, dtype=np.uint8)
    offset = -raw.ctypes.data % PAGE + (next(_stagger) % STAGGER_SLOTS + 1) * STAGGER
    return raw[offset : offset + size]


def cupy_block(ctx: Context, size: int, stream: Any = None) -> Any:
    """A block from CuPy's memory pool (kernel/gpu_lib.py), as a numba device array.

    With a `stream` (a numba stream) it is allocated with that stream as CuPy's current
    one: CuPy hands the block out again, once its last view is dropped, only to
    allocations on that stream (kernel/scratch.py relies on it). None or 0: under CuPy's
    current stream (the default stream, unless a caller made another current).

    When the device is full, this pool's freed blocks of other sizes are dropped back to
    CuPy's pool and that pool's unused memory to the device, and the allocation is tried
    once more: one caching allocator under both pools, so memory our buckets hold for
    sizes no longer asked for can serve a new size (MXNet's pooled storage manager
    likewise releases its pool and retries on an out-of-memory error).
    """
    from nnvmpy.kernel import gpu_lib

    with gpu_lib.cupy_stream(stream) if stream else contextlib.nullcontext():
        try:
            return gpu_lib.device_block(size, ctx.device_id)
        except gpu_lib.OutOfMemory:
            release_all(ctx)
            gpu_lib.free_pooled_memory(ctx.device_id)
            return gpu_lib.device_block(size, ctx.device_id)


# Blocks of at most SLAB_MAX_BLOCK bytes are carved from SLAB_BYTES blocks of CuPy's pool,
# in turn, as PyTorch's caching allocator carves its 2 MiB segments. CuPy's pool makes each
# new block a cudaMalloc of its own, which on an H200 took ~50 us and stalled the engine
# workers' launches meanwhile; a thread pushing small ops ahead of the GPU needs a new
# block per op (`x = x + 1`: 55 of its 70 us per push went to the allocation). A piece
# keeps its slab alive; freed pieces wait in this pool's free lists like any block.
SLAB_BYTES = 2 << 20
SLAB_MAX_BLOCK = 64 << 10
_slabs: dict[tuple[int, int], tuple[Any, int]] = {}  # (device, size) -> (slab, next offset)
_slabs_lock = threading.Lock()


def _carved_block(ctx: Context, size: int) -> Any:
    """The next `size` bytes of the slab for (ctx's device, size); a new slab when it is
    used up."""
    key = (ctx.device_id, size)
    with _slabs_lock:
        entry = _slabs.get(key)
        if entry is not None and entry[1] + size <= SLAB_BYTES:
            _slabs[key] = (entry[0], entry[1] + size)
            return _piece(entry[0], entry[1], size)
    slab = cupy_block(ctx, SLAB_BYTES)  # outside the lock: it may take a while
    with _slabs_lock:
        _slabs[key] = (slab, size)
    return _piece(slab, 0, size)


def _piece(slab: Any, offset: int, size: int) -> Any:
    """Bytes [offset, offset + size) of a device block, as a device block of its own
    (built on a view of its pointer: numba's slicing asks the driver for the context)."""
    cls = _device_array_type()
    if type(slab) is cls and slab.gpu_data is not None:
        view = slab.gpu_data.view(offset, offset + size)
        return cls((size,), (1,), slab.dtype, slab.stream, view)
    return slab[offset : offset + size]


def _drop_slabs(device_id: int | None) -> None:
    with _slabs_lock:
        for key in [k for k in _slabs if device_id is None or k[0] == device_id]:
            del _slabs[key]


_NO_CUDA: list[bool] = []  # [True] once CUDA was found unusable for pinned memory


def _pinning_cuda() -> Any:
    """numba.cuda for page-locked host memory, or None where CUDA cannot start: cpu_pinned
    is then ordinary memory, as MXNet falls back to the CPU storage without a GPU."""
    if _NO_CUDA:
        return None
    from nnvmpy.kernel.cuda import get_cuda

    try:
        return get_cuda("storage.alloc")
    except NNVMError:
        _NO_CUDA.append(True)
        return None


def alloc(nbytes: int, ctx: Context) -> Handle:
    """A block of at least `nbytes` on `ctx`, reused from the pool when one is free."""
    nbytes = int(nbytes)
    size = _rounded.get(nbytes) or _round_cached(nbytes)
    pool = _pool(ctx)
    # The hot path of every imperative op: counters updated inline, and the lock taken
    # by acquire/release (half the cost of `with`). Nothing in between can raise, and
    # with no Python-level call or loop there, no signal handler (KeyboardInterrupt)
    # can run between acquire and release either.
    pool.lock.acquire()
    blocks = pool.free_blocks.get(size)
    if blocks:
        block = blocks.pop()
        pool.reuses += 1
        pool.bytes_pooled -= size
    else:
        block = None
    in_use = pool.bytes_in_use = pool.bytes_in_use + size
    if in_use > pool.peak_bytes:
        pool.peak_bytes = in_use
    pool.lock.release()
    if block is None:
        try:
            block = _new_block(ctx, size)
        except BaseException:
            with pool.lock:
                pool.bytes_in_use -= size
            raise
        with pool.lock:
            pool.allocations += 1
    if poisoning:
        poison(block)
    return Handle(ctx, nbytes, size, block, pool)


poisoning = config.POISON_MEMORY.get() == "1"  # NNVMPY_POISON_MEMORY; tests may flip it


def poison(block: Any) -> None:
    """Fill a block with 0xFF bytes: NaN in every float dtype, -1 in signed ints."""
    if hasattr(block, "copy_to_host"):  # a device array
        from nnvmpy.kernel.cuda import get_cuda

        get_cuda("storage.poison").to_device(np.full(block.size, 0xFF, np.uint8), to=block)
    else:
        block.fill(0xFF)


_rounded: dict[int, int] = {}  # round_size of recent request sizes (imperative code repeats them)


def _round_cached(nbytes: int) -> int:
    size = round_size(nbytes)
    if len(_rounded) > 1024:
        _rounded.clear()
    _rounded[nbytes] = size
    return size


def sub_handle(parent: Handle, offset: int, nbytes: int, owner: Any) -> Handle:
    """A handle on bytes [offset, offset + nbytes) of `parent`'s block, kept alive by
    `owner` (the object whose death frees `parent`); freeing it returns nothing to the pool.
    The executor's memory arena hands its planned blocks out this way."""
    if offset < 0 or offset + nbytes > parent.nbytes:
        raise NNVMError(
            f"storage.sub_handle: bytes [{offset}, {offset + nbytes}) are outside the "
            f"parent's {parent.nbytes}"
        )
    block = parent._block[offset : offset + nbytes]
    handle = Handle(parent.ctx, nbytes, nbytes, block, None)
    handle._owner = owner
    return handle


def free(handle: Handle) -> None:
    """Return the handle's block to its pool; using the handle afterwards is an error."""
    pool = handle._pool
    if pool is None:  # a sub_handle: its bytes belong to the parent's block
        if handle.freed:
            raise NNVMError(f"storage.free: {handle!r} was already freed")
        handle.freed = True
        handle._block = handle._owner = None
        return
    size = handle.size
    pool.lock.acquire()  # as in alloc
    if handle.freed:
        pool.lock.release()
        raise NNVMError(f"storage.free: {handle!r} was already freed")
    handle.freed = True
    blocks = pool.free_blocks.get(size)
    if blocks is None:
        blocks = pool.free_blocks[size] = []
    blocks.append(handle._block)
    handle._block = None
    pool.frees += 1
    pool.bytes_in_use -= size
    pool.bytes_pooled += size
    pool.lock.release()


def stats(ctx: Context) -> StorageStats:
    """The pool counters of one device."""
    return _pool(ctx).stats()


def release_all(ctx: Context | None = None) -> None:
    """Drop the pooled (freed) blocks of `ctx`, or of every device; live handles stay."""
    pools = [_pool(ctx)] if ctx is not None else list(_pools.values())
    for pool in pools:
        with pool.lock:
            pool.free_blocks.clear()
            pool.bytes_pooled = 0
    if ctx is None or ctx.device_type == "gpu":  # a slab goes once its pieces are dropped
        _drop_slabs(None if ctx is None else ctx.device_id)


def reset_stats(ctx: Context) -> None:
    """Zero the counters (peak becomes the bytes in use now); the pool is kept."""
    pool = _pool(ctx)
    with pool.lock:
        pool.allocations = pool.reuses = pool.frees = 0
        pool.peak_bytes = pool.bytes_in_use


def copy(src: Any, dst: Any, stream: Any = None) -> None:
    """dst[...] = src between any devices (cpu<->gpu, gpu<->gpu, cpu<->cpu).

    Shapes and dtypes must match; arrays on a GPU must be C-contiguous. With a CUDA
    `stream` the copy is queued on it; otherwise it completes before returning.
    """
    kinds = array_device(src), array_device(dst)
    for what, x, kind in (("src", src, kinds[0]), ("dst", dst, kinds[1])):
        if kind is None:
            raise NNVMError(
                f"storage.copy: {what} must be a NumPy or CUDA array, got {type(x).__name__}"
            )
    if tuple(src.shape) != tuple(dst.shape) or src.dtype != dst.dtype:
        raise NNVMError(
            f"storage.copy: src is {tuple(src.shape)} {src.dtype} but dst is "
            f"{tuple(dst.shape)} {dst.dtype}; they must match"
        )
    if kinds == ("cpu", "cpu"):
        np.copyto(dst, src)
        return
    from nnvmpy.kernel.cuda import as_device_array, get_cuda

    get_cuda("storage.copy")
    args = {} if stream is None else {"stream": stream}
    if kinds[1] == "gpu":
        d = _contiguous(as_device_array("storage.copy", "dst", dst))
        if kinds[0] == "cpu":
            src = np.ascontiguousarray(src)
            if 0 in src.strides and src.size > 1:
                # NumPy calls size-1 axes with stride 0 contiguous; numba treats them as
                # broadcast and refuses the copy, so give it real strides
                src = src.copy()
        else:
            src = _contiguous(as_device_array("storage.copy", "src", src))
        d.copy_to_device(src, **args)
    else:
        s = _contiguous(as_device_array("storage.copy", "src", src))
        if dst.flags.c_contiguous:
            s.copy_to_host(dst, **args)
        else:
            dst[...] = s.copy_to_host()


def _contiguous(a: Any) -> Any:
    if not a.is_c_contiguous():
        raise NNVMError(
            "storage.copy: arrays on a GPU must be C-contiguous; got "
            f"strides {tuple(a.strides)} for shape {tuple(a.shape)}"
        )
    return a
