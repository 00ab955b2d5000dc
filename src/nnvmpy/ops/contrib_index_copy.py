"""index_copy: a copy of an array with some of its rows replaced (nd.contrib / sym.contrib).

`_contrib_index_copy(old_tensor, index_vector, new_tensor)`: the output is old_tensor
with row index_vector[i] (along axis 0) replaced by new_tensor[i]. index_vector is 1-D,
of new_tensor.shape[0] entries of any dtype (floats truncate); new_tensor has old_tensor's
trailing dimensions and at most as many rows. When an index repeats, the last of its rows
wins. An index outside [0, old_tensor.shape[0]) is an error (MXNet drops such rows
silently).

Gradient: old_tensor gets dy with the replaced rows zeroed; new_tensor gets dy of the row
each of its rows landed in (zero for a row a later duplicate overwrote); index_vector
gets zeros. Runs on the host (NumPy); on the GPU through _host_staged.host_compute.
"""

from __future__ import annotations

from typing import Any

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
from ..base import InferError, NNVMError
from ..graph.grad import make_grad_node
from ..infer import shape_assign, shape_is_known, shape_str, type_assign
from ..registry import NodeAttrs, register_op
from ._host_staged import host_compute

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


def _rows(index: np.ndarray, n: int) -> np.ndarray:
    rows = np.asarray(index).astype(np.int64)
    bad = (rows < 0) | (rows >= n)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise NNVMError(
            f"{OP}: index_vector[{i}] = {index[i]} is out of range for 'old_tensor' with {n} rows"
        )
    return rows


def index_copy_np(params: Any, old: np.ndarray, index: np.ndarray, new: np.ndarray) -> list:
    out = old.copy()
    out[_rows(index, old.shape[0])] = new  # NumPy assigns in order: the last duplicate wins
    return [out]


def index_copy_grad_np(params: Any, dy: np.ndarray, index: np.ndarray) -> list:
    rows = _rows(index, dy.shape[0])
    d_old = dy.copy()
    d_old[rows] = 0
    last = np.zeros(len(rows), bool)  # the rows of new_tensor that survive in the output
    seen: set[int] = set()
    for i in range(len(rows) - 1, -1, -1):
        last[i] = int(rows[i]) not in seen
        seen.add(int(rows[i]))
    d_new = dy[rows] * last.reshape((-1,) + (1,) * (dy.ndim - 1))
    return [d_old, np.zeros(index.shape), d_new]


def _index_copy_gradient(node: Any, ograds: list[Any]) -> list[Any]:
    return make_grad_node("_backward_contrib_index_copy", node, [ograds[0], node.inputs[1]])


_forward = host_compute(OP, index_copy_np)
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
_backward = host_compute("_backward_contrib_index_copy", index_copy_grad_np)
(
    register_op("_backward_contrib_index_copy")
    .describe("Backward of index_copy: inputs (dy, index_vector), outputs the 3 input grads.")
    .set_num_inputs(2)
    .set_num_outputs(3)
    .set_attr(TIsBackward, True)
    .set_attr(FCompute_cpu, _backward)
    .set_attr(FCompute_gpu, _backward)
)
