"""What the GPU line-split tests share (test_argmax_gpu_rows.py, test_cumsum_gpu_scan.py,
test_line_split_gpu_columns.py): their data, NumPy's references, a small simulated device
for ops/_line_split_cuda.py's rules, and the launch checks.

The data are built to catch the orders the split kernels change: argmax lines of small
integers (ties everywhere) with NaNs in float lines and int64 values past 2**53; cumsum
data normal, dyadic (every partial sum exact in float64) or integer.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from fcompute_call import run_fcompute
from launch_spies import spy_block_launches

from nnvmpy.base import OpReqType
from nnvmpy.kernel import cuda as kcuda
from nnvmpy.ops import _line_split_cuda as split

SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
GRID_CAP = 4 if SIMULATOR else 10**9  # the simulator's grids are 4 blocks at most
EPS64 = np.finfo(np.float64).eps
W, A, N = OpReqType.kWriteTo, OpReqType.kAddTo, OpReqType.kNullOp

# argmax (dtype, req): each req in several dtypes; int64 lines hold values past 2**53
ARG_TYPES = [
    pytest.param(np.float16, W, id="float16-write"),
    pytest.param(np.float32, A, id="float32-add"),
    pytest.param(np.float64, N, id="float64-null"),
    pytest.param(np.float64, W, id="float64-write"),
    pytest.param(np.int64, A, id="int64-add"),
    pytest.param(np.int32, W, id="int32-write"),
]
# cumsum (input dtype, output dtype (the dtype param), sum_data kind, req)
SUM_TYPES = [
    pytest.param(np.float32, np.float32, "normal", W, id="float32-write"),
    pytest.param(np.float64, np.float64, "normal", A, id="float64-add"),
    pytest.param(np.float16, np.float16, "normal", W, id="float16-write"),
    pytest.param(np.float16, np.float16, "dyadic", A, id="float16-add-dyadic"),
    pytest.param(np.float64, np.float64, "normal", N, id="float64-null"),
    pytest.param(np.int32, np.int32, "int", A, id="int32-add"),
    pytest.param(np.int32, np.int64, "int", W, id="int32-to-int64-write"),
    pytest.param(np.int32, np.float32, "int", W, id="int32-to-float32-write"),
    # float data to an integer output: float64 prefixes, each truncated (as the CPU does)
    pytest.param(np.float32, np.int32, "dyadic", W, id="float32-to-int32-write"),
]


def small_gpu(
    monkeypatch: pytest.MonkeyPatch, slice_min: int = 4096, col_slice_min: int | None = None
) -> None:
    """A GPU of 2 SMs (8 blocks fill it: 4 a SM), slices of `slice_min` positions a block
    and `col_slice_min` a thread at least (default: the module's)."""
    monkeypatch.setattr(split, "SLICE_MIN", slice_min)
    if col_slice_min is not None:
        monkeypatch.setattr(split, "COL_SLICE_MIN", col_slice_min)
    monkeypatch.setattr(kcuda, "context_sm_count", lambda ctx, name: 2)


def lines_of(shape: Sequence[int], axis: int | None) -> tuple[int, int, int]:
    """(outer, n, inner) of shape's lines along axis (None: the flattened array)."""
    size = int(np.prod(shape))
    if axis is None:
        return 1, size, 1
    a = axis % len(shape)
    return int(np.prod(shape[:a])), shape[a], int(np.prod(shape[a + 1 :]))


def block_spy(
    monkeypatch: pytest.MonkeyPatch, module: Any, names: Sequence[str]
) -> list[tuple[str, int, int]]:
    """(kernel, blocks, threads) of every GPU launch, module's kernels by name, any other
    one as 'other'."""
    return spy_block_launches(monkeypatch, {k: getattr(module, k) for k in names}, other="other")


def check_launches(seen: list[tuple], want: list[tuple]) -> None:
    """seen launches match want's, each as far as want spells it (a name, blocks, ...)."""
    assert len(seen) == len(want), seen
    assert [s[: len(w)] for s, w in zip(seen, want, strict=True)] == want, seen


def arg_data(shape: tuple, dtype: Any, seed: int, axis: int | None = None) -> np.ndarray:
    """Small integers (ties everywhere); float lines get NaNs, one line is all NaN, one all
    equal; int64 values sit past 2**53, a few apart. With `axis`, the lines along it get
    those special lines (and late NaNs / late ties, see _plant); without, 2-d arrays get
    them as rows."""
    rng = np.random.default_rng(seed)
    x = rng.integers(-6, 7, shape).astype(np.float64)
    flat = x.reshape(-1)
    size = flat.size
    flat[: min(size, 40)] = 2.0  # a run of ties at the start
    floats = np.dtype(dtype).kind == "f"
    if floats:
        flat[rng.choice(size, size // 50 + 1, replace=False)] = np.nan
        if axis is None and x.ndim == 2 and x.shape[0] > 2:
            x[1] = np.nan
            x[2] = 1.0
    if axis is not None:
        _plant(np.moveaxis(x, axis, -1), floats)
    if floats:
        return x.astype(dtype)
    if dtype == np.int64:
        return (x.reshape(-1).astype(np.int64) + (1 << 60)).reshape(shape)
    return x.astype(dtype)


def _plant(lines: np.ndarray, floats: bool) -> None:
    """In place, lines[..., k] along the last axis: the first line all NaN (floats; else
    all equal), the second all equal, the third a max tied at mid and end behind (floats)
    a NaN late and one at the very end, the last its max and min at its last positions."""
    count, n = int(np.prod(lines.shape[:-1])), lines.shape[-1]
    at = [np.unravel_index(i, lines.shape[:-1]) for i in (0, 1, 2, count - 1)]
    lines[at[0]] = np.nan if floats else 4.0
    lines[at[1]] = 3.0
    third = lines[at[2]]
    third[:] = 1.0
    third[[n // 2, n - 2]] = 9.0
    third[[0, n // 3]] = -9.0
    if floats:
        third[[n - 3, n - 1]] = np.nan
    last = lines[at[3]]
    last[np.isnan(last)] = 0.0
    last[-2:] = [9.0, -9.0]


def want_arg(x: np.ndarray, axis: int | None, largest: bool) -> np.ndarray:
    """NumPy's argmax / argmin (the op's rules: first occurrence, first NaN), at least 1-d."""
    f = np.argmax if largest else np.argmin
    return np.atleast_1d(f(x) if axis is None else f(x, axis=axis))


def sum_data(shape: tuple, dtype: Any, kind: str, seed: int) -> np.ndarray:
    """'normal' (offset: the running sums grow, rounding matters), 'dyadic' (quarters:
    every partial sum exact in float64, and in float16 up to 2048) or 'int' data."""
    rng = np.random.default_rng(seed)
    if kind == "normal":
        x = rng.standard_normal(shape) + 0.25
    elif kind == "dyadic":
        x = rng.integers(-8, 9, shape) / 4
    else:
        x = rng.integers(-100, 101, shape)
    return x.astype(dtype)


def np_cumsum(x: np.ndarray, axis: int | None, reverse: bool) -> np.ndarray:
    """NumPy's cumsum (from the end when reverse), in x's shape for a backward."""
    if axis is None:
        f = x.reshape(-1)
        return (np.cumsum(f[::-1])[::-1] if reverse else np.cumsum(f)).reshape(x.shape)
    if reverse:
        return np.flip(np.cumsum(np.flip(x, axis), axis=axis), axis)
    return np.cumsum(x, axis=axis)


def check_cumsum(
    got: np.ndarray, x64: np.ndarray, start: np.ndarray, spec: tuple, cpu: np.ndarray
) -> None:
    """got (a GPU cumsum, spec = (axis, reverse, req, n)) against NumPy's float64 result
    (as req asks) and the CPU's (cpu).

    Both devices accumulate in float64 (int64 for integer outputs of integer inputs), the
    GPU in another order (per-thread runs, trees over threads, carries over slices), so
    integer results are exact, and so are float results of dyadic data. For random float
    data an element may differ from NumPy's float64 cumsum by the float64 reordering, at
    most n * eps64 * sum(|x|) (the classic bound for a sum of n terms), plus the one
    rounding to the output type, at most eps(dtype) * |value|; |value| <= |start| +
    sum(|x|) up to that element. The CPU's result, rounded as well (float16 through
    float32 first), may sit a rounding away on the other side: twice that against it."""
    axis, reverse, req, n = spec
    dtype = got.dtype
    run = np_cumsum(x64, axis, reverse).reshape(got.shape)
    if req == N:
        np.testing.assert_array_equal(got, start)
        np.testing.assert_array_equal(cpu, start)
        return
    add = req == A
    if dtype.kind in "iu":  # exact sums, each truncated (start added in int64)
        want = np.trunc(run).astype(np.int64)
        want = want + start.astype(np.int64) if add else want
        np.testing.assert_array_equal(got, want.astype(dtype))
        np.testing.assert_array_equal(got, cpu)
        return
    base = start.astype(np.float64) if add else 0.0
    want = base + run
    scale = np.abs(base) + np_cumsum(np.abs(x64), axis, reverse).reshape(got.shape)
    tol = (n * EPS64 + np.finfo(dtype).eps) * scale
    np.testing.assert_array_less(np.abs(got.astype(np.float64) - want), tol + 1e-300)
    np.testing.assert_array_less(np.abs(got.astype(np.float64) - cpu), 2 * tol + 1e-300)


def cumsum_both_ways(
    shape: tuple, axis: int | None, types: tuple, req: OpReqType, seed: int, *spies: list
) -> tuple[tuple[list, ...], tuple[list, ...]]:
    """cumsum of x (types = (input dtype, output dtype, sum_data kind)) and its backward
    (dy of the output's dtype and shape) on the GPU, each checked against NumPy and the
    CPU with req on random starts; what each spy list recorded during each GPU call."""
    in_dtype, out_dtype, kind = types
    params = {"dtype": np.dtype(out_dtype).name, **({} if axis is None else {"axis": axis})}
    n = lines_of(shape, axis)[1]
    out_shape = (int(np.prod(shape)),) if axis is None else shape
    rng = np.random.default_rng(11)
    seen = []
    for name, src, dst, src_shape, dst_shape, reverse in (
        ("cumsum", in_dtype, out_dtype, shape, out_shape, False),
        ("_backward_cumsum", out_dtype, in_dtype, out_shape, shape, True),
    ):
        x = sum_data(src_shape, src, kind, seed=seed + reverse)
        start = rng.integers(-3, 4, dst_shape).astype(dst)
        for spy in spies:
            spy.clear()
        (got,) = run_fcompute(name, params, [x], [start], [req], "gpu")
        seen.append(tuple(list(spy) for spy in spies))
        (cpu,) = run_fcompute(name, params, [x], [start], [req], "cpu")
        assert got.dtype == dst
        x64 = x.astype(np.float64).reshape(dst_shape)
        check_cumsum(got, x64, start, (axis, reverse, req, n), cpu)
    return seen[0], seen[1]
