"""NDArray: an engine-owned buffer with a shape, a dtype, a device and an engine variable.

Every operation on it is pushed to the dependency engine and returns at once; reading
the values (`asnumpy`, `wait_to_read`) waits for the pending writers, and an error
raised inside a kernel surfaces there.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import engine, kernel
from ..base import Context, NNVMError, as_dtype
from ..imperative import invoke
from ..kernel import storage
from ..registry import Op

DEFAULT_DTYPE = np.dtype(np.float32)


@kernel.elementwise
def _set_value(value):
    return value


class Chunk:
    """The storage and engine variable shared by an NDArray and its reshaped views."""

    __slots__ = ("__weakref__", "ctx", "handle", "nbytes", "var")

    def __init__(self, nbytes: int, ctx: Context) -> None:
        if _released:
            flush_released()
        self.ctx = ctx
        self.nbytes = nbytes
        self.handle = storage.alloc(nbytes, ctx)
        self.var = engine.get_engine().new_var()

    # __del__ rather than weakref.finalize: a finalizer object per array cost ~2 µs of
    # every op's dispatch. A Chunk refers to no NDArray, so it is never in a cycle.
    def __del__(self) -> None:
        try:
            _released.append((self.handle, self.var, self.ctx))
        except AttributeError:  # __init__ failed before the chunk was whole: nothing to free
            pass

    def view(self, shape: tuple[int, ...], dtype: np.dtype) -> Any:
        return self.handle.as_array(shape, dtype)


# __del__ runs wherever the last reference goes, possibly inside an engine worker that
# holds the engine's lock, so it only queues; the queue is flushed from ordinary code
# (the next allocation or wait).
_released: deque[tuple[Any, Any, Context]] = deque()


def flush_released() -> None:
    """Free queued storage once every pending use of its variable is done (PushDelete).

    A variable nothing is pending on is freed at once, in this thread (the engines'
    delete_variable fast path), so a chain of temporaries reuses one pooled block.
    """
    eng = engine.get_engine()
    free = storage.free
    while _released:
        try:
            handle, var, ctx = _released.popleft()
        except IndexError:
            return
        if eng.try_delete_idle(var):
            free(handle)
        else:
            eng.delete_variable(_freer(handle), ctx, var)


def _freer(handle: Any) -> Any:
    return lambda _rc: storage.free(handle)


def new_array(shape: tuple[int, ...], dtype: np.dtype, nbytes: int, ctx: Context) -> NDArray:
    """A fresh array of `nbytes` = its size in bytes, for callers that checked shape and
    dtype already (imperative invoke: the hot path of every op)."""
    chunk = Chunk(nbytes, ctx)
    arr = NDArray.__new__(NDArray)
    arr._chunk = chunk
    arr._ctx = ctx
    arr.shape = shape
    arr.dtype = dtype
    arr._data = chunk.handle.view(shape, dtype)
    return arr


class NDArray:
    """An n-dimensional array on a device, computed on asynchronously by the engine."""

    __slots__ = ("__weakref__", "_chunk", "_ctx", "_data", "dtype", "shape")
    __array_priority__ = 1000.0  # numpy scalars defer to our __radd__ etc.

    def __init__(self, chunk: Chunk, shape: tuple[int, ...], dtype: np.dtype) -> None:
        self._chunk = chunk
        self._ctx = chunk.ctx
        self.shape = shape
        self.dtype = dtype
        self._data = chunk.view(shape, dtype)

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
    def T(self) -> NDArray:
        return _invoke1("transpose", [self])

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d NDArray")
        return self.shape[0]

    def __repr__(self) -> str:
        body = str(self.asnumpy())
        dims = "x".join(map(str, self.shape))
        return f"\n{body}\n<NDArray {dims} @{self._ctx}>"

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
        if self.size != 1:
            raise NNVMError(f"asscalar() needs an array of size 1, got shape {self.shape}")
        return self.asnumpy().reshape(()).item()

    def item(self) -> Any:
        return self.asscalar()

    def __float__(self) -> float:
        return float(self.asscalar())

    def __int__(self) -> int:
        return int(self.asscalar())

    def __bool__(self) -> bool:
        return bool(self.asscalar())

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        a = self.asnumpy()
        return a if dtype is None else a.astype(dtype)

    def copyto(self, other: NDArray | Context) -> NDArray:
        """Copy into another array (same shape) or onto a device; asynchronous."""
        if isinstance(other, Context):
            other = empty(self.shape, other, self.dtype)
        elif not isinstance(other, NDArray):
            raise NNVMError(f"copyto expects an NDArray or a Context, got {type(other).__name__}")
        if other is self or other._chunk is self._chunk:
            return other
        if other.shape != self.shape:
            raise NNVMError(f"copyto: shape {self.shape} does not match target {other.shape}")
        push_copy(self, other)
        return other

    def copy(self) -> NDArray:
        return self.copyto(self._ctx)

    def as_in_context(self, ctx: Context) -> NDArray:
        return self if ctx == self._ctx else self.copyto(ctx)

    def astype(self, dtype: Any, copy: bool = True) -> NDArray:
        dtype = as_dtype(dtype)
        if dtype == self.dtype and not copy:
            return self
        return _invoke1("Cast", [self], dtype=str(dtype))

    def reshape(self, *shape: Any, **kwargs: Any) -> NDArray:
        """A view with a new shape sharing this array's storage (MXNet's NDArray.reshape)."""
        if len(shape) == 1 and isinstance(shape[0], list | tuple):
            shape = tuple(shape[0])
        if not shape:
            shape = tuple(kwargs.get("shape", ()))
        new = _resolve_reshape(self.shape, tuple(int(d) for d in shape))
        return NDArray(self._chunk, new, self.dtype)

    def _fill(self, value: Any) -> None:
        """Set every element to a scalar or to the values of an array (asynchronous)."""
        if isinstance(value, NDArray):
            if value.shape != self.shape:
                value = _invoke1("broadcast_to", [value], shape=self.shape)
            push_copy(value, self)
            return
        if isinstance(value, np.ndarray | list | tuple):
            src = np.broadcast_to(np.asarray(value, dtype=self.dtype), self.shape)
            push_copy(array(src, self._ctx, self.dtype), self)
            return
        scalar = self.dtype.type(value)

        data, ctx = self._data, self._ctx

        def fill(run_ctx: Any) -> None:
            if ctx.device_type == "gpu":
                _set_value.launch(ctx, data, "write", scalar)
            else:
                data[...] = scalar

        engine.get_engine().push_sync(fill, self._ctx, [], [self._chunk.var], name="fill")

    def __setitem__(self, key: Any, value: Any) -> None:
        if key == slice(None) or key is Ellipsis or (key == () and not self.shape):
            self._fill(value)
            return
        raise NNVMError(f"NDArray item assignment supports only x[:] = value, got key {key!r}")

    def __getitem__(self, key: Any) -> NDArray:
        if isinstance(key, int | np.integer):
            key = int(key)
            if not -self.shape[0] <= key < self.shape[0]:
                raise IndexError(f"index {key} out of range for axis 0 of size {self.shape[0]}")
            key %= self.shape[0]
            return _invoke1("slice_axis", [self], axis=0, begin=key, end=key + 1).reshape(
                self.shape[1:]
            )
        if isinstance(key, slice) and key.step in (None, 1):
            begin, end, _ = key.indices(self.shape[0])
            return _invoke1("slice_axis", [self], axis=0, begin=begin, end=end)
        raise NNVMError(f"NDArray indexing supports an int or a slice on axis 0, got {key!r}")

    # -- arithmetic ----------------------------------------------------------------------------

    def __neg__(self) -> NDArray:
        return _invoke1("negative", [self])

    def __abs__(self) -> NDArray:
        return _invoke1("abs", [self])

    def __add__(self, o: Any) -> NDArray:
        return _binary(self, o, "elemwise_add", "broadcast_add", "_plus_scalar")

    __radd__ = __add__

    def __sub__(self, o: Any) -> NDArray:
        return _binary(self, o, "elemwise_sub", "broadcast_sub", "_minus_scalar")

    def __rsub__(self, o: Any) -> NDArray:
        return _binary(self, o, None, None, "_rminus_scalar")

    def __mul__(self, o: Any) -> NDArray:
        return _binary(self, o, "elemwise_mul", "broadcast_mul", "_mul_scalar")

    __rmul__ = __mul__

    def __truediv__(self, o: Any) -> NDArray:
        return _binary(self, o, "elemwise_div", "broadcast_div", "_div_scalar")

    def __rtruediv__(self, o: Any) -> NDArray:
        return _binary(self, o, None, None, "_rdiv_scalar")

    def __pow__(self, o: Any) -> NDArray:
        return _binary(self, o, None, "broadcast_power", "_power_scalar")

    def __iadd__(self, o: Any) -> NDArray:
        return _binary(self, o, "elemwise_add", None, "_plus_scalar", out=self)

    def __isub__(self, o: Any) -> NDArray:
        return _binary(self, o, "elemwise_sub", None, "_minus_scalar", out=self)

    def __imul__(self, o: Any) -> NDArray:
        return _binary(self, o, "elemwise_mul", None, "_mul_scalar", out=self)

    def __itruediv__(self, o: Any) -> NDArray:
        return _binary(self, o, "elemwise_div", None, "_div_scalar", out=self)

    def __eq__(self, o: Any) -> Any:
        return _binary(self, o, None, "broadcast_equal", "_equal_scalar")

    def __hash__(self) -> int:
        return id(self)


def _invoke1(name: str, inputs: list[NDArray], out: Any = None, **kwargs: Any) -> NDArray:
    return invoke(Op.get(name), inputs, kwargs, out=out)[0]


_SCALAR_TYPES = (int, float, np.number, bool)


def _binary(
    lhs: NDArray,
    rhs: Any,
    same: str | None,
    bcast: str | None,
    scalar: str,
    out: NDArray | None = None,
) -> NDArray:
    if isinstance(rhs, NDArray):
        if same is not None and rhs.shape == lhs.shape:
            return _invoke1(same, [lhs, rhs], out=out)
        name = bcast if rhs.shape != lhs.shape else (bcast or same)
        if name is None:
            raise NNVMError(
                f"no operator for {scalar.strip('_')} of two arrays with shapes "
                f"{lhs.shape} and {rhs.shape}"
            )
        return _invoke1(name, [lhs, rhs], out=out)
    if type(rhs) is float or isinstance(rhs, _SCALAR_TYPES):
        return _invoke1(scalar, [lhs], out=out, scalar=float(rhs))
    return NotImplemented


def _resolve_reshape(old: tuple[int, ...], new: tuple[int, ...]) -> tuple[int, ...]:
    size = math.prod(old)
    if new.count(-1) > 1:
        raise NNVMError(f"reshape: at most one -1 is allowed, got {new}")
    known = math.prod(d for d in new if d != -1)
    if -1 in new:
        if known == 0 or size % known:
            raise NNVMError(f"reshape: cannot reshape {old} into {new}")
        new = tuple(size // known if d == -1 else d for d in new)
    if math.prod(new) != size:
        raise NNVMError(f"reshape: cannot reshape array of shape {old} into {new}")
    return new


def push_copy(src: NDArray, dst: NDArray) -> None:
    """Asynchronous copy between arrays of one shape, on any devices."""
    if src.shape != dst.shape:
        raise NNVMError(f"copy: shape {src.shape} does not match {dst.shape}")
    s, d = src._data, dst._data
    cast = src.dtype != dst.dtype

    def copy(_rc: Any) -> None:
        if cast and src._ctx.device_type == dst._ctx.device_type == "cpu":
            np.copyto(d, s, casting="unsafe")
        else:
            storage.copy(s, d)

    ctx = dst._ctx if dst._ctx.device_type == "gpu" else src._ctx
    engine.get_engine().push_sync(copy, ctx, [src._chunk.var], [dst._chunk.var], name="copyto")


# -- creation -----------------------------------------------------------------------------


def _shape(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, int | np.integer):
        return (int(shape),)
    try:
        out = tuple(int(d) for d in shape)
    except (TypeError, ValueError):
        raise NNVMError(f"a shape must be an int or a tuple of ints, got {shape!r}") from None
    if any(d < 0 for d in out):
        raise NNVMError(f"a shape cannot have negative dimensions, got {out}")
    return out


def empty(shape: Any, ctx: Context | None = None, dtype: Any = None) -> NDArray:
    """An uninitialised array (its storage comes from the pool)."""
    shape = _shape(shape)
    dt = DEFAULT_DTYPE if dtype is None else as_dtype(dtype)
    ctx = ctx or Context.default_ctx()
    nbytes = math.prod(shape) * dt.itemsize
    return NDArray(Chunk(nbytes, ctx), shape, dt)


def full(shape: Any, val: Any, ctx: Context | None = None, dtype: Any = None) -> NDArray:
    arr = empty(shape, ctx, dtype)
    arr._fill(val)
    return arr


def zeros(shape: Any, ctx: Context | None = None, dtype: Any = None, **_: Any) -> NDArray:
    return full(shape, 0, ctx, dtype)


def ones(shape: Any, ctx: Context | None = None, dtype: Any = None, **_: Any) -> NDArray:
    return full(shape, 1, ctx, dtype)


def array(source: Any, ctx: Context | None = None, dtype: Any = None) -> NDArray:
    """An NDArray holding a copy of `source` (float32 unless `dtype` says otherwise, as MXNet)."""
    if isinstance(source, NDArray):
        dt = source.dtype if dtype is None else as_dtype(dtype)
        source = source.asnumpy()
    else:
        dt = DEFAULT_DTYPE if dtype is None else as_dtype(dtype)
    src = np.ascontiguousarray(np.asarray(source, dtype=dt))
    arr = empty(src.shape, ctx, dt)
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
    engine.get_engine().wait_for_all()
