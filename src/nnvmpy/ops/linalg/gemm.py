"""linalg.gemm, linalg.gemm2 and linalg.syrk: matrix products over stacks of matrices.

    gemm(A, B, C)   out = alpha op(A) op(B) + beta C      op(X) = X or X^T
    gemm2(A, B)     out = alpha op(A) op(B)
    syrk(A)         out = alpha A A^T  (alpha A^T A with transpose=True)

gemm/gemm2 take MXNet's `axis`: the matrix rows lie on that axis and the columns on the
last one, which is swapaxes(axis, -2) / gemm / swapaxes without the copies. The
gradients are products again: dop(A) = alpha dOut op(B)^T, dop(B) = alpha op(A)^T dOut.
"""

from __future__ import annotations

from typing import Any

from ...base import InferError, Shape
from ...graph.grad import ElemwiseGradUseIn
from ...infer import shape_str
from ...param import Parameter, field
from ...registry import NodeAttrs
from ._base import ADD, NULL, assign_shapes, known, modes, register_linalg, require_matrix
from ._batched import gemm, scale

_TA = "Multiply with transposed of first input (A)."
_TB = "Multiply with transposed of second input (B)."
_AXIS = "Axis corresponding to the matrix rows."


class GemmParam(Parameter):
    transpose_a = field(bool, default=False, describe=_TA)
    transpose_b = field(bool, default=False, describe=_TB)
    alpha = field(float, default=1.0, describe="Scalar factor multiplied with A*B.")
    beta = field(float, default=1.0, describe="Scalar factor multiplied with C.")
    axis = field(int, default=-2, describe=_AXIS)


class Gemm2Param(Parameter):
    transpose_a = field(bool, default=False, describe=_TA)
    transpose_b = field(bool, default=False, describe=_TB)
    alpha = field(float, default=1.0, describe="Scalar factor multiplied with A*B.")
    axis = field(int, default=-2, describe=_AXIS)


class SyrkParam(Parameter):
    transpose = field(bool, default=False, describe="Use transpose of input matrix.")
    alpha = field(float, default=1.0, describe="Scalar factor to be applied to the result.")


def _row_axis(op: str, axis: int, ndim: int) -> int:
    ax = axis + ndim if axis < 0 else axis
    if not 0 <= ax < ndim - 1:
        raise InferError(
            f"{op}: axis {axis} cannot hold the matrix rows of {ndim}-D inputs; expected "
            f"-{ndim} <= axis < {ndim - 1} (the last axis holds the columns)"
        )
    return ax


def _product_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    """out = op(A) op(B) per matrix; C (gemm) has out's shape."""
    op, p = attrs.op.name, attrs.parsed  # type: ignore[union-attr]
    has_c = len(in_shapes) == 3
    a, b = in_shapes[0], in_shapes[1]
    if require_matrix(op, "A", a) and require_matrix(op, "B", b):
        if len(a) != len(b):
            raise InferError(
                f"{op}: inputs 'A' {shape_str(a)} and 'B' {shape_str(b)} must have the "
                "same number of axes"
            )
        ax = _row_axis(op, p.axis, len(a))
        out: list[int | None] = []
        for i, (x, y) in enumerate(zip(a, b)):
            if i not in (ax, len(a) - 1) and x is not None and y is not None and x != y:
                raise InferError(
                    f"{op}: inputs 'A' {shape_str(a)} and 'B' {shape_str(b)} must have the "
                    f"same shape except on the row axis {ax} and the column axis"
                )
            out.append(x if x is not None else y)
        m, ka = (a[-1], a[ax]) if p.transpose_a else (a[ax], a[-1])
        kb, n = (b[-1], b[ax]) if p.transpose_b else (b[ax], b[-1])
        if ka is not None and kb is not None and ka != kb:
            raise InferError(
                f"{op}: incompatible matrix dimensions for multiplication: op(A) is "
                f"{m} x {ka} and op(B) is {kb} x {n} (A {shape_str(a)}, B {shape_str(b)}, "
                f"transpose_a={p.transpose_a}, transpose_b={p.transpose_b}, axis={p.axis})"
            )
        out[ax], out[-1] = m, n
        shape: Shape = tuple(out)
        if has_c:  # C first: a conflict then names C
            assign_shapes(op, in_shapes, [(2, shape, "input 'C'")])
        assign_shapes(op, out_shapes, [(0, shape, "output")])
    if has_c:  # C and the output share one shape
        assign_shapes(op, out_shapes, [(0, in_shapes[2], "output (the shape of C)")])
        assign_shapes(op, in_shapes, [(2, out_shapes[0], "input 'C'")])
    return known(*in_shapes, *out_shapes)


def _gemm_forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    p, op = attrs.parsed, attrs.op.name  # type: ignore[union-attr]
    c, beta = (inputs[2], p.beta) if len(inputs) == 3 else (None, 0.0)
    (mode,) = modes(op, req)
    a, b = inputs[0], inputs[1]
    gemm(ctx, op, outputs[0], mode, a, p.transpose_a, b, p.transpose_b, p.alpha, c, beta, p.axis)


def _gemm_backward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    """inputs (dOut, A, B[, C]) -> (dA, dB[, dC])."""
    p, op = attrs.parsed, attrs.op.name  # type: ignore[union-attr]
    g, a, b = inputs[0], inputs[1], inputs[2]
    ta, tb, alpha, axis = p.transpose_a, p.transpose_b, p.alpha, p.axis
    ms = modes(op, req)
    if ta:  # dA = (alpha dOut op(B)^T)^T
        gemm(ctx, op, outputs[0], ms[0], b, tb, g, True, alpha, axis=axis)
    else:
        gemm(ctx, op, outputs[0], ms[0], g, False, b, not tb, alpha, axis=axis)
    if tb:  # dB = (alpha op(A)^T dOut)^T
        gemm(ctx, op, outputs[1], ms[1], g, True, a, ta, alpha, axis=axis)
    else:
        gemm(ctx, op, outputs[1], ms[1], a, not ta, g, False, alpha, axis=axis)
    if len(outputs) == 3:
        scale(ctx, op, outputs[2], ms[2], g, p.beta)


_GEMM_DOC = """Performs general matrix multiplication and accumulation.
Input are tensors *A*, *B*, *C*, each of dimension *n >= 2* and having the same shape
on the leading *n-2* dimensions.

If *n=2*: *out* = *alpha* * *op*(*A*) * *op*(*B*) + *beta* * *C*, where *op()* is the
identity or the transposition (*transpose_a*, *transpose_b*).

If *n>2*, *gemm* is performed separately for a batch of matrices. The column indices of
the matrices are given by the last dimensions of the tensors, the row indices by the
axis specified with the *axis* parameter (by default the trailing two dimensions hold
the matrices). A non-default axis is equivalent to swapaxes(axis, -2) on every input,
gemm, and swapaxes back, without the copies.

.. note:: The operator supports float32 and float64 data types only."""

register_linalg(
    "gemm",
    describe=_GEMM_DOC,
    inputs=[
        ("A", "Tensor of input matrices"),
        ("B", "Tensor of input matrices"),
        ("C", "Tensor of input matrices"),
    ],
    num_outputs=1,
    infer_shape=_product_shape,
    forward=_gemm_forward,
    gradient=ElemwiseGradUseIn,
    backward=_gemm_backward,
    backward_inputs=4,
    param=GemmParam,
    inplace=[(2, 0)],
)

register_linalg(
    "gemm2",
    describe=_GEMM_DOC.replace("and accumulation", "")
    .replace(", *C*", "")
    .replace(" + *beta* * *C*", ""),
    inputs=[("A", "Tensor of input matrices"), ("B", "Tensor of input matrices")],
    num_outputs=1,
    infer_shape=_product_shape,
    forward=_gemm_forward,
    gradient=ElemwiseGradUseIn,
    backward=_gemm_backward,
    backward_inputs=3,
    param=Gemm2Param,
)


# -- syrk -------------------------------------------------------------------------------------


def _syrk_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    op = attrs.op.name  # type: ignore[union-attr]
    a = in_shapes[0]
    if require_matrix(op, "A", a):
        k = a[-1] if attrs.parsed.transpose else a[-2]
        assign_shapes(op, out_shapes, [(0, (*a[:-2], k, k), "output")])
    return known(in_shapes[0], out_shapes[0])


def _syrk_forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    p, op = attrs.parsed, attrs.op.name  # type: ignore[union-attr]
    (mode,) = modes(op, req)
    a = inputs[0]
    gemm(ctx, op, outputs[0], mode, a, p.transpose, a, not p.transpose, p.alpha)


def _syrk_backward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    """dA = alpha (dOut + dOut^T) A, or alpha A (dOut + dOut^T) with transpose."""
    p, op = attrs.parsed, attrs.op.name  # type: ignore[union-attr]
    g, a = inputs
    (mode,) = modes(op, req)
    if mode == NULL:
        return
    for first, gt in ((True, False), (False, True)):
        m = mode if first else ADD
        if p.transpose:
            gemm(ctx, op, outputs[0], m, a, False, g, gt, p.alpha)
        else:
            gemm(ctx, op, outputs[0], m, g, gt, a, False, p.alpha)


register_linalg(
    "syrk",
    describe="""Multiplication of matrix with its transpose.
Input is a tensor *A* of dimension *n >= 2*.

If *n=2*: *out* = *alpha* * *A* * *A*^T if *transpose=False*, or *alpha* * *A*^T * *A*
if *transpose=True*. If *n>2*, *syrk* is performed separately on the trailing two
dimensions for all inputs (batch mode).

.. note:: The operator supports float32 and float64 data types only.""",
    inputs=[("A", "Tensor of input matrices")],
    num_outputs=1,
    infer_shape=_syrk_shape,
    forward=_syrk_forward,
    gradient=ElemwiseGradUseIn,
    backward=_syrk_backward,
    backward_inputs=2,
    param=SyrkParam,
)
