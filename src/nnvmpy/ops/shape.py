"""Shape ops: Reshape (reshape), Flatten (flatten), expand_dims, squeeze and transpose.

Reshape, Flatten, expand_dims and squeeze only relabel the bytes, so they are in-place identity
ops (FInplaceOption (0, 0) with FInplaceIdentity): PlanMemory may hand the output the
input's block even while the input is still read, and the kernel then has nothing to do.
Their gradient is `_backward_reshape` (dy relabelled with the input's shape, MXNet's
name). transpose copies through np.transpose on the CPU and on the GPU through a gather or a
tiled kernel (_transpose_cuda.py); its gradient is transpose with the inverse permutation.

Joining and cutting along an axis (Concat, SliceChannel, slice_axis) is in concat.py.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FInplaceIdentity,
    FInplaceOption,
    TIsBackward,
)
from ..base import InferError, Shape
from ..graph.grad import ElemwiseGradUseNone, make_node
from ..graph.node import NodeEntry
from ..infer import elemwise_type, shape_assign, shape_is_known, shape_str
from ..kernel.elementwise import req_mode
from ..param import Parameter, field
from ..param import Shape as ShapeField
from ..registry import NodeAttrs, register_op
from ._transpose_cuda import transpose_gpu
from .elemwise_unary import _identity
from .matrix import is_cpu, shape_of, view

# -- helpers ----------------------------------------------------------------------------------


def normalize_axis(op: str, arg: str, axis: int, ndim: int, what: str = "input 'data'") -> int:
    """A negative axis counted from the end; InferError naming the op when out of range."""
    if not -ndim <= axis < ndim:
        raise InferError(
            f"{op}: parameter '{arg}' is {axis}, out of range for {what} with {ndim} "
            f"dimensions; expected {-ndim} <= {arg} < {ndim}"
        )
    return axis + ndim if axis < 0 else axis


def _known_prod(dims: Shape) -> int | None:
    return math.prod(dims) if shape_is_known(dims) else None


def fill_one_dim(op: str, what: str, dims: Shape, total: int | None) -> Shape:
    """dims with its single unknown entry solved so that prod(dims) == total."""
    unknown = [i for i, d in enumerate(dims) if d is None]
    if total is None or len(unknown) != 1:
        return dims
    rest = math.prod(d for d in dims if d is not None)
    if rest == 0 or total % rest:
        raise InferError(f"{op}: {what} {shape_str(dims)} cannot hold {total} elements")
    return (*dims[: unknown[0]], total // rest, *dims[unknown[0] + 1 :])


def _data_ptr(a: Any) -> int | None:
    face = getattr(a, "__array_interface__", None) or getattr(a, "__cuda_array_interface__", None)
    return face["data"][0] if face else None


def copy_reshaped(ctx: Any, out: Any, req: Any, x: Any) -> None:
    """out (+)= x relabelled with out's shape; nothing to do when out already is x in place."""
    mode = req_mode("copy_reshaped", req)
    if mode is None:
        return
    if mode == "write" and x.size and _data_ptr(out) is not None and _data_ptr(out) == _data_ptr(x):
        return
    if is_cpu(out):
        src = np.reshape(x, out.shape)
        if mode == "add":
            out += src
        else:
            np.copyto(out, src)
    else:
        _identity.launch(ctx, out, req, view(x, shape_of(out)))


def _reshape_compute(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    copy_reshaped(ctx, outputs[0], req[0], inputs[0])


def _identity_slot(attrs: NodeAttrs) -> list[tuple[int, int]]:
    return [(0, 0)]


def _register_identity_like(name: str, describe: str, param: Any, infer_shape: Any) -> None:
    """A relabelling op (Reshape, Flatten, expand_dims): output shares the input's bytes."""
    op = (
        register_op(name)
        .describe(describe)
        .set_num_inputs(1)
        .set_num_outputs(1)
        .set_attr(FInferShape, infer_shape)
        .set_attr(FInferType, elemwise_type(1, 1))
        .set_attr(FInplaceOption, _identity_slot)
        .set_attr(FInplaceIdentity, lambda attrs: [True])
        .set_attr(FCompute_cpu, _reshape_compute)
        .set_attr(FCompute_gpu, _reshape_compute)
        .set_attr(FGradient, ElemwiseGradUseNone("_backward_reshape"))
        .add_argument("data", "NDArray-or-Symbol", "Input data.")
    )
    if param is not None:
        op.set_attr_parser(param).add_arguments(param.fields())


(  # dx = dy with the forward input's shape (from the forward node)
    register_op("_backward_reshape")
    .set_num_inputs(1)
    .set_num_outputs(1)
    .set_attr(TIsBackward, True)
    .set_attr(FInplaceOption, _identity_slot)
    .set_attr(FInplaceIdentity, lambda attrs: [True])
    .set_attr(FCompute_cpu, _reshape_compute)
    .set_attr(FCompute_gpu, _reshape_compute)
)

# -- Reshape ----------------------------------------------------------------------------------


class ReshapeParam(Parameter):
    shape = field(ShapeField, default=(), describe="The target shape")
    reverse = field(
        bool,
        default=False,
        describe="If true then the special values are inferred from right to left",
    )
    target_shape = field(
        ShapeField,
        default=(),
        describe="(Deprecated! Use ``shape`` instead.) Target new shape. One and only one "
        "dim can be 0, in which case it will be inferred from the rest of dims",
    )
    keep_highest = field(
        bool,
        default=False,
        describe="(Deprecated! Use ``shape`` instead.) Whether keep the highest dim "
        "unchanged.If set to true, then the first dim in target_shape is ignored,and always "
        "fixed as input",
    )


def special_shape(op: str, spec: tuple[int, ...], dshape: Shape, reverse: bool) -> Shape:
    """MXNet's special values: 0 copy, -1 infer, -2 copy the rest, -3 merge two, -4 split."""
    src = dshape[::-1] if reverse else dshape
    spec = spec[::-1] if reverse else spec
    out: list[int | None] = []
    pos, infer_at, i = 0, -1, 0

    def take() -> int | None:
        nonlocal pos
        if pos >= len(src):
            raise InferError(f"{op}: parameter 'shape' {spec} uses more axes than input "
                             f"'data' {shape_str(dshape)} has")  # fmt: skip
        pos += 1
        return src[pos - 1]

    while i < len(spec):
        v = spec[i]
        if v == 0:
            out.append(take())
        elif v == -1:
            if infer_at >= 0:
                raise InferError(f"{op}: parameter 'shape' {spec}: only one dim can be -1")
            infer_at, pos = len(out), pos + 1
            out.append(None)
        elif v == -2:
            out.extend(src[pos:])
            pos = len(src)
        elif v == -3:
            d1, d2 = take(), take()
            out.append(None if d1 is None or d2 is None else d1 * d2)
        elif v == -4:
            out.extend(_split_dim(op, spec, i, take()))
            i += 2
        elif v > 0:
            out.append(v)
            pos += 1
        else:
            raise InferError(f"{op}: parameter 'shape' {spec} has {v}; expected a size > 0 "
                             "or a special value 0, -1, -2, -3, -4")  # fmt: skip
        i += 1
    if infer_at >= 0:
        out = list(fill_one_dim(op, "target shape", tuple(out), _known_prod(dshape)))
    return tuple(out[::-1] if reverse else out)


def _split_dim(op: str, spec: tuple[int, ...], i: int, d0: int | None) -> tuple[int | None, ...]:
    if i + 2 >= len(spec):
        raise InferError(f"{op}: parameter 'shape' {spec}: -4 must be followed by two sizes")
    d1, d2 = spec[i + 1], spec[i + 2]
    if d1 == -1 and d2 == -1:
        raise InferError(f"{op}: parameter 'shape' {spec}: split dims cannot both be -1")
    if d0 is None:
        return (None if d1 == -1 else d1, None if d2 == -1 else d2)
    if d1 == -1:
        d1 = d0 // d2 if d2 else -1
    if d2 == -1:
        d2 = d0 // d1 if d1 else -1
    if d1 * d2 != d0:
        raise InferError(f"{op}: parameter 'shape' {spec}: split dims {d1}, {d2} do not "
                         f"divide original dim {d0}")  # fmt: skip
    return (d1, d2)


def _reshape_target(op: str, p: Any, dshape: Shape) -> Shape:
    if p.shape:
        return special_shape(op, p.shape, dshape, p.reverse)
    if p.target_shape:  # the deprecated form: one 0 is inferred, keep_highest keeps dim 0
        target = list(p.target_shape)
        if p.keep_highest:
            target[0] = dshape[0]
        if target.count(0) > 1:
            raise InferError(f"{op}: parameter 'target_shape' {p.target_shape}: at most one "
                             "dim can be 0 (inferred)")  # fmt: skip
        dims = tuple(None if d == 0 else d for d in target)
        return fill_one_dim(op, "target_shape", dims, _known_prod(dshape))
    raise InferError(f"{op}: parameter 'shape' is required, e.g. shape=(2, -1)")


def _reshape_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    op = attrs.op.name if attrs.op is not None else "Reshape"
    dshape = in_shapes[0]
    if dshape is None:
        return False
    target = _reshape_target(op, attrs.parsed, dshape)
    n_in, n_out = _known_prod(dshape), _known_prod(target)
    if n_in is not None and n_out is not None and n_in != n_out:
        raise InferError(
            f"{op}: target shape {shape_str(target)} (parameter shape={attrs.parsed.shape}) has "
            f"{n_out} elements but input 'data' {shape_str(dshape)} has {n_in}"
        )
    shape_assign(out_shapes, 0, target, f"{op}: output")
    total = _known_prod(out_shapes[0])
    shape_assign(in_shapes, 0, fill_one_dim(op, "input 'data'", dshape, total), f"{op}: data")
    return shape_is_known(in_shapes[0]) and shape_is_known(out_shapes[0])


_register_identity_like(
    "Reshape",
    "Reshapes the input array without copying (the output may share its memory).\n\n"
    "Special values in `shape`: 0 copies this dimension from the input, -1 infers it "
    "from the remaining size, -2 copies all remaining input dimensions, -3 merges two "
    "consecutive input dimensions, -4 splits one input dimension into the two that "
    "follow (one of them may be -1). With reverse=True the special values are matched "
    "from right to left.\n\n"
    "Examples for an input of shape (2, 3, 4): shape=(0, -1) -> (2, 12); "
    "(-3, 4) -> (6, 4); (-2,) -> (2, 3, 4); (-4, 1, 2, -2) -> (1, 2, 3, 4).",
    ReshapeParam,
    _reshape_shape,
)

register_op("Reshape").add_alias("reshape")
# -- Flatten ----------------------------------------------------------------------------------


def _flatten_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    op = attrs.op.name if attrs.op is not None else "Flatten"
    dshape = in_shapes[0]
    if dshape is None:
        return False
    if len(dshape) == 0:
        raise InferError(f"{op}: input 'data' must have at least one axis, got ()")
    shape_assign(out_shapes, 0, (dshape[0], _known_prod(dshape[1:])), f"{op}: output")
    batch, rest = out_shapes[0]
    guess = fill_one_dim(op, "input 'data'", dshape[1:], rest)
    shape_assign(in_shapes, 0, (batch, *guess), f"{op}: input 'data'")
    return shape_is_known(in_shapes[0]) and shape_is_known(out_shapes[0])


_register_identity_like(
    "Flatten",
    "Flattens the input into a 2-D array, collapsing all axes but the first: "
    "(d1, d2, ..., dk) -> (d1, d2*...*dk). The output may share the input's memory.",
    None,
    _flatten_shape,
)

register_op("Flatten").add_alias("flatten")
# -- expand_dims ------------------------------------------------------------------------------


class ExpandDimParam(Parameter):
    axis = field(
        int,
        describe="Position where new axis is to be inserted. Suppose that the input "
        "`NDArray`'s dimension is `ndim`, the range of the inserted axis is "
        "`[-ndim, ndim]`",
    )


def _expand_dims_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    dshape, oshape = in_shapes[0], out_shapes[0]
    if dshape is None and oshape is None:
        return False
    ndim = len(dshape) if dshape is not None else len(oshape) - 1
    axis = normalize_axis("expand_dims", "axis", attrs.parsed.axis, ndim + 1)
    if dshape is None:
        dshape = oshape[:axis] + oshape[axis + 1 :]
    shape_assign(out_shapes, 0, (*dshape[:axis], 1, *dshape[axis:]), "expand_dims: output")
    out = out_shapes[0]
    shape_assign(in_shapes, 0, out[:axis] + out[axis + 1 :], "expand_dims: input 'data'")
    return shape_is_known(in_shapes[0])


_register_identity_like(
    "expand_dims",
    "Inserts a new axis of size 1 into the array shape; e.g. axis=1 turns (2, 3) into "
    "(2, 1, 3). The output may share the input's memory.",
    ExpandDimParam,
    _expand_dims_shape,
)

# -- transpose --------------------------------------------------------------------------------


class TransposeParam(Parameter):
    axes = field(
        ShapeField, default=(), describe="Target axis order. By default the axes will be inverted."
    )


def _axes(attrs: NodeAttrs, ndim: int) -> tuple[int, ...]:
    axes = attrs.parsed.axes
    if not axes:
        return tuple(range(ndim - 1, -1, -1))
    norm = tuple(a + ndim if a < 0 else a for a in axes)
    if len(axes) != ndim or sorted(norm) != list(range(ndim)):
        raise InferError(
            f"transpose: parameter 'axes' {tuple(axes)} is not a permutation of the "
            f"{ndim} axes of input 'data'"
        )
    return norm


def _transpose_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    known = in_shapes[0] if in_shapes[0] is not None else out_shapes[0]
    if known is None:
        return False
    axes = _axes(attrs, len(known))
    if in_shapes[0] is not None:
        shape_assign(out_shapes, 0, tuple(in_shapes[0][a] for a in axes), "transpose: output")
    inverse = tuple(int(i) for i in np.argsort(axes))
    shape_assign(in_shapes, 0, tuple(out_shapes[0][a] for a in inverse), "transpose: input 'data'")
    return shape_is_known(in_shapes[0])


def _transpose_compute(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    mode = req_mode("transpose", req[0])
    x, out = inputs[0], outputs[0]
    if mode is None:
        return
    axes = _axes(attrs, x.ndim)
    if is_cpu(out):
        from nnvmpy.ops import _transpose_cpu

        if _transpose_cpu.transpose_into(out, x, axes, mode == "add"):
            return
        if mode == "add":
            out += np.transpose(x, axes)
        else:
            np.copyto(out, np.transpose(x, axes))
        return
    transpose_gpu(ctx, out, x, axes, mode == "add")


def _transpose_grad(node: Any, ograds: list[NodeEntry]) -> list[NodeEntry]:
    # y = transpose(x, axes)  =>  dx = transpose(dy, argsort(axes)); reversal is its own inverse
    axes = node.attrs.parsed.axes
    inverse = tuple(int(i) for i in np.argsort([a % len(axes) for a in axes])) if axes else ()
    grad = make_node("transpose", f"{node.name}_backward", [ograds[0]], {"axes": inverse})
    return [NodeEntry(grad, 0)]


(
    register_op("transpose")
    .describe(
        "Permutes the dimensions of an array: out.shape[i] = data.shape[axes[i]]. "
        "Without axes the order is reversed (the matrix transpose for 2-D)."
    )
    .set_attr_parser(TransposeParam)
    .set_num_inputs(1)
    .set_num_outputs(1)
    .set_attr(FInferShape, _transpose_shape)
    .set_attr(FInferType, elemwise_type(1, 1))
    .set_attr(FCompute_cpu, _transpose_compute)
    .set_attr(FCompute_gpu, _transpose_compute)
    .set_attr(FGradient, _transpose_grad)
    .add_argument("data", "NDArray-or-Symbol", "Source input")
    .add_arguments(TransposeParam.fields())
)

# -- squeeze ----------------------------------------------------------------------------------


class SqueezeParam(Parameter):
    axis = field(
        ShapeField,
        default=None,
        describe="Selects a subset of the single-dimensional entries in the shape. If an axis "
        "is selected with shape entry greater than one, an error is raised.",
    )


def squeeze_axes(op: str, axis: Any, dshape: Shape) -> list[int]:
    """The axes squeeze drops: `axis` (each of size 1) or every size-1 axis."""
    ndim = len(dshape)
    if axis is None:
        return [d for d in range(ndim) if dshape[d] == 1]
    axes = [normalize_axis(op, "axis", a, ndim) for a in axis]
    if len(set(axes)) != len(axes):
        raise InferError(f"{op}: parameter 'axis' {tuple(axis)} repeats an axis")
    for a in axes:
        if dshape[a] is not None and dshape[a] != 1:
            raise InferError(
                f"{op}: cannot squeeze axis {a} of input 'data' {shape_str(dshape)}: its size "
                f"is {dshape[a]}, expected 1"
            )
    return axes


def _squeeze_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    dshape = in_shapes[0]
    if dshape is None or (attrs.parsed.axis is None and not shape_is_known(dshape)):
        return False
    drop = squeeze_axes("squeeze", attrs.parsed.axis, dshape)
    out = tuple(d for i, d in enumerate(dshape) if i not in drop) or (1,)  # (1,), not ()
    shape_assign(out_shapes, 0, out, "squeeze: output")
    return shape_is_known(dshape)


_register_identity_like(
    "squeeze",
    "Removes axes of size 1 (those in `axis`, or all of them): (1, 5, 1, 3) -> (5, 3). "
    "An array of only size-1 axes becomes shape (1,). The output may share the input's "
    "memory.",
    SqueezeParam,
    _squeeze_shape,
)
