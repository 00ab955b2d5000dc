"""FuseBatchNormReLU: a node and the relu reading its output become one node of a fused op.

For training graphs, before the gradient is built: a node whose op declares FWithReLU
(BatchNorm -> _contrib_BatchNormWithReLU) and whose output 0 has one reader, a relu
(FEpilogueStep 'relu': Activation relu, relu), becomes one node of the named op, with
the node's inputs and attributes. Its gradient is then the fused op's, whose kernels
take relu's gradient as they read dy, so the rewrite removes two kernels and one pass
over the activation each way: relu's forward, and _backward_relu. ResNet-18 v1 has nine
such pairs.

A pair is rewritten only when the producer's output 0 is no graph output and has no other
reader, its other outputs (mean and var) have no reader, both are in the same ctx_group,
and neither node is a control dependency or has one. The fused node takes the relu
node's name, so the graph output and the monitor name it may be keep theirs. Provides
`with_relu`: {fused node name: "BatchNorm 'bn' + Activation 'relu'"}. The pass builds a
new graph and never edits the given nodes.

>>> import nnvmpy as nv
>>> from nnvmpy.graph import Graph, apply_passes
>>> y = nv.sym.Activation(nv.sym.BatchNorm(nv.sym.var("x")), act_type="relu")
>>> g = apply_passes(Graph(y._heads), ["FuseBatchNormReLU"])
>>> [n.op.name for n in g.indexed.nodes if n.op is not None]
['_contrib_BatchNormWithReLU']
"""

from __future__ import annotations

from ..attrs import FEpilogueStep, FWithReLU
from ..graph.attrs import DTYPE, DTYPE_NUM_UNKNOWN_NODES, SHAPE, SHAPE_NUM_UNKNOWN_NODES
from ..graph.graph import Graph, IndexedGraph
from ..graph.node import Node, NodeEntry
from ..graph.pass_registry import register_pass
from ..registry import NodeAttrs, Op
from .fuse_epilogue import _readers
from .simplify_inference import renode

#: provided: {fused node name: "BatchNorm 'bn' + Activation 'relu'"}
WITH_RELU = "with_relu"
_GROUP = "__ctx_group__"
_STALE = (SHAPE, DTYPE, SHAPE_NUM_UNKNOWN_NODES, DTYPE_NUM_UNKNOWN_NODES)


@register_pass("FuseBatchNormReLU", provides=(WITH_RELU,), op_attrs=(FWithReLU, FEpilogueStep))
def fuse_bn_relu(graph: Graph) -> Graph:
    """A graph computing the same outputs, each (producer, relu) pair as one fused node."""
    idx = graph.indexed
    pairs = _pairs(idx)  # relu nid -> (producer nid, fused op name)
    producers = {p for p, _ in pairs.values()}
    new_of: dict[int, Node] = {}
    notes: dict[str, str] = {}

    def entry(e: NodeEntry) -> NodeEntry:
        return NodeEntry(new_of[e.node_id], e.index, e.version)

    for nid, node in enumerate(idx.nodes):
        if nid in producers:
            continue
        if nid in pairs:
            pid, op_name = pairs[nid]
            producer = idx.nodes[pid]
            attrs = NodeAttrs(Op.get(op_name), node.name, None, producer.attrs.parsed)
            attrs.dict = dict(producer.attrs.dict)
            fused = Node(attrs, [entry(e) for e in idx[pid].inputs])
            fused.info = dict(producer.info)
            new_of[nid] = new_of[pid] = fused
            notes[node.name] = f"{producer.op.name} '{producer.name}' + "
            notes[node.name] += f"{node.op.name} '{node.name}'"
            continue
        inputs = [entry(e) for e in idx[nid].inputs]
        new_of[nid] = renode(node, node.attrs, inputs, [new_of[d] for d in idx[nid].control_deps])
    attrs = {k: v for k, v in graph.attrs.items() if k not in _STALE}
    attrs[WITH_RELU] = notes
    return Graph([entry(e) for e in idx.outputs], attrs)


def _pairs(idx: IndexedGraph) -> dict[int, tuple[int, str]]:
    """{relu nid: (producer nid, fused op)} for every pair the pass may rewrite."""
    readers = _readers(idx)
    with_deps = {d for nid in range(idx.num_nodes) for d in idx[nid].control_deps}
    with_deps.update(nid for nid in range(idx.num_nodes) if idx[nid].control_deps)
    pairs: dict[int, tuple[int, str]] = {}
    for pid, node in enumerate(idx.nodes):
        get = None if node.op is None else node.op.get_attr(FWithReLU)
        fused_op = get(node.attrs) if get is not None else None
        if fused_op is None or pid in with_deps:
            continue
        after = readers.get((pid, 0), [])
        if len(after) != 1 or after[0] < 0 or after[0] in with_deps:
            continue
        if any(readers.get((pid, k)) for k in range(1, node.num_outputs())):
            continue
        relu = idx.nodes[after[0]]
        if relu.attrs.dict.get(_GROUP) != node.attrs.dict.get(_GROUP):
            continue  # placed on different devices (group2ctx)
        step = None if relu.op is None else relu.op.get_attr(FEpilogueStep)
        if step is not None and step(relu.attrs) == "relu":
            pairs[after[0]] = (pid, fused_op)
    return pairs


__all__ = ["WITH_RELU", "fuse_bn_relu"]
