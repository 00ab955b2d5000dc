"""Graph and IndexedGraph: topological order, dense entry ids, inputs and aux states."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from nnvmpy.base import NNVMError
from nnvmpy.graph import Graph, IndexedEntry, NodeEntry

Fn = Callable[..., NodeEntry]


def test_nodes_are_topologically_ordered_with_dense_entry_ids(op: Fn, var: Fn) -> None:
    a, b = var("a"), var("b")
    split = op("tg_split", a, name="split")
    s = op("tg_add", NodeEntry(split.node, 1), b, name="s")
    idx = Graph([s, split]).indexed
    assert [n.name for n in idx.nodes] == ["a", "split", "b", "s"]
    assert idx.node_row_ptr == [0, 1, 3, 4, 5]
    assert idx.num_nodes == 4
    assert idx.num_node_entries == 5
    assert idx.entry_id(NodeEntry(split.node, 1)) == 2 == idx.entry_id((1, 1)) == idx.entry_id(1, 1)
    assert idx[3].inputs == (IndexedEntry(1, 1, 0), IndexedEntry(2, 0, 0))
    assert idx[3].input_eids == (2, 3)
    assert idx.outputs == [IndexedEntry(3, 0, 0), IndexedEntry(1, 0, 0)]
    assert idx.output_eids == [4, 1]
    assert [idx.entry_node(e) for e in range(5)] == [(0, 0), (1, 0), (1, 1), (2, 0), (3, 0)]
    assert idx.entry_name(2) == "split:1"
    assert idx.entry_name(3) == "b"


def test_every_input_comes_before_its_reader(op: Fn, var: Fn) -> None:
    x = var("x")
    layer = x
    for i in range(300):  # deep enough to break a recursive walk
        layer = op("tg_add", layer, x if i % 2 else layer, name=f"n{i}")
    idx = Graph([layer]).indexed
    for nid in range(idx.num_nodes):
        assert all(src < nid for src, _, _ in idx[nid].inputs)


def test_control_deps_are_node_ids(op: Fn, var: Fn) -> None:
    first = op("tg_split", var("x"), name="first")
    then = op("tg_split", var("y"), name="then")
    then.node.control_deps.append(first.node)
    idx = Graph([then]).indexed
    assert idx[idx.node_id(then.node)].control_deps == (idx.node_id(first.node),)
    assert idx.node_id(first.node) < idx.node_id(then.node)


def test_input_nodes_and_mutable_inputs_split_args_from_aux(op: Fn, var: Fn) -> None:
    data, state = var("data"), var("state")
    upd = op("tg_update", data, state, name="upd")
    out = op("tg_add", upd, var("bias"), name="out")
    idx = Graph([out]).indexed
    names = [idx.nodes[n].name for n in idx.input_nodes]
    assert names == ["data", "state", "bias"]
    assert idx.mutable_input_nodes == {idx.node_id(state.node)}
    assert [idx.nodes[n].name for n in idx.arg_nodes] == ["data", "bias"]
    assert [idx.nodes[n].name for n in idx.aux_nodes] == ["state"]


def test_shared_node_is_indexed_once(op: Fn, var: Fn) -> None:
    x = var("x")
    s = op("tg_add", x, x)
    idx = Graph([s, s, x]).indexed
    assert idx.num_nodes == 2
    assert idx.output_eids == [1, 1, 0]


def test_foreign_node_and_bad_output_index_are_errors(op: Fn, var: Fn) -> None:
    idx = Graph([var("x")]).indexed
    with pytest.raises(NNVMError, match="node 'y' is not part of this graph"):
        idx.node_id(var("y").node)
    bad = op("tg_add", NodeEntry(var("x").node, 3), var("z"), name="bad")
    with pytest.raises(NNVMError, match="node 'bad' reads output 3 of 'x', which has only 1"):
        Graph([bad]).indexed


def test_indexed_graph_is_cached_and_shared_by_copies(var: Fn) -> None:
    g = Graph([var("x")], {"k": 1})
    assert g.indexed is g.indexed
    copy = g.copy()
    copy.attrs["k"] = 2
    assert g.attrs["k"] == 1
    assert copy.indexed is g.indexed


def test_seed_entry_values_copies_by_node_for_the_nodes_both_graphs_hold(op: Fn, var: Fn) -> None:
    a, b = var("a"), var("b")
    split = op("tg_split", a, name="split")
    s = op("tg_add", NodeEntry(split.node, 1), b, name="s")
    old = Graph([split])  # entries: a, split:0, split:1
    old.attrs["shape"] = [(2,), (3,), (4,)]
    old.attrs["dtype"] = "not per entry"  # not a list of the right length: left alone
    new = Graph([s]).seed_entry_values(old, ("shape", "dtype", "absent"))
    assert [n.name for n in new.indexed.nodes] == ["a", "split", "b", "s"]
    assert new.attrs["shape"] == [(2,), (3,), (4,), None, None]  # b and s are new
    assert "dtype" not in new.attrs
    assert "absent" not in new.attrs
    copy = op("tg_split", b, name="split")  # stands for `split` rebuilt on another input
    again = Graph([copy]).seed_entry_values(old, ["shape"], copied_from={copy.node: split.node})
    assert again.attrs["shape"] == [None, (3,), (4,)]


def test_seed_entry_values_copies_by_entry_for_nodes_standing_for_others_outputs(
    op: Fn, var: Fn
) -> None:
    a, b = var("a"), var("b")
    split = op("tg_split", a, name="split")
    old = Graph([split])  # entries: a, split:0, split:1
    old.attrs["shape"] = [(2,), (3,), (4,)]
    # a node whose output 0 is split's output 1 and output 1 split's output 0 (as a fused
    # node exposes its members' outputs), and one whose source the old graph lacks
    swapped = op("tg_split", b, name="swapped")
    lost = op("tg_split", b, name="lost")
    origins = {
        swapped.node: [(split.node, 1), (split.node, 0)],
        lost.node: [(b.node, 0), (var("elsewhere").node, 0)],
    }
    new = Graph([swapped, lost]).seed_entry_values(old, ["shape"], entry_origins=origins)
    assert [n.name for n in new.indexed.nodes] == ["b", "swapped", "lost"]
    assert new.attrs["shape"] == [None, (4,), (3,), None, None]
