"""The chunks behind an executor's planned blocks: one per block, or ranges of one arena.

PlanMemory's 'blocks' layout (NNVM's) gets a Chunk per block: entries that reuse a block
share its engine variable, so the engine orders a block's next writer after its last
reader. The 'arena' layout (passes/_arena.py) gets one Chunk for the whole plan and a
Chunk.range_of it per block, each with its own variable; blocks that share bytes at
different times have different variables, so `order_overlaps` makes the first writer of
each block also write the variables of the blocks just before it on its bytes: the last
earlier one of its phase (forward or backward) on each byte, and where it is the first of
its phase there, the last one of each phase (the previous forward's or backward's). It
waits for their users, and their next users wait for it; each of those waited for the
one before, so every earlier user of those bytes is ordered before it. Every block
waiting for every block it overlaps would give the same order with far more variables: a
6600-node unrolled LSTM's forward declared 112 000 writes per step that way, 4 400 now.

Lending (shared_exec, reshape): an executor bound against this one may take the arena
whole. From then on every node of both writes the arena's own variable too, so their
steps never interleave on those bytes.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Any

from .. import engine
from ..base import Context
from ..graph import Graph
from ..graph.attrs import STORAGE_ALLOCATED_BYTES, STORAGE_ID, STORAGE_OFFSETS, STORAGE_SIZES
from ..ndarray.ndarray import Chunk
from .node_run import NodeRun
from .shared_memory import SharedChunks


@dataclass
class PlannedMemory:
    """Chunks by storage id, and what another executor may borrow."""

    chunks: list[Chunk]
    arena: Chunk | None = None  # the whole buffer, with memory_plan 'arena'
    arena_shared: bool = False  # taken from a lending executor
    _lent: bool = field(default=False, repr=False)

    @property
    def lendable(self) -> list[Chunk]:
        """Chunks a borrower may take: the blocks, or the arena whole (its ranges overlap)."""
        return self.chunks if self.arena is None else [self.arena]


def allocate(graph: Graph, ctx: Context, pool: SharedChunks | None) -> PlannedMemory:
    """Chunks for PlanMemory's blocks (borrowed from `pool` where it has them)."""
    sizes = [max(int(n), 1) for n in graph.attrs[STORAGE_SIZES]]
    offsets = graph.attrs.get(STORAGE_OFFSETS)
    if offsets is None:
        return PlannedMemory([pool.take(n) if pool else Chunk(n, ctx) for n in sizes])
    total = max(int(graph.attrs[STORAGE_ALLOCATED_BYTES]), 1)
    arena = pool.take(total) if pool else Chunk(total, ctx)
    chunks = [Chunk.range_of(arena, o, n) for o, n in zip(offsets, sizes)]
    shared = pool is not None and id(arena) in pool.used
    return PlannedMemory(chunks, arena, shared)


def order_overlaps(
    graph: Graph, memory: PlannedMemory, run_of: dict[int, NodeRun], forward: set[int]
) -> None:
    """Engine order between blocks sharing arena bytes (see the module doc). `run_of`
    holds every node's run by node id; `forward` the ids (id()) of the forward runs."""
    if memory.arena is None:
        return
    idx = graph.indexed
    sid = graph.attrs[STORAGE_ID]
    offsets, sizes = graph.attrs[STORAGE_OFFSETS], graph.attrs[STORAGE_SIZES]
    first_writer: dict[int, NodeRun] = {}
    for nid, run in sorted(run_of.items()):
        for eid in idx.output_eids_of(nid):
            if sid[eid] >= 0:
                first_writer.setdefault(sid[eid], run)
    phases: tuple[list[int], list[int]] = (
        [],
        [],
    )  # blocks by first writer, in order: forward ones, backward ones
    for block, run in first_writer.items():
        phases[id(run) not in forward].append(block)
    waits = _predecessors(phases, offsets, sizes)
    for block, others in waits.items():
        run = first_writer[block]
        have = {id(v) for v in run.mutate_vars}
        for q in sorted(others):
            var = memory.chunks[q].var
            if id(var) not in have:
                run.mutate_vars.append(var)
                have.add(id(var))
    if memory.arena_shared:
        _write_arena_var(memory, run_of.values())


def _predecessors(
    phases: tuple[list[int], list[int]], offsets: list[int], sizes: list[int]
) -> dict[int, set[int]]:
    """For each block, the blocks whose users its first writer must wait for.

    Within a phase, blocks come in their first writers' order, and a block waits for the
    last earlier block of its phase on each of its bytes: that one waited for the one
    before it, so the engine orders the whole history of those bytes through one variable
    each. Where a block is the first of its phase on some bytes it waits for the last
    block of each phase on its range: the users of the previous forward or backward,
    whichever ran last (the other's variable has nothing pending then). That is every
    order MXNet's "each block waits for all blocks it overlaps" gives, with a handful of
    variables per block instead of hundreds in a long unrolled graph.
    """
    waits: dict[int, set[int]] = {}
    opens: list[int] = []  # blocks first of their phase on some bytes
    finals = []
    for blocks in phases:
        occupied = _Occupancy()
        for b in blocks:  # in their first writers' order
            before, gap = occupied.take(offsets[b], offsets[b] + max(int(sizes[b]), 1), b)
            waits[b] = before
            if gap:
                opens.append(b)
        finals.append(occupied)
    for b in opens:
        lo, hi = offsets[b], offsets[b] + max(int(sizes[b]), 1)
        for occupied in finals:
            waits[b].update(occupied.owners(lo, hi))
        waits[b].discard(b)
    return waits


class _Occupancy:
    """Which block last took each byte: disjoint [start, end) runs, sorted."""

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.blocks: list[int] = []

    def _span(self, lo: int, hi: int) -> tuple[int, int]:
        """Indices [i, j) of the runs meeting [lo, hi)."""
        i = bisect.bisect_right(self.ends, lo)  # first run ending after lo
        j = bisect.bisect_left(self.starts, hi)  # first run starting at or after hi
        return i, j

    def owners(self, lo: int, hi: int) -> set[int]:
        i, j = self._span(lo, hi)
        return set(self.blocks[i:j])

    def take(self, lo: int, hi: int, block: int) -> tuple[set[int], bool]:
        """Give [lo, hi) to `block`: the blocks that held parts of it, and whether some
        of it was held by none."""
        i, j = self._span(lo, hi)
        before = set(self.blocks[i:j])
        covered = sum(min(e, hi) - max(s, lo) for s, e in zip(self.starts[i:j], self.ends[i:j]))
        starts, ends, blocks = [lo], [hi], [block]
        if i < j and self.starts[i] < lo:  # the first run sticks out on the left
            starts.insert(0, self.starts[i])
            ends.insert(0, lo)
            blocks.insert(0, self.blocks[i])
        if i < j and self.ends[j - 1] > hi:  # the last one on the right
            starts.append(hi)
            ends.append(self.ends[j - 1])
            blocks.append(self.blocks[j - 1])
        self.starts[i:j], self.ends[i:j], self.blocks[i:j] = starts, ends, blocks
        return before, covered < hi - lo


def lend(memory: PlannedMemory, runs: list[NodeRun]) -> bool:
    """Prepare to lend the arena: wait for this executor's work on it, and have its nodes
    write the arena's variable from now on. True when the nodes' variables changed."""
    if memory.arena is None or memory._lent:
        return False
    memory._lent = True
    eng = engine.get_engine()
    for chunk in memory.chunks:
        eng.wait_for_var(chunk.var)
    if memory.arena_shared:
        return False  # its nodes write the arena's variable already
    _write_arena_var(memory, runs)
    return True


def _write_arena_var(memory: PlannedMemory, runs: Any) -> None:
    assert memory.arena is not None
    var = memory.arena.var
    for run in runs:
        if not any(v is var for v in run.mutate_vars):
            run.mutate_vars.append(var)


__all__ = ["PlannedMemory", "allocate", "lend", "order_overlaps"]
