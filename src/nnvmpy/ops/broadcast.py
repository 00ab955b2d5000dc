"""Broadcasting arithmetic (broadcast_add, ...) and broadcast_to / broadcast_axis.

Shapes broadcast as in NumPy and MXNet: align from the right, each pair of dims equal or
one of them 1, the result takes the larger. Inference works on partial shapes (None for
an unknown dim) in both directions where the rule decides a dim; an operand whose rank
is unknown decides nothing.

Forward ops run one element-wise kernel through `broadcast_map`. Backward ops produce
both input gradients: the kernel's derivative over the output's index space, then a sum
over each input's broadcast axes (`reduce_to`), MXNet's BinaryBroadcastBackwardUse*.
"""

from __future__ import annotations

from typing import Any

from ..attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FListInputNames,
    FResourceRequest,
    TIsBackward,
)
from ..base import InferError, OpReqType, Shape
from ..graph.grad import (
    ElemwiseGradUseIn,
    ElemwiseGradUseNone,
    make_grad_node,
    make_node,
    make_zero_grad_nodes,
)
from ..graph.node import NodeEntry
from ..infer import elemwise_type, shape_assign, shape_is_known, shape_str
from ..kernel.elementwise import req_mode
from ..param import Parameter, field
from ..param import Shape as ShapeField
from ..registry import NodeAttrs, register_op
from ..resource import ResourceRequest
from ._bilinear import bilinear_backward_gradient
from ._broadcast_map import Kernel, broadcast_map
from ._mod import integer_gradients_are_zero
from .elemwise_binary import (
    _add,
    _div,
    _div_grad_lhs,
    _div_grad_rhs,
    _hypot,
    _hypot_grad_lhs,
    _hypot_grad_rhs,
    _mod,
    _mod_grad_lhs,
    _mod_grad_rhs,
    _mul,
    _mul_grad_lhs,
    _mul_grad_rhs,
    _rmaximum_grad,
    _rminimum_grad,
    _rpower_grad,
    _sub,
)
from .elemwise_scalar import (
    _equal,
    _greater,
    _lesser,
    _maximum,
    _maximum_grad,
    _minimum,
    _minimum_grad,
    _power,
    _power_grad,
)
from .elemwise_unary import _identity, _negative
from .reduce import reduce_to

# -- shape rules ------------------------------------------------------------------------------


def broadcast_shape(op_name: str, lhs: Shape, rhs: Shape) -> Shape:
    """The broadcast of two (partial) shapes; a None dim stays None only if undecided."""
    n = max(len(lhs), len(rhs))
    a = (1,) * (n - len(lhs)) + tuple(lhs)
    b = (1,) * (n - len(rhs)) + tuple(rhs)
    out: list[int | None] = []
    for x, y in zip(a, b):
        if x is not None and y is not None:
            if x != y and x != 1 and y != 1:
                raise InferError(
                    f"{op_name}: operands could not be broadcast together with shapes "
                    f"{shape_str(tuple(lhs))} and {shape_str(tuple(rhs))}"
                )
            out.append(y if x == 1 else x)
        else:  # an unknown dim broadcast with k is k, unless k is 1
            known = x if x is not None else y
            out.append(None if known is None or known == 1 else known)
    return tuple(out)


def _fill_from_output(mine: Shape, other: Shape, out: Shape) -> Shape:
    """Unknown dims of one operand that the output and the other operand decide."""
    filled = list(mine)
    for k in range(1, len(mine) + 1):
        if mine[-k] is not None or k > len(out) or out[-k] is None:
            continue
        o = out[-k]
        theirs = other[-k] if k <= len(other) else 1
        if theirs == 1:  # the other side is broadcast here, so this side is the output
            filled[-k] = o
        elif o == 1:
            filled[-k] = 1
    return tuple(filled)


def infer_broadcast_binary(
    attrs: NodeAttrs, in_shapes: list[Shape | None], out_shapes: list[Shape | None]
) -> bool:
    """FInferShape of broadcast_*: output = broadcast(lhs, rhs); input dims filled back."""
    name = attrs.op.name if attrs.op is not None else "broadcast"
    lhs, rhs = in_shapes
    if lhs is None or rhs is None:  # an operand's rank is unknown: nothing is decided
        return False
    shape_assign(out_shapes, 0, broadcast_shape(name, lhs, rhs), f"{name}: output 'output'")
    out = out_shapes[0]
    assert out is not None
    shape_assign(in_shapes, 0, _fill_from_output(lhs, rhs, out), f"{name}: input 'lhs'")
    shape_assign(in_shapes, 1, _fill_from_output(rhs, lhs, out), f"{name}: input 'rhs'")
    return all(shape_is_known(s) for s in (*in_shapes, out))


# -- the binary ops ---------------------------------------------------------------------------


def _binary_compute(fn: Kernel) -> Any:
    def compute(
        attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
    ) -> None:
        broadcast_map(fn, ctx, outputs[0], req[0], inputs[0], inputs[1])

    compute.__name__ = f"compute_broadcast{fn.name}"
    return compute


def _names(attrs: NodeAttrs) -> list[str]:
    return ["lhs", "rhs"]


def register_broadcast_binary(name: str, fn: Kernel, describe: str, grad: Any) -> None:
    """One broadcasting binary op: NumPy shape rule, one kernel for CPU and GPU."""
    compute = _binary_compute(fn)
    (
        register_op(name)
        .describe(describe + " The shapes of lhs and rhs broadcast as in NumPy.")
        .set_num_inputs(2)
        .set_num_outputs(1)
        .set_attr(FListInputNames, _names)
        .set_attr(FInferShape, infer_broadcast_binary)
        .set_attr(FInferType, elemwise_type(2, 1))
        .set_attr(FCompute_cpu, compute)
        .set_attr(FCompute_gpu, compute)
        .set_attr(FGradient, grad)
        .add_argument("lhs", "NDArray-or-Symbol", "First input to the function")
        .add_argument("rhs", "NDArray-or-Symbol", "Second input to the function")
    )


def _reduce_into(ctx: Any, out: Any, req: Any, x: Any, scale: float) -> None:
    """out (+)= scale * sum of x over the axes out was broadcast along."""
    small = (1,) * (len(x.shape) - len(out.shape)) + tuple(out.shape)
    reduce_to(ctx, out, req, x, small, "sum", scale)


def _backward_compute(grads: tuple[Kernel | None, Kernel | None], negate_rhs: bool) -> Any:
    """Both input gradients: g_i = sum over broadcast axes of grads[i](dy, lhs, rhs).

    With grads None (add/sub), g_i = sum of dy (negated for sub's rhs) and the op takes
    only dy; the shapes of lhs and rhs come from the outputs, sized by the forward node.
    """

    def compute(
        attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
    ) -> None:
        dy = inputs[0]
        temp = None
        for i, (fn, out) in enumerate(zip(grads, outputs)):
            if req_mode("broadcast backward", req[i]) is None:
                continue
            same = out.size == dy.size
            if fn is None:
                sign = -1.0 if (i == 1 and negate_rhs) else 1.0
                if same:
                    (_negative if sign < 0 else _identity).launch(
                        ctx, out, req[i], dy.reshape(out.shape)
                    )
                else:
                    _reduce_into(ctx, out, req[i], dy, sign)
            elif same:
                broadcast_map(fn, ctx, out.reshape(dy.shape), req[i], *inputs)
            else:
                if temp is None:
                    temp = ctx.requested[0].get_space(tuple(dy.shape), dy.dtype)
                broadcast_map(fn, ctx, temp, OpReqType.kWriteTo, *inputs)
                _reduce_into(ctx, out, req[i], temp, 1.0)

    return compute


def _temp_space(attrs: NodeAttrs) -> list[ResourceRequest]:
    return [ResourceRequest.kTempSpace]


def register_broadcast_backward(
    name: str, grads: tuple[Kernel | None, Kernel | None], n_in: int, negate_rhs: bool = False
) -> None:
    compute = _backward_compute(grads, negate_rhs)
    op = (
        register_op(name)
        .describe(f"Backward of {name.removeprefix('_backward_')}: (dlhs, drhs).")
        .set_num_inputs(n_in)
        .set_num_outputs(2)
        .set_attr(TIsBackward, True)
        .set_attr(FCompute_cpu, compute)
        .set_attr(FCompute_gpu, compute)
    )
    if n_in > 1:
        op.set_attr(FResourceRequest, _temp_space)


# name, aliases, kernel, what it returns, gradient kernels (dlhs, drhs) from (dy, lhs, rhs);
# None: the gradient needs only dy (summed back, negated for sub's rhs)
_ARITH: list[tuple[str, tuple[str, ...], Kernel, str, tuple[Kernel, Kernel] | None]] = [
    ("broadcast_add", ("broadcast_plus",), _add, "lhs + rhs", None),
    ("broadcast_sub", ("broadcast_minus",), _sub, "lhs - rhs", None),
    ("broadcast_mul", (), _mul, "lhs * rhs", (_mul_grad_lhs, _mul_grad_rhs)),
    ("broadcast_div", (), _div, "lhs / rhs", (_div_grad_lhs, _div_grad_rhs)),
    ("broadcast_power", (), _power, "lhs ^ rhs", (_power_grad, _rpower_grad)),
    # max/min: dy goes to lhs where lhs >= rhs (<= for min), else to rhs
    ("broadcast_maximum", (), _maximum, "max(lhs, rhs)", (_maximum_grad, _rmaximum_grad)),
    ("broadcast_minimum", (), _minimum, "min(lhs, rhs)", (_minimum_grad, _rminimum_grad)),
    ("broadcast_hypot", (), _hypot, "sqrt(lhs^2 + rhs^2)", (_hypot_grad_lhs, _hypot_grad_rhs)),
    (
        "broadcast_mod",
        (),
        _mod,
        "lhs mod rhs (sign of rhs; 0 where rhs is 0)",
        (_mod_grad_lhs, _mod_grad_rhs),
    ),
]
for _name, _aliases, _fn, _what, _grads in _ARITH:
    _bwd = f"_backward_{_name}"
    _grad = ElemwiseGradUseNone(_bwd) if _grads is None else ElemwiseGradUseIn(_bwd)
    register_broadcast_binary(_name, _fn, f"Returns {_what}, element-wise.", _grad)
    for _alias in _aliases:
        register_op(_name).add_alias(_alias)
    register_broadcast_backward(
        _bwd, _grads or (None, None), 1 if _grads is None else 3, _name == "broadcast_sub"
    )
integer_gradients_are_zero("_backward_broadcast_mod")


# Gradients of the backward ops (autograd.grad(create_graph=True)). add/sub: (dl, dr) are
# dy summed back to each shape, whose adjoint broadcasts (gl, gr) back: gl + gr, gl - gr.
# mul is bilinear (ops/_bilinear.py).
def _sum_back_gradient(forward_op: str) -> Any:
    def gradient(node: Any, ograds: list[Any]) -> list[Any]:
        ddy = make_node(forward_op, f"{node.name}_ddy", [ograds[0], ograds[1]])
        return [NodeEntry(ddy, 0)]

    return gradient


register_op("_backward_broadcast_add").set_attr(FGradient, _sum_back_gradient("broadcast_add"))
register_op("_backward_broadcast_sub").set_attr(FGradient, _sum_back_gradient("broadcast_sub"))
register_op("_backward_broadcast_mul").set_attr(
    FGradient, bilinear_backward_gradient("broadcast_mul")
)

# comparisons: the output is piecewise constant, so both gradients are zero
for _name, _fn, _what in (
    ("broadcast_equal", _equal, "lhs == rhs"),
    ("broadcast_greater", _greater, "lhs > rhs"),
    ("broadcast_lesser", _lesser, "lhs < rhs"),
):
    register_broadcast_binary(
        _name, _fn, f"Returns 1 where {_what} and 0 elsewhere.", make_zero_grad_nodes
    )


# -- broadcast_to, broadcast_axis -------------------------------------------------------------


class BroadcastToParam(Parameter):
    shape = field(
        ShapeField,
        default=(),
        describe="The shape of the desired array. A dim of 0 keeps the input's dim, so "
        "broadcast_to(B, shape=(10, 0, 0)) is broadcast_axis(B, axis=0, size=10).",
    )


class BroadcastAxesParam(Parameter):
    axis = field(ShapeField, default=(), describe="The axes to perform the broadcasting.")
    size = field(ShapeField, default=(), describe="Target sizes of the broadcasting axes.")


def _infer_broadcast_to(
    attrs: NodeAttrs, in_shapes: list[Shape | None], out_shapes: list[Shape | None]
) -> bool:
    """Output = `shape` with 0 dims copied from the input (a shorter input is padded with 1s)."""
    name, target = attrs.op.name, tuple(attrs.parsed.shape)  # type: ignore[union-attr]
    src = in_shapes[0]
    if src is None:
        return False
    if len(src) > len(target) or not target:
        raise InferError(
            f"{name}: cannot broadcast an array of shape {shape_str(src)} to shape "
            f"{shape_str(target)}; 'shape' needs at least {len(src)} dims"
        )
    pad = len(target) - len(src)
    padded = (1,) * pad + tuple(src)
    out = []
    for d, (i, want) in enumerate(zip(padded, target)):
        if want < 0:
            raise InferError(f"{name}: 'shape' {shape_str(target)} has a negative dim")
        if want == 0:
            out.append(i)
        elif i is None or i in (1, want):
            out.append(want)
        else:
            raise InferError(
                f"{name}: cannot broadcast an array of shape {shape_str(src)} to shape "
                f"{shape_str(target)}: dim {d} is {i}, which is neither 1 nor {want}"
            )
    shape_assign(out_shapes, 0, tuple(out), f"{name}: output 'output'")
    done = out_shapes[0]
    assert done is not None
    # an unknown input dim is the output's where shape keeps it, 1 where shape asks for 1
    back = tuple(
        done[pad + d] if i is None and target[pad + d] in (0, 1) else i for d, i in enumerate(src)
    )
    shape_assign(in_shapes, 0, back, f"{name}: input 'data'")
    return shape_is_known(in_shapes[0]) and shape_is_known(done)


def _infer_broadcast_axis(
    attrs: NodeAttrs, in_shapes: list[Shape | None], out_shapes: list[Shape | None]
) -> bool:
    """Output = input with dim axis[i] (which must be 1) set to size[i]."""
    name, p = attrs.op.name, attrs.parsed  # type: ignore[union-attr]
    src = in_shapes[0]
    if len(p.axis) != len(p.size):
        raise InferError(
            f"{name}: 'axis' {shape_str(p.axis)} and 'size' {shape_str(p.size)} must have "
            "the same length"
        )
    if src is None:
        return False
    out = list(src)
    for ax, size in zip(p.axis, p.size):
        a = ax + len(src) if ax < 0 else ax
        if not 0 <= a < len(src):
            raise InferError(
                f"{name}: 'axis' {ax} is out of range for input shape {shape_str(src)} "
                f"(expected -{len(src)} <= axis < {len(src)})"
            )
        if src[a] not in (None, 1):
            raise InferError(
                f"{name}: broadcasting axis {ax} must have size 1, but the input shape "
                f"is {shape_str(src)}"
            )
        if size < 1:
            raise InferError(f"{name}: 'size' {shape_str(p.size)} must be positive")
        out[a] = size
    shape_assign(out_shapes, 0, tuple(out), f"{name}: output 'output'")
    axes = {a + len(src) if a < 0 else a for a in p.axis}
    done = out_shapes[0]
    assert done is not None
    back = tuple(1 if d in axes else done[d] for d in range(len(src)))
    shape_assign(in_shapes, 0, back, f"{name}: input 'data'")
    return shape_is_known(in_shapes[0]) and shape_is_known(done)


def _broadcast_to_compute(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    broadcast_map(_identity, ctx, outputs[0], req[0], inputs[0])


def _broadcast_grad(node: Any, ograds: list[Any]) -> list[Any]:
    # dx = sum of dy over the broadcast axes, back to the input's shape
    return make_grad_node("_broadcast_backward", node, list(ograds), {"keepdims": "true"})


def _broadcast_backward_grad(node: Any, ograds: list[Any]) -> list[Any]:
    """The adjoint of summing back is broadcasting again: the forward op applied to g."""
    fwd = node.control_deps[0]
    # broadcast_like takes its target shape from a second input: keep it
    inputs = [ograds[0], *fwd.inputs[1:]]
    again = make_node(fwd.op.name, f"{node.name}_ddy", inputs, fwd.attrs.dict)
    return [NodeEntry(again, 0)]


register_op("_broadcast_backward").set_attr(FGradient, _broadcast_backward_grad)


for _name, _param, _infer, _doc in (
    (
        "broadcast_to",
        BroadcastToParam,
        _infer_broadcast_to,
        "Broadcasts the input array to a new shape; dims of size 1 are repeated.",
    ),
    (
        "broadcast_axis",
        BroadcastAxesParam,
        _infer_broadcast_axis,
        "Broadcasts the input array over particular axes, which must have size 1.",
    ),
):
    (
        register_op(_name)
        .describe(_doc)
        .set_attr_parser(_param)
        .set_num_inputs(1)
        .set_num_outputs(1)
        .set_attr(FInferShape, _infer)
        .set_attr(FInferType, elemwise_type(1, 1))
        .set_attr(FCompute_cpu, _broadcast_to_compute)
        .set_attr(FCompute_gpu, _broadcast_to_compute)
        .set_attr(FGradient, _broadcast_grad)
        .add_argument("data", "NDArray-or-Symbol", "The input")
        .add_arguments(_param.fields())
    )
register_op("broadcast_axis").add_alias("broadcast_axes")
