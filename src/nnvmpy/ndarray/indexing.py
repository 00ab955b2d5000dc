"""x[key] and x[key] = value for NDArray, with NumPy's rules and MXNet's results.

A key is an int, a slice (any step, negative too), None (a new axis), Ellipsis, an
integer array (list, NumPy array, NDArray; float NDArrays hold integral values, as
nd.array makes float32 by default), or a tuple of these.

- Basic indexing (ints, slices, None, Ellipsis) gives a view sharing x's storage when
  the selected elements are one contiguous block (`NDArray._basic_indexing_slice_is_
  contiguous`: x[1], x[2:5], x[1, :, 3:4] on trailing full axes, ...), else a copy made
  by the `slice` op. Indexing every axis with an int gives shape (1,), as MXNet's
  legacy NDArray (it has no 0-d results).
- Advanced indexing (any integer array in the key) follows NumPy: the index arrays
  broadcast together, and their dims go where the first one is when they are adjacent,
  first otherwise. Per-axis coordinates are worked out on the host (NumPy indexing of
  zero-stride coordinate grids, so O(size of the result)) and `gather_nd` does the copy.
- Assignment broadcasts the value (a number, an NDArray, a NumPy array or a nested
  list, with leading size-1 dims dropped as NumPy does) to x[key]'s shape and writes
  through `_full`/`_copy` (the whole array), `_slice_assign[_scalar]` (a basic region)
  or `_scatter_set_nd` (advanced), with out=x.

Boolean masks are refused: MXNet 1.9.1's NDArray has none (mx.np has them).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..autograd.state import STATE as _AG
from ..imperative import invoke
from ..registry import Op
from .errors import NDArrayIndexError, NDArrayValueError
from .fill import full_into
from .ndarray import NDArray, array, check_not_recording
from .views import flat_window, reshaped, same_memory

_INT = (int, np.integer)


class _Adv:
    """An integer index array in a key (NumPy int64)."""

    __slots__ = ("a",)

    def __init__(self, a: np.ndarray) -> None:
        self.a = a


# -- parsing ----------------------------------------------------------------------------------


def _index_array(k: Any) -> _Adv:
    """A list / tuple / NumPy array / NDArray index as integers; bools are refused."""
    a = k.asnumpy() if isinstance(k, NDArray) else np.asarray(k)
    if a.dtype == np.bool_:
        raise NDArrayIndexError(
            "NDArray indexing: boolean masks are not supported (MXNet's NDArray has none); "
            "use integer indices, e.g. np.nonzero(mask)"
        )
    if a.size == 0:
        return _Adv(a.astype(np.int64))
    if a.dtype.kind not in "iuf":
        raise NDArrayIndexError(
            f"NDArray indexing: an index array must hold integers, got dtype {a.dtype}"
        )
    if a.dtype.kind == "f" and (not np.all(np.isfinite(a)) or not np.all(a == np.trunc(a))):
        raise NDArrayIndexError(
            "NDArray indexing: a float index array must hold whole numbers, got "
            f"{a.ravel()[:5].tolist()}..."
        )
    return _Adv(a.astype(np.int64))


def _entry(k: Any) -> Any:
    if k is None or k is Ellipsis:
        return k
    if isinstance(k, bool | np.bool_):
        raise NDArrayIndexError(
            f"NDArray indexing: a boolean index ({k!r}) is not supported; use an int"
        )
    if isinstance(k, _INT):
        return int(k)
    if isinstance(k, slice):
        parts = []
        for v in (k.start, k.stop, k.step):
            if v is not None and not isinstance(v, _INT):
                raise NDArrayIndexError(
                    f"NDArray indexing: slice {k!r} must have int (or None) start, stop "
                    f"and step, got {type(v).__name__}"
                )
            parts.append(None if v is None else int(v))
        if parts[2] == 0:
            raise NDArrayValueError(f"NDArray indexing: slice {k!r} has step 0")
        return slice(*parts)
    if isinstance(k, NDArray | np.ndarray | list | tuple):
        return _index_array(k)
    raise NDArrayIndexError(
        f"NDArray indexing: index {k!r} of type {type(k).__name__} is not supported; "
        "expected an int, a slice, None, Ellipsis, an integer list / NumPy array / NDArray, "
        "or a tuple of these"
    )


def parse(key: Any, ndim: int) -> list[Any]:
    """The key as one entry per real axis (ints, slices, _Adv), plus None entries."""
    keys = key if isinstance(key, tuple) else (key,)
    entries = [_entry(k) for k in keys]
    n_real = sum(1 for e in entries if e is not None and e is not Ellipsis)
    n_ellipsis = sum(1 for e in entries if e is Ellipsis)
    if n_ellipsis > 1:
        raise NDArrayIndexError("NDArray indexing: an index can only have one Ellipsis (...)")
    if n_real > ndim:
        raise NDArrayIndexError(
            f"NDArray indexing: too many indices for array: array is {ndim}-dimensional, "
            f"but {n_real} were indexed"
        )
    fill: list[Any] = [slice(None)] * (ndim - n_real)
    if n_ellipsis:
        at = entries.index(Ellipsis)
        if not fill and any(isinstance(e, _Adv) for e in entries):
            fill = [_SEPARATOR]  # NumPy: an Ellipsis of no axes still parts index arrays
        return entries[:at] + fill + entries[at + 1 :]
    return entries + fill


# An Ellipsis that stands for no axes, kept in advanced keys only: NumPy puts the
# broadcast dims of index arrays first when anything separates them, this included.
_SEPARATOR = object()


def _axis_range(e: Any, n: int, axis: int) -> range:
    if isinstance(e, int):
        if not -n <= e < n:
            raise NDArrayIndexError(
                f"NDArray indexing: index {e} is out of bounds for axis {axis} with size {n}"
            )
        e %= n
        return range(e, e + 1)
    return range(n)[e]


# -- contiguity -------------------------------------------------------------------------------


def ranges_are_contiguous(ranges: Sequence[range], shape: Sequence[int]) -> bool:
    """Whether the elements picked by one range per axis are one C-contiguous block.

    NumPy's rule for a view's C-contiguity: ignoring axes of length 1, each axis's step
    in elements must be the product of the later axes' lengths; an empty pick is
    contiguous.
    """
    if any(len(r) == 0 for r in ranges):
        return True
    expected = 1
    stride = 1
    for r, n in zip(reversed(ranges), reversed(shape)):
        if len(r) > 1:
            if r.step * stride != expected:
                return False
            expected *= len(r)
        stride *= n
    return True


def slices_are_contiguous(slc_key: Sequence[slice], shape: Sequence[int]) -> bool:
    """ranges_are_contiguous for one slice per axis (NDArray._basic_indexing_slice_...)."""
    if len(slc_key) != len(shape):
        raise NDArrayIndexError(
            f"_basic_indexing_slice_is_contiguous: {len(slc_key)} slices for "
            f"{len(shape)} axes; expected one per axis"
        )
    return ranges_are_contiguous([range(n)[s] for s, n in zip(slc_key, shape)], shape)


# -- basic indexing ---------------------------------------------------------------------------


def _basic(x: NDArray, entries: list[Any]) -> tuple[list[range], tuple[int, ...]]:
    """(one range per axis, the result's shape: int axes dropped, None axes inserted)."""
    ranges: list[range] = []
    out: list[int] = []
    axis = 0
    for e in entries:
        if e is None:
            out.append(1)
            continue
        r = _axis_range(e, x.shape[axis], axis)
        ranges.append(r)
        if not isinstance(e, int):
            out.append(len(r))
        axis += 1
    return ranges, tuple(out) or (1,)


def _call(name: str, inputs: list[NDArray], out: Any = None, **params: Any) -> NDArray:
    return invoke(Op.get(name), inputs, params, out=out)[0]


def _region_params(ranges: list[range]) -> dict[str, Any]:
    """slice's begin/end/step for non-empty ranges (a stop of -1 means "past index 0")."""
    return {
        "begin": tuple(r.start for r in ranges),
        "end": tuple(None if r.stop < 0 else r.stop for r in ranges),
        "step": tuple(r.step for r in ranges),
    }


def _strides(shape: tuple[int, ...]) -> list[int]:
    return [math.prod(shape[k + 1 :]) for k in range(len(shape))]


def _get_basic(x: NDArray, entries: list[Any]) -> NDArray:
    ranges, shape = _basic(x, entries)
    whole = all(r == range(n) for r, n in zip(ranges, x.shape))  # every axis, in order
    if not _AG.recording and ranges_are_contiguous(ranges, x.shape):
        start = 0
        if all(len(r) for r in ranges):
            start = sum(r.start * s for r, s in zip(ranges, _strides(x.shape)))
        return flat_window(x, start, shape)
    # a copy through ops (under autograd.record() always: views are not recorded)
    sliced = _call("_copy", [x]) if whole else _call("slice", [x], **_region_params(ranges))
    return sliced if sliced.shape == shape else reshaped(sliced, shape)


# -- advanced indexing ------------------------------------------------------------------------


def _is_full(e: Any) -> bool:
    return (isinstance(e, slice) and e == slice(None)) or e is _SEPARATOR


def gather_indices(x: NDArray, entries: list[Any]) -> tuple[np.ndarray, tuple[int, ...]]:
    """(indices of shape (k, *R) for gather_nd over x's first k axes, x[key]'s shape).

    Trailing whole axes are left to gather_nd's sub-array copy (k < ndim).
    """
    cut = max(i for i, e in enumerate(entries) if not _is_full(e)) + 1
    head = entries[:cut]
    k = sum(1 for e in head if e is not None and e is not _SEPARATOR)
    lead = x.shape[:k]
    key = tuple(e.a if isinstance(e, _Adv) else Ellipsis if e is _SEPARATOR else e for e in head)
    coords = []
    for d in range(k):
        grid = np.arange(lead[d], dtype=np.int64).reshape([-1 if i == d else 1 for i in range(k)])
        try:
            coords.append(np.broadcast_to(grid, lead)[key])
        except IndexError as e:
            raise NDArrayIndexError(f"NDArray indexing: {e}") from None
        except ValueError as e:  # index arrays that do not broadcast together
            raise NDArrayIndexError(f"NDArray indexing: {e}") from None
    indices = np.stack(coords) if coords else np.zeros((0,), np.int64)
    return indices, tuple(indices.shape[1:]) + x.shape[k:]


def _get_advanced(x: NDArray, entries: list[Any]) -> NDArray:
    indices, _shape = gather_indices(x, entries)
    idx = array(indices, x.context, dtype=np.int64)
    return _call("gather_nd", [x, idx])


# -- getitem / setitem ------------------------------------------------------------------------


def getitem(x: NDArray, key: Any) -> NDArray:
    entries = parse(key, x.ndim)
    if any(isinstance(e, _Adv) for e in entries):
        return _get_advanced(x, entries)
    return _get_basic(x, entries)


NUMERIC_TYPES = (int, float, np.generic)


def _value_array(x: NDArray, value: Any, shape: tuple[int, ...]) -> NDArray:
    """value as an NDArray of x's dtype and device with exactly `shape` (NumPy broadcast)."""
    if isinstance(value, NDArray):
        v = value.as_in_context(x.context)
        if v.dtype != x.dtype:
            v = v.astype(x.dtype)
        vshape = _drop_leading_ones(v.shape, len(shape), shape)
        if vshape != v.shape:
            v = reshaped(v, vshape)
        if v.shape != shape:
            v = _broadcast(v, shape)
        return v
    try:
        a = np.asarray(value)
    except (TypeError, ValueError) as e:
        raise NDArrayValueError(f"NDArray assignment: the value is not array-like: {e}") from None
    if a.dtype.kind not in "biuf":
        raise NDArrayValueError(
            f"NDArray assignment: the value must be numeric, got dtype {a.dtype} "
            f"({type(value).__name__})"
        )
    a = a.reshape(_drop_leading_ones(a.shape, len(shape), shape))
    try:
        a = np.broadcast_to(a, shape)
    except ValueError:
        raise NDArrayValueError(
            f"NDArray assignment: could not broadcast a value of shape {np.shape(value)} "
            f"to the indexed shape {shape}"
        ) from None
    return array(a.astype(x.dtype, copy=False), x.context, dtype=x.dtype)


def _drop_leading_ones(vshape: tuple[int, ...], ndim: int, target: tuple[int, ...]) -> tuple:
    extra = len(vshape) - ndim
    if extra <= 0:
        return tuple(vshape)
    if any(d != 1 for d in vshape[:extra]):
        raise NDArrayValueError(
            f"NDArray assignment: could not broadcast a value of shape {tuple(vshape)} to "
            f"the indexed shape {target}"
        )
    return tuple(vshape[extra:])


def _broadcast(v: NDArray, shape: tuple[int, ...]) -> NDArray:
    try:
        ok = np.broadcast_shapes(v.shape, shape) == shape
    except ValueError:
        ok = False
    if not ok:
        raise NDArrayValueError(
            f"NDArray assignment: could not broadcast a value of shape {v.shape} to the "
            f"indexed shape {shape}"
        )
    return v.broadcast_to(shape)


def _set_whole(x: NDArray, value: Any, indexed: tuple[int, ...]) -> None:
    """x[...] = value: a fill or a copy (not an in-place op: allowed while recording).

    The value broadcasts to `indexed`, x[key]'s shape (x's with any None axes).
    """
    if isinstance(value, NUMERIC_TYPES):
        full_into(x, value)
        return
    if isinstance(value, NDArray) and same_memory(value, x):
        return  # x[:] = x
    if _sync_copy_from_numpy(x, value):
        return
    v = _value_array(x, value, indexed)
    (v if v.shape == x.shape else reshaped(v, x.shape)).copyto(x)


def _sync_copy_from_numpy(x: NDArray, value: Any) -> bool:
    """x[:] = a NumPy array of x's shape on the CPU, as MXNet's SyncCopyFromCPU: wait
    until nothing pending uses x, then one copy (cast to x's dtype) on this thread, and
    count it as a write of x's variable.

    The general path made an NDArray of the value and pushed a copy of it: two copies
    and an engine round trip, 0.2 ms per argument of an executor's forward(data=...),
    ~7% of an MLP training step. Not while recording (that path records the copy), and
    False (nothing done) for anything else: other devices, shapes, dtypes, non-arrays.
    """
    if (
        _AG.recording
        or type(value) is not np.ndarray
        or value.shape != x.shape
        or value.dtype.kind not in "biuf"
        or x.context.device_type != "cpu"
    ):
        return False
    x.wait_to_write()
    np.copyto(x._data, value, casting="unsafe")
    # a completed write, as the engine counts them: memoized nodes (a folded BatchNorm)
    # compare input versions to see that the value changed
    x._chunk.var.version += 1
    return True


def setitem(x: NDArray, key: Any, value: Any) -> None:
    entries = parse(key, x.ndim)
    if any(isinstance(e, _Adv) for e in entries):
        check_not_recording("NDArray.__setitem__")
        indices, shape = gather_indices(x, entries)
        v = _value_array(x, value, shape)
        idx = array(indices, x.context, dtype=np.int64)
        _call("_scatter_set_nd", [x, v, idx], out=x, shape=x.shape)
        return
    ranges, _ = _basic(x, entries)
    if all(r == range(n) for r, n in zip(ranges, x.shape)) and not any(
        isinstance(e, int) for e in entries
    ):
        _set_whole(x, value, _indexed_shape(entries, ranges))
        return
    check_not_recording("NDArray.__setitem__")
    region = tuple(len(r) for r in ranges)
    params = _region_params(ranges)
    if isinstance(value, NUMERIC_TYPES):
        if 0 not in region:
            _call("_slice_assign_scalar", [x], out=x, scalar=float(value), **params)
        return
    v = _value_array(x, value, _indexed_shape(entries, ranges))
    if 0 in region:
        return  # nothing to assign (the value was checked to broadcast)
    if v.shape != region:
        v = reshaped(v, region)
    _call("_slice_assign", [x, v], out=x, **params)


def _indexed_shape(entries: list[Any], ranges: list[range]) -> tuple[int, ...]:
    """NumPy's x[key].shape for a basic key: int axes dropped, None axes kept as 1."""
    out = []
    it = iter(ranges)
    for e in entries:
        if e is None:
            out.append(1)
            continue
        r = next(it)
        if not isinstance(e, int):
            out.append(len(r))
    return tuple(out)
