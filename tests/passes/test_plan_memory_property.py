"""PlanMemory's invariant on random DAGs of element-wise ops, checked by an independent model.

Liveness comes from the topological order alone: an entry is live from the node that
writes it to the last node that reads it (a kept entry: to the end). Entries joined by
in-place edges hold one value chain in one block; two different chains in one block must
not overlap in time (strictly: a node's outputs are allocated while its inputs are still
read). With memory_plan 'arena' the same holds for two blocks whose byte ranges meet.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from nnvmpy.graph import Graph, Node, NodeEntry, apply_passes, make_node
from nnvmpy.graph.attrs import (
    DTYPE,
    EXTERNAL_STORAGE_ID,
    SHAPE,
    STORAGE_ALLOCATED_BYTES,
    STORAGE_ID,
    STORAGE_INPLACE_INDEX,
    STORAGE_NAIVE_BYTES,
    STORAGE_OFFSETS,
    STORAGE_SIZES,
)
from nnvmpy.passes import _arena

BINARY = ["t_add", "t_mul"]
UNARY = ["t_relu", "t_identity", "t_zeros_like", "t_split2", "t_resize"]


@st.composite
def random_graphs(draw: Any) -> tuple[Graph, dict[str, Any]]:
    """A random DAG over 1-3 variables, with random outputs and external entries."""
    entries: list[tuple[NodeEntry, int]] = []  # (entry, length of its 1-d shape)
    shapes = {}
    for i in range(draw(st.integers(1, 3))):
        length = draw(st.sampled_from([2, 4, 8]))
        shapes[f"v{i}"] = (length,)
        entries.append((NodeEntry(Node.variable(f"v{i}")), length))
    for i in range(draw(st.integers(1, 25))):
        kind = draw(st.sampled_from(BINARY + UNARY))
        first, length = entries[draw(st.integers(0, len(entries) - 1))]
        inputs = [first]
        if kind in BINARY:
            same = [e for e, n in entries if n == length]
            inputs.append(same[draw(st.integers(0, len(same) - 1))])
        attrs = {"size": draw(st.sampled_from([2, 4, 8]))} if kind == "t_resize" else {}
        node = make_node(kind, f"n{i}", inputs, attrs)
        length = int(attrs.get("size", length))
        entries += [(NodeEntry(node, k), length) for k in range(node.num_outputs())]
    op_entries = [e for e, _ in entries if not e.node.is_variable()]
    outputs = draw(st.lists(st.sampled_from(op_entries), min_size=1, max_size=3))
    graph = Graph(outputs)
    idx = graph.indexed
    external = draw(st.lists(st.integers(0, idx.num_node_entries - 1), max_size=3))
    keep = draw(st.lists(st.integers(0, idx.num_node_entries - 1), max_size=3))
    shapes = {idx.nodes[n].name: shapes[idx.nodes[n].name] for n in idx.input_nodes}
    return graph, {
        "shapes": shapes,
        "dtypes": dict.fromkeys(shapes, "float32"),
        "external_entry_ids": external,
        "keep_entry_ids": keep,
    }


@settings(max_examples=150, deadline=None)
@given(random_graphs(), st.sampled_from(["blocks", "arena"]))
def test_plan_memory_never_shares_a_block_between_live_values(case: Any, layout: str) -> None:
    graph, inputs = case
    g = apply_passes(graph, ["InferShape", "InferType", "PlanMemory"], memory_plan=layout, **inputs)
    external, keep = set(inputs["external_entry_ids"]), set(inputs["keep_entry_ids"])
    check_plan(g, external, keep)
    if layout == "arena":  # these tiny graphs mostly keep their blocks: check the packing too
        if g.attrs[STORAGE_OFFSETS] is None:
            blocks = g.attrs[STORAGE_ALLOCATED_BYTES]
            _as_arena(g, keep)
            assert g.attrs[STORAGE_ALLOCATED_BYTES] >= blocks  # why the blocks were kept
        check_plan(g, external, keep)


def _as_arena(g: Graph, keep: set[int]) -> None:
    """Replace g's block plan by passes/_arena.py's packing of it."""
    nbytes = [math.prod(s) * np.dtype(t).itemsize for s, t in zip(g.attrs[SHAPE], g.attrs[DTYPE])]
    idx = g.indexed
    arena = _arena.place(idx, g.attrs[STORAGE_ID], g.attrs[STORAGE_INPLACE_INDEX], nbytes, keep)
    g.attrs[STORAGE_ID] = arena.storage
    g.attrs[STORAGE_SIZES] = arena.sizes
    g.attrs[STORAGE_OFFSETS] = arena.offsets
    g.attrs[STORAGE_ALLOCATED_BYTES] = arena.nbytes


def check_plan(g: Graph, external_ids: set[int], keep: set[int] = frozenset()) -> None:
    idx = g.indexed
    storage, inplace = g.attrs[STORAGE_ID], g.attrs[STORAGE_INPLACE_INDEX]
    nbytes = [math.prod(s) * np.dtype(t).itemsize for s, t in zip(g.attrs[SHAPE], g.attrs[DTYPE])]
    producer = [idx.entry_node(eid)[0] for eid in range(idx.num_node_entries)]
    reads: list[list[int]] = [[] for _ in range(idx.num_node_entries)]
    for nid in range(idx.num_nodes):
        for eid in idx[nid].input_eids:
            reads[eid].append(nid)
    last_use = [max(r, default=producer[eid]) for eid, r in enumerate(reads)]
    for eid in keep:
        last_use[eid] = idx.num_nodes  # a read that never comes
    external = external_ids | set(idx.output_eids) | {idx.entry_id(n, 0) for n in idx.input_nodes}

    parent = list(range(idx.num_node_entries))  # union-find over in-place edges

    def root(e: int) -> int:
        while parent[e] != e:
            e = parent[e]
        return e

    for eid in range(idx.num_node_entries):
        if eid in external:
            assert storage[eid] == EXTERNAL_STORAGE_ID
            assert inplace[eid] == -1
            continue
        assert storage[eid] >= 0
        assert g.attrs[STORAGE_SIZES][storage[eid]] >= nbytes[eid]
        if inplace[eid] >= 0:
            src = idx[producer[eid]].input_eids[inplace[eid]]
            assert src not in external
            assert storage[src] == storage[eid]
            assert nbytes[src] == nbytes[eid]
            parent[eid] = root(src)

    chains: dict[int, list[int]] = {}
    for eid in range(idx.num_node_entries):
        if eid not in external:
            chains.setdefault(root(eid), []).append(eid)
    by_block = _check_chains_do_not_overlap(chains, storage, producer, last_use)
    for members in chains.values():
        _check_in_place_handoffs(g, members, inplace, producer, reads)
    offsets = g.attrs[STORAGE_OFFSETS]
    if offsets is None:
        assert g.attrs[STORAGE_ALLOCATED_BYTES] <= g.attrs[STORAGE_NAIVE_BYTES]
    else:
        _check_arena(by_block, offsets, g.attrs[STORAGE_SIZES], g.attrs[STORAGE_ALLOCATED_BYTES])


def _check_chains_do_not_overlap(
    chains: dict[int, list[int]], storage: list[int], producer: list[int], last_use: list[int]
) -> dict[int, list[tuple[int, int]]]:
    by_block: dict[int, list[tuple[int, int]]] = {}
    for members in chains.values():
        span = (min(producer[e] for e in members), max(last_use[e] for e in members))
        by_block.setdefault(storage[members[0]], []).append(span)
    for spans in by_block.values():
        spans.sort()
        for (_, end), (start, _) in itertools.pairwise(spans):
            assert end < start, f"two live values share a block: {spans}"
    return by_block


def _check_arena(
    by_block: dict[int, list[tuple[int, int]]], offsets: list[int], sizes: list[int], total: int
) -> None:
    """Blocks inside the arena, aligned, and two whose bytes meet are never live together."""
    for off, size in zip(offsets, sizes):
        assert off % 64 == 0
        assert 0 <= off <= off + size <= total
    for a, b in itertools.combinations(by_block, 2):
        if offsets[a] < offsets[b] + sizes[b] and offsets[b] < offsets[a] + sizes[a]:
            for (s1, e1), (s2, e2) in itertools.product(by_block[a], by_block[b]):
                assert e1 < s2 or e2 < s1, f"blocks {a} and {b} share bytes while both live"


def _check_in_place_handoffs(
    g: Graph, members: list[int], inplace: list[int], producer: list[int], reads: list[list[int]]
) -> None:
    """A non-identity in-place write at node p: p is the only pending reader of the chain."""
    idx = g.indexed
    for eid in members:
        p = producer[eid]
        if inplace[eid] < 0 or idx.nodes[p].op.name == "t_identity":  # type: ignore[union-attr]
            continue
        earlier = [m for m in members if producer[m] < p]
        assert all(r <= p for m in earlier for r in reads[m])
        assert sum(r == p for m in earlier for r in reads[m]) == 1


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from([4, 64, 100, 4096, 70_000, 300_000]),  # small and staggered sizes
            st.integers(0, 40),
            st.integers(0, 12),
        ),
        min_size=1,
        max_size=80,
    )
)
def test_the_compiled_placement_loop_places_as_the_numpy_one(
    blocks: list[tuple[int, int, int]],
) -> None:
    """_arena._pack's compiled loop (large graphs) and its NumPy loop give the same offsets
    for the same blocks (size, lifetime start, length)."""
    sizes = [s for s, _, _ in blocks]
    lives = [(start, start + length) for _, start, length in blocks]
    saved = _arena.COMPILED_FROM
    try:
        _arena.COMPILED_FROM = 1 << 30
        by_numpy = _arena._pack(sizes, lives)
        _arena.COMPILED_FROM = 0
        compiled = _arena._pack(sizes, lives)
    finally:
        _arena.COMPILED_FROM = saved
    assert compiled == by_numpy
