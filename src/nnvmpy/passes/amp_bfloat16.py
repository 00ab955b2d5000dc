"""AmpBFloat16: Convolution and FullyConnected in bfloat16 with float32 accumulation.

The CPU half of MXNet's AMP for inference (`amp.convert_symbol(sym,
target_dtype='bfloat16')`), driven by the registry: a node takes part when its op
declares FBFloat16Compute (and it answers for the node's attributes), and the node

* asks for it: its hidden attribute `__amp_dtype__` is 'bfloat16' (what
  `nv.contrib.amp.convert_symbol` writes, kept in the symbol's JSON), or the pass runs
  with `amp_bf16_everywhere` (NNVMPY_INFER_BF16=1) and the node does not refuse with
  `__amp_dtype__='float32'` (convert_symbol's `excluded_sym_names`);
* computes in float32: every input but the weight and every output is float32 (a
  float64 or float16 network stays as it is).

Such a node is marked `__amp_dtype__='bfloat16'` and its weight input is read through a
`_PackBFloat16` node (one per weight, shared by the nodes reading it), which rounds the
weight to bfloat16 bits in the order the op's GEMM reads them. Why no amp_cast nodes and
no bfloat16 tensors: ops/amp_bf16.py. Provides `amp_bf16`: {node name: what happened}
(debug_str lists it, with the GEMM the nodes run on: MKL's bfloat16 GEMM or its
emulation). The executor runs this pass only on graphs without backward (grad_req
'null' everywhere) on the CPU, after SimplifyInference (a folded BatchNorm's new weight
is what gets packed) and before FuseEpilogue. Needs `dtype` (InferType).

>>> import nnvmpy as nv
>>> from nnvmpy.graph import Graph, apply_passes
>>> x = nv.sym.var("x")
>>> net = nv.sym.FullyConnected(nv.sym.Convolution(x, kernel=(3, 3), num_filter=4), num_hidden=2)
>>> g = apply_passes(Graph(net._heads), ["InferShape", "InferType"],
...                  shapes={"x": (1, 3, 5, 5)}, dtypes={"x": "float32"})
>>> g = apply_passes(g, ["AmpBFloat16"], amp_bf16_everywhere=True)
>>> [n.op.name for n in g.indexed.nodes if n.op is not None]
['_PackBFloat16', 'Convolution', '_PackBFloat16', 'FullyConnected']
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..attrs import FBFloat16Compute
from ..base import ParamError
from ..graph.attrs import DTYPE, DTYPE_NUM_UNKNOWN_NODES, SHAPE, SHAPE_NUM_UNKNOWN_NODES
from ..graph.graph import Graph, IndexedGraph
from ..graph.node import Node, NodeEntry
from ..graph.pass_registry import register_pass
from ..registry import NodeAttrs, Op
from .simplify_inference import renode

#: provided: {node name: "Convolution: bfloat16 ..." or "...: not in bfloat16 (why)"}
AMP_BF16 = "amp_bf16"
#: input: True marks every eligible node not refusing, False only those asking
AMP_BF16_EVERYWHERE = "amp_bf16_everywhere"
_STALE = (SHAPE, DTYPE, SHAPE_NUM_UNKNOWN_NODES, DTYPE_NUM_UNKNOWN_NODES)
_F32 = np.dtype(np.float32)


@register_pass("AmpBFloat16", requires=(DTYPE,), provides=(AMP_BF16,), op_attrs=(FBFloat16Compute,))
def amp_bfloat16(graph: Graph) -> Graph:
    """The same graph with the eligible nodes marked and their weights packed to bfloat16."""
    from nnvmpy.ops.amp_bf16 import AMP_DTYPE, gemm_description

    idx = graph.indexed
    everywhere = bool(graph.attrs.get(AMP_BF16_EVERYWHERE, False))
    dtypes = graph.attrs[DTYPE]
    gemm = gemm_description()
    new_of: dict[int, Node] = {}
    packs: dict[tuple[int, int, bool], Node] = {}
    notes: dict[str, str] = {}
    for nid, node in enumerate(idx.nodes):
        if node.is_variable():
            new_of[nid] = node
            continue
        inputs = [NodeEntry(new_of[e.node_id], e.index, e.version) for e in idx[nid].inputs]
        deps = [new_of[d] for d in idx[nid].control_deps]
        attrs = node.attrs
        want, why = _decide(idx, nid, dtypes, everywhere)
        if want is not None:
            w = idx[nid].inputs[want.weight]
            key = (w.node_id, w.index, want.channels_last)
            if key not in packs:
                packs[key] = _pack_node(idx, w, inputs[want.weight], want.channels_last)
            inputs[want.weight] = NodeEntry(packs[key], 0)
            marked = {**attrs.dict, AMP_DTYPE: "bfloat16"}
            attrs = NodeAttrs(node.op, node.name, marked, node.attrs.parsed)
            notes[node.name] = f"{_op(node)}: bfloat16 operands, float32 accumulation ({gemm})"
        elif why:
            notes[node.name] = f"{_op(node)}: not in bfloat16 ({why})"
        new_of[nid] = renode(node, attrs, inputs, deps)
    outputs = [NodeEntry(new_of[e.node_id], e.index, e.version) for e in idx.outputs]
    out_attrs = {k: v for k, v in graph.attrs.items() if k not in _STALE}
    out_attrs[AMP_BF16] = notes
    return Graph(outputs, out_attrs)


def _op(node: Node) -> str:
    return node.op.name if node.op is not None else "variable"


def _decide(idx: IndexedGraph, nid: int, dtypes: list[Any], everywhere: bool) -> tuple[Any, str]:
    """(BF16Weight, "") for a node to mark; (None, why) for one that asked but stays
    float32 (why is "" when it never asked)."""
    from nnvmpy.ops.amp_bf16 import AMP_DTYPE, AMP_DTYPES

    node = idx.nodes[nid]
    assert node.op is not None
    asked = node.attrs.dict.get(AMP_DTYPE)
    if asked is not None and asked not in AMP_DTYPES:
        raise ParamError(
            f"AmpBFloat16: node {node.name!r} ({node.op.name}) has {AMP_DTYPE}={asked!r}; "
            f"expected one of {', '.join(map(repr, AMP_DTYPES))}"
        )
    spec_fn = node.op.get_attr(FBFloat16Compute)
    want = spec_fn(node.attrs) if spec_fn is not None else None
    if asked == "float32" or (asked is None and not everywhere):
        return None, "excluded" if asked == "float32" and everywhere else ""
    if want is None:
        return None, "" if asked is None else "the op cannot compute these attributes in bfloat16"
    if want.weight >= len(idx[nid].inputs):
        return None, f"it has no input {want.weight}"
    for eid in [*idx[nid].input_eids, *idx.output_eids_of(nid)]:
        dt = dtypes[eid]
        if dt is None:
            return None, "its dtypes are not known"
        if np.dtype(dt) != _F32:
            return None, f"it computes in {np.dtype(dt)}, not float32"
    return want, ""


def _pack_node(idx: IndexedGraph, w: Any, source: NodeEntry, channels_last: bool) -> Node:
    """The `_PackBFloat16` node reading the weight entry `source`."""
    from nnvmpy.ops.amp_bf16 import PACK_OP

    producer = idx.nodes[w.node_id]
    suffix = "" if producer.num_outputs() == 1 else f"_{w.index}"
    name = f"{producer.name}{suffix}_bf16"
    attrs = Op.get(PACK_OP).parse_attrs({"channels_last": str(channels_last)}, name)
    return Node(attrs, [source])


__all__ = ["AMP_BF16", "AMP_BF16_EVERYWHERE", "amp_bfloat16"]
