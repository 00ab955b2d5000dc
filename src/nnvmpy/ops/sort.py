"""Sorting along an axis: sort, argsort and topk, with topk's backward op.

    sort(x, axis, is_ascend)                 the values, sorted along axis
    argsort(x, axis, is_ascend, dtype)       positions along axis that sort x
    topk(x, axis, k, ret_typ, is_ascend, dtype)
        the k smallest (is_ascend) or largest elements along axis, in that order:
        ret_typ 'value' | 'indices' | 'both' (value, indices) | 'mask' (1 where selected)
    axis=None sorts the flattened array; k < 1 selects all elements of the axis.

    d x = the output gradient put back where each value came from (_backward_topk);
          indices and masks have zero gradient

sort and topk with ret_typ 'value' have a hidden second output, the int64 positions of
the values, which their backward op reads (as in MXNet). Order: NumPy's (NaN largest);
equal values keep their positions' order in both directions and on both devices (MXNet
leaves ties unspecified).

CPU: NumPy's argsort / argpartition, which beat a hand-written sort (stable kinds where
the order needs it); for 32-bit and smaller dtypes, one unstable SIMD sort of packed
(value key, position) uint64s gives the stable order (_packed_sort); topk with k <= 64
in one pass over each row (_top_rows). GPU: a
bitonic sort per row in scratch memory (_bitonic.py), then one body writes the selected
values, indices or mask.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from .. import kernel, threads
from ..attrs import (
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
from ..base import InferError
from ..graph.grad import make_grad_node, make_zero_grad_nodes
from ..graph.node import Node, NodeEntry
from ..infer import shape_assign, shape_is_known, type_assign
from ..kernel.launch import ADD, NULL, WRITE, flat, is_gpu, normalize_axis, req_code, split_axis
from ..kernel.launch import uindex as uidx
from ..param import Parameter, field
from ..registry import NodeAttrs, register_op
from ..resource import ResourceRequest
from . import _bitonic
from ._index_kernels import assign, half_as_float32, zero

INDEX_DTYPES = ["float16", "float32", "float64", "int32", "int64", "uint8"]
# top_positions keeps up to this many elements a row in one pass (_top_rows) for these
# dtypes, without NaN: 1000 rows of 8192 float32, k = 10, 1.5 ms on two threads where
# argpartition and the tie check took 26 ms (np.argpartition alone: 14)
ROW_PASS_K = 64
ROW_PASS_DTYPES = tuple(np.dtype(t) for t in ("float32", "float64", "int32", "int64"))
_HIDDEN = np.dtype(np.int64)  # dtype of the hidden positions output
# stable_argsort sorts packed (value key, position) uint64s for these dtypes (_packed_sort):
# 1000 rows of 8192 float32 in 19.5 ms on two threads, where NumPy's stable argsort took
# 400 (np.sort of the values alone: 15.6)
PACKED_SORT_DTYPES = tuple(
    np.dtype(t) for t in ("float16", "float32", "int8", "int16", "int32", "uint8", "uint16")
)
# below it NumPy's stable argsort is as fast (1024 float32: packed 5.4 us, NumPy 10.2)
PACKED_SORT_MIN_SIZE = 512
# ... and these through NumPy's unstable argsort of order keys, ties then put in position
# order (_wide_sort), from the same size: 1000 rows of 8192 float64 in 56 ms, where
# NumPy's stable argsort took 423
WIDE_SORT_DTYPES = tuple(np.dtype(t) for t in ("float64", "int64", "uint64"))


class SortParam(Parameter):
    axis = field(
        int,
        default=-1,
        optional=True,
        describe="Axis along which to choose sort the input tensor. If not given, the "
        "flattened array is used. Default is -1.",
    )
    is_ascend = field(
        bool, default=True, describe="Whether to sort in ascending or descending order."
    )


class ArgSortParam(SortParam):
    dtype = field(
        str,
        default="float32",
        enum=INDEX_DTYPES,
        describe="DType of the output indices. It is only valid when ret_typ is 'indices' "
        "or 'both'. An error will be raised if the selected data type cannot precisely "
        "represent the indices.",
    )


class TopKParam(Parameter):
    axis = field(
        int,
        default=-1,
        optional=True,
        describe="Axis along which to choose the top k indices. If not given, the "
        "flattened array is used. Default is -1.",
    )
    k = field(
        int,
        default=1,
        describe="Number of top elements to select, should be always smaller than or equal "
        "to the element number in the given axis. A global sort is performed if set k < 1.",
    )
    ret_typ = field(
        str,
        default="indices",
        enum={"value": 0, "indices": 1, "mask": 2, "both": 3},
        describe='The return type.\n "value" means to return the top k values, "indices" '
        'means to return the indices of the top k values, "mask" means to return a mask '
        'array containing 0 and 1. 1 means the top k values. "both" means to return a list '
        "of both values and indices of top k elements.",
    )
    is_ascend = field(
        bool,
        default=False,
        describe="Whether to choose k largest or k smallest elements. Top K largest "
        "elements will be chosen if set to false.",
    )
    dtype = ArgSortParam.dtype


class Spec(NamedTuple):
    """What one sort / argsort / topk node computes."""

    axis: int | None
    k: int  # < 1: every element of the axis
    ret: str  # 'value', 'indices', 'both' or 'mask'
    ascending: bool
    index_dtype: np.dtype  # of a visible indices output

    @property
    def outputs(self) -> tuple[str, ...]:
        """Output roles: 'value', 'indices' (visible), 'hidden' (int64 positions), 'mask'."""
        return {
            "value": ("value", "hidden"),
            "indices": ("indices",),
            "both": ("value", "indices"),
            "mask": ("mask",),
        }[self.ret]


def spec(attrs: NodeAttrs) -> Spec:
    p = attrs.parsed
    name = attrs.op.name if attrs.op is not None else "topk"
    if name == "sort":
        return Spec(p.axis, 0, "value", p.is_ascend, _HIDDEN)
    if name == "argsort":
        return Spec(p.axis, 0, "indices", p.is_ascend, np.dtype(p.dtype))
    return Spec(p.axis, p.k, p.ret_typ, p.is_ascend, np.dtype(p.dtype))


def _op(attrs: NodeAttrs) -> str:
    return attrs.op.name if attrs.op is not None else "topk"


def _num_outputs(attrs: NodeAttrs) -> int:
    return len(spec(attrs).outputs)


def _num_visible(attrs: NodeAttrs) -> int:
    return 2 if spec(attrs).ret == "both" else 1


def _work_shape(op: str, s: Spec, shape: tuple[Any, ...]) -> tuple[tuple[Any, ...], int]:
    """The shape sorted along and its axis: the flattened array for axis=None."""
    if s.axis is None:
        return ((int(np.prod(shape, dtype=np.int64)) if shape_is_known(shape) else None),), 0
    return tuple(shape), normalize_axis(op, s.axis, shape)


def resolve_k(op: str, s: Spec, n: int | None) -> int | None:
    """k for an axis of n elements (all of them for k < 1); InferError naming 'k'."""
    if s.k < 1:
        return n
    if n is not None and s.k > n:
        raise InferError(
            f"{op}: parameter 'k' is {s.k} but the axis has only {n} elements; expected "
            f"1 <= k <= {n} (or k < 1 for all of them)"
        )
    return s.k


# --- inference -------------------------------------------------------------------------------


def _sort_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    op, s, data = _op(attrs), spec(attrs), in_shapes[0]
    if data is None:
        return False
    work, ax = _work_shape(op, s, data)
    k = resolve_k(op, s, work[ax])
    picked = (*work[:ax], k, *work[ax + 1 :])
    for j, role in enumerate(s.outputs):
        shape_assign(out_shapes, j, data if role == "mask" else picked, f"{op}: output {j}")
    if s.ret == "mask":  # the one output with the input's shape: infer it back
        shape_assign(in_shapes, 0, out_shapes[0], f"{op}: input 'data'")
    return shape_is_known(in_shapes[0])


def _sort_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    s = spec(attrs)
    for j, role in enumerate(s.outputs):
        if role == "hidden":
            type_assign(out_types, j, _HIDDEN, f"{_op(attrs)}: output {j}")
        elif role == "indices":
            type_assign(out_types, j, s.index_dtype, f"{_op(attrs)}: output {j}")
        else:  # values and masks have the data's dtype
            type_assign(out_types, j, in_types[0], f"{_op(attrs)}: output {j}")
            type_assign(in_types, 0, out_types[j], f"{_op(attrs)}: input 'data'")
    return all(t is not None for t in out_types)


# --- CPU: NumPy --------------------------------------------------------------------------------


def stable_argsort(x: np.ndarray, ascending: bool, out: np.ndarray | None = None) -> np.ndarray:
    """Positions sorting x along its last axis; equal values keep their order both ways.
    `out`: a C-contiguous int64 array of x's shape that the packed sort writes into (the
    result may be another array: the caller copies then)."""
    if x.size >= PACKED_SORT_MIN_SIZE:
        if x.dtype in PACKED_SORT_DTYPES and x.shape[-1] < 2**32:
            from nnvmpy.ops import _packed_sort

            return _packed_sort.argsort_rows(x, ascending, out)
        if x.dtype in WIDE_SORT_DTYPES:
            from nnvmpy.ops import _wide_sort

            return _wide_sort.argsort_rows(x, ascending, out)
    if ascending:
        return np.argsort(x, axis=-1, kind="stable")
    # sort the reversed row ascending: equal values come out last-first, so reversing
    # that order gives descending values with equal ones first-first
    rev = np.argsort(x[..., ::-1], axis=-1, kind="stable")[..., ::-1]
    return (x.shape[-1] - 1) - rev


def top_positions(x: np.ndarray, k: int, ascending: bool) -> np.ndarray:
    """int64 positions of the k first elements of each last-axis row of x, in order.

    Equal values come out by position, also those tied at the k-th place: a row where
    argpartition had a choice among them is sorted in full.
    """
    n = x.shape[-1]
    if 4 * k >= n:  # a full sort costs little more than a partition here
        return stable_argsort(x, ascending)[..., :k]
    if k <= ROW_PASS_K and x.dtype in ROW_PASS_DTYPES and x.size and not _has_nan(x):
        return _row_pass(x, k, ascending)
    kth = k - 1 if ascending else n - k
    part = np.argpartition(x, kth, axis=-1)
    part = part[..., :k] if ascending else part[..., n - k :]
    part.sort(axis=-1)  # position order first, so equal values keep it below
    picked = np.take_along_axis(x, part, axis=-1)
    order = stable_argsort(picked, ascending)
    top = np.take_along_axis(part, order, axis=-1)
    # the k-th value: did the row have more elements equal to it than were picked?
    last = np.take_along_axis(picked, order[..., -1:], axis=-1)
    tied = _equal(x, last).sum(axis=-1) != _equal(picked, last).sum(axis=-1)
    if tied.any():
        top[tied] = stable_argsort(x[tied], ascending)[..., :k]
    return top


def _values_at(rows: np.ndarray, pos: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """np.take_along_axis(rows, pos, axis=-1), through _packed_sort's row gather for
    large arrays (NumPy's checks every index: 31 ms for 8M float32, 4 there), written
    into `out` there when given (see _direct)."""
    if pos.size < PACKED_SORT_MIN_SIZE:
        return np.take_along_axis(rows, pos, axis=-1)
    from nnvmpy.ops import _packed_sort

    return _packed_sort.gather_rows(rows, pos, out)


def _direct(out: Any, mode: int, along_last: bool, dtype: np.dtype) -> np.ndarray | None:
    """`out` itself when a result may be computed straight into it rather than copied in:
    a plain write (not in place: the values are gathered from the input), along the last
    axis, into C-contiguous memory of the result's dtype."""
    if mode == WRITE and along_last and out.dtype == dtype and out.flags.c_contiguous:
        return out
    return None


def _has_nan(x: np.ndarray) -> bool:
    """Whether float x holds a NaN: its maximum is NaN (one vectorised pass)."""
    return x.dtype.kind == "f" and bool(np.isnan(x.max()))


def _row_pass(x: np.ndarray, k: int, ascending: bool) -> np.ndarray:
    """top_positions by _top_rows: one pass over each row (numba's threads for large x)."""
    from nnvmpy.ops import _top_rows

    rows = np.ascontiguousarray(x.reshape(-1, x.shape[-1]))
    if x.size < threads.parallel_size() or threads.openmp_forked():
        return _top_rows.top_rows(rows, k, ascending, False).reshape(*x.shape[:-1], k)
    with threads.region():
        return _top_rows.top_rows(rows, k, ascending, True).reshape(*x.shape[:-1], k)


def _equal(x: np.ndarray, v: np.ndarray) -> np.ndarray:
    """x == v, with NaN equal to NaN (NaNs tie with each other in the order)."""
    same = x == v
    if x.dtype.kind == "f":
        same |= np.isnan(x) & np.isnan(v)
    return same


def top_values(x: np.ndarray, k: int, ascending: bool) -> np.ndarray:
    """The k first values of each last-axis row of x, in order (ties need no positions)."""
    n = x.shape[-1]
    if 4 * k >= n:
        ordered = np.sort(x, axis=-1)
        return ordered[..., :k] if ascending else ordered[..., ::-1][..., :k]
    kth = k - 1 if ascending else n - k
    part = np.partition(x, kth, axis=-1)
    part = np.sort(part[..., :k] if ascending else part[..., n - k :], axis=-1)
    return part if ascending else part[..., ::-1]


def _sort_cpu(op: str, s: Spec, data: np.ndarray, outputs: list[Any], modes: list[int]) -> None:
    x = data.reshape(-1) if s.axis is None else data
    ax = 0 if s.axis is None else normalize_axis(op, s.axis, data.shape)
    rows = np.moveaxis(x, ax, -1)
    k = resolve_k(op, s, rows.shape[-1]) or 0
    wanted = {role for role, mode in zip(s.outputs, modes) if mode != NULL}
    if wanted == {"value"} and rows.dtype.kind in "biu":
        # values alone (a hidden output nobody reads) need no positions where ties are
        # the same bits; float ties (-0 and +0, NaNs) keep the stable order's bits
        assign(outputs[0], modes[0], np.moveaxis(top_values(rows, k, s.ascending), -1, ax))
        return
    last = ax == rows.ndim - 1
    pos_out = None
    if k == rows.shape[-1]:  # a full sort: int64 positions straight into their output
        for out, mode, role in zip(outputs, modes, s.outputs):
            if role in ("indices", "hidden"):
                pos_out = _direct(out, mode, last, np.dtype(np.int64))
    if pos_out is not None:
        pos = stable_argsort(rows, s.ascending, pos_out)
    else:
        pos = top_positions(rows, k, s.ascending)
    for out, mode, role in zip(outputs, modes, s.outputs):
        if mode == NULL or (out is pos_out and np.may_share_memory(pos, out)):
            continue  # written already (the packed sort wrote into it)
        if role == "value":
            direct = _direct(out, mode, last, rows.dtype)
            result = _values_at(rows, pos, direct)
            if direct is not None and np.may_share_memory(result, direct):
                continue
        elif role == "mask":
            result = np.zeros(rows.shape, dtype=out.dtype)
            np.put_along_axis(result, pos, 1, axis=-1)
        else:
            result = pos
        assign(out, mode, np.moveaxis(result, -1, ax).reshape(out.shape))


def _sort_gpu(ctx: Any, op: str, s: Spec, data: Any, outputs: list[Any], modes: list[int]) -> None:
    shape = tuple(int(d) for d in data.shape)
    if s.axis is None:
        sizes = (1, int(data.size), 1)
    else:
        sizes = split_axis(shape, normalize_axis(op, s.axis, shape))
    k = resolve_k(op, s, sizes[1]) or 0
    slots = dict(zip(s.outputs, zip(outputs, modes)))
    none = (None, NULL)
    indices = slots.get("indices", slots.get("hidden", none))
    select = (slots.get("value", none), indices, slots.get("mask", none))
    _bitonic.select(ctx, data, sizes, k, s.ascending, *select)


def _sort_forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    op, s = _op(attrs), spec(attrs)
    modes = [req_code(op, r) for r in req]
    if all(m == NULL for m in modes) or inputs[0].size == 0:
        return
    if is_gpu(ctx):
        _sort_gpu(ctx, op, s, inputs[0], outputs, modes)
    else:
        _sort_cpu(op, s, inputs[0], outputs, modes)


# --- backward --------------------------------------------------------------------------------


def _backward_topk(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    """dx = 0, then dx[position of each selected value] += dy (inputs: dy, positions)."""
    (dy, pos), dx = inputs, outputs[0]
    mode = req_code("_backward_topk", req[0])
    if mode == NULL:
        return
    if mode == WRITE:
        zero(ctx, dx)
    if dy.size == 0:
        return
    s = spec(attrs)
    if s.axis is None:
        n, inner = int(dx.size), 1
    else:
        shape = tuple(int(d) for d in dx.shape)
        ax = normalize_axis("_backward_topk", s.axis, shape)
        n, inner = shape[ax], int(np.prod(shape[ax + 1 :]))
    k = int(dy.size) // (int(dx.size) // n) if n else 0
    # dy (outer, k, inner) goes to dx (outer, n, inner) at rows pos: pick_grad over the
    # k-row view of dx sees each (o, p, i) write its own element
    with half_as_float32(ctx, [dx], [ADD], [dy, pos]) as ([d], [g, i]):
        _scatter_selected(ctx, d, g, i, n, inner, k)


@kernel.parallel_for
def _scatter_rows(t, dx, dy, pos, n, inner, k):
    # t = (o, p, i) of dy: dx[o, pos[t], i] += dy[t]; positions in a row are distinct
    o = t // (k * inner)
    i = t % inner
    dx[uidx((o * n + int(pos[t])) * inner + i)] += dy[t]


def _scatter_selected(ctx: Any, dx: Any, dy: Any, pos: Any, n: int, inner: int, k: int) -> None:
    _scatter_rows.launch(ctx, int(dy.size), flat(dx), flat(dy), flat(pos), n, inner, k)


def _sort_grad(node: Node, ograds: list[NodeEntry]) -> list[NodeEntry]:
    s = spec(node.attrs)
    if s.ret not in ("value", "both"):
        return make_zero_grad_nodes(node, ograds)
    # dx = dy put back at the positions the values came from (output 1)
    attrs = {
        "axis": "None" if s.axis is None else str(s.axis),
        "k": str(s.k),
        "ret_typ": "value",
        "is_ascend": str(s.ascending),
    }
    return make_grad_node("_backward_topk", node, [ograds[0], NodeEntry(node, 1)], attrs)


def _output_names(attrs: NodeAttrs) -> list[str]:
    return {"value": ["output", "indices"], "both": ["value", "indices"]}.get(
        spec(attrs).ret, ["output"]
    )


_DESCRIBE = {
    "sort": "Returns a sorted copy of an input array along the given axis.\n\n"
    "Examples::\n\n"
    "    x = [[1, 4], [3, 1]]\n"
    "    sort(x) = [[1, 4], [1, 3]]\n"
    "    sort(x, axis=0) = [[1, 1], [3, 4]]\n"
    "    sort(x, axis=None) = [1, 1, 3, 4]\n"
    "    sort(x, is_ascend=0) = [[4, 1], [3, 1]]",
    "argsort": "Returns the indices that would sort an input array along the given axis.\n\n"
    "Examples::\n\n"
    "    x = [[0.3, 0.2, 0.4], [0.1, 0.3, 0.2]]\n"
    "    argsort(x) = [[1., 0., 2.], [0., 2., 1.]]\n"
    "    argsort(x, axis=0) = [[1., 0., 1.], [0., 1., 0.]]\n"
    "    argsort(x, axis=None) = [3., 1., 5., 0., 4., 2.]",
    "topk": "Returns the indices of the top k elements in an input array along the given "
    "axis (by default). If ret_type is set to 'value' returns the value of top k "
    "elements (instead of indices). In case of ret_type = 'both', both value and index "
    "would be returned. The returned elements will be sorted.\n\n"
    "Examples::\n\n"
    "    x = [[0.3, 0.2, 0.4], [0.1, 0.3, 0.2]]\n"
    "    topk(x) = [[2.], [1.]]\n"
    "    topk(x, ret_typ='value', k=2) = [[0.4, 0.3], [0.3, 0.2]]\n"
    "    topk(x, ret_typ='value', k=2, is_ascend=1) = [[0.2, 0.3], [0.1, 0.2]]\n"
    "    topk(x, axis=0, k=2) = [[0., 1., 0.], [1., 0., 1.]]\n"
    "    topk(x, ret_typ='mask', k=2) = [[1., 0., 1.], [0., 1., 1.]]",
}

for _name, _param in (("sort", SortParam), ("argsort", ArgSortParam), ("topk", TopKParam)):
    (
        register_op(_name)
        .describe(_DESCRIBE[_name])
        .set_attr_parser(_param)
        .set_num_inputs(1)
        .set_num_outputs(_num_outputs)
        .set_attr(FNumVisibleOutputs, _num_visible)
        .set_attr(FListInputNames, lambda attrs: ["data"])
        .set_attr(FListOutputNames, _output_names)
        .set_attr(FInferShape, _sort_shape)
        .set_attr(FInferType, _sort_type)
        .set_attr(FResourceRequest, lambda attrs: [ResourceRequest.kTempSpace])
        .set_attr(FCompute_cpu, _sort_forward)
        .set_attr(FCompute_gpu, _sort_forward)
        .set_attr(FGradient, _sort_grad)
        .add_argument("data", "NDArray-or-Symbol", "The input array")
        .add_arguments(_param.fields())
    )
(
    register_op("_backward_topk")
    .set_attr_parser(TopKParam)
    .set_num_inputs(2)
    .set_num_outputs(1)
    .set_attr(TIsBackward, True)
    .set_attr(FCompute_cpu, _backward_topk)
    .set_attr(FCompute_gpu, _backward_topk)
)
