"""cumsum and _backward_cumsum on the GPU's parallel scan (ops/_cumsum_cuda.py), against
NumPy's cumsum in float64 and against the CPU path on the same inputs.

Lines near the last axis (inner < 32, 32 elements or more) are scanned by a block each,
or, when too few to fill the device, by S blocks each: slice sums, a thread per line
scanning them into carries, then each slice scanned from its carry. Shorter lines and
inner >= 32 keep cumsum.py's thread per line. FCompute is called directly, as the
executor would, so write, add and null requests can be checked. The simulated GPU has
SIM_SM_COUNT (2) SMs, so that 8 blocks fill it, and SLICE_MIN is lowered where a case
wants tiny lines split.

Tolerance. Both devices accumulate in float64 (int64 for integer outputs of integer
inputs), the GPU in another order (per-thread runs, a tree over threads, carries over
slices). Integer results are therefore exact, and so are float results of dyadic data
(every partial sum exact in float64). For random float data an element may differ from
NumPy's float64 cumsum by the float64 reordering, at most n * eps64 * sum(|x|) (the
classic bound for a sum of n terms), plus the one rounding to the output type, at most
eps(dtype) * |value|; |value| <= |start| + sum(|x|) up to that element. The CPU path's
result, rounded as well (and float16 through float32 first), may sit a rounding away
on the other side: against it the tolerance is twice that.
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
from nnvmpy.ops import _cumsum_cuda as scan_cuda

pytestmark = pytest.mark.gpu

SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
W, A, N = OpReqType.kWriteTo, OpReqType.kAddTo, OpReqType.kNullOp
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
    # inner 40: neighbouring lines are neighbours in memory, a thread each
    "inner-40": ((2, 50, 40), 1, 64, "thread"),
}
# (input dtype, output dtype (the dtype param), data, req)
TYPES = [
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
EPS64 = np.finfo(np.float64).eps


@pytest.fixture
def launches(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int, int]]:
    """(kernel, blocks, threads) of every GPU launch (other kernels named 'other')."""
    kernels = {k: getattr(scan_cuda, k) for k in KERNELS}
    return spy_block_launches(monkeypatch, kernels, other="other")


def _setup(monkeypatch: pytest.MonkeyPatch, slice_min: int) -> None:
    monkeypatch.setattr(arg_cuda, "SLICE_MIN", slice_min)
    monkeypatch.setattr(arg_cuda, "_sm_count", lambda ctx, name: 2)  # 8 blocks fill it


def _data(shape: tuple, dtype: Any, kind: str, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if kind == "normal":  # an offset: the running sums grow, rounding matters
        x = rng.standard_normal(shape) + 0.25
    elif kind == "dyadic":  # quarters: every partial sum exact in float64 (and float16
        x = rng.integers(-8, 9, shape) / 4  # up to 2048: small enough here)
    else:
        x = rng.integers(-100, 101, shape)
    return x.astype(dtype)


def _np_cumsum(x: np.ndarray, axis: int | None, reverse: bool) -> np.ndarray:
    """NumPy's float64 cumsum (from the end when reverse), in x's shape for a backward."""
    if axis is None:
        f = x.reshape(-1)
        return (np.cumsum(f[::-1])[::-1] if reverse else np.cumsum(f)).reshape(x.shape)
    if reverse:
        return np.flip(np.cumsum(np.flip(x, axis), axis=axis), axis)
    return np.cumsum(x, axis=axis)


def _check(
    got: np.ndarray, x64: np.ndarray, start: np.ndarray, spec: tuple, cpu: np.ndarray
) -> None:
    """got (dtype) against NumPy's float64 result (as req asks) and the CPU's."""
    axis, reverse, req, n = spec
    dtype = got.dtype
    run = _np_cumsum(x64, axis, reverse).reshape(got.shape)
    if req == N:
        np.testing.assert_array_equal(got, start)
        np.testing.assert_array_equal(cpu, start)
        return
    if dtype.kind in "iu":  # exact sums, each truncated (start added in int64)
        want = np.trunc(run).astype(np.int64)
        want = want + start.astype(np.int64) if req == A else want
        np.testing.assert_array_equal(got, want.astype(dtype))
        np.testing.assert_array_equal(got, cpu)
        return
    base = start.astype(np.float64) if req == A else 0.0
    want = base + run
    scale = np.abs(base) + _np_cumsum(np.abs(x64), axis, reverse).reshape(got.shape)
    tol = (n * EPS64 + np.finfo(dtype).eps) * scale
    np.testing.assert_array_less(np.abs(got.astype(np.float64) - want), tol + 1e-300)
    np.testing.assert_array_less(np.abs(got.astype(np.float64) - cpu), 2 * tol + 1e-300)


def _expected(shape: tuple, axis: int | None, path: str, integer: bool) -> list[tuple]:
    """(kernel, blocks, threads) of one call's launches (the carries' name only)."""
    size = int(np.prod(shape))
    n = size if axis is None else shape[axis]
    lines = size // n
    if path == "thread":
        return [("other",)]
    cap = 4 if SIMULATOR else 10**9  # the simulator's grids are 4 blocks at most
    S, _, threads = arg_cuda.line_split(nv.gpu(0), "cumsum", lines, n, scan_cuda.ITEMS)
    t = "i" if integer else "f"
    scan = (f"_cumsum_scan_{t}_cuda", min(lines * S, cap), threads)
    if path == "block":
        assert S == 1
        return [scan]
    assert S > 1
    return [(f"_cumsum_sums_{t}_cuda", *scan[1:]), ("_cumsum_carries_cuda",), scan]


@pytest.mark.parametrize(("in_dtype", "out_dtype", "kind", "req"), TYPES)
@pytest.mark.parametrize("case", list(CASES))
def test_scan_matches_numpy_and_the_cpu(
    case: str, in_dtype: Any, out_dtype: Any, kind: str, req: OpReqType,
    monkeypatch: pytest.MonkeyPatch, launches: list[tuple[str, int, int]],
) -> None:  # fmt: skip
    shape, axis, slice_min, path = CASES[case]
    _setup(monkeypatch, slice_min)
    params = {"dtype": np.dtype(out_dtype).name, **({} if axis is None else {"axis": axis})}
    n = int(np.prod(shape)) if axis is None else shape[axis]
    out_shape = (int(np.prod(shape)),) if axis is None else shape
    rng = np.random.default_rng(11)
    integer = np.dtype(out_dtype).kind == "i" and np.dtype(in_dtype).kind == "i"

    # forward: x (in_dtype) -> out (out_dtype)
    x = _data(shape, in_dtype, kind, seed=len(case))
    start = rng.integers(-3, 4, out_shape).astype(out_dtype)
    launches.clear()
    (got,) = run_fcompute("cumsum", params, [x], [start], [req], "gpu")
    seen = list(launches)
    (cpu,) = run_fcompute("cumsum", params, [x], [start], [req], "cpu")
    assert got.dtype == out_dtype
    _check(got, x.astype(np.float64), start, (axis, False, req, n), cpu)
    _check_launches(seen, [] if req == N else _expected(shape, axis, path, integer))

    # backward: dy (out_dtype, the output's shape) -> dx (in_dtype, x's shape), reversed
    dy = _data(out_shape, out_dtype, kind, seed=len(case) + 1)
    dstart = rng.integers(-3, 4, shape).astype(in_dtype)
    launches.clear()
    (got,) = run_fcompute("_backward_cumsum", params, [dy], [dstart], [req], "gpu")
    seen = list(launches)
    (cpu,) = run_fcompute("_backward_cumsum", params, [dy], [dstart], [req], "cpu")
    assert got.dtype == in_dtype
    dy64 = dy.astype(np.float64).reshape(shape)
    _check(got, dy64, dstart, (axis, True, req, n), cpu)
    back = np.dtype(in_dtype).kind == "i" and np.dtype(out_dtype).kind == "i"
    _check_launches(seen, [] if req == N else _expected(shape, axis, path, back))


def _check_launches(seen: list[tuple], want: list[tuple]) -> None:
    assert len(seen) == len(want), seen
    assert [s[: len(w)] for s, w in zip(seen, want, strict=True)] == want, seen


def test_one_long_line_in_many_slices_is_exact_for_integers(
    monkeypatch: pytest.MonkeyPatch, launches: list[tuple[str, int, int]]
) -> None:
    """int64 sums past 2**53 (a float64 accumulator would round them), over 6 slices."""
    _setup(monkeypatch, 64)
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
