"""linalg.inverse, linalg.det and linalg.slogdet, through an LU factorization.

    inverse(A)   A^-1                 d: dA = -A^-T dOut A^-T
    det(A)       det A                d: dA = dOut det(A) A^-T
    slogdet(A)   sign, log|det A|     d: dA = dLogabs A^-T (the sign has no gradient)

CPU: LAPACK getrf (+ getri) per matrix from order _lapack.MIN_ORDER, np.linalg.inv /
slogdet on the whole stack below it. GPU: one work item per matrix factorizes
P A = L U with partial pivoting (lu_mat; from 32 columns a thread block per matrix,
_blocked_cuda.py), one per column of A^-1 solves with it
(lu_inverse_col; from 32 columns a thread block per group of columns, _solve_cuda.py),
one per matrix reads the determinant off U's diagonal.
A singular matrix makes inverse (and the gradients of det and slogdet, which need A^-1)
raise a LinalgError naming the matrix; det gives 0 and slogdet (0, -inf) for it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ... import kernel
from ...graph.grad import ElemwiseGradUseInOut, ElemwiseGradUseOut
from ...kernel.launch import store
from ...registry import NodeAttrs
from . import _lapack
from ._base import (
    ADD,
    NULL,
    WRITE,
    LinalgError,
    Workspace,
    assign,
    batch_of,
    dims,
    fail,
    is_gpu,
    modes,
    raise_if_flagged,
    register_linalg,
)
from ._batched import gemm, launch, scale, swap
from ._blocked_cuda import by_block, lu_blocks
from ._solve_cuda import lu_inverse_blocks
from .cholesky import batch_shape, square_shape

# -- GPU kernels ------------------------------------------------------------------------------


@kernel.parallel_for
def lu_mat(z, lu, a, piv, n, flags):
    """P A = L U of matrix z into lu (L unit lower, below the diagonal); pivots in piv."""
    base = z * n * n
    for e in range(n * n):
        lu[base + e] = a[base + e]
    flags[z] = 0.0
    for j in range(n):
        p = j
        best = abs(lu[base + j * n + j])
        for r in range(j + 1, n):
            v = abs(lu[base + r * n + j])
            if v > best:
                best = v
                p = r
        piv[z * n + j] = p
        if p != j:
            for c in range(n):
                v = lu[base + j * n + c]
                lu[base + j * n + c] = lu[base + p * n + c]
                lu[base + p * n + c] = v
        d = lu[base + j * n + j]
        if d == 0.0:
            flags[z] = 1.0
            continue
        for r in range(j + 1, n):
            f = lu[base + r * n + j] / d
            lu[base + r * n + j] = f
            for c in range(j + 1, n):
                lu[base + r * n + c] -= f * lu[base + j * n + c]


@kernel.parallel_for
def lu_inverse_col(i, out, lu, piv, n):
    """Column c of A^-1 for matrix z (item i = z * n + c): solve L U x = P e_c."""
    z = i // n
    c = i - z * n
    base = z * n * n
    for r in range(n):
        out[base + r * n + c] = 1.0 if r == c else 0.0
    for j in range(n):
        p = int(piv[z * n + j])
        if p != j:
            v = out[base + j * n + c]
            out[base + j * n + c] = out[base + p * n + c]
            out[base + p * n + c] = v
    for r in range(n):
        s = out[base + r * n + c]
        for q in range(r):
            s -= lu[base + r * n + q] * out[base + q * n + c]
        out[base + r * n + c] = s
    for r in range(n - 1, -1, -1):
        s = out[base + r * n + c]
        for q in range(r + 1, n):
            s -= lu[base + r * n + q] * out[base + q * n + c]
        out[base + r * n + c] = s / lu[base + r * n + r]


@kernel.parallel_for
def lu_det_mat(z, det, sign, logabs, lu, piv, n, want_log, mode):
    """det (mode as asked), or sign and log|det| (written), of matrix z from its LU."""
    base = z * n * n
    parity = 1.0
    prod = 1.0
    sgn = 1.0
    total = 0.0
    zero = False
    for j in range(n):
        d = lu[base + j * n + j]
        if int(piv[z * n + j]) != j:
            parity = -parity
        prod *= d
        if d == 0.0:
            zero = True
        else:
            total += math.log(abs(d))
            if d < 0.0:
                sgn = -sgn
    if want_log:
        sign[z] = 0.0 if zero else sgn * parity
        logabs[z] = -math.inf if zero else total
    else:
        store(det, z, prod * parity, mode)


@kernel.parallel_for
def _inverse_transpose_grad_elem(i, out, g, det, inv, n, use_det, mode):
    """dA[z, r, c] (+)= dOut[z] (* det[z]) * A^-1[z, c, r]."""
    c = i % n
    t = i // n
    r = t % n
    z = t // n
    coef = g[z] * det[z] if use_det else g[z]
    v = coef * inv[(z * n + c) * n + r]
    store(out, i, v, mode)


# -- helpers ----------------------------------------------------------------------------------


def _singular(op: str, index: int) -> LinalgError:
    return fail(op, f"input 'A' is singular (matrix {index} of the batch) and has no inverse")


def _inv_cpu(op: str, a: np.ndarray) -> np.ndarray:
    if a.shape[-1] >= _lapack.MIN_ORDER and _lapack.available(a.dtype):
        inv, bad = _lapack.inverse(a)
        if bad >= 0:
            raise _singular(op, bad)
        return inv
    try:
        return np.linalg.inv(a)
    except np.linalg.LinAlgError:
        stack = a.reshape(-1, *a.shape[-2:])
        bad = next((i for i, m in enumerate(stack) if np.linalg.matrix_rank(m) < len(m)), 0)
        raise _singular(op, bad) from None


def _lu_gpu(ctx: Any, op: str, a: Any, extra: list[tuple[int, ...]]) -> Workspace:
    """Workspace [flags, lu, pivots, *extra] with a's LU factors; flags mark singular ones."""
    batch, n = batch_of(a), dims(a)[-1]
    ws = Workspace(ctx, a.dtype, [(batch,), dims(a), (batch, n), *extra])
    if by_block(a, n):
        lu_blocks(ctx, op, batch, n, ws[1], a, ws[2], ws[0])
    else:
        launch(ctx, op, lu_mat, batch, ws[1], a, ws[2], n, ws[0])
    return ws


def _solve_lu(ctx: Any, op: str, out: Any, lu: Any, piv: Any) -> None:
    """out = A^-1 from A's LU factors and pivots: a block per group of columns from
    MIN_ORDER columns (by_block), else a thread per column."""
    batch, n = batch_of(lu), dims(lu)[-1]
    if by_block(lu, n):
        lu_inverse_blocks(ctx, op, batch, n, out, lu, piv)
    else:
        launch(ctx, op, lu_inverse_col, batch * n, out, lu, piv, n)


def _inverse_gpu(ctx: Any, op: str, a: Any) -> Workspace:
    """Workspace [flags, lu, pivots, A^-1]; LinalgError for a singular matrix."""
    ws = _lu_gpu(ctx, op, a, [dims(a)])
    raise_if_flagged(ctx, ws[0], lambda z: _singular(op, z))
    _solve_lu(ctx, op, ws[3], ws[1], ws[2])
    return ws


# -- inverse ----------------------------------------------------------------------------------


def _inverse_forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    op = attrs.op.name  # type: ignore[union-attr]
    (mode,) = modes(op, req)
    a, out = inputs[0], outputs[0]
    if mode == NULL or not a.size:
        return
    if not is_gpu(ctx):
        assign(out, mode, _inv_cpu(op, a))
        return
    if mode == ADD:
        scale(ctx, op, out, ADD, _inverse_gpu(ctx, op, a)[3], 1.0)
        return
    ws = _lu_gpu(ctx, op, a, [])
    raise_if_flagged(ctx, ws[0], lambda z: _singular(op, z))
    _solve_lu(ctx, op, out, ws[1], ws[2])


def _inverse_backward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    """inputs (dOut, A^-1) -> dA = -A^-T dOut A^-T."""
    op = attrs.op.name  # type: ignore[union-attr]
    (mode,) = modes(op, req)
    g, inv = inputs
    if mode == NULL or not g.size:
        return
    w = Workspace(ctx, g.dtype, [dims(g)])[0]
    gemm(ctx, op, w, WRITE, inv, True, g, False)
    gemm(ctx, op, outputs[0], mode, w, False, inv, True, -1.0)


register_linalg(
    "inverse",
    describe="""Compute the inverse of a matrix.
Input is a tensor *A* of dimension *n >= 2*.

If *n=2*, *A* is a square matrix. We compute: *out* = *A*^-1. A singular matrix raises
an error.

If *n>2*, *inverse* is performed separately on the trailing two dimensions for all inputs
(batch mode).

.. note:: The operator supports float32 and float64 data types only.""",
    inputs=[("A", "Tensor of square matrix")],
    num_outputs=1,
    infer_shape=square_shape,
    forward=_inverse_forward,
    gradient=ElemwiseGradUseOut,
    backward=_inverse_backward,
    backward_inputs=2,
    inplace=[(0, 0)],
)


# -- det and slogdet --------------------------------------------------------------------------


def _det_forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    """det: outputs (det,); slogdet: outputs (sign, logabsdet)."""
    op = attrs.op.name  # type: ignore[union-attr]
    ms = modes(op, req)
    a = inputs[0]
    if all(m == NULL for m in ms) or not a.size:
        return
    want_log = len(outputs) == 2
    if not is_gpu(ctx):
        big = a.shape[-1] >= _lapack.MIN_ORDER and _lapack.available(a.dtype)
        sign, logabs = _lapack.slogdet(a) if big else np.linalg.slogdet(a)
        if want_log:
            assign(outputs[0], ms[0], sign)
            assign(outputs[1], ms[1], logabs)
        else:  # as np.linalg.det computes it; overflow is inf, as MXNet's, unwarned
            with np.errstate(over="ignore"):
                assign(outputs[0], ms[0], sign * np.exp(logabs))
        return
    batch, n = batch_of(a), dims(a)[-1]
    ws = _lu_gpu(ctx, op, a, [(batch,), (batch,)])
    if not want_log:
        out = outputs[0]
        launch(ctx, op, lu_det_mat, batch, out, out, out, ws[1], ws[2], n, False, ms[0])
        return
    direct = ms == [WRITE, WRITE]
    sign, logabs = (outputs[0], outputs[1]) if direct else (ws[3], ws[4])
    launch(ctx, op, lu_det_mat, batch, sign, sign, logabs, ws[1], ws[2], n, True, WRITE)
    if not direct:
        scale(ctx, op, outputs[0], ms[0], sign, 1.0)
        scale(ctx, op, outputs[1], ms[1], logabs, 1.0)


def _det_backward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    """det: inputs (dDet, A, det); slogdet: (dSign, dLogabs, A, sign, logabs) -> dA."""
    op = attrs.op.name  # type: ignore[union-attr]
    (mode,) = modes(op, req)
    use_det = len(inputs) == 3
    g, a, det = (inputs[0], inputs[1], inputs[2]) if use_det else (inputs[1], inputs[2], inputs[1])
    if mode == NULL or not a.size:
        return
    if not is_gpu(ctx):
        coef = g.reshape(*a.shape[:-2], 1, 1) * (det.reshape(*a.shape[:-2], 1, 1) if use_det else 1)
        assign(outputs[0], mode, coef * swap(_inv_cpu(op, a)))
        return
    ws = _inverse_gpu(ctx, op, a)
    n = dims(a)[-1]
    launch(
        ctx, op, _inverse_transpose_grad_elem, a.size, outputs[0], g, det, ws[3], n, use_det, mode
    )


_DET_NOTE = """

If *n>2*, the operator is performed separately on the trailing two dimensions for all
inputs (batch mode); a single matrix gives shape (1,).

.. note:: The operator supports float32 and float64 data types only."""

register_linalg(
    "det",
    describe="Compute the determinant of a matrix.\nInput is a tensor *A* of dimension "
    "*n >= 2*. If *n=2*, *A* is a square matrix. We compute: *out* = *det(A)*." + _DET_NOTE,
    inputs=[("A", "Tensor of square matrix")],
    num_outputs=1,
    infer_shape=batch_shape,
    forward=_det_forward,
    gradient=ElemwiseGradUseInOut,
    backward=_det_backward,
    backward_inputs=3,
    output_names=["output0"],  # MXNet's: det has hidden outputs there
)

register_linalg(
    "slogdet",
    describe="Compute the sign and log of the determinant of a matrix.\nInput is a tensor "
    "*A* of dimension *n >= 2*. If *n=2*, *A* is a square matrix. We compute: *sign* = "
    "*sign(det(A))*, *logabsdet* = *log(abs(det(A)))*. The gradient is not defined on "
    "sign, so it is not propagated back." + _DET_NOTE,
    inputs=[("A", "Tensor of square matrix")],
    num_outputs=2,
    infer_shape=batch_shape,
    forward=_det_forward,
    gradient=ElemwiseGradUseInOut,
    backward=_det_backward,
    backward_inputs=5,
)
