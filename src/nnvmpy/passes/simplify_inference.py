"""SimplifyInference: drop what a forward-only (is_train=False) graph computes for nothing.

Two rewrites, each read from an op attribute, never from an op name:

* **Fold a scale-shift into its producer.** A node whose op declares FScaleShift
  (BatchNorm: y = x * gamma / sqrt(var + eps) + (beta - mean * scale) per channel) goes
  away when input 0 is output 0 of a node whose op declares FFoldScaleShift
  (Convolution, FullyConnected), that output is read by this node only, no other output
  of either node is read, the channel axes agree and the weight is float32/float64 (or
  of unknown dtype). A `_FoldScaleShift` node computes the producer's new weight and bias,
  W' = W * scale[c] and b' = b * scale + shift (ops/nn/inference.py); the producer gets
  a bias input when it had none. The fold node is TMemoizable: the executor reruns it
  only when a parameter or statistic was written since, so a forward pass pays for the
  fold only after the parameters change.
* **Remove inference identities.** A node whose op declares FInferenceIdentity (Dropout
  in mode 'training') and whose other outputs nobody reads is replaced by that input.

Both are exact at is_train=False only, except a fold whose FScaleShift says
`train_safe` (BatchNorm with use_global_stats). Provides `simplified` ({node name: what
happened to it}), `simplified_train_safe` (False when some rewrite assumed inference:
the executor then runs the unsimplified graph for forward(is_train=True)) and
`simplified_copied_from` ({new node: the given node it copies with the same op,
attributes and input shapes and types}: Graph.seed_entry_values carries their shapes and
types over, so only the nodes the pass made are inferred again). The pass
builds a new graph and never edits the given nodes; with `shape`/`dtype` on the graph
(after InferShape/InferType) it checks axes and dtypes, without them it folds only where
both channel axes are given non-negative and equal.

>>> import nnvmpy as nv
>>> from nnvmpy.graph import Graph, apply_passes
>>> x = nv.sym.var("x")
>>> net = nv.sym.Dropout(nv.sym.BatchNorm(nv.sym.Convolution(x, kernel=(3, 3), num_filter=4)))
>>> g = apply_passes(Graph(net._heads), ["SimplifyInference"])
>>> [n.op.name for n in g.indexed.nodes if n.op is not None]
['_FoldScaleShift', 'Convolution']
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..attrs import FFoldScaleShift, FInferenceIdentity, FScaleShift
from ..graph.attrs import (
    DTYPE,
    DTYPE_NUM_UNKNOWN_NODES,
    SHAPE,
    SHAPE_NUM_UNKNOWN_NODES,
)
from ..graph.graph import Graph, IndexedGraph
from ..graph.node import Node, NodeEntry
from ..graph.pass_registry import register_pass
from ..registry import NodeAttrs, Op

#: provided: {node name: what the pass did to it}
SIMPLIFIED = "simplified"
#: provided: True when the rewritten graph is also right at is_train=True
SIMPLIFIED_TRAIN_SAFE = "simplified_train_safe"
#: provided: {new node: the given node it copies} (same op, attributes, input values)
SIMPLIFIED_COPIED_FROM = "simplified_copied_from"
_STALE = (SHAPE, DTYPE, SHAPE_NUM_UNKNOWN_NODES, DTYPE_NUM_UNKNOWN_NODES)
_FOLDABLE = (np.dtype(np.float32), np.dtype(np.float64))


@register_pass(
    "SimplifyInference",
    provides=(SIMPLIFIED, SIMPLIFIED_TRAIN_SAFE, SIMPLIFIED_COPIED_FROM),
    op_attrs=(FScaleShift, FFoldScaleShift, FInferenceIdentity),
)
def simplify_inference(graph: Graph) -> Graph:
    """A graph computing the same outputs at is_train=False, with fewer nodes."""
    return _Rewriter(graph).run()


class _Rewriter:
    """One walk over the nodes in topological order, mapping old entries to new ones."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.idx: IndexedGraph = graph.indexed
        self.readers = _reader_counts(self.idx)
        self.deps = {d for nid in range(self.idx.num_nodes) for d in self.idx[nid].control_deps}
        self.new_of: dict[int, Node] = {}
        self.moved: dict[tuple[int, int], NodeEntry] = {}  # entries that now come from elsewhere
        self.notes: dict[str, str] = {}
        self.train_safe = True
        # a kept node reads what it read before, or an entry of the same shape and dtype
        # (a removed identity's input, a folded producer's output)
        self.copies: dict[Node, Node] = {}

    def run(self) -> Graph:
        idx = self.idx
        for nid, node in enumerate(idx.nodes):
            if node.is_variable():
                self.new_of[nid] = node
                continue
            inputs = [self.entry(e.node_id, e.index, e.version) for e in idx[nid].inputs]
            if nid not in self.deps and (self._remove(nid, inputs) or self._fold(nid, inputs)):
                continue
            deps = [self.new_of[d] for d in idx[nid].control_deps]
            self.new_of[nid] = renode(node, node.attrs, inputs, deps, self.copies)
        outputs = [self.entry(e.node_id, e.index, e.version) for e in idx.outputs]
        attrs = {k: v for k, v in self.graph.attrs.items() if k not in _STALE}
        attrs[SIMPLIFIED] = self.notes
        attrs[SIMPLIFIED_TRAIN_SAFE] = self.train_safe
        attrs[SIMPLIFIED_COPIED_FROM] = self.copies
        return Graph(outputs, attrs)

    def entry(self, nid: int, index: int, version: int = 0) -> NodeEntry:
        moved = self.moved.get((nid, index))
        return moved if moved is not None else NodeEntry(self.new_of[nid], index, version)

    def _unread(self, nid: int, skip: int = 0) -> bool:
        """No output of node nid but output `skip` has a reader (graph outputs count)."""
        n = self.idx.nodes[nid].num_outputs()
        return all(self.readers.get((nid, k), 0) == 0 for k in range(n) if k != skip)

    def _remove(self, nid: int, inputs: list[NodeEntry]) -> bool:
        node = self.idx.nodes[nid]
        assert node.op is not None
        ident = node.op.get_attr(FInferenceIdentity)
        k = ident(node.attrs) if ident is not None else None
        if k is None or not self._unread(nid):
            return False
        self.moved[(nid, 0)] = inputs[k]
        self.notes[node.name] = f"{node.op.name}: removed (the identity at inference)"
        self.train_safe = False
        return True

    def _fold(self, nid: int, inputs: list[NodeEntry]) -> bool:
        node = self.idx.nodes[nid]
        assert node.op is not None
        get_ss = node.op.get_attr(FScaleShift)
        ss = get_ss(node.attrs) if get_ss is not None else None
        if ss is None or not self._unread(nid):
            return False
        data = self.idx[nid].inputs[0]
        pid = data.node_id
        producer = self.idx.nodes[pid]
        get_target = None if producer.op is None else producer.op.get_attr(FFoldScaleShift)
        target = get_target(producer.attrs) if get_target is not None else None
        if (
            target is None
            or data.index != 0
            or pid in self.deps
            or self.readers.get((pid, 0), 0) != 1
            or not self._unread(pid)
            or not self._axes_agree(ss.axis, target.out_axis, pid)
            or not self._foldable_dtype(pid)
        ):
            return False
        self.moved[(nid, 0)] = NodeEntry(self._folded(producer, pid, node, ss, target, inputs))
        self.notes[node.name] = f"{node.op.name}: folded into '{producer.name}'"
        self.train_safe = self.train_safe and bool(ss.train_safe)
        return True

    def _folded(
        self, producer: Node, pid: int, node: Node, ss: Any, target: Any, inputs: list[NodeEntry]
    ) -> Node:
        """The producer reading W' and b' from a new _FoldScaleShift node."""
        from nnvmpy.ops.nn.inference import FOLD_OP, FoldSpec

        p_inputs = list(self.new_of[pid].inputs)
        bias = None if target.bias is None else p_inputs[target.bias]
        fold_in = [
            p_inputs[target.weight],
            *([bias] if bias else []),
            *(inputs[i] for i in ss.inputs),
        ]
        spec = FoldSpec(ss, bias is not None, node.name)
        fold = Node(NodeAttrs(Op.get(FOLD_OP), f"{node.name}_fold", None, spec), fold_in)
        fold.attrs.dict = {"folds": node.name, "into": producer.name}
        attrs = producer.attrs
        p_inputs[target.weight] = NodeEntry(fold, 0)
        if bias is None:
            assert producer.op is not None
            attrs = producer.op.parse_attrs({**attrs.dict, **target.with_bias}, producer.name)
            p_inputs.insert(target.bias_index, NodeEntry(fold, 1))
        else:
            p_inputs[target.bias] = NodeEntry(fold, 1)
        return renode(producer, attrs, p_inputs, list(self.new_of[pid].control_deps))

    def _axes_agree(self, axis: int, out_axis: int, pid: int) -> bool:
        if axis >= 0 and out_axis >= 0:
            return axis == out_axis
        shapes = self.graph.attrs.get(SHAPE)
        shape = shapes[self.idx.entry_id(pid, 0)] if shapes is not None else None
        if shape is None:
            return False
        ndim = len(shape)
        return axis % ndim == out_axis % ndim

    def _foldable_dtype(self, pid: int) -> bool:
        dtypes = self.graph.attrs.get(DTYPE)
        if dtypes is None:
            return True
        dtype = dtypes[self.idx.entry_id(pid, 0)]
        return dtype is None or np.dtype(dtype) in _FOLDABLE


def _reader_counts(idx: IndexedGraph) -> dict[tuple[int, int], int]:
    """Readers of every (node id, output index), a graph output counting as one."""
    counts: dict[tuple[int, int], int] = {}
    for nid in range(idx.num_nodes):
        for e in idx[nid].inputs:
            counts[(e.node_id, e.index)] = counts.get((e.node_id, e.index), 0) + 1
    for e in idx.outputs:
        counts[(e.node_id, e.index)] = counts.get((e.node_id, e.index), 0) + 1
    return counts


def renode(
    node: Node,
    attrs: NodeAttrs,
    inputs: list[NodeEntry],
    deps: list[Node],
    copies: dict[Node, Node] | None = None,
) -> Node:
    """`node` itself when nothing changed, else a copy with these attributes and inputs;
    `copies` records {copy: node} for a copy with node's own attributes (a caller passes
    it only where the new inputs have the old ones' shapes and types)."""
    same = (
        attrs is node.attrs
        and len(inputs) == len(node.inputs)
        and all(a.node is b.node and a.index == b.index for a, b in zip(inputs, node.inputs))
        and all(a is b for a, b in zip(deps, node.control_deps))
    )
    if same:
        return node
    if attrs is node.attrs:
        attrs = NodeAttrs(node.op, node.name, None, node.attrs.parsed)
        attrs.dict = dict(node.attrs.dict)
    elif copies is not None:
        copies = None  # other attributes: not a copy
    new = Node(attrs, inputs, deps)
    new.info = dict(node.info)
    if copies is not None:
        copies[new] = node
    return new


__all__ = [
    "SIMPLIFIED",
    "SIMPLIFIED_COPIED_FROM",
    "SIMPLIFIED_TRAIN_SAFE",
    "renode",
    "simplify_inference",
]
