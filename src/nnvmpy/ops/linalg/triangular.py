"""linalg.trmm and linalg.trsm: multiply by, and solve with, a triangular matrix.

    trmm(A, B)   out = alpha op(A) B          (alpha B op(A) with rightside=True)
    trsm(A, B)   op(A) out = alpha B          (out op(A) = alpha B with rightside=True)

Only A's triangle (lower, or upper with lower=False) is read, so A's gradient is zero
outside it. With M = op(A) and X the output:
    trmm: dB = alpha M^T dOut,  dM = alpha dOut B^T        (left side)
    trsm: Y = M^-T dOut,  dB = alpha Y,  dM = -Y X^T       (left side)
and the mirrored products for the right side. A zero on A's diagonal makes trsm raise a
LinalgError (MXNet's BLAS would return inf/nan).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...base import InferError
from ...graph.grad import ElemwiseGradUseIn, ElemwiseGradUseInOut
from ...infer import shape_str
from ...param import Parameter, field
from ...registry import NodeAttrs
from . import _kernels as k
from ._base import (
    ADD,
    NULL,
    WRITE,
    Workspace,
    assign_shapes,
    batch_of,
    dims,
    fail,
    is_gpu,
    known,
    modes,
    raise_if_flagged,
    register_linalg,
    require_matrix,
    require_square,
)
from ._batched import NONE, gemm, launch, scale, tri_code, trsm


class TriangularParam(Parameter):
    transpose = field(bool, default=False, describe="Use transposed of the triangular matrix")
    rightside = field(
        bool,
        default=False,
        describe="Multiply triangular matrix from the right to non-triangular one.",
    )
    lower = field(
        bool,
        default=True,
        describe="True if the triangular matrix is lower triangular, false if it is upper "
        "triangular.",
    )
    alpha = field(float, default=1.0, describe="Scalar factor to be applied to the result.")


def _triangular_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    """A: (..., n, n); B and out: (..., m, n) with rightside, else (..., n, m)."""
    op, p = attrs.op.name, attrs.parsed  # type: ignore[union-attr]
    assign_shapes(op, out_shapes, [(0, in_shapes[1], "output (the shape of B)")])
    assign_shapes(op, in_shapes, [(1, out_shapes[0], "input 'B'")])
    a, b = in_shapes
    if require_square(op, "A", a) and require_matrix(op, "B", b):
        n = b[-1] if p.rightside else b[-2]
        mismatch = len(a) != len(b) or any(
            x is not None and y is not None and x != y for x, y in zip(a[:-2], b[:-2])
        )
        if mismatch or (n is not None and a[-1] is not None and n != a[-1]):
            side = "columns" if p.rightside else "rows"
            raise InferError(
                f"{op}: incompatible matrix dimensions: A {shape_str(a)} and B "
                f"{shape_str(b)} need the same leading axes and B's {side} equal to A's "
                f"size (rightside={p.rightside})"
            )
    return known(*in_shapes, *out_shapes)


# -- trmm -------------------------------------------------------------------------------------


def _trmm_forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    p, op = attrs.parsed, attrs.op.name  # type: ignore[union-attr]
    (mode,) = modes(op, req)
    a, b = inputs
    tri = tri_code(p.lower)
    if p.rightside:
        gemm(ctx, op, outputs[0], mode, b, False, a, p.transpose, p.alpha, tri=(NONE, tri, NONE))
    else:
        gemm(ctx, op, outputs[0], mode, a, p.transpose, b, False, p.alpha, tri=(tri, NONE, NONE))


def _trmm_backward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    """inputs (dOut, A, B) -> (dA, dB)."""
    p, op = attrs.parsed, attrs.op.name  # type: ignore[union-attr]
    g, a, b = inputs
    da, db = outputs
    mode_a, mode_b = modes(op, req)
    tri, t, alpha = tri_code(p.lower), p.transpose, p.alpha
    only = (NONE, NONE, tri)  # dA keeps A's triangle
    if p.rightside:  # out = alpha B M:  dB = alpha dOut M^T,  dM = alpha B^T dOut
        gemm(ctx, op, db, mode_b, g, False, a, not t, alpha, tri=(NONE, tri, NONE))
        if t:
            gemm(ctx, op, da, mode_a, g, True, b, False, alpha, tri=only)
        else:
            gemm(ctx, op, da, mode_a, b, True, g, False, alpha, tri=only)
    else:  # out = alpha M B:  dB = alpha M^T dOut,  dM = alpha dOut B^T
        gemm(ctx, op, db, mode_b, a, not t, g, False, alpha, tri=(tri, NONE, NONE))
        if t:
            gemm(ctx, op, da, mode_a, b, False, g, True, alpha, tri=only)
        else:
            gemm(ctx, op, da, mode_a, g, False, b, True, alpha, tri=only)


register_linalg(
    "trmm",
    describe="""Performs multiplication with a lower triangular matrix.
Input are tensors *A*, *B*, each of dimension *n >= 2* and having the same shape
on the leading *n-2* dimensions.

If *n=2*, *A* must be triangular. The operator performs the BLAS3 function *trmm*:
*out* = *alpha* * *op*(*A*) * *B* if *rightside=False*, or *out* = *alpha* * *B* *
*op*(*A*) if *rightside=True*. Here, *alpha* is a scalar parameter, and *op()* is either
the identity or the matrix transposition (depending on *transpose*). Only the triangle
of *A* selected by *lower* is read.

If *n>2*, *trmm* is performed separately on the trailing two dimensions for all inputs
(batch mode).

.. note:: The operator supports float32 and float64 data types only.""",
    inputs=[("A", "Tensor of lower triangular matrices"), ("B", "Tensor of matrices")],
    num_outputs=1,
    infer_shape=_triangular_shape,
    forward=_trmm_forward,
    gradient=ElemwiseGradUseIn,
    backward=_trmm_backward,
    backward_inputs=3,
    param=TriangularParam,
    # no (B, out) in-place pair as MXNet has: the GPU's one-item-per-element product
    # reads all of B while writing out
)


# -- trsm -------------------------------------------------------------------------------------


def check_nonsingular(ctx: Any, op: str, a: Any) -> None:
    """LinalgError naming `op` when a triangular matrix of the stack a has a zero diagonal."""
    message = "input 'A' is singular: matrix {} of the batch has a zero on its diagonal"
    if is_gpu(ctx):
        batch, n = batch_of(a), dims(a)[-1]
        flags = Workspace(ctx, a.dtype, [(batch,)])[0]
        launch(ctx, op, k.zero_diagonal_flag, batch, flags, a, n)
        raise_if_flagged(ctx, flags, lambda z: fail(op, message.format(z)))
        return
    zero = (np.diagonal(a, axis1=-2, axis2=-1) == 0).reshape(-1, a.shape[-1]).any(axis=1)
    if zero.any():
        raise fail(op, message.format(int(np.flatnonzero(zero)[0])))


def _trsm_forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    p, op = attrs.parsed, attrs.op.name  # type: ignore[union-attr]
    (mode,) = modes(op, req)
    a, b = inputs
    if mode == NULL or not b.size:
        return
    check_nonsingular(ctx, op, a)
    work = Workspace(ctx, b.dtype, [dims(b)])[0] if mode == ADD else None
    trsm(ctx, op, outputs[0], mode, a, b, p.transpose, p.rightside, p.lower, p.alpha, work)


def _trsm_backward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    """inputs (dOut, A, B, X) -> (dA, dB)."""
    p, op = attrs.parsed, attrs.op.name  # type: ignore[union-attr]
    g, a, _, x = inputs
    da, db = outputs
    mode_a, mode_b = modes(op, req)
    if (mode_a == NULL and mode_b == NULL) or not g.size:
        return
    tri, t = tri_code(p.lower), p.transpose
    y = Workspace(ctx, g.dtype, [dims(g)])[0]  # Y = M^-T dOut (dOut M^-T on the right)
    trsm(ctx, op, y, WRITE, a, g, not t, p.rightside, p.lower)
    scale(ctx, op, db, mode_b, y, p.alpha)
    only = (NONE, NONE, tri)
    if p.rightside:  # dM = -X^T Y
        first, second = (y, x) if t else (x, y)
        gemm(ctx, op, da, mode_a, first, True, second, False, -1.0, tri=only)
    else:  # dM = -Y X^T
        first, second = (x, y) if t else (y, x)
        gemm(ctx, op, da, mode_a, first, False, second, True, -1.0, tri=only)


register_linalg(
    "trsm",
    describe="""Solves matrix equation involving a lower triangular matrix.
Input are tensors *A*, *B*, each of dimension *n >= 2* and having the same shape
on the leading *n-2* dimensions.

If *n=2*, *A* must be triangular. The operator performs the BLAS3 function *trsm*,
solving for *out* in: *op*(*A*) * *out* = *alpha* * *B* if *rightside=False*, or
*out* * *op*(*A*) = *alpha* * *B* if *rightside=True*. Here, *alpha* is a scalar
parameter, and *op()* is either the identity or the matrix transposition (depending on
*transpose*). Only the triangle of *A* selected by *lower* is read; a zero on its
diagonal raises an error.

If *n>2*, *trsm* is performed separately on the trailing two dimensions for all inputs
(batch mode).

.. note:: The operator supports float32 and float64 data types only.""",
    inputs=[("A", "Tensor of lower triangular matrices"), ("B", "Tensor of matrices")],
    num_outputs=1,
    infer_shape=_triangular_shape,
    forward=_trsm_forward,
    gradient=ElemwiseGradUseInOut,
    backward=_trsm_backward,
    backward_inputs=4,
    param=TriangularParam,
    inplace=[(1, 0)],
)
