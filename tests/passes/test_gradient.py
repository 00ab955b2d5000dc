"""Gradient: structure of backward graphs, aggregation, pruning, zeros and errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from nnvmpy.base import NNVMError
from nnvmpy.graph import Graph, Node, NodeEntry, apply_passes, post_order
from nnvmpy.graph.attrs import SHAPE
from nnvmpy.registry import Op

Fn = Callable[..., NodeEntry]
T_OPS = {"grad_aggregate_op": "t_add_n", "grad_zero_op": "t_zeros_like"}


def grad(ys: list[NodeEntry], xs: list[NodeEntry], var: Fn, **attrs: Any) -> Graph:
    heads = [var(f"head{i}") for i in range(len(ys))]
    attrs = {**T_OPS, **attrs}
    return apply_passes(Graph(ys), "Gradient", grad_xs=xs, grad_ys_out_grad=heads, **attrs)


def op_names(graph: Graph) -> list[str]:
    return [n.op.name for n in post_order(graph.outputs) if n.op is not None]


def test_product_rule_builds_one_backward_node(op: Fn, var: Fn) -> None:
    x, w = var("x"), var("w")
    y = op("t_mul", x, w, name="y")
    g = grad([y], [x, w], var)
    dx, dw = g.outputs
    bwd = dx.node
    assert bwd is dw.node
    assert (dx.index, dw.index) == (0, 1)
    assert bwd.op is Op.get("_t_backward_mul")
    assert bwd.name == "y_backward"
    assert [e.node.name for e in bwd.inputs] == ["head0", "x", "w"]
    assert bwd.control_deps == [y.node]


def test_entry_used_twice_gets_one_aggregate_node(op: Fn, var: Fn) -> None:
    x, w = var("x"), var("w")
    r = op("t_relu", x, name="r")
    m = op("t_mul", x, w, name="m")
    y = op("t_add", r, m, name="y")
    (dx,) = grad([y], [x], var).outputs
    assert dx.node.op is Op.get("t_add_n")
    assert dx.node.name == "x_grad_sum"
    assert dx.node.attrs.dict == {"num_args": "2"}
    assert sorted(e.node.name for e in dx.node.inputs) == ["m_backward", "r_backward"]


def test_square_sums_both_outputs_of_the_backward_node(op: Fn, var: Fn) -> None:
    x = var("x")
    (dx,) = grad([op("t_mul", x, x, name="sq")], [x], var).outputs
    assert [(e.node.name, e.index) for e in dx.node.inputs] == [
        ("sq_backward", 0),
        ("sq_backward", 1),
    ]


def test_branch_not_leading_to_an_x_gets_no_backward_nodes(op: Fn, var: Fn) -> None:
    a, b = var("a"), var("b")
    y = op("t_add", op("t_relu", a, name="ra"), op("t_relu", b, name="rb"), name="y")
    g = grad([y], [a], var)
    names = [n.name for n in post_order(g.outputs)]
    assert "ra_backward" in names
    assert "rb_backward" not in names


def test_op_without_fgradient_off_the_path_is_fine(op: Fn, var: Fn) -> None:
    a, b = var("a"), var("b")
    y = op("t_add", op("t_relu", a), op("t_noshape", b, name="nog"), name="y")
    (da,) = grad([y], [a], var).outputs
    assert da.node.op is Op.get("_t_backward_relu")


def test_op_without_fgradient_on_the_path_is_named(op: Fn, var: Fn) -> None:
    a = var("a")
    y = op("t_relu", op("t_noshape", a, name="nog"))
    with pytest.raises(NNVMError, match=r"node 'nog' \(t_noshape\).*no FGradient"):
        grad([y], [a], var)


def test_loss_head_ignores_its_head_gradient(op: Fn, var: Fn) -> None:
    x, w, label = var("x"), var("w"), var("label")
    loss = op("t_loss", op("t_fc", x, w, name="fc", num_hidden=3), label, name="loss")
    g = grad([loss], [w], var)
    names = {n.name for n in post_order(g.outputs)}
    assert "head0" not in names
    (dw,) = g.outputs
    assert (dw.node.name, dw.index) == ("fc_backward", 1)
    assert dw.node.inputs[0].node.name == "loss_backward"


def test_x_without_a_path_gets_zeros(op: Fn, var: Fn) -> None:
    x, unused = var("x"), var("unused")
    g = grad([op("t_relu", x)], [x, unused], var)
    zero = g.outputs[1].node
    assert zero.op is Op.get("t_zeros_like")
    assert zero.inputs[0].node is unused.node


def test_unused_output_of_a_multi_output_node_gets_zeros(op: Fn, var: Fn) -> None:
    x = var("x")
    first = op("t_split2", x, name="split")  # output 1 is never read
    (dx,) = grad([op("t_relu", first)], [x], var).outputs
    ograds = dx.node.inputs
    assert dx.node.name == "split_backward"
    assert ograds[1].node.op is Op.get("t_zeros_like")
    assert ograds[1].node.inputs[0] == NodeEntry(first.node, 1)


def test_gradient_with_respect_to_an_intermediate_entry(op: Fn, var: Fn) -> None:
    x = var("x")
    h = op("t_relu", x, name="h")
    (dh,) = grad([op("t_relu", h, name="y")], [h], var).outputs
    assert dh.node.name == "y_backward"
    assert "h_backward" not in {n.name for n in post_order([dh])}


def test_default_ops_are_add_n_and_zeros_like(op: Fn, var: Fn) -> None:
    if "add_n" not in Op.list_op_names() or "zeros_like" not in Op.list_op_names():
        pytest.skip("the built-in add_n / zeros_like are not registered")
    x, other = var("x"), var("other")
    heads = [var("head")]
    g = apply_passes(
        Graph([op("t_add", x, x)]), "Gradient", grad_xs=[x, other], grad_ys_out_grad=heads
    )
    assert g.outputs[0].node.op is Op.get("add_n")
    assert g.outputs[1].node.op is Op.get("zeros_like")


def test_gradient_graph_infers_shapes(op: Fn, var: Fn) -> None:
    x, w = var("x"), var("w")
    y = op("t_relu", op("t_fc", x, w, name="fc", num_hidden=3))
    g = grad([y], [x, w], var)
    g = apply_passes(g, "InferShape", shapes={"x": (4, 5), "head0": (4, 3)})
    idx = g.indexed
    assert [g.attrs[SHAPE][idx.entry_id(e)] for e in g.outputs] == [(4, 5), (3, 5)]


def test_missing_inputs_name_the_keyword(op: Fn, var: Fn) -> None:
    y = op("t_relu", var("x"))
    with pytest.raises(NNVMError, match=r"Gradient needs graph attribute 'grad_xs'.*grad_xs="):
        apply_passes(Graph([y]), "Gradient", grad_ys_out_grad=[var("h")])
    with pytest.raises(NNVMError, match="1 grad_ys but 2 grad_ys_out_grad"):
        apply_passes(Graph([y]), "Gradient", grad_xs=[y], grad_ys_out_grad=[var("h"), var("k")])


def test_fgradient_returning_the_wrong_count_is_named(
    scoped_registry: None, op: Fn, var: Fn
) -> None:
    Op.get("t_relu").set_attr("FGradient", lambda node, og: [], plevel=20)
    x = var("x")
    with pytest.raises(NNVMError, match=r"FGradient of node 'bad' \(t_relu\) must return"):
        grad([op("t_relu", x, name="bad")], [x], var)


def test_backward_node_inputs_are_the_forward_nodes(op: Fn, var: Fn) -> None:
    # the forward graph is shared, not copied: backward nodes read the same Node objects
    x, w = var("x"), var("w")
    y = op("t_mul", x, w)
    (dx,) = grad([y], [x], var).outputs
    nodes: list[Node] = post_order([dx])
    assert y.node in nodes
    assert x.node in nodes
