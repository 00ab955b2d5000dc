"""Comparing arrays as MXNet's test_utils does: per-dtype tolerances, broadcasting, NaN rules.

`assert_almost_equal(a, b)` passes when |a - b| <= atol + rtol * |b| everywhere (NumPy's
allclose). Tolerances left as None come from the dtypes of both sides (the looser of the
two): float16 1e-2/1e-1, float32 1e-4/1e-3, float64 1e-5/1e-20, integers and bools exact.
The failure message names the worst element, both values, how many elements differ and
the next worst ones, so a failing test says where to look.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ..base import NNVMError

_EXACT = (
    np.bool_,
    np.int8,
    np.uint8,
    np.int16,
    np.uint16,
    np.int32,
    np.uint32,
    np.int64,
    np.uint64,
)


def default_rtols() -> dict[np.dtype, float]:
    """Relative tolerance per dtype when a comparison is given none."""
    return {
        np.dtype(np.float16): 1e-2,
        np.dtype(np.float32): 1e-4,
        np.dtype(np.float64): 1e-5,
        **{np.dtype(t): 0 for t in _EXACT},
    }


def default_atols() -> dict[np.dtype, float]:
    """Absolute tolerance per dtype when a comparison is given none."""
    return {
        np.dtype(np.float16): 1e-1,
        np.dtype(np.float32): 1e-3,
        np.dtype(np.float64): 1e-20,
        **{np.dtype(t): 0 for t in _EXACT},
    }


def default_numeric_eps() -> dict[np.dtype, float]:
    """Finite-difference step per dtype: powers of two, so x + eps drops no bits of eps."""
    return {
        np.dtype(np.float16): 1.0 / 2**6,
        np.dtype(np.float32): 1.0 / 2**9,
        np.dtype(np.float64): 1.0 / 2**14,
    }


def effective_dtype(dat: Any) -> np.dtype:
    """The dtype whose tolerance applies to `dat`.

    MXNet lowers float32 to float16 on GPUs whose GEMMs run in TF32; numba.cuda kernels
    compute float32 in full float32, so here it is the array's own dtype.
    """
    dtype = getattr(dat, "dtype", None)
    return np.dtype(dtype) if dtype is not None else np.asarray(dat).dtype


def _lookup(table: Mapping[np.dtype, float], dtype: np.dtype) -> float:
    if dtype in table:
        return table[dtype]
    if dtype.kind in "biu":
        return 0.0
    # complex, float128, ...: the float64 tolerance
    return table[np.dtype(np.float64)]


def get_tolerance(dat: Any, tol: Any, default_tol: Mapping[np.dtype, float]) -> float:
    """`tol` itself when it is a number, else its entry (or the default) for dat's dtype."""
    if isinstance(tol, numbers.Number):
        return float(tol)  # type: ignore[arg-type]
    dtype = effective_dtype(dat)
    if tol is not None and not isinstance(tol, Mapping):
        raise NNVMError(f"get_tolerance: tol expects a number or a dtype->float dict, got {tol!r}")
    table = {np.dtype(k): v for k, v in (tol or {}).items()}
    return _lookup(table, dtype) if dtype in table else _lookup(default_tol, dtype)


def get_tols(x: Any, y: Any, rtol: Any, atol: Any) -> tuple[float, float]:
    """(rtol, atol) for comparing x with y: given numbers, else the looser default of both."""
    x = np.array(x) if isinstance(x, numbers.Number) else x
    y = np.array(y) if isinstance(y, numbers.Number) else y
    rtol = max(get_tolerance(x, rtol, default_rtols()), get_tolerance(y, rtol, default_rtols()))
    atol = max(get_tolerance(x, atol, default_atols()), get_tolerance(y, atol, default_atols()))
    return rtol, atol


def get_atol(atol: float | None = None, dtype: Any = np.float64) -> float:
    """`atol`, or the default absolute tolerance of `dtype`."""
    return _lookup(default_atols(), np.dtype(dtype)) if atol is None else atol


def get_rtol(rtol: float | None = None, dtype: Any = np.float64) -> float:
    """`rtol`, or the default relative tolerance of `dtype`."""
    return _lookup(default_rtols(), np.dtype(dtype)) if rtol is None else rtol


def get_etol(etol: float | None = None) -> float:
    """`etol` (the fraction of elements allowed to differ), 0 by default."""
    return 0 if etol is None else etol


def _np(x: Any) -> Any:
    """NDArrays (anything with asnumpy) as NumPy; NumPy arrays and scalars unchanged."""
    return x.asnumpy() if hasattr(x, "asnumpy") else x


def same(a: Any, b: Any) -> bool:
    """Equal shapes and equal elements (NaN is never equal)."""
    return bool(np.array_equal(_np(a), _np(b)))


def checkShapes(a: Any, b: Any) -> None:
    """AssertionError unless a and b have the same shape."""
    if np.shape(a) != np.shape(b):
        raise AssertionError(f"a.shape = {np.shape(a)} and b.shape = {np.shape(b)} are not equal")


def _check_broadcast(a: Any, b: Any, names: tuple[str, str]) -> None:
    try:
        np.broadcast_shapes(np.shape(a), np.shape(b))
    except ValueError:
        raise AssertionError(
            f"shapes differ: {names[0]} {np.shape(a)} vs {names[1]} {np.shape(b)} "
            "(and do not broadcast)"
        ) from None


def almost_equal(
    a: Any,
    b: Any,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = False,
    use_broadcast: bool = True,
) -> bool:
    """np.allclose with MXNet's defaults (rtol 1e-5, atol 1e-20 when not given)."""
    a, b = _np(a), _np(b)
    if not use_broadcast:
        checkShapes(a, b)
    try:
        return bool(
            np.allclose(a, b, rtol=get_rtol(rtol), atol=get_atol(atol), equal_nan=equal_nan)
        )
    except ValueError:  # shapes that do not broadcast are not equal
        return False


def find_max_violation(
    a: np.ndarray, b: np.ndarray, rtol: float | None = None, atol: float | None = None
) -> tuple[tuple[int, ...], float]:
    """(index, ratio) of the element where |a - b| / (atol + rtol |b|) is largest."""
    violation = _violation(a, b, get_rtol(rtol), get_atol(atol), equal_nan=False)
    if violation.ndim == 0:
        return (), float(violation)
    idx = np.unravel_index(int(np.argmax(violation)), violation.shape)
    return tuple(int(i) for i in idx), float(violation[idx])


def locationError(
    a: Any,
    b: Any,
    index: Any,
    names: Sequence[str],
    maxError: bool = False,
) -> str:
    """MXNet's mismatch note: "Location of [maximum ]error: <index>, <a>=<a[index]>, <b>=..."
    with both values printed to 8 decimals."""
    where = _index_str(index)
    maximum = "maximum " if maxError else ""
    a_val, b_val = float(np.asarray(_np(a))[index]), float(np.asarray(_np(b))[index])
    return f"Location of {maximum}error: {where}, {names[0]}={a_val:.8f}, {names[1]}={b_val:.8f}"


def _index_str(index: Any) -> str:
    """str(index) with NumPy integers shown as plain ints (NumPy 2 prints np.int64(1))."""
    if isinstance(index, tuple):
        return str(tuple(int(i) if isinstance(i, np.integer) else i for i in index))
    return str(int(index) if isinstance(index, np.integer) else index)


def _violation(a: Any, b: Any, rtol: float, atol: float, equal_nan: bool) -> np.ndarray:
    """|a - b| / (atol + rtol |b|) per element (broadcast); equal values (incl. inf) give 0."""
    wide = np.complex128 if np.iscomplexobj(a) or np.iscomplexobj(b) else np.float64
    a64, b64 = np.broadcast_arrays(np.asarray(a, dtype=wide), np.asarray(b, dtype=wide))
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        diff = np.where(a64 == b64, 0.0, np.abs(a64 - b64))
        ratio = diff / (atol + rtol * np.abs(b64) + 1e-20)
    nan = np.isnan(a64) | np.isnan(b64)
    both_nan = np.isnan(a64) & np.isnan(b64)
    ratio = np.where(nan, np.inf, ratio)
    if equal_nan:
        ratio = np.where(both_nan, 0.0, ratio)
    return np.asarray(ratio)


def _mismatch_message(
    a: Any,
    b: Any,
    rtol: float,
    atol: float,
    names: tuple[str, str],
    equal_nan: bool,
    mismatches: tuple[int, int],
) -> str:
    a_np, b_np = np.asarray(a), np.asarray(b)
    violation = _violation(a_np, b_np, rtol, atol, equal_nan)
    bad = violation > 1
    count, size = int(bad.sum()), int(violation.size)
    order = np.argsort(-violation, axis=None, kind="stable")
    a_b, b_b = np.broadcast_arrays(a_np, b_np)
    shown = max(int(mismatches[0]), 1)
    lines = []
    for rank, flat in enumerate(order[: min(shown, count)]):
        idx = tuple(int(i) for i in np.unravel_index(int(flat), violation.shape))
        lines.append(
            f"{rank + 1:3d}: error {float(violation[idx]):.6g} at {idx}: "
            f"{names[0]}={a_b[idx].item()!r}, {names[1]}={b_b[idx].item()!r}"
        )
    worst = lines[0].split(": ", 1)[1] if lines else ""
    with np.printoptions(threshold=20, edgeitems=3):
        arrays = f"{names[0]}: {np.array2string(a_np)}\n{names[1]}: {np.array2string(b_np)}"
    return (
        f"Error {float(violation.max()) if size else 0.0:.6g} exceeds tolerance "
        f"rtol={rtol:e}, atol={atol:e} (mismatch {100.0 * count / max(size, 1):.4g}%): "
        f"{names[0]} and {names[1]} differ in {count} of {size} elements; maximum {worst}\n"
        + "\n".join(lines)
        + "\n"
        + arrays
    )


def assert_almost_equal(
    a: Any,
    b: Any,
    rtol: Any = None,
    atol: Any = None,
    names: tuple[str, str] = ("a", "b"),
    equal_nan: bool = False,
    use_broadcast: bool = True,
    mismatches: tuple[int, int] = (10, 10),
) -> None:
    """AssertionError unless |a - b| <= atol + rtol |b| element-wise (after broadcasting).

    a and b may be NDArrays, NumPy arrays or scalars. rtol/atol may be numbers, dtype->float
    dicts or None (the looser dtype default of a and b). Bool arrays must be equal.
    `mismatches[0]` worst elements are listed in the message.
    """
    if not use_broadcast:
        checkShapes(_np(a), _np(b))
    rtol, atol = get_tols(a, b, rtol, atol)
    a, b = _np(a), _np(b)
    _check_broadcast(a, b, names)
    a_arr, b_arr = np.asarray(a), np.asarray(b)
    if a_arr.dtype == np.bool_ and b_arr.dtype == np.bool_:
        a_b, b_b = np.broadcast_arrays(a_arr, b_arr)
        if np.array_equal(a_b, b_b):
            return
        rtol, atol = 0.0, 0.0
    elif np.allclose(a_arr, b_arr, rtol=rtol, atol=atol, equal_nan=equal_nan):
        return
    raise AssertionError(_mismatch_message(a, b, rtol, atol, names, equal_nan, mismatches))


def assert_allclose(
    a: Any, b: Any, rtol: float = 1e-07, atol: float = 0, equal_nan: bool = True
) -> None:
    """numpy.testing.assert_allclose's defaults on assert_almost_equal."""
    assert_almost_equal(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def assert_almost_equal_with_err(
    a: Any,
    b: Any,
    rtol: Any = None,
    atol: Any = None,
    etol: float | None = None,
    names: tuple[str, str] = ("a", "b"),
    equal_nan: bool = False,
    mismatches: tuple[int, int] = (10, 10),
) -> None:
    """Like assert_almost_equal, but up to a fraction `etol` of the elements may differ."""
    etol = get_etol(etol)
    if etol <= 0:
        assert_almost_equal(a, b, rtol, atol, names, equal_nan, mismatches=mismatches)
        return
    rtol, atol = get_tols(a, b, rtol, atol)
    a, b = _np(a), _np(b)
    _check_broadcast(a, b, names)
    close = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    err = 1 - np.count_nonzero(close) / max(close.size, 1)
    if err > etol:
        raise AssertionError(
            f"{err:.4g} of the elements differ, more than etol={etol}\n"
            + _mismatch_message(a, b, rtol, atol, names, equal_nan, mismatches)
        )


def _zero_nans(a: Any, b: Any) -> tuple[np.ndarray, np.ndarray]:
    a, b = np.array(_np(a), dtype=None), np.array(_np(b), dtype=None)
    a, b = (
        np.array(x, dtype=np.result_type(x.dtype, np.float16)) for x in np.broadcast_arrays(a, b)
    )
    nan = np.isnan(a) | np.isnan(b)
    a[nan] = 0
    b[nan] = 0
    return a, b


def almost_equal_ignore_nan(
    a: Any, b: Any, rtol: float | None = None, atol: float | None = None
) -> bool:
    """almost_equal after zeroing every position where either side is NaN."""
    return almost_equal(*_zero_nans(a, b), rtol, atol)


def assert_almost_equal_ignore_nan(
    a: Any,
    b: Any,
    rtol: Any = None,
    atol: Any = None,
    names: tuple[str, str] = ("a", "b"),
) -> None:
    """assert_almost_equal after zeroing every position where either side is NaN."""
    assert_almost_equal(*_zero_nans(a, b), rtol, atol, names)


def assert_exception(f: Callable[..., Any], exception_type: Any, *args: Any, **kwargs: Any) -> None:
    """AssertionError unless f(*args, **kwargs) raises `exception_type`."""
    try:
        f(*args, **kwargs)
    except exception_type:
        return
    name = getattr(exception_type, "__name__", str(exception_type))
    raise AssertionError(f"{getattr(f, '__name__', f)!s} did not raise {name}")


def collapse_sum_like(a: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum `a` over the axes that broadcasting `shape` to a.shape added or stretched."""
    a = np.asarray(_np(a))
    shape = tuple(shape)
    extra = a.ndim - len(shape)
    if extra < 0 or any(s not in (1, d) for s, d in zip(shape, a.shape[extra:])):
        raise NNVMError(f"collapse_sum_like: shape {shape} does not broadcast to {a.shape}")
    if a.size == 0 or 0 in shape:
        return np.zeros(shape, dtype=a.dtype)
    axes = tuple(range(extra)) + tuple(
        extra + i for i, s in enumerate(shape) if s != a.shape[extra + i]
    )
    return np.sum(a, axis=axes).reshape(shape)
