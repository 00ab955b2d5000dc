"""MXNet's interleaved multi-head attention matmuls (contrib, transformer.cc's four ops).

The projections stay in the layout a single FullyConnected makes, (seq, batch, features),
with the heads interleaved along features, so no transpose is needed around attention:

    selfatt_qk      qkv (L, B, H*3*D) -> (B*H, L, L)        q k^T / sqrt(D)
    selfatt_valatt  qkv, att (B*H, L, L) -> (L, B, H*D)    att v
    encdec_qk       q (Lq, B, H*D), kv (Lk, B, H*2*D) -> (B*H, Lq, Lk)   q k^T / sqrt(D)
    encdec_valatt   kv, att (B*H, Lq, Lk) -> (Lq, B, H*D)  att v

Per head h of batch row b (z = b*H + h) the q/k/v of sequence position i are the D
features starting at ((i*B + b)*H + h)*P*D + slot*D (P = 3 or 2 slots per head).

Every product is one batched GEMM over the Z = B*H heads through ops/matrix.gemm (BLAS on
the CPU; cuBLAS's strided batched GEMM, or the tiled numba kernel, on the GPU). gemm takes
C-contiguous stacks only, and a head's (L, D) matrix here has row stride B*H*P*D, so the
operands read from an interleaved array are first copied into a contiguous (slots, Z, L, D)
stack by one coalesced element-wise kernel (`_gather`), and products bound for one are
written back by another (`_scatter`: req, and zeros in the slots no gradient reaches).
Attention matrices (Z, Lq, Lk) are contiguous and go to gemm as they are, transposed by its
flags. gemm has no alpha: 1/sqrt(D) is folded into the copy of q (forward), or of q and k
(backward). With s = 1/sqrt(D), q' = s q, k' = s k and tmp scratch (slots, Z, L, D):

    qk forward       out (Z, Lq, Lk) (req)= q' k^T
    qk backward      tmp = [dy k', dy^T q']            -> dq, dk slots (dv slot: 0)
    valatt forward   tmp = att v                        -> out
    valatt backward  tmp = att^T dy  -> dv slot (dq, dk slots: 0);  d att (req)= dy v^T

On the CPU the copies are NumPy's strided copies (float16 is refused there, as before).
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
from ..base import InferError, OpReqType, Shape
from ..graph.grad import make_grad_node
from ..infer import elemwise_type, shape_assign, shape_is_known, shape_str
from ..kernel import parallel_for, scratch
from ..kernel.launch import NULL, WRITE, check_cpu_dtypes, flat, is_gpu, req_code, store
from ..param import Parameter, field
from ..registry import NodeAttrs, register_op
from .matrix import gemm


class InterleavedParam(Parameter):
    heads = field(int, lower_bound=1, describe="Set number of heads")


_WRITE_TO = OpReqType.kWriteTo  # GEMMs into scratch


# -- layouts and the copies to and from gemm's contiguous stacks ----------------------------


class Layout(NamedTuple):
    heads: int
    batch: int
    d: int  # features per head

    @property
    def z(self) -> int:
        """Matrices per batched GEMM: one per (batch row, head)."""
        return self.batch * self.heads


@parallel_for
def _gather(t, dst, src, length, z, slots, d, first, scale0, scale):
    # dst[c, y, i, e] = src[i, y, first + c, e] * (scale0 if c == 0 else scale); item t is
    # dst's element t: writes coalesce, reads come in runs of d
    e = t % d
    r = t // d
    i = r % length
    r = r // length
    y = r % z
    c = r // z
    v = src[((i * z + y) * slots + first + c) * d + e]
    dst[t] = v * (scale0 if c == 0 else scale)


@parallel_for
def _scatter(t, dst, src, length, z, slots, d, first, count, mode):
    # dst[i, y, s, e] (+)= src[s - first, y, i, e] for slots first..first+count-1, 0 in the
    # other slots on WRITE; item t is dst's element t: writes coalesce
    e = t % d
    r = t // d
    s = r % slots
    r = r // slots
    y = r % z
    i = r // z
    c = s - first
    if c >= 0 and c < count:
        store(dst, t, src[((c * z + y) * length + i) * d + e], mode)
    elif mode == WRITE:
        dst[t] = 0


def _heads(
    ctx: Any, x: Any, lay: Layout, slots: int, first: int, count: int,
    scales: tuple[float, float] = (1.0, 1.0),
) -> Any:  # fmt: skip
    """Slots first..first+count-1 of an interleaved (L, B, H*slots*D) array as a contiguous
    (count, Z, L, D) stack that gemm takes; slot `first` times scales[0], the rest times
    scales[1] (gemm has no alpha for 1/sqrt(D))."""
    length = int(x.shape[0])
    out = scratch.empty(ctx, (count, lay.z, length, lay.d), x.dtype)
    if not is_gpu(ctx):
        parts = x.reshape(length, lay.z, slots, lay.d)[:, :, first : first + count]
        parts = parts.transpose(2, 1, 0, 3)
        np.multiply(parts[:1], scales[0], out=out[:1])
        np.multiply(parts[1:], scales[1], out=out[1:])
        return out
    acc = np.float64 if x.dtype == np.float64 else np.float32  # float16 scales in float32
    args = (length, lay.z, slots, lay.d, first, acc(scales[0]), acc(scales[1]))
    _gather.launch(ctx, out.size, flat(out), flat(x), *args)
    return out


def _unheads(ctx: Any, mode: int, out: Any, lay: Layout, slots: int, first: int, src: Any) -> None:
    """Slots first.. of an interleaved (L, B, H*slots*D) output (mode)= the (count, Z, L, D)
    stack src; on WRITE the other slots get zeros (the gradient does not reach them)."""
    length, count = int(out.shape[0]), int(src.shape[0])
    if not is_gpu(ctx):
        dst = out.reshape(length, lay.z, slots, lay.d)
        part = src.transpose(2, 1, 0, 3)
        if mode == WRITE:
            dst[:, :, :first] = 0
            dst[:, :, first + count :] = 0
            dst[:, :, first : first + count] = part
        else:
            dst[:, :, first : first + count] += part
        return
    args = (length, lay.z, slots, lay.d, first, count, mode)
    _scatter.launch(ctx, out.size, flat(out), flat(src), *args)


def _products_to(
    ctx: Any, mode: int, out: Any, lay: Layout, slots: int, first: int,
    products: list[tuple[Any, bool, Any]],
) -> None:  # fmt: skip
    """Slots first.. of an interleaved output (mode)= op(a) @ b (Z, m, D) for each (a, ta,
    b) of `products`: the GEMMs write a scratch stack, one `_unheads` moves it."""
    if mode == NULL:
        return
    a, ta, b = products[0]
    rows = int(a.shape[2] if ta else a.shape[1])
    tmp = scratch.empty(ctx, (len(products), lay.z, rows, lay.d), b.dtype)
    for c, (a, ta, b) in enumerate(products):
        gemm(ctx, tmp[c], _WRITE_TO, a, ta, b, False)
    _unheads(ctx, mode, out, lay, slots, first, tmp)


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
            want: Shape
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


def _scale(lay: Layout) -> float:
    return 1.0 / math.sqrt(lay.d)


def _slots(kind: str) -> int:
    """Slots per head of the op's first input: 3 (q, k, v), 1 (q) or 2 (k, v)."""
    return _SPECS[kind][1][0]


def _forward(kind: str) -> Callable[..., None]:
    name = f"_contrib_interleaved_matmul_{kind}"

    def compute(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
        if not is_gpu(ctx):
            check_cpu_dtypes(name, [*inputs, *outputs])
        mode = req_code(name, req[0])
        x, out, slots = inputs[0], outputs[0], _slots(kind)
        lay = _layout(name, attrs, x.shape, slots)
        if mode == NULL:
            return
        if kind == "selfatt_qk":  # out = q' k^T, q and k copied by one launch
            qk = _heads(ctx, x, lay, 3, 0, 2, (_scale(lay), 1.0))
            gemm(ctx, out, req[0], qk[0], False, qk[1], True)
        elif kind == "encdec_qk":
            q = _heads(ctx, x, lay, 1, 0, 1, (_scale(lay), 1.0))
            k = _heads(ctx, inputs[1], lay, 2, 0, 1)
            gemm(ctx, out, req[0], q[0], False, k[0], True)
        else:  # valatt: out = att v, v the last slot
            v = _heads(ctx, x, lay, slots, slots - 1, 1)
            _products_to(ctx, mode, out, lay, 1, 0, [(inputs[1], False, v[0])])

    return compute


def _backward(kind: str) -> Callable[..., None]:
    name = f"_backward_interleaved_matmul_{kind}"

    def compute(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
        if not is_gpu(ctx):
            check_cpu_dtypes(name, [*inputs, *outputs])
        modes = [req_code(name, r) for r in req]
        lay = _layout(name, attrs, inputs[1].shape, _slots(kind))
        if kind == "selfatt_qk":
            _selfatt_qk_backward(ctx, lay, modes[0], inputs, outputs[0])
        elif kind == "encdec_qk":
            _encdec_qk_backward(ctx, lay, modes, inputs, outputs)
        else:
            _valatt_backward(ctx, lay, _slots(kind), modes, req[1], inputs, outputs)

    return compute


def _selfatt_qk_backward(ctx: Any, lay: Layout, mode: int, inputs: list[Any], dx: Any) -> None:
    """dq = dy k', dk = dy^T q' into slots 0, 1 of dqkv, zeros in the v slot."""
    if mode == NULL:
        return
    dy, s = inputs[0], _scale(lay)
    qk = _heads(ctx, inputs[1], lay, 3, 0, 2, (s, s))
    _products_to(ctx, mode, dx, lay, 3, 0, [(dy, False, qk[1]), (dy, True, qk[0])])


def _encdec_qk_backward(
    ctx: Any, lay: Layout, modes: list[int], inputs: list[Any], outputs: list[Any]
) -> None:
    """dq = dy k', and dk = dy^T q' into slot 0 of dkv, zeros in its v slot."""
    dy, q, kv = inputs
    s = _scale(lay)
    if modes[0] != NULL:
        k = _heads(ctx, kv, lay, 2, 0, 1, (s, s))
        _products_to(ctx, modes[0], outputs[0], lay, 1, 0, [(dy, False, k[0])])
    if modes[1] != NULL:
        qs = _heads(ctx, q, lay, 1, 0, 1, (s, s))
        _products_to(ctx, modes[1], outputs[1], lay, 2, 0, [(dy, True, qs[0])])


def _valatt_backward(
    ctx: Any, lay: Layout, slots: int, modes: list[int], req_att: Any, inputs: list[Any],
    outputs: list[Any],
) -> None:  # fmt: skip
    """dv = att^T dy into the last slot of dx (zeros in the others); d att = dy v^T."""
    if modes[0] == NULL and modes[1] == NULL:
        return
    dy, x, att = inputs
    g = _heads(ctx, dy, lay, 1, 0, 1)
    _products_to(ctx, modes[0], outputs[0], lay, slots, slots - 1, [(att, True, g[0])])
    if modes[1] != NULL:
        v = _heads(ctx, x, lay, slots, slots - 1, 1)
        gemm(ctx, outputs[1], req_att, g[0], False, v[0], True)


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
