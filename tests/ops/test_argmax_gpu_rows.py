"""argmax, argmin and argmax_channel on the GPU's block paths (ops/_argmax_cuda.py), against
NumPy's np.argmax / np.argmin, which share the op's rules: the first occurrence wins a tie
and the first NaN beats every number (for argmin too).

Lines near the last axis (inner < 32, 32 elements or more) take a block each, or S blocks
each writing a best position per slice that a thread per line then merges in slice
order, when the lines are too few to fill the device; shorter lines keep argmax.py's
thread per line (inner >= 32: test_line_split_gpu_columns.py). The data are small
integers (ties everywhere), with NaNs in float lines, and int64 values past 2**53 (which a
float64 value would round together). FCompute is called directly, as the executor
would, so write, add and null requests can be checked. The simulated GPU has SIM_SM_COUNT
(2) SMs, so that 8 blocks fill it, and SLICE_MIN is lowered where a case wants tiny lines
split.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from fcompute_call import run_fcompute
from line_data import (
    ARG_TYPES,
    GRID_CAP,
    A,
    N,
    W,
    arg_data,
    block_spy,
    check_launches,
    lines_of,
    small_gpu,
    want_arg,
)

import nnvmpy as nv
from nnvmpy.base import InferError, OpReqType
from nnvmpy.ops import _argmax_cuda as arg_cuda
from nnvmpy.ops import _line_split_cuda as split

pytestmark = [pytest.mark.gpu, pytest.mark.sim_barriers]

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
    # inner 40: neighbouring lines are neighbours in memory; 50 positions are too few to
    # cut into slices (_line_split_cuda.COL_SLICE_MIN), so a thread each
    "inner-40": ((3, 50, 40), 1, 64, "thread"),
}


@pytest.fixture
def launches(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int, int]]:
    """(kernel, blocks, threads) of every GPU launch (other kernels named 'other')."""
    return block_spy(monkeypatch, arg_cuda, KERNELS)


def _expected(shape: tuple, axis: int | None, path: str) -> list[tuple]:
    """(kernel, blocks, threads) of one call's launches, the merge's name only: a block
    per line, S blocks per line (S > 1, as line_split plans it) and the merge, or
    argmax.py's thread per line (name only)."""
    outer, n, inner = lines_of(shape, axis)
    lines = outer * inner
    if path == "thread":
        return [("other",)]
    S, _, threads = split.line_split(nv.gpu(0), "argmax", lines, n, 1)
    if path == "block":
        assert S == 1
        return [("_arg_block_cuda", min(lines, GRID_CAP), threads)]
    assert S > 1
    return [("_arg_slices_cuda", min(lines * S, GRID_CAP), threads), ("_arg_merge_cuda",)]


@pytest.mark.parametrize(("dtype", "req"), ARG_TYPES)
@pytest.mark.parametrize("case", list(CASES))
def test_lines_match_numpy(
    case: str, dtype: Any, req: OpReqType, monkeypatch: pytest.MonkeyPatch,
    launches: list[tuple[str, int, int]],
) -> None:  # fmt: skip
    shape, axis, slice_min, path = CASES[case]
    small_gpu(monkeypatch, slice_min)
    x = arg_data(shape, dtype, seed=len(case))
    params = {} if axis is None else {"axis": axis}
    for op, largest in (("argmax", True), ("argmin", False)):
        want = want_arg(x, axis, largest)
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
        check_launches(launches, _expected(shape, axis, path))


def test_argmax_channel_and_uint8_on_a_block_per_line(
    monkeypatch: pytest.MonkeyPatch, launches: list[tuple[str, int, int]]
) -> None:
    """argmax_channel (axis 1) of (2, 200, 1) uint8, indices up to 199; a block per line."""
    small_gpu(monkeypatch, 4096)
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
    small_gpu(monkeypatch, 32)
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
    monkeypatch.setattr(split, "BLOCKS_PER_SM", 4)
    monkeypatch.setattr(split, "SLICE_MIN", 4096)
    assert split.line_slices(8, 10**6, 132) == 66  # 528 blocks
    assert split.line_slices(1, 10**7, 132) == 528
    assert split.line_slices(1, 12000, 132) == 2  # capped by SLICE_MIN
    assert split.line_slices(4096, 30000, 132) == 1
    assert split.line_slices(3, 5000, 132) == 1  # under two slices of SLICE_MIN
