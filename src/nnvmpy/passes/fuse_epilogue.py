"""FuseEpilogue: a node's residual add and relu move into the node's own output loop.

A node whose op declares FEpilogue (Convolution) and whose output 0 has one reader, that
reader declaring FEpilogueStep 'add' (elemwise_add: the other operand is the residual)
and/or, after it, 'relu' (Activation relu, relu), becomes one `_Epilogue` node
(ops/nn/inference.py): the op's FEpilogue writes relu(op(x) + residual) as it writes
its output, instead of a second and third pass over memory (ResNet's conv -> add -> relu
after SimplifyInference folded the BatchNorm). A step is absorbed only when the entry it
reads has no other reader and is no graph output, and no node of the chain is a control
dependency; the residual cannot depend on the producer, since the step is the only reader
of its output. The `_Epilogue` node has no gradient: the executor runs this pass on graphs
without backward only. Provides `epilogues`: {fused node name: its members}; the fused
node is named after its last member, so the graph output it may be keeps its name; and
`epilogue_copied_from`: {new node: the given node it copies} for the other nodes (the
same op, attributes and input values: Graph.seed_entry_values carries them over).

>>> import nnvmpy as nv
>>> from nnvmpy.graph import Graph, apply_passes
>>> x, r = nv.sym.var("x"), nv.sym.var("r")
>>> y = nv.sym.relu(nv.sym.Convolution(x, kernel=(3, 3), num_filter=4) + r)
>>> g = apply_passes(Graph(y._heads), ["FuseEpilogue"])
>>> [n.op.name for n in g.indexed.nodes if n.op is not None]
['_Epilogue']
"""

from __future__ import annotations

from collections.abc import Callable

from ..attrs import FEpilogue, FEpilogueStep
from ..graph.attrs import DTYPE, DTYPE_NUM_UNKNOWN_NODES, SHAPE, SHAPE_NUM_UNKNOWN_NODES
from ..graph.graph import Graph, IndexedGraph
from ..graph.node import Node, NodeEntry
from ..graph.pass_registry import register_pass
from ..registry import NodeAttrs, Op
from .simplify_inference import renode

#: provided: {fused node name: "Convolution 'c' + elemwise_add 'a' + ... in one output loop"}
EPILOGUES = "epilogues"
#: provided: {new node: the given node it copies} for every rewritten node not fused
EPILOGUE_COPIED_FROM = "epilogue_copied_from"
_STALE = (SHAPE, DTYPE, SHAPE_NUM_UNKNOWN_NODES, DTYPE_NUM_UNKNOWN_NODES)


@register_pass(
    "FuseEpilogue",
    provides=(EPILOGUES, EPILOGUE_COPIED_FROM),
    op_attrs=(FEpilogue, FEpilogueStep),
)
def fuse_epilogue(graph: Graph) -> Graph:
    """A graph computing the same outputs, with epilogue steps inside their producers."""
    idx = graph.indexed
    readers = _readers(idx)
    deps = {d for nid in range(idx.num_nodes) for d in idx[nid].control_deps}
    chains: dict[int, list[int]] = {}  # last member nid -> [producer nid, step nids...]
    absorbed: set[int] = set()
    for nid, node in enumerate(idx.nodes):
        if node.op is not None and node.op.get_attr(FEpilogue) is not None and nid not in deps:
            chain = _chain(idx, nid, readers, deps | absorbed | set(chains))
            if len(chain) > 1:
                chains[chain[-1]] = chain
                absorbed.update(chain[:-1])
    new_of: dict[int, Node] = {}
    notes: dict[str, str] = {}
    copies: dict[Node, Node] = {}  # a fused node's output is its last member's

    def entry(nid: int, index: int, version: int = 0) -> NodeEntry:
        return NodeEntry(new_of[nid], index, version)

    for nid, node in enumerate(idx.nodes):
        if nid in absorbed:
            continue
        if nid in chains:
            new_of[nid] = _fused(idx, chains[nid], entry)
            members = [idx.nodes[m] for m in chains[nid]]
            notes[node.name] = " + ".join(f"{m.op.name} '{m.name}'" for m in members if m.op)
            notes[node.name] += " in one output loop"
            continue
        inputs = [entry(e.node_id, e.index, e.version) for e in idx[nid].inputs]
        cdeps = [new_of[d] for d in idx[nid].control_deps]
        new_of[nid] = renode(node, node.attrs, inputs, cdeps, copies)
    attrs = {k: v for k, v in graph.attrs.items() if k not in _STALE}
    attrs[EPILOGUES], attrs[EPILOGUE_COPIED_FROM] = notes, copies
    return Graph([entry(e.node_id, e.index, e.version) for e in idx.outputs], attrs)


def _readers(idx: IndexedGraph) -> dict[tuple[int, int], list[int]]:
    """Reader node ids of every (node id, output index); -1 stands for a graph output."""
    readers: dict[tuple[int, int], list[int]] = {}
    for nid in range(idx.num_nodes):
        for e in idx[nid].inputs:
            readers.setdefault((e.node_id, e.index), []).append(nid)
    for e in idx.outputs:
        readers.setdefault((e.node_id, e.index), []).append(-1)
    return readers


def _step(node: Node) -> str | None:
    get = None if node.op is None else node.op.get_attr(FEpilogueStep)
    return get(node.attrs) if get is not None else None


def _chain(
    idx: IndexedGraph, nid: int, readers: dict[tuple[int, int], list[int]], deps: set[int]
) -> list[int]:
    """[producer, 'add' step?, 'relu' step?]: the steps absorbable after node nid (none of
    them in `deps`: control dependencies, and steps an earlier chain took)."""
    chain = [nid]
    wanted = ["add", "relu"]
    while wanted:
        last = idx.nodes[chain[-1]]
        others = [readers.get((chain[-1], k), []) for k in range(1, last.num_outputs())]
        after = readers.get((chain[-1], 0), [])
        if any(others) or len(after) != 1 or after[0] < 0 or after[0] in deps:
            break
        step = _step(idx.nodes[after[0]])
        if step not in wanted:
            break
        chain.append(after[0])
        wanted = wanted[wanted.index(step) + 1 :]
    return chain


def _fused(idx: IndexedGraph, chain: list[int], entry: Callable[..., NodeEntry]) -> Node:
    """The `_Epilogue` node for chain = [producer, steps...]."""
    from nnvmpy.ops.nn.inference import EPILOGUE_OP, Epilogue, EpilogueSpec

    producer = idx.nodes[chain[0]]
    inputs = [entry(e.node_id, e.index, e.version) for e in idx[chain[0]].inputs]
    residual = None
    steps = [_step(idx.nodes[m]) for m in chain[1:]]
    if "add" in steps:
        add = chain[1 + steps.index("add")]
        before = chain[steps.index("add")]  # the member whose output the add reads
        residual = next(e for e in idx[add].inputs if (e.node_id, e.index) != (before, 0))
        inputs.append(entry(residual.node_id, residual.index, residual.version))
    spec = EpilogueSpec(
        producer.attrs,
        Epilogue(residual is not None, "relu" in steps),
        tuple(idx.nodes[m].name for m in chain),
    )
    last = idx.nodes[chain[-1]]
    attrs = NodeAttrs(Op.get(EPILOGUE_OP), last.name, None, spec)
    attrs.dict = {"members": ",".join(spec.members)}
    return Node(attrs, inputs)


__all__ = ["EPILOGUES", "EPILOGUE_COPIED_FROM", "fuse_epilogue"]
