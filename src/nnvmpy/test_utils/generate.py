"""Test inputs as MXNet's test_utils makes them: random arrays and shapes, the test device.

The random helpers draw from NumPy's global generator, as MXNet's do, so a test seeded
with `np.random.seed` (MXNet's `with_seed`) sees the same inputs on every run.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..base import Context, NNVMError, current_context, set_default_ctx


def default_context() -> Context:
    """The device tests run on: the current context (cpu(0) unless set)."""
    return current_context()


def set_default_context(ctx: Context) -> None:
    """Make `ctx` the default device of this thread (outside `with ctx:` blocks)."""
    set_default_ctx(ctx)


def default_dtype() -> type:
    """The dtype test inputs default to (float32, MXNet's real type)."""
    return np.float32


def _shape(where: str, shape: Any) -> tuple[int, ...]:
    if isinstance(shape, int | np.integer):
        shape = (shape,)
    try:
        dims = tuple(operator.index(d) for d in shape)
    except TypeError:
        raise NNVMError(f"{where}: a shape must be a tuple of ints, got {shape!r}") from None
    if any(d < 0 for d in dims):
        raise NNVMError(f"{where}: a shape cannot have negative dimensions, got {dims}")
    return dims


def random_arrays(*shapes: Any) -> Any:
    """Standard-normal float32 arrays, one per shape (a single array for a single shape)."""
    arrays: list[np.ndarray] = []
    for s in shapes:
        dims = _shape("random_arrays", s)
        value = np.random.randn(*dims)  # noqa: NPY002 - the seeded global generator, as MXNet
        arrays.append(np.asarray(value, dtype=default_dtype()))
    return arrays[0] if len(arrays) == 1 else arrays


def random_uniform_arrays(
    *shapes: Any, low: float = 0.0, high: float = 1.0, dtype: Any = None
) -> list[np.ndarray]:
    """U(low, high) arrays, one per shape, in `dtype` (float32 by default)."""
    if not low <= high:
        raise NNVMError(f"random_uniform_arrays: expects low <= high, got low={low}, high={high}")
    dtype = default_dtype() if dtype is None else dtype
    return [
        np.random.uniform(low, high, size=_shape("random_uniform_arrays", s)).astype(dtype)  # noqa: NPY002
        for s in shapes
    ]


def random_sample(population: Sequence[Any], k: int) -> list[Any]:
    """k distinct elements of `population` in random order."""
    if not isinstance(k, int | np.integer) or not 0 <= k <= len(population):
        raise NNVMError(f"random_sample: k expects an int in [0, {len(population)}], got {k!r}")
    order = np.random.permutation(len(population))  # noqa: NPY002
    return [population[int(i)] for i in order[: int(k)]]


def rand_ndarray(
    shape: Any,
    stype: str = "default",
    density: float | None = None,
    dtype: Any = None,
    modifier_func: Callable[[Any], Any] | None = None,
    shuffle_csr_indices: bool = False,
    distribution: str | None = None,
    ctx: Context | None = None,
) -> Any:
    """A standard-normal NDArray of `shape` on `ctx` (dense storage only)."""
    from nnvmpy import nd

    if stype != "default":
        raise NNVMError(
            f"rand_ndarray: stype {stype!r} is not supported; nnvmpy has dense storage only "
            "(expected 'default')"
        )
    values = random_arrays(_shape("rand_ndarray", shape))
    if modifier_func is not None:
        values = np.vectorize(modifier_func, otypes=[values.dtype])(values)
    return nd.array(values, ctx=ctx or default_context(), dtype=dtype)


def _check_dim(where: str, name: str, dim: Any, low: int) -> int:
    try:
        value = operator.index(dim)
    except TypeError:
        raise NNVMError(f"{where}: {name} expects an int, got {dim!r}") from None
    if value < low:
        raise NNVMError(f"{where}: {name} must be >= {low}, got {value}")
    return value


def rand_shape_2d(dim0: int = 10, dim1: int = 10, allow_zero_size: bool = False) -> tuple[int, int]:
    """A random 2-D shape with dimensions in [1, dim] ([0, dim] with allow_zero_size)."""
    low = 0 if allow_zero_size else 1
    d0 = _check_dim("rand_shape_2d", "dim0", dim0, low)
    d1 = _check_dim("rand_shape_2d", "dim1", dim1, low)
    return int(np.random.randint(low, d0 + 1)), int(np.random.randint(low, d1 + 1))  # noqa: NPY002


def rand_shape_3d(
    dim0: int = 10, dim1: int = 10, dim2: int = 10, allow_zero_size: bool = False
) -> tuple[int, int, int]:
    """A random 3-D shape with dimensions in [1, dim] ([0, dim] with allow_zero_size)."""
    low = 0 if allow_zero_size else 1
    dims = [
        _check_dim("rand_shape_3d", f"dim{i}", d, low) for i, d in enumerate((dim0, dim1, dim2))
    ]
    d0, d1, d2 = (int(np.random.randint(low, d + 1)) for d in dims)  # noqa: NPY002
    return d0, d1, d2


def rand_shape_nd(num_dim: int, dim: int = 10, allow_zero_size: bool = False) -> tuple[int, ...]:
    """A random shape of `num_dim` dimensions, each in [1, dim] ([0, dim] with allow_zero_size)."""
    low = 0 if allow_zero_size else 1
    n = _check_dim("rand_shape_nd", "num_dim", num_dim, 0)
    top = _check_dim("rand_shape_nd", "dim", dim, low)
    return tuple(int(d) for d in np.random.randint(low, top + 1, size=n))  # noqa: NPY002


def rand_coord_2d(x_low: int, x_high: int, y_low: int, y_high: int) -> tuple[int, int]:
    """A random (x, y) with x_low <= x < x_high and y_low <= y < y_high."""
    if x_low >= x_high or y_low >= y_high:
        raise NNVMError(
            f"rand_coord_2d: expects x_low < x_high and y_low < y_high, got "
            f"x [{x_low}, {x_high}), y [{y_low}, {y_high})"
        )
    x = np.random.randint(x_low, x_high, dtype=np.int64)  # noqa: NPY002
    y = np.random.randint(y_low, y_high, dtype=np.int64)  # noqa: NPY002
    return int(x), int(y)


def np_reduce(
    dat: np.ndarray, axis: Any, keepdims: bool, numpy_reduce_func: Callable[..., Any]
) -> np.ndarray:
    """Reduce over several axes with a one-axis reducer (np.argmax...), highest axis first."""
    dat = np.asarray(dat)
    if axis is None:
        axes = list(range(dat.ndim))
    elif isinstance(axis, int | np.integer):
        axes = [int(axis)]
    else:
        axes = [int(a) for a in axis]
    normalized = []
    for a in axes:
        if not -dat.ndim <= a < max(dat.ndim, 1):
            raise NNVMError(
                f"np_reduce: axis {a} is out of range for an array of {dat.ndim} dimensions"
            )
        normalized.append(a % dat.ndim if dat.ndim else 0)
    ret = dat
    for a in sorted(set(normalized), reverse=True):
        ret = numpy_reduce_func(ret, axis=a)
    if keepdims:
        kept = [1 if i in normalized else d for i, d in enumerate(dat.shape)]
        ret = np.asarray(ret).reshape(kept)
    return ret


def assign_each(the_input: np.ndarray, function: Callable[[Any], Any] | None) -> np.ndarray:
    """function applied to every element (a float64 array); a copy when function is None."""
    if function is None:
        return np.array(the_input)
    return np.vectorize(function, otypes=[np.float64])(np.asarray(the_input))


def assign_each2(
    input1: np.ndarray, input2: np.ndarray, function: Callable[[Any, Any], Any] | None
) -> np.ndarray:
    """function applied to every pair of elements (a float64 array)."""
    if function is None:
        return np.array(input1)
    if np.shape(input1) != np.shape(input2):
        raise NNVMError(f"assign_each2: shapes {np.shape(input1)} and {np.shape(input2)} differ")
    return np.vectorize(function, otypes=[np.float64])(np.asarray(input1), np.asarray(input2))


def list_gpus() -> range:
    """range(number of GPUs)."""
    from nnvmpy.base import num_gpus

    return range(num_gpus())
