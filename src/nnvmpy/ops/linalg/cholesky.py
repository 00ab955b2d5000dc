"""linalg.potrf, linalg.potri and linalg.sumlogdiag: Cholesky factors and what uses them.

    potrf(A)       L with A = L L^T (lower) or U with A = U^T U (lower=False)
    potri(L)       (L L^T)^-1, or (U^T U)^-1: the inverse of A from its factor
    sumlogdiag(A)  sum_i log A[i, i]  (half of log det A for a Cholesky factor)

potrf reads one triangle of A (the lower, or the upper with lower=False) and zeroes the
other triangle of its output. Its gradient is MXNet's symmetric one,
    dA = 1/2 L^-T copyLTU(L^T dL) L^-1,
which equals the true derivative along symmetric perturbations of A (the only ones that
keep A a covariance): check it through a symmetrising input, as MXNet's tests do. potri
reads one triangle of its input, and its gradient lives on that triangle:
    dL = -tril((L L^T)^-1 (dOut + dOut^T) L^-T).

CPU: LAPACK's potrf and potri from NumPy's OpenBLAS (_lapack.py) from order MIN_ORDER;
smaller matrices take np.linalg.cholesky, and potri inverts the triangle with
np.linalg.inv, then multiplies. GPU: one work item per matrix (potrf_mat,
potri_mat below); a non-positive-definite or singular input sets a flag that the host
reads back to raise a LinalgError naming the matrix.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ... import kernel
from ...graph.grad import ElemwiseGradUseIn, ElemwiseGradUseInOut, ElemwiseGradUseOut
from ...kernel.launch import store
from ...param import Parameter, field
from ...registry import NodeAttrs
from . import _lapack
from ._base import (
    ADD,
    NULL,
    WRITE,
    LinalgError,
    Workspace,
    assign,
    assign_shapes,
    batch_of,
    dims,
    fail,
    is_gpu,
    known,
    modes,
    raise_if_flagged,
    register_linalg,
    require_square,
)
from ._batched import LOWER, UPPER, gemm, launch, mirror_lower, scale, swap, triangle, trsm
from ._blocked_cuda import by_block, potrf_blocks, potri_blocks
from .triangular import check_nonsingular


class CholeskyParam(Parameter):
    lower = field(
        bool,
        default=True,
        describe="True if the triangular matrix is lower triangular, false if it is upper "
        "triangular.",
    )


def square_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    """Output and input: one stack of square matrices."""
    op = attrs.op.name  # type: ignore[union-attr]
    assign_shapes(op, out_shapes, [(0, in_shapes[0], "output (the shape of A)")])
    assign_shapes(op, in_shapes, [(0, out_shapes[0], "input 'A'")])
    require_square(op, "A", in_shapes[0])
    return known(in_shapes[0], out_shapes[0])


# -- GPU kernels: one matrix per work item ----------------------------------------------------


@kernel.device_function
def _at(base, n, r, c, lower):
    """Flat index of (r, c) of the factor's lower form: the transpose when upper."""
    if lower:
        return base + r * n + c
    return base + c * n + r


@kernel.parallel_for
def potrf_mat(z, out, a, n, lower, flags):
    """Cholesky of matrix z (column by column, in place when out is a); flag failures."""
    base = z * n * n
    flags[z] = 0.0
    for j in range(n):
        s = a[_at(base, n, j, j, lower)]
        for q in range(j):
            v = out[_at(base, n, j, q, lower)]
            s -= v * v
        if not s > 0.0:  # also catches NaN
            flags[z] = 1.0
            return
        d = math.sqrt(s)
        out[_at(base, n, j, j, lower)] = d
        for r in range(j + 1, n):
            s = a[_at(base, n, r, j, lower)]
            for q in range(j):
                s -= out[_at(base, n, r, q, lower)] * out[_at(base, n, j, q, lower)]
            out[_at(base, n, r, j, lower)] = s / d
    for r in range(n):
        for c in range(r + 1, n):
            out[_at(base, n, r, c, lower)] = 0.0


@kernel.parallel_for
def potri_mat(z, out, a, n, lower, flags):
    """(L L^T)^-1 of matrix z: L^-1 in place (by columns), then L^-T L^-1 by rows."""
    base = z * n * n
    flags[z] = 0.0
    for r in range(n):
        for c in range(r + 1):
            out[_at(base, n, r, c, lower)] = a[_at(base, n, r, c, lower)]
    for j in range(n):
        d = out[_at(base, n, j, j, lower)]
        if d == 0.0:
            flags[z] = 1.0
            return
        out[_at(base, n, j, j, lower)] = 1.0 / d
        for r in range(j + 1, n):
            s = 0.0
            for q in range(j, r):
                s += out[_at(base, n, r, q, lower)] * out[_at(base, n, q, j, lower)]
            out[_at(base, n, r, j, lower)] = -s / out[_at(base, n, r, r, lower)]
    # entry (r, c) of L^-T L^-1, r >= c, needs rows >= r of L^-1: rows in ascending order
    # overwrite only what no later entry reads
    for r in range(n):
        for c in range(r + 1):
            s = 0.0
            for q in range(r, n):
                s += out[_at(base, n, q, r, lower)] * out[_at(base, n, q, c, lower)]
            out[_at(base, n, r, c, lower)] = s
    for r in range(n):
        for c in range(r + 1, n):
            out[_at(base, n, r, c, lower)] = out[_at(base, n, c, r, lower)]


# -- potrf ------------------------------------------------------------------------------------


def _not_pd(op: str, index: int) -> LinalgError:
    return fail(
        op,
        f"input 'A' is not symmetric positive-definite (matrix {index} of the batch); "
        "the Cholesky factorization failed",
    )


def _cholesky_cpu(op: str, a: np.ndarray, lower: bool) -> np.ndarray:
    if a.shape[-1] >= _lapack.MIN_ORDER and _lapack.available(a.dtype):
        factor, bad = _lapack.potrf(a, lower)
        if bad >= 0:
            raise _not_pd(op, bad)
        return factor
    src = a if lower else swap(a)  # np.linalg.cholesky reads the lower triangle
    try:
        factor = np.linalg.cholesky(src)
    except np.linalg.LinAlgError:
        stack = src.reshape(-1, *src.shape[-2:])
        for i, m in enumerate(stack):  # only to name the failing matrix
            try:
                np.linalg.cholesky(m)
            except np.linalg.LinAlgError:
                raise _not_pd(op, i) from None
        raise _not_pd(op, 0) from None
    return factor if lower else swap(factor)


def _per_matrix_gpu(
    ctx: Any,
    op: str,
    out: Any,
    mode: int,
    a: Any,
    lower: bool,
    blocks: Callable[..., None],
    mat: Any,
    failure: Callable[[str, int], LinalgError] | None = None,
) -> None:
    """potrf / potri on the GPU: `blocks` (a thread block per matrix, large orders) or
    `mat` (a thread per matrix) into out, or a workspace added to it for req='add'. The
    kernels flag a failed matrix; with `failure`, LinalgError failure(op, z) for the first."""
    batch, n = batch_of(a), dims(a)[-1]
    ws = Workspace(ctx, a.dtype, [(batch,), dims(a)])
    target = ws[1] if mode == ADD else out
    if by_block(a, n):
        blocks(ctx, op, batch, n, target, a, lower, ws[0])
    else:
        launch(ctx, op, mat, batch, target, a, n, lower, ws[0])
    if failure is not None:
        raise_if_flagged(ctx, ws[0], lambda z: failure(op, z))
    if mode == ADD:
        scale(ctx, op, out, ADD, target, 1.0)


def _potrf_forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    op, lower = attrs.op.name, attrs.parsed.lower  # type: ignore[union-attr]
    (mode,) = modes(op, req)
    a, out = inputs[0], outputs[0]
    if mode == NULL or not a.size:
        return
    if not is_gpu(ctx):
        assign(out, mode, _cholesky_cpu(op, a, lower))
        return
    _per_matrix_gpu(ctx, op, out, mode, a, lower, potrf_blocks, potrf_mat, _not_pd)


def _potrf_backward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    """inputs (dL, L) -> dA = 1/2 L^-T copyLTU(L^T dL) L^-1 (the upper case transposed)."""
    op, lower = attrs.op.name, attrs.parsed.lower  # type: ignore[union-attr]
    (mode,) = modes(op, req)
    g, factor = inputs
    if mode == NULL or not g.size:
        return
    ws = Workspace(ctx, g.dtype, [dims(g), dims(g)])
    m, y = ws[0], ws[1]
    gemm(ctx, op, m, WRITE, factor, lower, g, not lower)  # L^T dL
    mirror_lower(ctx, op, m)
    trsm(ctx, op, y, WRITE, factor, m, lower, False, lower)  # L^-T M
    trsm(ctx, op, outputs[0], mode, factor, y, not lower, True, lower, 0.5, work=m)  # Y L^-1


register_linalg(
    "potrf",
    describe="""Performs Cholesky factorization of a symmetric positive-definite matrix.
Input is a tensor *A* of dimension *n >= 2*.

If *n=2*, the Cholesky factor *B* of the symmetric, positive definite matrix *A* is
computed. *B* is triangular (entries of upper or lower triangle are all zero), has
positive diagonal entries, and: *A* = *B* * *B*^T if *lower* = *true*, *A* = *B*^T *
*B* if *lower* = *false*. Only that triangle of *A* is read.

If *n>2*, *potrf* is performed separately on the trailing two dimensions for all inputs
(batch mode). A matrix that is not positive-definite raises an error.

.. note:: The operator supports float32 and float64 data types only.""",
    inputs=[("A", "Tensor of input matrices to be decomposed")],
    num_outputs=1,
    infer_shape=square_shape,
    forward=_potrf_forward,
    gradient=ElemwiseGradUseOut,
    backward=_potrf_backward,
    backward_inputs=2,
    param=CholeskyParam,
    inplace=[(0, 0)],
)


# -- potri ------------------------------------------------------------------------------------


def _potri_forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    op, lower = attrs.op.name, attrs.parsed.lower  # type: ignore[union-attr]
    (mode,) = modes(op, req)
    a, out = inputs[0], outputs[0]
    if mode == NULL or not a.size:
        return
    check_nonsingular(ctx, op, a)
    if not is_gpu(ctx) and a.shape[-1] >= _lapack.MIN_ORDER and _lapack.available(a.dtype):
        assign(out, mode, _lapack.potri(a, lower))
        return
    if not is_gpu(ctx):
        inv = np.linalg.inv(np.tril(a) if lower else np.triu(a))
        assign(out, mode, swap(inv) @ inv if lower else inv @ swap(inv))
        return
    _per_matrix_gpu(ctx, op, out, mode, a, lower, potri_blocks, potri_mat)


def _potri_backward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    """inputs (dOut, L, C = potri(L)) -> dL = -tril(C S L^-T), S = dOut + dOut^T.

    Upper: dU = -triu(U^-T S C).
    """
    op, lower = attrs.op.name, attrs.parsed.lower  # type: ignore[union-attr]
    (mode,) = modes(op, req)
    g, factor, c = inputs
    if mode == NULL or not g.size:
        return
    w = Workspace(ctx, g.dtype, [dims(g)])[0]
    for first, transpose_g in ((True, False), (False, True)):
        m = WRITE if first else ADD
        if lower:
            gemm(ctx, op, w, m, c, False, g, transpose_g)
        else:
            gemm(ctx, op, w, m, g, transpose_g, c, False)
    trsm(ctx, op, w, WRITE, factor, w, True, lower, lower, -1.0)
    triangle(ctx, op, outputs[0], mode, w, LOWER if lower else UPPER)


register_linalg(
    "potri",
    describe="""Performs matrix inversion from a Cholesky factorization.
Input is a tensor *A* of dimension *n >= 2*.

If *n=2*, *A* is a triangular matrix (entries of upper or lower triangle are all zero)
with positive diagonal. We compute: *out* = *A*^-T * *A*^-1 if *lower* = *true*,
*out* = *A*^-1 * *A*^-T if *lower* = *false*. In other words, if *A* is the Cholesky
factor of a symmetric positive definite matrix *B* (obtained by *potrf*), then
*out* = *B*^-1. Only the triangle of *A* selected by *lower* is read.

If *n>2*, *potri* is performed separately on the trailing two dimensions for all inputs
(batch mode).

.. note:: The operator supports float32 and float64 data types only.

.. note:: Use this operator only if you are certain you need the inverse of *B*, and
          cannot use the Cholesky factor *A* (*potrf*), together with backsubstitution
          (*trsm*). The latter is numerically much safer, and also cheaper.""",
    inputs=[("A", "Tensor of lower triangular matrices")],
    num_outputs=1,
    infer_shape=square_shape,
    forward=_potri_forward,
    gradient=ElemwiseGradUseInOut,
    backward=_potri_backward,
    backward_inputs=3,
    param=CholeskyParam,
    inplace=[(0, 0)],
)


# -- sumlogdiag -------------------------------------------------------------------------------


@kernel.parallel_for
def _sumlogdiag_mat(z, out, a, n, mode):
    s = 0.0
    for r in range(n):
        d = a[(z * n + r) * n + r]
        if d > 0.0:
            s += math.log(d)
        elif d == 0.0:
            s -= math.inf
        else:
            s += math.nan  # log of a negative number, as MXNet gives it
    store(out, z, s, mode)


@kernel.parallel_for
def _sumlogdiag_grad_elem(i, out, g, a, n, mode):
    """dA[z, r, c] = dOut[z] / A[z, r, r] on the diagonal, 0 elsewhere."""
    c = i % n
    t = i // n
    r = t % n
    v = 0.0
    if r == c:
        v = g[t // n] / a[i]
    store(out, i, v, mode)


def batch_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    """Square matrices in, one value per matrix out; (1,) for a single matrix (MXNet's)."""
    op = attrs.op.name  # type: ignore[union-attr]
    a = in_shapes[0]
    if require_square(op, "A", a):
        batch = tuple(a[:-2]) or (1,)
        for j in range(len(out_shapes)):
            assign_shapes(op, out_shapes, [(j, batch, f"output {j}")])
    return known(*in_shapes, *out_shapes)


def _sumlogdiag_forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    op = attrs.op.name  # type: ignore[union-attr]
    (mode,) = modes(op, req)
    a, out = inputs[0], outputs[0]
    if mode == NULL or not out.size:
        return
    if is_gpu(ctx):
        launch(ctx, op, _sumlogdiag_mat, out.size, out, a, dims(a)[-1], mode)
        return
    with np.errstate(divide="ignore", invalid="ignore"):
        assign(out, mode, np.log(np.diagonal(a, axis1=-2, axis2=-1)).sum(axis=-1))


def _sumlogdiag_backward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    op = attrs.op.name  # type: ignore[union-attr]
    (mode,) = modes(op, req)
    g, a = inputs
    if mode == NULL or not a.size:
        return
    n = dims(a)[-1]
    if is_gpu(ctx):
        launch(ctx, op, _sumlogdiag_grad_elem, a.size, outputs[0], g, a, n, mode)
        return
    grad = np.zeros(a.shape, a.dtype)
    idx = np.arange(n)
    grad[..., idx, idx] = g.reshape(*a.shape[:-2], 1) / a[..., idx, idx]
    assign(outputs[0], mode, grad)


register_linalg(
    "sumlogdiag",
    describe="""Computes the sum of the logarithms of the diagonal elements of a square matrix.
Input is a tensor *A* of dimension *n >= 2*.

If *n=2*, *A* must be square with positive diagonal entries. We sum the natural
logarithms of the diagonal elements, the result has shape (1,).

If *n>2*, *sumlogdiag* is performed separately on the trailing two dimensions for all
inputs (batch mode).

.. note:: The operator supports float32 and float64 data types only.""",
    inputs=[("A", "Tensor of square matrices")],
    num_outputs=1,
    infer_shape=batch_shape,
    forward=_sumlogdiag_forward,
    gradient=ElemwiseGradUseIn,
    backward=_sumlogdiag_backward,
    backward_inputs=2,
)
