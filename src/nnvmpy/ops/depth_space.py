"""depth_to_space and space_to_depth: blocks of channels moved into space and back (NCHW).

With b = block_size, both are a reshape to 6-d, a transpose and a reshape back:

    depth_to_space: (N, C, H, W) -> (N, b, b, C/b^2, H, W) -> axes (0, 3, 4, 1, 5, 2)
                    -> (N, C/b^2, H*b, W*b)
    space_to_depth: (N, C, H, W) -> (N, C, H/b, b, W/b, b) -> axes (0, 3, 5, 1, 2, 4)
                    -> (N, C*b^2, H/b, W/b)

so each is an AxisMap over the 6-d output whose strides are the 6-d input's, permuted.
The two undo each other; the backward ops apply the forward map's adjoint.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import kernel
from ..attrs import FCompute_cpu
from ..base import InferError, Shape
from ..infer import shape_assign, shape_is_known, shape_str
from ..kernel.launch import NULL, WRITE, req_code, store, uindex
from ..param import Parameter, field
from ..registry import NodeAttrs, Op
from ._axis_map import AFFINE, AxisMap, axis_map, contiguous_strides
from ._layout import op_name, register_layout_op


class DepthToSpaceParam(Parameter):
    block_size = field(int, lower_bound=1, describe="Blocks of [block_size. block_size] are moved")


def _check_4d(op: str, shape: Shape) -> None:
    if len(shape) != 4:
        raise InferError(f"{op}: input 'data' {shape_str(shape)} must be a 4-d (N, C, H, W) array")
    for k, d in enumerate(shape):
        if d == 0:
            raise InferError(f"{op}: input 'data' {shape_str(shape)} has an empty axis {k}")


def _divides(op: str, shape: Shape, axis: int, by: int, what: str) -> None:
    d = shape[axis]
    if d is not None and d % by:
        raise InferError(
            f"{op}: axis {axis} ({what}) of input 'data' {shape_str(shape)} is {d}, not a "
            f"multiple of {by}"
        )


def _scaled(d: int | None, mul: int, div: int) -> int | None:
    return None if d is None else d * mul // div


def _d2s_shape(op: str, b: int, shape: Shape) -> Shape:
    _check_4d(op, shape)
    _divides(op, shape, 1, b * b, "depth, block_size^2")
    n, c, h, w = shape
    return (n, _scaled(c, 1, b * b), _scaled(h, b, 1), _scaled(w, b, 1))


def _s2d_shape(op: str, b: int, shape: Shape) -> Shape:
    _check_4d(op, shape)
    _divides(op, shape, 2, b, "height, block_size")
    _divides(op, shape, 3, b, "width, block_size")
    n, c, h, w = shape
    return (n, _scaled(c, b * b, 1), _scaled(h, 1, b), _scaled(w, 1, b))


def _infer(forward: Any, backward: Any, default: str) -> Any:
    """Mutual inference: the output from the input, the input from the output."""

    def infer(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
        op = op_name(attrs, default)
        b = attrs.parsed.block_size
        if in_shapes[0] is not None:
            shape_assign(out_shapes, 0, forward(op, b, in_shapes[0]), f"{op}: output")
        if out_shapes[0] is not None:
            shape_assign(in_shapes, 0, backward(op, b, out_shapes[0]), f"{op}: input 'data'")
        return shape_is_known(in_shapes[0])

    return infer


def _permuted(out6: tuple[int, ...], in6: tuple[int, ...], perm: tuple[int, ...]) -> AxisMap:
    """out6[i] = in6[i permuted back]: output axis k walks input axis perm[k]."""
    strides = contiguous_strides(in6)
    return axis_map(out6, [(AFFINE, in6[p], 1, 0, strides[p]) for p in perm])


def _d2s_plan(op: str, attrs: NodeAttrs, shape: tuple[int, ...]) -> AxisMap:
    b = attrs.parsed.block_size
    n, c, h, w = shape
    cb = c // (b * b)
    return _permuted((n, cb, h, b, w, b), (n, b, b, cb, h, w), (0, 3, 4, 1, 5, 2))


def _s2d_plan(op: str, attrs: NodeAttrs, shape: tuple[int, ...]) -> AxisMap:
    b = attrs.parsed.block_size
    n, c, h, w = shape
    return _permuted((n, b, b, c, h // b, w // b), (n, c, h // b, b, w // b, b), (0, 3, 5, 1, 2, 4))


# -- the CPU's row loops --------------------------------------------------------------------
# The AxisMap gather decodes six coordinates per element (divisions by run-time sizes) and
# its innermost output axis walks the input C/b^2 planes apart: (32, 64, 56, 56) b=2 took
# 63 ms. On the CPU an item is an output row: depth_to_space interleaves b input rows into
# it, space_to_depth takes every b-th value of one input row. Each is its own inverse's
# adjoint, so the backward ops run the other loop on dy.


@kernel.parallel_for
def _d2s_rows(r, out, x, c, h, w, b, mode):
    # out (N, c / b^2, h b, w b) row r = (n, co, y): out[.., y, t b + j] = x[n, (i b + j)
    # c / b^2 + co, y // b, t] with i = y % b
    cb = c // (b * b)
    q = r // (h * b)
    y = r - q * (h * b)
    n = q // cb
    co = q - n * cb
    hh = y // b
    i = y - hh * b
    dst = r * (w * b)
    for j in range(b):
        src = ((n * c + (i * b + j) * cb + co) * h + hh) * w
        for t in range(w):
            store(out, dst + t * b + j, x[uindex(src + t)], mode)


@kernel.parallel_for
def _s2d_rows(r, out, x, c, h, w, b, mode):
    # out (N, c b^2, h / b, w / b) row r = (n, co, yo), co = (i b + j) c + ci: out[.., yo,
    # t] = x[n, ci, yo b + i, t b + j]
    ho, wo, cs = h // b, w // b, c * b * b
    q = r // ho
    yo = r - q * ho
    n = q // cs
    co = q - n * cs
    ij = co // c
    ci = co - ij * c
    i = ij // b
    src = ((n * c + ci) * h + yo * b + i) * w + (ij - i * b)
    dst = r * wo
    for t in range(wo):
        store(out, dst + t, x[uindex(src + t * b)], mode)


def _rows_cpu(rows: Any, name: str, out: Any, req: Any, x: Any, c: int, h: int, w: int, b: int):
    """True when `rows` ran on the CPU: any dtype for a plain write (a copy: float16 and
    bool move as same-sized integers), float32/float64/integers for 'add'."""
    mode = req_code(name, req)
    if mode == NULL or out.size == 0:
        return True
    if x.dtype.kind not in "fiub" or not (x.flags.c_contiguous and out.flags.c_contiguous):
        return False
    if x.dtype.kind in "fb" and x.dtype.itemsize < 4:
        if mode != WRITE:
            return False
        bits = np.dtype(f"u{x.dtype.itemsize}")
        x, out = x.view(bits), out.view(bits)
    count = out.size // out.shape[-1]
    rows.launch(None, count, out.reshape(-1), x.reshape(-1), c, h, w, b, mode, work=out.size)
    return True


def _with_rows(op_name_: str) -> None:
    """Put the row loops before op `op_name_`'s FCompute<cpu> (the gather / adjoint stays
    the fallback and the GPU's)."""
    op = Op.get(op_name_)
    general = op.get_attr(FCompute_cpu)
    d2s = op_name_ in ("depth_to_space", "_backward_space_to_depth")

    def compute(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
        x, out, b = inputs[0], outputs[0], attrs.parsed.block_size
        _, c, h, w = x.shape
        if not _rows_cpu(_d2s_rows if d2s else _s2d_rows, op_name_, out, req[0], x, c, h, w, b):
            general(attrs, ctx, inputs, req, outputs)

    op.set_attr(FCompute_cpu, compute, plevel=11)


register_layout_op(
    ["depth_to_space"],
    "_backward_depth_to_space",
    DepthToSpaceParam,
    _d2s_plan,
    _infer(_d2s_shape, _s2d_shape, "depth_to_space"),
    "Rearranges (permutes) data from depth into blocks of spatial data; the reverse of "
    "space_to_depth. An input of shape (N, C, H, W) gives (N, C / block_size^2, "
    "H * block_size, W * block_size): reshape to (N, b, b, C / b^2, H, W), transpose to "
    "(0, 3, 4, 1, 5, 2), reshape to the output shape.",
)

register_layout_op(
    ["space_to_depth"],
    "_backward_space_to_depth",
    DepthToSpaceParam,
    _s2d_plan,
    _infer(_s2d_shape, _d2s_shape, "space_to_depth"),
    "Rearranges (permutes) blocks of spatial data into depth; the reverse of "
    "depth_to_space. An input of shape (N, C, H, W) gives (N, C * block_size^2, "
    "H / block_size, W / block_size): reshape to (N, C, H / b, b, W / b, b), transpose to "
    "(0, 3, 5, 1, 2, 4), reshape to the output shape.",
)

for _name in ("depth_to_space", "space_to_depth"):
    _with_rows(_name)
    _with_rows(f"_backward_{_name}")
