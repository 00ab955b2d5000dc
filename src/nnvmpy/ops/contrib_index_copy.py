"""index_copy: a copy of an array with some of its rows replaced (nd.contrib / sym.contrib).

`_contrib_index_copy(old_tensor, index_vector, new_tensor)`: the output is old_tensor
with row index_vector[i] (along axis 0) replaced by new_tensor[i]. index_vector is 1-D,
of new_tensor.shape[0] entries of any dtype (floats truncate); new_tensor has old_tensor's
trailing dimensions and at most as many rows. When an index repeats, the last of its rows
wins. An index outside [0, old_tensor.shape[0]) is an error (MXNet drops such rows
silently).

Gradient: old_tensor gets dy with the replaced rows zeroed; new_tensor gets dy of the row
each of its rows landed in (zero for a row a later duplicate overwrote); index_vector
gets zeros. Kernels for both devices (kernel.parallel_for), one row per item: the index
is checked on the host, which also finds the row of new_tensor (if any) that replaces
each row, so duplicates need no ordering on the device.
"""

from __future__ import annotations

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
    TIsBackward,
)
from ..base import InferError, NNVMError
from ..graph.grad import make_grad_node
from ..infer import shape_assign, shape_is_known, shape_str, type_assign
from ..kernel import uindex
from ..kernel.launch import NULL, WRITE, flat, is_gpu, req_code, store
from ..registry import NodeAttrs, register_op
from ._host_staged import to_host
from ._index_kernels import half_as_float32, to_ctx, zero

OP = "_contrib_index_copy"
INPUTS = ["old_tensor", "index_vector", "new_tensor"]


def _index_copy_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    shape_assign(in_shapes, 0, out_shapes[0], f"{OP}: input 'old_tensor'")
    shape_assign(out_shapes, 0, in_shapes[0], f"{OP}: output")
    old, index, new = in_shapes
    if index is not None and len(index) != 1:
        raise InferError(
            f"{OP}: input 'index_vector' has shape {shape_str(index)}; expected a 1-D vector"
        )
    for shape, name in ((old, "old_tensor"), (new, "new_tensor")):
        if shape is not None and len(shape) == 0:
            raise InferError(f"{OP}: input {name!r} must have at least one dimension (its rows)")
    if new is not None:
        shape_assign(in_shapes, 1, (new[0],), f"{OP}: input 'index_vector'")
    if old is not None and new is not None:
        if len(old) != len(new):
            raise InferError(
                f"{OP}: 'new_tensor' of shape {shape_str(new)} and 'old_tensor' of shape "
                f"{shape_str(old)} differ in rank"
            )
        if old[0] is not None and new[0] is not None and new[0] > old[0]:
            raise InferError(f"{OP}: 'new_tensor' has {new[0]} rows but 'old_tensor' only {old[0]}")
        shape_assign(in_shapes, 2, (new[0], *old[1:]), f"{OP}: input 'new_tensor'")
        shape_assign(in_shapes, 0, (old[0], *in_shapes[2][1:]), f"{OP}: input 'old_tensor'")
        shape_assign(out_shapes, 0, in_shapes[0], f"{OP}: output")
    return all(shape_is_known(s) for s in [*in_shapes, *out_shapes])


def _index_copy_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    known = next((t for t in (in_types[0], in_types[2], out_types[0]) if t is not None), None)
    if known is None:
        return False
    type_assign(in_types, 0, known, f"{OP}: input 'old_tensor'")
    type_assign(in_types, 2, known, f"{OP}: input 'new_tensor'")
    type_assign(out_types, 0, known, f"{OP}: output")
    return in_types[1] is not None


def _sources(ctx: Any, index: Any, n: int, what: str) -> tuple[np.ndarray, np.ndarray]:
    """(rows, source): index_vector as checked int64 rows (on the host: a GPU's index is
    copied there), and for each of the n rows of old_tensor the row of new_tensor that
    replaces it (the last one naming it), -1 for none."""
    host = to_host(ctx, index) if is_gpu(ctx) else np.asarray(index)
    rows = host.astype(np.int64)
    bad = (rows < 0) | (rows >= n)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise NNVMError(
            f"{what}: index_vector[{i}] = {host[i]} is out of range for 'old_tensor' with {n} rows"
        )
    source = np.full(n, -1, np.int64)
    source[rows] = np.arange(len(rows))  # assigned in order: the last duplicate wins
    return rows, source


@kernel.parallel_for
def _copy_rows(r, old, new, source, width, out, mode):
    """Row r of out: row source[r] of new for a replaced row, else row r of old."""
    base = r * width
    src = source[r]
    if src >= 0:
        for c in range(width):
            store(out, base + c, new[uindex(src * width + c)], mode)
    else:
        for c in range(width):
            store(out, base + c, old[uindex(base + c)], mode)


@kernel.parallel_for
def _old_grad(r, dy, source, width, d_old, mode):
    """Row r of dy, zero for a replaced row."""
    base = r * width
    keep = source[r] < 0
    for c in range(width):
        store(d_old, base + c, dy[uindex(base + c)] if keep else 0, mode)


@kernel.parallel_for
def _new_grad(i, dy, rows, source, width, d_new, mode):
    """Row i of new_tensor gets dy's row rows[i] if it is the one that landed there."""
    r = rows[i]
    landed = source[r] == i
    for c in range(width):
        store(d_new, i * width + c, dy[uindex(r * width + c)] if landed else 0, mode)


def _forward(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    mode = req_code(OP, req[0])
    old, index, new = inputs
    out = outputs[0]
    _, source = _sources(ctx, index, old.shape[0], OP)
    if mode == NULL or out.size == 0:
        return
    width = out.size // out.shape[0]
    with half_as_float32(ctx, [out], [mode], [old, new]) as ([o], [a, b]):
        _copy_rows.launch(ctx, out.shape[0], flat(a), flat(b), to_ctx(ctx, source), width,
                          flat(o), mode, work=out.size)  # fmt: skip


def _backward(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    """(dy, index_vector) -> (d old_tensor, d index_vector = 0, d new_tensor)."""
    name = "_backward_contrib_index_copy"
    modes = [req_code(name, r) for r in req]
    dy, index = inputs
    rows, source = _sources(ctx, index, dy.shape[0], name)
    if modes[1] == WRITE:
        zero(ctx, outputs[1])
    if dy.size == 0:
        for grad, mode in zip(outputs[::2], modes[::2]):
            if mode == WRITE:
                zero(ctx, grad)
        return
    width = dy.size // dy.shape[0]
    d_old, d_new = outputs[0], outputs[2]
    with half_as_float32(ctx, [d_old, d_new], modes[::2], [dy]) as ([g_old, g_new], [g]):
        table = to_ctx(ctx, source)
        if modes[0] != NULL:
            _old_grad.launch(ctx, dy.shape[0], flat(g), table, width, flat(g_old), modes[0],
                             work=dy.size)  # fmt: skip
        if modes[2] != NULL and d_new.size:
            _new_grad.launch(ctx, len(rows), flat(g), to_ctx(ctx, rows), table, width,
                             flat(g_new), modes[2], work=d_new.size)  # fmt: skip


def _index_copy_gradient(node: Any, ograds: list[Any]) -> list[Any]:
    return make_grad_node("_backward_contrib_index_copy", node, [ograds[0], node.inputs[1]])


(
    register_op(OP)
    .describe(
        "Copies the elements of a `new_tensor` into the `old_tensor`.\n\n"
        "This operator copies the elements by selecting the indices in the order given in "
        "`index`. The output will be a new tensor containing the rest elements of old "
        "tensor and the copied elements of new tensor. For example, if `index[i] == j`, "
        "then the `i` th row of `new_tensor` is copied to the `j` th row of output.\n\n"
        "The `index` must be a vector and it must have the same size with the `0` th "
        "dimension of `new_tensor`. Also, the `0` th dimension of old_tensor must `>=` the "
        "`0` th dimension of `new_tensor`, or an error will be raised.\n\n"
        "Examples::\n\n"
        "    x = mx.nd.zeros((5,3))\n"
        "    t = mx.nd.array([[1,2,3],[4,5,6],[7,8,9]])\n"
        "    index = mx.nd.array([0,4,2])\n\n"
        "    mx.nd.contrib.index_copy(x, index, t)\n\n"
        "    [[1. 2. 3.]\n"
        "     [0. 0. 0.]\n"
        "     [7. 8. 9.]\n"
        "     [0. 0. 0.]\n"
        "     [4. 5. 6.]]\n"
    )
    .set_num_inputs(3)
    .set_num_outputs(1)
    .set_attr(FListInputNames, lambda attrs: list(INPUTS))
    .set_attr(FInferShape, _index_copy_shape)
    .set_attr(FInferType, _index_copy_type)
    .set_attr(FCompute_cpu, _forward)
    .set_attr(FCompute_gpu, _forward)
    .set_attr(FGradient, _index_copy_gradient)
    .add_argument("old_tensor", "NDArray-or-Symbol", "Old tensor")
    .add_argument("index_vector", "NDArray-or-Symbol", "Index vector")
    .add_argument("new_tensor", "NDArray-or-Symbol", "New tensor to be copied")
)
(
    register_op("_backward_contrib_index_copy")
    .describe("Backward of index_copy: inputs (dy, index_vector), outputs the 3 input grads.")
    .set_num_inputs(2)
    .set_num_outputs(3)
    .set_attr(TIsBackward, True)
    .set_attr(FCompute_cpu, _backward)
    .set_attr(FCompute_gpu, _backward)
)
