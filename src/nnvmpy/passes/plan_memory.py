"""PlanMemory: give every entry a storage block, reusing freed blocks and in-place slots.

NNVM's PlanMemory, simulated over the topological order:

* External entries — variables, graph outputs and `external_entry_ids` — belong to the
  user: storage id EXTERNAL_STORAGE_ID (-1), never pooled, shared or written in place.
* Every other entry gets a pooled block when its node runs (larger outputs first) and
  gives it back when the last reader of the block has run. Reference counts are per
  block, not per entry, because in-place sharing puts several entries in one block.
* `keep_entry_ids` (the forward values backward reads, from the executor) count one
  extra read that never comes: their blocks are never freed or written in place, so
  running the backward nodes again still finds them.
* Outputs are allocated before the node's inputs are released: a kernel reads its inputs
  while it writes its outputs, so only an explicit in-place pair may share.
* In place (FInplaceOption pair (i, o)): output o takes input i's block when the block is
  pooled, has the same byte size, is not already taken by another output of this node,
  output o has a reader, and this node is the block's last pending reader. With
  FInplaceIdentity True for the pair (the output equals the input, e.g. reshape), the
  last-reader condition is dropped, as in NNVM: later readers of the input see the same
  bytes; the block stays alive until the readers of both entries are done.

Block choice (NNVM's GraphAllocator with match range MATCH_RANGE = 16): the smallest free
block of at least the requested size and at most MATCH_RANGE times it; otherwise the
largest free block of at least size / MATCH_RANGE, grown to the requested size; otherwise
a new block. A block's size is the largest request it served.

With the graph attribute memory_plan = 'arena' the in-place sharing decided above stays,
but blocks become byte ranges of one buffer packed by lifetime (passes/_arena.py): a
block per in-place group, storage_offsets giving where each starts. Where that packing
takes no fewer bytes than the blocks (small graphs), the blocks are kept.
"""

from __future__ import annotations

import bisect
import math

import numpy as np

from ..attrs import FInplaceIdentity, FInplaceOption
from ..base import NNVMError
from ..graph.attrs import (
    DTYPE,
    EXTERNAL_ENTRY_IDS,
    EXTERNAL_STORAGE_ID,
    KEEP_ENTRY_IDS,
    MEMORY_PLAN,
    SHAPE,
    STORAGE_ALLOCATED_BYTES,
    STORAGE_ID,
    STORAGE_INPLACE_INDEX,
    STORAGE_NAIVE_BYTES,
    STORAGE_OFFSETS,
    STORAGE_SIZES,
)
from ..graph.graph import Graph, IndexedGraph
from ..graph.pass_registry import register_pass
from ..infer import shape_is_known, shape_str
from . import _arena

MATCH_RANGE = 16
_UNASSIGNED = -2


class BlockPool:
    """Free blocks sorted by size; `request` picks one as described in the module doc."""

    def __init__(self, match_range: int = MATCH_RANGE) -> None:
        self.match_range = match_range
        self.sizes: list[int] = []  # bytes of every block, by storage id
        self._free: list[tuple[int, int]] = []  # (size, storage id), sorted

    def request(self, nbytes: int) -> int:
        i = bisect.bisect_left(self._free, (nbytes, -1))
        if i < len(self._free) and self._free[i][0] <= nbytes * self.match_range:
            return self._free.pop(i)[1]
        if i > 0 and self._free[i - 1][0] * self.match_range >= nbytes:
            sid = self._free.pop(i - 1)[1]
            self.sizes[sid] = nbytes  # grown: the block serves the larger request too
            return sid
        self.sizes.append(nbytes)
        return len(self.sizes) - 1

    def release(self, sid: int) -> None:
        bisect.insort(self._free, (self.sizes[sid], sid))


@register_pass(
    "PlanMemory",
    requires=(SHAPE, DTYPE),
    provides=(
        STORAGE_ID,
        STORAGE_INPLACE_INDEX,
        STORAGE_SIZES,
        STORAGE_ALLOCATED_BYTES,
        STORAGE_NAIVE_BYTES,
        STORAGE_OFFSETS,
    ),
    op_attrs=(FInplaceOption, FInplaceIdentity),
)
def plan_memory(graph: Graph) -> Graph:
    """Storage ids per entry and block sizes, so the executor allocates once and reuses."""
    idx = graph.indexed
    external = _external_entries(graph)
    nbytes = _entry_bytes(graph, external)
    keep = _entry_ids(graph, KEEP_ENTRY_IDS)
    planner = _Planner(idx, nbytes, external, keep)
    for nid in range(idx.num_nodes):
        if not idx.nodes[nid].is_variable():
            planner.run_node(nid)
    layout = graph.attrs.get(MEMORY_PLAN) or "blocks"
    if layout not in ("blocks", "arena"):
        raise NNVMError(f"PlanMemory: memory_plan must be 'blocks' or 'arena', got {layout!r}")
    graph.attrs[STORAGE_INPLACE_INDEX] = planner.inplace_index
    graph.attrs[STORAGE_ID] = planner.storage
    graph.attrs[STORAGE_SIZES] = list(planner.pool.sizes)
    graph.attrs[STORAGE_OFFSETS] = None
    graph.attrs[STORAGE_ALLOCATED_BYTES] = sum(planner.pool.sizes)
    if layout == "arena":
        arena = _arena.place(idx, planner.storage, planner.inplace_index, nbytes, keep)
        # greedy packing is no optimum: on small graphs the blocks may take less (the
        # MLP of tools/bench_memory.py: 0.44 vs 0.52 MiB), and then the blocks stay
        if arena.nbytes < graph.attrs[STORAGE_ALLOCATED_BYTES]:
            graph.attrs[STORAGE_ID] = arena.storage
            graph.attrs[STORAGE_SIZES] = arena.sizes
            graph.attrs[STORAGE_OFFSETS] = arena.offsets
            graph.attrs[STORAGE_ALLOCATED_BYTES] = arena.nbytes
    graph.attrs[STORAGE_NAIVE_BYTES] = sum(b for eid, b in enumerate(nbytes) if eid not in external)
    return graph


def _external_entries(graph: Graph) -> set[int]:
    idx = graph.indexed
    external = {idx.entry_id(nid, 0) for nid in idx.input_nodes}
    external.update(idx.output_eids)
    external.update(_entry_ids(graph, EXTERNAL_ENTRY_IDS))
    return external


def _entry_ids(graph: Graph, key: str) -> set[int]:
    n = graph.indexed.num_node_entries
    ids = set(graph.attrs.get(key) or ())
    for eid in ids:
        if not 0 <= eid < n:
            raise NNVMError(f"PlanMemory: {key} entry id {eid} is out of range [0, {n})")
    return ids


def _entry_bytes(graph: Graph, external: set[int]) -> list[int]:
    """Byte size of every planned entry (0 for external ones, which need not be known)."""
    idx = graph.indexed
    shapes, dtypes = graph.attrs[SHAPE], graph.attrs[DTYPE]
    nbytes = [0] * idx.num_node_entries
    for eid in range(idx.num_node_entries):
        if eid in external:
            continue
        shape, dtype = shapes[eid], dtypes[eid]
        if not shape_is_known(shape) or dtype is None:
            nid, index = idx.entry_node(eid)
            node = idx.nodes[nid]
            op = node.op.name if node.op is not None else "null"
            raise NNVMError(
                f"PlanMemory: output {index} of node '{node.name}' ({op}) has shape "
                f"{shape_str(shape)} and dtype {dtype or '?'}; both must be known — give "
                f"the missing input shapes/dtypes to InferShape/InferType"
            )
        nbytes[eid] = math.prod(shape) * np.dtype(dtype).itemsize
    return nbytes


class _Planner:
    """Walks the nodes in order, keeping a reference count per storage block."""

    def __init__(
        self, idx: IndexedGraph, nbytes: list[int], external: set[int], keep: set[int]
    ) -> None:
        self.idx, self.nbytes = idx, nbytes
        self.pool = BlockPool()
        self.storage = [
            EXTERNAL_STORAGE_ID if eid in external else _UNASSIGNED
            for eid in range(idx.num_node_entries)
        ]
        self.inplace_index = [-1] * idx.num_node_entries
        self.entry_refs = [0] * idx.num_node_entries
        for nid in range(idx.num_nodes):
            for eid in idx[nid].input_eids:
                self.entry_refs[eid] += 1
        for eid in keep:
            self.entry_refs[eid] += 1  # a read that never comes: the block stays taken
        self.block_refs: list[int] = []  # pending reads of each block, by storage id

    def run_node(self, nid: int) -> None:
        self._inplace(nid)
        outputs = [eid for eid in self.idx.output_eids_of(nid) if self.storage[eid] == _UNASSIGNED]
        for eid in sorted(outputs, key=lambda e: -self.nbytes[e]):
            sid = self.pool.request(self.nbytes[eid])
            if sid == len(self.block_refs):
                self.block_refs.append(0)
            self.block_refs[sid] = self.entry_refs[eid]
            self.storage[eid] = sid
        for eid in self.idx[nid].input_eids:
            self._release(self.storage[eid], 1)
        for eid in self.idx.output_eids_of(nid):
            self._release(self.storage[eid], 0)  # outputs nobody reads free at once

    def _inplace(self, nid: int) -> None:
        inode = self.idx[nid]
        attrs = inode.source.attrs
        op = inode.source.op
        assert op is not None
        pairs = list(op.get_attr(FInplaceOption, lambda a: [])(attrs))
        identity = list(op.get_attr(FInplaceIdentity, lambda a: [False] * len(pairs))(attrs))
        taken: set[int] = set()
        for (i, o), ident in zip(pairs, identity):
            eid_in = inode.input_eids[i]
            eid_out = self.idx.entry_id(nid, o)
            sid = self.storage[eid_in]
            if (
                sid < 0
                or sid in taken
                or self.storage[eid_out] != _UNASSIGNED
                or self.entry_refs[eid_out] == 0
                or self.nbytes[eid_in] != self.nbytes[eid_out]
                or not (ident or self.block_refs[sid] == 1)
            ):
                continue
            taken.add(sid)
            self.storage[eid_out] = sid
            self.inplace_index[eid_out] = i
            self.block_refs[sid] += self.entry_refs[eid_out]

    def _release(self, sid: int, reads: int) -> None:
        if sid < 0:
            return
        self.block_refs[sid] -= reads
        if self.block_refs[sid] == 0:
            self.pool.release(sid)
            self.block_refs[sid] = -1  # released; a later _release of it is a no-op


__all__ = ["MATCH_RANGE", "BlockPool", "plan_memory"]
