"""FusePointwise on large graphs: the shortcuts that keep the pass cheap at bind (cluster
look-ups, per-dtype and per-shape answers, reachability by node ids) give the answers
of the plain definitions."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

import nnvmpy as nv
from nnvmpy import sym
from nnvmpy.fusion.grouping import MAX_MEMBERS, find_groups, fusable_bodies
from nnvmpy.fusion.recompute import _reached
from nnvmpy.graph import Graph, apply_passes
from nnvmpy.graph.node import Node, NodeEntry, post_order
from nnvmpy.passes.fuse_pointwise import _phases

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "executor"))
from unrolled_lstm import unrolled_lstm


def reference_groups(graph: Graph, phases: list[int] | None, bodies: list[Any]) -> list[list[int]]:
    """find_groups by the definition: clusters merge along data edges in topological
    order unless a path leaves one cluster and comes back through another (a full
    search over the cluster graph each time, no levels)."""
    idx = graph.indexed
    n = idx.num_nodes
    parent = list(range(n))
    members = [[i] for i in range(n)]

    def find(i: int) -> int:
        while parent[i] != i:
            i = parent[i]
        return i

    def preds(c: int) -> set[int]:
        out = set()
        for m in members[c]:
            row = idx[m]
            out |= {find(e.node_id) for e in row.inputs} | {find(d) for d in row.control_deps}
        return out - {c}

    def reaches(starts: set[int], target: int) -> bool:
        stack, seen = list(starts), set()
        while stack:
            c = stack.pop()
            if c == target:
                return True
            if c not in seen:
                seen.add(c)
                stack.extend(preds(c))
        return False

    for nid in range(n):
        if bodies[nid] is None:
            continue
        for p in dict.fromkeys(e.node_id for e in idx[nid].inputs):
            if bodies[p] is None or (phases is not None and phases[p] != phases[nid]):
                continue
            a, b = find(nid), find(p)
            if a == b or len(members[a]) + len(members[b]) > MAX_MEMBERS:
                continue
            if not reaches(preds(a) - {b}, b) and not reaches(preds(b) - {a}, a):
                parent[a] = b
                members[b] += members[a]
    groups = [sorted(members[c]) for c in range(n) if find(c) == c]
    return [g for g in groups if len(g) > 1]


@pytest.fixture
def bound_graph(monkeypatch: pytest.MonkeyPatch) -> Any:
    """bound_graph(symbol, **shapes): the typed forward+backward graph simple_bind gives
    FusePointwise, with the number of forward outputs."""
    from nnvmpy.executor.executor import Executor

    seen: list[tuple[Graph, int]] = []
    fuse = Executor._fuse

    def spy(self: Any, graph: Graph, heads: Any, shapes: Any, dtypes: Any) -> Any:
        seen.append((graph, len(heads)))
        return fuse(self, graph, heads, shapes, dtypes)

    monkeypatch.setattr(Executor, "_fuse", spy)

    def run(symbol: Any, **shapes: Any) -> tuple[Graph, int]:
        symbol.simple_bind(nv.cpu(), grad_req="write", **shapes)
        graph, k = seen[-1]
        graph = graph.copy()
        graph.attrs["fuse_phase_outputs"] = k
        return graph, k

    return run


def _chain() -> Any:
    y = x = sym.var("x")
    for _ in range(12):
        y = sym.exp(y) * 0.5 + sym.tanh(y) - y * x
    return sym.MakeLoss(sym.sum(y))


@pytest.mark.parametrize("which", ["lstm", "chain"])
def test_groups_are_those_of_the_plain_cycle_search(bound_graph: Any, which: str) -> None:
    if which == "lstm":
        symbol, shapes = unrolled_lstm(steps=6, hidden=4, batch=2, layers=2)
    else:
        symbol, shapes = _chain(), {"x": (3, 4)}
    graph, _ = bound_graph(symbol, **shapes)
    phases = _phases(graph)
    bodies = fusable_bodies(graph, cpu=True)
    groups = find_groups(graph, phases, bodies=bodies)
    assert len(groups) > 2  # forward and backward groups, several of them
    assert groups == reference_groups(graph, phases, bodies)


def test_phases_are_what_the_forward_outputs_reach(bound_graph: Any) -> None:
    symbol, shapes = unrolled_lstm(steps=4, hidden=4, batch=2, layers=2)
    graph, k = bound_graph(symbol, **shapes)
    forward = {id(n) for n in post_order(graph.outputs[:k])}
    expected = [0 if id(n) in forward else 1 for n in graph.indexed.nodes]
    assert _phases(graph) == expected
    assert 0 < sum(expected) < len(expected)  # both phases present


def test_dtype_and_size_answers_are_per_entry_within_one_pass() -> None:
    """One pass over branches alike but for shape and dtype: a large float32 sin (NumPy's
    SIMD loop is faster on the CPU) stays out of its group, the small one joins its
    group, and readers of a bool stay apart, whichever the pass met first."""
    big, small, flag = sym.var("big"), sym.var("small"), sym.var("flag")
    s = sym.Group(
        [
            sym.sin(small, name="s_sin") * 2 + 1,
            sym.sin(big, name="b_sin") * 2 + 1,
            sym.sin(flag, name="f_sin") * 2 + 1,
            sym.sin(small, name="s2_sin") * 2 + 1,
        ]
    )
    graph = apply_passes(
        Graph(s._heads),
        ["InferShape", "InferType", "FusePointwise"],
        shapes={"big": (256, 256), "small": (4, 4), "flag": (4, 4)},
        dtypes={"big": "float32", "small": "float32", "flag": "bool"},
        fuse_device="cpu",
    )
    groups = [set(g) for g in graph.attrs["fused_groups"].values()]
    assert len(groups) == 3
    assert sum("s_sin" in g for g in groups) == sum("s2_sin" in g for g in groups) == 1
    assert all("b_sin" not in g and "f_sin" not in g for g in groups)
    assert all(len(g) == 3 for g in groups if "s_sin" in g or "s2_sin" in g)


def test_reached_is_post_orders_set_after_an_edge_is_dropped() -> None:
    x = Node.variable("x")
    ops = nv.sym.exp(nv.sym.var("x"))._heads[0].node.op
    a = Node(ops.parse_attrs(name="a"), [NodeEntry(x)])
    b = Node(ops.parse_attrs(name="b"), [NodeEntry(a)])
    c = Node(ops.parse_attrs(name="c"), [NodeEntry(b)], control_deps=[a])
    order = post_order([NodeEntry(c)])
    assert _reached([NodeEntry(c)], order) == order
    c.inputs = [NodeEntry(x)]  # b is no longer read; a still is, through the control dep
    assert _reached([NodeEntry(c)], order) == post_order([NodeEntry(c)]) == [x, a, c]
    c.control_deps = []
    assert _reached([NodeEntry(c)], order) == post_order([NodeEntry(c)]) == [x, c]
