"""Triangular solves on the GPU with a block per (matrix, group of right-hand sides)
(ops/linalg/_solve_cuda.py): linalg.trsm and the A^-1 of inverse / det / slogdet,
against NumPy (np.linalg.solve / inv on the triangle read).

Orders 2, 5 and 9 are sent to the block path by lowering MIN_ORDER (the `blocks`
fixture of test_linalg_blocked_gpu.py), order 33 takes it as it is. Cases are chosen
pairwise over the side, the triangle, transpose, alpha, the request (trsm's add goes
through the work array), float32 / float64, batch 1 and batches with more groups than
the simulator's 4-block grid, one group and several (the last one partial); x = b in
place; inverse forward (write, add) and the det / slogdet gradients, which need A^-1.
A spy checks the grid and block shape, and that small orders keep the thread-per-vector
and thread-per-column kernels. Runs under NUMBA_ENABLE_CUDASIM=1 or on a GPU
(tests/conftest.py); kept small, as every simulated thread is a Python thread.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from fcompute_call import run_fcompute
from launch_spies import spy_block_launches
from test_linalg_blocked_gpu import (  # noqa: F401 (blocks: a fixture)
    blocks,
    close,
    det_gradients_match_numpy,
    general,
    simulated,
)

import nnvmpy as nv
from nnvmpy.kernel import cuda as kcuda
from nnvmpy.ops.linalg import _batched, _kernels, inverse
from nnvmpy.ops.linalg import _blocked_cuda as bc
from nnvmpy.ops.linalg import _solve_cuda as sc

pytestmark = [pytest.mark.gpu, pytest.mark.sim_barriers]

F32, F64 = np.float32, np.float64


@pytest.fixture
def launched(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int, int]]:
    """(kernel, blocks, threads) of every launch of the solve and LU kernels."""
    kernels = {
        "trsm_block": sc._trsm_block_cuda,
        "inverse_block": sc._lu_inverse_block_cuda,
        "trsm_vec": _kernels.trsm_vec,
        "lu_inverse_col": inverse.lu_inverse_col,
        "lu_block": bc._lu_block_cuda,
        "lu_mat": inverse.lu_mat,
    }
    return spy_block_launches(monkeypatch, kernels)


def pow2(n: int) -> int:
    return 1 << (n - 1).bit_length()


def split(batch: int, nvec: int, n: int) -> tuple[int, int]:
    """(blocks, threads) of a block solve: groups of W vectors, W from 32 halved down to 8
    while the batch's groups give an SM fewer than 2 blocks (2 SMs on the simulator)."""
    if simulated():
        sms = 2
    else:
        from numba import cuda

        sms = cuda.get_current_device().MULTIPROCESSOR_COUNT
    w = min(32, pow2(nvec))
    while w > 8 and batch * -(-nvec // w) < 2 * sms:
        w //= 2
    items = batch * -(-nvec // w)
    threads = max(w, min(32 if simulated() else 256, w * pow2(n)))
    return (min(items, 4) if simulated() else items), threads


def triangular(batch: int, n: int, dtype: Any, seed: int) -> np.ndarray:
    """Full matrices (junk in the triangle not read) whose triangles are well conditioned:
    diagonal entries of magnitude 1 to 2, either sign."""
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, (batch, n, n)) / np.sqrt(n)
    d = rng.uniform(1, 2, (batch, n)) * rng.choice([-1.0, 1.0], (batch, n))
    a[:, np.arange(n), np.arange(n)] = d
    return a.astype(dtype)


def solved(a: np.ndarray, b: np.ndarray, lower: bool, transpose: bool, right: bool,
           alpha: float) -> np.ndarray:  # fmt: skip
    """alpha op(T)^-1 B, or alpha B op(T)^-1 on the right, in float64."""
    m = np.tril(a.astype(F64)) if lower else np.triu(a.astype(F64))
    m = m.transpose(0, 2, 1) if transpose else m
    b = b.astype(F64)
    if right:  # X M = B: M^T X^T = B^T
        return alpha * np.swapaxes(
            np.linalg.solve(np.swapaxes(m, 1, 2), np.swapaxes(b, 1, 2)), 1, 2
        )
    return alpha * np.linalg.solve(m, b)


# -- trsm -------------------------------------------------------------------------------------

# (n, vectors, batch, dtype, lower, transpose, rightside, alpha, req), pairwise
TRSM = [
    (2, 3, 1, F64, True, False, False, 1.0, "write"),
    (5, 4, 6, F32, False, True, False, -2.0, "add"),  # 6 groups: the grid strides
    (9, 3, 2, F32, True, True, True, 0.5, "write"),
    (5, 9, 1, F64, False, False, True, 1.0, "add"),
    (9, 37, 1, F64, True, False, False, 1.0, "write"),  # groups of 8, the last of 5
    (5, 33, 6, F64, False, True, False, 0.5, "add"),  # groups of 32 on the simulator
    (33, 2, 1, F32, True, True, True, 3.0, "write"),
]


def trsm_id(case: tuple) -> str:
    n, nvec, batch, dtype, lower, t, right, alpha, req = case
    tri = ("lower" if lower else "upper") + ("-T" if t else "")
    return f"n{n}-v{nvec}-b{batch}-{np.dtype(dtype).name}-{tri}-{'right' if right else 'left'}-a{alpha}-{req}"  # noqa: E501


@pytest.mark.usefixtures("blocks")
@pytest.mark.parametrize("case", TRSM, ids=[trsm_id(c) for c in TRSM])
def test_trsm_matches_numpy(case: tuple, launched: list) -> None:
    n, nvec, batch, dtype, lower, transpose, right, alpha, req = case
    a = triangular(batch, n, dtype, n + nvec)
    shape = (batch, nvec, n) if right else (batch, n, nvec)
    b = np.random.default_rng(batch).uniform(-1, 1, shape).astype(dtype)
    start = np.full(shape, 0.5, dtype)
    params = {"lower": lower, "transpose": transpose, "rightside": right, "alpha": alpha}
    (got,) = run_fcompute("_linalg_trsm", params, [a, b], [start], [req], "gpu")
    base = start if req == "add" else 0.0
    close(got, base + solved(a, b, lower, transpose, right, alpha), dtype, 10)
    assert launched == [("trsm_block", *split(batch, nvec, n))]


@pytest.mark.usefixtures("blocks")
@pytest.mark.parametrize(
    ("right", "dtype"), [(False, F64), (True, F32)], ids=["left-float64", "right-float32"]
)
def test_trsm_in_place(right: bool, dtype: Any, launched: list) -> None:
    """x is b: every entry is read before its own thread overwrites it."""
    from numba import cuda

    from nnvmpy.engine.base import RunContext
    from nnvmpy.resource import OpContext

    batch, n, nvec = 3, 9, 5
    a = triangular(batch, n, dtype, 4)
    shape = (batch, nvec, n) if right else (batch, n, nvec)
    b = np.random.default_rng(5).uniform(-1, 1, shape).astype(dtype)
    x = cuda.to_device(b)
    ctx = OpContext(True, RunContext(nv.gpu(0), None), [])
    _batched.trsm(ctx, "test", x, _batched.WRITE, cuda.to_device(a), x, True, right, False, 2.0)
    close(x.copy_to_host(), solved(a, b, False, True, right, 2.0), dtype, 10)
    assert launched == [("trsm_block", *split(batch, nvec, n))]


@pytest.mark.usefixtures("blocks")
def test_trsm_zero_diagonal_is_named(launched: list) -> None:
    a = triangular(3, 5, F64, 6)
    a[1, 3, 3] = 0.0
    b = np.ones((3, 5, 2))
    with pytest.raises(nv.NNVMError, match=r"trsm: input 'A' is singular: matrix 1 of"):
        run_fcompute("_linalg_trsm", {}, [a, b], [b], ["write"], "gpu")
    assert launched == []


# -- inverse, det and slogdet -----------------------------------------------------------------


@pytest.mark.usefixtures("blocks")
@pytest.mark.parametrize(
    ("n", "batch", "dtype", "req"),
    [(2, 1, F64, "write"), (5, 6, F32, "add"), (9, 2, F64, "add"), (9, 1, F32, "write")],
)
def test_inverse_matches_numpy(n: int, batch: int, dtype: Any, req: str, launched: list) -> None:
    a = general(batch, n, dtype, 3 * n + batch)
    start = np.full(a.shape, 0.5, dtype)
    (got,) = run_fcompute("_linalg_inverse", {}, [a], [start], [req], "gpu")
    base = start if req == "add" else 0.0
    close(got, base + np.linalg.inv(a.astype(F64)), dtype, 100 if dtype == F32 else 1e3)
    assert [k for k, _, _ in launched] == ["lu_block", "inverse_block"]
    assert launched[1][1:] == split(batch, n, n)


@pytest.mark.usefixtures("blocks")
@pytest.mark.parametrize(("n", "batch", "dtype", "req"), [(5, 6, F64, "add"), (9, 1, F32, "write")])
def test_gradients_of_det_and_slogdet_match_numpy(
    n: int, batch: int, dtype: Any, req: str, launched: list
) -> None:
    det_gradients_match_numpy(general(batch, n, dtype, 7), req)
    assert [k for k, _, _ in launched] == ["lu_block", "inverse_block"] * 2


# -- which kernel runs ------------------------------------------------------------------------


def test_small_orders_keep_a_thread_per_vector(launched: list) -> None:
    a = triangular(2, 5, F64, 8)
    b = np.random.default_rng(9).uniform(-1, 1, (2, 5, 3))
    (got,) = run_fcompute("_linalg_trsm", {}, [a, b], [b], ["write"], "gpu")
    close(got, solved(a, b, True, False, False, 1.0), F64, 10)
    g = general(2, 5, F64, 10)
    (got,) = run_fcompute("_linalg_inverse", {}, [g], [g], ["write"], "gpu")
    close(got, np.linalg.inv(g), F64, 1e3)
    assert [k for k, _, _ in launched] == ["trsm_vec", "lu_mat", "lu_inverse_col"]


def test_groups_narrow_until_the_sms_have_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kcuda, "context_sm_count", lambda ctx, name: 132)
    assert sc.group_size(None, "t", 1, 512) == 8  # 64 groups: as many as it gets
    assert sc.group_size(None, "t", 16, 512) == 16  # 16 x 32 groups >= 264
    assert sc.group_size(None, "t", 64, 512) == 32
    assert sc.group_size(None, "t", 1, 3) == 4  # no wider than the vectors
    assert sc.group_size(None, "t", 1, 1) == 1
    limit = 32 if simulated() else 256
    assert sc.block_threads(8, 512) == limit
    assert sc.block_threads(4, 2) == 8  # 2 row lanes
    assert sc.block_threads(32, 1) == 32
