"""argmax, argmin, argmax_channel and cumsum (forward and backward) on the GPU where the
lines lie inner >= 32 apart and are too few to fill the device: n cut into S slices
(ops/_line_split_cuda.column_split), a thread per (line, slice), then a thread per line
merging its S best positions (argmax) or scanning its S slice sums into carries before
each slice is rescanned from its carry (cumsum). Against NumPy and the CPU path on the
same inputs, with write, add and null requests (FCompute called directly).

The simulated GPU has 2 SMs of 32-thread blocks (256 threads fill it) and slices of at
least 8 positions here, so that small shapes split: S = min(ceil(256 / lines), n // 8,
isqrt(n)). The argmax data put ties across slices, the first NaN and a tied maximum in
late slices, all-NaN and all-equal lines, and int64 values past 2**53; the cumsum data
are normal, dyadic or integer (line_data). Launch spies check which kernels ran and
over how many items (lines * S), and that many lines or short lines keep the thread per
line.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from fcompute_call import run_fcompute
from launch_spies import spy_block_launches, spy_item_launches
from line_data import (
    ARG_TYPES,
    SIMULATOR,
    SUM_TYPES,
    A,
    N,
    W,
    arg_data,
    check_launches,
    cumsum_both_ways,
    lines_of,
    small_gpu,
    want_arg,
)

import nnvmpy as nv
from nnvmpy.base import InferError, OpReqType
from nnvmpy.kernel import cuda as kcuda
from nnvmpy.ops import _argmax_cuda as arg_cuda
from nnvmpy.ops import _cumsum_cuda as scan_cuda
from nnvmpy.ops import _line_split_cuda as split

pytestmark = [pytest.mark.gpu, pytest.mark.sim_barriers]

ARG_KERNELS = ("_arg_columns_cuda", "_arg_merge_cuda")
SUM_KERNELS = ("_cumsum_col_sums_cuda", "_cumsum_carries_cuda", "_cumsum_col_scan_cuda")

# id -> (shape, axis, S on the simulator, 0: a thread per line)
CASES = {
    # 40 lines of 300: 7 slices of 43 (the last 42)
    "one-row-inner-40": ((1, 300, 40), 1, 7),
    # 66 lines of 97 (inner 33: a warp and one more line a row): 4 slices of 25 (the last 22)
    "odd-inner-33": ((2, 97, 33), 1, 4),
    # a 2-d array along axis 0, 48 lines of 120: 6 slices of 20
    "axis-0-of-2d": ((120, 48), 0, 6),
    # inner 4 * 8 = 32 lines of 64 for each of 2 rows: 4 slices of 16 (isqrt(64) = 8)
    "inner-32-of-4d": ((2, 64, 4, 8), 1, 4),
    # 320 lines fill the device: a thread each
    "many-lines": ((2, 97, 160), 1, 0),
    # 40 lines of 12: under two slices of 8, a thread each
    "short-lines": ((1, 12, 40), 1, 0),
}


@pytest.fixture
def spies(monkeypatch: pytest.MonkeyPatch) -> tuple[list[tuple], list[int]]:
    """(kernel name, blocks, threads) of every GPU launch (others as 'other'), and the
    item counts the column kernels were launched for, in order."""
    small_gpu(monkeypatch, col_slice_min=8)
    kernels = {k: getattr(arg_cuda, k) for k in ARG_KERNELS}
    kernels.update({k: getattr(scan_cuda, k) for k in SUM_KERNELS})
    names = spy_block_launches(monkeypatch, kernels, other="other")
    return names, spy_item_launches(monkeypatch, *kernels.values())


def _slices(shape: tuple, axis: int, sim_s: int) -> tuple[int, int]:
    """(lines, S): column_split's S, checked against the simulator's expected one (and S
    = 1 where sim_s says a thread per line)."""
    layout = lines_of(shape, axis)
    count, chunk = split.column_split(nv.gpu(0), "test", layout)
    if SIMULATOR:
        assert count == max(sim_s, 1), (count, chunk)
    if count > 1:
        assert (count - 1) * chunk < layout[1] <= count * chunk  # no slice empty
    return layout[0] * layout[2], count


def _want_launches(kernels: tuple[str, ...], lines: int, S: int) -> tuple[list, list]:
    """The launches' names and item counts: the column kernels (items lines * S for a
    slice kernel, lines for a per-line one), or a thread per line ('other')."""
    if S == 1:
        return [("other",)], []
    per_line = ("_arg_merge_cuda", "_cumsum_carries_cuda")
    items = [lines if k in per_line else lines * S for k in kernels]
    return [(k,) for k in kernels], items


def _reset(spies: tuple[list, list]) -> None:
    spies[0].clear()
    spies[1].clear()


@pytest.mark.parametrize(("dtype", "req"), ARG_TYPES)
@pytest.mark.parametrize("case", list(CASES))
def test_argmax_and_argmin_slices_match_numpy(
    case: str, dtype: Any, req: OpReqType, spies: tuple[list, list]
) -> None:
    shape, axis, sim_s = CASES[case]
    lines, S = _slices(shape, axis, sim_s)
    x = arg_data(shape, dtype, seed=len(case), axis=axis)
    for op, largest in (("argmax", True), ("argmin", False)):
        want = want_arg(x, axis, largest)
        start = np.random.default_rng(3).integers(0, 5, want.shape).astype(dtype)
        _reset(spies)
        (got,) = run_fcompute(op, {"axis": axis}, [x], [start], [req], "gpu")
        assert got.dtype == dtype
        expect = {W: want, A: start.astype(np.int64) + want, N: start}[req]
        np.testing.assert_array_equal(got.astype(np.int64), expect, err_msg=f"{op} {req}")
        (cpu,) = run_fcompute(op, {"axis": axis}, [x], [start], [req], "cpu")
        np.testing.assert_array_equal(got, cpu, err_msg=f"{op} {req}: cpu")
        names, items = _want_launches(ARG_KERNELS, lines, S)
        check_launches(spies[0], [] if req == N else names)
        assert spies[1] == ([] if req == N else items)


def test_planted_lines_find_late_nans_and_first_ties(spies: tuple[list, list]) -> None:
    """The planted lines of (1, 300, 40) along axis 1 (7 slices of 43): all NaN -> 0, all
    equal -> 0, a max tied at 150 and 298 behind NaNs at 297 and 299 -> 297 (float) or
    150 (int), and the last line's max and min at 298 and 299."""
    for dtype, third in ((np.float32, (297, 297)), (np.int64, (150, 0))):
        x = arg_data((1, 300, 40), dtype, seed=1, axis=1)
        for op, want in (("argmax", third[0]), ("argmin", third[1])):
            (got,) = run_fcompute(op, {"axis": 1}, [x], [np.zeros((1, 40), dtype)], [W], "gpu")
            assert list(got[0, :3]) == [0, 0, want], (dtype, op)
            assert got[0, -1] == (298 if op == "argmax" else 299), (dtype, op)
    assert {t[0] for t in spies[0]} == set(ARG_KERNELS)


def test_argmax_channel_keepdims_and_the_nd_front_end(spies: tuple[list, list]) -> None:
    """argmax_channel of (2, 200, 40) uint8 (80 lines: 4 slices of 50), and keepdims
    argmax / argmin through nd on a GPU context; the documented errors stay."""
    x = np.random.default_rng(5).integers(0, 250, (2, 200, 40)).astype(np.uint8)
    x[0, 120, 3] = x[0, 170, 3] = x[0, 190, 3] = 255  # a tie at the top: the first wins
    (got,) = run_fcompute("argmax_channel", {}, [x], [np.zeros((2, 40), np.uint8)], [W], "gpu")
    np.testing.assert_array_equal(got, np.argmax(x, axis=1))
    assert got[0, 3] == 120
    if SIMULATOR:
        assert spies[1] == [80 * 4, 80]
    y = arg_data((3, 100, 36), np.float32, seed=9, axis=1)
    g = nv.nd.array(y, ctx=nv.gpu(0))
    for op, f in ((nv.nd.argmax, np.argmax), (nv.nd.argmin, np.argmin)):
        out = op(g, axis=1, keepdims=True)
        assert out.shape == (3, 1, 36)
        np.testing.assert_array_equal(out.asnumpy()[:, 0], f(y, axis=1))
    assert "_arg_columns_cuda" in {t[0] for t in spies[0]}
    with pytest.raises(InferError, match=r"argmax: axis 3 is out of range"):
        nv.nd.argmax(g, axis=3)
    with pytest.raises(InferError, match=r"argmin: cannot reduce over axis 1 of size 0"):
        nv.nd.argmin(nv.nd.array(np.zeros((2, 0, 40)), ctx=nv.gpu(0)), axis=1)


@pytest.mark.parametrize(("in_dtype", "out_dtype", "kind", "req"), SUM_TYPES)
@pytest.mark.parametrize("case", list(CASES))
def test_cumsum_slices_match_numpy_and_the_cpu(
    case: str, in_dtype: Any, out_dtype: Any, kind: str, req: OpReqType,
    spies: tuple[list, list],
) -> None:  # fmt: skip
    shape, axis, sim_s = CASES[case]
    lines, S = _slices(shape, axis, sim_s)
    types = (in_dtype, out_dtype, kind)
    forward, backward = cumsum_both_ways(shape, axis, types, req, len(case), *spies)
    names, items = _want_launches(SUM_KERNELS, lines, S)
    for seen in (forward, backward):
        check_launches(seen[0], [] if req == N else names)
        assert seen[1] == ([] if req == N else items)


def test_long_lines_of_64_split_on_a_larger_device(
    monkeypatch: pytest.MonkeyPatch, spies: tuple[list, list]
) -> None:
    """(3, 58, 64) along axis 1 on 8 simulated SMs (1024 threads fill it) with slices of 8
    positions at least: 192 lines in 6 slices of 10 (the last 8); argmax, argmin, cumsum
    and its backward."""
    monkeypatch.setattr(kcuda, "context_sm_count", lambda ctx, name: 8)
    monkeypatch.setattr(split, "COL_SLICE_MIN", 8)
    shape = (3, 58, 64)
    lines, S = _slices(shape, 1, 6)
    x = arg_data(shape, np.float32, seed=4, axis=1)
    for op, largest in (("argmax", True), ("argmin", False)):
        (got,) = run_fcompute(op, {"axis": 1}, [x], [np.ones((3, 64), np.float32)], [A], "gpu")
        np.testing.assert_array_equal(got, want_arg(x, 1, largest) + 1, err_msg=op)
    forward, backward = cumsum_both_ways(shape, 1, (np.int32, np.int32, "int"), W, 4, *spies)
    names, items = _want_launches(SUM_KERNELS, lines, S)
    for seen in (forward, backward):
        check_launches(seen[0], names)
        assert seen[1] == items


def test_the_split_rule_on_hardware_sizes(monkeypatch: pytest.MonkeyPatch) -> None:
    """S per line on a 132-SM GPU of 256-thread blocks (4 blocks per SM wanted: 135168
    threads): 32 lines of 10**6 in 1000 slices (S <= isqrt(n)), 256 of 10**5 in 316,
    none where the lines fill the device or are under two slices of COL_SLICE_MIN."""
    monkeypatch.setattr(split, "BLOCKS_PER_SM", 4)
    monkeypatch.setattr(split, "COL_SLICE_MIN", 64)
    assert split.column_slices(32, 10**6, 132, 256) == 1000  # (1, 10**6, 32) along axis 1
    assert split.column_slices(256, 10**5, 132, 256) == 316  # (4, 10**5, 64) along axis 1
    assert split.column_slices(8192, 10**4, 132, 256) == 17  # (8, 10**4, 1024): want / lines
    assert split.column_slices(40, 200, 132, 256) == 3  # capped by COL_SLICE_MIN
    assert split.column_slices(135168, 10**4, 132, 256) == 1
    assert split.column_slices(120, 50, 132, 256) == 1
