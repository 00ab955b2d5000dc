"""_rnn_param_concat: Concat whose shape inference can split the output among unknown inputs.

Gluon's RNN layers join every layer's i2h/h2h weights and biases into the one flat
parameter vector the fused RNN op reads. Some of those parameters have deferred shapes
(input size not known yet): the RNN op knows the vector's length, and the concat has to
hand the remainder back to the unknown inputs. Concat does that for one unknown input;
this op, as MXNet's, also splits the remainder evenly between two (an i2h weight and its
h2h twin have equal sizes). More than two unknowns is ambiguous and an error, as in MXNet.

Forward, backward and type inference are Concat's (concat.py).
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
)
from ..base import InferError
from ..graph.grad import ElemwiseGradUseNone
from ..infer import elemwise_type, shape_assign, shape_is_known, shape_str
from ..registry import NodeAttrs, register_op
from .concat import ConcatParam, _concat_forward, _concat_shape, _num_args
from .shape import normalize_axis

OP = "_rnn_param_concat"


def _rnn_param_concat_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    if _concat_shape(attrs, in_shapes, out_shapes):
        return True
    out = out_shapes[0]
    if out is None:
        return False
    dim = attrs.parsed.dim
    axis = normalize_axis(OP, "dim", dim, len(out), "the output")
    if out[axis] is None:
        return False
    unknown = [i for i, s in enumerate(in_shapes) if s is None or s[axis] is None]
    if len(unknown) > 2:
        raise InferError(
            f"{OP}: {len(unknown)} inputs have an unknown size along dim={dim}; the output's "
            f"size can be split between 1 or 2 of them"
        )
    rest = out[axis] - sum(s[axis] for s in in_shapes if s is not None and s[axis] is not None)
    if len(unknown) == 2:
        if rest % 2:
            raise InferError(
                f"{OP}: inputs 'arg{unknown[0]}' and 'arg{unknown[1]}' share the remaining "
                f"{rest} of the output {shape_str(out)} along dim={dim}, which is odd"
            )
        for i in unknown:
            s = in_shapes[i]
            shape_assign(in_shapes, i, (*s[:axis], rest // 2, *s[axis + 1 :]), f"{OP}: arg{i}")
    return all(shape_is_known(s) for s in (*in_shapes, *out_shapes))


(
    register_op(OP)
    .describe(
        "Concat for the fused RNN's parameter vector: joins the input arrays along dim "
        "like Concat. When the output's size along dim is known and one or two inputs' "
        "sizes are not, the remainder goes to them (split evenly between two)."
    )
    .set_attr_parser(ConcatParam)
    .set_key_var_num_args("num_args")
    .set_num_inputs(_num_args)
    .set_num_outputs(1)
    .set_attr(FListInputNames, lambda attrs: [f"arg{i}" for i in range(_num_args(attrs))])
    .set_attr(FInferShape, _rnn_param_concat_shape)
    .set_attr(FInferType, elemwise_type(-1, 1))
    .set_attr(FCompute_cpu, _concat_forward)
    .set_attr(FCompute_gpu, _concat_forward)
    .set_attr(FGradient, ElemwiseGradUseNone("_backward_Concat"))
    .add_argument("data", "NDArray-or-Symbol[]", "List of arrays to concatenate")
    .add_arguments(ConcatParam.fields())
)
