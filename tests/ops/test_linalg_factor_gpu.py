"""linalg.gelqf and linalg.syevd on the GPU's block path (ops/linalg/_factor_cuda.py: a
thread block per matrix) against NumPy: np.linalg.qr of the transpose (LAPACK's
Householder signs, as gelqf's) and np.linalg.eigh with each eigenvector row signed by its
first entry of largest magnitude (factor.sign_rows).

MIN_SIZE is lowered to 1 so tiny matrices take blocks; the rest keep a thread per matrix
(factor.py's gelqf_mat / syevd_mat) where matrices are small or many (MATRICES_PER_SM is
lowered for that: the simulated GPU has kernel/cuda.SIM_SM_COUNT SMs). Shapes: 1 x 1, wide
and square, 33 x 40 (more rows than the simulator's 32 threads), odd and even n, n = 33,
more matrices than the simulator's 4-block grid (grid-stride), repeated eigenvalues.
FCompute is called directly (fcompute_call.py) so write, add, null and an in-place output
(Q or U on A's memory) are checked; the backward ops run on the block path's outputs. A
launch spy checks which kernel ran and how it was split. Runs under NUMBA_ENABLE_CUDASIM=1
or on a GPU (tests/conftest.py); kept small, as every simulated thread is a Python thread.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from fcompute_call import run_fcompute
from launch_spies import spy_block_launches, spy_item_launches

import nnvmpy as nv
from nnvmpy.attrs import FCompute_gpu, FResourceRequest
from nnvmpy.base import InferError, OpReqType
from nnvmpy.engine.base import RunContext
from nnvmpy.kernel.cuda import context_sm_count, simulated
from nnvmpy.ops.linalg import _factor_cuda as fc
from nnvmpy.ops.linalg import factor
from nnvmpy.registry import Op
from nnvmpy.resource import OpContext, get_resource

pytestmark = [pytest.mark.gpu, pytest.mark.sim_barriers]

F32, F64 = np.float32, np.float64
DTYPES = [F32, F64]
GELQF, SYEVD = "_linalg_gelqf", "_linalg_syevd"
BLOCKS = {"_gelqf_block_cuda": fc._gelqf_block_cuda, "_syevd_block_cuda": fc._syevd_block_cuda}


def tol(dtype: Any, n: int = 1) -> dict[str, float]:
    eps = 1e-12 if dtype == F64 else 2e-5
    return {"rtol": eps * n, "atol": eps * n}


@pytest.fixture
def blocks(monkeypatch: pytest.MonkeyPatch) -> dict[str, list]:
    """Matrices of any size take a block; the block launches ('blocks': (kernel, blocks,
    threads)) and the thread-per-matrix launches ('items': their item counts)."""
    monkeypatch.setattr(fc, "MIN_SIZE", 1)
    return {
        "blocks": spy_block_launches(monkeypatch, BLOCKS),
        "items": spy_item_launches(monkeypatch, factor.gelqf_mat, factor.syevd_mat),
    }


# -- references -------------------------------------------------------------------------------


def wide(shape: tuple[int, ...], dtype: Any, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-2, 2, shape).astype(dtype)


def gelqf_ref(a: np.ndarray) -> list[np.ndarray]:
    """(Q, L) of A = L Q: LAPACK's QR of A^T (geqrf + orgqr, the same reflectors)."""
    q, r = np.linalg.qr(np.swapaxes(a.astype(F64), -1, -2))
    return [np.swapaxes(q, -1, -2), np.swapaxes(r, -1, -2)]


def spectrum(n: int, batch: int, dtype: Any, seed: int = 0, values: Any = None) -> np.ndarray:
    """Symmetric matrices Q diag(values) Q^T (default: -n/2 .. n/2 in steps of 1, shuffled),
    only their lower triangles kept (syevd reads no more)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(batch):
        q, _ = np.linalg.qr(rng.standard_normal((n, n)))
        lam = rng.permutation(np.arange(n) - n / 2) if values is None else np.asarray(values)
        out.append(np.tril(q @ (lam[:, None] * q.T)))
    return np.stack(out).astype(dtype)


def syevd_ref(a: np.ndarray) -> list[np.ndarray]:
    lam, v = np.linalg.eigh(a.astype(F64), UPLO="L")
    return [factor.sign_rows(np.swapaxes(v, -1, -2)), lam]


def symmetric(a: np.ndarray) -> np.ndarray:
    low = np.tril(a.astype(F64))
    return low + np.swapaxes(np.tril(low, -1), -1, -2)


def out_shapes(name: str, shape: tuple[int, ...]) -> list[tuple[int, ...]]:
    if name == GELQF:
        return [shape, (*shape[:-1], shape[-2])]
    return [shape, shape[:-1]]


def expect(start: np.ndarray, value: np.ndarray, req: str) -> np.ndarray:
    return {"write": value, "add": start + value, "null": start}[req]


def run_both(name: str, a: np.ndarray, reqs: list[str]) -> tuple[list, list]:
    """(outputs, their starts) of the op's FCompute<gpu> on a."""
    starts = [wide(s, a.dtype, 7) for s in out_shapes(name, a.shape)]
    return run_fcompute(name, {}, [a], starts, reqs, "gpu"), starts


# -- gelqf ------------------------------------------------------------------------------------

GELQF_SHAPES = {  # id -> shape; every one a block per matrix (MIN_SIZE lowered)
    "1x1": (1, 1),
    "one-row": (1, 5),
    "2x3": (2, 3),
    "square-20": (20, 20),
    "33x40": (33, 40),  # more rows than the simulator's 32 threads
    "batch-3": (3, 5, 9),
}


def block_threads(items: int) -> int:
    """Threads of the block a matrix gets, for steps of `items` work items: 32 on the
    simulator (each thread a Python thread); on a GPU the power of two from 32 that covers
    them, at most 256."""
    if simulated():
        return 32
    return min(256, max(32, 1 << (items - 1).bit_length()))


@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
@pytest.mark.parametrize("case", list(GELQF_SHAPES))
def test_gelqf_block_matches_lapack(case: str, dtype: Any, blocks: dict[str, list]) -> None:
    shape = GELQF_SHAPES[case]
    a = wide(shape, dtype)
    (q, lo), _ = run_both(GELQF, a, ["write", "write"])
    want_q, want_l = gelqf_ref(a)
    n = shape[-1]
    assert q.dtype == lo.dtype == dtype
    np.testing.assert_allclose(q, want_q, **tol(dtype, n))
    np.testing.assert_allclose(lo, want_l, **tol(dtype, n))
    batch = int(np.prod(shape[:-2]))
    assert blocks["blocks"] == [("_gelqf_block_cuda", batch, block_threads(shape[-2] * n))]
    assert blocks["items"] == []


@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
@pytest.mark.parametrize(
    "reqs", [["add", "add"], ["write", "null"], ["null", "add"], ["add", "write"]]
)
def test_gelqf_requests(reqs: list[str], dtype: Any, blocks: dict[str, list]) -> None:
    a = wide((2, 4, 9), dtype, 1)
    got, starts = run_both(GELQF, a, reqs)
    for g, s, w, r in zip(got, starts, gelqf_ref(a), reqs):
        np.testing.assert_allclose(g, expect(s, w, r), **tol(dtype, 9))
    assert [k for k, _, _ in blocks["blocks"]] == ["_gelqf_block_cuda"]


def test_gelqf_with_q_on_the_input(blocks: dict[str, list]) -> None:
    """Q written in place over A (FInplaceOption (0, 0)): the block copies A first."""
    a = wide((2, 6, 10), F64, 2)
    q, lo = call_in_place(GELQF, a)
    want_q, want_l = gelqf_ref(a)
    np.testing.assert_allclose(q, want_q, **tol(F64, 10))
    np.testing.assert_allclose(lo, want_l, **tol(F64, 10))
    assert len(blocks["blocks"]) == 1


# -- syevd ------------------------------------------------------------------------------------

SYEVD_CASES = {  # id -> (n, batch)
    "1x1": (1, 1),
    "2x2": (2, 1),
    "odd-5-batch-3": (5, 3),
    "even-8-batch-2": (8, 2),
    "n-33": (33, 1),  # more pairs (17) than a warp of rotation threads per round
}


@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
@pytest.mark.parametrize("case", list(SYEVD_CASES))
def test_syevd_block_matches_eigh(case: str, dtype: Any, blocks: dict[str, list]) -> None:
    n, batch = SYEVD_CASES[case]
    a = spectrum(n, batch, dtype, seed=n)
    (u, lam), _ = run_both(SYEVD, a, ["write", "write"])
    want_u, want_lam = syevd_ref(a)
    assert u.dtype == lam.dtype == dtype
    np.testing.assert_allclose(lam, want_lam, **tol(dtype, n))
    np.testing.assert_allclose(u, want_u, **tol(dtype, n))
    assert blocks["blocks"] == [("_syevd_block_cuda", batch, block_threads(n * ((n + 1) // 2)))]
    assert blocks["items"] == []


@pytest.mark.parametrize(
    "values",
    [[1.0] * 6, [1.0, 1.0, 2.0], [3.0, -1.0, 3.0, 0.5, -1.0, 3.0, 2.0]],
    ids=["identity", "diag-1-1-2", "rotated-repeats"],
)
def test_syevd_repeated_eigenvalues(values: list[float], blocks: dict[str, list]) -> None:
    """Eigenvectors of a repeated eigenvalue are any basis of its space: U is checked by
    U A U^T = diag(L) and U U^T = I; a diagonal A keeps U = I (no rotation at all)."""
    n = len(values)
    rotated = len(set(values)) > 2
    a = spectrum(n, 2, F64, 3, values) if rotated else np.tile(np.diag(values), (2, 1, 1))
    (u, lam), _ = run_both(SYEVD, a, ["write", "write"])
    np.testing.assert_allclose(lam, np.broadcast_to(np.sort(values), lam.shape), **tol(F64, n))
    eye = np.broadcast_to(np.eye(n), u.shape)
    np.testing.assert_allclose(u @ np.swapaxes(u, -1, -2), eye, **tol(F64, n))
    diag = u @ symmetric(a) @ np.swapaxes(u, -1, -2)
    np.testing.assert_allclose(diag, lam[..., None] * eye, **tol(F64, n))
    big = np.take_along_axis(u, np.abs(u).argmax(-1)[..., None], -1)
    assert np.all(big > 0)
    if not rotated:
        np.testing.assert_array_equal(u, eye)
    assert [k for k, _, _ in blocks["blocks"]] == ["_syevd_block_cuda"]


@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
@pytest.mark.parametrize(
    "reqs", [["add", "add"], ["write", "null"], ["null", "add"], ["add", "write"]]
)
def test_syevd_requests(reqs: list[str], dtype: Any, blocks: dict[str, list]) -> None:
    a = spectrum(4, 2, dtype, 5)
    got, starts = run_both(SYEVD, a, reqs)
    for g, s, w, r in zip(got, starts, syevd_ref(a), reqs):
        np.testing.assert_allclose(g, expect(s, w, r), **tol(dtype, 4))
    assert [k for k, _, _ in blocks["blocks"]] == ["_syevd_block_cuda"]


def test_syevd_with_u_on_the_input(blocks: dict[str, list]) -> None:
    """U written in place over A: the block reads A before it sets U = I."""
    a = spectrum(6, 2, F64, 6)
    u, lam = call_in_place(SYEVD, a)
    want_u, want_lam = syevd_ref(a)
    np.testing.assert_allclose(u, want_u, **tol(F64, 6))
    np.testing.assert_allclose(lam, want_lam, **tol(F64, 6))
    assert len(blocks["blocks"]) == 1


def call_in_place(name: str, a: np.ndarray) -> list[np.ndarray]:
    """The op's FCompute<gpu> with output 0 on input A's device memory (req inplace)."""
    from numba import cuda

    op = Op.get(name)
    attrs = op.parse_attrs({})
    res = [get_resource(kind, nv.gpu(0))[0] for kind in op.get_attr(FResourceRequest)(attrs)]
    ctx = OpContext(True, RunContext(nv.gpu(0), None), res)
    dev_a = cuda.to_device(a)
    other = cuda.to_device(np.zeros(out_shapes(name, a.shape)[1], a.dtype))
    req = [OpReqType.kWriteInplace, OpReqType.kWriteTo]
    op.get_attr(FCompute_gpu)(attrs, ctx, [dev_a], req, [dev_a, other])
    return [dev_a.copy_to_host(), other.copy_to_host()]


# -- the backward on the block path's outputs -------------------------------------------------

BACKWARD = {  # op -> input on which its gradient is defined (distinct eigenvalues)
    GELQF: lambda dtype: wide((2, 3, 7), dtype, 8),
    SYEVD: lambda dtype: symmetric(spectrum(5, 2, F64, 9)).astype(dtype),
}


@pytest.mark.parametrize("req", ["write", "add", "null"])
@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
@pytest.mark.parametrize("name", [GELQF, SYEVD])
def test_backward_of_the_block_outputs(
    name: str, dtype: Any, req: str, blocks: dict[str, list]
) -> None:
    """dA from the GPU's forward outputs (the block path's) against the CPU's dA from its
    LAPACK outputs."""
    a = BACKWARD[name](dtype)
    shapes = out_shapes(name, a.shape)
    heads = [wide(s, dtype, 10 + k) for k, s in enumerate(shapes)]
    starts = [np.zeros(s, dtype) for s in shapes]
    back = "_backward" + name
    start = wide(a.shape, dtype, 12)
    got_out = run_fcompute(name, {}, [a], starts, ["write", "write"], "gpu")
    got = run_fcompute(back, {}, [*heads, *got_out], [start], [req], "gpu")[0]
    cpu_out = run_fcompute(name, {}, [a], starts, ["write", "write"], "cpu")
    want = run_fcompute(back, {}, [*heads, *cpu_out], [start], [req], "cpu")[0]
    np.testing.assert_allclose(got, want, **tol(dtype, 100))
    assert [k for k, _, _ in blocks["blocks"]] == [name.replace("_linalg", "") + "_block_cuda"]


# -- which kernel runs ------------------------------------------------------------------------


@pytest.mark.parametrize("name", [GELQF, SYEVD])
def test_more_matrices_than_the_grid_stride_over_it(name: str, blocks: dict[str, list]) -> None:
    """6 matrices on the simulator's grid of at most 4 blocks: blocks take several each."""
    a = wide((6, 3, 4), F64, 13) if name == GELQF else spectrum(3, 6, F64, 13)
    (got0, got1), _ = run_both(name, a, ["write", "write"])
    want = gelqf_ref(a) if name == GELQF else syevd_ref(a)
    np.testing.assert_allclose(got0, want[0], **tol(F64, 4))
    np.testing.assert_allclose(got1, want[1], **tol(F64, 4))
    grid = 4 if simulated() else 6
    assert blocks["blocks"] == [(f"{name[7:]}_block_cuda", grid, 32)]


@pytest.mark.parametrize("name", [GELQF, SYEVD])
def test_small_or_many_matrices_keep_a_thread_each(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under MIN_SIZE columns, or MATRICES_PER_SM matrices per SM and more, factor.py's
    thread per matrix runs (one work item per matrix) and gives the same results."""
    launched = {
        "blocks": spy_block_launches(monkeypatch, BLOCKS),
        "items": spy_item_launches(monkeypatch, factor.gelqf_mat, factor.syevd_mat),
    }

    def make(batch: int, n: int) -> np.ndarray:
        return wide((batch, n - 1, n), F64, n) if name == GELQF else spectrum(n, batch, F64, n)

    small = make(5, fc.MIN_SIZE - 1)  # too small for a block
    monkeypatch.setattr(fc, "MATRICES_PER_SM", 2)
    limit = 2 * context_sm_count(gpu_ctx(), name)
    many = make(limit, fc.MIN_SIZE)  # 2 matrices per SM: a thread each
    few = make(limit - 1, fc.MIN_SIZE)  # one fewer: a block each
    for a in (small, many, few):
        (got0, got1), _ = run_both(name, a, ["write", "write"])
        want = gelqf_ref(a) if name == GELQF else syevd_ref(a)
        np.testing.assert_allclose(got0, want[0], **tol(F64, 8))
        np.testing.assert_allclose(got1, want[1], **tol(F64, 8))
    assert launched["items"] == [len(small), len(many)]
    assert [(k, b) for k, b, _ in launched["blocks"]] == [
        (f"{name[7:]}_block_cuda", min(len(few), 4 if simulated() else len(few)))
    ]


def gpu_ctx() -> OpContext:
    return OpContext(False, RunContext(nv.gpu(0), None), [])


def test_the_rule() -> None:
    """A block per matrix: on a GPU, MIN_SIZE columns or more, fewer than MATRICES_PER_SM
    matrices per SM; never on the CPU."""
    gpu = gpu_ctx()
    cpu = OpContext(False, RunContext(nv.cpu(), None), [])
    limit = fc.MATRICES_PER_SM * context_sm_count(gpu, "t")
    assert fc.by_block(gpu, "t", 1, fc.MIN_SIZE)
    assert fc.by_block(gpu, "t", limit - 1, 512)
    assert not fc.by_block(gpu, "t", limit, 512)
    assert not fc.by_block(gpu, "t", 1, fc.MIN_SIZE - 1)
    assert not fc.by_block(cpu, "t", 1, 512)


def test_empty_batch_launches_nothing(blocks: dict[str, list]) -> None:
    for name, shape in ((GELQF, (0, 3, 9)), (SYEVD, (0, 9, 9))):
        outs, starts = run_both(name, np.zeros(shape), ["write", "write"])
        assert [o.shape for o in outs] == [s.shape for s in starts]
    assert blocks == {"blocks": [], "items": []}


def test_bad_input_still_raises_the_documented_errors() -> None:
    with pytest.raises(InferError, match=r"gelqf.*'A'.*\(3, 2\).*at most as many rows"):
        nv.nd.linalg.gelqf(nv.nd.ones((3, 2), ctx=nv.gpu(0)))
    with pytest.raises(InferError, match=r"syevd.*'A'.*\(2, 3\).*square"):
        nv.nd.linalg.syevd(nv.nd.ones((2, 3), ctx=nv.gpu(0)))
    with pytest.raises(InferError, match="float32 and float64 only"):
        nv.nd.linalg.syevd(nv.nd.ones((9, 9), ctx=nv.gpu(0), dtype=np.float16))
