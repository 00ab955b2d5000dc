"""potrf, potri and the LU of inverse / det / slogdet on the GPU with a thread block per
matrix (ops/linalg/_blocked_cuda.py) against NumPy, and against the thread-per-matrix
kernels they replace from 32 columns on.

Orders 33 and 45 take the block path as they are; orders 1 and 2 are sent there by
lowering MIN_ORDER (the `blocks` fixture), as are the small matrices of the error and
pivot tests. Batches of 1
to 3 (and 6: more matrices than the simulator's 4-block grid), float32 and float64, both
triangles, requests write and add, the gradients that factorize (det, slogdet) or run
after one (potrf, potri: gemm and trsm), the named errors, and pivots: the block's tree
must pick the rows lu_mat's scan picks (ties: the lowest row; a NaN on the diagonal
stays), so factors, pivots and determinant signs agree exactly. A spy checks that a
block per matrix ran, and that many small matrices keep a thread each. Runs under
NUMBA_ENABLE_CUDASIM=1 or on a GPU (tests/conftest.py); kept small, as every simulated
thread is a Python thread.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from fcompute_call import run_fcompute
from launch_spies import spy_block_launches

import nnvmpy as nv
from nnvmpy.ops.linalg import _blocked_cuda as bc
from nnvmpy.ops.linalg import cholesky, inverse

pytestmark = [pytest.mark.gpu, pytest.mark.sim_barriers]

F32, F64 = np.float32, np.float64
BLOCK_KERNELS = {
    "potrf": "_potrf_block_cuda",
    "potri": "_potri_block_cuda",
    "inverse": "_lu_block_cuda",
    "det": "_lu_block_cuda",
    "slogdet": "_lu_block_cuda",
}
THREAD_KERNELS = {"potrf": "potrf_mat", "potri": "potri_mat", "inverse": "lu_mat"}


def close(got: Any, want: Any, dtype: Any, scale: float = 1.0) -> None:
    tol = (1e-10 if dtype == F64 else 2e-5) * scale
    np.testing.assert_allclose(np.asarray(got, F64), np.asarray(want, F64), rtol=tol, atol=tol)


def spd(batch: int, n: int, dtype: Any, seed: int) -> np.ndarray:
    x = np.random.default_rng(seed).uniform(-1, 1, (batch, n, n))
    return (x @ x.transpose(0, 2, 1) + 0.5 * n * np.eye(n)).astype(dtype)


def general(batch: int, n: int, dtype: Any, seed: int) -> np.ndarray:
    """Uniform entries: rows are swapped at most steps."""
    return np.random.default_rng(seed).uniform(-1, 1, (batch, n, n)).astype(dtype)


def factor(a: np.ndarray, lower: bool) -> np.ndarray:
    f = np.linalg.cholesky(a.astype(F64))
    return (f if lower else f.transpose(0, 2, 1)).astype(a.dtype)


def simulated() -> bool:
    from numba import config

    return bool(config.ENABLE_CUDASIM)


@pytest.fixture
def blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every order takes a block per matrix."""
    monkeypatch.setattr(bc, "MIN_ORDER", 1)


@pytest.fixture
def launched(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int, int]]:
    """(kernel, blocks, threads) of every launch of the block and thread-per-matrix
    factorization kernels."""
    kernels = {name: getattr(bc, name) for name in set(BLOCK_KERNELS.values())}
    kernels.update(potrf_mat=cholesky.potrf_mat, potri_mat=cholesky.potri_mat)
    kernels.update(lu_mat=inverse.lu_mat)
    return spy_block_launches(monkeypatch, kernels)


def check_blocks(launched: list[tuple[str, int, int]], op: str, batch: int, n: int) -> None:
    """One launch of op's block kernel: a block per matrix (the simulator's grid: 4 at
    most, striding over the rest), block_threads(n) threads."""
    assert [k for k, _, _ in launched] == [BLOCK_KERNELS[op]]
    _, nblocks, threads = launched[0]
    assert nblocks == (min(batch, 4) if simulated() else batch)
    assert (
        threads
        == bc.block_threads(n)
        == min(32 if simulated() else 256, 1 << (n * n - 1).bit_length())
    )


def gpu(name: str, params: dict, inputs: list, starts: list, reqs: list) -> list[np.ndarray]:
    return run_fcompute(f"_linalg_{name}", params, inputs, starts, reqs, "gpu")


# (n, batch, dtype, lower, req): every order, batch, dtype, triangle and request, pairwise
CASES = [
    (1, 3, F32, True, "write"),
    (1, 2, F64, False, "add"),
    (2, 3, F64, True, "add"),
    (2, 1, F32, False, "write"),
    (33, 2, F32, True, "add"),
    (33, 1, F64, False, "write"),
    (45, 1, F64, True, "write"),
    (45, 1, F32, False, "add"),
]
IDS = [f"n{n}-b{b}-{np.dtype(d).name}-{'lower' if lo else 'upper'}-{r}" for n, b, d, lo, r in CASES]


@pytest.mark.parametrize(("n", "batch", "dtype", "lower", "req"), CASES, ids=IDS)
def test_potrf_and_potri_match_numpy(
    n: int, batch: int, dtype: Any, lower: bool, req: str, blocks: None, launched: list
) -> None:
    a = spd(batch, n, dtype, n + batch)
    start = np.full(a.shape, 0.5, dtype)
    base = start if req == "add" else 0.0
    (got,) = gpu("potrf", {"lower": lower}, [a], [start], [req])
    close(got, base + factor(a, lower), dtype, 10)
    check_blocks(launched, "potrf", batch, n)
    launched.clear()
    (got,) = gpu("potri", {"lower": lower}, [factor(a, lower)], [start], [req])
    close(got, base + np.linalg.inv(a.astype(F64)), dtype, 10)
    check_blocks(launched, "potri", batch, n)


@pytest.mark.parametrize(("n", "batch", "dtype", "lower", "req"), CASES, ids=IDS)
def test_inverse_det_and_slogdet_match_numpy(
    n: int, batch: int, dtype: Any, lower: bool, req: str, blocks: None, launched: list
) -> None:
    a = general(batch, n, dtype, 2 * n + batch)
    ref = a.astype(F64)
    start, base = np.full(a.shape, 0.5, dtype), 0.5 if req == "add" else 0.0
    scale = 100 if dtype == F32 else 1e3  # uniform matrices: condition numbers in the 100s
    if n < 45 or lower:  # (the inverse of order 45 once: each column is a serial solve)
        (got,) = gpu("inverse", {}, [a], [start], [req])
        close(got, base + np.linalg.inv(ref), dtype, scale)
        check_blocks(launched, "inverse", batch, n)
    launched.clear()
    (det,) = gpu("det", {}, [a], [np.full(batch, 0.5, dtype)], [req])
    close((det - base) / np.linalg.det(ref), np.ones(batch), dtype, scale)
    sign, logabs = gpu("slogdet", {}, [a], [np.full(batch, 0.5, dtype)] * 2, [req, "write"])
    want_sign, want_log = np.linalg.slogdet(ref)
    np.testing.assert_array_equal(sign, base + want_sign)
    close(logabs, want_log, dtype, scale)
    assert [k for k, _, _ in launched] == ["_lu_block_cuda"] * 2


@pytest.mark.parametrize(
    ("n", "batch", "dtype", "req"), [(2, 3, F64, "add"), (33, 2, F32, "write")]
)
def test_gradients_of_det_and_slogdet_match_numpy(
    n: int, batch: int, dtype: Any, req: str, blocks: None, launched: list
) -> None:
    det_gradients_match_numpy(general(batch, n, dtype, 5), req)
    assert [k for k, _, _ in launched] == ["_lu_block_cuda"] * 2


def det_gradients_match_numpy(a: np.ndarray, req: str) -> None:
    """The GPU's det and slogdet gradients of the matrices a against NumPy's A^-T."""
    batch, dtype = len(a), a.dtype
    ref = a.astype(F64)
    g = np.linspace(-1, 1, batch).astype(dtype)
    det = np.linalg.det(ref).astype(dtype)
    start = np.full(a.shape, 0.5, dtype)
    base = start if req == "add" else 0.0
    inv_t = np.linalg.inv(ref).transpose(0, 2, 1)
    (got,) = run_fcompute("_backward_linalg_det", {}, [g, a, det], [start], [req], "gpu")
    close((got - base) / det[:, None, None], g[:, None, None] * inv_t, dtype, 1e3)
    sign, logabs = (x.astype(dtype) for x in np.linalg.slogdet(ref))
    inputs = [np.zeros_like(g), g, a, sign, logabs]
    (got,) = run_fcompute("_backward_linalg_slogdet", {}, inputs, [start], [req], "gpu")
    close(got, base + g[:, None, None] * inv_t, dtype, 1e3)


@pytest.mark.parametrize("lower", [True, False])
def test_gradients_after_potrf_and_potri_match_the_cpu(lower: bool, launched: list) -> None:
    """Their backward runs gemm and trsm (no factorization): checked on the same inputs."""
    a = spd(2, 33, F64, 6)
    f = factor(a, lower)
    g = np.random.default_rng(7).uniform(-1, 1, a.shape)
    start = np.full(a.shape, 0.25)
    c = np.linalg.inv(a)
    for name, inputs in (("potrf", [g, f]), ("potri", [g, f, c])):
        args = (f"_backward_linalg_{name}", {"lower": lower}, inputs, [start], ["add"])
        (want,) = run_fcompute(*args, "cpu")
        (got,) = run_fcompute(*args, "gpu")
        close(got, want, F64, 100)
    assert launched == []


# -- errors -----------------------------------------------------------------------------------


def test_a_matrix_that_is_not_positive_definite_is_named(blocks: None, launched: list) -> None:
    a = spd(3, 9, F64, 8)
    for bad in ([1], [2, 1]):
        b = a.copy()
        for z in bad:
            b[z, 6, 6] = -1.0  # a negative diagonal entry: no factor
        with pytest.raises(
            nv.NNVMError, match=r"potrf.*not symmetric positive-definite.*matrix 1 "
        ):
            gpu("potrf", {}, [b], [np.zeros_like(b)], ["write"])
    b = a.copy()
    b[2, 0, 0] = np.nan  # a NaN fails as the serial kernel's `not s > 0` fails it
    with pytest.raises(nv.NNVMError, match=r"potrf.*matrix 2 of the batch"):
        gpu("potrf", {"lower": False}, [b], [np.zeros_like(b)], ["write"])
    assert {k for k, _, _ in launched} == {"_potrf_block_cuda"}
    launched.clear()
    (got,) = gpu("potrf", {}, [a], [np.zeros_like(a)], ["write"])  # nothing poisoned
    close(got, factor(a, True), F64, 10)


def test_singular_matrices_are_named_or_have_determinant_zero(blocks: None, launched: list) -> None:
    a = general(3, 9, F64, 9)
    a[1, :, 7] = 0.0  # matrix 1 singular: a zero column stays zero, an exact zero pivot
    with pytest.raises(nv.NNVMError, match=r"inverse: input 'A' is singular \(matrix 1 of"):
        gpu("inverse", {}, [a], [np.zeros_like(a)], ["write"])
    det_start = np.full(3, 4.0)
    (det,) = gpu("det", {}, [a], [det_start], ["write"])
    assert det[1] == 0.0
    close(det[[0, 2]] / np.linalg.det(a[[0, 2]]), np.ones(2), F64, 1e3)
    sign, logabs = gpu("slogdet", {}, [a], [det_start] * 2, ["write"] * 2)
    assert sign[1] == 0.0
    assert logabs[1] == -np.inf
    with pytest.raises(nv.NNVMError, match=r"_backward_linalg_det.*singular \(matrix 1 of"):
        run_fcompute("_backward_linalg_det", {}, [np.ones(3), a, det], [a], ["write"], "gpu")
    assert {k for k, _, _ in launched} == {"_lu_block_cuda"}


def test_potri_of_a_zero_diagonal_is_named(launched: list) -> None:
    f = factor(spd(2, 33, F64, 10), True)
    f[1, 12, 12] = 0.0
    with pytest.raises(nv.NNVMError, match=r"potri: input 'A' is singular: matrix 1"):
        gpu("potri", {}, [f], [np.zeros_like(f)], ["write"])


# -- pivots -----------------------------------------------------------------------------------


def lu_factors(a: np.ndarray, block: bool, monkeypatch: pytest.MonkeyPatch) -> list[np.ndarray]:
    """inverse.py's LU of a on the GPU: [flags, lu, pivots] from the block kernel or from
    lu_mat (a thread per matrix)."""
    from numba import cuda

    from nnvmpy.engine.base import RunContext
    from nnvmpy.resource import OpContext, ResourceRequest, get_resource

    monkeypatch.setattr(bc, "MIN_ORDER", 1 if block else 10**9)
    temp = [get_resource(ResourceRequest.kTempSpace, nv.gpu(0))[0]]
    ctx = OpContext(True, RunContext(nv.gpu(0), None), temp)
    ws = inverse._lu_gpu(ctx, "test", cuda.to_device(a), [])
    return [ws[i].copy_to_host() for i in range(3)]


def tie_matrices(n: int, dtype: Any) -> np.ndarray:
    """Entries in {-2, ..., 2}: every column has equal-magnitude candidates; then the
    same with a NaN on a diagonal, a NaN below one, and infinities that tie."""
    rng = np.random.default_rng(n)
    a = rng.integers(-2, 3, (5, n, n)).astype(dtype)
    a[1, :, 0] = [(-1) ** i for i in range(n)]  # all of column 0 ties: row 0 stays
    a[2, 0, 0] = np.nan
    a[3, n - 1, 0] = np.nan  # skipped by the scan
    a[4, n // 2, 0] = a[4, n - 1, 0] = -np.inf
    return a


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # NaN pivots
@pytest.mark.parametrize(("n", "dtype"), [(5, F64), (12, F32), (33, F64)])
def test_pivots_and_signs_are_the_serial_scans(
    n: int, dtype: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    a = tie_matrices(n, dtype)
    block = lu_factors(a, True, monkeypatch)
    serial = lu_factors(a, False, monkeypatch)
    for got, want in zip(block, serial):
        np.testing.assert_array_equal(got, want)
    pivots = block[2]
    assert pivots[1, 0] == 0  # a column of ties keeps its first row
    assert pivots[4, 0] == n // 2  # the first of two infinities
    monkeypatch.setattr(bc, "MIN_ORDER", 1)
    sign, _ = gpu("slogdet", {}, [a[:2]], [np.zeros(2, dtype)] * 2, ["write"] * 2)
    np.testing.assert_array_equal(sign, np.linalg.slogdet(a[:2].astype(F64))[0])


# -- which kernel runs ------------------------------------------------------------------------


def test_many_small_matrices_keep_a_thread_each(launched: list) -> None:
    batch, n = 40, 4
    a = spd(batch, n, F64, 11)
    (got,) = gpu("potrf", {}, [a], [np.zeros_like(a)], ["write"])
    close(got, factor(a, True), F64, 10)
    (got,) = gpu("potri", {}, [factor(a, True)], [np.zeros_like(a)], ["write"])
    close(got, np.linalg.inv(a), F64, 10)
    (got,) = gpu("inverse", {}, [a], [np.zeros_like(a)], ["write"])
    close(got, np.linalg.inv(a), F64, 10)
    assert [k for k, _, _ in launched] == ["potrf_mat", "potri_mat", "lu_mat"]


def test_more_matrices_than_blocks_stride_over_the_grid(blocks: None, launched: list) -> None:
    batch, n = 6, 3
    a = general(batch, n, F64, 12)
    (det,) = gpu("det", {}, [a], [np.zeros(batch)], ["write"])
    close(det, np.linalg.det(a), F64, 10)
    l_ = factor(spd(batch, n, F64, 13), False)
    (got,) = gpu("potri", {"lower": False}, [l_], [np.zeros_like(l_)], ["write"])
    close(got, np.linalg.inv(l_.transpose(0, 2, 1) @ l_), F64, 10)
    assert [k for k, _, _ in launched] == ["_lu_block_cuda", "_potri_block_cuda"]
    if simulated():
        assert all(b == 4 for _, b, _ in launched)


def test_the_rule_is_the_order() -> None:
    from numba import cuda

    x = cuda.to_device(np.zeros((2, 32, 32)))
    assert bc.by_block(x, 32)
    assert not bc.by_block(x, 31)
    assert not bc.by_block(np.zeros((2, 32, 32)), 32)  # the GPU code run on the CPU
