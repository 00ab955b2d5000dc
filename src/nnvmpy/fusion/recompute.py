"""Recompute in backward what a fused forward group would otherwise keep for it.

A fused forward group exposes every intermediate value the backward pass reads (exp(x)
for exp's gradient, the product for mul's, ...), and those values are kept from forward
to backward: a chain of 50 element-wise ops kept 30 arrays. When such a value is read
only by fused backward groups and the members computing it need nothing but graph
variables (arguments, which stay alive anyway), each backward group recomputes it from
those variables instead: the members are copied into the backward group's spec, the
forward group stops exposing the value, and the planned memory shrinks (debug_str's
"Total ... allocated" shows it).
"""

from __future__ import annotations

from typing import Any

from ..graph.node import Node, NodeEntry, post_order
from .spec import FusedSpec, Member


def _spec(node: Node) -> FusedSpec | None:
    parsed = node.attrs.parsed
    return parsed if isinstance(parsed, FusedSpec) else None


def _ancestors(spec: FusedSpec, m: int) -> list[int]:
    """Member m and the members it depends on, in member order."""
    need = {m}
    for i in range(m, -1, -1):
        if i in need:
            need.update(s for s, _ in spec.members[i].args if s >= 0)
    return sorted(need)


def recompute_in_backward(outputs: list[NodeEntry], forward: set[int]) -> list[NodeEntry]:
    """Rewrite the (freshly made) fused nodes in place; returns the graph outputs, whose
    entries may have new output indices. forward: ids of the forward nodes."""
    nodes = post_order(outputs)
    readers: dict[tuple[int, int], list[Node]] = {}
    for node in nodes:
        for e in node.inputs:
            readers.setdefault((id(e.node), e.index), []).append(node)
    outs = {(id(e.node), e.index) for e in outputs}
    # variables an op writes (auxiliary states) may differ at backward time: not sources
    stable = {id(n) for n in nodes if n.is_variable()} - _mutated(nodes)
    changed: set[int] = set()
    for node in nodes:
        if _spec(node) is None or id(node) in forward:
            continue
        while True:  # inlining renumbers the inputs: look again after each one
            found = _candidate(node, forward, readers, outs, stable)
            if found is None:
                break
            j, chain, ext, src, idx = found
            fwd_node = node.inputs[j].node
            _inline(node, j, fwd_node, chain, ext, src, idx)
            changed.add(id(fwd_node))
    return _drop_unread(outputs, changed, nodes)


def _mutated(nodes: list[Node]) -> set[int]:
    from nnvmpy.attrs import FMutateInputs

    found: set[int] = set()
    fmutate_of: dict[Any, Any] = {}  # per op: a large graph has a few
    for node in nodes:
        op = node.attrs.op
        if op not in fmutate_of:
            fmutate_of[op] = op.get_attr(FMutateInputs) if op is not None else None
        fmutate = fmutate_of[op]
        if fmutate is not None:
            found.update(id(node.inputs[i].node) for i in fmutate(node.attrs))
    return found


def _candidate(
    node: Node,
    forward: set[int],
    readers: dict[tuple[int, int], list[Node]],
    outs: set[tuple[int, int]],
    stable: set[int],
) -> tuple[int, list[int], list[int], int, int] | None:
    """An input of backward fused `node` that it can recompute from graph variables."""
    for j, e in enumerate(node.inputs):
        fwd = _spec(e.node)
        key = (id(e.node), e.index)
        if fwd is None or id(e.node) not in forward or key in outs:
            continue
        if any(_spec(r) is None or id(r) in forward for r in readers.get(key, [])):
            continue
        src, idx = fwd.outputs[e.index]
        chain = _ancestors(fwd, src)
        ext = sorted({i for m in chain for s, i in fwd.members[m].args if s < 0})
        if all(id(e.node.inputs[i].node) in stable for i in ext):
            return j, chain, ext, src, idx
    return None


def _inline(
    node: Node, j: int, fwd_node: Node, chain: list[int], ext: list[int], src: int, idx: int
) -> None:
    """Make `node` compute its input j (fwd_node's member src, output idx) itself."""
    spec, fwd = node.attrs.parsed, fwd_node.attrs.parsed
    inputs = list(node.inputs)
    in_pos: dict[tuple[int, int, int], int] = {}
    for k, e in enumerate(inputs):
        in_pos.setdefault((id(e.node), e.index, e.version), k)
    # input j is no longer read: it is dropped and the later ones move down one, as
    # each member is made (one pass over the members: a node inlines one at a time)
    position: dict[int, int] = {}
    members: list[Member] = []
    for m in chain:
        args: list[tuple[int, int]] = []
        for s, i in fwd.members[m].args:
            if s >= 0:
                args.append((position[s], i))
                continue
            e = fwd_node.inputs[i]
            where = (id(e.node), e.index, e.version)
            if where not in in_pos:
                in_pos[where] = len(inputs)
                inputs.append(e)
            k = in_pos[where]
            args.append((-1, k - (k > j)))
        position[m] = len(members)
        members.append(Member(fwd.members[m].name, fwd.members[m].attrs, tuple(args),
                              fwd.members[m].body))  # fmt: skip
    shift = len(members)
    replaced = (position[src], idx)
    for old in spec.members:
        moved = tuple(
            (s + shift, i) if s >= 0 else replaced if i == j else (s, i - (i > j))
            for s, i in old.args
        )
        members.append(Member(old.name, old.attrs, moved, old.body))
    outputs = tuple((s + shift, i) for s, i in spec.outputs)
    inputs.pop(j)
    node.attrs.parsed = FusedSpec(tuple(members), len(inputs), outputs)
    node.attrs.dict = {"members": ",".join(node.attrs.parsed.member_names())}
    node.inputs = inputs


def _drop_unread(
    outputs: list[NodeEntry], changed: set[int], before: list[Node]
) -> list[NodeEntry]:
    """Forward fused nodes stop exposing what nobody reads any more. before: the nodes
    in topological order before inlining (which only removes edges, or adds ones to
    nodes a reader reached already, so the order holds)."""
    nodes = _reached(outputs, before)
    read: set[tuple[int, int]] = {(id(e.node), e.index) for e in outputs}
    for node in nodes:  # only the changed nodes' outputs are asked about
        for e in node.inputs:
            if id(e.node) in changed:
                read.add((id(e.node), e.index))
    remap: dict[tuple[int, int], int] = {}
    for node in nodes:
        spec = _spec(node)
        if spec is None or id(node) not in changed:
            continue
        keep = [k for k in range(len(spec.outputs)) if (id(node), k) in read]
        if len(keep) == len(spec.outputs):
            continue
        for new, k in enumerate(keep):
            remap[(id(node), k)] = new
        node.attrs.parsed = FusedSpec(spec.members, spec.num_inputs,
                                      tuple(spec.outputs[k] for k in keep))  # fmt: skip

    def fix(e: NodeEntry) -> NodeEntry:
        new = remap.get((id(e.node), e.index))
        return e if new is None else NodeEntry(e.node, new, e.version)

    renumbered = {i for i, _ in remap}
    for node in nodes:
        if renumbered and any(id(e.node) in renumbered for e in node.inputs):
            node.inputs = [fix(e) for e in node.inputs]
    return [fix(e) for e in outputs]


def _reached(outputs: list[NodeEntry], order: list[Node]) -> list[Node]:
    """The nodes of `order` (a topological order of a superset of them) that outputs
    reach through inputs and control dependencies: post_order's set, in one sweep."""
    live = {id(e.node) for e in outputs}
    reached = []
    for node in reversed(order):
        if id(node) in live:
            reached.append(node)
            live.update([id(e.node) for e in node.inputs])
            if node.control_deps:
                live.update([id(d) for d in node.control_deps])
    reached.reverse()
    return reached


__all__ = ["recompute_in_backward"]
