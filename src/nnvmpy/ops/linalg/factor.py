"""linalg.gelqf and linalg.syevd: the LQ factorization and the symmetric eigendecomposition.

    Q, L = gelqf(A)    A = L Q, A (m, n) with m <= n, L lower (m, m), Q Q^T = I (m, n)
    U, L = syevd(A)    U A = diag(L) U, rows of U orthonormal eigenvectors, L ascending

gelqf follows LAPACK's Householder convention (gelqf + orglq), as MXNet does: row i of
A is reflected onto beta_i e_i with beta_i = -sign(A_ii) ||row||, so L's diagonal may be
negative. On the CPU it is LAPACK geqrf + orgqr of A^T (_lapack.lq; np.linalg.qr of A^T
below 32 rows: the same reflectors); on the GPU a Householder kernel, a thread block per
matrix where the batch is too small to fill the device (_factor_cuda.py), else one
matrix per thread. Gradient (A = L Q): M = L^T dL - dQ Q^T, dA = L^-T (dQ + copyLTU(M) Q).

syevd reads A's lower triangle. Each eigenvector row is signed so that its entry of
largest magnitude (the first such) is positive, as MXNet signs them. CPU: LAPACK syevd
(_lapack.eigh_rows; np.linalg.eigh below order 32); GPU: Jacobi rotations, a thread block
per matrix (round-robin order) where the batch is too small to fill the device
(_factor_cuda.py), else cyclic, one matrix per thread. Gradient, for distinct eigenvalues
(MXNet's): dA = U^T (diag(dL) + F) U with F_ij = ((dU U^T)_ij - (dU U^T)_ji) /
(2 (L_i - L_j)), a symmetric matrix.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ... import kernel
from ...base import InferError
from ...graph.grad import ElemwiseGradUseOut
from ...infer import shape_str
from ...registry import NodeAttrs
from . import _lapack
from ._base import (
    ADD,
    NULL,
    WRITE,
    Workspace,
    assign,
    assign_shapes,
    batch_of,
    dims,
    is_gpu,
    known,
    modes,
    register_linalg,
    require_matrix,
    require_square,
)
from ._batched import gemm, launch, mirror_lower, scale, swap, trsm

MAX_SWEEPS = 100  # Jacobi sweeps at most (both GPU kernels)

# -- GPU kernels: one matrix per work item ----------------------------------------------------


@kernel.parallel_for
def gelqf_mat(z, q, lo, a, tau, m, n):
    """Householder LQ of the m x n matrix z: Q into q (also the work area), L into l."""
    qb = z * m * n
    lb = z * m * m
    for e in range(m * n):
        q[qb + e] = a[qb + e]
    for i in range(m):  # reflect row i onto beta e_i; v (v_i = 1) stays in the row
        row = qb + i * n
        alpha = q[row + i]
        xnorm2 = 0.0
        for c in range(i + 1, n):
            xnorm2 += q[row + c] * q[row + c]
        t = 0.0
        if xnorm2 > 0.0:
            beta = -math.copysign(math.sqrt(alpha * alpha + xnorm2), alpha)
            t = (beta - alpha) / beta
            f = 1.0 / (alpha - beta)
            for c in range(i + 1, n):
                q[row + c] *= f
            q[row + i] = beta
        tau[z * m + i] = t
        if t != 0.0:  # rows below: x <- x - t (x . v) v
            for r in range(i + 1, m):
                other = qb + r * n
                w = q[other + i]
                for c in range(i + 1, n):
                    w += q[other + c] * q[row + c]
                w *= t
                q[other + i] -= w
                for c in range(i + 1, n):
                    q[other + c] -= w * q[row + c]
    for r in range(m):
        for c in range(m):
            lo[lb + r * m + c] = q[qb + r * n + c] if c <= r else 0.0
    for i in range(m - 1, -1, -1):  # Q = H_{m-1} ... H_0 restricted to m rows, in place
        row = qb + i * n
        t = tau[z * m + i]
        for r in range(i + 1, m):
            other = qb + r * n
            w = 0.0  # column i of a formed row r > i is still 0
            for c in range(i + 1, n):
                w += q[other + c] * q[row + c]
            w *= t
            q[other + i] = -w
            for c in range(i + 1, n):
                q[other + c] -= w * q[row + c]
        for c in range(i + 1, n):
            q[row + c] *= -t
        q[row + i] = 1.0 - t
        for c in range(i):
            q[row + c] = 0.0


@kernel.parallel_for
def syevd_mat(z, u, lam, a, w, n, tol, max_sweeps):
    """Jacobi eigendecomposition of matrix z (lower triangle of a), w its work matrix."""
    base = z * n * n
    for r in range(n):
        for c in range(r + 1):
            v = a[base + r * n + c]
            w[base + r * n + c] = v
            w[base + c * n + r] = v
    for r in range(n):
        for c in range(n):
            u[base + r * n + c] = 1.0 if r == c else 0.0
    for _ in range(max_sweeps):
        off = 0.0
        total = 0.0
        for e in range(n * n):
            v = w[base + e]
            total += v * v
            if e // n != e % n:
                off += v * v
        if off <= tol * total:
            break
        for p in range(n - 1):
            for q in range(p + 1, n):
                apq = w[base + p * n + q]
                if apq == 0.0:
                    continue
                theta = (w[base + q * n + q] - w[base + p * n + p]) / (2.0 * apq)
                t = 1.0 / (abs(theta) + math.sqrt(theta * theta + 1.0))
                if theta < 0.0:
                    t = -t
                cs = 1.0 / math.sqrt(t * t + 1.0)
                sn = t * cs
                for k in range(n):  # W J: columns p and q
                    x = w[base + k * n + p]
                    y = w[base + k * n + q]
                    w[base + k * n + p] = cs * x - sn * y
                    w[base + k * n + q] = sn * x + cs * y
                for k in range(n):  # J^T W J: rows p and q; U = J^T U likewise
                    x = w[base + p * n + k]
                    y = w[base + q * n + k]
                    w[base + p * n + k] = cs * x - sn * y
                    w[base + q * n + k] = sn * x + cs * y
                    x = u[base + p * n + k]
                    y = u[base + q * n + k]
                    u[base + p * n + k] = cs * x - sn * y
                    u[base + q * n + k] = sn * x + cs * y
                w[base + p * n + q] = 0.0
                w[base + q * n + p] = 0.0
    for k in range(n):
        lam[z * n + k] = w[base + k * n + k]
    for i in range(n - 1):  # ascending eigenvalues; their rows of U follow
        best = i
        for j in range(i + 1, n):
            if lam[z * n + j] < lam[z * n + best]:
                best = j
        if best != i:
            v = lam[z * n + i]
            lam[z * n + i] = lam[z * n + best]
            lam[z * n + best] = v
            for k in range(n):
                v = u[base + i * n + k]
                u[base + i * n + k] = u[base + best * n + k]
                u[base + best * n + k] = v
    for i in range(n):  # the entry of largest magnitude of each row is positive
        best = 0
        biggest = abs(u[base + i * n])
        for k in range(1, n):
            if abs(u[base + i * n + k]) > biggest:
                biggest = abs(u[base + i * n + k])
                best = k
        if u[base + i * n + best] < 0.0:
            for k in range(n):
                u[base + i * n + k] = -u[base + i * n + k]


@kernel.parallel_for
def _syevd_grad_mid_elem(i, out, t, gl, lam, n):
    """diag(dL) + F, F_rc = (T_rc - T_cr) / (2 (L_r - L_c)) off the diagonal."""
    c = i % n
    k = i // n
    r = k % n
    z = k // n
    if r == c:
        out[i] = gl[z * n + r]
    else:
        out[i] = (t[i] - t[(z * n + c) * n + r]) / (2.0 * (lam[z * n + r] - lam[z * n + c]))


def _write_pair(ctx: Any, op: str, outputs: list[Any], ms: list[int], values: Any) -> None:
    for out, mode, value in zip(outputs, ms, values):
        scale(ctx, op, out, mode, value, 1.0)


# -- gelqf ------------------------------------------------------------------------------------


def _gelqf_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    op = attrs.op.name  # type: ignore[union-attr]
    assign_shapes(op, out_shapes, [(0, in_shapes[0], "output 'Q' (the shape of A)")])
    assign_shapes(op, in_shapes, [(0, out_shapes[0], "input 'A'")])
    a = in_shapes[0]
    if require_matrix(op, "A", a):
        m, n = a[-2], a[-1]
        if m is not None and n is not None and m > n:
            raise InferError(
                f"{op}: input 'A' of shape {shape_str(a)} must have at most as many rows "
                "as columns (x <= y for matrices of shape (x, y))"
            )
        assign_shapes(op, out_shapes, [(1, (*a[:-1], m), "output 'L'")])
    return known(*in_shapes, *out_shapes)


def _gelqf_forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    op = attrs.op.name  # type: ignore[union-attr]
    ms = modes(op, req)
    a = inputs[0]
    if ms == [NULL, NULL] or not a.size:
        return
    if not is_gpu(ctx):
        if a.shape[-2] >= _lapack.MIN_ORDER and _lapack.available(a.dtype):
            q, lo = _lapack.lq(a)
        else:
            q, r = np.linalg.qr(swap(a))  # the LQ factors of A, transposed
            q, lo = swap(q), swap(r)
        assign(outputs[0], ms[0], q)
        assign(outputs[1], ms[1], lo)
        return
    shape, batch = dims(a), batch_of(a)
    m, n = shape[-2], shape[-1]
    ws = Workspace(ctx, a.dtype, [(batch, m), shape, (*shape[:-1], m)])
    direct = ms == [WRITE, WRITE]
    q, lo = (outputs[0], outputs[1]) if direct else (ws[1], ws[2])
    from nnvmpy.ops.linalg._factor_cuda import gelqf_gpu

    if not gelqf_gpu(ctx, op, q, lo, a, ws[0], batch, m, n):  # else a thread per matrix
        launch(ctx, op, gelqf_mat, batch, q, lo, a, ws[0], m, n)
    if not direct:
        _write_pair(ctx, op, outputs, ms, (q, lo))


def _gelqf_backward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    """inputs (dQ, dL, Q, L) -> dA = L^-T (dQ + copyLTU(L^T dL - dQ Q^T) Q)."""
    op = attrs.op.name  # type: ignore[union-attr]
    (mode,) = modes(op, req)
    dq, dl, q, lo = inputs
    if mode == NULL or not q.size:
        return
    ws = Workspace(ctx, q.dtype, [dims(lo), dims(q)])
    m, w = ws[0], ws[1]
    gemm(ctx, op, m, WRITE, lo, True, dl, False)
    gemm(ctx, op, m, ADD, dq, False, q, True, -1.0)
    mirror_lower(ctx, op, m)
    gemm(ctx, op, w, WRITE, m, False, q, False, 1.0, c=dq, beta=1.0)
    if mode == WRITE:
        trsm(ctx, op, outputs[0], WRITE, lo, w, True, False, True)
    else:
        trsm(ctx, op, w, WRITE, lo, w, True, False, True)
        scale(ctx, op, outputs[0], mode, w, 1.0)


register_linalg(
    "gelqf",
    describe="""LQ factorization for general matrix.
Input is a tensor *A* of dimension *n >= 2*.

If *n=2*, we compute the LQ factorization (LAPACK *gelqf*, followed by *orglq*). *A*
must have shape *(x, y)* with *x <= y*, and must have full rank *=x*. The LQ
factorization consists of *L* with shape *(x, x)* and *Q* with shape *(x, y)*, so
that: *A* = *L* * *Q*. Here, *L* is lower triangular (upper triangle equal to zero)
with nonzero diagonal, and *Q* is row-orthonormal, meaning that *Q* * *Q*^T is equal to
the identity matrix of shape *(x, x)*.

If *n>2*, *gelqf* is performed separately on the trailing two dimensions for all
inputs (batch mode).

.. note:: The operator supports float32 and float64 data types only.""",
    inputs=[("A", "Tensor of input matrices to be factorized")],
    num_outputs=2,
    infer_shape=_gelqf_shape,
    forward=_gelqf_forward,
    gradient=ElemwiseGradUseOut,
    backward=_gelqf_backward,
    backward_inputs=4,
    inplace=[(0, 0)],
)


# -- syevd ------------------------------------------------------------------------------------


def _syevd_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    op = attrs.op.name  # type: ignore[union-attr]
    assign_shapes(op, out_shapes, [(0, in_shapes[0], "output 'U' (the shape of A)")])
    assign_shapes(op, in_shapes, [(0, out_shapes[0], "input 'A'")])
    a = in_shapes[0]
    if require_square(op, "A", a):
        assign_shapes(op, out_shapes, [(1, tuple(a[:-1]), "output 'L'")])
    return known(*in_shapes, *out_shapes)


def sign_rows(u: np.ndarray) -> np.ndarray:
    """u with each row negated where its (first) entry of largest magnitude is negative."""
    big = np.take_along_axis(u, np.abs(u).argmax(axis=-1)[..., None], axis=-1)
    return np.where(big < 0, -u, u)


def _syevd_forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    op = attrs.op.name  # type: ignore[union-attr]
    ms = modes(op, req)
    a = inputs[0]
    if ms == [NULL, NULL] or not a.size:
        return
    if not is_gpu(ctx):
        if a.shape[-1] >= _lapack.MIN_ORDER and _lapack.available(a.dtype):
            lam, u = _lapack.eigh_rows(a)
        else:
            lam, v = np.linalg.eigh(a, UPLO="L")
            u = swap(v)
        assign(outputs[0], ms[0], sign_rows(u))
        assign(outputs[1], ms[1], lam)
        return
    shape, batch = dims(a), batch_of(a)
    n = shape[-1]
    ws = Workspace(ctx, a.dtype, [shape, shape, (batch, n)])
    direct = ms == [WRITE, WRITE]
    u, lam = (outputs[0], outputs[1]) if direct else (ws[1], ws[2])
    tol = float(np.finfo(a.dtype).eps) ** 2
    from nnvmpy.ops.linalg._factor_cuda import syevd_gpu

    if not syevd_gpu(ctx, op, u, lam, a, ws[0], batch, n, tol, MAX_SWEEPS):
        launch(ctx, op, syevd_mat, batch, u, lam, a, ws[0], n, tol, MAX_SWEEPS)
    if not direct:
        _write_pair(ctx, op, outputs, ms, (u, lam))


def _syevd_backward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    """inputs (dU, dL, U, L) -> dA = U^T (diag(dL) + F) U."""
    op = attrs.op.name  # type: ignore[union-attr]
    (mode,) = modes(op, req)
    du, dl, u, lam = inputs
    if mode == NULL or not u.size:
        return
    ws = Workspace(ctx, u.dtype, [dims(u), dims(u)])
    t, mid = ws[0], ws[1]
    gemm(ctx, op, t, WRITE, du, False, u, True)
    n = dims(u)[-1]
    if is_gpu(ctx):
        launch(ctx, op, _syevd_grad_mid_elem, u.size, mid, t, dl, lam, n)
    else:
        gaps = lam[..., :, None] - lam[..., None, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            f = (t - swap(t)) / (2.0 * gaps)
        idx = np.arange(n)
        f[..., idx, idx] = dl
        mid[...] = f
    gemm(ctx, op, t, WRITE, mid, False, u, False)
    gemm(ctx, op, outputs[0], mode, u, True, t, False)


register_linalg(
    "syevd",
    describe="""Eigendecomposition for symmetric matrix.
Input is a tensor *A* of dimension *n >= 2*.

If *n=2*, *A* must be symmetric, of shape *(x, x)* (its lower triangle is read). We
compute the eigendecomposition, resulting in the orthonormal matrix *U* of eigenvectors,
shape *(x, x)*, and the vector *L* of eigenvalues, shape *(x,)*, so that: *U* * *A* =
*diag(L)* * *U*. Here: *U* * *U*^T = *U*^T * *U* = *I* where *I* is the identity
matrix. Also, *L(0) <= L(1) <= L(2) <= ...* (ascending order).

If *n>2*, *syevd* is performed separately on the trailing two dimensions of *A* (batch
mode). In this case, *U* has *n* dimensions like *A*, and *L* has *n-1* dimensions.

.. note:: The operator supports float32 and float64 data types only.

.. note:: Derivatives for this operator are defined only if *A* is such that all its
          eigenvalues are distinct, and the eigengaps are not too small. If you need
          gradients, do not apply this operator to matrices with multiple eigenvalues.""",
    inputs=[("A", "Tensor of input matrices to be factorized")],
    num_outputs=2,
    infer_shape=_syevd_shape,
    forward=_syevd_forward,
    gradient=ElemwiseGradUseOut,
    backward=_syevd_backward,
    backward_inputs=4,
    inplace=[(0, 0)],
    alias=False,  # MXNet 1.9.1 has no linalg_syevd
)
