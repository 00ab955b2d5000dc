"""Strided slices: slice (crop), _slice_assign (_crop_assign), _slice_assign_scalar.

Every op here works on one region of an array: per axis a range(begin, end, step) as
Python slicing reads it (None means "from the start"/"to the end" in the step's
direction, negative values count from the end, out-of-range values clip). Axes past
len(begin) are taken whole.

    slice:                y = x[region]                  dx = dy in the region, 0 elsewhere
    _slice_assign:        y = lhs with y[region] = rhs   dlhs = dy with the region zeroed,
                                                         drhs = dy[region]
    _slice_assign_scalar: y = x with y[region] = scalar  dx = dy with the region zeroed

slice_like (slice_like.py) reuses this file's gather/scatter of a region.

NDArray's basic indexing (x[1:5:2, ::-1] and x[...] = v) runs on these ops. NumPy's
strided views do the copies on the CPU; on the GPU one grid-stride kernel gathers
(or scatters) the region through per-axis element strides, which are negative for
negative steps.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import kernel
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
from ..base import InferError, Shape
from ..graph.grad import make_grad_node, make_node
from ..graph.node import Node, NodeEntry
from ..infer import elemwise_type, shape_assign, shape_is_known, shape_str
from ..kernel.elementwise import req_mode
from ..param import IntOrNoneTuple, Parameter, field
from ..registry import NodeAttrs, register_op
from .concat import _zero
from .elemwise_unary import _identity
from .matrix import bind_cuda, flat, is_cpu, shape_of

cuda: Any = None  # numba.cuda, bound before a launch (see matrix.bind_cuda)

# -- the region -------------------------------------------------------------------------------


class SliceParam(Parameter):
    begin = field(
        IntOrNoneTuple,
        describe="starting indices for the slice operation, supports negative indices.",
    )
    end = field(
        IntOrNoneTuple,
        describe="ending indices for the slice operation, supports negative indices.",
    )
    step = field(
        IntOrNoneTuple,
        default=(),
        describe="step for the slice operation, supports negative values.",
    )


def axis_range(n: int, begin: int | None, end: int | None, step: int | None) -> range:
    """The indices one axis of length n keeps: Python's slice(begin, end, step) of range(n)."""
    return range(n)[slice(begin, end, step)]


def region(op: str, p: Any, shape: tuple[int, ...]) -> list[range]:
    """One range per axis of `shape`; InferError naming `op` for bad begin/end/step."""
    begin, end, step = tuple(p.begin), tuple(p.end), tuple(p.step)
    if len(begin) != len(end):
        raise InferError(
            f"{op}: parameters 'begin' {begin} and 'end' {end} must have the same length"
        )
    if step and len(step) != len(begin):
        raise InferError(
            f"{op}: parameter 'step' {step} must be empty or as long as 'begin' {begin}"
        )
    if len(begin) > len(shape):
        raise InferError(
            f"{op}: parameter 'begin' {begin} has {len(begin)} axes but input 'data' "
            f"{shape_str(shape)} has {len(shape)}"
        )
    out = []
    for i, n in enumerate(shape):
        if i >= len(begin):
            out.append(range(n))
            continue
        s = step[i] if step else None
        if s == 0:
            raise InferError(f"{op}: parameter 'step' {step} has a 0 at axis {i}")
        out.append(axis_range(n, begin[i], end[i], s))
    return out


def _region_shape(op: str, p: Any, shape: Shape) -> Shape:
    """The sliced shape; an unknown input dim gives an unknown output dim."""
    known = tuple(0 if d is None else d for d in shape)
    ranges = region(op, p, known)
    return tuple(None if d is None else len(r) for d, r in zip(shape, ranges))


def numpy_key(ranges: list[range]) -> tuple[slice, ...]:
    """NumPy basic-indexing slices selecting exactly `ranges` (each a range of its axis)."""
    key = []
    for r in ranges:
        stop: int | None = r.stop
        if r.step < 0 and r.stop < 0:
            stop = None  # a negative stop in a range means "past index 0"
        key.append(slice(r.start, stop, r.step))
    return tuple(key)


def _strides(shape: tuple[int, ...]) -> list[int]:
    return [math.prod(shape[k + 1 :]) for k in range(len(shape))]


def _gpu_plan(
    ranges: list[range], shape: tuple[int, ...]
) -> tuple[int, tuple[int, ...], tuple[int, ...]]:
    """(flat offset of the region's first element, region shape, its element strides)."""
    strides = _strides(shape)
    offset = sum(r.start * s for r, s in zip(ranges, strides) if len(r))
    return offset, tuple(len(r) for r in ranges), tuple(r.step * s for r, s in zip(ranges, strides))


@kernel.cuda_kernel
def _gather_region_cuda(out, x, rshape, rstrides, offset, add):
    # out[t] (+)= x[offset + sum_k idx_k * rstrides[k]] where idx = unravel(t, rshape)
    for t in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        rem = t
        src = offset
        for k in range(len(rshape) - 1, -1, -1):
            q = rem // rshape[k]
            src += (rem - q * rshape[k]) * rstrides[k]
            rem = q
        if add:
            out[t] += x[src]
        else:
            out[t] = x[src]


@kernel.cuda_kernel
def _scatter_region_cuda(out, src, base, rshape, rstrides, offset, mode, value):
    # at dst = offset + sum_k idx_k * rstrides[k], idx = unravel(t, rshape):
    # mode 0: out[dst] = src[t]   1: out[dst] += src[t]   2: out[dst] = value
    # mode 3: out[dst] += src[t] - base[dst]   4: out[dst] += value - base[dst]
    n = 1
    for k in range(len(rshape)):
        n *= rshape[k]
    for t in range(cuda.grid(1), n, cuda.gridsize(1)):
        rem = t
        dst = offset
        for k in range(len(rshape) - 1, -1, -1):
            q = rem // rshape[k]
            dst += (rem - q * rshape[k]) * rstrides[k]
            rem = q
        if mode == 0:
            out[dst] = src[t]
        elif mode == 1:
            out[dst] += src[t]
        elif mode == 2:
            out[dst] = value
        elif mode == 3:
            out[dst] += src[t] - base[dst]
        else:
            out[dst] += value - base[dst]


def gather_region(ctx: Any, out: Any, req: Any, x: Any, ranges: list[range]) -> None:
    """out (+)= x[region]; out has the region's shape."""
    mode = req_mode("slice", req)
    if mode is None or out.size == 0:
        return
    if is_cpu(out):
        src = x[numpy_key(ranges)]
        if mode == "add":
            out += src
        else:
            np.copyto(out, src)
        return
    global cuda
    cuda = bind_cuda("slice")
    offset, rshape, rstrides = _gpu_plan(ranges, shape_of(x))
    _gather_region_cuda.launch(
        ctx, out.size, flat(out), flat(x), rshape, rstrides, offset, mode == "add"
    )


def scatter_region(
    ctx: Any, out: Any, ranges: list[range], src: Any, add: bool, base: Any = None
) -> None:
    """out[region] = src, or += src with add, or += src - base[region] with add and base.

    src is an array of the region's shape or a scalar; base has out's shape.
    """
    n = math.prod(len(r) for r in ranges)
    if n == 0:
        return
    scalar = not hasattr(src, "shape")
    if is_cpu(out):
        key = numpy_key(ranges)
        dst = out[key]
        if add:
            dst += src if base is None else src - base[key]
        elif scalar:
            dst[...] = src
        else:
            np.copyto(dst, src)
        return
    global cuda
    cuda = bind_cuda("slice")
    offset, rshape, rstrides = _gpu_plan(ranges, shape_of(out))
    if base is not None:
        mode = 4 if scalar else 3
    elif scalar:
        if add:
            raise InferError("scatter_region: adding a scalar needs a base array")
        mode = 2
    else:
        mode = 1 if add else 0
    src_arg = flat(out) if scalar else flat(src)  # scalar modes never read src
    base_arg = flat(out) if base is None else flat(base)
    value = float(src) if scalar else 0.0
    _scatter_region_cuda.launch(
        ctx, n, flat(out), src_arg, base_arg, rshape, rstrides, offset, mode, value
    )


def _copy_into(ctx: Any, out: Any, req: Any, x: Any) -> None:
    """out (+)= x, skipped when out is x (in place)."""
    if req_mode("slice_assign", req) == "write" and out is x:
        return
    _identity.launch(ctx, out, req, x)


# -- slice ------------------------------------------------------------------------------------


def _slice_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    op = attrs.op.name if attrs.op is not None else "slice"
    dshape = in_shapes[0]
    if dshape is None:
        return False
    shape_assign(out_shapes, 0, _region_shape(op, attrs.parsed, dshape), f"{op}: output")
    return shape_is_known(dshape)


def _slice_forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    x = inputs[0]
    gather_region(ctx, outputs[0], req[0], x, region("slice", attrs.parsed, shape_of(x)))


def _slice_backward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    # dx = 0 outside the region, dy inside (+= for req add: positions in a region are distinct)
    mode = req_mode("_backward_slice", req[0])
    dx = outputs[0]
    if mode is None:
        return
    if mode == "write":
        _zero(ctx, dx)
    scatter_region(ctx, dx, region("slice", attrs.parsed, shape_of(dx)), inputs[0], add=True)


def _slice_grad(node: Node, ograds: list[NodeEntry]) -> list[NodeEntry]:
    return make_grad_node("_backward_slice", node, [ograds[0]])


(
    register_op("slice")
    .describe(
        "Slices a region of the array: along axis i, indices range(begin[i], end[i], "
        "step[i]) as Python slicing reads them (None = from the start / to the end in "
        "the step's direction, negatives count from the end). Axes past len(begin) are "
        "kept whole.\n\nExample: x of shape (3, 4), begin=(0, 1), end=(2, 4) -> x[0:2, 1:4]; "
        "begin=(None,), end=(None,), step=(-1,) reverses axis 0."
    )
    .set_attr_parser(SliceParam)
    .set_num_inputs(1)
    .set_num_outputs(1)
    .set_attr(FInferShape, _slice_shape)
    .set_attr(FInferType, elemwise_type(1, 1))
    .set_attr(FCompute_cpu, _slice_forward)
    .set_attr(FCompute_gpu, _slice_forward)
    .set_attr(FGradient, _slice_grad)
    .add_argument("data", "NDArray-or-Symbol", "Source input")
    .add_arguments(SliceParam.fields())
)

register_op("slice").add_alias("crop")
(
    register_op("_backward_slice")
    .describe("Backward of slice: dy placed in the region of a zero array.")
    .set_attr_parser(SliceParam)
    .set_num_inputs(1)
    .set_num_outputs(1)
    .set_attr(TIsBackward, True)
    .set_attr(FCompute_cpu, _slice_backward)
    .set_attr(FCompute_gpu, _slice_backward)
)

# -- _slice_assign, _slice_assign_scalar ------------------------------------------------------


class SliceAssignScalarParam(SliceParam):
    field_order = (
        "scalar",
        "begin",
        "end",
        "step",
    )  # MXNet's argument order
    scalar = field(float, default=0.0, describe="The scalar value for assignment.")


def _slice_assign_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    op = attrs.op.name if attrs.op is not None else "_slice_assign"
    shape_assign(out_shapes, 0, in_shapes[0], f"{op}: output")
    shape_assign(in_shapes, 0, out_shapes[0], f"{op}: input 'lhs'")
    lhs = in_shapes[0]
    if lhs is None:
        return False
    if len(in_shapes) == 2:
        want = _region_shape(op, attrs.parsed, lhs)
        try:
            shape_assign(in_shapes, 1, want, f"{op}: input 'rhs'")
        except InferError:
            raise InferError(
                f"{op}: input 'rhs' has shape {shape_str(in_shapes[1])} but the region "
                f"begin={tuple(attrs.parsed.begin)} end={tuple(attrs.parsed.end)} "
                f"step={tuple(attrs.parsed.step)} of lhs {shape_str(lhs)} has shape "
                f"{shape_str(want)}"
            ) from None
    return all(shape_is_known(s) for s in (*in_shapes, out_shapes[0]))


def _assign(attrs: NodeAttrs, ctx: Any, out: Any, req: Any, lhs: Any, value: Any) -> None:
    """out (+)= lhs with its region replaced by value (an array or a scalar)."""
    mode = req_mode("_slice_assign", req)
    if mode is None:
        return
    ranges = region("_slice_assign", attrs.parsed, shape_of(lhs))
    if mode == "write":
        _copy_into(ctx, out, req, lhs)
        scatter_region(ctx, out, ranges, value, add=False)
        return
    # out += lhs with the region replaced: lhs everywhere, then value - lhs in the region
    _identity.launch(ctx, out, "add", lhs)
    scatter_region(ctx, out, ranges, value, add=True, base=lhs)


def _slice_assign_forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    _assign(attrs, ctx, outputs[0], req[0], inputs[0], inputs[1])


def _slice_assign_scalar_forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    x = inputs[0]
    value = x.dtype.type(attrs.parsed.scalar) if is_cpu(x) else attrs.parsed.scalar
    _assign(attrs, ctx, outputs[0], req[0], x, value)


def _region_params(node: Node) -> dict[str, Any]:
    return {k: node.attrs.dict[k] for k in ("begin", "end", "step") if k in node.attrs.dict}


def _zeroed_region(node: Node, dy: NodeEntry) -> NodeEntry:
    """dy with the region set to 0: the gradient of what the assignment overwrote."""
    params = {**_region_params(node), "scalar": 0.0}
    return NodeEntry(
        make_node("_slice_assign_scalar", f"{node.name}_backward_lhs", [dy], params), 0
    )


def _slice_assign_grad(node: Node, ograds: list[NodeEntry]) -> list[NodeEntry]:
    drhs = make_node("slice", f"{node.name}_backward_rhs", [ograds[0]], _region_params(node))
    return [_zeroed_region(node, ograds[0]), NodeEntry(drhs, 0)]


def _slice_assign_scalar_grad(node: Node, ograds: list[NodeEntry]) -> list[NodeEntry]:
    return [_zeroed_region(node, ograds[0])]


def _in_place(attrs: NodeAttrs) -> list[tuple[int, int]]:
    return [(0, 0)]


(
    register_op("_slice_assign")
    .describe(
        "Returns lhs with the region begin/end/step (as in slice) replaced by rhs, "
        "which has the region's shape. With out=lhs it assigns in place."
    )
    .set_attr_parser(SliceParam)
    .set_num_inputs(2)
    .set_num_outputs(1)
    .set_attr(FListInputNames, lambda attrs: ["lhs", "rhs"])
    .set_attr(FInferShape, _slice_assign_shape)
    .set_attr(FInferType, elemwise_type(2, 1))
    .set_attr(FInplaceOption, _in_place)
    .set_attr(FCompute_cpu, _slice_assign_forward)
    .set_attr(FCompute_gpu, _slice_assign_forward)
    .set_attr(FGradient, _slice_assign_grad)
    .add_argument("lhs", "NDArray-or-Symbol", "Source input")
    .add_argument("rhs", "NDArray-or-Symbol", "value to assign")
    .add_arguments(SliceParam.fields())
)

register_op("_slice_assign").add_alias("_crop_assign")
(
    register_op("_slice_assign_scalar")
    .describe(
        "Returns data with every element of the region begin/end/step (as in slice) "
        "set to scalar. With out=data it assigns in place."
    )
    .set_attr_parser(SliceAssignScalarParam)
    .set_num_inputs(1)
    .set_num_outputs(1)
    .set_attr(FInferShape, _slice_assign_shape)
    .set_attr(FInferType, elemwise_type(1, 1))
    .set_attr(FInplaceOption, _in_place)
    .set_attr(FCompute_cpu, _slice_assign_scalar_forward)
    .set_attr(FCompute_gpu, _slice_assign_scalar_forward)
    .set_attr(FGradient, _slice_assign_scalar_grad)
    .add_argument("data", "NDArray-or-Symbol", "Source input")
    .add_arguments(SliceAssignScalarParam.fields())
)
register_op("_slice_assign_scalar").add_alias("_crop_assign_scalar")
