"""PlanMemory: block reuse, in-place rules, external entries, errors, the block pool."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from nnvmpy.base import NNVMError
from nnvmpy.graph import Graph, NodeEntry, apply_passes
from nnvmpy.graph.attrs import (
    EXTERNAL_STORAGE_ID,
    STORAGE_ALLOCATED_BYTES,
    STORAGE_ID,
    STORAGE_INPLACE_INDEX,
    STORAGE_NAIVE_BYTES,
    STORAGE_SIZES,
)
from nnvmpy.passes.plan_memory import BlockPool

Fn = Callable[..., NodeEntry]
PIPELINE = ["InferShape", "InferType", "PlanMemory"]


def plan(outputs: list[NodeEntry], **inputs: Any) -> Graph:
    inputs.setdefault("dtypes", {"x": "float32"})
    inputs.setdefault("shapes", {"x": (4, 8)})
    return apply_passes(Graph(outputs), PIPELINE, **inputs)


def sid(graph: Graph, entry: NodeEntry) -> int:
    return int(graph.attrs[STORAGE_ID][graph.indexed.entry_id(entry)])


def inplace(graph: Graph, entry: NodeEntry) -> int:
    return int(graph.attrs[STORAGE_INPLACE_INDEX][graph.indexed.entry_id(entry)])


def test_plan_memory_reuses_a_freed_block(op: Fn, var: Fn) -> None:
    x = var("x")
    a = op("t_zeros_like", x, name="a")  # t_zeros_like has no in-place option
    b = op("t_zeros_like", a, name="b")
    c = op("t_zeros_like", b, name="c")  # a is dead by now: c takes its block
    d = op("t_zeros_like", c, name="d")
    g = plan([d])
    assert sid(g, a) == sid(g, c) != sid(g, b)
    assert g.attrs[STORAGE_SIZES] == [128, 128]
    assert g.attrs[STORAGE_ALLOCATED_BYTES] == 256
    assert g.attrs[STORAGE_NAIVE_BYTES] == 3 * 128


def test_in_place_when_the_input_has_no_other_reader(op: Fn, var: Fn) -> None:
    x = var("x")
    a = op("t_zeros_like", x, name="a")
    r = op("t_relu", a, name="r")
    g = plan([op("t_zeros_like", r)])
    assert sid(g, r) == sid(g, a)
    assert inplace(g, r) == 0


def test_no_in_place_while_the_input_is_read_later(op: Fn, var: Fn) -> None:
    x = var("x")
    a = op("t_zeros_like", x, name="a")
    r = op("t_relu", a, name="r")
    g = plan([op("t_add", r, a)])  # a is read again after r
    assert sid(g, r) != sid(g, a)
    assert inplace(g, r) == -1


def test_no_in_place_when_the_node_reads_its_input_twice(op: Fn, var: Fn) -> None:
    x = var("x")
    a = op("t_zeros_like", x, name="a")
    sq = op("t_mul", a, a, name="sq")
    g = plan([op("t_zeros_like", sq)])
    assert sid(g, sq) != sid(g, a)


def test_identity_shares_even_with_another_reader(op: Fn, var: Fn) -> None:
    x = var("x")
    a = op("t_zeros_like", x, name="a")
    same = op("t_identity", a, name="same")
    later = op("t_add", same, a, name="later")  # a read after `same`, which aliases it
    after = op("t_zeros_like", later, name="after")
    g = plan([after])
    assert sid(g, same) == sid(g, a)
    assert inplace(g, same) == 0
    # the shared block stays alive until `later` has read both a and same
    assert sid(g, later) != sid(g, a)


def test_external_entries_are_never_pooled_or_shared(op: Fn, var: Fn) -> None:
    x = var("x")
    r = op("t_relu", x, name="r")  # may not write over the variable x
    mid = op("t_relu", r, name="mid")
    out = op("t_relu", mid, name="out")  # may not be pooled: it is a graph output
    g = plan([out], external_entry_ids=[])
    assert sid(g, x) == sid(g, out) == EXTERNAL_STORAGE_ID
    assert inplace(g, r) == -1
    assert sid(g, r) >= 0
    assert inplace(g, out) == -1
    g2 = plan([out], external_entry_ids=[g.indexed.entry_id(r)])
    assert sid(g2, r) == EXTERNAL_STORAGE_ID
    assert inplace(g2, mid) == -1


def test_in_place_needs_equal_byte_sizes(op: Fn, var: Fn) -> None:
    x = var("x")  # (4, 8) float32: 128 bytes
    a = op("t_zeros_like", x, name="a")
    grown = op("t_resize", a, name="grown", size=64)  # offers (0, 0) in place
    b = op("t_zeros_like", x, name="b")
    same = op("t_resize", b, name="same", size=32)
    g = plan([op("t_zeros_like", grown), op("t_zeros_like", same)])
    assert sid(g, grown) != sid(g, a)
    assert inplace(g, grown) == -1
    assert sid(g, same) == sid(g, b)
    assert inplace(g, same) == 0


def test_unknown_shape_names_the_node(op: Fn, var: Fn) -> None:
    x = var("x")
    n = op("t_noshape", x, name="mystery")
    with pytest.raises(NNVMError, match=r"node 'mystery' \(t_noshape\) has shape \?"):
        plan([op("t_relu", n)])


def test_plan_memory_needs_infer_shape_first(op: Fn, var: Fn) -> None:
    with pytest.raises(
        NNVMError,
        match=r"^PlanMemory needs graph attribute 'shape', which no "
        r"earlier pass provided; it is provided by InferShape\.$",
    ):
        apply_passes(Graph([op("t_relu", var("x"))]), "PlanMemory")


def test_unused_outputs_are_freed_at_once(op: Fn, var: Fn) -> None:
    x = var("x")
    a = op("t_zeros_like", x, name="a")
    first = op("t_split2", a, name="split")  # output 1 has no reader: freed right away
    second = op("t_split2", first, name="split2")  # needs two blocks while first is live
    g = plan([op("t_add", second, NodeEntry(second.node, 1))])
    unused = g.attrs[STORAGE_ID][g.indexed.entry_id(NodeEntry(first.node, 1))]
    second_sids = {sid(g, second), sid(g, NodeEntry(second.node, 1))}
    assert unused in second_sids
    assert len(g.attrs[STORAGE_SIZES]) == 3


# -- the block pool ------------------------------------------------------------------------


def test_pool_takes_the_smallest_block_that_fits() -> None:
    pool = BlockPool()
    small, big = pool.request(100), pool.request(400)
    pool.release(big)
    pool.release(small)
    assert pool.request(80) == small
    assert pool.request(300) == big


def test_pool_grows_a_smaller_block_within_the_match_range() -> None:
    pool = BlockPool(match_range=16)
    block = pool.request(100)
    pool.release(block)
    assert pool.request(1000) == block
    assert pool.sizes[block] == 1000


def test_pool_leaves_blocks_outside_the_match_range() -> None:
    pool = BlockPool(match_range=4)
    tiny, huge = pool.request(10), pool.request(10_000)
    pool.release(tiny)
    pool.release(huge)
    assert pool.request(1000) not in (tiny, huge)
