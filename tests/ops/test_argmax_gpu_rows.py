"""argmax, argmin and argmax_channel on the GPU's block paths (ops/_argmax_cuda.py), against
NumPy's np.argmax / np.argmin, which share the op's rules: the first occurrence wins a tie
and the first NaN beats every number (for argmin too).

Lines near the last axis (inner < 32, 32 elements or more) take a block each, or S blocks
each writing a best position per slice that a thread per line then merges in slice
order, when the lines are too few to fill the device; shorter lines and inner >= 32 keep
argmax.py's thread per line. The data are small integers (ties everywhere), with NaNs in
float lines, and int64 values past 2**53 (which a float64 value would round together).
FCompute is called directly, as the executor would, so write, add and null requests can
be checked. The simulated GPU has SIM_SM_COUNT (2) SMs, so that 8 blocks fill it, and
SLICE_MIN is lowered where a case wants tiny lines split.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest
from fcompute_call import run_fcompute
from launch_spies import spy_block_launches

import nnvmpy as nv
from nnvmpy.base import InferError, OpReqType
from nnvmpy.ops import _argmax_cuda as arg_cuda

pytestmark = pytest.mark.gpu

SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
W, A, N = OpReqType.kWriteTo, OpReqType.kAddTo, OpReqType.kNullOp
KERNELS = ("_arg_block_cuda", "_arg_slices_cuda", "_arg_merge_cuda")

# id -> (shape, axis (None: flattened), SLICE_MIN, path); the slice counts are the
# simulator's (32 threads a block; a GPU's 256-thread slices may be fewer)
CASES = {
    # 5 lines of 300 (under the 8 blocks that fill the GPU, but too short to split)
    "block-per-line": ((5, 300), 1, 4096, "block"),
    # 9 lines of 33 fill the device: a block of 64 (simulator: 32) threads each
    "block-odd-length": ((9, 33), -1, 16, "block"),
    # 2 lines of 1000 in 4 slices of 256 (the last 232)
    "split-last-axis": ((2, 1000), -1, 64, "split"),
    # the flattened array, 1001 elements: 8 slices of 128 (the last 105)
    "split-axis-none": ((7, 13, 11), None, 64, "split"),
    # inner 3: 3 lines of 500, 3 slices of 192 (the last 116), lines strided by 3
    "split-inner-3": ((1, 500, 3), 1, 64, "split"),
    # inner 3 with 12 lines: a block each
    "block-inner-3": ((4, 100, 3), 1, 64, "block"),
    # lines of 20: a thread each
    "short-lines": ((6, 20), 1, 64, "thread"),
    # inner 40: neighbouring lines are neighbours in memory, a thread each
    "inner-40": ((3, 50, 40), 1, 64, "thread"),
}
# (dtype, req): each req in several dtypes; int64 lines hold values past 2**53
DTYPE_REQS = [
    pytest.param(np.float16, W, id="float16-write"),
    pytest.param(np.float32, A, id="float32-add"),
    pytest.param(np.float64, N, id="float64-null"),
    pytest.param(np.float64, W, id="float64-write"),
    pytest.param(np.int64, A, id="int64-add"),
    pytest.param(np.int32, W, id="int32-write"),
]


@pytest.fixture
def launches(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int, int]]:
    """(kernel, blocks, threads) of every GPU launch (other kernels named 'other')."""
    kernels = {k: getattr(arg_cuda, k) for k in KERNELS}
    return spy_block_launches(monkeypatch, kernels, other="other")


def _data(shape: tuple, dtype: Any, seed: int) -> np.ndarray:
    """Small integers (ties everywhere); float lines get NaNs, one line is all NaN, one all
    equal; int64 values sit past 2**53, a few apart."""
    rng = np.random.default_rng(seed)
    x = rng.integers(-6, 7, shape).astype(np.float64)
    flat = x.reshape(-1)
    size = flat.size
    flat[: min(size, 40)] = 2.0  # a run of ties at the start
    if np.dtype(dtype).kind == "f":
        flat[rng.choice(size, size // 50 + 1, replace=False)] = np.nan
        if x.ndim == 2 and x.shape[0] > 2:
            x[1] = np.nan
            x[2] = 1.0
        return x.astype(dtype)
    if dtype == np.int64:
        return (flat.astype(np.int64) + (1 << 60)).reshape(shape)
    return x.astype(dtype)


def _want(x: np.ndarray, axis: int | None, largest: bool) -> np.ndarray:
    f = np.argmax if largest else np.argmin
    return np.atleast_1d(f(x) if axis is None else f(x, axis=axis))


def _setup(monkeypatch: pytest.MonkeyPatch, slice_min: int) -> None:
    monkeypatch.setattr(arg_cuda, "SLICE_MIN", slice_min)
    monkeypatch.setattr(arg_cuda, "_sm_count", lambda ctx, name: 2)  # 8 blocks fill it


def _expected(shape: tuple, axis: int | None, path: str) -> list[tuple]:
    """(kernel, blocks, threads) of one call's launches, the merge's name only: a block
    per line, S blocks per line (S > 1, as line_split plans it) and the merge, or
    argmax.py's thread per line (name only)."""
    size = int(np.prod(shape))
    n = size if axis is None else shape[axis]
    lines = size // n
    if path == "thread":
        return [("other",)]
    cap = 4 if SIMULATOR else 10**9  # the simulator's grids are 4 blocks at most
    S, _, threads = arg_cuda.line_split(nv.gpu(0), "argmax", lines, n, 1)
    if path == "block":
        assert S == 1
        return [("_arg_block_cuda", min(lines, cap), threads)]
    assert S > 1
    return [("_arg_slices_cuda", min(lines * S, cap), threads), ("_arg_merge_cuda",)]


@pytest.mark.parametrize(("dtype", "req"), DTYPE_REQS)
@pytest.mark.parametrize("case", list(CASES))
def test_lines_match_numpy(
    case: str, dtype: Any, req: OpReqType, monkeypatch: pytest.MonkeyPatch,
    launches: list[tuple[str, int, int]],
) -> None:  # fmt: skip
    shape, axis, slice_min, path = CASES[case]
    _setup(monkeypatch, slice_min)
    x = _data(shape, dtype, seed=len(case))
    params = {} if axis is None else {"axis": axis}
    for op, largest in (("argmax", True), ("argmin", False)):
        want = _want(x, axis, largest)
        start = np.random.default_rng(3).integers(0, 5, want.shape).astype(dtype)
        launches.clear()
        (got,) = run_fcompute(op, params, [x], [start], [req], "gpu")
        assert got.dtype == dtype
        expect = {W: want, A: start.astype(np.int64) + want, N: start}[req]
        np.testing.assert_array_equal(got.astype(np.int64), expect, err_msg=f"{op} {req}")
        # the CPU path agrees on the same input
        (cpu,) = run_fcompute(op, params, [x], [start], [req], "cpu")
        np.testing.assert_array_equal(got, cpu, err_msg=f"{op} {req}: cpu")
        if req == N:
            assert launches == []
            continue
        want_launches = _expected(shape, axis, path)
        assert len(launches) == len(want_launches), (op, launches)
        seen = [t[: len(e)] for t, e in zip(launches, want_launches, strict=True)]
        assert seen == want_launches, (op, launches)


def test_argmax_channel_and_uint8_on_a_block_per_line(
    monkeypatch: pytest.MonkeyPatch, launches: list[tuple[str, int, int]]
) -> None:
    """argmax_channel (axis 1) of (2, 200, 1) uint8, indices up to 199; a block per line."""
    _setup(monkeypatch, 4096)
    x = np.random.default_rng(5).integers(0, 250, (2, 200, 1)).astype(np.uint8)
    x[0, 150, 0] = x[0, 170, 0] = 255  # a tie at the top: the first wins
    (got,) = run_fcompute("argmax_channel", {}, [x], [np.zeros((2, 1), np.uint8)], [W], "gpu")
    assert got.dtype == np.uint8
    np.testing.assert_array_equal(got, np.argmax(x, axis=1))
    assert got[0, 0] == 150
    assert [t[0] for t in launches] == ["_arg_block_cuda"]


def test_one_line_over_many_blocks_ends_with_the_first_nan_and_the_first_tie(
    monkeypatch: pytest.MonkeyPatch, launches: list[tuple[str, int, int]]
) -> None:
    """The flattened array split in slices: the extreme's first occurrence and the first
    NaN lie in late slices, behind ties and NaNs of later slices."""
    _setup(monkeypatch, 32)
    x = np.ones(900, np.float32)
    x[[700, 300, 850]] = 5.0
    x[[500, 820]] = -1.0
    for op, f in (("argmax", np.argmax), ("argmin", np.argmin)):
        (got,) = run_fcompute(op, {}, [x], [np.zeros(1, np.float32)], [W], "gpu")
        assert got[0] == f(x), op
    y = x.copy()
    y[[640, 899, 641]] = np.nan
    for op in ("argmax", "argmin"):
        (got,) = run_fcompute(op, {}, [y], [np.zeros(1, np.float32)], [W], "gpu")
        assert got[0] == 640, op
    assert {t[0] for t in launches} == {"_arg_slices_cuda", "_arg_merge_cuda"}


def test_the_nd_front_end_and_bad_input_on_the_gpu() -> None:
    """Through nd on a GPU context: keepdims shapes, and the documented errors."""
    x = np.random.default_rng(7).standard_normal((3, 4, 50)).astype(np.float32)
    g = nv.nd.array(x, ctx=nv.gpu(0))
    got = nv.nd.argmin(g, axis=-1, keepdims=True)
    assert got.shape == (3, 4, 1)
    np.testing.assert_array_equal(got.asnumpy()[..., 0], np.argmin(x, axis=-1))
    np.testing.assert_array_equal(nv.nd.argmax(g).asnumpy(), [np.argmax(x)])
    with pytest.raises(InferError, match=r"argmax: axis 3 is out of range"):
        nv.nd.argmax(g, axis=3)
    with pytest.raises(InferError, match=r"argmin: cannot reduce over axis 1 of size 0"):
        nv.nd.argmin(nv.nd.array(np.zeros((2, 0)), ctx=nv.gpu(0)), axis=1)


def test_the_split_rule_on_hardware_sizes(monkeypatch: pytest.MonkeyPatch) -> None:
    """S per line on a 132-SM GPU (4 blocks per SM wanted): (8, 10**6) along axis 1 and a
    flattened 10**7 split; 4096 rows of a 30k vocabulary fill the device a block each."""
    monkeypatch.setattr(arg_cuda, "BLOCKS_PER_SM", 4)
    monkeypatch.setattr(arg_cuda, "SLICE_MIN", 4096)
    assert arg_cuda.line_slices(8, 10**6, 132) == 66  # 528 blocks
    assert arg_cuda.line_slices(1, 10**7, 132) == 528
    assert arg_cuda.line_slices(1, 12000, 132) == 2  # capped by SLICE_MIN
    assert arg_cuda.line_slices(4096, 30000, 132) == 1
    assert arg_cuda.line_slices(3, 5000, 132) == 1  # under two slices of SLICE_MIN
