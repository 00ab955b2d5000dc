"""stack: join arrays of one shape along a new axis (and its backward, which splits dy).

    y = stack(x_0, ..., x_{n-1}, axis=a)    y.shape = x.shape[:a] + (n,) + x.shape[a:]
    dx_i = dy[..., i, ...] along axis a

Seen as (outer, n, inner), stacking copies input i into band i, so this is Concat's band
copy (concat.copy_band) with bands of length 1.
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
    TIsBackward,
)
from ..base import InferError, Shape
from ..graph.grad import ElemwiseGradUseNone
from ..infer import elemwise_type, merge_shapes, shape_assign, shape_is_known, shape_str
from ..param import Parameter, field
from ..registry import NodeAttrs, register_op
from .concat import _bands
from .shape import normalize_axis


class StackParam(Parameter):
    axis = field(
        int,
        default=0,
        describe="The axis in the result array along which the input arrays are stacked.",
    )
    num_args = field(int, lower_bound=1, describe="Number of inputs to be stacked.")


def _stack_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    p = attrs.parsed
    common: Shape | None = None
    for i, s in enumerate(in_shapes):
        try:
            common = merge_shapes(common, s)
        except InferError:
            raise InferError(
                f"stack: input 'arg{i}' has shape {shape_str(s)} but input 'arg0'... have "
                f"{shape_str(common)}; all inputs must have one shape"
            ) from None
    out = out_shapes[0]
    if out is not None:  # the inputs' shape is the output's without the stacked axis
        a = normalize_axis("stack", "axis", p.axis, len(out), "the output")
        if out[a] is not None and out[a] != p.num_args:
            raise InferError(
                f"stack: output {shape_str(out)} has {out[a]} entries along axis {a} but "
                f"num_args is {p.num_args}"
            )
        common = merge_shapes(common, (*out[:a], *out[a + 1 :]))
    if common is None:
        return False
    a = normalize_axis("stack", "axis", p.axis, len(common) + 1, "the output")
    shape_assign(out_shapes, 0, (*common[:a], p.num_args, *common[a:]), "stack: output")
    for i in range(len(in_shapes)):
        shape_assign(in_shapes, i, common, f"stack: input 'arg{i}'")
    return shape_is_known(common)


def _axis(attrs: NodeAttrs, out_ndim: int) -> int:
    return normalize_axis("stack", "axis", attrs.parsed.axis, out_ndim, "the output")


def _stack_forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    _bands(ctx, req, outputs[0], inputs, _axis(attrs, outputs[0].ndim), join=True)


def _stack_backward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    _bands(ctx, req, inputs[0], outputs, _axis(attrs, inputs[0].ndim), join=False)


def _num_args(attrs: NodeAttrs) -> int:
    return int(attrs.parsed.num_args)


(
    register_op("stack")
    .describe(
        "Joins a sequence of arrays of one shape along a new axis: n arrays of shape "
        "(2, 3) stacked on axis=1 give (2, n, 3)."
    )
    .set_attr_parser(StackParam)
    .set_key_var_num_args("num_args")
    .set_num_inputs(_num_args)
    .set_num_outputs(1)
    .set_attr(FListInputNames, lambda attrs: [f"arg{i}" for i in range(_num_args(attrs))])
    .set_attr(FInferShape, _stack_shape)
    .set_attr(FInferType, elemwise_type(-1, 1))
    .set_attr(FCompute_cpu, _stack_forward)
    .set_attr(FCompute_gpu, _stack_forward)
    .set_attr(FGradient, ElemwiseGradUseNone("_backward_stack"))
    .add_argument("data", "NDArray-or-Symbol[]", "List of arrays to stack")
    .add_arguments(StackParam.fields())
)

(  # inputs (dy,) -> one gradient per forward input; shapes from the forward node
    register_op("_backward_stack")
    .set_attr_parser(StackParam)
    .set_num_inputs(1)
    .set_num_outputs(_num_args)
    .set_attr(TIsBackward, True)
    .set_attr(FCompute_cpu, _stack_backward)
    .set_attr(FCompute_gpu, _stack_backward)
)
