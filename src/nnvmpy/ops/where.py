"""Element-wise selection: where(condition, x, y), with its backward op.

    out[i] = x[i] if condition[i] != 0 else y[i]

condition has x's shape, or is 1-D with one entry per first-axis slice of x
(out[r, ...] = x[r, ...] if condition[r] else y[r, ...]). x, y and out share shape and
dtype; condition may have any dtype.

    d x = dy where condition, else 0;   d y = dy where not condition;   d condition = 0
"""

from __future__ import annotations

from typing import Any

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
from ..base import InferError
from ..graph.grad import make_grad_node
from ..graph.node import Node, NodeEntry
from ..infer import shape_assign, shape_is_known, shape_str, type_assign
from ..kernel.launch import NULL, WRITE, flat, req_code
from ..registry import NodeAttrs, register_op
from ._index_kernels import half_as_float32, zero


@kernel.parallel_for
def _where_elems(i, out, cond, x, y, inner, mode):
    c = cond[i] if inner == 1 else cond[i // inner]
    v = x[i] if c != 0 else y[i]
    if mode == 2:
        out[i] += v
    else:
        out[i] = v


@kernel.parallel_for
def _where_grad_elems(i, dx, dy, g, cond, inner, xmode, ymode):
    # dx = g where cond, dy = g where not cond (each with its own write mode)
    c = (cond[i] if inner == 1 else cond[i // inner]) != 0
    gx = g[i] if c else g[i] * 0
    gy = g[i] * 0 if c else g[i]
    if xmode == 2:
        dx[i] += gx
    elif xmode == 1:
        dx[i] = gx
    if ymode == 2:
        dy[i] += gy
    elif ymode == 1:
        dy[i] = gy


def _where_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    """x, y and out share a shape; out is assigned once condition's shape is fully known."""
    shape_assign(in_shapes, 1, out_shapes[0], "where: input 'x'")
    shape_assign(in_shapes, 1, in_shapes[2], "where: input 'x'")
    shape_assign(in_shapes, 2, in_shapes[1], "where: input 'y'")
    shape, cond = in_shapes[1], in_shapes[0]
    # as MXNet: without a fully known condition neither form can be told apart
    if not shape_is_known(cond) or shape is None:
        return False
    if len(cond) == len(shape):
        shape_assign(in_shapes, 0, shape, "where: input 'condition'")
        shape_assign(in_shapes, 1, in_shapes[0], "where: input 'x'")
        shape_assign(in_shapes, 2, in_shapes[0], "where: input 'y'")
    elif len(cond) != 1 or (shape and shape[0] is not None and cond[0] != shape[0]):
        raise InferError(
            f"where: input 'condition' {shape_str(cond)} must have the shape of x "
            f"{shape_str(shape)} or be 1-D with x's first dimension"
        )
    shape_assign(out_shapes, 0, in_shapes[1], "where: output")
    return shape_is_known(in_shapes[1])


def _where_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    """x, y and out share a dtype; condition may have any."""
    for _ in range(2):
        for i in (1, 2):
            type_assign(out_types, 0, in_types[i], "where: output")
            type_assign(in_types, i, out_types[0], f"where: input {('x', 'y')[i - 1]!r}")
    return out_types[0] is not None


def _rows(cond: Any, x: Any) -> int:
    """Elements per condition entry: 1, or those of one first-axis slice (vector form)."""
    same = tuple(cond.shape) == tuple(x.shape)
    return 1 if same or x.size == 0 else int(x.size) // int(x.shape[0])


def _where_forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    (cond, x, y), out = inputs, outputs[0]
    mode = req_code("where", req[0])
    if mode == NULL or out.size == 0:
        return
    with half_as_float32(ctx, [out], [mode], [cond, x, y]) as ([o], [c, a, b]):
        args = (flat(o), flat(c), flat(a), flat(b), _rows(cond, x), mode)
        _where_elems.launch(ctx, int(out.size), *args)


def _where_backward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    (g, cond), (dcond, dx, dy) = inputs, outputs
    name = "_backward_where"
    if req_code(name, req[0]) == WRITE:
        zero(ctx, dcond)
    xmode, ymode = req_code(name, req[1]), req_code(name, req[2])
    if (xmode == NULL and ymode == NULL) or g.size == 0:
        return
    with half_as_float32(ctx, [dx, dy], [xmode, ymode], [g, cond]) as ([a, b], [h, c]):
        args = (flat(a), flat(b), flat(h), flat(c), _rows(cond, dx), xmode, ymode)
        _where_grad_elems.launch(ctx, int(g.size), *args)


def _where_grad(node: Node, ograds: list[NodeEntry]) -> list[NodeEntry]:
    # one backward node reads only dy and the condition: (d condition = 0, d x, d y)
    return make_grad_node("_backward_where", node, [ograds[0], node.inputs[0]])


(
    register_op("where")
    .describe(
        "Return the elements, either from x or y, depending on the condition.\n\n"
        "Given three ndarrays, condition, x, and y, return an ndarray with the elements "
        "from x or y, depending on the elements from condition are true or false. x and y "
        "must have the same shape. If condition has the same shape as x, each element in "
        "the output array is from x if the corresponding element in the condition is true, "
        "and from y if false. If condition does not have the same shape as x, it must be a "
        "1D array whose size is the same as x's first dimension size. Each row of the "
        "output array is from x's row if the corresponding element from condition is true, "
        "and from y's row if false.\n\n"
        "Examples::\n\n"
        "    x = [[1, 2], [3, 4]]\n"
        "    y = [[5, 6], [7, 8]]\n"
        "    cond = [[0, 1], [-1, 0]]\n"
        "    where(cond, x, y) = [[5, 2], [3, 8]]\n"
        "    where([0, 1], x, y) = [[5, 6], [3, 4]]"
    )
    .set_num_inputs(3)
    .set_num_outputs(1)
    .set_attr(FListInputNames, lambda attrs: ["condition", "x", "y"])
    .set_attr(FInferShape, _where_shape)
    .set_attr(FInferType, _where_type)
    .set_attr(FCompute_cpu, _where_forward)
    .set_attr(FCompute_gpu, _where_forward)
    .set_attr(FGradient, _where_grad)
    .add_argument("condition", "NDArray-or-Symbol", "condition array")
    .add_argument("x", "NDArray-or-Symbol", "")
    .add_argument("y", "NDArray-or-Symbol", "")
)
(
    register_op("_backward_where")
    .set_num_inputs(2)
    .set_num_outputs(3)
    .set_attr(TIsBackward, True)
    .set_attr(FCompute_cpu, _where_backward)
    .set_attr(FCompute_gpu, _where_backward)
)
