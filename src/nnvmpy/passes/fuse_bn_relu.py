"""FuseBatchNormReLU: a node and the relu after it (with an add between) become one node.

For training graphs, before the gradient is built. A node whose op declares FWithReLU
(BatchNorm: (_contrib_BatchNormWithReLU, _BatchNormAddReLU)) is rewritten with

* the relu reading its output 0 (FEpilogueStep 'relu': Activation relu, relu) into one
  node of the first op, with the node's inputs and attributes; or
* the add reading its output 0 (FEpilogueStep 'add': elemwise_add) and the relu reading
  the add's, into one node of the second op, whose last input is the add's other operand
  (the residual): ResNet's blocks, relu(BatchNorm(conv(x)) + shortcut).

Their gradients are then the fused ops', whose kernels apply relu as they write and take
relu's gradient as they read dy: relu's forward and _backward_relu (and the add's pass
over BatchNorm's output) are gone, one pass over the activation each way and two kernels
fewer per chain. ResNet-18 v1 has nine of the first kind and eight of the second.

A chain is taken only when each member's output 0 is read by the next member alone and is
no graph output, the producer's other outputs (mean and var) have no reader, all members
are in the same ctx_group, and none is a control dependency or has one. When two
BatchNorms feed one add (a downsampling block), the first in graph order takes it. The
fused node takes the relu node's name, so the graph output and the monitor name it may
be keep theirs. Provides `with_relu`: {fused node name: "BatchNorm 'bn' + Activation
'relu'"}, and `bn_relu_copied_from`: {new node: the given node it copies} for the other
nodes (the same op and attributes, so the same shapes and types:
Graph.seed_entry_values carries them over). The pass builds a new graph and never edits
the given nodes.

>>> import nnvmpy as nv
>>> from nnvmpy.graph import Graph, apply_passes
>>> y = nv.sym.Activation(nv.sym.BatchNorm(nv.sym.var("x")), act_type="relu")
>>> g = apply_passes(Graph(y._heads), ["FuseBatchNormReLU"])
>>> [n.op.name for n in g.indexed.nodes if n.op is not None]
['_contrib_BatchNormWithReLU']
"""

from __future__ import annotations

from typing import NamedTuple

from ..attrs import FEpilogueStep, FWithReLU
from ..graph.attrs import DTYPE, DTYPE_NUM_UNKNOWN_NODES, SHAPE, SHAPE_NUM_UNKNOWN_NODES
from ..graph.graph import Graph, IndexedEntry, IndexedGraph
from ..graph.node import Node, NodeEntry
from ..graph.pass_registry import register_pass
from ..registry import NodeAttrs, Op
from .fuse_epilogue import _readers
from .simplify_inference import renode

#: provided: {fused node name: "BatchNorm 'bn' + Activation 'relu'"}
WITH_RELU = "with_relu"
#: provided: {new node: the given node it copies} for every node not in a chain
BN_RELU_COPIED_FROM = "bn_relu_copied_from"
_GROUP = "__ctx_group__"
_STALE = (SHAPE, DTYPE, SHAPE_NUM_UNKNOWN_NODES, DTYPE_NUM_UNKNOWN_NODES)


class _Chain(NamedTuple):
    members: list[int]  # producer, [add,] relu node ids
    op: str  # the fused op
    residual: IndexedEntry | None  # the add's other operand (an entry of the given graph)


@register_pass(
    "FuseBatchNormReLU",
    provides=(WITH_RELU, BN_RELU_COPIED_FROM),
    op_attrs=(FWithReLU, FEpilogueStep),
)
def fuse_bn_relu(graph: Graph) -> Graph:
    """A graph computing the same outputs, each chain as one fused node."""
    idx = graph.indexed
    chains = {c.members[-1]: c for c in _chains(idx)}  # by the relu's node id
    if not chains:  # nothing to rewrite: the same nodes (shapes and types stay valid)
        same = graph.copy()
        same.attrs[WITH_RELU], same.attrs[BN_RELU_COPIED_FROM] = {}, {}
        return same
    absorbed = {m for c in chains.values() for m in c.members[:-1]}
    new_of: dict[int, Node] = {}
    notes: dict[str, str] = {}
    copied_from: dict[Node, Node] = {}

    def entry(e: IndexedEntry) -> NodeEntry:
        return NodeEntry(new_of[e.node_id], e.index, e.version)

    for nid, node in enumerate(idx.nodes):
        if nid in absorbed:
            continue
        chain = chains.get(nid)
        if chain is not None:
            producer = idx.nodes[chain.members[0]]
            attrs = NodeAttrs(Op.get(chain.op), node.name, None, producer.attrs.parsed)
            attrs.dict = dict(producer.attrs.dict)
            inputs = [entry(e) for e in idx[chain.members[0]].inputs]
            if chain.residual is not None:
                inputs.append(entry(chain.residual))
            new_of[nid] = Node(attrs, inputs)
            new_of[nid].info = dict(producer.info)
            members = [idx.nodes[m] for m in chain.members]
            notes[node.name] = " + ".join(
                f"{m.op.name} '{m.name}'" for m in members if m.op is not None
            )
            continue
        inputs = [entry(e) for e in idx[nid].inputs]
        new_of[nid] = renode(node, node.attrs, inputs, [new_of[d] for d in idx[nid].control_deps])
        if new_of[nid] is not node:
            copied_from[new_of[nid]] = node
    graph_attrs = {k: v for k, v in graph.attrs.items() if k not in _STALE}
    graph_attrs[WITH_RELU], graph_attrs[BN_RELU_COPIED_FROM] = notes, copied_from
    return Graph([entry(e) for e in idx.outputs], graph_attrs)


def _chains(idx: IndexedGraph) -> list[_Chain]:
    """Every chain the pass may rewrite, no two sharing a node."""
    producers = [
        nid for nid, n in enumerate(idx.nodes) if n.op is not None and n.op.has_attr(FWithReLU)
    ]
    if not producers:  # most graphs: no reader map to build
        return []
    readers = _readers(idx)
    deps = {d for nid in range(idx.num_nodes) for d in idx[nid].control_deps}
    deps.update(nid for nid in range(idx.num_nodes) if idx[nid].control_deps)
    taken: set[int] = set()

    def only_reader(nid: int) -> int | None:
        """The one node reading nid's output 0 (none: several, a graph output, or it or
        nid is a control dependency or has one, or in another ctx_group)."""
        after = readers.get((nid, 0), [])
        if len(after) != 1 or after[0] < 0 or nid in deps:
            return None
        reader = after[0]
        if reader in deps or reader in taken:
            return None
        group = idx.nodes[nid].attrs.dict.get(_GROUP)
        return reader if idx.nodes[reader].attrs.dict.get(_GROUP) == group else None

    def step(nid: int) -> str | None:
        node = idx.nodes[nid]
        get = None if node.op is None else node.op.get_attr(FEpilogueStep)
        return get(node.attrs) if get is not None else None

    chains: list[_Chain] = []
    for pid in producers:
        node = idx.nodes[pid]
        assert node.op is not None  # a producer declares FWithReLU
        ops = node.op.get_attr(FWithReLU)(node.attrs)
        if ops is None or any(readers.get((pid, k)) for k in range(1, node.num_outputs())):
            continue
        nxt = only_reader(pid)
        if nxt is None:
            continue
        if step(nxt) == "relu":
            chains.append(_Chain([pid, nxt], ops[0], None))
        elif step(nxt) == "add" and (relu := only_reader(nxt)) is not None and step(relu) == "relu":
            residual = next(e for e in idx[nxt].inputs if (e.node_id, e.index) != (pid, 0))
            chains.append(_Chain([pid, nxt, relu], ops[1], residual))
        else:
            continue
        taken.update(chains[-1].members)
    return chains


__all__ = ["BN_RELU_COPIED_FROM", "WITH_RELU", "fuse_bn_relu"]
