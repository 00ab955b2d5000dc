"""SVMOutput: a support-vector-machine head (one-vs-rest hinge loss on class scores).

The forward output is data itself; the backward pass gives data the gradient of the
hinge loss against `label` (class ids), ignoring the head gradient. data (..., K) holds
K class scores per example, label (...) one class id each. With margin m and
regularization coefficient c, for score x of class k and gold class y:

    use_linear (L1-SVM):  k == y: -c * [m > x]              k != y: c * [m > -x]
    default    (L2-SVM):  k == y: -2c * max(m - x, 0)       k != y: 2c * max(m + x, 0)

(the derivatives of c * max(m - x, 0) and c * max(m + x, 0), squared for L2). A label
outside [0, K) marks no class as gold, as in MXNet. label gets a zero gradient. One
work item per example.
"""

from __future__ import annotations

import math
from typing import Any

from ...attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FInplaceOption,
    FListInputNames,
    TIsBackward,
)
from ...base import InferError
from ...graph.grad import make_grad_node
from ...graph.node import NodeEntry
from ...infer import shape_assign, shape_str, type_assign
from ...kernel import parallel_for
from ...kernel.launch import NULL, req_code, run_rows, store
from ...param import Parameter, field
from ...registry import NodeAttrs, register_op
from ..elemwise_unary import _identity
from ..init import _fill
from ._layer_util import via_float32


class SVMOutputParam(Parameter):
    margin = field(
        float,
        default=1.0,
        describe="The loss function penalizes outputs that lie "
        "outside this margin. Default margin is 1.",
    )
    regularization_coefficient = field(
        float,
        default=1.0,
        describe="Regularization parameter for the SVM. This balances the tradeoff between "
        "coefficient size and error.",
    )
    use_linear = field(
        bool,
        default=False,
        describe="Whether to use L1-SVM objective. L2-SVM objective is used by default.",
    )


@parallel_for
def _svm_grad_row(r, dx, out, label, k_len, margin, coef, linear, mode):
    gold = int(label[r])
    base = r * k_len
    for k in range(k_len):
        x = out[base + k]
        if k == gold:
            if linear:
                v = -coef if margin > x else 0.0
            else:
                v = -2.0 * coef * (margin - x) if margin > x else 0.0
        elif linear:
            v = coef if margin > -x else 0.0
        else:
            v = 2.0 * coef * (margin + x) if margin > -x else 0.0
        store(dx, base + k, v, mode)


def _infer_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    """out = data (both ways); label = data's shape without the class axis (the last)."""
    shape_assign(in_shapes, 0, out_shapes[0], "SVMOutput: input 'data'")
    shape_assign(out_shapes, 0, in_shapes[0], "SVMOutput: output 'output'")
    data = in_shapes[0]
    if data is None:
        return False
    if len(data) < 1:
        raise InferError(f"SVMOutput: input 'data' has shape {shape_str(data)}; expected (N, K)")
    shape_assign(in_shapes, 1, tuple(data[:-1]), "SVMOutput: input 'label'")
    return all(d is not None for d in (*in_shapes[0], *in_shapes[1]))


def _infer_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    # the label may have its own dtype (int class ids); by default it follows data
    type_assign(in_types, 0, out_types[0], "SVMOutput: input 'data'")
    type_assign(out_types, 0, in_types[0], "SVMOutput: output 'output'")
    if in_types[1] is None:
        type_assign(in_types, 1, in_types[0])
    return in_types[0] is not None and in_types[1] is not None


def _forward(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    _identity.launch(ctx, outputs[0], req[0], inputs[0])


@via_float32
def _backward(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]):
    out, label = inputs
    p = attrs.parsed
    _fill.launch(ctx, outputs[1], req[1], 0.0)
    mode = req_code("_backward_SVMOutput", req[0])
    if mode == NULL or out.size == 0:
        return
    k_len = tuple(out.shape)[-1]
    rows = math.prod(tuple(out.shape)[:-1])
    args = (outputs[0], out, label, k_len, p.margin, p.regularization_coefficient)
    run_rows(ctx, "_backward_SVMOutput", _svm_grad_row, rows, *args, p.use_linear, mode)


def _gradient(node: Any, ograds: list[Any]) -> list[Any]:
    """The hinge-loss gradient from (output, label); the head gradient is not read."""
    return make_grad_node("_backward_SVMOutput", node, [NodeEntry(node, 0), node.inputs[1]])


(
    register_op("SVMOutput")
    .describe(
        "Computes support vector machine based transformation of the input: the output is "
        "data; backward gives data the gradient of the (L2, or with use_linear L1) "
        "one-vs-rest hinge loss against `label`, without a head gradient."
    )
    .set_attr_parser(SVMOutputParam)
    .set_num_inputs(2)
    .set_num_outputs(1)
    .set_attr(FListInputNames, lambda attrs: ["data", "label"])
    .set_attr(FInferShape, _infer_shape)
    .set_attr(FInferType, _infer_type)
    .set_attr(FInplaceOption, lambda attrs: [(0, 0)])
    .set_attr(FCompute_cpu, _forward)
    .set_attr(FCompute_gpu, _forward)
    .set_attr(FGradient, _gradient)
    .add_argument("data", "NDArray-or-Symbol", "Input data for SVM transformation.")
    .add_argument("label", "NDArray-or-Symbol", "Class label for the input data.")
    .add_arguments(SVMOutputParam.fields())
)
(
    register_op("_backward_SVMOutput")
    .describe("Backward of SVMOutput: inputs (output, label).")
    .set_attr_parser(SVMOutputParam)
    .set_num_inputs(2)
    .set_num_outputs(2)
    .set_attr(TIsBackward, True)
    .set_attr(FInplaceOption, lambda attrs: [(0, 0)])
    .set_attr(FCompute_cpu, _backward)
    .set_attr(FCompute_gpu, _backward)
)
