"""EliminateCommonExpr: duplicate pure nodes merge, impure ones never do, outputs stay
distinct, the caller's graph is untouched — and the merged graph computes the same values."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import nnvmpy as nv
from nnvmpy.graph import Graph, apply_passes
from nnvmpy.graph.node import post_order

sym = nv.sym


def _cse(s: nv.sym.Symbol) -> Graph:
    return apply_passes(Graph(s._heads), ["EliminateCommonExpr"])


def _ops(g: Graph) -> list[str]:
    return [n.op.name for n in post_order(g.outputs) if n.op is not None]


def test_identical_subexpressions_merge_and_different_attributes_do_not() -> None:
    a, b = sym.var("a"), sym.var("b")
    assert _ops(_cse((a + b) + (a + b))) == ["elemwise_add", "elemwise_add"]
    assert len(_ops(_cse((a + 1) + (a + 2)))) == 3
    c = sym.var("c")
    assert len(_ops(_cse(((a + b) + c) + ((a + b) + c)))) == 3
    # two variables are two inputs, even with one name: nothing above them merges
    assert len(_ops(_cse((a + sym.var("c")) + (a + sym.var("c"))))) == 3


def test_ops_with_resources_or_state_never_merge() -> None:
    a = sym.var("a")
    g = _cse(sym.Dropout(a, p=0.5) + sym.Dropout(a, p=0.5))
    assert _ops(g).count("Dropout") == 2


def test_repeated_outputs_get_copies_and_the_input_graph_is_untouched() -> None:
    a = sym.var("a")
    d = a + 1
    s = sym.Group([a * d, a * d])
    before = s.tojson()
    g = _cse(s)
    assert [e.node.op.name for e in g.outputs] == ["elemwise_mul", "_copy"]
    assert g.outputs[1].node.inputs[0] == g.outputs[0]
    assert g.outputs[1].node.name.endswith("_0_copy")
    assert s.tojson() == before


def test_copies_made_around_a_merged_node_name_the_node_they_copy() -> None:
    a = sym.var("a")
    x, y = sym.zeros((2, 3)), sym.zeros((2, 3))  # merge: y's reader is copied onto x
    s = sym.Group([(a + x) * 2, (a - y) * 3])
    g = _cse(s)
    copied = g.attrs["cse_copied_from"]
    given = {id(n) for n in post_order(s._heads)}
    assert sorted(n.op.name for n in copied) == ["_mul_scalar", "elemwise_sub"]
    for new, old in copied.items():
        assert id(new) not in given  # a new node,
        assert id(old) in given  # copying a given one
        assert (new.op, new.name, new.attrs.dict) == (old.op, old.name, old.attrs.dict)
    kept = [n for n in post_order(g.outputs) if n not in copied]
    assert all(id(n) in given for n in kept)  # the others are the given nodes themselves
    assert _cse(a + 1).attrs["cse_copied_from"] == {}


def _random_graph(draw: Any) -> nv.sym.Symbol:
    leaves = [sym.var("x"), sym.var("y")]
    for _ in range(draw(st.integers(1, 7))):
        kind = draw(st.sampled_from(["add", "mul", "scalar", "exp"]))
        i, j = draw(st.integers(0, len(leaves) - 1)), draw(st.integers(0, len(leaves) - 1))
        if kind == "add":
            leaves.append(leaves[i] + leaves[j])
        elif kind == "mul":
            leaves.append(leaves[i] * leaves[j])
        elif kind == "scalar":
            leaves.append(leaves[i] * draw(st.sampled_from([0.5, 2.0])))
        else:
            leaves.append(sym.tanh(leaves[i]))
    picks = draw(st.lists(st.integers(2, len(leaves) - 1), min_size=1, max_size=3))
    return sym.Group([leaves[k] for k in picks])


@given(st.data())
def test_merged_graph_computes_the_same_and_has_no_duplicates(data: Any) -> None:
    s = _random_graph(data.draw)
    g = _cse(s)
    keys = [
        (n.op, tuple(sorted(n.attrs.dict.items())), tuple((id(e.node), e.index) for e in n.inputs))
        for n in post_order(g.outputs)
        if n.op is not None and n.op.name != "_copy"
    ]
    assert len(keys) == len(set(keys))
    assert len(post_order(g.outputs)) <= len(post_order(s._heads)) + len(s._heads)
    assert len({(id(e.node), e.index) for e in g.outputs}) == len(g.outputs)
    x, y = np.linspace(-1, 1, 4), np.linspace(0.5, -0.5, 4)
    args = {"x": nv.nd.array(x, dtype="float64"), "y": nv.nd.array(y, dtype="float64")}
    args = {k: v for k, v in args.items() if k in s.list_arguments()}
    want = [o.asnumpy() for o in nv.sym.Symbol(s._heads).eval(nv.cpu(), **args)]
    got = [o.asnumpy() for o in nv.sym.Symbol(g.outputs).eval(nv.cpu(), **args)]
    for w, v in zip(want, got):
        np.testing.assert_allclose(v, w, rtol=1e-12)
