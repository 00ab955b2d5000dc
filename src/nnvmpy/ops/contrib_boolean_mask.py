"""boolean_mask: the slices of an array where a 1-D mask is non-zero (nd.contrib / sym.contrib).

`_contrib_boolean_mask(data, index, axis=0)`: index is 1-D with data.shape[axis] entries
of any dtype; the output keeps, in order, the slices of data along `axis` whose index
entry is non-zero. MXNet 1.x supports axis=0 only; any axis works here.

The output's length along `axis` is the number of non-zero entries, which only the
mask's values tell (MXNet's dynamic-shape ops). Imperatively, FInferDynamicShape reads
the mask (waiting for it) and invoke allocates the output from that. Symbolically the
output shape stays unknown, as in MXNet: infer_shape leaves it unknown and binding a
graph with this node fails, with an error naming the op and why.

Gradient: dy goes back to the kept slices, zero elsewhere; index gets zeros.

The CPU runs NumPy (np.take and a slice assignment: a copy, nothing to gain from a
kernel). On a GPU nothing but one count leaves the device: a block-wise scan of the
mask gives each kept slice its position (count per block of BLOCK entries, one item
scanning the block totals, then the positions within each block), and element kernels
copy the kept slices forward and route dy back. The total the scan finds is read back
and checked against the output (or dy) length before anything is written, so a wrong
shape raises a named error instead of writing out of bounds.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import kernel
from ..attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferDynamicShape,
    FInferShape,
    FInferType,
    FListInputNames,
    TIsBackward,
)
from ..base import InferError, NNVMError
from ..graph.grad import make_grad_node
from ..infer import shape_str, type_assign
from ..kernel.launch import ADD, NULL, flat, is_gpu, req_code, run_rows, split_axis, store, uindex
from ..param import Parameter, field
from ..registry import NodeAttrs, register_op
from ._host_staged import to_host
from ._index_kernels import assign, device_empty
from .gather_scatter import as_kernel_dtype, rows_fit

OP = "_contrib_boolean_mask"
BACKWARD = "_backward_contrib_boolean_mask"
INPUTS = ["data", "index"]


class BooleanMaskParam(Parameter):
    axis = field(
        int, default=0, describe="An integer that represents the axis in NDArray to mask from."
    )


def _axis(axis: int, ndim: int, data_shape: Any) -> int:
    if not -ndim <= axis < ndim:
        raise InferError(
            f"{OP}: axis {axis} is out of range for input 'data' of shape {shape_str(data_shape)}"
        )
    return axis % ndim


def _boolean_mask_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    """Checks data against index; the output shape needs the mask's values (stays unknown)."""
    data, index = in_shapes
    if index is not None and len(index) != 1:
        raise InferError(f"{OP}: input 'index' has shape {shape_str(index)}; expected a 1-D mask")
    if data is not None:
        if len(data) == 0:
            raise InferError(f"{OP}: input 'data' must have at least one dimension")
        axis = _axis(attrs.parsed.axis, len(data), data)
        n = data[axis]
        if index is not None and n is not None and index[0] is not None and index[0] != n:
            raise InferError(
                f"{OP}: input 'index' has shape {shape_str(index)}; expected a 1-D mask of "
                f"{n} entries (data.shape[{attrs.parsed.axis}] of data of shape {shape_str(data)})"
            )
    return False


def _boolean_mask_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    known = in_types[0] if in_types[0] is not None else out_types[0]
    if known is None:
        return False
    type_assign(in_types, 0, known, f"{OP}: input 'data'")
    type_assign(out_types, 0, known, f"{OP}: output")
    return in_types[1] is not None


def _kept(index: np.ndarray) -> np.ndarray:
    return np.flatnonzero(np.asarray(index).reshape(-1) != 0)


def _boolean_mask_dynamic_shape(attrs: NodeAttrs, inputs: list[Any]) -> list[tuple[int, ...]]:
    """The output shape from the mask's values (waits for the mask)."""
    data, index = inputs
    axis = attrs.parsed.axis % len(data.shape)
    shape = list(data.shape)
    shape[axis] = len(_kept(index.asnumpy()))
    return [tuple(shape)]


def boolean_mask_np(params: Any, data: np.ndarray, index: np.ndarray) -> list[np.ndarray]:
    return [np.take(data, _kept(index), axis=params.axis % data.ndim)]


def boolean_mask_grad_np(params: Any, dy: np.ndarray, index: np.ndarray) -> list[np.ndarray]:
    axis = params.axis % dy.ndim
    kept = _kept(index)
    if dy.shape[axis] != len(kept):
        raise NNVMError(
            f"{BACKWARD}: the output gradient has {dy.shape[axis]} slices along axis "
            f"{params.axis}; the mask keeps {len(kept)}"
        )
    shape = list(dy.shape)
    shape[axis] = index.shape[0]
    d_data = np.zeros(shape, dy.dtype)
    where: list[Any] = [slice(None)] * dy.ndim
    where[axis] = kept
    d_data[tuple(where)] = dy
    return [d_data, np.zeros(index.shape, index.dtype)]


def _boolean_mask_gradient(node: Any, ograds: list[Any]) -> list[Any]:
    return make_grad_node(BACKWARD, node, [ograds[0], node.inputs[1]])


# -- the GPU's kernels ---------------------------------------------------------------------

BLOCK = 1024  # mask entries per scan item


@kernel.parallel_for
def _count_blocks(b, counts, index, n, block):
    """counts[b] = the non-zero entries of block b of the mask."""
    lo = b * block
    hi = min(lo + block, n)
    c = 0
    for i in range(lo, hi):
        if index[i] != 0:
            c += 1
    counts[b] = c


@kernel.parallel_for
def _scan_blocks(item, counts, nblocks):
    """One item: counts (nblocks + 1 entries) to the exclusive prefix sums, the total last."""
    total = 0
    for b in range(nblocks):
        c = counts[b]
        counts[b] = total
        total += c
    counts[nblocks] = total


@kernel.parallel_for
def _block_positions(b, pos, counts, index, n, block):
    """pos[i] = the output slice of mask entry i, or -1 where it is zero."""
    lo = b * block
    hi = min(lo + block, n)
    p = counts[b]
    for i in range(lo, hi):
        if index[i] != 0:
            pos[i] = p
            p += 1
        else:
            pos[i] = -1


@kernel.device_function
def _kept_at(e, pos, n, k, inner):
    """Where element e of data (outer, n, inner) sits in the kept (outer, k, inner), or -1
    when its slice is not kept."""
    r = e // inner
    o = r // n
    j = pos[r - o * n]
    return (o * k + j) * inner + (e - r * inner) if j >= 0 else -1


@kernel.parallel_for
def _gather_kept(e, out, data, pos, n, k, inner, mode):
    """Data element e to its place in out."""
    at = _kept_at(e, pos, n, k, inner)
    if at >= 0:
        store(out, at, data[uindex(e)], mode)


@kernel.parallel_for
def _route_grad(e, d_data, dy, pos, n, k, inner, mode):
    """d_data element e: its kept slice's gradient, or zero."""
    at = _kept_at(e, pos, n, k, inner)
    if at >= 0:
        store(d_data, e, dy[uindex(at)], mode)
    else:
        store(d_data, e, 0, mode)


@kernel.parallel_for
def _fill_zero(i, out, mode):
    store(out, i, 0, mode)


def _device_positions(ctx: Any, index: Any) -> tuple[Any, int]:
    """(per mask entry its output slice or -1, the number kept) on the mask's device."""
    n = int(index.size)
    nblocks = -(-n // BLOCK)
    counts = device_empty(ctx, nblocks + 1, np.int64)
    pos = device_empty(ctx, n, np.int64)
    mask = flat(index)
    if n:
        run_rows(ctx, OP, _count_blocks, nblocks, counts, mask, n, BLOCK)
    run_rows(ctx, OP, _scan_blocks, 1, counts, nblocks)
    if n:
        run_rows(ctx, OP, _block_positions, nblocks, pos, counts, mask, n, BLOCK)
    return pos, int(to_host(ctx, counts[nblocks:])[0])


def _check_kept(name: str, what: str, got: int, kept: int, axis: int) -> None:
    if got != kept:
        raise NNVMError(f"{name}: {what} has {got} slices along axis {axis}; the mask keeps {kept}")


def _slices_cpu(
    name: str, out: np.ndarray, mode: int, src: np.ndarray, index: np.ndarray, axis: int,
    what: str, axis_param: int,
) -> bool:  # fmt: skip
    """out (+)= src's kept slices (boolean_mask, src the data) or src's slices put back
    in place with zeros between them (its gradient, src dy), whole slices at a time by
    _gather_nd_cpu.gather_rows; False (nothing done) where those loops do not serve."""
    add = mode == ADD
    if mode == NULL or not rows_fit(out, src, add):
        return mode == NULL
    forward = name == OP
    data_shape = src.shape if forward else out.shape
    outer, n, inner = split_axis(data_shape, axis)
    kept = _kept(index)
    _check_kept(name, what, int((out if forward else src).shape[axis]), kept.size, axis_param)
    if forward:  # out row (o, j) reads data row (o, kept[j])
        rows = np.arange(outer)[:, None] * n + kept[None, :]
    else:  # d_data row (o, i) reads dy row (o, its place among the kept), or zeros
        place = np.full(n, -1, np.int64)
        place[kept] = np.arange(kept.size)
        rows = np.where(place >= 0, np.arange(outer)[:, None] * kept.size + place, -1)
    from nnvmpy.ops import _gather_nd_cpu

    dst, values = as_kernel_dtype(out, src, add)
    _gather_nd_cpu.gather_rows(dst, values, rows.reshape(-1).astype(np.int64), inner, add)
    return True


def _forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    mode = req_code(OP, req[0])
    if mode == NULL:
        return
    data, index = inputs
    out = outputs[0]
    axis = attrs.parsed.axis % len(data.shape)
    if not is_gpu(ctx):
        if not _slices_cpu(OP, out, mode, data, index, axis, "the output", attrs.parsed.axis):
            assign(out, mode, boolean_mask_np(attrs.parsed, data, index)[0])
        return
    _, n, inner = split_axis(data.shape, axis)
    pos, kept = _device_positions(ctx, index)
    _check_kept(OP, "the output", int(out.shape[axis]), kept, attrs.parsed.axis)
    if data.size:
        run_rows(ctx, OP, _gather_kept, int(data.size), out, data, pos, n, kept, inner, mode)


(
    register_op(OP)
    .describe(
        "The slices of data along `axis` whose entry in the 1-d index is non-zero, in "
        "order: the output's length along axis is the number of non-zero entries, so "
        "its shape depends on index's values.\n\n"
        "The output shape is known only once index is computed, so the op runs "
        "imperatively (nd.contrib.boolean_mask); a bound symbol graph cannot plan memory "
        "for it, as in MXNet.\n\n"
        "Example::\n\n"
        "    data = mx.nd.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]])\n"
        "    index = mx.nd.array([0, 1, 0])\n"
        "    mx.nd.contrib.boolean_mask(data, index)\n"
        "    [[4. 5. 6.]]\n"
    )
    .set_attr_parser(BooleanMaskParam)
    .set_num_inputs(2)
    .set_num_outputs(1)
    .set_attr(FListInputNames, lambda attrs: list(INPUTS))
    .set_attr(FInferShape, _boolean_mask_shape)
    .set_attr(FInferDynamicShape, _boolean_mask_dynamic_shape)
    .set_attr(FInferType, _boolean_mask_type)
    .set_attr(FCompute_cpu, _forward)
    .set_attr(FCompute_gpu, _forward)
    .set_attr(FGradient, _boolean_mask_gradient)
    .add_argument("data", "NDArray-or-Symbol", "Data")
    .add_argument("index", "NDArray-or-Symbol", "Mask")
    .add_arguments(BooleanMaskParam.fields())
)


def _backward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    dy, index = inputs
    d_data, d_index = outputs
    modes = [req_code(BACKWARD, r) for r in req]
    if not is_gpu(ctx):
        axis = attrs.parsed.axis % len(dy.shape)
        grad = "the output gradient"
        if _slices_cpu(BACKWARD, d_data, modes[0], dy, index, axis, grad, attrs.parsed.axis):
            assign(d_index, modes[1], 0)
            return
        for out, mode, res in zip(outputs, modes, boolean_mask_grad_np(attrs.parsed, dy, index)):
            assign(out, mode, res)
        return
    if d_index.size and modes[1] != NULL:
        run_rows(ctx, BACKWARD, _fill_zero, int(d_index.size), d_index, modes[1])
    if modes[0] == NULL or d_data.size == 0:
        return
    axis = attrs.parsed.axis % len(dy.shape)
    _, n, inner = split_axis(d_data.shape, axis)
    pos, kept = _device_positions(ctx, index)
    _check_kept(BACKWARD, "the output gradient", int(dy.shape[axis]), kept, attrs.parsed.axis)
    run_rows(ctx, BACKWARD, _route_grad, int(d_data.size), d_data, dy, pos, n, kept, inner,
             modes[0])  # fmt: skip


(
    register_op(BACKWARD)
    .describe("Backward of boolean_mask: inputs (dy, index), outputs (d_data, d_index).")
    .set_attr_parser(BooleanMaskParam)
    .set_num_inputs(2)
    .set_num_outputs(2)
    .set_attr(TIsBackward, True)
    .set_attr(FCompute_cpu, _backward)
    .set_attr(FCompute_gpu, _backward)
)
