"""MXNet's interleaved multi-head attention matmuls (contrib, transformer.cc's four ops).

The projections stay in the layout a single FullyConnected makes, (seq, batch, features),
with the heads interleaved along features, so no transpose is needed around attention:

    selfatt_qk      qkv (L, B, H*3*D) -> (B*H, L, L)        q k^T / sqrt(D)
    selfatt_valatt  qkv, att (B*H, L, L) -> (L, B, H*D)    att v
    encdec_qk       q (Lq, B, H*D), kv (Lk, B, H*2*D) -> (B*H, Lq, Lk)   q k^T / sqrt(D)
    encdec_valatt   kv, att (B*H, Lq, Lk) -> (Lq, B, H*D)  att v

Per head h of batch row b (z = b*H + h) the q/k/v of sequence position i are the D
features starting at ((i*B + b)*H + h)*P*D + slot*D (P = 3 or 2 slots per head), so each
operand of every product is a stack over z of strided matrices: one batched-GEMM helper
(`strided_gemm`) covers forward and backward, NumPy matmul on strided views on the CPU
and a one-body kernel (one work item per output element) on the GPU.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from ..attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FListInputNames,
    TIsBackward,
)
from ..base import InferError
from ..graph.grad import make_grad_node
from ..infer import elemwise_type, shape_assign, shape_is_known, shape_str
from ..kernel import device_function, parallel_for
from ..kernel.launch import ADD, NULL, WRITE, check_cpu_dtypes, flat, is_gpu, req_code
from ..param import Parameter, field
from ..registry import NodeAttrs, register_op


class InterleavedParam(Parameter):
    heads = field(int, lower_bound=1, describe="Set number of heads")


class Operand(NamedTuple):
    """A stack of matrices in flat memory: element (z, r, c) at off + z*sz + r*sr + c*sc."""

    array: Any
    off: int
    sz: int
    sr: int
    sc: int

    @property
    def t(self) -> Operand:  # the transposed matrices
        return Operand(self.array, self.off, self.sz, self.sc, self.sr)


# -- the batched GEMM ---------------------------------------------------------------------------


@device_function
def _put(out, j, mode, v):
    if mode == ADD:
        out[j] += v
    elif mode == WRITE:
        out[j] = v


@parallel_for
def _gemm_item(
    t, c, co, czs, crs, ccs, a, ao, azs, ars, acs, b, bo, bzs, brs, bcs, m, n, k, alpha, mode
):
    # c[z, i, j] (+)= alpha * sum_p a[z, i, p] b[z, p, j]; item t is (z, i, j)
    j = t % n
    r = t // n
    i = r % m
    z = r // m
    s = 0.0
    pa = ao + z * azs + i * ars
    pb = bo + z * bzs + j * bcs
    for p in range(k):
        s += a[pa + p * acs] * b[pb + p * brs]
    _put(c, co + z * czs + i * crs + j * ccs, mode, s * alpha)


@parallel_for
def _zero_item(t, c, co, czs, crs, ccs, m, n):
    j = t % n
    r = t // n
    c[co + (r // m) * czs + (r % m) * crs + j * ccs] = 0


def _view(x: Operand, shape: tuple[int, int, int]) -> np.ndarray:
    size = x.array.itemsize
    strides = (x.sz * size, x.sr * size, x.sc * size)
    return np.lib.stride_tricks.as_strided(x.array[x.off :], shape, strides, writeable=True)


def strided_gemm(
    ctx: Any, mode: int, c: Operand, a: Operand, b: Operand, dims: tuple[int, ...], alpha: float
) -> None:
    """c (+)= alpha * a @ b for each of the z matrices; dims = (z, m, n, k)."""
    z, m, n, k = dims
    if mode == NULL or z * m * n == 0:
        return
    if not is_gpu(ctx):
        # contiguous copies let matmul call BLAS (its strided loop is far slower)
        lhs = np.ascontiguousarray(_view(a, (z, m, k)))
        product = np.matmul(lhs, np.ascontiguousarray(_view(b, (z, k, n))))
        if alpha != 1.0:
            product *= alpha
        out = _view(c, (z, m, n))
        if mode == WRITE:
            out[...] = product
        else:
            out += product
        return
    _gemm_item.launch(ctx, z * m * n, *c, *a, *b, m, n, k, alpha, mode, work=z * m * n * k)


def zero_slot(ctx: Any, mode: int, c: Operand, dims: tuple[int, int, int]) -> None:
    """Write zeros to the (z, m, n) matrices of c (the slots a gradient does not reach)."""
    z, m, n = dims
    if mode != WRITE or z * m * n == 0:
        return
    if not is_gpu(ctx):
        _view(c, (z, m, n))[...] = 0
        return
    _zero_item.launch(ctx, z * m * n, *c, m, n)


# -- layouts --------------------------------------------------------------------------------------


class Layout(NamedTuple):
    heads: int
    batch: int
    d: int  # features per head


def _proj(x: Any, lay: Layout, slots: int, slot: int) -> Operand:
    """The (z, position, feature) matrices of slot `slot` of a (L, B, H*slots*D) array."""
    row = lay.batch * lay.heads * slots * lay.d
    return Operand(x, slot * lay.d, slots * lay.d, row, 1)


def _att(x: Any, rows: int, cols: int) -> Operand:
    """The (z, i, j) matrices of a contiguous (B*H, rows, cols) array."""
    return Operand(x, 0, rows * cols, cols, 1)


def _layout(name: str, attrs: NodeAttrs, shape: tuple[int, ...], slots: int) -> Layout:
    heads = attrs.parsed.heads
    if len(shape) != 3 or shape[2] % (heads * slots):
        raise InferError(
            f"{name}: expected (seq_length, batch_size, heads * {slots} * head_dim) with "
            f"heads={heads}, got {shape_str(shape)}"
        )
    return Layout(heads, shape[1], shape[2] // (heads * slots))


# Each op: (input names, slots per head of each input (0: attention), output shape rule)
_SPECS: dict[str, tuple[list[str], list[int]]] = {
    "selfatt_qk": (["queries_keys_values"], [3]),
    "selfatt_valatt": (["queries_keys_values", "attention"], [3, 0]),
    "encdec_qk": (["queries", "keys_values"], [1, 2]),
    "encdec_valatt": (["keys_values", "attention"], [2, 0]),
}


def _make_infer_shape(kind: str) -> Callable[..., bool]:
    name = f"_contrib_interleaved_matmul_{kind}"
    slots = _SPECS[kind][1]

    def infer(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
        heads = attrs.parsed.heads
        x = in_shapes[0]
        if not shape_is_known(x):
            return False
        lay = _layout(name, attrs, x, slots[0])
        length, batch = x[0], x[1]
        if kind == "selfatt_qk":
            shape_assign(out_shapes, 0, (batch * heads, length, length), f"{name}: output")
        elif kind == "encdec_qk":
            kv = (None, batch, 2 * heads * lay.d)
            shape_assign(in_shapes, 1, kv, f"{name}: input 'keys_values'")
            if shape_is_known(in_shapes[1]):
                out = (batch * heads, length, in_shapes[1][0])
                shape_assign(out_shapes, 0, out, f"{name}: output")
        else:  # valatt: the attention's rows are the output's positions
            if kind == "selfatt_valatt":
                want = (batch * heads, length, length)
            else:
                want = (batch * heads, None, length)
            shape_assign(in_shapes, 1, want, f"{name}: input 'attention'")
            att = in_shapes[1]
            if shape_is_known(att):
                shape_assign(out_shapes, 0, (att[1], batch, heads * lay.d), f"{name}: output")
        return all(shape_is_known(s) for s in [*in_shapes, *out_shapes])

    return infer


# -- forward and backward ------------------------------------------------------------------------


def _forward(kind: str) -> Callable[..., None]:
    name = f"_contrib_interleaved_matmul_{kind}"

    def compute(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
        if not is_gpu(ctx):
            check_cpu_dtypes(name, [*inputs, *outputs])
        mode = req_code(name, req[0])
        out = flat(outputs[0])
        x = inputs[0]
        if kind in ("selfatt_qk", "selfatt_valatt"):
            lay = _layout(name, attrs, x.shape, 3)
            z, length = lay.batch * lay.heads, x.shape[0]
            if kind == "selfatt_qk":
                q, k = _proj(flat(x), lay, 3, 0), _proj(flat(x), lay, 3, 1)
                dims = (z, length, length, lay.d)
                strided_gemm(ctx, mode, _att(out, length, length), q, k.t, dims, _scale(lay))
            else:
                v = _proj(flat(x), lay, 3, 2)
                att = _att(flat(inputs[1]), length, length)
                o = _proj(out, lay, 1, 0)
                strided_gemm(ctx, mode, o, att, v, (z, length, lay.d, length), 1.0)
        elif kind == "encdec_qk":
            lay = _layout(name, attrs, x.shape, 1)
            z, lq, lk = lay.batch * lay.heads, x.shape[0], inputs[1].shape[0]
            q, k = _proj(flat(x), lay, 1, 0), _proj(flat(inputs[1]), lay, 2, 0)
            strided_gemm(ctx, mode, _att(out, lq, lk), q, k.t, (z, lq, lk, lay.d), _scale(lay))
        else:
            lay = _layout(name, attrs, x.shape, 2)
            z, lk, lq = lay.batch * lay.heads, x.shape[0], inputs[1].shape[1]
            v = _proj(flat(x), lay, 2, 1)
            att = _att(flat(inputs[1]), lq, lk)
            strided_gemm(ctx, mode, _proj(out, lay, 1, 0), att, v, (z, lq, lay.d, lk), 1.0)

    return compute


def _scale(lay: Layout) -> float:
    return 1.0 / math.sqrt(lay.d)


def _backward(kind: str) -> Callable[..., None]:
    name = f"_backward_interleaved_matmul_{kind}"

    def compute(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
        if not is_gpu(ctx):
            check_cpu_dtypes(name, [*inputs, *outputs])
        modes = [req_code(name, r) for r in req]
        dy, x = flat(inputs[0]), inputs[1]
        if kind in ("selfatt_qk", "selfatt_valatt"):
            lay = _layout(name, attrs, x.shape, 3)
            z, n, d = lay.batch * lay.heads, x.shape[0], lay.d
            xf, dx = flat(x), flat(outputs[0])
            if kind == "selfatt_qk":  # dq = s dy k, dk = s dy^T q, dv = 0
                s, g = _scale(lay), _att(dy, n, n)
                q, k = _proj(xf, lay, 3, 0), _proj(xf, lay, 3, 1)
                strided_gemm(ctx, modes[0], _proj(dx, lay, 3, 0), g, k, (z, n, d, n), s)
                strided_gemm(ctx, modes[0], _proj(dx, lay, 3, 1), g.t, q, (z, n, d, n), s)
                zero_slot(ctx, modes[0], _proj(dx, lay, 3, 2), (z, n, d))
            else:  # dv = att^T dy, dq = dk = 0; d att = dy v^T
                att, g = _att(flat(inputs[2]), n, n), _proj(dy, lay, 1, 0)
                v = _proj(xf, lay, 3, 2)
                strided_gemm(ctx, modes[0], _proj(dx, lay, 3, 2), att.t, g, (z, n, d, n), 1.0)
                zero_slot(ctx, modes[0], _proj(dx, lay, 3, 0), (z, n, d))
                zero_slot(ctx, modes[0], _proj(dx, lay, 3, 1), (z, n, d))
                da = _att(flat(outputs[1]), n, n)
                strided_gemm(ctx, modes[1], da, g, v.t, (z, n, n, d), 1.0)
        elif kind == "encdec_qk":  # dq = s dy k, dk = s dy^T q, dv = 0
            lay = _layout(name, attrs, x.shape, 1)
            kv = inputs[2]
            z, lq, lk, d = lay.batch * lay.heads, x.shape[0], kv.shape[0], lay.d
            s, g = _scale(lay), _att(dy, lq, lk)
            q, k = _proj(flat(x), lay, 1, 0), _proj(flat(kv), lay, 2, 0)
            dq, dkv = flat(outputs[0]), flat(outputs[1])
            strided_gemm(ctx, modes[0], _proj(dq, lay, 1, 0), g, k, (z, lq, d, lk), s)
            strided_gemm(ctx, modes[1], _proj(dkv, lay, 2, 0), g.t, q, (z, lk, d, lq), s)
            zero_slot(ctx, modes[1], _proj(dkv, lay, 2, 1), (z, lk, d))
        else:  # dv = att^T dy, dk = 0; d att = dy v^T
            lay = _layout(name, attrs, x.shape, 2)
            att_in = inputs[2]
            z, lk, lq, d = lay.batch * lay.heads, x.shape[0], att_in.shape[1], lay.d
            att, g = _att(flat(att_in), lq, lk), _proj(dy, lay, 1, 0)
            v = _proj(flat(x), lay, 2, 1)
            dkv = flat(outputs[0])
            strided_gemm(ctx, modes[0], _proj(dkv, lay, 2, 1), att.t, g, (z, lk, d, lq), 1.0)
            zero_slot(ctx, modes[0], _proj(dkv, lay, 2, 0), (z, lk, d))
            da = _att(flat(outputs[1]), lq, lk)
            strided_gemm(ctx, modes[1], da, g, v.t, (z, lq, lk, d), 1.0)

    return compute


_DESCRIPTIONS = {
    "selfatt_qk": "Compute the matrix multiplication between the projections of queries and "
    "keys in multihead attention use as self attention. The input must be a single tensor of "
    "interleaved projections of queries, keys and values following the layout: "
    "(seq_length, batch_size, num_heads * head_dim * 3). Returns (batch_size * num_heads, "
    "seq_length, seq_length), the queries scaled by 1 / sqrt(head_dim).",
    "selfatt_valatt": "Compute the matrix multiplication between the projections of values "
    "and the attention weights in multihead attention use as self attention. The inputs "
    "must be a tensor of interleaved projections of queries, keys and values following the "
    "layout (seq_length, batch_size, num_heads * head_dim * 3) and the attention weights "
    "(batch_size * num_heads, seq_length, seq_length). Returns (seq_length, batch_size, "
    "num_heads * head_dim).",
    "encdec_qk": "Compute the matrix multiplication between the projections of queries and "
    "keys in multihead attention use as encoder-decoder. The inputs must be the queries "
    "(qseq_length, batch_size, num_heads * head_dim) and a tensor of interleaved projections "
    "of keys and values (kseq_length, batch_size, num_heads * head_dim * 2). Returns "
    "(batch_size * num_heads, qseq_length, kseq_length), queries scaled by 1/sqrt(head_dim).",
    "encdec_valatt": "Compute the matrix multiplication between the projections of values "
    "and the attention weights in multihead attention use as encoder-decoder. The inputs "
    "must be a tensor of interleaved projections of keys and values (kseq_length, "
    "batch_size, num_heads * head_dim * 2) and the attention weights (batch_size * "
    "num_heads, qseq_length, kseq_length). Returns (qseq_length, batch_size, num_heads * "
    "head_dim).",
}


def _register(kind: str) -> None:
    names, _ = _SPECS[kind]
    fwd_name = f"_contrib_interleaved_matmul_{kind}"
    bwd_name = f"_backward_interleaved_matmul_{kind}"
    n_in = len(names)

    def gradient(node: Any, ograds: list[Any]) -> list[Any]:
        return make_grad_node(bwd_name, node, [ograds[0], *node.inputs])

    def input_names(attrs: NodeAttrs) -> list[str]:
        return list(names)

    op = (
        register_op(fwd_name)
        .describe(_DESCRIPTIONS[kind])
        .set_attr_parser(InterleavedParam)
        .set_num_inputs(n_in)
        .set_num_outputs(1)
        .set_attr(FListInputNames, input_names)
        .set_attr(FInferShape, _make_infer_shape(kind))
        .set_attr(FInferType, elemwise_type(n_in, 1))
        .set_attr(FCompute_cpu, _forward(kind))
        .set_attr(FCompute_gpu, _forward(kind))
        .set_attr(FGradient, gradient)
    )
    for n in names:
        op.add_argument(n, "NDArray-or-Symbol", f"{n.replace('_', ' ').capitalize()}")
    op.add_arguments(InterleavedParam.fields())
    (
        register_op(bwd_name)
        .set_attr_parser(InterleavedParam)
        .set_num_inputs(n_in + 1)
        .set_num_outputs(n_in)
        .set_attr(TIsBackward, True)
        .set_attr(FCompute_cpu, _backward(kind))
        .set_attr(FCompute_gpu, _backward(kind))
    )


for _kind in _SPECS:
    _register(_kind)
