"""FusePointwise: each group of connected element-wise nodes becomes one `_FusedOp` node.

The pass reads only the registry: a node is fusable when its op declares FScalarFunction
(its scalar body) and is pure (fusion/grouping.py says which groups form). Each group
becomes one node whose FusedSpec lists the members and where their arguments come from;
a member output read outside the group (by another node, as a graph output, or kept for
backward) is an output of the fused node, every other intermediate value lives only in
registers of the generated kernel (fusion/codegen.py).

Optional inputs: `shape` and `dtype` (after InferShape/InferType) restrict groups to one
shape and to dtypes the kernels compute in; `fuse_phase_outputs` = k says the first k
graph outputs are the forward part, whose nodes never fuse with the rest (the executor
runs them at different times, and a value only backward groups read is recomputed there
from the graph's variables instead of kept, fusion/recompute.py); `fuse_device` = "cpu"
keeps large float ops that NumPy's SIMD loops compute faster (exp, tanh, ...) out of CPU
groups. Provides `fused_groups`:
the member names of each fused node, by fused node name. The pass builds a new graph and
never edits the given nodes.

>>> import nnvmpy as nv
>>> from nnvmpy.graph import Graph, apply_passes
>>> x = nv.sym.var("x")
>>> g = apply_passes(Graph((nv.sym.exp(x) * 2 + 1)._heads), ["FusePointwise"])
>>> [n.op.name for n in g.indexed.nodes if n.op is not None]
['_FusedOp']
"""

from __future__ import annotations

from typing import Any

from ..attrs import FCreateOpState, FMutateInputs, FResourceRequest, FScalarFunction
from ..graph.attrs import (
    DTYPE,
    DTYPE_NUM_UNKNOWN_NODES,
    SHAPE,
    SHAPE_NUM_UNKNOWN_NODES,
)
from ..graph.graph import Graph
from ..graph.node import Node, NodeEntry
from ..graph.pass_registry import register_pass
from ..registry import NodeAttrs

#: graph input: the leading outputs that form the forward phase
FUSE_PHASE_OUTPUTS = "fuse_phase_outputs"
#: graph input: "cpu" or "gpu", the device the graph runs on (absent: any)
FUSE_DEVICE = "fuse_device"
#: provided: {fused node name: [member node names]}
FUSED_GROUPS = "fused_groups"
#: provided: {new node: the given node it copies} for nodes copied because an input or a
#: control dependency became a fused node's (the same op and attributes, so the same
#: shapes and types: Graph.seed_entry_values carries them over)
FUSE_COPIED_FROM = "fuse_copied_from"
#: provided: {fused node: for each of its outputs, (the given node, output index) it
#: exposes} (the same shape and type: Graph.seed_entry_values carries them over)
FUSE_ENTRY_ORIGINS = "fuse_entry_origins"
# per-entry attributes that do not survive a change of structure
_STALE = (SHAPE, DTYPE, SHAPE_NUM_UNKNOWN_NODES, DTYPE_NUM_UNKNOWN_NODES)


@register_pass(
    "FusePointwise",
    provides=(FUSED_GROUPS, FUSE_COPIED_FROM, FUSE_ENTRY_ORIGINS),
    op_attrs=(FScalarFunction, FMutateInputs, FCreateOpState, FResourceRequest),
)
def fuse_pointwise(graph: Graph) -> Graph:
    """A graph computing the same outputs with element-wise groups fused."""
    from nnvmpy.fusion.grouping import find_groups, fusable_bodies

    idx = graph.indexed
    phases = _phases(graph)
    bodies = fusable_bodies(graph, cpu=graph.attrs.get(FUSE_DEVICE) == "cpu")
    groups = find_groups(graph, phases, bodies=bodies)
    attrs = {k: v for k, v in graph.attrs.items() if k not in _STALE}
    if not groups:
        attrs[FUSED_GROUPS], attrs[FUSE_COPIED_FROM], attrs[FUSE_ENTRY_ORIGINS] = {}, {}, {}
        return Graph(graph.outputs, attrs)
    group_of = {nid: g for g, members in enumerate(groups) for nid in members}
    readers = _outside_readers(graph, group_of)
    fused: list[Node] = []
    entry_map: dict[tuple[int, int], NodeEntry] = {}  # (nid, index) of a member output
    externals: list[list[tuple[int, int]]] = []
    for members in groups:
        node, exposed, ext = _fused_node(graph, members, readers, bodies)
        fused.append(node)
        externals.append(ext)
        for k, key in enumerate(exposed):
            entry_map[key] = NodeEntry(node, k)
    new_of: dict[int, Node] = {}
    copied_from: dict[Node, Node] = {}

    def mapped(nid: int, index: int, version: int = 0) -> NodeEntry:
        if nid in group_of:
            return entry_map[(nid, index)]
        return NodeEntry(new_of[nid], index, version)

    for nid, node in enumerate(idx.nodes):
        if nid in group_of:
            continue
        row = idx[nid]
        inputs = [mapped(e.node_id, e.index, e.version) for e in row.inputs]
        deps = [_dep(d, group_of, fused, new_of) for d in row.control_deps]
        same = all(a.node is b.node for a, b in zip(inputs, node.inputs)) and all(
            a is b for a, b in zip(deps, node.control_deps)
        )
        new_of[nid] = node if same else _renode(node, inputs, deps)
        if not same:
            copied_from[new_of[nid]] = node
    for node, ext in zip(fused, externals):
        node.inputs = [mapped(nid, index) for nid, index in ext]
    outputs = [mapped(idx.node_id(e.node), e.index, e.version) for e in graph.outputs]
    if phases is not None:  # values read only by backward groups: recompute, not keep
        from nnvmpy.fusion.recompute import recompute_in_backward

        forward = {id(new_of[nid]) for nid in new_of if phases[nid] == 0}
        forward |= {id(fused[g]) for g, members in enumerate(groups) if phases[members[0]] == 0}
        outputs = recompute_in_backward(outputs, forward)
    attrs[FUSED_GROUPS] = {node.name: node.attrs.parsed.member_names() for node in fused}
    attrs[FUSE_COPIED_FROM] = copied_from
    attrs[FUSE_ENTRY_ORIGINS] = _entry_origins(graph, fused, groups)
    return Graph(outputs, attrs)


def _phases(graph: Graph) -> list[int] | None:
    """Per node id, 0 for the forward part (what the first `fuse_phase_outputs` graph
    outputs reach, through inputs and control dependencies), 1 for the rest."""
    k = graph.attrs.get(FUSE_PHASE_OUTPUTS)
    if k is None:
        return None
    idx = graph.indexed
    phase = [1] * idx.num_nodes
    for out in graph.outputs[: int(k)]:
        phase[idx.node_id(out.node)] = 0
    for nid in range(idx.num_nodes - 1, -1, -1):  # users before the nodes they read
        if phase[nid] == 0:
            row = idx[nid]
            for e in row.inputs:
                phase[e[0]] = 0  # IndexedEntry.node_id
            for d in row.control_deps:
                phase[d] = 0
    return phase


def _outside_readers(graph: Graph, group_of: dict[int, int]) -> set[tuple[int, int]]:
    """(nid, index) of every entry read outside its node's group, or a graph output."""
    idx = graph.indexed
    read: set[tuple[int, int]] = set()
    for nid in range(idx.num_nodes):
        mine = group_of.get(nid)
        for e in idx[nid].inputs:
            if e.node_id in group_of and group_of[e.node_id] != mine:
                read.add((e.node_id, e.index))
    for e in idx.outputs:
        read.add((e.node_id, e.index))
    return read


def _fused_node(
    graph: Graph, members: list[int], readers: set[tuple[int, int]], bodies: list[Any]
) -> tuple[Node, list[tuple[int, int]], list[tuple[int, int]]]:
    """The fused node (inputs filled in later), its exposed (nid, index) and its inputs;
    `bodies`: each node id's ScalarBody (fusion.grouping.fusable_bodies)."""
    from nnvmpy.fusion.fused_op import fused_op
    from nnvmpy.fusion.spec import FusedSpec, Member

    idx = graph.indexed
    nodes, row_ptr = idx.nodes, idx.node_row_ptr
    position = {nid: m for m, nid in enumerate(members)}
    ext: dict[tuple[int, int], int] = {}
    spec_members = []
    exposed = []
    for nid in members:
        attrs = nodes[nid].attrs
        args = []
        for e in idx[nid].inputs:
            src, index = e[0], e[1]  # IndexedEntry.node_id, .index
            if src in position:
                args.append((position[src], index))
            else:
                args.append((-1, ext.setdefault((src, index), len(ext))))
        spec_members.append(Member(attrs.name, attrs, tuple(args), bodies[nid]))
        exposed += [(nid, k) for k in range(row_ptr[nid + 1] - row_ptr[nid]) if (nid, k) in readers]
    spec = FusedSpec(tuple(spec_members), len(ext), tuple((position[nid], k) for nid, k in exposed))
    # named after its last member, whose output usually is the group's result: a fused
    # symbol keeps that output's name (`<last>_output`)
    attrs = NodeAttrs(fused_op(), idx.nodes[members[-1]].name, None, spec)
    attrs.dict = {"members": ",".join(spec.member_names())}
    return Node(attrs), exposed, list(ext)


def _entry_origins(
    graph: Graph, fused: list[Node], groups: list[list[int]]
) -> dict[Node, list[tuple[Node, int]]]:
    """{fused node: (member node, output index) behind each of its outputs}, read off
    the specs as they are now: recompute_in_backward adds members and drops outputs, but
    keeps each member's attributes object, which names the node it came from. A group
    whose members share one attributes object is left out (its outputs are inferred)."""
    nodes = graph.indexed.nodes
    origins: dict[Node, list[tuple[Node, int]]] = {}
    for node, members in zip(fused, groups):
        by_attrs = {id(nodes[nid].attrs): nodes[nid] for nid in members}
        spec = node.attrs.parsed
        keys = [id(spec.members[s].attrs) for s, _ in spec.outputs]
        if len(by_attrs) == len(members) and all(k in by_attrs for k in keys):
            origins[node] = [(by_attrs[k], i) for k, (_, i) in zip(keys, spec.outputs)]
    return origins


def _dep(nid: int, group_of: dict[int, int], fused: list[Node], new_of: dict[int, Node]) -> Node:
    return fused[group_of[nid]] if nid in group_of else new_of[nid]


def _renode(node: Node, inputs: list[NodeEntry], deps: list[Node]) -> Node:
    attrs = NodeAttrs(node.op, node.name, None, node.attrs.parsed)
    attrs.dict = dict(node.attrs.dict)
    new = Node(attrs, inputs, deps)
    new.info = dict(node.info)
    return new


def fused_groups(graph: Graph) -> dict[str, list[str]]:
    """{fused node name: member names} of a graph (whether or not the pass recorded it)."""
    from nnvmpy.fusion.spec import FusedSpec

    return {
        n.name: n.attrs.parsed.member_names()
        for n in graph.indexed.nodes
        if isinstance(n.attrs.parsed, FusedSpec)
    }


__all__ = [
    "FUSED_GROUPS",
    "FUSE_COPIED_FROM",
    "FUSE_DEVICE",
    "FUSE_ENTRY_ORIGINS",
    "FUSE_PHASE_OUTPUTS",
    "fuse_pointwise",
    "fused_groups",
]
