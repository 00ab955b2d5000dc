"""linalg.extractdiag / makediag and linalg.extracttrian / maketrian: diagonals and triangles.

    extractdiag(A, offset)           A's diagonal `offset` (>0 above, <0 below the main one)
    makediag(d, offset)              the square matrix with d on that diagonal
    extracttrian(A, offset, lower)   a triangle of A packed into a vector
    maketrian(v, offset, lower)      the square matrix with that triangle, zeros elsewhere

offset > 0 takes the triangle above diagonal `offset`, offset < 0 the one below it,
offset = 0 the lower (or, lower=False, upper) triangle with the diagonal. As in MXNet, a
lower triangle is packed row by row and an upper one column by column: the upper
triangle of A is the lower triangle of A^T, packed alike. Each pair is a gather and its
scatter, so each op's gradient is the other op on dOut.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import kernel
from ...base import InferError
from ...graph.grad import ElemwiseGradUseNone
from ...infer import shape_str
from ...kernel.launch import store
from ...param import Parameter, field
from ...registry import NodeAttrs
from ._base import (
    NULL,
    assign,
    assign_shapes,
    dims,
    is_gpu,
    known,
    modes,
    register_linalg,
    require_matrix,
    require_square,
)
from ._batched import launch

_OFFSET = (
    "Offset of the diagonal versus the main diagonal. 0 corresponds to the main diagonal, "
    "a negative/positive value to diagonals below/above the main diagonal."
)


class DiagParam(Parameter):
    offset = field(int, default=0, describe=_OFFSET)


class TrianParam(Parameter):
    offset = field(int, default=0, describe=_OFFSET)
    lower = field(
        bool,
        default=True,
        describe="Refer to the lower triangular matrix if lower=true, refer to the upper "
        "otherwise. Only relevant when offset=0",
    )


def _lower_type(p: Any) -> bool:
    return p.offset < 0 or (p.offset == 0 and getattr(p, "lower", True))


def packed_indices(n: int, offset: int, lower_type: bool) -> tuple[np.ndarray, np.ndarray]:
    """(rows, cols) of the triangle of an n x n matrix, in packing order."""
    rows, cols = np.tril_indices(n - abs(offset))
    if lower_type:
        return rows + abs(offset), cols
    return cols, rows + offset  # the lower triangle of the transpose


# -- shapes -----------------------------------------------------------------------------------


def _inner_size(op: str, a: Any, offset: int) -> int | None:
    """n - |offset| for square matrices of size n (InferError when not positive)."""
    n = a[-1]
    if n is None:
        return None
    if n - abs(offset) <= 0:
        raise InferError(
            f"{op}: illegal offset {offset} for input 'A' of shape {shape_str(a)}: it "
            f"needs -{n} < offset < {n}"
        )
    return int(n - abs(offset))


def _extract_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    op, p = attrs.op.name, attrs.parsed  # type: ignore[union-attr]
    a = in_shapes[0]
    if require_square(op, "A", a):
        m = _inner_size(op, a, p.offset)
        size = m if m is None or op.endswith("diag") else m * (m + 1) // 2
        assign_shapes(op, out_shapes, [(0, (*a[:-2], size), "output")])
    return known(in_shapes[0], out_shapes[0])


def _make_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    op, p = attrs.op.name, attrs.parsed  # type: ignore[union-attr]
    a = in_shapes[0]
    if require_matrix(op, "A", a, min_ndim=1):
        m = a[-1]
        if m is not None and not op.endswith("diag"):
            side = int((np.sqrt(8 * m + 1) - 1) / 2 + 0.5)
            if side * (side + 1) // 2 != m:
                raise InferError(
                    f"{op}: input 'A' of shape {shape_str(a)} must hold m*(m+1)/2 values "
                    f"per triangle on its last axis; {m} is no such number"
                )
            m = side
        n = None if m is None else m + abs(p.offset)
        assign_shapes(op, out_shapes, [(0, (*a[:-1], n, n), "output")])
    return known(in_shapes[0], out_shapes[0])


# -- GPU kernels: one work item per element of the square matrices ------------------------------


@kernel.parallel_for
def _diag_gather_elem(i, out, a, n, m, offset, mode):
    """out[z, t] (+)= A[z] on diagonal `offset` at position t."""
    z = i // m
    t = i - z * m
    r = t - offset if offset < 0 else t
    c = t + offset if offset > 0 else t
    v = a[(z * n + r) * n + c]
    store(out, i, v, mode)


@kernel.parallel_for
def _diag_scatter_elem(i, out, d, n, m, offset, mode):
    """out[z, r, c] (+)= d[z, min(r, c)] on diagonal `offset`, 0 elsewhere."""
    c = i % n
    t = i // n
    r = t % n
    v = 0.0
    if c - r == offset:
        v = d[(t // n) * m + (r if r < c else c)]
    store(out, i, v, mode)


@kernel.device_function
def _packed_index(r, c, offset, lower_type):
    """Position of (r, c) in the packed triangle, or -1 outside it."""
    if not lower_type:  # (c, r) in the lower triangle of the transpose
        r, c = c, r
        offset = -offset
    rr = r + offset  # offset <= 0: row rr of the triangle
    if rr < 0 or c > rr:
        return -1
    return rr * (rr + 1) // 2 + c


@kernel.parallel_for
def _trian_scatter_elem(i, out, v, n, m, offset, lower_type, mode):
    """out[z, r, c] (+)= v[z, packed(r, c)] inside the triangle, 0 elsewhere."""
    c = i % n
    t = i // n
    r = t % n
    at = _packed_index(r, c, offset, lower_type)
    x = 0.0
    if at >= 0:
        x = v[(t // n) * (m * (m + 1) // 2) + at]
    store(out, i, x, mode)


@kernel.parallel_for
def _trian_gather_elem(i, out, a, n, m, offset, lower_type, mode):
    """out[z, p] (+)= A[z, r, c] for the p-th (r, c) of the packed triangle."""
    size = m * (m + 1) // 2
    z = i // size
    p = i - z * size
    r = 0
    while p > r:  # row r of the (lower) triangle holds r + 1 values
        p -= r + 1
        r += 1
    if lower_type:
        row = r - offset
        col = p
    else:  # the lower triangle of the transpose
        row = p
        col = r + offset
    x = a[(z * n + row) * n + col]
    store(out, i, x, mode)


# -- computes: each is also the other op's gradient -------------------------------------------


def _gather(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    """extractdiag / extracttrian, and the backward of makediag / maketrian."""
    op, p = attrs.op.name, attrs.parsed  # type: ignore[union-attr]
    (mode,) = modes(op, req)
    a, out = inputs[0], outputs[0]
    if mode == NULL or not out.size:
        return
    n, diag = dims(a)[-1], not hasattr(p, "lower")
    m = n - abs(p.offset)
    if is_gpu(ctx):
        loop = _diag_gather_elem if diag else _trian_gather_elem
        flags = () if diag else (_lower_type(p),)
        launch(ctx, op, loop, out.size, out, a, n, m, p.offset, *flags, mode)
    elif diag:
        assign(out, mode, np.diagonal(a, offset=p.offset, axis1=-2, axis2=-1))
    else:
        rows, cols = packed_indices(n, p.offset, _lower_type(p))
        assign(out, mode, a[..., rows, cols])


def _scatter(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    """makediag / maketrian, and the backward of extractdiag / extracttrian."""
    op, p = attrs.op.name, attrs.parsed  # type: ignore[union-attr]
    (mode,) = modes(op, req)
    v, out = inputs[0], outputs[0]
    if mode == NULL or not out.size:
        return
    n, diag = dims(out)[-1], not hasattr(p, "lower")
    m = n - abs(p.offset)
    if is_gpu(ctx):
        loop = _diag_scatter_elem if diag else _trian_scatter_elem
        flags = () if diag else (_lower_type(p),)
        launch(ctx, op, loop, out.size, out, v, n, m, p.offset, *flags, mode)
        return
    if diag:
        idx = np.arange(m)
        rows, cols = idx + max(-p.offset, 0), idx + max(p.offset, 0)
    else:
        rows, cols = packed_indices(n, p.offset, _lower_type(p))
    full = np.zeros(out.shape, out.dtype)
    full[..., rows, cols] = v
    assign(out, mode, full)


_NOTE = "\n\n.. note:: The operator supports float32 and float64 data types only."
_TRIANGLE = """

The *offset* and *lower* parameters determine the triangle: *offset = 0* the lower or
upper triangle with the main diagonal, depending on *lower*; *offset = k > 0* the upper
triangle with respect to the k-th diagonal above the main diagonal; *offset = k < 0* the
lower triangle with respect to the k-th diagonal below it. A lower triangle is packed
row by row, an upper one column by column."""

for _name, _doc, _shape, _fwd, _bwd, _param, _arg in [
    (
        "extractdiag",
        "Extracts the diagonal entries of a square matrix.\nInput is a tensor *A* of "
        "dimension *n >= 2*: a square matrix, or a batch of them on the trailing two "
        "dimensions. The diagonals are returned as an *n-1*-dimensional tensor.",
        _extract_shape, _gather, _scatter, DiagParam, "Tensor of square matrices",
    ),
    (
        "makediag",
        "Constructs a square matrix with the input as diagonal.\nInput is a tensor *A* of "
        "dimension *n >= 1*: the diagonal entries of a square matrix, or a batch of them. "
        "The matrices are returned as an *n+1*-dimensional tensor.",
        _make_shape, _scatter, _gather, DiagParam, "Tensor of diagonal entries",
    ),
    (
        "extracttrian",
        "Extracts a triangular sub-matrix from a square matrix.\nInput is a tensor *A* of "
        "dimension *n >= 2*: a square matrix, or a batch of them on the trailing two "
        "dimensions. The triangles are returned as an *n-1*-dimensional tensor." + _TRIANGLE,
        _extract_shape, _gather, _scatter, TrianParam, "Tensor of square matrices",
    ),
    (
        "maketrian",
        "Constructs a square matrix with the input representing a specific triangular "
        "sub-matrix.\nThis is the inverse of *linalg.extracttrian*. Input is a tensor *A* "
        "of dimension *n >= 1*: a packed triangle, or a batch of them. The square matrices "
        "(zeros outside the triangle) are returned as an *n+1*-dimensional tensor."
        + _TRIANGLE,
        _make_shape, _scatter, _gather, TrianParam,
        "Tensor of triangular matrices stored as vectors",
    ),
]:  # fmt: skip
    register_linalg(
        _name,
        describe=_doc + _NOTE,
        inputs=[("A", _arg)],
        num_outputs=1,
        infer_shape=_shape,
        forward=_fwd,
        gradient=ElemwiseGradUseNone,
        backward=_bwd,
        backward_inputs=1,
        param=_param,
    )
