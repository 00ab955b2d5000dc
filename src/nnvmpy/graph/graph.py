"""Graph and IndexedGraph: output entries plus attributes, and the integer view passes use.

A Graph is NNVM's: a list of output entries (the nodes hang off them) and a dict of graph
attributes that passes read and provide. Passes work on `graph.indexed`, which numbers
the nodes in topological order and every node output ("entry") densely, so per-entry
results are plain lists indexed by entry id.

>>> from nnvmpy.graph import Graph, Node, NodeEntry
>>> x = Node.variable("x")
>>> g = Graph([NodeEntry(x)])
>>> g.indexed.num_nodes, g.indexed.num_node_entries, g.indexed.input_nodes
(1, 1, [0])
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, NamedTuple

from ..attrs import FMutateInputs
from ..base import NNVMError
from .attrs import GraphAttrs
from .node import Node, NodeEntry, post_order


class IndexedEntry(NamedTuple):
    """An entry by numbers: output `index` of node `node_id` (NNVM's IndexedGraph::NodeEntry)."""

    node_id: int
    index: int  # type: ignore[assignment]  # shadows tuple.index; NNVM's field name wins
    version: int = 0


def _entry_spans(
    mine: IndexedGraph, nid: int, theirs: IndexedGraph, sources: Sequence[tuple[Node, int]]
) -> list[tuple[int, int, int]]:
    """(my entry, their entry, 1) for each output of my node `nid` whose source (a node
    of theirs and an output index) they hold."""
    spans = []
    for k, (node, index) in enumerate(sources):
        oid = theirs._node_ids.get(id(node))
        if oid is not None:
            spans.append((mine.node_row_ptr[nid] + k, theirs.node_row_ptr[oid] + index, 1))
    return spans


#: IndexedEntry((node_id, index, version)) without the NamedTuple's Python-level __new__:
#: the index makes one per edge
_new_entry: Callable[[tuple[int, int, int]], IndexedEntry] = partial(tuple.__new__, IndexedEntry)


@dataclass(frozen=True, slots=True)
class IndexedNode:
    """One node of an IndexedGraph: the Node, its inputs as entries and entry ids, its deps."""

    source: Node
    inputs: tuple[IndexedEntry, ...]
    input_eids: tuple[int, ...]
    control_deps: tuple[int, ...]


class Graph:
    """Output entries and graph attributes; passes take one and return one."""

    def __init__(
        self, outputs: Iterable[NodeEntry], attrs: Mapping[str, Any] | None = None
    ) -> None:
        self.outputs: list[NodeEntry] = list(outputs)
        self.attrs = GraphAttrs(attrs or {})
        self._indexed: IndexedGraph | None = None

    @property
    def indexed(self) -> IndexedGraph:
        """The numbered view, built on first use; the node structure must not change after."""
        if self._indexed is None:
            self._indexed = IndexedGraph(self.outputs)
        return self._indexed

    def copy(self) -> Graph:
        """Same nodes and outputs, a new attribute dict (what a pass may modify)."""
        g = Graph(self.outputs, self.attrs)
        g._indexed = self._indexed
        return g

    def seed_entry_values(
        self,
        other: Graph,
        keys: Sequence[str],
        copied_from: Mapping[Node, Node] | None = None,
        entry_origins: Mapping[Node, Sequence[tuple[Node, int]]] | None = None,
    ) -> Graph:
        """Copy other's per-entry attributes `keys` (shape, dtype) to the entries of the
        nodes both graphs hold, or whose copy this graph holds (`copied_from`: {node of
        this graph: the node of other with the same op and attributes}), or whose outputs
        are outputs of other's nodes (`entry_origins`: {node of this graph: (node of
        other, output index) for each of its outputs}, e.g. a fused node's), None
        elsewhere; returns self.

        A later InferShape / InferType starts from these values (NNVM's rule for a
        previous result), so rebuilding a graph around the same nodes (the backward added,
        groups fused) infers only what is new instead of every node again.
        """
        mine, theirs = self.indexed, other.indexed
        spans = []  # (my first entry, their first entry, count) of each shared node
        origin = copied_from or {}
        for nid, node in enumerate(mine.nodes):
            oid = theirs._node_ids.get(id(origin.get(node, node)))
            if oid is not None:
                start = theirs.node_row_ptr[oid]
                spans.append((mine.node_row_ptr[nid], start, theirs.node_row_ptr[oid + 1] - start))
            elif entry_origins and node in entry_origins:
                spans += _entry_spans(mine, nid, theirs, entry_origins[node])
        for key in keys:
            values = other.attrs.get(key)
            if not isinstance(values, list) or len(values) != theirs.num_node_entries:
                continue
            seeded: list[Any] = [None] * mine.num_node_entries
            for at, start, count in spans:
                seeded[at : at + count] = values[start : start + count]
            self.attrs[key] = seeded
        return self

    def __repr__(self) -> str:
        outs = ", ".join(f"{e.node.name}:{e.index}" for e in self.outputs)
        return f"Graph(outputs=[{outs}], attrs={sorted(self.attrs)})"


class IndexedGraph:
    """Nodes in topological order with dense node ids and entry ids (NNVM's IndexedGraph).

    entry_id(nid, i) = node_row_ptr[nid] + i. `input_nodes` are the variables in
    topological order (MXNet's list_inputs order); `mutable_input_nodes` are those an op
    writes through FMutateInputs (MXNet's auxiliary states).
    """

    def __init__(self, outputs: Sequence[NodeEntry]) -> None:
        self.nodes: list[Node] = post_order(list(outputs))
        self._node_ids = {id(node): nid for nid, node in enumerate(self.nodes)}
        self.node_row_ptr: list[int] = [0]
        for node in self.nodes:
            self.node_row_ptr.append(self.node_row_ptr[-1] + node.num_outputs())
        self._indexed = self._index_nodes()
        self.input_nodes: list[int] = [
            nid for nid, node in enumerate(self.nodes) if node.is_variable()
        ]
        self.mutable_input_nodes: set[int] = self._find_mutable_inputs()
        self.outputs: list[IndexedEntry] = [self._entry(e) for e in outputs]
        self.output_eids: list[int] = [self.entry_id(e) for e in self.outputs]

    # -- sizes and lookups --------------------------------------------------------------------

    @property
    def num_nodes(self) -> int:
        return len(self.nodes)

    @property
    def num_node_entries(self) -> int:
        return self.node_row_ptr[-1]

    def __getitem__(self, nid: int) -> IndexedNode:
        return self._indexed[nid]

    def __len__(self) -> int:
        return len(self.nodes)

    def exist(self, node: Node) -> bool:
        return id(node) in self._node_ids

    def node_id(self, node: Node) -> int:
        """The id of a node of this graph; NNVMError for a node that is not in it."""
        nid = self._node_ids.get(id(node))
        if nid is None:
            raise NNVMError(f"node '{node.name}' is not part of this graph")
        return nid

    def entry_id(self, entry: NodeEntry | tuple[int, ...] | int, index: int = 0) -> int:
        """Dense id of an entry: a NodeEntry, an (nid, index[, version]) tuple, or nid, index."""
        if isinstance(entry, NodeEntry):
            return self.node_row_ptr[self.node_id(entry.node)] + entry.index
        if isinstance(entry, tuple):
            return self.node_row_ptr[entry[0]] + entry[1]
        return self.node_row_ptr[entry] + index

    def output_eids_of(self, nid: int) -> range:
        """Entry ids of all outputs of node `nid`."""
        return range(self.node_row_ptr[nid], self.node_row_ptr[nid + 1])

    def entry_node(self, eid: int) -> tuple[int, int]:
        """(node id, output index) of an entry id (a binary search over node_row_ptr)."""
        nid = bisect.bisect_right(self.node_row_ptr, eid) - 1
        return nid, eid - self.node_row_ptr[nid]

    def entry_name(self, eid: int) -> str:
        """'node' for single-output nodes, else 'node:index': how errors name an entry."""
        nid, index = self.entry_node(eid)
        node = self.nodes[nid]
        return node.name if node.num_outputs() == 1 else f"{node.name}:{index}"

    # -- MXNet's argument / auxiliary split ------------------------------------------------------

    @property
    def arg_nodes(self) -> list[int]:
        """Variables no op mutates: MXNet's list_arguments, in order."""
        return [nid for nid in self.input_nodes if nid not in self.mutable_input_nodes]

    @property
    def aux_nodes(self) -> list[int]:
        """Variables some op mutates: MXNet's list_auxiliary_states, in order."""
        return [nid for nid in self.input_nodes if nid in self.mutable_input_nodes]

    # -- construction -----------------------------------------------------------------------------

    def _entry(self, entry: NodeEntry) -> IndexedEntry:
        return IndexedEntry(self.node_id(entry.node), entry.index, entry.version)

    def _index_nodes(self) -> list[IndexedNode]:
        """Every node's IndexedNode: one loop with local lookups, since graphs of many
        thousand nodes are indexed several times per bind. Every input's node is in the
        graph (the post order reached it through that input)."""
        ids, row_ptr, make = self._node_ids, self.node_row_ptr, _new_entry
        indexed = []
        for node in self.nodes:
            inputs, eids = [], []
            for e in node.inputs:
                src = ids[id(e.node)]
                start = row_ptr[src]
                if e.index >= row_ptr[src + 1] - start:
                    raise NNVMError(
                        f"node '{node.name}' reads output {e.index} of "
                        f"'{e.node.name}', which has only {e.node.num_outputs()}"
                    )
                inputs.append(make((src, e.index, e.version)))
                eids.append(start + e.index)
            deps = tuple(ids[id(d)] for d in node.control_deps) if node.control_deps else ()
            indexed.append(IndexedNode(node, tuple(inputs), tuple(eids), deps))
        return indexed

    def _find_mutable_inputs(self) -> set[int]:
        mutable: set[int] = set()
        for node in self.nodes:
            fmutate = node.op.get_attr(FMutateInputs) if node.op is not None else None
            if fmutate is None:
                continue
            for i in fmutate(node.attrs):
                src = node.inputs[i].node
                if src.is_variable():
                    mutable.add(self._node_ids[id(src)])
        return mutable


__all__ = ["Graph", "IndexedEntry", "IndexedGraph", "IndexedNode"]
