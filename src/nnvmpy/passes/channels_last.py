"""ChannelsLast: run the layers that are faster on (N, H, W, C) data in that layout, and
keep it between them.

MXNet's layers (and nnvmpy's graphs) are channels-first: (N, C, H, W). Some layers are
faster channels-last: a strided or 1x1 convolution there is a GEMM over rows that are
contiguous runs of the input (im2row, _conv_nhwc.py) instead of a gather of scattered
scalars per channel plane. The pass, on a typed graph without backward:

1. asks every node whose op declares FChannelsLast for a twin (the op judges whether the
   twin pays for these shapes; ops/nn/channels_last.py: Convolution answers with
   `_ChannelsLastConvolution`, Pooling with `_ChannelsLastPooling` where its input is
   channels-last already);
2. lets element-wise nodes (FScalarFunction, every input and the output of one 4-D
   shape: relu, the residual add, a fused chain) take the layout of their inputs when at
   least one input is channels-last, so the layout is kept between layers instead of
   converted back and forth;
3. keeps the connected runs of such nodes that hold at least two twins (one layer alone
   would pay a transpose in and out for what it saves);
4. rebuilds the graph: a twin reads its data channels-last and its weight through a
   memoized `_ChannelsLastWeight` node; wherever a reader wants the other layout than an
   entry has, one `transpose` node per entry and direction converts it (every graph
   output and every other reader gets channels-first data, as before the pass).

The outputs are the same numbers as the graph's (same arithmetic per output value, up to
the GEMM's order of summation). Provides `channels_last`: {node name: what happened}, and
`channels_last_copied_from`: {new node: the given node it copies} for the rewritten nodes
that keep their layout (the same op, attributes and input values:
Graph.seed_entry_values carries them over).
Run it before FuseEpilogue, so the twins take their epilogues too.

>>> import nnvmpy as nv
>>> from nnvmpy.graph import Graph, apply_passes
>>> x = nv.sym.var("x")
>>> y = nv.sym.relu(nv.sym.Convolution(x, kernel=(1, 1), stride=(2, 2), num_filter=4))
>>> y = nv.sym.Convolution(y, kernel=(3, 3), pad=(1, 1), num_filter=4)
>>> g = apply_passes(Graph(y._heads), ["InferShape", "InferType", "ChannelsLast"],
...                  shapes={"x": (1, 8, 6, 6)}, dtypes={"x": "float32"})
>>> [n.op.name for n in g.indexed.nodes if n.op is not None]  # doctest: +NORMALIZE_WHITESPACE
['transpose', '_ChannelsLastWeight', '_ChannelsLastConvolution', 'relu',
 '_ChannelsLastWeight', '_ChannelsLastConvolution', 'transpose']
"""

from __future__ import annotations

from typing import Any

from ..attrs import FChannelsLast, FScalarFunction
from ..graph.attrs import DTYPE, DTYPE_NUM_UNKNOWN_NODES, SHAPE, SHAPE_NUM_UNKNOWN_NODES
from ..graph.graph import Graph, IndexedGraph
from ..graph.node import Node, NodeEntry
from ..graph.pass_registry import register_pass
from ..registry import NodeAttrs, Op
from .simplify_inference import renode

#: provided: {node name: what the pass did to it}
CHANNELS_LAST = "channels_last"
#: provided: {new node: the given node it copies}, for nodes still channels-first
CHANNELS_LAST_COPIED_FROM = "channels_last_copied_from"
_STALE = (SHAPE, DTYPE, SHAPE_NUM_UNKNOWN_NODES, DTYPE_NUM_UNKNOWN_NODES)
#: transpose axes: channels-first to channels-last, and back
_TO_LAST, _TO_FIRST = (0, 2, 3, 1), (0, 3, 1, 2)


@register_pass(
    "ChannelsLast",
    requires=(SHAPE, DTYPE),
    provides=(CHANNELS_LAST, CHANNELS_LAST_COPIED_FROM),
    op_attrs=(FChannelsLast, FScalarFunction),
)
def channels_last(graph: Graph) -> Graph:
    """A graph computing the same outputs, with the twins that pay channels-last."""
    return _Rewriter(graph).run()


class _Rewriter:
    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.idx: IndexedGraph = graph.indexed
        self.shapes = graph.attrs[SHAPE]
        self.dtypes = graph.attrs[DTYPE]
        idx = self.idx
        self.deps = {d for nid in range(idx.num_nodes) for d in idx[nid].control_deps}
        entries = [e for nid in range(idx.num_nodes) for e in idx[nid].inputs] + idx.outputs
        self.others_read = {e.node_id for e in entries if e.index > 0}
        self.twins: dict[int, Any] = {}
        self.last: set[int] = set()  # nodes whose output 0 is channels-last
        self.new_of: dict[int, Node] = {}
        self.converted: dict[tuple[int, int, bool], NodeEntry] = {}
        self.notes: dict[str, str] = {}
        self.copies: dict[Node, Node] = {}

    def run(self) -> Graph:
        self._decide()
        if not self.twins:
            return self._unchanged()
        idx = self.idx
        for nid, node in enumerate(idx.nodes):
            if node.op is None:  # a variable
                self.new_of[nid] = node
                continue
            twin = self.twins.get(nid)
            if twin is not None:
                self.new_of[nid] = self._twin(nid, twin)
                continue
            want_last = nid in self.last
            inputs = [
                self._entry(e.node_id, e.index, e.version, want_last) for e in idx[nid].inputs
            ]
            deps = [self.new_of[d] for d in idx[nid].control_deps]
            # a node computed channels-last reads (and writes) other shapes: no copy
            copies = None if want_last else self.copies
            self.new_of[nid] = renode(node, node.attrs, inputs, deps, copies)
            if want_last:
                self.notes[node.name] = f"{node.op.name}: computed channels-last"
        outputs = [self._entry(e.node_id, e.index, e.version, False) for e in idx.outputs]
        attrs = {k: v for k, v in self.graph.attrs.items() if k not in _STALE}
        attrs[CHANNELS_LAST], attrs[CHANNELS_LAST_COPIED_FROM] = self.notes, self.copies
        return Graph(outputs, attrs)

    def _unchanged(self) -> Graph:
        out = Graph(list(self.graph.outputs), dict(self.graph.attrs))
        out.attrs[CHANNELS_LAST], out.attrs[CHANNELS_LAST_COPIED_FROM] = {}, {}
        return out

    # -- step 1 and 2: which nodes run channels-last ------------------------------------------

    def _decide(self) -> None:
        idx = self.idx
        for nid, node in enumerate(idx.nodes):
            if node.op is None or nid in self.deps or idx[nid].control_deps:
                continue
            inputs = idx[nid].inputs
            get = node.op.get_attr(FChannelsLast)
            if get is not None and not self._others_read(nid):
                in_shapes = [self._shape(e.node_id, e.index) for e in inputs]
                twin = get(node.attrs, in_shapes, self.dtypes[idx.entry_id(nid, 0)])
                if twin is not None and (not twin.follows or self._is_last(inputs[twin.data])):
                    self.twins[nid] = twin
                    self.last.add(nid)
                    continue
            if self._elementwise(nid) and any(self._is_last(e) for e in inputs):
                self.last.add(nid)
        self._drop_lone_twins()

    def _drop_lone_twins(self) -> None:
        """Keep only the connected runs of channels-last nodes that hold two twins or
        more: a lone layer would pay a transpose in and out for what it saves."""
        root = {nid: nid for nid in self.last}

        def find(n: int) -> int:
            while root[n] != n:
                root[n] = root[root[n]]
                n = root[n]
            return n

        for nid in self.last:
            for e in self.idx[nid].inputs:
                if self._is_last(e):
                    root[find(e.node_id)] = find(nid)
        twins: dict[int, int] = {}
        for nid in self.twins:
            twins[find(nid)] = twins.get(find(nid), 0) + 1
        lone = {nid for nid in self.last if twins.get(find(nid), 0) < 2}
        self.last -= lone
        for nid in lone:
            self.twins.pop(nid, None)

    def _is_last(self, e: Any) -> bool:
        return e.node_id in self.last and e.index == 0

    def _others_read(self, nid: int) -> bool:
        """Some output of node nid but output 0 has a reader (graph outputs count)."""
        return nid in self.others_read

    def _shape(self, nid: int, index: int) -> Any:
        return self.shapes[self.idx.entry_id(nid, index)]

    def _elementwise(self, nid: int) -> bool:
        """One output, computed element by element from inputs of that output's 4-D shape."""
        node = self.idx.nodes[nid]
        scalar = node.op.get_attr(FScalarFunction) if node.op is not None else None
        if scalar is None or node.num_outputs() != 1 or scalar(node.attrs) is None:
            return False
        out = self._shape(nid, 0)
        if out is None or len(out) != 4:
            return False
        return all(self._shape(e.node_id, e.index) == out for e in self.idx[nid].inputs)

    # -- step 3: the new graph -------------------------------------------------------------------

    def _entry(self, nid: int, index: int, version: int, want_last: bool) -> NodeEntry:
        """Entry (nid, index) of the new graph in the layout its reader wants."""
        entry = NodeEntry(self.new_of[nid], index, version)
        is_last = nid in self.last and index == 0
        if is_last == want_last:
            return entry
        key = (nid, index, want_last)
        converted = self.converted.get(key)
        if converted is None:
            source = self.idx.nodes[nid].name
            name = f"{source}_{'nhwc' if want_last else 'nchw'}"
            axes = _TO_LAST if want_last else _TO_FIRST
            attrs = Op.get("transpose").parse_attrs({"axes": str(axes)}, name)
            converted = self.converted[key] = NodeEntry(Node(attrs, [entry]))
            self.notes[name] = (
                f"transpose: '{source}' to channels-{'last' if want_last else 'first'}"
            )
        return converted

    def _twin(self, nid: int, twin: Any) -> Node:
        from nnvmpy.ops.nn.channels_last import WEIGHT_OP

        node, idx = self.idx.nodes[nid], self.idx
        assert node.op is not None  # a twin is declared by the node's op
        inputs = []
        for i, e in enumerate(idx[nid].inputs):
            entry = self._entry(e.node_id, e.index, e.version, i == twin.data)
            if i == twin.weight:
                packer = NodeAttrs(Op.get(WEIGHT_OP), f"{node.name}_weight_nhwc", None, twin.pack)
                entry = NodeEntry(Node(packer, [entry]))
            inputs.append(entry)
        attrs = NodeAttrs(Op.get(twin.op), node.name, None, twin.parsed)
        attrs.dict = dict(node.attrs.dict)
        new = Node(attrs, inputs)
        new.info = dict(node.info)
        self.notes[node.name] = f"{node.op.name}: as {twin.op} (N, H, W, C)"
        return new


__all__ = ["CHANNELS_LAST", "CHANNELS_LAST_COPIED_FROM", "channels_last"]
