"""Batched BLAS-3 primitives for both devices, so each op's math is written once.

    gemm(ctx, op, out, mode, a, ta, b, tb, alpha, c=, beta=, axis=, tri=)
    trsm(ctx, op, out, mode, t, b, transpose, rightside, lower, alpha)
    scale / triangle / mirror_lower

On the CPU they are NumPy's BLAS: np.matmul, and cblas ?trsm from the OpenBLAS NumPy
bundles (_cblas.py; SciPy, which wraps it, is not a runtime dependency), or for stacks
of tiny matrices (or without that library) np.linalg.solve on the masked triangle, one
LAPACK call for the whole stack. On the GPU they launch the kernels of _kernels.py, and
trsm from _blocked_cuda.MIN_ORDER columns a block per group of right-hand sides
(_solve_cuda.py). Arrays keep their full shapes; the matrices are the last two axes, or
(gemm) the axis `axis` and the last one.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...base import NNVMError
from ...kernel.launch import run_rows
from . import _cblas
from . import _kernels as k
from ._base import ADD, NULL, WRITE, assign, dims, fail, is_gpu
from ._blocked_cuda import by_block
from ._solve_cuda import trsm_blocks

NONE, LOWER, UPPER = 0, 1, 2


def tri_code(lower: bool) -> int:
    return LOWER if lower else UPPER


def swap(x: np.ndarray) -> np.ndarray:
    return np.swapaxes(x, -1, -2)


def mask(x: np.ndarray, tri: int) -> np.ndarray:
    """x's triangle `tri` (others zero); x itself for NONE."""
    if tri == LOWER:
        return np.tril(x)
    if tri == UPPER:
        return np.triu(x)
    return x


def layout(shape: tuple[int, ...], axis: int) -> tuple[int, int, int, int]:
    """(P, rows, Q, cols) of MXNet's gemm layout: rows on `axis`, columns on the last axis."""
    ax = axis % len(shape)
    return math.prod(shape[:ax]), shape[ax], math.prod(shape[ax + 1 : -1]), shape[-1]


def _mats(x: Any, axis: int) -> np.ndarray:
    """The (P, Q, rows, cols) view of a NumPy stack of matrices in gemm layout."""
    p, r, q, c = layout(dims(x), axis)
    return x.reshape(p, r, q, c).transpose(0, 2, 1, 3)


def launch(ctx: Any, op: str, loop: Any, n: int, *args: Any) -> None:
    """A parallel_for over n items with flattened arrays; errors name the op."""
    run_rows(ctx, op, loop, n, *args)


# -- gemm -------------------------------------------------------------------------------------


def gemm(
    ctx: Any,
    op: str,
    out: Any,
    mode: int,
    a: Any,
    ta: bool,
    b: Any,
    tb: bool,
    alpha: float = 1.0,
    c: Any = None,
    beta: float = 0.0,
    axis: int = -2,
    tri: tuple[int, int, int] = (NONE, NONE, NONE),
) -> None:
    """out (+)= alpha op(A) op(B) + beta C for every matrix of the stacks.

    tri = (for A, for B, for out): only that triangle of the stored A / B is read, and
    out gets zeros outside its triangle. C (out's shape) may be out itself.
    """
    if mode == NULL or not dims(out) or math.prod(dims(out)) == 0:
        return
    if is_gpu(ctx):
        _gemm_gpu(ctx, op, out, mode, a, ta, b, tb, alpha, c, beta, axis, tri)
        return
    lhs, rhs = mask(_mats(a, axis), tri[0]), mask(_mats(b, axis), tri[1])
    lhs, rhs = (swap(lhs) if ta else lhs), (swap(rhs) if tb else rhs)
    target = _mats(out, axis)
    simple = c is None and alpha == 1.0 and tri[2] == NONE and mode == WRITE
    if simple and not (np.may_share_memory(out, a) or np.may_share_memory(out, b)):
        np.matmul(lhs, rhs, out=target)  # BLAS writes the output itself
        return
    result = np.matmul(lhs, rhs)
    if alpha != 1.0:
        result *= alpha
    if c is not None and beta != 0.0:
        result += beta * _mats(c, axis)
    assign(target, mode, mask(result, tri[2]))


def _gemm_gpu(
    ctx: Any, op: str, out: Any, mode: int, a: Any, ta: bool, b: Any, tb: bool, alpha: float,
    c: Any, beta: float, axis: int, tri: tuple[int, int, int],
) -> None:  # fmt: skip
    p, m, q, n = layout(dims(out), axis)
    _, a_rows, _, a_cols = layout(dims(a), axis)
    _, b_rows, _, b_cols = layout(dims(b), axis)
    depth = a_rows if ta else a_cols
    if c is None:
        c, beta = out, 0.0  # never read with beta == 0
    launch(
        ctx, op, k.gemm_elem, p * m * q * n, out, a, b, c, m, n, depth, q,
        a_rows, a_cols, b_rows, b_cols, ta, tb, float(alpha), float(beta), *tri, mode,
    )  # fmt: skip


# -- trsm -------------------------------------------------------------------------------------


def trsm(
    ctx: Any,
    op: str,
    out: Any,
    mode: int,
    t: Any,
    b: Any,
    transpose: bool,
    rightside: bool,
    lower: bool,
    alpha: float = 1.0,
    work: Any = None,
) -> None:
    """out (+)= alpha op(T)^-1 B (or alpha B op(T)^-1 with rightside), T's triangle only.

    out may be B itself. With mode ADD on the GPU, `work` (B's shape) holds the solution
    before it is added; on the CPU a singular T raises LinalgError naming `op`.
    """
    if mode == NULL or math.prod(dims(out)) == 0:
        return
    if is_gpu(ctx):
        _trsm_gpu(ctx, op, out, mode, t, b, transpose, rightside, lower, alpha, work)
        return
    fn = _cblas.trsm_function(b.dtype)
    shape = dims(b)
    per_matrix = shape[-1] * shape[-2] * dims(t)[-1]
    if fn is not None and (per_matrix >= 4096 or math.prod(shape) <= 32 * per_matrix):
        assign(out, mode, _cblas.trsm(fn, t, b, transpose, rightside, lower, alpha))
        return
    # many tiny matrices: one LAPACK call on the whole stack beats a BLAS call per matrix
    m = mask(t, tri_code(lower))
    m = swap(m) if transpose else m
    try:
        x = swap(np.linalg.solve(swap(m), swap(b))) if rightside else np.linalg.solve(m, b)
    except np.linalg.LinAlgError:
        raise fail(op, "the triangular matrix A is singular (a zero on its diagonal)") from None
    if alpha != 1.0:
        x *= alpha
    assign(out, mode, x)


def _trsm_gpu(
    ctx: Any, op: str, out: Any, mode: int, t: Any, b: Any, transpose: bool, rightside: bool,
    lower: bool, alpha: float, work: Any,
) -> None:  # fmt: skip
    shape = dims(b)
    n = dims(t)[-1]
    nvec = shape[-2] if rightside else shape[-1]
    batch = math.prod(shape) // (n * nvec)
    transposed = transpose != rightside
    target = out
    if mode == ADD:
        if work is None:
            raise NNVMError(f"{op}: trsm with req='add' on the gpu needs a work array")
        target = work
    if by_block(t, n):  # a block per (matrix, group of vectors); else a thread per vector
        trsm_blocks(
            ctx, op, batch, n, nvec, target, b, t, rightside, lower != transposed, transposed,
            float(alpha),
        )  # fmt: skip
    else:
        launch(
            ctx, op, k.trsm_vec, batch * nvec, target, b, t, n, nvec, rightside,
            lower != transposed, transposed, float(alpha),
        )  # fmt: skip
    if mode == ADD:
        scale(ctx, op, out, ADD, target, 1.0)


# -- element-wise helpers ---------------------------------------------------------------------


def scale(ctx: Any, op: str, out: Any, mode: int, x: Any, alpha: float) -> None:
    """out (+)= alpha * x."""
    if mode == NULL:
        return
    if is_gpu(ctx):
        launch(ctx, op, k.scale_elem, math.prod(dims(out)), out, x, float(alpha), mode)
    else:
        assign(out, mode, x * alpha if alpha != 1.0 else x)


def triangle(ctx: Any, op: str, out: Any, mode: int, x: Any, tri: int) -> None:
    """out (+)= the triangle `tri` of every matrix of x, zeros elsewhere."""
    if mode == NULL:
        return
    if is_gpu(ctx):
        launch(ctx, op, k.triangle_elem, math.prod(dims(out)), out, x, dims(x)[-1], tri, mode)
    else:
        assign(out, mode, mask(x, tri))


def mirror_lower(ctx: Any, op: str, x: Any) -> None:
    """x = the symmetric matrices of x's lower triangles (MXNet's copyLTU), in place."""
    if is_gpu(ctx):
        launch(ctx, op, k.mirror_lower_elem, math.prod(dims(x)), x, dims(x)[-1])
    else:
        x[...] = np.tril(x) + swap(np.tril(x, -1))
