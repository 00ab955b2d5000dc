"""The chunks behind an executor's planned blocks: one per block, or ranges of one arena.

PlanMemory's 'blocks' layout (NNVM's) gets a Chunk per block: entries that reuse a block
share its engine variable, so the engine orders a block's next writer after its last
reader. The 'arena' layout (passes/_arena.py) gets one Chunk for the whole plan and a
Chunk.range_of it per block, each with its own variable; blocks that share bytes at
different times have different variables, so `order_overlaps` makes the first writer of
each block also write the variables of every block it overlaps: it waits for their users
(from this step and from the previous one), and their next users wait for it.

Lending (shared_exec, reshape): an executor bound against this one may take the arena
whole. From then on every node of both writes the arena's own variable too, so their
steps never interleave on those bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .. import engine
from ..base import Context
from ..graph import Graph
from ..graph.attrs import STORAGE_ALLOCATED_BYTES, STORAGE_ID, STORAGE_OFFSETS, STORAGE_SIZES
from ..ndarray.ndarray import Chunk
from ..passes._arena import overlapping
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


def order_overlaps(graph: Graph, memory: PlannedMemory, run_of: dict[int, NodeRun]) -> None:
    """Engine order between blocks sharing arena bytes (see the module doc)."""
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
    for block, others in enumerate(overlapping(offsets, sizes)):
        run = first_writer.get(block)
        if run is None:
            continue
        have = {id(v) for v in run.mutate_vars}
        for q in others:
            var = memory.chunks[q].var
            if id(var) not in have:
                run.mutate_vars.append(var)
                have.add(id(var))
    if memory.arena_shared:
        _write_arena_var(memory, run_of.values())


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
