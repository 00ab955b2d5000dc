"""CTCLoss (aliases ctc_loss, _contrib_CTCLoss, _contrib_ctc_loss): connectionist temporal
classification loss.

data (T, N, A) holds unnormalised activations of A classes for T steps of N sequences
(a softmax is taken over A); label (N, L) the label sequences. One class is the blank:
0 with blank_label='first' (labels 1..A-1, padded with 0), A-1 with 'last' (labels
0..A-2, padded with -1). A label sequence ends at its first padding value, or after
label_lengths[b] values with use_label_lengths; a data sequence after data_lengths[b]
steps with use_data_lengths (else T). The output is -log p(label | data), shape (N,).

The forward pass also fills a hidden output, the gradient of the loss against data
(zero past each sequence's end); the backward op scales it by the head gradient, so
CTCLoss is an ordinary op (like MXNet's). The algorithm is in _ctc_kernels.py, the GPU's
block kernels (a block per sequence, a block per row of long alphabets) in _ctc_cuda.py.

Labels and lengths are read on the host (a copy on the GPU, as MXNet does) and checked:
a length out of range, a label value that is not a class or is the blank, or a label
sequence longer than its data can align to (L_b plus its repeated neighbours > T_b) is
a named error.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from ...attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FListInputNames,
    FListOutputNames,
    FNumVisibleOutputs,
    FResourceRequest,
    TIsBackward,
)
from ...base import InferError, NNVMError
from ...graph.grad import make_grad_node
from ...graph.node import NodeEntry
from ...infer import shape_assign, shape_is_known, shape_str, type_assign
from ...kernel.launch import NULL, flat, is_gpu, req_code, run_rows
from ...param import Parameter, field
from ...registry import NodeAttrs, register_op
from ...resource import ResourceRequest
from ..init import _fill
from . import _ctc_cuda as ctc_cuda
from . import _ctc_kernels as k
from ._layer_util import host_copy, to_device, via_float32


class CTCLossParam(Parameter):
    use_data_lengths = field(
        bool,
        default=False,
        describe="Whether the data lenghts are decided by `data_lengths`. If false, the "
        "lengths are equal to the max sequence length.",
    )
    use_label_lengths = field(
        bool,
        default=False,
        describe="Whether the label lenghts are decided by `label_lengths`, or derived from "
        "`padding_mask`. If false, the lengths are derived from the first occurrence of the "
        "value of `padding_mask`. The value of `padding_mask` is ``0`` when first CTC label "
        "is reserved for blank, and ``-1`` when last label is reserved for blank. See "
        "`blank_label`.",
    )
    blank_label = field(
        str,
        default="first",
        enum={"first": 0, "last": 1},
        describe='Set the label that is reserved for blank label. If "first", 0-th label is '
        "reserved, and label values for tokens in the vocabulary are between ``1`` and "
        '``alphabet_size-1``, and the padding mask is ``0``. If "last", last label value '
        "``alphabet_size-1`` is reserved for blank label instead, and label values for tokens "
        "in the vocabulary are between ``0`` and ``alphabet_size-2``, and the padding mask "
        "is ``-1``.",
    )


def _input_names(attrs: NodeAttrs) -> list[str]:
    p = attrs.parsed
    names = ["data", "label"]
    if p.use_data_lengths:
        names.append("data_lengths")
    if p.use_label_lengths:
        names.append("label_lengths")
    return names


def _num_inputs(attrs: NodeAttrs) -> int:
    return 2 + int(attrs.parsed.use_data_lengths) + int(attrs.parsed.use_label_lengths)


# -- shape and type ----------------------------------------------------------------------------


def _infer_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    """data (T, N, A), label (N, L) with L <= T, lengths (N,); loss (N,), grad = data."""
    name = attrs.op.name if attrs.op is not None else "CTCLoss"
    names = _input_names(attrs)
    shape_assign(in_shapes, 0, out_shapes[1], f"{name}: input 'data'")
    for i, rank in enumerate([3, 2] + [1] * (len(names) - 2)):
        shape = in_shapes[i]
        if shape is not None and len(shape) != rank:
            raise InferError(
                f"{name}: input '{names[i]}' has shape {shape_str(shape)}, but it must have "
                f"{rank} dimension{'s' if rank > 1 else ''}"
            )
    batch = None  # N from whichever input or output knows it
    for shape, axis in [(in_shapes[0], 1), (in_shapes[1], 0), (out_shapes[0], 0)]:
        if shape is not None and shape[axis] is not None:
            batch = shape[axis]
    for i in range(2, len(names)):
        if in_shapes[i] is not None and in_shapes[i][0] is not None:
            batch = in_shapes[i][0]
    data = in_shapes[0]
    shape_assign(in_shapes, 0, (None, batch, None), f"{name}: input 'data'")
    shape_assign(in_shapes, 1, (batch, None), f"{name}: input 'label'")
    for i in range(2, len(names)):
        shape_assign(in_shapes, i, (batch,), f"{name}: input '{names[i]}'")
    shape_assign(out_shapes, 0, (batch,), f"{name}: output 'output'")
    shape_assign(out_shapes, 1, in_shapes[0], f"{name}: output 'grad'")
    data, label = in_shapes[0], in_shapes[1]
    if data[0] is not None and label[1] is not None and label[1] > data[0]:
        raise InferError(
            f"{name}: input 'label' of shape {shape_str(label)} allows {label[1]} labels, more "
            f"than the {data[0]} steps of data {shape_str(data)}; expected label.shape[1] <= T"
        )
    return all(shape_is_known(s) for s in [*in_shapes, *out_shapes])


def _infer_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    """Both outputs have data's dtype; labels and lengths may have their own (data's by
    default)."""
    name = attrs.op.name if attrs.op is not None else "CTCLoss"
    for j in range(2):
        type_assign(in_types, 0, out_types[j], f"{name}: input 'data'")
    for j, out in enumerate(["output", "grad"]):
        type_assign(out_types, j, in_types[0], f"{name}: output '{out}'")
    for i in range(1, len(in_types)):
        if in_types[i] is None:
            type_assign(in_types, i, in_types[0])
    return all(t is not None for t in [*in_types, *out_types])


# -- labels and lengths on the host ------------------------------------------------------------


def _as_ints(name: str, what: str, values: np.ndarray) -> np.ndarray:
    if not np.all(np.isfinite(values)):
        i = int(np.flatnonzero(~np.isfinite(values.reshape(-1)))[0])
        raise NNVMError(f"{name}: {what}[{i}] = {values.reshape(-1)[i]} is not a number")
    return values.astype(np.int64)  # truncated, as MXNet casts


def _lengths(name: str, what: str, values: np.ndarray, high: int) -> np.ndarray:
    ints = _as_ints(name, what, values.reshape(-1))
    bad = np.flatnonzero((ints < 0) | (ints > high))
    if bad.size:
        i = int(bad[0])
        raise NNVMError(
            f"{name}: {what}[{i}] = {values.reshape(-1)[i]} is out of range; expected "
            f"0 <= {what} <= {high}"
        )
    return ints


def _check_sequences(
    name: str, blank_label: str, a_len: int, labels: np.ndarray, lens: np.ndarray, tlen: np.ndarray
) -> None:
    """Every label a class, every sequence short enough for its data; the first failure,
    sequence by sequence, names itself. Whole-batch array arithmetic: a Python loop over the
    sequences cost ~230 us a call at N=32."""
    inside = np.arange(labels.shape[1])[None, :] < lens[:, None]
    low, high = (1, a_len - 1) if blank_label == "first" else (0, a_len - 2)
    bad = inside & ((labels < low) | (labels > high))
    repeats = np.count_nonzero(inside[:, 1:] & (labels[:, 1:] == labels[:, :-1]), axis=1)
    short = lens + repeats > tlen
    rows = np.flatnonzero(bad.any(axis=1) | short)
    if not rows.size:
        return
    b = int(rows[0])
    if bad[b].any():
        j = int(np.argmax(bad[b]))
        raise NNVMError(
            f"{name}: label[{b}, {j}] = {labels[b, j]} is not a class: with "
            f"blank_label='{blank_label}' and {a_len} classes, labels are in [{low}, {high}]"
        )
    raise NNVMError(
        f"{name}: label sequence {b} ({lens[b]} labels) needs at least {lens[b] + repeats[b]} "
        f"steps (a blank separates repeated labels), but its data has {tlen[b]}"
    )


def _pack(
    name: str, p: Any, ctx: Any, inputs: list[Any], shape: tuple[int, ...]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """(labels (N, L) int32, label lengths, data lengths, blank) after the checks."""
    t_max, n, a_len = shape
    blank = 0 if p.blank_label == "first" else a_len - 1
    l_max = int(inputs[1].shape[1])
    labels = _as_ints(name, "label", host_copy(ctx, inputs[1]).reshape(n, l_max))
    extra = iter(inputs[2:])
    tlen = np.full(n, t_max, np.int64)
    if p.use_data_lengths:
        tlen = _lengths(name, "data_lengths", host_copy(ctx, next(extra)), t_max)
    if p.use_label_lengths:
        lens = _lengths(name, "label_lengths", host_copy(ctx, next(extra)), l_max)
    else:  # a sequence ends at its first padding value
        padded = np.concatenate([labels == (0 if blank == 0 else -1), np.ones((n, 1), bool)], 1)
        lens = np.argmax(padded, axis=1)
    _check_sequences(name, p.blank_label, a_len, labels, lens, tlen)
    return labels.astype(np.int32), lens.astype(np.int32), tlen.astype(np.int32), blank


# -- compute -----------------------------------------------------------------------------------


@via_float32
def _forward(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    name = attrs.op.name if attrs.op is not None else "CTCLoss"
    p, x = attrs.parsed, inputs[0]
    m_loss, m_grad = req_code(name, req[0]), req_code(name, req[1])
    shape = tuple(int(d) for d in x.shape)
    t_max, n, a_len = shape
    if (m_loss == NULL and m_grad == NULL) or n == 0:
        return
    if a_len == 0:
        raise NNVMError(f"{name}: input 'data' of shape {shape_str(shape)} has no classes")
    labels, lens, tlen, blank = _pack(name, p, ctx, inputs, shape)
    l_max = labels.shape[1]
    s_max = 2 * l_max + 1
    rows, states = t_max * n, n * t_max * s_max
    space = ctx.requested[0].get_space((rows + n + 2 * states,), "float64")
    ends = [int(e) for e in np.cumsum([0, rows, n, states, states])]  # lse, logp, alpha, beta
    lse, logp, alpha, beta = (space[a:b] for a, b in itertools.pairwise(ends))
    lab, lens, tlen = (to_device(ctx, a.reshape(-1)) for a in (labels, lens, tlen))
    if rows:
        ctc_cuda.row_lse(ctx, name, rows, lse, x, n, a_len, tlen)
    loss, grad = flat(outputs[0]), flat(outputs[1])
    sizes = (n, a_len, l_max, s_max, t_max, blank)
    args = (loss, logp, alpha, beta, flat(x), lse, lab, lens, tlen, *sizes, m_grad != NULL)
    if is_gpu(ctx):  # a block per sequence
        ctc_cuda.alpha_beta(ctx, name, n, s_max, *args, m_loss)
    else:
        k.alpha_beta.launch(ctx, n, *args, m_loss, work=states)
    if m_grad != NULL and rows:
        grad_args = (grad, x, lse, alpha, beta, logp, lab, lens, tlen, *sizes, m_grad)
        ctc_cuda.row_grad(ctx, name, rows, a_len, *grad_args)


@via_float32
def _backward(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    dloss, grad = inputs  # the head gradient (N,) and the forward's hidden gradient
    for j in range(1, len(outputs)):  # labels and lengths get no gradient
        _fill.launch(ctx, outputs[j], req[j], 0.0)
    mode = req_code("_backward_ctc_loss", req[0])
    if mode == NULL or grad.size == 0:
        return
    n, a_len = int(grad.shape[1]), int(grad.shape[2])
    args = (outputs[0], grad, dloss, n, a_len, mode)
    run_rows(ctx, "_backward_ctc_loss", k.scale_grad, grad.size, *args)


def _gradient(node: Any, ograds: list[Any]) -> list[Any]:
    return make_grad_node("_backward_ctc_loss", node, [ograds[0], NodeEntry(node, 1)])


(
    register_op("CTCLoss")
    .add_alias("ctc_loss")
    .add_alias("_contrib_CTCLoss")
    .add_alias("_contrib_ctc_loss")
    .describe(
        "Connectionist Temporal Classification Loss: -log p(label | data) per sequence, "
        "for data (sequence_length, batch_size, alphabet_size) of unnormalised activations "
        "and label (batch_size, label_sequence_length). See nnvmpy.ops.nn.ctc for the "
        "blank, padding and length conventions."
    )
    .set_attr_parser(CTCLossParam)
    .set_num_inputs(_num_inputs)
    .set_num_outputs(2)
    .set_attr(FListInputNames, _input_names)
    .set_attr(FListOutputNames, lambda attrs: ["output", "grad"])
    .set_attr(FNumVisibleOutputs, lambda attrs: 1)
    .set_attr(FInferShape, _infer_shape)
    .set_attr(FInferType, _infer_type)
    .set_attr(FResourceRequest, lambda attrs: [ResourceRequest.kTempSpace])
    .set_attr(FCompute_cpu, _forward)
    .set_attr(FCompute_gpu, _forward)
    .set_attr(FGradient, _gradient)
    .add_argument("data", "NDArray-or-Symbol", "Input ndarray")
    .add_argument("label", "NDArray-or-Symbol", "Ground-truth labels for the loss.")
    .add_argument(
        "data_lengths",
        "NDArray-or-Symbol",
        "Lengths of data for each of the samples. Only required when use_data_lengths is true.",
    )
    .add_argument(
        "label_lengths",
        "NDArray-or-Symbol",
        "Lengths of labels for each of the samples. Only required when use_label_lengths is true.",
    )
    .add_arguments(CTCLossParam.fields())
)
(
    register_op("_backward_ctc_loss")
    .describe("Backward of CTCLoss: inputs (head gradient, hidden gradient output).")
    .set_attr_parser(CTCLossParam)
    .set_num_inputs(2)
    .set_num_outputs(_num_inputs)
    .set_attr(TIsBackward, True)
    .set_attr(FCompute_cpu, _backward)
    .set_attr(FCompute_gpu, _backward)
)
