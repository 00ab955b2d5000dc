"""Zero gradients propagate as MXNet's: the element-wise gradient rules return zeros for
all-zero output gradients, a sum drops its zero terms, and an op without FGradient is fine
when nothing flows back into it — so nothing behind a BlockGrad is differentiated."""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.graph import Graph, Node, NodeEntry, apply_passes
from nnvmpy.graph.grad import ElemwiseGradUseIn, grads_all_zero, make_node
from nnvmpy.graph.node import post_order

sym = nv.sym


def _backward_ops(s: nv.sym.Symbol, wrt: list[str]) -> list[str]:
    nodes = {n.name: n for n in post_order(s._heads) if n.is_variable()}
    xs = [NodeEntry(nodes[n]) for n in wrt]
    head = NodeEntry(Node.variable("head_grad"))
    g = apply_passes(
        Graph(s._heads), ["Gradient"], grad_ys=s._heads, grad_xs=xs, grad_ys_out_grad=[head]
    )
    fwd = {id(n) for n in post_order(s._heads)}
    return sorted(n.op.name for n in post_order(g.outputs) if n.op is not None and id(n) not in fwd)


def test_grads_all_zero_recognises_zero_ops_only() -> None:
    x = NodeEntry(Node.variable("x"))
    zero = NodeEntry(make_node("zeros_like", "z", [x]))
    other = NodeEntry(make_node("relu", "r", [x]))
    assert grads_all_zero([zero, zero])
    assert not grads_all_zero([zero, other])
    assert not grads_all_zero([])
    rule = ElemwiseGradUseIn("_backward_relu")
    node = make_node("relu", "r2", [x])
    assert [g.node.op.name for g in rule(node, [zero])] == ["zeros_like"]
    assert [g.node.op.name for g in rule(node, [other])] == ["_backward_relu"]


def test_nothing_behind_a_blockgrad_is_differentiated() -> None:
    a = sym.var("a")
    chain = a
    for _ in range(4):
        chain = chain * chain
    assert "_backward_mul" in _backward_ops(chain, ["a"])
    assert _backward_ops(sym.BlockGrad(chain), ["a"]) == ["zeros_like"]


def test_a_sum_keeps_only_its_nonzero_terms() -> None:
    a = sym.var("a")
    s = sym.BlockGrad(a * 3.0) + sym.exp(a)  # d/da = exp(a): the blocked term adds nothing
    ops = _backward_ops(s, ["a"])
    assert "add_n" not in ops
    assert "ElementWiseSum" not in ops
    x = np.array([0.1, -0.4, 1.2])
    exe = s.simple_bind(nv.cpu(), type_dict={"a": np.float64}, a=x.shape)
    exe.forward(is_train=True, a=x)
    exe.backward(nv.nd.ones(x.shape, dtype="float64"))
    np.testing.assert_allclose(exe.grad_dict["a"].asnumpy(), np.exp(x), rtol=1e-12)


def test_an_op_without_gradient_needs_one_only_when_something_flows_back() -> None:
    x, idx = sym.var("x"), sym.var("idx")
    taken = sym.batch_take(x, idx)
    assert _backward_ops(sym.stop_gradient(taken), ["x"]) == ["zeros_like"]
    with pytest.raises(nv.NNVMError, match=r"batch_take.*no FGradient"):
        _backward_ops(taken, ["x"])
