"""CTCLoss on the GPU (ops/nn/_ctc_cuda.py) against the CPU kernels in float64.

alpha and beta run with a thread block per sequence, its threads over the 2L + 1 states;
the rows (t, b) of long alphabets take a block each for the log-sum-exp and the hidden
gradient. The cases mix data and label lengths (use_data_lengths, use_label_lengths, or
lengths from the padding), an empty label with and without data, repeated labels, the
blank first and last, more states than the block's threads (STATE_BLOCK lowered: each
thread takes several), more sequences than the simulator's 4-block grid, and alphabets
at and over BLOCK_ALPHABET (150 classes: 128 threads stride a row). Each output takes
write, add and null requests, in float16, float32 and float64. FCompute is called
directly (as the executor would), so that the hidden gradient's req can be chosen.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest
from fcompute_call import run_fcompute
from launch_spies import spy_block_launches

import nnvmpy as nv
from nnvmpy.base import OpReqType
from nnvmpy.ops.nn import _ctc_cuda as ctc_cuda
from nnvmpy.ops.nn._block_rows import block_threads

pytestmark = [pytest.mark.gpu, pytest.mark.sim_barriers]

SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"

W, A, N = OpReqType.kWriteTo, OpReqType.kAddTo, OpReqType.kNullOp
F16, F32, F64 = np.float16, np.float32, np.float64
TOL = {F16: 4e-3, F32: 2e-5, F64: 1e-10}  # relative to the largest value compared

# id -> (T, A, params, labels, data_lengths, label_lengths, STATE_BLOCK)
CASES = {
    # 6 sequences (a grid-stride on the simulator's 4 blocks), s_max 9 on 4 threads;
    # labels 2 2 and 4 4 4 repeat, sequence 3 has no data and no label, 5 a label of 0
    # and data; label_lengths cut labels whose tails are classes, not padding
    "lengths-repeats-strided": (
        7, 5, {"use_data_lengths": True, "use_label_lengths": True},
        [[1, 2, 2, 3], [4, 4, 4, 1], [1, 3, 2, 2], [2, 1, 1, 1], [3, 1, 4, 4], [2, 3, 4, 1]],
        [7, 6, 2, 0, 5, 7], [4, 3, 1, 0, 0, 4], 4,
    ),
    # blank last (class 3), lengths from the padding -1, an empty label
    "blank-last-padding": (
        6, 4, {"blank_label": "last"}, [[0, 0, 1], [2, -1, -1], [-1, -1, -1]], None, None,
        256,
    ),
    # 150 classes: a block of 128 threads per row, striding; blank first, padding 0
    "long-alphabet": (
        4, 150, {"use_data_lengths": True}, [[149, 7, 149], [5, 5, 0], [0, 0, 0]],
        [4, 3, 2], None, 256,
    ),
    # BLOCK_ALPHABET classes: a block of 32 per row; blank last, label lengths
    "alphabet-at-threshold": (
        5, ctc_cuda.BLOCK_ALPHABET, {"blank_label": "last", "use_label_lengths": True},
        [[30, 0, 30], [12, 12, 5]], None, [3, 2], 2,
    ),
}  # fmt: skip
# (dtype, reqs of the loss and of the hidden gradient): each takes write, add and null
REQS = [
    pytest.param(F16, (W, A), id="float16-w-a"),
    pytest.param(F32, (A, W), id="float32-a-w"),
    pytest.param(F64, (N, W), id="float64-n-w"),
    pytest.param(F64, (W, N), id="float64-w-n"),
]
KERNELS = ("_alpha_beta_cuda", "_row_lse_block_cuda", "_row_grad_block_cuda")


@pytest.fixture
def launches(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int, int]]:
    """(kernel name, blocks, threads) of every launch of _ctc_cuda.py's block kernels."""
    return spy_block_launches(monkeypatch, {name: getattr(ctc_cuda, name) for name in KERNELS})


def _call(params: dict, inputs: list, starts: list, reqs: tuple, device: str) -> list:
    """CTCLoss's FCompute<device> on outputs that start as `starts` (float64 on the CPU)."""
    if device == "cpu":
        inputs, starts = [a.astype(F64) for a in inputs], [s.astype(F64) for s in starts]
    return run_fcompute("CTCLoss", params, inputs, starts, reqs, device)


def _close(got: np.ndarray, want: np.ndarray, dtype: Any, what: str) -> None:
    assert got.dtype == dtype, what
    scale = max(1.0, float(np.abs(want).max()))
    np.testing.assert_allclose(got.astype(F64), want, rtol=0, atol=TOL[dtype] * scale, err_msg=what)


def _inputs(case: str, dtype: Any) -> tuple[dict, list[np.ndarray], tuple[int, int, int]]:
    t_max, a_len, params, labels, tlen, lens, _ = CASES[case]
    n = len(labels)
    rng = np.random.default_rng(len(case))
    inputs = [rng.normal(0, 2, (t_max, n, a_len)), np.array(labels, F64)]
    inputs += [np.array(v, F64) for v in (tlen, lens) if v is not None]
    return params, [a.astype(dtype) for a in inputs], (t_max, n, a_len)


@pytest.mark.parametrize(("dtype", "reqs"), REQS)
@pytest.mark.parametrize("case", list(CASES))
def test_ctc_gpu_blocks_match_the_cpu(
    case: str, dtype: Any, reqs: tuple, monkeypatch: pytest.MonkeyPatch,
    launches: list[tuple[str, int, int]],
) -> None:  # fmt: skip
    state_block = CASES[case][-1]
    monkeypatch.setattr(ctc_cuda, "STATE_BLOCK", state_block)
    params, inputs, shape = _inputs(case, dtype)
    t_max, n, a_len = shape
    rng = np.random.default_rng(1)
    starts = [rng.uniform(-1, 1, s).astype(dtype) for s in ((n,), shape)]
    got = _call(params, inputs, starts, reqs, "gpu")
    want = _call(params, inputs, starts, reqs, "cpu")
    for what, g, w in zip(("loss", "grad"), got, want, strict=True):
        _close(g, w, dtype, f"{what} ({reqs})")

    s_max = 2 * len(CASES[case][3][0]) + 1
    threads = min(state_block, 32 * -(-s_max // 32), 32 if SIMULATOR else state_block)
    grid = min(n, 4) if SIMULATOR else n
    expected = [("_alpha_beta_cuda", grid, threads)]
    if a_len >= ctc_cuda.BLOCK_ALPHABET:
        rows = t_max * n
        row_grid = (min(rows, 4) if SIMULATOR else rows, block_threads(a_len))
        expected.insert(0, ("_row_lse_block_cuda", *row_grid))
        expected += [("_row_grad_block_cuda", *row_grid)] if reqs[1] != N else []
    assert launches == expected, case


def test_ctc_gpu_backward_scales_the_block_kernels_gradient() -> None:
    """The whole op on the GPU through autograd (block kernels on 150 classes): the loss
    and data's gradient times the head gradient, as on the CPU."""
    params, inputs, _ = _inputs("long-alphabet", F32)
    out = {}
    for ctx in (nv.cpu(), nv.gpu(0)):
        data, *rest = (nv.nd.array(a, ctx=ctx, dtype=F32) for a in inputs)
        data.attach_grad()
        with nv.autograd.record():
            loss = nv.nd.CTCLoss(data, *rest, **params)
        loss.backward(nv.nd.array([1.0, 2.0, 0.5], ctx=ctx, dtype=F32))
        out[ctx.device_type] = (loss.asnumpy(), data.grad.asnumpy())
    for g, w in zip(out["gpu"], out["cpu"], strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
