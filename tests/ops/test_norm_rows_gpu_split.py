"""GroupNorm, InstanceNorm and LayerNorm on the GPU with each row split among S blocks
(ops/nn/_norm_rows_cuda.py), against the CPU kernels in float64.

A sums kernel on rows * S blocks writes per-slice partials, a thread per row combines
them, and an apply kernel on the same blocks writes out or dx. The cases split rows into
slices with a short last one, inner 1 and 3, per-row and per-position gamma, and keep a
block per row where the rows alone fill the device; every output and gradient is taken
with write, add and null requests, in float16, float32 and float64, with and without the
mean/std outputs' gradients. FCompute is called directly (as the executor would), so each
output's req can be chosen. The GPU is taken to have a few SMs, a split block 32
threads, and SLICE_MIN is lowered, so that tiny rows split.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest
from fcompute_call import close_to as _close
from fcompute_call import run_fcompute_f64_cpu as _call
from launch_spies import spy_block_launches

from nnvmpy.base import OpReqType
from nnvmpy.kernel import cuda as kcuda
from nnvmpy.ops.nn import _norm_rows_cuda as norm_cuda
from nnvmpy.ops.nn._block_rows import block_threads

pytestmark = [pytest.mark.gpu, pytest.mark.sim_barriers]

SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"

W, A, N = OpReqType.kWriteTo, OpReqType.kAddTo, OpReqType.kNullOp
F16, F32, F64 = np.float16, np.float32, np.float64
SPLIT = ("_norm_sums_split_cuda", "_norm_forward_apply_cuda", "_norm_dsums_split_cuda",
         "_norm_backward_apply_cuda")  # fmt: skip
BLOCK = ("_norm_forward_block_cuda", "_norm_backward_block_cuda")

# id -> (op, params, data shape, simulated SMs, SLICE_MIN, S): 32 threads a split block
CASES = {
    # 4 rows of 100: 16 blocks wanted, slices of 32 (the last 4)
    "group-4-slices": ("GroupNorm", {"num_groups": 2}, (2, 4, 5, 10), 4, 16, 4),
    # S capped by SLICE_MIN: 2 slices of 64 and 36
    "group-slice-min": ("GroupNorm", {"num_groups": 2}, (2, 4, 5, 10), 4, 40, 2),
    # 2 rows of 150: 4 slices wanted, 3 of 64 positions (the last 22) suffice
    "instance-3-slices": ("InstanceNorm", {}, (1, 2, 10, 15), 2, 16, 3),
    # per-position gamma: 2 rows of 300 in 4 slices of 96 (the last 12)
    "layer-last-axis": ("LayerNorm", {"axis": -1}, (2, 300), 2, 16, 4),
    # inner 3: 6 rows of 100 in 2 slices of 64 and 36
    "layer-inner-3": ("LayerNorm", {"axis": 1}, (2, 100, 3), 2, 16, 2),
    # 9 rows fill the 8 blocks wanted: a block per row
    "group-rows-fill": ("GroupNorm", {"num_groups": 3}, (3, 6, 4, 10), 2, 16, 1),
}
# (dtype, forward reqs: out, mean, std, backward reqs: dx, dgamma, dbeta): each output
# and gradient takes every req, each in another dtype; every dtype writes out and dx
REQS = [
    pytest.param(F16, (W, A, N), (W, A, N), id="float16-w-a-n"),
    pytest.param(F32, (A, N, W), (A, N, W), id="float32-a-n-w"),
    pytest.param(F64, (N, W, A), (N, W, A), id="float64-n-w-a"),
    pytest.param(F64, (A, W, W), (W, W, W), id="float64-a-w-w"),  # out and dx in float64
]


@pytest.fixture
def launches(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int, int]]:
    """(kernel name, blocks, threads) of every launch of _norm_rows_cuda.py's block kernels."""
    kernels = {name: getattr(norm_cuda, name) for name in (*SPLIT, *BLOCK)}
    return spy_block_launches(monkeypatch, kernels, norm_cuda)  # norm_cuda imports launch_kernel


def _shapes(op: str, params: dict, shape: tuple) -> tuple[tuple, tuple]:
    """(gamma's shape, the mean/std outputs' shape)."""
    if op == "LayerNorm":
        axis = params["axis"] % len(shape)
        return (shape[axis],), tuple(1 if a == axis else d for a, d in enumerate(shape))
    groups = params.get("num_groups", shape[1])
    return (groups,), (shape[0], groups)


def _case_arrays(op: str, params: dict, shape: tuple, dtype: Any) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(sum(shape))
    gshape, sshape = _shapes(op, params, shape)
    arrays = {
        "x": rng.uniform(-2, 2, shape) + 3,  # off zero: the shifted sums' shift matters
        "g": rng.uniform(0.5, 1.5, gshape),
        "b": rng.uniform(-1, 1, gshape),
        "dy": rng.uniform(-1, 1, shape),
        "dmean": rng.uniform(-1, 1, sshape),
        "dstd": rng.uniform(-1, 1, sshape),
    }
    return {k: v.astype(dtype) for k, v in arrays.items()}


def _starts(shapes: list[tuple], dtype: Any, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1, 1, s).astype(dtype) for s in shapes]


def _split(monkeypatch: pytest.MonkeyPatch, sms: int, slice_min: int) -> None:
    """The GPU taken to have `sms` SMs, split blocks of 32 threads (on a GPU too)."""
    monkeypatch.setattr(kcuda, "context_sm_count", lambda ctx, name: sms)
    monkeypatch.setattr(norm_cuda, "SLICE_MIN", slice_min)
    monkeypatch.setattr(norm_cuda, "SPLIT_BLOCK", 32)
    monkeypatch.setattr(norm_cuda, "SIM_SPLIT_BLOCK", 32)


@pytest.mark.parametrize(("dtype", "freqs", "breqs"), REQS)
@pytest.mark.parametrize("case", list(CASES))
def test_split_rows_match_the_cpu(
    case: str, freqs: tuple, breqs: tuple, dtype: Any, monkeypatch: pytest.MonkeyPatch,
    launches: list[tuple[str, int, int]],
) -> None:  # fmt: skip
    op, params, shape, sms, slice_min, S = CASES[case]
    _split(monkeypatch, sms, slice_min)
    stats = op != "InstanceNorm"  # the mean/std outputs' gradients (output_mean_var)
    params = {**params, "eps": 1e-3, **({"output_mean_var": True} if stats else {})}
    a = _case_arrays(op, params, shape, dtype)
    gshape, sshape = _shapes(op, params, shape)

    fstarts = _starts([shape, sshape, sshape], dtype, 1)
    fin = [a["x"], a["g"], a["b"]]
    got = _call(op, params, fin, fstarts, freqs, "gpu")
    want = _call(op, params, fin, fstarts, freqs, "cpu")
    for what, g, w in zip(("out", "mean", "std"), got, want, strict=True):
        _close(g, w, dtype, f"{what} ({freqs})")

    # the backward from the exact statistics (the CPU's, in dtype) on both devices
    _, mean, std = _call(op, params, fin, fstarts, (W, W, W), "cpu")
    bin_ = [a["dy"], a["x"], a["g"], mean.astype(dtype), std.astype(dtype)]
    bin_ += [a["dmean"], a["dstd"]] if stats else []
    bstarts = _starts([shape, gshape, gshape], dtype, 2)
    got = _call(f"_backward_{op}", params, bin_, bstarts, breqs, "gpu")
    want = _call(f"_backward_{op}", params, bin_, bstarts, breqs, "cpu")
    for what, g, w in zip(("dx", "dgamma", "dbeta"), got, want, strict=True):
        _close(g, w, dtype, f"{what} ({breqs})")

    rows = shape[0] * gshape[0] if op != "LayerNorm" else int(np.prod(shape)) // gshape[0]
    n = int(np.prod(shape)) // rows
    rows_sums = breqs[0] != N or op != "LayerNorm"  # dx, or dgamma/dbeta from row sums
    assert launches == _expected(rows, n, S, freqs[0] != N, (rows_sums, breqs[0] != N)), case


def _expected(
    rows: int, n: int, S: int, out: bool, backward: tuple[bool, bool]
) -> list[tuple[str, int, int]]:
    """What the spy should see for one forward and backward: the rows on S blocks each
    (the sums, and the apply where out or dx is asked for), or on a block each."""
    if S == 1:
        grid = (min(rows, 4) if SIMULATOR else rows, block_threads(n))
        return [(BLOCK[0], *grid), (BLOCK[1], *grid)]
    grid = rows * S
    sums, dx = backward
    asked = [True, out, sums, dx]
    return [(name, grid, 32) for name, on in zip(SPLIT, asked, strict=True) if on]


def test_the_split_rule_on_hardware_sizes(monkeypatch: pytest.MonkeyPatch) -> None:
    """S per row on a 132-SM GPU: GroupNorm of 2 images, 32 groups, 256 channels of
    68 x 68 fills 4 blocks per SM; many rows, or rows under two slices, stay unsplit."""
    monkeypatch.setattr(norm_cuda, "STAT_BLOCKS_PER_SM", 4)
    monkeypatch.setattr(norm_cuda, "SLICE_MIN", 4096)
    assert norm_cuda.row_slices(64, 8 * 68 * 68, 132) == 9  # 576 blocks
    assert norm_cuda.row_slices(2 * 64, 256 * 256, 132) == 5  # InstanceNorm, batch 2
    assert norm_cuda.row_slices(4, 12000, 132) == 2  # capped by SLICE_MIN
    assert norm_cuda.row_slices(528, 10**6, 132) == 1  # the rows fill the device
    assert norm_cuda.row_slices(4, 8191, 132) == 1  # under two slices of SLICE_MIN
