"""Small test ops for the pass tests, registered for one module and undone afterwards.

The names start with "t_" (backward ops with "_t_backward_") so they never meet the
built-in ops. Each op exercises one attribute the passes read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from nnvmpy import registry
from nnvmpy.attrs import (
    FGradient,
    FInferShape,
    FInferType,
    FInplaceIdentity,
    FInplaceOption,
    FListInputNames,
    FMutateInputs,
    TIsBackward,
)
from nnvmpy.graph import (
    ElemwiseGradUseIn,
    ElemwiseGradUseNone,
    ElemwiseGradUseOut,
    Node,
    NodeEntry,
    make_grad_node,
    make_node,
)
from nnvmpy.infer import elemwise_shape, elemwise_type
from nnvmpy.registry import NodeAttrs, register_op

OpFn = Callable[..., NodeEntry]


def make_op(op_name: str, *inputs: NodeEntry, name: str | None = None, **attrs: Any) -> NodeEntry:
    """Output 0 of a new node applying `op_name` (named after the op unless given)."""
    return NodeEntry(make_node(op_name, name or op_name, list(inputs), attrs))


def make_var(name: str, **attrs: str) -> NodeEntry:
    return NodeEntry(Node.variable(name, attrs))


@pytest.fixture
def op() -> OpFn:
    """op("t_add", a, b, name="s", **attrs) -> NodeEntry."""
    return make_op


@pytest.fixture
def var() -> OpFn:
    """var("x", __shape__="(2, 3)") -> NodeEntry of a new variable."""
    return make_var


def _elemwise(name: str, n_in: int, n_out: int = 1, inplace: bool = True) -> Any:
    o = (
        register_op(name)
        .set_num_inputs(n_in)
        .set_num_outputs(n_out)
        .set_attr(FInferShape, elemwise_shape(n_in, n_out))
        .set_attr(FInferType, elemwise_type(n_in, n_out))
    )
    if inplace:
        o.set_attr(FInplaceOption, lambda attrs: [(0, 0)])
    return o


def _backward(name: str, n_in: int, n_out: int) -> None:
    register_op(name).set_num_inputs(n_in).set_num_outputs(n_out).set_attr(TIsBackward, True)


def _fc_shape(attrs: NodeAttrs, ins: list[Any], outs: list[Any]) -> bool:
    """out (N, M) = data (N, K) · weight (M, K)ᵀ, M = num_hidden; fills any side it can."""
    m = int(attrs.dict["num_hidden"])
    data, out = ins[0], outs[0]
    n = (data and data[0]) or (out and out[0])
    k = (data and data[1]) or (ins[1] and ins[1][1])
    if k is not None:
        ins[1] = (m, k)  # the fixpoint merges and reports a conflict with the known weight
    if n is not None or k is not None:
        ins[0] = (n, k)
        outs[0] = (n, m)
    return None not in (n, k)


def _like_data(attrs: NodeAttrs, ins: list[Any], outs: list[Any]) -> bool:
    """The output has the shape of input 0; other inputs are the op's business."""
    head = ins[:1]
    done = bool(elemwise_shape(1, 1)(attrs, head, outs))
    ins[0] = head[0]
    return done


def _resize_shape(attrs: NodeAttrs, ins: list[Any], outs: list[Any]) -> bool:
    """out = (size,) whatever the input: an op whose output size differs from its input."""
    outs[0] = (int(attrs.dict["size"]),)
    return ins[0] is not None


def _fc_grad(node: Node, ograds: list[NodeEntry]) -> list[NodeEntry]:
    return make_grad_node("_t_backward_fc", node, [ograds[0], *node.inputs])


def _loss_grad(node: Node, ograds: list[NodeEntry]) -> list[NodeEntry]:
    # like SoftmaxOutput: the head gradient is ignored
    return make_grad_node("_t_backward_loss", node, list(node.inputs))


def _num_args(attrs: NodeAttrs) -> int:
    return int(attrs.dict["num_args"])


def register_test_ops() -> None:
    for name in ("t_add", "t_mul"):
        _elemwise(name, 2).set_attr(FListInputNames, lambda attrs: ["lhs", "rhs"])
    register_op("t_add").set_attr(FGradient, lambda node, og: [og[0], og[0]])
    register_op("t_mul").set_attr(FGradient, ElemwiseGradUseIn("_t_backward_mul"))
    _backward("_t_backward_mul", 3, 2)
    _elemwise("t_relu", 1).set_attr(FGradient, ElemwiseGradUseOut("_t_backward_relu"))
    _backward("_t_backward_relu", 2, 1)
    register_op("_t_backward_relu").set_attr(FInplaceOption, lambda attrs: [(0, 0)])
    _elemwise("t_identity", 1).set_attr(FInplaceIdentity, lambda attrs: [True])
    _elemwise("t_split2", 1, 2, inplace=False).set_attr(
        FGradient, ElemwiseGradUseNone("_t_backward_split2")
    )
    _backward("_t_backward_split2", 2, 1)
    (
        register_op("t_add_n")
        .set_num_inputs(_num_args)
        .set_attr(FInferShape, elemwise_shape(-1, 1))
        .set_attr(FInferType, elemwise_type(-1, 1))
        .set_attr(FGradient, lambda node, og: [og[0]] * len(node.inputs))
    )
    _elemwise("t_zeros_like", 1, inplace=False)
    (
        register_op("t_fc")
        .set_num_inputs(2)
        .set_attr(FInferShape, _fc_shape)
        .set_attr(FListInputNames, lambda attrs: ["data", "weight"])
        .set_attr(FGradient, _fc_grad)
    )
    _backward("_t_backward_fc", 3, 2)
    (
        register_op("t_loss")
        .set_num_inputs(2)
        .set_attr(FGradient, _loss_grad)
        .set_attr(FInferShape, _like_data)
        .set_attr(FListInputNames, lambda attrs: ["data", "label"])
    )
    _backward("_t_backward_loss", 2, 2)
    (
        register_op("t_bn")
        .set_num_inputs(2)
        .set_attr(FMutateInputs, lambda attrs: [1])
        .set_attr(FListInputNames, lambda attrs: ["data", "moving_mean"])
        .set_attr(FInferShape, _like_data)
    )
    (
        register_op("t_resize")
        .set_attr(FInferShape, _resize_shape)
        .set_attr(FInplaceOption, lambda attrs: [(0, 0)])
    )
    register_op("t_noshape").set_num_inputs(1)  # no FInferShape, no FGradient


@pytest.fixture(scope="module", autouse=True)
def test_ops() -> Iterator[None]:
    with registry.scoped_registry():
        register_test_ops()
        yield
