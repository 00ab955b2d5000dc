"""Arena placement: PlanMemory's blocks as byte ranges of one buffer, packed by lifetime.

NNVM's block reuse (plan_memory.py) gives every block one size for its whole life: a
block freed by a 24 MiB entry cannot serve a 98 MiB one, and four freed 24 MiB blocks
cannot be joined into one. Training ResNet-18 at batch 32 then plans 732 MiB where at most
616 MiB are ever live at once: the stem's gradients (98 MiB each) come at the end of the
backward pass, when everything free is in pieces of the stages' sizes.

Here every entry keeps the in-place sharing PlanMemory decided, each in-place group
becomes one block with a lifetime (the node writing its first entry to the last node
reading any of them), and the blocks are placed at byte offsets of one arena so that two
blocks overlap in memory only if their lifetimes do not overlap: greedy by size, each
block at the lowest offset that fits between the blocks already placed whose lifetimes
meet its own (the "greedy by size" offset planner of TFLite's arena planner and
Pisarchyk & Lee 2020). ResNet-18 training at batch 32: 619 MiB.

Lifetimes are node indices in the graph's topological order, inclusive: a node reads its
inputs while it writes its outputs, so a block read by node t and one written by node t
have overlapping lifetimes and never share bytes (in-place pairs are one block already).
A kept entry (`keep_entry_ids`) lives to the end. Two blocks that share bytes at different
times still need an order between their users at run time: the executor has each block's
first writer wait for the users of the blocks before it on its bytes
(executor/planned_memory.py's `order_overlaps`).

Large blocks start at a staggered offset within a page, for the reason kernel/storage.py
gives (4K aliasing between loads of one array and stores to another).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..graph.graph import IndexedGraph
from ..kernel.storage import ALIGNMENT, PAGE, STAGGER, STAGGER_MIN, STAGGER_SLOTS


@dataclass(frozen=True)
class Arena:
    """Blocks (one per in-place group) placed in one buffer of `nbytes`."""

    storage: list[int]  # block of every entry, by entry id (< 0 as PlanMemory had it)
    sizes: list[int]  # bytes each block holds
    offsets: list[int]  # where each block starts in the arena
    nbytes: int


def place(
    idx: IndexedGraph, storage: list[int], inplace_index: list[int], nbytes: list[int],
    keep: set[int],
) -> Arena:  # fmt: skip
    """The arena for PlanMemory's result: `storage` (block per entry; < 0 external or
    unplanned), `inplace_index` (which input each entry took in place), entry sizes and the
    entries kept to the end."""
    group = _inplace_groups(idx, storage, inplace_index)
    end_of_graph = idx.num_nodes
    start: dict[int, int] = {}
    end: dict[int, int] = {}
    size: dict[int, int] = {}
    for nid in range(idx.num_nodes):
        if idx.nodes[nid].is_variable():
            continue
        for eid in idx.output_eids_of(nid):
            g = group[eid]
            if g < 0:
                continue
            start.setdefault(g, nid)  # nodes come in order: the first writer
            end[g] = max(end.get(g, nid), end_of_graph if eid in keep else nid)
            size[g] = max(size.get(g, 0), nbytes[eid])
        for eid in idx[nid].input_eids:
            g = group[eid]
            if g >= 0:
                end[g] = max(end[g], nid)
    order = sorted(start)  # blocks numbered by first writer: a stable, readable plan
    number = {g: i for i, g in enumerate(order)}
    sizes = [size[g] for g in order]
    lives = [(start[g], end[g]) for g in order]
    offsets, total = _pack(sizes, lives)
    return Arena(
        storage=[number[g] if g >= 0 else s for g, s in zip(group, storage)],
        sizes=sizes,
        offsets=offsets,
        nbytes=total,
    )


def _inplace_groups(idx: IndexedGraph, storage: list[int], inplace_index: list[int]) -> list[int]:
    """A group id per planned entry (the entry id of its group's first entry), -1 else."""
    group = [-1] * idx.num_node_entries
    for nid in range(idx.num_nodes):
        if idx.nodes[nid].is_variable():
            continue
        inputs = idx[nid].input_eids
        for eid in idx.output_eids_of(nid):
            if storage[eid] < 0:
                continue
            i = inplace_index[eid]
            group[eid] = group[inputs[i]] if i >= 0 and group[inputs[i]] >= 0 else eid
    return group


def _slot(nbytes: int) -> int:
    """Bytes a block takes in the arena: rounded to the alignment, and for a large block a
    page of room for its staggered start."""
    if nbytes < STAGGER_MIN:
        return -(-max(nbytes, 1) // ALIGNMENT) * ALIGNMENT
    return -(-nbytes // PAGE) * PAGE + PAGE


#: from this many blocks _pack places them in one compiled loop (_arena_loop.py): the
#: NumPy calls cost ~40 us a block (ResNet-18 training, 132 blocks: 5-6 ms of a ~20 ms
#: bind), the compiled loop's first call in a process ~4 ms (loaded from numba's disk
#: cache), its later ones microseconds
COMPILED_FROM = 100


def _pack(sizes: list[int], lives: list[tuple[int, int]]) -> tuple[list[int], int]:
    """Offsets (largest block first, each at the lowest gap among the placed blocks whose
    lifetimes meet its own) and the arena's size."""
    n = len(sizes)
    slots = np.array([_slot(s) for s in sizes], dtype=np.int64)
    begin = np.array([s for s, _ in lives], dtype=np.int64)
    finish = np.array([e for _, e in lives], dtype=np.int64)
    order = sorted(range(n), key=lambda b: (-slots[b], lives[b][0]))
    align = np.array([PAGE if s >= STAGGER_MIN else ALIGNMENT for s in sizes], dtype=np.int64)
    if n >= COMPILED_FROM:
        from nnvmpy.passes._arena_loop import place_blocks

        at = place_blocks(np.array(order, dtype=np.int64), slots, begin, finish, align)
    else:
        at = np.zeros(n, dtype=np.int64)  # slot offsets of placed blocks
        placed = np.zeros(n, dtype=bool)
        for b in order:
            meet = np.nonzero(placed & (begin <= finish[b]) & (finish >= begin[b]))[0]
            at[b] = _lowest_gap(at[meet], at[meet] + slots[meet], int(slots[b]), int(align[b]))
            placed[b] = True
    offsets = []
    for b in range(n):
        start = int(at[b])
        if sizes[b] >= STAGGER_MIN:  # page-aligned slot with a page to spare: stagger
            start += (b % STAGGER_SLOTS + 1) * STAGGER
        offsets.append(start)
    total = int((at + slots).max()) if n else 0
    return offsets, total


def _lowest_gap(lo: np.ndarray, hi: np.ndarray, need: int, align: int) -> int:
    """The lowest `align`-aligned offset with `need` bytes clear of every range [lo, hi).

    Walking the ranges by start, the candidate offset is the aligned end of the furthest
    range seen so far; the first range starting `need` past it leaves the gap. Vectorised:
    graphs of thousands of blocks meet thousands of ranges each.
    """
    if lo.size == 0:
        return 0
    order = np.lexsort((hi, lo))
    ends = np.maximum.accumulate(-(-hi[order] // align) * align)
    before = np.concatenate(([0], ends[:-1]))  # the offset each range is compared with
    fits = np.nonzero(lo[order] - before >= need)[0]
    return int(before[fits[0]]) if fits.size else int(ends[-1])


__all__ = ["Arena", "place"]
