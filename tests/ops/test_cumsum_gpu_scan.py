"""cumsum and _backward_cumsum on the GPU's parallel scan (ops/_cumsum_cuda.py), against
NumPy's cumsum in float64 and against the CPU path on the same inputs.

Lines near the last axis (inner < 32, 32 elements or more) are scanned by a block each,
or, when too few to fill the device, by S blocks each: slice sums, a thread per line
scanning them into carries, then each slice scanned from its carry. Shorter lines keep
cumsum.py's thread per line (inner >= 32: test_line_split_gpu_columns.py). FCompute is
called directly, as the executor would, so write, add and null requests can be checked.
The simulated GPU has SIM_SM_COUNT (2) SMs, so that 8 blocks fill it, and SLICE_MIN is
lowered where a case wants tiny lines split.

Tolerance: line_data.check_cumsum (exact for integers and dyadic data, else the float64
reordering bound plus one rounding to the output type).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from fcompute_call import run_fcompute
from line_data import (
    GRID_CAP,
    SUM_TYPES,
    N,
    W,
    block_spy,
    check_launches,
    cumsum_both_ways,
    lines_of,
    small_gpu,
)

import nnvmpy as nv
from nnvmpy.base import InferError, OpReqType
from nnvmpy.ops import _cumsum_cuda as scan_cuda
from nnvmpy.ops import _line_split_cuda as split

pytestmark = [pytest.mark.gpu, pytest.mark.sim_barriers]

KERNELS = ("_cumsum_sums_f_cuda", "_cumsum_sums_i_cuda", "_cumsum_scan_f_cuda",
           "_cumsum_scan_i_cuda", "_cumsum_carries_cuda")  # fmt: skip

# id -> (shape, axis (None: flattened), SLICE_MIN, path); the slice counts are the
# simulator's (32 threads a block, rounds of 256 elements)
CASES = {
    # 9 lines of 300 fill the device: a block each, a round of 256 and one of 44
    "block-per-line": ((9, 300), 1, 64, "block"),
    # 3 lines of exactly 32: a block of 4 threads each
    "block-32": ((3, 32), -1, 4096, "block"),
    # 2 lines of 1500 in 3 slices of 512 (the last 476)
    "split-last-axis": ((2, 1500), -1, 64, "split"),
    # the flattened array, 1050 elements: 5 slices of 256 (the last 26)
    "split-axis-none": ((3, 7, 50), None, 64, "split"),
    # inner 3: 3 lines of 600, strided by 3, in 3 slices of 256 (the last 88)
    "split-inner-3": ((1, 600, 3), 1, 64, "split"),
    # lines of 20: a thread each
    "short-lines": ((5, 20), 1, 64, "thread"),
    # inner 40: neighbouring lines are neighbours in memory; 50 positions are too few to
    # cut into slices (_line_split_cuda.COL_SLICE_MIN), so a thread each
    "inner-40": ((2, 50, 40), 1, 64, "thread"),
}


@pytest.fixture
def launches(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int, int]]:
    """(kernel, blocks, threads) of every GPU launch (other kernels named 'other')."""
    return block_spy(monkeypatch, scan_cuda, KERNELS)


def _expected(shape: tuple, axis: int | None, path: str, integer: bool) -> list[tuple]:
    """(kernel, blocks, threads) of one call's launches (the carries' name only)."""
    outer, n, inner = lines_of(shape, axis)
    lines = outer * inner
    if path == "thread":
        return [("other",)]
    S, _, threads = split.line_split(nv.gpu(0), "cumsum", lines, n, scan_cuda.ITEMS)
    t = "i" if integer else "f"
    scan = (f"_cumsum_scan_{t}_cuda", min(lines * S, GRID_CAP), threads)
    if path == "block":
        assert S == 1
        return [scan]
    assert S > 1
    return [(f"_cumsum_sums_{t}_cuda", *scan[1:]), ("_cumsum_carries_cuda",), scan]


@pytest.mark.parametrize(("in_dtype", "out_dtype", "kind", "req"), SUM_TYPES)
@pytest.mark.parametrize("case", list(CASES))
def test_scan_matches_numpy_and_the_cpu(
    case: str, in_dtype: Any, out_dtype: Any, kind: str, req: OpReqType,
    monkeypatch: pytest.MonkeyPatch, launches: list[tuple[str, int, int]],
) -> None:  # fmt: skip
    shape, axis, slice_min, path = CASES[case]
    small_gpu(monkeypatch, slice_min)
    types = (in_dtype, out_dtype, kind)
    forward, backward = cumsum_both_ways(shape, axis, types, req, len(case), launches)
    integer = np.dtype(out_dtype).kind == "i" and np.dtype(in_dtype).kind == "i"
    want = [] if req == N else _expected(shape, axis, path, integer)
    check_launches(forward[0], want)
    check_launches(backward[0], want)


def test_one_long_line_in_many_slices_is_exact_for_integers(
    monkeypatch: pytest.MonkeyPatch, launches: list[tuple[str, int, int]]
) -> None:
    """int64 sums past 2**53 (a float64 accumulator would round them), over 6 slices."""
    small_gpu(monkeypatch, 64)
    x = np.full(1500, (1 << 52) + 1, np.int64)
    x[::7] = -3
    for name, want in (("cumsum", np.cumsum(x)), ("_backward_cumsum", np.cumsum(x[::-1])[::-1])):
        (got,) = run_fcompute(name, {}, [x], [np.zeros(1500, np.int64)], [W], "gpu")
        np.testing.assert_array_equal(got, want, err_msg=name)
    assert "_cumsum_sums_i_cuda" in {t[0] for t in launches}


def test_the_nd_front_end_and_bad_input_on_the_gpu() -> None:
    """Through nd on a GPU context, the gradient through autograd, and the named errors."""
    x = np.random.default_rng(2).integers(-5, 6, (3, 64)).astype(np.float32)
    g = nv.nd.array(x, ctx=nv.gpu(0))
    np.testing.assert_array_equal(nv.nd.cumsum(g, axis=1).asnumpy(), np.cumsum(x, axis=1))
    np.testing.assert_array_equal(nv.nd.cumsum(g).asnumpy(), np.cumsum(x))
    g.attach_grad()
    head = np.random.default_rng(3).integers(-5, 6, (3, 64)).astype(np.float32)
    with nv.autograd.record():
        y = nv.nd.cumsum(g, axis=1)
    y.backward(nv.nd.array(head, ctx=nv.gpu(0)))
    np.testing.assert_array_equal(g.grad.asnumpy(), np.cumsum(head[:, ::-1], axis=1)[:, ::-1])
    with pytest.raises(InferError, match=r"cumsum: axis 2 is out of range for input 'a'"):
        nv.nd.cumsum(g, axis=2)
    empty = nv.nd.cumsum(nv.nd.array(np.zeros((2, 0)), ctx=nv.gpu(0)), axis=1)
    assert empty.shape == (2, 0)
