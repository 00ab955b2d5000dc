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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
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
        self, other: Graph, keys: Sequence[str], copied_from: Mapping[Node, Node] | None = None
    ) -> Graph:
        """Copy other's per-entry attributes `keys` (shape, dtype) to the entries of the
        nodes both graphs hold, or whose copy this graph holds (`copied_from`: {node of
        this graph: the node of other with the same op and attributes}), None elsewhere;
        returns self.

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
        self._indexed = [self._index_node(node) for node in self.nodes]
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

    def _index_node(self, node: Node) -> IndexedNode:
        inputs = tuple(self._entry(e) for e in node.inputs)
        for e, ie in zip(node.inputs, inputs):
            if e.index >= self.node_row_ptr[ie.node_id + 1] - self.node_row_ptr[ie.node_id]:
                raise NNVMError(
                    f"node '{node.name}' reads output {e.index} of "
                    f"'{e.node.name}', which has only {e.node.num_outputs()}"
                )
        eids = tuple(self.node_row_ptr[ie.node_id] + ie.index for ie in inputs)
        deps = tuple(self.node_id(d) for d in node.control_deps)
        return IndexedNode(node, inputs, eids, deps)

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
