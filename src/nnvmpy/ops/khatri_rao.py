"""khatri_rao: the column-wise Kronecker product of matrices A_1 (M_1, N), ..., A_n (M_n, N).

    X[(m_1, ..., m_n), c] = A_1[m_1, c] * ... * A_n[m_n, c]       X is (M_1 * ... * M_n, N)
    dA_i[m, c] = sum over the rows r of X with m_i(r) = m of dX[r, c] * W_i[r, c]

where W_i is the product of the other factors (the Khatri-Rao product with A_i replaced
by ones). Row r = (m_1, ..., m_n) in row-major order, so m_i(r) = (r div inner_i) mod M_i
with inner_i = M_{i+1} * ... * M_n. Every kernel is one body for both devices: the
forward multiplies one factor into the output per launch; the backward builds W_i in
scratch space and sums it against dX, one work item per element of dA_i. They run on
the GPU; the CPU takes whole rows instead (_khatri_rao_cpu.py), in the same order.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import kernel
from ..attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FListInputNames,
    FResourceRequest,
    TIsBackward,
)
from ..base import InferError
from ..graph.grad import ElemwiseGradUseIn
from ..infer import elemwise_type, shape_assign, shape_is_known, shape_str
from ..kernel.launch import ADD, NULL, WRITE, flat, is_gpu, req_code
from ..param import Parameter, field
from ..registry import NodeAttrs, register_op
from ..resource import ResourceRequest
from ._index_kernels import half_as_float32
from .elemwise_unary import _identity


class KhatriRaoParam(Parameter):
    num_args = field(int, lower_bound=1, describe="Number of input matrices.")


def _num_args(attrs: NodeAttrs) -> int:
    return int(attrs.parsed.num_args)


def _infer(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    for i, s in enumerate(in_shapes):
        if s is not None and len(s) != 2:
            raise InferError(f"khatri_rao: input 'arg{i}' {shape_str(s)} must be a 2-d matrix")
    out = out_shapes[0]
    if out is not None and len(out) != 2:
        raise InferError(f"khatri_rao: output {shape_str(out)} must be a 2-d matrix")
    cols = {s[1] for s in [*in_shapes, out] if s is not None and s[1] is not None}
    if len(cols) > 1:
        shapes = ", ".join(shape_str(s) for s in in_shapes)
        raise InferError(f"khatri_rao: inputs {shapes} must have one number of columns")
    n = cols.pop() if cols else None
    rows = [None if s is None else s[0] for s in in_shapes]
    total = None if None in rows else math.prod(rows)  # type: ignore[arg-type]
    shape_assign(out_shapes, 0, (total, n), "khatri_rao: output")
    out_rows = out_shapes[0][0]
    unknown = [i for i, r in enumerate(rows) if r is None]
    if out_rows is not None and len(unknown) == 1:  # the missing factor's rows
        rest = math.prod(r for r in rows if r is not None)
        if rest == 0 or out_rows % rest:
            raise InferError(f"khatri_rao: output has {out_rows} rows, not a multiple of {rest}")
        rows[unknown[0]] = out_rows // rest
    for i, r in enumerate(rows):
        shape_assign(in_shapes, i, (r, n), f"khatri_rao: input 'arg{i}'")
    return all(shape_is_known(s) for s in in_shapes)


@kernel.parallel_for
def _multiply_factor(t, out, a, inner, m, ncol, first):
    # out[r, c] = (or *=) a[(r div inner) mod m, c]
    r = t // ncol
    c = t - r * ncol
    v = a[((r // inner) % m) * ncol + c]
    if first:
        out[t] = v
    else:
        out[t] *= v


@kernel.parallel_for
def _factor_grad(t, da, dy, w, use_w, inner, m, outer, ncol, zero, mode):
    # da[mi, c] (+)= sum over (o, q) of dy[row, c] * w[row, c], row = (o*m + mi)*inner + q
    mi = t // ncol
    c = t - mi * ncol
    acc = zero
    for o in range(outer):
        for q in range(inner):
            k = ((o * m + mi) * inner + q) * ncol + c
            if use_w:
                acc += dy[k] * w[k]
            else:
                acc += dy[k]
    if mode == 2:
        da[t] += acc
    else:
        da[t] = acc


class _Concatenated:
    """The factors as one flat host array, with where each starts, its rows and the
    rows of the product below each one (the CPU kernels' arguments, _khatri_rao_cpu)."""

    def __init__(self, factors: list[Any]) -> None:
        rows = [f.shape[0] for f in factors]
        self.cat = np.concatenate([np.ascontiguousarray(f).reshape(-1) for f in factors])
        self.starts = np.cumsum([0, *(f.size for f in factors[:-1])], dtype=np.int64)
        self.rows = np.array(rows, np.int64)
        self.inners = np.array([math.prod(rows[i + 1 :]) for i in range(len(rows))], np.int64)
        self.ncol = factors[0].shape[1]


def _product(ctx: Any, out: Any, factors: list[Any], skip: int = -1) -> bool:
    """out = the Khatri-Rao product of factors (factor `skip` taken as ones).

    False when there was no other factor: out is then untouched and stands for ones.
    """
    rows = [f.shape[0] for f in factors]
    ncol = factors[0].shape[1]
    first = True
    for i, f in enumerate(factors):
        if i == skip:
            continue
        inner = math.prod(rows[i + 1 :])
        _multiply_factor.launch(ctx, out.size, flat(out), flat(f), inner, rows[i], ncol, first)
        first = False
    return not first


def _forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    mode = req_code("khatri_rao", req[0])
    if mode == NULL or outputs[0].size == 0:
        return
    with half_as_float32(ctx, outputs, [mode], inputs) as (outs, ins):
        out = outs[0]
        tmp = out if mode == WRITE else ctx.requested[0].get_space(tuple(out.shape), out.dtype)
        if is_gpu(ctx):
            _product(ctx, tmp, ins)
        else:
            from nnvmpy.ops import _khatri_rao_cpu

            f = _Concatenated(ins)
            _khatri_rao_cpu.product_rows(flat(tmp), f.cat, f.starts, f.rows, f.inners, f.ncol)
        if tmp is not out:
            _identity.launch(ctx, out, req[0], tmp)


def _backward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    # inputs: (dX, A_1, ..., A_n); outputs: dA_1, ..., dA_n
    modes = [req_code("_backward_khatri_rao", r) for r in req]
    dy = inputs[0]
    if dy.size == 0:
        return
    with half_as_float32(ctx, outputs, modes, inputs) as (outs, ins):
        dy, factors = ins[0], ins[1:]
        rows = [f.shape[0] for f in factors]
        ncol = dy.shape[1]
        zero = np.float64(0) if np.dtype(dy.dtype) == np.float64 else np.float32(0)
        if not is_gpu(ctx):
            from nnvmpy.ops import _khatri_rao_cpu

            f = _Concatenated(factors)
            for i, (da, mode) in enumerate(zip(outs, modes)):
                if mode != NULL and da.size:
                    _khatri_rao_cpu.factor_grad(
                        flat(da), flat(dy), f.cat, f.starts, f.rows, f.inners, ncol, i, zero,
                        mode == ADD,
                    )  # fmt: skip
            return
        w = ctx.requested[0].get_space(tuple(dy.shape), dy.dtype)
        for i, (da, mode) in enumerate(zip(outs, modes)):
            if mode == NULL or da.size == 0:
                continue
            use_w = _product(ctx, w, factors, skip=i)
            inner, outer = math.prod(rows[i + 1 :]), math.prod(rows[:i])
            _factor_grad.launch(
                ctx, da.size, flat(da), flat(dy), flat(w), use_w, inner, rows[i], outer, ncol, zero,
                ADD if mode == ADD else WRITE, work=dy.size,
            )  # fmt: skip


def _temp_space(attrs: NodeAttrs) -> list[ResourceRequest]:
    return [ResourceRequest.kTempSpace]


(
    register_op("khatri_rao")
    .describe(
        "Computes the Khatri-Rao product of the input matrices.\n\n"
        "Given matrices A_1 (M_1, N), ..., A_n (M_n, N), the (column-wise) Khatri-Rao "
        "product is the (M_1 * ... * M_n, N) matrix whose k-th column is the Kronecker "
        "product of the k-th columns of the A_i.\n\n"
        "A = [[1, -1], [2, -3]]\n"
        "B = [[1, 4], [2, 5], [3, 6]]\n"
        "khatri_rao(A, B) = [[1, -4], [2, -5], [3, -6], [2, -12], [4, -15], [6, -18]]"
    )
    .set_attr_parser(KhatriRaoParam)
    .set_key_var_num_args("num_args")
    .set_num_inputs(_num_args)
    .set_num_outputs(1)
    .set_attr(FListInputNames, lambda attrs: [f"arg{i}" for i in range(_num_args(attrs))])
    .set_attr(FInferShape, _infer)
    .set_attr(FInferType, elemwise_type(-1, 1))
    .set_attr(FResourceRequest, _temp_space)
    .set_attr(FCompute_cpu, _forward)
    .set_attr(FCompute_gpu, _forward)
    .set_attr(FGradient, ElemwiseGradUseIn("_backward_khatri_rao"))
    .add_argument("args", "NDArray-or-Symbol[]", "Positional input matrices")
    .add_arguments(KhatriRaoParam.fields())
)
(
    register_op("_backward_khatri_rao")
    .set_attr_parser(KhatriRaoParam)
    .set_num_inputs(lambda attrs: _num_args(attrs) + 1)
    .set_num_outputs(_num_args)
    .set_attr(TIsBackward, True)
    .set_attr(FResourceRequest, _temp_space)
    .set_attr(FCompute_cpu, _backward)
    .set_attr(FCompute_gpu, _backward)
)
