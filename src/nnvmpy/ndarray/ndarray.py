"""NDArray: an engine-owned buffer with a shape, a dtype, a device and an engine variable.

Every operation on it is pushed to the dependency engine and returns at once; reading
the values (`asnumpy`, `wait_to_read`) waits for the pending writers, and an error
raised inside a kernel surfaces there.

An NDArray may be a view of another's storage (same Chunk, hence the same engine
variable): `reshape`, `x[i]`, `x[a:b]` and every basic index whose elements are
contiguous, as in MXNet. Its `_data` is then a window of the chunk's buffer, always
C-contiguous, so kernels see no difference. Operators, fluent methods, indexing and
serialisation live in their own modules (arith.py, ../fluent.py, indexing.py, io.py,
interop.py) and are attached to the class there.
"""

from __future__ import annotations

import math
import numbers
import operator
import sys
import warnings
from collections import deque
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from .. import engine, kernel
from ..autograd.state import STATE as _AG
from ..base import Context, NNVMError, ParamError, as_dtype, current_context
from ..engine import FnProperty
from ..imperative import invoke
from ..kernel import storage
from ..registry import Op
from . import views
from .errors import NDArrayTypeError, NDArrayValueError
from .views import same_memory

DEFAULT_DTYPE = np.dtype(np.float32)
py_slice = slice  # MXNet's name in this module (`from mxnet.ndarray.ndarray import py_slice`)


@kernel.elementwise
def _set_value(value):
    return value


class Chunk:
    """The storage and engine variable shared by an NDArray and its views."""

    __slots__ = ("__weakref__", "ctx", "data", "handle", "nbytes", "var")

    def __init__(self, nbytes: int, ctx: Context) -> None:
        if _released:
            flush_released()
        self.ctx = ctx
        self.nbytes = nbytes
        self.data: Any = None  # new_array's view of the whole block (a spare keeps it)
        spare = _take_spare(nbytes, ctx)
        if spare is not None:  # a dead array's storage and idle variable (dispatch speed)
            self.handle, self.var, _ = spare
            return
        self._allocate()

    def _allocate(self) -> None:
        """New storage from the pool and a new engine variable."""
        try:
            self.handle = storage.alloc(self.nbytes, self.ctx)
        except (MemoryError, ValueError) as e:  # NumPy: too big for memory, or for an index
            raise NNVMError(f"cannot allocate {self.nbytes} bytes on {self.ctx}: {e}") from None
        self.var = (engine._engine or engine.get_engine()).new_var()

    # __del__ rather than weakref.finalize: a finalizer object per array cost ~2 µs of
    # every op's dispatch. A Chunk refers to no NDArray, so it is never in a cycle.
    def __del__(self) -> None:
        try:
            _released.append((self.handle, self.var, self.ctx, self.data))
        except AttributeError:  # __init__ failed before the chunk was whole: nothing to free
            pass

    @classmethod
    def range_of(cls, parent: Chunk, offset: int, nbytes: int) -> Chunk:
        """Bytes [offset, offset + nbytes) of `parent` as a chunk with its own engine
        variable (an executor's memory arena: one planned block each). Users of ranges
        that overlap must be ordered by the caller; the range keeps `parent` alive."""
        self = cls.__new__(cls)
        self.ctx = parent.ctx
        self.nbytes = nbytes
        self.data = None
        self.handle = storage.sub_handle(parent.handle, offset, nbytes, parent)
        self.var = engine.get_engine().new_var()
        return self

    def view(self, shape: tuple[int, ...], dtype: np.dtype) -> Any:
        return self.handle.as_array(shape, dtype)


# __del__ runs wherever the last reference goes, possibly inside an engine worker that
# holds the engine's lock, so it only queues; the queue is flushed from ordinary code
# (the next allocation or wait).
_released: deque[tuple[Any, Any, Context, Any]] = deque()


def flush_released() -> None:
    """File or free queued storage: a small block whose variable is idle becomes a spare,
    one still in use by a pending operation is parked, anything else is freed once every
    pending use of its variable is done (PushDelete).

    A variable nothing is pending on is freed at once, in this thread (the engines'
    delete_variable fast path), so a chain of temporaries reuses one pooled block.
    """
    eng = engine.get_engine()
    while _released:
        try:
            item = _released.popleft()
        except IndexError:
            return
        handle = item[0]
        if handle.nbytes <= SPARE_MAX_BYTES and handle.pooled:
            key = (handle.nbytes, item[2].device_type, item[2].device_id)
            spares = _spares.get(key)
            if spares is None:
                spares = _spares[key] = []
            if len(spares) < SPARES_PER_SIZE:
                if eng.try_reuse_idle(item[1]):
                    spares.append((handle, item[1], item[3]))
                else:
                    _park(item)
            elif eng.try_delete_idle(item[1]):  # spares full (a recorded graph freed)
                storage.free(handle)
            else:
                _park(item)
            continue
        _delete(item)


def _delete(item: tuple[Any, Any, Context, Any]) -> None:
    handle, var, ctx, _ = item
    eng = engine.get_engine()
    if eng.try_delete_idle(var):
        storage.free(handle)
    else:
        eng.delete_variable(_freer(handle), ctx, var)


def _freer(handle: Any) -> Any:
    return lambda _rc: storage.free(handle)


# Small dead arrays whose variable is idle keep their storage and variable for the next
# array of the same size and device: a chain of temporaries then costs no storage.alloc,
# storage.free or new variable per op. waitall() returns them to the pool.
SPARE_MAX_BYTES = 1 << 16
SPARES_PER_SIZE = 4
_spares: dict[tuple[int, str, int], list[tuple[Any, Any, Any]]] = {}

# Small dead arrays a pending operation still reads wait here, oldest first, rather than
# being deleted by a second engine push per op. In `x = x + 1` on a GPU the old x is
# freed while the op reading it is queued; some ops later that op is done and a new
# array takes the old x's block over. The pushing thread may run hundreds of ops ahead
# of the workers (it keeps the GIL for up to 5 ms). Past PARKED_MAX arrays, or about
# PARKED_MAX_BYTES, the oldest is deleted as before.
PARKED_MAX = 4096
PARKED_MAX_BYTES = 8 << 20
_parked: deque[tuple[Any, Any, Context, Any]] = deque()


def _park(item: tuple[Any, Any, Context, Any]) -> None:
    _parked.append(item)
    most = min(PARKED_MAX, PARKED_MAX_BYTES // max(item[0].nbytes, 1))
    while len(_parked) > most:
        try:
            _delete(_parked.popleft())
        except IndexError:  # another thread emptied it
            return


def _take_spare(nbytes: int, ctx: Context) -> tuple[Any, Any, Any] | None:
    """(handle, var, view) of a dead array of `nbytes` on `ctx` whose variable is idle:
    a spare, or the oldest parked arrays once done (the others found done become spares)."""
    spares = _spares.get((nbytes, ctx.device_type, ctx.device_id))
    if spares:
        try:
            return spares.pop()
        except IndexError:  # another thread took the last one
            pass
    if not _parked:
        return None
    eng = engine._engine or engine.get_engine()
    while True:
        try:
            item = _parked.popleft()  # owned by this thread from here on
        except IndexError:
            return None
        handle, var, rctx, data = item
        if not eng.try_reuse_idle(var):
            _parked.appendleft(item)  # still in use: so, most likely, are the younger
            return None
        if handle.nbytes == nbytes and (rctx is ctx or rctx == ctx):
            return handle, var, data
        _released.append(item)  # done, another size: filed as a spare or freed
        flush_released()


def _drop_spares() -> None:
    """Return every spare and parked block to the pool (parked ones once their pending
    operations are done)."""
    eng = engine.get_engine()
    for spares in list(_spares.values()):
        while spares:
            try:
                handle, var, _ = spares.pop()
            except IndexError:
                break
            if eng.try_delete_idle(var):
                storage.free(handle)
            else:  # a device fence not passed yet (engine/fences.py): freed after it
                eng.delete_variable(_freer(handle), handle.ctx, var)
    while _parked:
        try:
            _delete(_parked.popleft())
        except IndexError:
            break


def new_array(shape: tuple[int, ...], dtype: np.dtype, nbytes: int, ctx: Context) -> NDArray:
    """A fresh array of `nbytes` = its size in bytes, for callers that checked shape and
    dtype already (imperative invoke: the hot path of every op)."""
    spare = None
    if _released:
        # A chain y = f(y) frees one array per op, of the size it allocates: take it over
        # directly when nothing is pending on it, park it when an op still reads it (else
        # flush, which files it as a spare or frees it).
        if len(_released) == 1:
            try:
                item = _released.pop()
            except IndexError:  # another thread flushed it
                item = None
            if item is not None:
                handle, var, rctx, data = item
                if handle.nbytes == nbytes and (rctx is ctx or rctx == ctx):
                    if (engine._engine or engine.get_engine()).try_reuse_idle(var):
                        spare = item
                    elif nbytes <= SPARE_MAX_BYTES and handle.pooled:
                        _park(item)
                    else:
                        _delete(item)
                else:
                    _released.append(item)
                    flush_released()
        else:
            flush_released()
    if spare is None:
        taken = _take_spare(nbytes, ctx)
        if taken is not None:
            spare = (taken[0], taken[1], ctx, taken[2])
    data = None
    if spare is not None:  # Chunk.__init__ inlined, and the spare's view reused if it fits
        handle, var, _, data = spare
        chunk = _new_chunk(Chunk)
        chunk.ctx, chunk.nbytes, chunk.handle, chunk.var = ctx, nbytes, handle, var
        if data is not None and (data.shape != shape or data.dtype != dtype):
            data = None
    else:  # Chunk(nbytes, ctx) without its second look for a spare
        chunk = _new_chunk(Chunk)
        chunk.ctx, chunk.nbytes, chunk.data = ctx, nbytes, None
        chunk._allocate()
    if data is None:
        try:
            data = chunk.handle.view(shape, dtype)
        except ValueError as e:  # an empty shape NumPy refuses: (0, 2**63) takes 0 bytes
            raise NNVMError(f"cannot make an array of shape {shape} on {ctx}: {e}") from None
    chunk.data = data
    arr = NDArray.__new__(NDArray)
    arr._chunk = chunk
    arr._ctx = ctx
    arr.shape = shape
    arr.dtype = dtype
    arr._data = data
    arr._entry = None
    return arr


_new_chunk = object.__new__


_INPLACE_RECORDING = (
    "Inplace operations (+=, -=, x[:]=, etc) are not supported when recording with autograd."
)


def check_not_recording(what: str) -> None:
    """MXNet refuses in-place writes (an op whose output is one of its inputs) under record()."""
    if _AG.recording:
        raise NNVMError(f"{what}: {_INPLACE_RECORDING}")


class NDArray:
    """An n-dimensional array on a device, computed on asynchronously by the engine."""

    __slots__ = ("__weakref__", "_chunk", "_ctx", "_data", "_entry", "dtype", "shape")
    __array_priority__ = 1000.0  # numpy scalars defer to our __radd__ etc.

    def __init__(
        self,
        chunk: Chunk | None = None,
        shape: tuple[int, ...] = (),
        dtype: np.dtype = np.dtype(np.float32),  # noqa: B008 - immutable
        *,
        handle: Any = None,
    ) -> None:
        if handle is not None:  # MXNet's NDArray(handle=...) after a C-API call (capi.py)
            from nnvmpy.capi import take

            other = take(handle, NDArray, "NDArray(handle)")
            chunk, shape, dtype = other._chunk, other.shape, other.dtype
        if chunk is None:
            raise NNVMError("NDArray: give its storage chunk, or handle= (use nd.array/empty)")
        self._chunk = chunk
        self._ctx = chunk.ctx
        self.shape = shape
        self.dtype = dtype
        self._data = chunk.view(shape, dtype)
        self._entry: Any = None  # autograd: this array's NodeEntry on the tape

    # -- properties ----------------------------------------------------------------------------

    @property
    def context(self) -> Context:
        return self._ctx

    ctx = context

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def stype(self) -> str:
        """Storage type: always 'default' (dense); sparse storage is not supported."""
        return "default"

    @property
    def writable(self) -> bool:
        return True

    @property
    def T(self) -> NDArray:
        """The transpose (a copy), or the array itself when it has fewer than 2 axes."""
        return self if self.ndim < 2 else _invoke1("transpose", [self])

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d NDArray")
        return self.shape[0]

    def __iter__(self) -> Iterator[NDArray]:
        """The sub-arrays along axis 0 (views), as x[0], x[1], ..."""
        if not self.shape:
            raise TypeError("iteration over a 0-d NDArray")
        return (self[i] for i in range(self.shape[0]))

    def __repr__(self) -> str:
        body = str(self.asnumpy())
        dims = "x".join(map(str, self.shape))
        return f"\n{body}\n<NDArray {dims} @{self._ctx}>"

    def __bool__(self) -> bool:
        """False for an empty array, the element's truth for one element, else ValueError."""
        size = self.size
        if size == 0:
            return False
        if size == 1:
            return bool(self.asscalar())
        raise NDArrayValueError(
            f"The truth value of an NDArray with multiple elements is ambiguous "
            f"(shape {self.shape}); use .asnumpy().any() or .all()"
        )

    def __hash__(self) -> int:
        return id(self)

    # -- synchronisation and copies ---------------------------------------------------------

    def wait_to_read(self) -> None:
        """Block until pending writes finish; re-raises an error from one of them."""
        engine.get_engine().wait_for_var(self._chunk.var)

    def wait_to_write(self) -> None:
        engine.get_engine().wait_for_var(self._chunk.var)

    def asnumpy(self) -> np.ndarray:
        """A NumPy copy of the values (waits for pending writes)."""
        self.wait_to_read()
        if self._ctx.device_type == "gpu":
            return self._data.copy_to_host()
        return np.array(self._data, copy=True)

    def asscalar(self) -> Any:
        """The single element as a NumPy scalar of the array's dtype."""
        if self.size != 1:
            raise NDArrayValueError(
                f"asscalar: the current array is not a scalar: it has shape {self.shape}; "
                "expected exactly one element"
            )
        return self.asnumpy().reshape(1)[0]

    def item(self) -> Any:
        return self.asscalar().item()

    def __float__(self) -> float:
        return float(self.asscalar())

    def __int__(self) -> int:
        return int(self.asscalar())

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        a = self.asnumpy()
        return a if dtype is None else a.astype(dtype)

    def copyto(self, other: NDArray | Context) -> Any:
        """Copy into another array (same shape; cast to its dtype) or onto a device.

        Returns the target array; copying an array onto itself warns and returns False,
        as MXNet does.
        """
        if isinstance(other, Context):
            other = empty(self.shape, other, self.dtype)
        elif not isinstance(other, NDArray):
            raise NDArrayTypeError(
                f"copyto: the target must be an NDArray or a Context, got {type(other).__name__}"
            )
        if same_memory(self, other):
            warnings.warn("copyto: copying an array to itself", RuntimeWarning, stacklevel=2)
            return False
        if other.shape != self.shape:
            raise NDArrayValueError(
                f"copyto: the source has shape {self.shape} but the target has {other.shape}"
            )
        src = self
        if src._chunk is other._chunk:  # overlapping windows of one buffer: copy out first
            src = src.copy()
        if other._ctx == src._ctx:
            if other.dtype == src.dtype:
                _invoke1("_copy", [src], out=other)
            else:
                _invoke1("Cast", [src], out=other, dtype=str(other.dtype))
            return other
        if other.dtype != src.dtype:
            src = src.astype(other.dtype)
        push_copy(src, other)
        return other

    def copy(self) -> NDArray:
        """A new array with the same values, on the same device."""
        return self.copyto(self._ctx)

    def tostype(self, stype: str) -> NDArray:
        """A copy in storage type `stype` (MXNet's cast_storage). nnvmpy stores arrays
        densely only: 'default' gives a copy; 'csr' and 'row_sparse' are named errors."""
        if stype != "default":  # a ParamError, as the cast_storage op's
            raise ParamError(
                f"tostype: storage type {stype!r} is not supported; nnvmpy arrays are dense "
                "(expected 'default')"
            )
        return self.copy()

    def as_in_context(self, context: Context) -> NDArray:
        """This array if it is on `context` already, else a copy there."""
        return self if context == self._ctx else self.copyto(context)

    def as_nd_ndarray(self) -> NDArray:
        """This array (it is an mx.nd.NDArray already)."""
        return self

    def astype(self, dtype: Any, copy: bool = True) -> NDArray:
        """A copy cast to `dtype`; with copy=False the array itself when the dtype matches."""
        dtype = as_dtype(dtype)
        if not copy and dtype == self.dtype:
            return self
        return _invoke1("Cast", [self], dtype=str(dtype))

    # -- shape views ----------------------------------------------------------------------------

    def reshape(self, *shape: Any, **kwargs: Any) -> NDArray:
        """A view with a new shape sharing this array's storage (MXNet's NDArray.reshape).

        `shape` may use MXNet's special values 0 (copy the dim), -1 (infer), -2 (copy the
        rest), -3 (merge two dims) and -4 (split a dim); reverse=True matches them from
        the right. Under autograd.record() the Reshape op is recorded instead.
        """
        return views.reshape(self, shape, kwargs)

    def flatten(self, inplace: bool = False) -> NDArray:
        """(d1, d2, ..., dk) -> (d1, d2*...*dk); a view with inplace=True, else a copy."""
        return views.flatten(self, inplace)

    def expand_dims(self, axis: int, inplace: bool = False) -> NDArray:
        """A new axis of size 1 at `axis`; a view with inplace=True, else a copy."""
        return views.expand_dims(self, axis, inplace)

    def squeeze(self, axis: Any = None, inplace: bool = False) -> NDArray:
        """Drops axes of size 1 (all, or those in `axis`); a view with inplace=True."""
        return views.squeeze(self, axis, inplace)

    def broadcast_to(self, shape: Any) -> NDArray:
        """A copy broadcast to `shape` (size-1 axes repeat; missing leading axes are added)."""
        return views.broadcast_to(self, shape)

    def broadcast_like(self, other: NDArray) -> NDArray:
        """A copy broadcast to other's shape."""
        return views.broadcast_to(self, other.shape)

    # -- indexing (ndarray/indexing.py) ---------------------------------------------------------

    def __getitem__(self, key: Any) -> NDArray:
        """x[key] as in MXNet: a view when the selected elements are contiguous, else a copy."""
        from nnvmpy.ndarray.indexing import getitem

        return getitem(self, key)

    def __setitem__(self, key: Any, value: Any) -> None:
        """x[key] = value: a scalar, an NDArray, a NumPy array or a list, broadcast."""
        from nnvmpy.ndarray.indexing import setitem

        setitem(self, key, value)

    def slice_assign(self, rhs: NDArray, begin: Any, end: Any, step: Any) -> NDArray:
        """Write rhs into self[begin:end:step] (one entry per axis, None for the default)
        in place and return self (MXNet's method over _slice_assign)."""
        from nnvmpy.ndarray import _internal

        return _internal._slice_assign(self, rhs, begin=begin, end=end, step=step, out=self)

    def slice_assign_scalar(self, value: float, begin: Any, end: Any, step: Any) -> NDArray:
        """Set self[begin:end:step] to value (cast to self's dtype) in place; returns self."""
        from nnvmpy.ndarray import _internal

        return _internal._slice_assign_scalar(
            self, scalar=value, begin=begin, end=end, step=step, out=self
        )

    @staticmethod
    def _basic_indexing_slice_is_contiguous(slc_key: Sequence[slice], shape: Sequence[int]) -> bool:
        """Whether x[slc_key] (one slice per axis) selects a C-contiguous block of x."""
        from nnvmpy.ndarray.indexing import slices_are_contiguous

        return slices_are_contiguous(slc_key, shape)

    # -- serialisation and interchange (io.py, interop.py) --------------------------------------

    def __getstate__(self) -> dict[str, Any]:
        """{'handle': MXNet's raw bytes of one array} (what MXNDArraySaveRawBytes writes)."""
        from nnvmpy.ndarray.io import to_raw_bytes

        return {"handle": bytearray(to_raw_bytes(self))}

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Become the array encoded in state['handle'] (MXNet's raw bytes)."""
        from nnvmpy.ndarray.io import from_raw_bytes, state_bytes

        where = "NDArray.__setstate__"
        loaded = from_raw_bytes(state_bytes(state, where), where)
        for name in _COPIED_SLOTS:
            setattr(self, name, getattr(loaded, name))
        self._entry = None

    def __reduce__(self) -> Any:
        from nnvmpy.ndarray.io import from_state

        return from_state, (self.__getstate__(),)

    def to_dlpack_for_read(self) -> Any:
        """A DLPack capsule of the values once pending writes are done (CPU only)."""
        from nnvmpy.ndarray.interop import to_dlpack_for_read

        return to_dlpack_for_read(self)

    def to_dlpack_for_write(self) -> Any:
        """A DLPack capsule others may write through, once pending reads and writes are done."""
        from nnvmpy.ndarray.interop import to_dlpack_for_write

        return to_dlpack_for_write(self)

    def _fill(self, value: Any) -> None:
        """Set every element to a scalar (asynchronous, through the _full op)."""
        from nnvmpy.ndarray.fill import full_into

        full_into(self, value)

    # -- autograd (nnvmpy.autograd; the tape entry lives in _entry) -----------------------------

    def attach_grad(self, grad_req: str = "write", stype: str | None = None) -> None:
        """Give this array a zero gradient buffer (`.grad`) that backward fills."""
        from nnvmpy.autograd import attach_grad

        attach_grad(self, grad_req, stype)

    @property
    def grad(self) -> NDArray | None:
        """The gradient buffer of an array marked with attach_grad, else None."""
        from nnvmpy.autograd.tape import entry_of

        e = entry_of(self)
        return None if e is None else e.node.info["autograd"].grad

    def detach(self) -> NDArray:
        """The same storage as a new array outside the recorded graph."""
        new = NDArray.__new__(NDArray)  # autograd keeps these per saved value: no loop
        new._chunk, new._ctx, new._data = self._chunk, self._ctx, self._data
        new.shape, new.dtype, new._entry = self.shape, self.dtype, None
        for name in _EXTRA_SLOTS:
            setattr(new, name, getattr(self, name))
        return new

    def backward(
        self, out_grad: NDArray | None = None, retain_graph: bool = False, train_mode: bool = True
    ) -> None:
        """Compute the gradients of this array with respect to the marked variables."""
        from nnvmpy.autograd import backward

        backward([self], None if out_grad is None else [out_grad], retain_graph, train_mode)

    @property
    def _fresh_grad(self) -> bool:
        from nnvmpy.autograd.tape import entry_of

        e = entry_of(self)
        return bool(e is not None and e.node.info["autograd"].fresh_grad)

    @_fresh_grad.setter
    def _fresh_grad(self, value: bool) -> None:
        from nnvmpy.autograd.tape import entry_of

        e = entry_of(self)
        if e is not None and e.node.is_variable():
            e.node.info["autograd"].fresh_grad = bool(value)

    # -- end of autograd ------------------------------------------------------------------------


_COPIED_SLOTS = tuple(
    s for s in NDArray.__slots__ if s not in ("__weakref__", "_entry")
)  # what detach() shares
_EXTRA_SLOTS = tuple(
    n for n in _COPIED_SLOTS if n not in ("_chunk", "_ctx", "_data", "shape", "dtype")
)  # slots detach() copies beyond the five it names


def _invoke1(name: str, inputs: list[NDArray], out: Any = None, **kwargs: Any) -> NDArray:
    return invoke(Op.get(name), inputs, kwargs, out=out)[0]


def push_copy(src: NDArray, dst: NDArray) -> None:
    """Asynchronous copy between arrays of one shape, on any devices.

    Routed as MXNet 1.x's CopyFromTo routes it, so that transfers run on a GPU's copy
    workers (their own threads and CUDA streams, engine/per_device.py) and overlap the
    kernels on its compute workers: host->GPU is COPY_TO_GPU on the destination GPU,
    GPU->host is COPY_FROM_GPU on the source GPU, and a copy between two GPUs is
    COPY_FROM_GPU on the source GPU. Host copies and copies within one GPU stay NORMAL
    functions of their device. Every GPU copy is queued on the running worker's stream:
    with page-locked (cpu_pinned) host memory it is asynchronous and the engine completes
    it once the stream ran it (engine/streams.py events); pageable host memory makes the
    driver finish the transfer before returning, on that same stream.
    """
    if src.shape != dst.shape:
        raise NNVMError(f"copy: shape {src.shape} does not match {dst.shape}")
    s, d = src._data, dst._data
    cast = src.dtype != dst.dtype
    skind, dkind = src._ctx.device_type, dst._ctx.device_type
    on_gpu = "gpu" in (skind, dkind)

    def copy(rc: Any) -> None:
        if cast and not on_gpu:
            np.copyto(d, s, casting="unsafe")
        else:
            storage.copy(s, d, stream=rc.stream)  # None: the default stream, synchronous

    if dkind == "gpu" and skind != "gpu":
        ctx, prop = dst._ctx, FnProperty.COPY_TO_GPU
    elif skind == "gpu" and (dkind != "gpu" or dst._ctx.device_id != src._ctx.device_id):
        ctx, prop = src._ctx, FnProperty.COPY_FROM_GPU
    else:  # host <-> host, or within one GPU
        ctx, prop = (src._ctx if skind == "gpu" else dst._ctx), FnProperty.NORMAL
    engine.get_engine().push_sync(
        copy, ctx, [src._chunk.var], [dst._chunk.var], name="copyto", prop=prop
    )


# -- creation -----------------------------------------------------------------------------


def as_shape(shape: Any, what: str = "shape") -> tuple[int, ...]:
    """An int or a sequence of non-negative ints as a shape tuple; NNVMError otherwise.

    Floats (even 2.0), bools and strings are refused, as MXNet's C API refuses them."""
    if type(shape) is tuple:  # the common case, checked without a list: plain ints >= 0
        for d in shape:
            if type(d) is not int or d < 0:
                break
        else:
            return shape
    if isinstance(shape, int | np.integer) and not isinstance(shape, bool | np.bool_):
        shape = (shape,)
    expected = "an int or a tuple of non-negative ints"
    if isinstance(shape, str | bytes | NDArray) or not hasattr(shape, "__iter__"):
        raise NNVMError(f"{what} must be {expected}, got {shape!r:.80}")
    out = []
    for i, d in enumerate(shape):
        if isinstance(d, bool | np.bool_) or not hasattr(d, "__index__"):
            raise NNVMError(f"{what} must be {expected}; dim {i} is {d!r:.40} in {shape!r:.80}")
        out.append(operator.index(d))
    if any(d < 0 for d in out):
        raise NNVMError(f"{what} cannot have negative dimensions, got {tuple(out)}")
    return tuple(out)


MAX_NDIM = 32  # NumPy's (and MXNet's) limit on the number of axes


def _nbytes(shape: tuple[int, ...], dt: np.dtype, what: str) -> int:
    """The size of a new array; NNVMError before any allocation when it cannot exist."""
    if len(shape) > MAX_NDIM:
        raise NNVMError(f"{what}: {len(shape)} dimensions; at most {MAX_NDIM} are supported")
    nbytes = math.prod(shape) * dt.itemsize
    if nbytes > sys.maxsize:
        raise NNVMError(f"{what}: shape {shape} of {dt} needs {nbytes} bytes, more than any memory")
    return nbytes


def new_array_checks(shape: tuple[int, ...], ctx: Any, dtype: Any) -> tuple[np.dtype, int]:
    """The dtype (float32 by default) and byte size of a new array of `shape` on `ctx`
    (a Context or None), or NNVMError worded as nd.empty's (nd.zeros and the like share
    them)."""
    dt = DEFAULT_DTYPE if dtype is None else as_dtype(dtype, "empty")
    if ctx is not None and not isinstance(ctx, Context):
        raise NNVMError(f"empty: ctx must be a Context such as mx.cpu(), got {ctx!r:.60}")
    return dt, _nbytes(shape, dt, "empty")


def empty(shape: Any, ctx: Context | None = None, dtype: Any = None) -> NDArray:
    """An uninitialised array (its storage comes from the pool)."""
    shape = as_shape(shape, "empty: shape")
    dt, nbytes = new_array_checks(shape, ctx, dtype)
    return NDArray(Chunk(nbytes, ctx or current_context()), shape, dt)


_NUMERIC_KINDS = "biuf"  # bool, signed and unsigned ints, floats


def _numeric_source(source: Any) -> Any:
    """`source` as a NumPy array, or NNVMError saying why it holds no numbers."""
    if source is None:
        raise NNVMError("array: source is None; expected an array-like of numbers")
    if isinstance(source, np.ndarray):
        probe = source
    else:
        try:
            probe = np.asarray(source)
        except (TypeError, ValueError, OverflowError) as e:  # NumPy's words for ragged lists
            raise NNVMError(
                f"array: source must be a (nested) sequence of numbers with a regular shape, "
                f"got {type(source).__name__}: {e}"
            ) from None
    kind = probe.dtype.kind
    if kind in _NUMERIC_KINDS:
        return probe
    if kind == "O" and all(isinstance(v, numbers.Real) for v in probe.flat):
        return source  # Python ints beyond int64: the conversion to `dtype` decides
    what = {"U": "strings", "S": "bytes", "c": "complex numbers", "O": "non-numbers"}.get(
        kind, f"{probe.dtype} values"
    )
    example = next((v for v in probe.flat if not isinstance(v, numbers.Real)), None)
    shown = f" such as {example!r:.40}" if example is not None and kind == "O" else ""
    raise NNVMError(
        f"array: source holds {what}{shown}; expected numbers (a NumPy array, a nested "
        "list of numbers or an NDArray)"
    )


def array(source_array: Any, ctx: Context | None = None, dtype: Any = None) -> NDArray:
    """An NDArray holding a copy of `source_array` (float32 unless `dtype` says otherwise, as
    MXNet; an NDArray source keeps its dtype). A NumPy 0-d array or a Python number gives
    shape (). The parameter names are MXNet's: `nd.array(source_array=..., ctx=, dtype=)`."""
    source = source_array
    if isinstance(source, NDArray):
        dt = source.dtype if dtype is None else as_dtype(dtype, "array")
        source = source.asnumpy()
    else:
        dt = DEFAULT_DTYPE if dtype is None else as_dtype(dtype, "array")
        source = _numeric_source(source)
    try:
        src = np.asarray(source, dtype=dt, order="C")  # ascontiguousarray makes 0-d 1-d
    except (TypeError, ValueError, OverflowError) as e:
        raise NNVMError(
            f"array: cannot convert the source ({type(source).__name__}) to {dt}: {e}"
        ) from None
    arr = empty(src.shape, ctx, dt)
    if src.size == 0:
        return arr
    if arr._ctx.device_type == "gpu":
        # a fresh C-order copy: broadcast views keep zero strides on size-1 axes, which
        # numba's host-to-device copy does not honour
        storage.copy(np.array(src, order="C", copy=True), arr._data)
    else:
        np.copyto(arr._data, src)  # a fresh variable: nothing can be pending on it
    return arr


def from_numpy_views(arrays: Sequence[np.ndarray]) -> list[NDArray]:
    return [array(a, dtype=a.dtype) for a in arrays]


def waitall() -> None:
    """Wait for every pushed operation; re-raises the first error not yet reported."""
    flush_released()
    _drop_spares()
    engine.get_engine().wait_for_all()


# re-exported: they need NDArray, so they live below it (executor and autograd import them here)
from .fill import full, ones, zeros  # noqa: E402, F401
