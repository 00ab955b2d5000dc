"""Reductions over axes: sum, mean, max, min, prod, norm (+ sum_axis, ...) and reduce_to.

`axis` is an int, a tuple or None (every axis); `exclude=True` reduces over the axes
*not* listed; `keepdims=True` leaves reduced axes as size 1. As in MXNet 1.x, reducing
every axis without keepdims gives shape (1,).

`reduce_to(ctx, out, req, x, small, reducer, scale)` is the primitive: `small` is x's
shape with reduced axes set to 1. CPU: NumPy's ufunc.reduce (SIMD, pairwise sums along a
contiguous axis). GPU: numba.cuda kernels, accumulating in float64, on the mapping that
reads x coalesced (_reduce_cuda.py).

Gradients broadcast the output gradient back over the reduced axes (`broadcast_map`):
sum/mean copy it (mean divides by the count), max/min send it to every position equal to
the result (all ties, as MXNet), prod multiplies by y/x, norm by x/y (ord 2) or sign(x).
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
    FResourceRequest,
    TIsBackward,
)
from ..base import InferError, Shape
from ..graph.grad import ElemwiseGradUseInOut, ElemwiseGradUseNone
from ..infer import elemwise_type, shape_assign, shape_is_known, shape_str, type_assign
from ..kernel.elementwise import req_mode
from ..param import Parameter, field
from ..param import Shape as ShapeField
from ..registry import NodeAttrs, register_op
from ..resource import ResourceRequest
from ._broadcast_map import broadcast_map
from ._reduce_cuda import reduce_gpu
from .elemwise_scalar import _mul as _mul_scalar
from .elemwise_unary import _identity


class ReduceAxesParam(Parameter):
    axis = field(
        ShapeField,
        default=None,
        describe="The axis or axes along which to reduce: an int, a tuple of ints, or None "
        "for every axis. Negative values count from the last axis.",
    )
    keepdims = field(bool, default=False, describe="Keep reduced axes as dims of size 1.")
    exclude = field(bool, default=False, describe="Reduce over the axes NOT in `axis` instead.")


class NormParam(Parameter):
    ord = field(int, default=2, lower_bound=1, upper_bound=2, describe="Order of the norm: 1 or 2.")
    axis = field(
        ShapeField,
        default=None,
        describe="The axis or axes along which to compute the norm; None for every axis.",
    )
    out_dtype = field(
        str,
        default=None,
        enum=["float16", "float32", "float64", "int32", "int64", "int8"],
        describe="The data type of the output (default: the input's).",
    )
    keepdims = field(bool, default=False, describe="Keep reduced axes as dims of size 1.")


# -- shapes -----------------------------------------------------------------------------------


def reduced_axes(op_name: str, shape: Shape, axis: Any, exclude: bool = False) -> tuple[int, ...]:
    """The sorted, non-negative axes to reduce; InferError naming a bad or repeated axis."""
    ndim = len(shape)
    if axis is None or len(axis) == 0:
        return tuple(range(ndim))
    axes = []
    for a in axis:
        if not -ndim <= a < ndim:
            raise InferError(
                f"{op_name}: axis {a} is out of range for input shape {shape_str(shape)} "
                f"(expected -{ndim} <= axis < {ndim})"
            )
        axes.append(a % ndim)
    if len(set(axes)) != len(axes):
        raise InferError(f"{op_name}: axis {tuple(axis)} names an axis twice (ndim {ndim})")
    if exclude:
        return tuple(d for d in range(ndim) if d not in axes)
    return tuple(sorted(axes))


def reduce_shape(shape: Shape, axes: tuple[int, ...], keepdims: bool) -> Shape:
    """Output shape: reduced axes dropped (or 1 with keepdims); (1,) if nothing is left."""
    if keepdims:
        return tuple(1 if d in axes else n for d, n in enumerate(shape))
    kept = tuple(n for d, n in enumerate(shape) if d not in axes)
    return kept or (1,)


_NO_IDENTITY = frozenset({"max", "min"})


def _infer_reduce(
    attrs: NodeAttrs, in_shapes: list[Shape | None], out_shapes: list[Shape | None]
) -> bool:
    """Output from input; unknown kept input dims are filled back from the output."""
    name, p = attrs.op.name, attrs.parsed  # type: ignore[union-attr]
    src = in_shapes[0]
    if src is None:
        return False
    axes = reduced_axes(name, src, p.axis, getattr(p, "exclude", False))
    if name in _NO_IDENTITY and any(src[d] == 0 for d in axes):
        raise InferError(
            f"{name}: cannot reduce over a zero-size axis of input 'data' of shape "
            f"{shape_str(src)} (max and min have no identity value)"
        )
    shape_assign(out_shapes, 0, reduce_shape(src, axes, p.keepdims), f"{name}: output 'output'")
    out = out_shapes[0]
    assert out is not None
    kept = [d for d in range(len(src)) if d not in axes]
    where = {d: (d if p.keepdims else i) for i, d in enumerate(kept)}
    back = tuple(out[where[d]] if d in where and n is None else n for d, n in enumerate(src))
    shape_assign(in_shapes, 0, back, f"{name}: input 'data'")
    return shape_is_known(in_shapes[0]) and shape_is_known(out)


def _keep_shape(attrs: NodeAttrs, shape: tuple[int, ...]) -> tuple[int, ...]:
    """The input shape with reduced axes set to 1 (the output in keepdims form)."""
    p = attrs.parsed
    axes = reduced_axes(attrs.op.name, shape, p.axis, getattr(p, "exclude", False))  # type: ignore[union-attr]
    return tuple(1 if d in axes else n for d, n in enumerate(shape))


# -- reduce_to: CPU ---------------------------------------------------------------------------

_UFUNCS = {"sum": np.add, "max": np.maximum, "min": np.minimum, "prod": np.multiply}
_NAN_REDUCERS: dict[str, Any] = {"nansum": np.nansum, "nanprod": np.nanprod}


def _reduce_cpu(
    out: np.ndarray, add: bool, x: np.ndarray, small: tuple[int, ...], red: str, scale: float
) -> None:
    axes = tuple(d for d in range(x.ndim) if small[d] == 1 and x.shape[d] != 1)
    o = out.reshape(small)
    acc = np.float32 if x.dtype == np.float16 else None  # no float16 accumulation
    if red in _UFUNCS and not add and scale == 1.0 and acc is None and x.dtype == out.dtype:
        _UFUNCS[red].reduce(x, axis=axes, keepdims=True, out=o)
        return
    if red == "nrm2":  # sqrt(sum x^2)
        res = np.sqrt(np.add.reduce(np.square(x, dtype=acc), axis=axes, keepdims=True))
    elif red in _NAN_REDUCERS:  # NaN counts as 0 (nansum) or 1 (nanprod)
        res = _NAN_REDUCERS[red](x, axis=axes, keepdims=True, dtype=acc)
    elif red == "nrm1":  # sum |x|
        res = np.add.reduce(np.abs(x), axis=axes, keepdims=True, dtype=acc)
    else:
        res = _UFUNCS[red].reduce(x, axis=axes, keepdims=True, dtype=acc)
    if scale != 1.0:
        res = res * scale
    if add:
        np.add(o, res, out=o, casting="unsafe")
    else:
        np.copyto(o, res, casting="unsafe")


def reduce_to(
    ctx: Any, out: Any, req: Any, x: Any, small: tuple[int, ...], red: str, scale: float = 1.0
) -> None:
    """out (+)= scale * reduce(x) over the axes where `small` (x's rank) is 1.

    `red` is 'sum', 'max', 'min', 'prod', 'nrm2' (sqrt of sum of squares), 'nrm1',
    'nansum' or 'nanprod' (NaN counts as 0 / 1).
    """
    mode = req_mode(f"reduce_{red}", req)
    if mode is None or out.size == 0:
        return
    if isinstance(out, np.ndarray):
        _reduce_cpu(out, mode == "add", x, small, red, scale)
    else:
        reduce_gpu(ctx, out, mode == "add", x, small, red, scale)


# -- the ops ----------------------------------------------------------------------------------


def _forward(red: str, mean: bool = False) -> Any:
    def compute(
        attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
    ) -> None:
        x = inputs[0]
        small = _keep_shape(attrs, tuple(x.shape))
        scale = math.prod(small) / x.size if mean and x.size else 1.0
        reduce_to(ctx, outputs[0], req[0], x, small, red, scale)

    return compute


@kernel.elementwise
def _max_grad(x, dy, y):  # max/min: dx = dy where x equals the result (every tie)
    return dy if x == y else dy * 0


@kernel.elementwise
def _prod_grad(x, dy, y):  # d(prod)/dx_i = prod / x_i
    return dy * y / x


@kernel.elementwise
def _nrm2_grad(x, dy, y):  # d|x|_2/dx = x / |x|_2 (0 at x = 0)
    return dy * x / y if y != 0 else dy * 0


@kernel.elementwise
def _nrm1_grad(x, dy, y):  # d|x|_1/dx = sign(x)
    return dy if x > 0 else (-dy if x < 0 else dy * 0)


def _backward_broadcast(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any], mean: bool
) -> None:
    """dx = dy broadcast over the reduced axes (divided by their count for mean)."""
    dx, dy = outputs[0], inputs[0]
    if req_mode(attrs.op.name, req[0]) is None:  # type: ignore[union-attr]
        return
    small = _keep_shape(attrs, tuple(dx.shape))
    if mean and dx.size != dy.size:
        scaled = ctx.requested[0].get_space(small, dy.dtype)
        _mul_scalar.launch(ctx, scaled, "write", dy.reshape(small), dy.size / dx.size)
        dy = scaled
    broadcast_map(_identity, ctx, dx, req[0], dy.reshape(small))


def _backward_sum(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    _backward_broadcast(attrs, ctx, inputs, req, outputs, mean=False)


def _backward_mean(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    _backward_broadcast(attrs, ctx, inputs, req, outputs, mean=True)


def _backward_in_out(fn: Any) -> Any:
    """dx = k(x, dy, y), k = fn(attrs), with dy and y broadcast back over the reduced axes."""

    def compute(
        attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
    ) -> None:
        dy, x, y = inputs
        small = _keep_shape(attrs, tuple(x.shape))
        broadcast_map(fn(attrs), ctx, outputs[0], req[0], x, dy.reshape(small), y.reshape(small))

    return compute


def _backward_broadcast_to(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    """Gradient of broadcast_to/broadcast_axis: dy summed back to the input's shape."""
    dy, dx = inputs[0], outputs[0]
    small = (1,) * (len(dy.shape) - len(dx.shape)) + tuple(dx.shape)
    reduce_to(ctx, dx, req[0], dy, small, "sum")


def _norm_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    out_dtype = attrs.parsed.out_dtype
    if out_dtype is None:
        return bool(elemwise_type(1, 1)(attrs, in_types, out_types))
    type_assign(out_types, 0, np.dtype(out_dtype), f"{attrs.op.name}: output 'output'")  # type: ignore[union-attr]
    return in_types[0] is not None


def _temp_space(attrs: NodeAttrs) -> list[ResourceRequest]:
    return [ResourceRequest.kTempSpace]


def _register(name: str, param: type[Parameter], compute: Any, grad: Any, describe: str) -> None:
    (
        register_op(name)
        .describe(describe)
        .set_attr_parser(param)
        .set_num_inputs(1)
        .set_num_outputs(1)
        .set_attr(FInferShape, _infer_reduce)
        .set_attr(FInferType, _norm_type if param is NormParam else elemwise_type(1, 1))
        .set_attr(FCompute_cpu, compute)
        .set_attr(FCompute_gpu, compute)
        .set_attr(FGradient, grad)
        .add_argument("data", "NDArray-or-Symbol", "The input")
        .add_arguments(param.fields())
    )


def _register_backward(
    name: str, param: type[Parameter], compute: Any, n_in: int, temp: bool = False
) -> None:
    op = (
        register_op(name)
        .describe(f"Backward of {name.removeprefix('_backward_')}.")
        .set_attr_parser(param)
        .set_num_inputs(n_in)
        .set_num_outputs(1)
        .set_attr(TIsBackward, True)
        .set_attr(FCompute_cpu, compute)
        .set_attr(FCompute_gpu, compute)
    )
    if temp:
        op.set_attr(FResourceRequest, _temp_space)


_AXES = "over the given axes (all by default)"
for _name, _red, _grad, _doc in (
    ("sum", "sum", "_backward_sum", f"Computes the sum of array elements {_AXES}."),
    ("mean", "sum", "_backward_mean", f"Computes the mean of array elements {_AXES}."),
    ("prod", "prod", "_backward_prod", f"Computes the product of array elements {_AXES}."),
    ("max", "max", "_backward_max", f"Computes the max of array elements {_AXES}."),
    ("min", "min", "_backward_min", f"Computes the min of array elements {_AXES}."),
):
    _use = ElemwiseGradUseNone if _red == "sum" else ElemwiseGradUseInOut
    _register(_name, ReduceAxesParam, _forward(_red, _name == "mean"), _use(_grad), _doc)
for _name in ("sum", "max", "min"):
    register_op(_name).add_alias(f"{_name}_axis")

_register_backward("_backward_sum", ReduceAxesParam, _backward_sum, 1)
_register_backward("_backward_mean", ReduceAxesParam, _backward_mean, 1, temp=True)
_register_backward("_backward_prod", ReduceAxesParam, _backward_in_out(lambda attrs: _prod_grad), 3)
_register_backward("_backward_max", ReduceAxesParam, _backward_in_out(lambda attrs: _max_grad), 3)
_register_backward("_backward_min", ReduceAxesParam, _backward_in_out(lambda attrs: _max_grad), 3)


def _norm_forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    small = _keep_shape(attrs, tuple(inputs[0].shape))
    red = "nrm2" if attrs.parsed.ord == 2 else "nrm1"
    reduce_to(ctx, outputs[0], req[0], inputs[0], small, red)


_register(
    "norm",
    NormParam,
    _norm_forward,
    ElemwiseGradUseInOut("_backward_norm"),
    "Computes the norm of an array: the 2-norm sqrt(sum x^2) (ord=2) or the 1-norm "
    f"sum |x| (ord=1), {_AXES}.",
)
_register_backward(
    "_backward_norm",
    NormParam,
    _backward_in_out(lambda attrs: _nrm2_grad if attrs.parsed.ord == 2 else _nrm1_grad),
    3,
)

# broadcast_to / broadcast_axis (broadcast.py) send their gradient here: sum dy back to
# the input's shape, which this backward op gets from the forward node
_register_backward("_broadcast_backward", ReduceAxesParam, _backward_broadcast_to, 1)
