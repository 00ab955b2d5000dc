"""Sequence ops on padded batches: SequenceLast, SequenceMask, SequenceReverse.

data holds a batch of sequences, the time axis `axis` (0: (T, N, ...), 1: (N, T, ...));
with use_sequence_length the second input `sequence_length` (N,) gives each sequence's
length (cast to int, as MXNet does), otherwise every sequence is T long.

    SequenceLast    out[b]    = data[len_b - 1, b]          shape: data without `axis`
    SequenceMask    out[t, b] = data[t, b] if t < len_b else value
    SequenceReverse out[t, b] = data[len_b - 1 - t, b] if t < len_b else data[t, b]

Each gradient is the same map applied backwards (the reverse is its own inverse, the mask
zeroes the padding, the last step scatters into position len_b - 1); sequence_length
gets a zero gradient. Lengths are checked on the host (a copy on the GPU): out of
[1, T] for SequenceLast, [0, T] for the others, is a named error. One work item per
element; the time and batch index of flat element i are (i // st) % T and (i // sb) % N.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FInplaceOption,
    FListInputNames,
    TIsBackward,
)
from ..base import InferError, NNVMError
from ..graph.grad import make_grad_node
from ..infer import shape_assign, shape_is_known, shape_str, type_assign
from ..kernel import parallel_for
from ..kernel.launch import NULL, is_gpu, req_code, run_rows, store, uindex
from ..param import Parameter, field
from ..registry import NodeAttrs, register_op
from .init import _fill
from .nn._layer_util import host_copy, via_float32


class SequenceLastParam(Parameter):
    use_sequence_length = field(
        bool,
        default=False,
        describe="If set to true, this layer takes in an extra input parameter "
        "`sequence_length` to specify variable length sequence",
    )
    axis = field(
        int,
        default=0,
        lower_bound=0,
        upper_bound=1,
        describe="The sequence axis. Only values of 0 and 1 are currently supported.",
    )


class SequenceMaskParam(SequenceLastParam):
    field_order = (
        "use_sequence_length",
        "value",
        "axis",
    )  # MXNet's argument order
    value = field(float, default=0.0, describe="The value to be used as a mask.")


class SequenceReverseParam(SequenceLastParam):
    pass


# -- layout ------------------------------------------------------------------------------------


def _layout(shape: tuple[int, ...], axis: int) -> tuple[int, int, int, int, int]:
    """(T, N, R, st, sb): sequence length, batch, trailing size and the two strides."""
    shape = tuple(shape)  # the CUDA simulator's shapes do not slice
    rest = math.prod(shape[2:])
    if axis == 0:
        t, n = shape[0], shape[1]
        return t, n, rest, n * rest, rest
    n, t = shape[0], shape[1]
    return t, n, rest, rest, t * rest


def _batch_dim(axis: int) -> int:
    return 1 - axis


def _checked_lengths(ctx: Any, name: str, lengths: Any, t: int, low: int) -> None:
    """NNVMError unless every sequence length is in [low, t] (after the cast to int)."""
    values = host_copy(ctx, lengths).reshape(-1)
    with np.errstate(invalid="ignore"):
        bad = np.flatnonzero(~((values >= low) & (values < t + 1)))
    if bad.size:
        i = int(bad[0])
        raise NNVMError(
            f"{name}: sequence_length[{i}] = {values[i]} is out of range for a sequence "
            f"axis of size {t}; expected {low} <= sequence_length <= {t}"
        )


# -- kernels -----------------------------------------------------------------------------------


@parallel_for
def _mask_item(j, out, x, lens, t_len, n, rest, st, sb, use_len, value, mode, chunk, nchunk):
    """out = x before each sequence's end, `value` after it (dx = dy masked, value 0).
    Item j: elements [z0, z1) of the j // nchunk-th run of `rest` elements of one step of
    one sequence (the CPU: the whole run, its step and length found once; the GPU: one
    element)."""
    r = j // nchunk
    z0 = (j - r * nchunk) * chunk
    start = r * rest
    t = (start // st) % t_len
    keep = True
    if use_len:
        keep = t < int(lens[(start // sb) % n])
    end = start + min(z0 + chunk, rest)
    if keep:
        for i in range(start + z0, end):
            store(out, i, x[uindex(i)], mode)
    else:
        for i in range(start + z0, end):
            store(out, i, value, mode)


@parallel_for
def _reverse_item(j, out, x, lens, t_len, n, rest, st, sb, use_len, mode, chunk, nchunk):
    """out[t] = x[len - 1 - t] inside each sequence; its own inverse, so also dx from dy.
    Items as _mask_item's: a run of trailing elements (CPU) or one element (GPU)."""
    r = j // nchunk
    z0 = (j - r * nchunk) * chunk
    start = r * rest
    t = (start // st) % t_len
    length = t_len
    if use_len:
        length = int(lens[(start // sb) % n])
    shift = 0
    if t < length:
        shift = (length - 1 - 2 * t) * st
    for i in range(start + z0, start + min(z0 + chunk, rest)):
        store(out, i, x[uindex(i + shift)], mode)


@parallel_for
def _last_item(j, out, x, lens, t_len, rest, st, sb, use_len, mode):
    """out[b, r] = x[len_b - 1, b, r]: one item per output element."""
    b = j // rest
    length = t_len
    if use_len:
        length = int(lens[b])
    store(out, j, x[(length - 1) * st + b * sb + (j - b * rest)], mode)


@parallel_for
def _last_grad_item(j, dx, dy, lens, t_len, n, rest, st, sb, use_len, mode, chunk, nchunk):
    """dx[t, b, r] = dy[b, r] where t is the last step of sequence b, else 0. Items as
    _mask_item's: a run of trailing elements (CPU, its step and length found once) or
    one element (GPU)."""
    r = j // nchunk
    z0 = (j - r * nchunk) * chunk
    start = r * rest
    t = (start // st) % t_len
    b = (start // sb) % n
    length = t_len
    if use_len:
        length = int(lens[b])
    end = start + min(z0 + chunk, rest)
    if t == length - 1:
        src = b * rest - start
        for i in range(start + z0, end):
            store(dx, i, dy[uindex(src + i)], mode)
    else:
        for i in range(start + z0, end):
            store(dx, i, 0.0, mode)


# -- shape and type ----------------------------------------------------------------------------


def _infer_shape(name: str) -> Any:
    def infer(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
        axis = attrs.parsed.axis
        what_in, what_out = f"{name}: input 'data'", f"{name}: output 'output'"
        if name == "SequenceLast":  # the output is the data without its time axis
            data = in_shapes[0]
            if data is not None:
                _check_rank(name, data)
                shape_assign(out_shapes, 0, data[:axis] + data[axis + 1 :], what_out)
            out = out_shapes[0]
            if out is not None:
                shape_assign(in_shapes, 0, (*out[:axis], None, *out[axis:]), what_in)
            if in_shapes[0] is not None and in_shapes[0][axis] == 0:
                raise InferError(f"{what_in} of shape {shape_str(in_shapes[0])} has no steps")
        else:  # the output has the data's shape
            shape_assign(in_shapes, 0, out_shapes[0], what_in)
            shape_assign(out_shapes, 0, in_shapes[0], what_out)
            if in_shapes[0] is not None:
                _check_rank(name, in_shapes[0])
        data = in_shapes[0]
        if attrs.parsed.use_sequence_length and data is not None:
            batch = data[_batch_dim(axis)]
            shape_assign(in_shapes, 1, (batch,), f"{name}: input 'sequence_length'")
        return all(shape_is_known(s) for s in [*in_shapes, *out_shapes])

    return infer


def _check_rank(name: str, data: tuple[Any, ...]) -> None:
    if len(data) < 2:
        raise InferError(
            f"{name}: input 'data' has shape {shape_str(data)}, but it must have at least "
            "2 dimensions (time and batch)"
        )


def _infer_type(name: str) -> Any:
    def infer(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
        type_assign(in_types, 0, out_types[0], f"{name}: input 'data'")
        type_assign(out_types, 0, in_types[0], f"{name}: output 'output'")
        if len(in_types) > 1 and in_types[1] is None:  # lengths: int or float, data's by default
            type_assign(in_types, 1, in_types[0])
        return all(t is not None for t in [*in_types, *out_types])

    return infer


# -- compute -----------------------------------------------------------------------------------


def _lengths(ctx: Any, name: str, p: Any, inputs: list[Any], t: int, low: int) -> tuple[Any, bool]:
    """(the lengths array, True) after the range check, or (a stand-in, False)."""
    if not p.use_sequence_length:
        return inputs[0], False  # never read: the kernels take the use_len flag
    _checked_lengths(ctx, name, inputs[1], t, low)
    return inputs[1], True


@via_float32
def _mask_forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
):
    p, x = attrs.parsed, inputs[0]
    mode = req_code("SequenceMask", req[0])
    if mode == NULL or x.size == 0:
        return
    lens, use = _lengths(ctx, "SequenceMask", p, inputs, x.shape[p.axis], 0)
    _run_mask(ctx, "SequenceMask", outputs[0], x, lens, p.axis, use, p.value, mode)


def _run_mask(
    ctx: Any, name: str, out: Any, x: Any, lens: Any, axis: int, use: bool, value: float, mode: int
) -> None:
    """_mask_item over x: an item per run of trailing elements on the CPU, per element on
    the GPU (its threads then read and write adjacent memory)."""
    t, n, rest, st, sb = _layout(x.shape, axis)
    spans = rest if is_gpu(ctx) else 1  # items per run
    args = (out, x, lens, t, n, rest, st, sb, use, float(value), mode, rest // spans, spans)
    run_rows(ctx, name, _mask_item, x.size // rest * spans, *args)


@via_float32
def _mask_backward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
):
    p, dy = attrs.parsed, inputs[0]  # inputs: (dy[, sequence_length])
    if p.use_sequence_length:
        _fill.launch(ctx, outputs[1], req[1], 0.0)
    mode = req_code("_backward_SequenceMask", req[0])
    if mode == NULL or dy.size == 0:
        return
    name = "_backward_SequenceMask"
    lens, use = _lengths(ctx, name, p, inputs, dy.shape[p.axis], 0)
    _run_mask(ctx, name, outputs[0], dy, lens, p.axis, use, 0.0, mode)


def _reverse_compute(name: str, zero_length_grad: bool) -> Any:
    @via_float32
    def compute(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
        p, x = attrs.parsed, inputs[0]
        if zero_length_grad and p.use_sequence_length:
            _fill.launch(ctx, outputs[1], req[1], 0.0)
        mode = req_code(name, req[0])
        if mode == NULL or x.size == 0:
            return
        t, n, rest, st, sb = _layout(x.shape, p.axis)
        lens, use = _lengths(ctx, name, p, inputs, t, 0)
        spans = rest if is_gpu(ctx) else 1  # items per run
        args = (outputs[0], x, lens, t, n, rest, st, sb, use, mode, rest // spans, spans)
        run_rows(ctx, name, _reverse_item, x.size // rest * spans, *args)

    return compute


@via_float32
def _last_forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
):
    p, x, out = attrs.parsed, inputs[0], outputs[0]
    mode = req_code("SequenceLast", req[0])
    if mode == NULL or out.size == 0:
        return
    t, _, rest, st, sb = _layout(x.shape, p.axis)
    lens, use = _lengths(ctx, "SequenceLast", p, inputs, t, 1)
    run_rows(ctx, "SequenceLast", _last_item, out.size, out, x, lens, t, rest, st, sb, use, mode)


@via_float32
def _last_backward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
):
    p, dy, dx = attrs.parsed, inputs[0], outputs[0]  # inputs: (dy[, sequence_length])
    name = "_backward_SequenceLast"
    if p.use_sequence_length:
        _fill.launch(ctx, outputs[1], req[1], 0.0)
    mode = req_code(name, req[0])
    if mode == NULL or dx.size == 0:
        return
    t, n, rest, st, sb = _layout(dx.shape, p.axis)
    lens, use = _lengths(ctx, name, p, inputs, t, 1)
    spans = rest if is_gpu(ctx) else 1  # items per run
    args = (dx, dy, lens, t, n, rest, st, sb, use, mode, rest // spans, spans)
    run_rows(ctx, name, _last_grad_item, dx.size // rest * spans, *args)


# -- registration ------------------------------------------------------------------------------


def _input_names(attrs: NodeAttrs) -> list[str]:
    return ["data", "sequence_length"] if attrs.parsed.use_sequence_length else ["data"]


def _num_inputs(attrs: NodeAttrs) -> int:
    return 2 if attrs.parsed.use_sequence_length else 1


def _inplace_option(pairs: list[tuple[int, int]]) -> Callable[[NodeAttrs], list[tuple[int, int]]]:
    def inplace_option(attrs: NodeAttrs) -> list[tuple[int, int]]:
        return list(pairs)

    return inplace_option


def _gradient(name: str) -> Any:
    def gradient(node: Any, ograds: list[Any]) -> list[Any]:
        heads = [ograds[0], *node.inputs[1:]]  # (dy[, sequence_length])
        return make_grad_node(f"_backward_{name}", node, heads)

    return gradient


_OPS = {
    "SequenceLast": (
        SequenceLastParam,
        _last_forward,
        _last_backward,
        [],
        "Takes the last element of a sequence: data (T, N, ...) with axis=0, or (N, T, ...) "
        "with axis=1, gives (N, ...). With use_sequence_length, sequence b's last element "
        "is at step sequence_length[b] - 1 (lengths must be in [1, T]).",
    ),
    "SequenceMask": (
        SequenceMaskParam,
        _mask_forward,
        _mask_backward,
        [(0, 0)],
        "Sets all elements outside the sequence to a constant value: with "
        "use_sequence_length, the steps t >= sequence_length[b] of sequence b become "
        "`value` (lengths in [0, T]); without it the data is returned unchanged.",
    ),
    "SequenceReverse": (
        SequenceReverseParam,
        _reverse_compute("SequenceReverse", False),
        _reverse_compute("_backward_SequenceReverse", True),
        [],
        "Reverses the elements of each sequence: with use_sequence_length only the first "
        "sequence_length[b] steps of sequence b are reversed (lengths in [0, T]), the "
        "padding after them stays in place.",
    ),
}

for _name, (_param, _fwd, _bwd, _inplace, _doc) in _OPS.items():
    (
        register_op(_name)
        .describe(_doc)
        .set_attr_parser(_param)
        .set_num_inputs(_num_inputs)
        .set_num_outputs(1)
        .set_attr(FListInputNames, _input_names)
        .set_attr(FInferShape, _infer_shape(_name))
        .set_attr(FInferType, _infer_type(_name))
        .set_attr(FInplaceOption, _inplace_option(_inplace))
        .set_attr(FCompute_cpu, _fwd)
        .set_attr(FCompute_gpu, _fwd)
        .set_attr(FGradient, _gradient(_name))
        .add_argument(
            "data",
            "NDArray-or-Symbol",
            "n-dimensional input array of the form "
            "[max_sequence_length, batch_size, other dims] (axis=0)",
        )
        .add_argument(
            "sequence_length",
            "NDArray-or-Symbol",
            "vector of sequence lengths of the form [batch_size]",
        )
        .add_arguments(_param.fields())
    )
    (
        register_op(f"_backward_{_name}")
        .describe(f"Backward of {_name}: inputs (dy[, sequence_length]).")
        .set_attr_parser(_param)
        .set_num_inputs(_num_inputs)
        .set_num_outputs(_num_inputs)
        .set_attr(TIsBackward, True)
        .set_attr(FInplaceOption, _inplace_option(_inplace))
        .set_attr(FCompute_cpu, _bwd)
        .set_attr(FCompute_gpu, _bwd)
    )
