"""Partition a symbol by op names: MXNet's 'default' and 'default_v2' subgraph backends.

The nodes whose op (by name or alias) is in a backend's list are grouped, and each group
becomes one `_CachedOp<k>` node running the group as its subgraph
(ops/control_flow/cached_op.py). Three front-ends reach it, as in MXNet 1.9:
MXBuildSubgraphByOpNames (`partition_by_op_names`), MXNET_SUBGRAPH_BACKEND at bind time
with the names MXSetSubgraphPropertyOpNames registered, and `Symbol.optimize_for(backend)`
with the names of the ...V2 calls (both kept by `set_subgraph_op_names`).

Grouping: nodes are visited in the DFS (topological) order; a selected node joins the
group of one of its selected producers when no predecessor of it outside the group is
reached from the group, even through other groups (each group is one node afterwards, so
that would be a cycle), and when every variable the DFS met since the group's last member
is an ancestor of the node (so one node lists them in the same order); else it starts a
group. Ancestor sets are Python ints used as bitsets. A `_CachedOp` node reads the
entries its group reads from outside, each once, in the order the original graph's DFS
first meets them from inside the group, so the partitioned symbol lists its inputs,
arguments and auxiliary states in the original order; its outputs are the group entries
used outside.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..base import NNVMError
from ..graph.node import Node, NodeEntry, post_order
from ..registry import NodeAttrs

#: the subgraph backends that partition by op names
SUBGRAPH_BACKENDS = ("default", "default_v2")

_op_names: dict[str, list[str]] = {}


def _check_backend(backend: str) -> None:
    if backend not in SUBGRAPH_BACKENDS:
        raise NNVMError(
            f"subgraph backend {backend!r} is not registered; nnvmpy has {list(SUBGRAPH_BACKENDS)}"
        )


def set_subgraph_op_names(backend: str, op_names: Sequence[str]) -> None:
    """The op names `backend` groups from now on (MXSetSubgraphPropertyOpNames[V2])."""
    _check_backend(backend)
    _op_names[backend] = [str(n) for n in op_names]


def remove_subgraph_op_names(backend: str) -> None:
    """Forget `backend`'s op names (MXRemoveSubgraphPropertyOpNames[V2])."""
    _check_backend(backend)
    _op_names.pop(backend, None)


def subgraph_op_names(backend: str) -> list[str] | None:
    """The op names registered for `backend`, None when none were."""
    _check_backend(backend)
    names = _op_names.get(backend)
    return None if names is None else list(names)


def partition_by_op_names(symbol: Any, op_names: Sequence[str], backend: str = "default") -> Any:
    """A new Symbol in which each group of nodes whose op is in `op_names` is one
    `_CachedOp` node (MXBuildSubgraphByOpNames)."""
    from nnvmpy.symbol.symbol import Symbol

    _check_backend(backend)
    return Symbol(partition_heads(list(symbol._heads), op_names))


def partition_heads(heads: list[NodeEntry], op_names: Sequence[str]) -> list[NodeEntry]:
    """The heads of the partitioned graph (every node copied; nothing changes when no
    node is selected)."""
    nodes = post_order(heads)
    pos = {id(n): i for i, n in enumerate(nodes)}
    groups = _group(nodes, pos, set(op_names))
    return _Rebuild(heads, nodes, pos, groups).run()


def _selected(node: Node, names: set[str]) -> bool:
    op = node.op
    return op is not None and not names.isdisjoint((op.name, *op.aliases))


def _preds(node: Node) -> list[Node]:
    return [*(e.node for e in node.inputs), *node.control_deps]


def _group(nodes: list[Node], pos: dict[int, int], names: set[str]) -> list[int | None]:
    """Per node (by position), its group number, None when not selected."""
    group_of: list[int | None] = [None] * len(nodes)
    if not names:
        return group_of
    anc = [0] * len(nodes)  # bit j set: node j reaches node i (i itself included)
    masks: list[int] = []  # per group, its members
    last: list[int] = []  # per group, its last member's position
    reach: list[int] = []  # per group, what reaches one of its members
    variables = sum(1 << i for i, n in enumerate(nodes) if n.is_variable())
    for i, node in enumerate(nodes):
        preds = [pos[id(p)] for p in _preds(node)]
        bits = 1 << i
        for j in preds:
            bits |= anc[j]
        anc[i] = bits
        if not _selected(node, names):
            continue
        chosen = None
        for j in (pos[id(e.node)] for e in node.inputs):
            g = group_of[j]
            if g is None or g == chosen:
                continue
            # no predecessor outside the group is reached from the group, even through
            # other groups (each one node once partitioned): that would make a cycle
            if any(group_of[k] != g and _reached(anc[k], masks, reach) & masks[g] for k in preds):
                continue
            # the variables the DFS met since the group's last member all come in through
            # this node: else the one node would list them in another order
            between = variables & ((1 << i) - 1) & ~((1 << (last[g] + 1)) - 1)
            if between & ~bits == 0:
                chosen = g
                break
        if chosen is None:
            chosen = len(masks)
            masks.append(0)
            last.append(i)
            reach.append(0)
        group_of[i] = chosen
        masks[chosen] |= 1 << i
        last[chosen] = i
        reach[chosen] |= bits
    return group_of


def _reached(bits: int, masks: list[int], reach: list[int]) -> int:
    """The nodes that reach `bits` once every group is one node: a group with a member
    there brings everything that reaches any of its members."""
    pending = list(range(len(masks)))
    grew = True
    while grew:
        grew = False
        for g in list(pending):
            if bits & masks[g]:
                bits |= reach[g]
                pending.remove(g)
                grew = True
    return bits


def _copy_attrs(attrs: NodeAttrs) -> NodeAttrs:
    return NodeAttrs(attrs.op, attrs.name, dict(attrs.dict), attrs.parsed)


Key = tuple[int, int]  # an original entry: (its node's DFS position, output index)
Unit = tuple[str, int]  # ("n", position) for a node outside every group, ("g", group)


class _Rebuild:
    """The partitioned graph: every node outside the groups copied, one `_CachedOp` node
    per group, built in an order where producers come first."""

    def __init__(
        self, heads: list[NodeEntry], nodes: list[Node], pos: dict[int, int], group_of: list[Any]
    ) -> None:
        self.heads, self.nodes, self.pos, self.group_of = heads, nodes, pos, group_of
        n_groups = max((g for g in group_of if g is not None), default=-1) + 1
        self.members: list[list[int]] = [[] for _ in range(n_groups)]
        for i, g in enumerate(group_of):
            if g is not None:
                self.members[g].append(i)
        self.new_entry: dict[Key, NodeEntry] = {}
        self.new_node: dict[int, Node] = {}  # position -> the node standing for it
        self._boundaries()

    def key(self, e: NodeEntry) -> Key:
        return (self.pos[id(e.node)], e.index)

    def group(self, node: Node) -> int | None:
        return self.group_of[self.pos[id(node)]]

    def _boundaries(self) -> None:
        """Per group, the outside entries it reads (in the order the original DFS meets
        them) and its entries used outside (in DFS order), each once."""
        n_groups = len(self.members)
        self.ext_in: list[list[NodeEntry]] = [[] for _ in range(n_groups)]
        self.ext_out: list[list[NodeEntry]] = [[] for _ in range(n_groups)]
        outs: list[dict[Key, NodeEntry]] = [{} for _ in range(n_groups)]
        used = [e for n in self.nodes for e in n.inputs if self.group(e.node) != self.group(n)]
        for e in used + self.heads:
            g = self.group(e.node)
            if g is not None:
                outs[g].setdefault(self.key(e), NodeEntry(e.node, e.index))
        rank = _encounter_order(self.heads, self.pos, self.group_of)
        for g, members in enumerate(self.members):
            ins: dict[Key, NodeEntry] = {}
            for i in members:
                for e in self.nodes[i].inputs:
                    if self.group(e.node) != g:
                        ins.setdefault(self.key(e), NodeEntry(e.node, e.index))
            self.ext_in[g] = [ins[k] for k in sorted(ins, key=rank.__getitem__)]
            self.ext_out[g] = [outs[g][k] for k in sorted(outs[g])]

    def _unit(self, i: int) -> Unit:
        g = self.group_of[i]
        return ("g", g) if g is not None else ("n", i)

    def _order(self) -> list[Unit]:
        """The units, producers first (Kahn's algorithm over the contracted graph)."""
        deps: dict[Unit, set[Unit]] = {}
        for i, node in enumerate(self.nodes):
            u = self._unit(i)
            d = deps.setdefault(u, set())
            d.update(v for p in _preds(node) if (v := self._unit(self.pos[id(p)])) != u)
        users: dict[Unit, list[Unit]] = {u: [] for u in deps}
        for u, d in deps.items():
            for v in d:
                users[v].append(u)
        waiting = {u: len(d) for u, d in deps.items()}
        ready = [u for u, n in waiting.items() if n == 0]
        order: list[Unit] = []
        while ready:
            u = ready.pop()
            order.append(u)
            for w in users[u]:
                waiting[w] -= 1
                if waiting[w] == 0:
                    ready.append(w)
        if len(order) != len(deps):  # a bug in the grouping, never the user's graph
            raise NNVMError("partition: the grouped graph has a cycle")
        return order

    def _outer_deps(self, node: Node, inside: int | None, out: list[Node]) -> list[Node]:
        """`out` plus the new nodes standing for `node`'s control deps outside `inside`."""
        for d in node.control_deps:
            if inside is None or self.group(d) != inside:
                n = self.new_node[self.pos[id(d)]]
                if all(n is not m for m in out):
                    out.append(n)
        return out

    def _copy(self, i: int) -> None:
        node = self.nodes[i]
        copy = Node(_copy_attrs(node.attrs), [self.new_entry[self.key(e)] for e in node.inputs])
        copy.control_deps = self._outer_deps(node, None, [])
        copy.info = dict(node.info)
        self.new_node[i] = copy
        for k in range(node.num_outputs()):
            self.new_entry[(i, k)] = NodeEntry(copy, k)

    def _subgraph(self, g: int) -> tuple[Any, list[int], list[Node]]:
        """The group's Graph, its input_locs, and the outside control deps of its nodes."""
        from nnvmpy.graph.graph import Graph

        inner: dict[Key, NodeEntry] = {}
        variables: list[Node] = []
        for e in self.ext_in[g]:
            name = e.node.name if e.node.is_variable() else f"{e.node.name}_output{e.index}"
            variables.append(Node.variable(name))
            inner[self.key(e)] = NodeEntry(variables[-1])
        copies: dict[int, Node] = {}
        outer_deps: list[Node] = []
        for i in self.members[g]:
            node = self.nodes[i]
            copy = Node(_copy_attrs(node.attrs), [inner[self.key(e)] for e in node.inputs])
            copy.control_deps = [copies[self.pos[id(d)]] for d in node.control_deps
                                 if self.group(d) == g]  # fmt: skip
            copy.info = dict(node.info)
            self._outer_deps(node, g, outer_deps)
            copies[i] = copy
            for k in range(node.num_outputs()):
                inner[(i, k)] = NodeEntry(copy, k)
        graph = Graph([inner[self.key(e)] for e in self.ext_out[g]])
        idx = graph.indexed
        slot = {id(v): k for k, v in enumerate(variables)}
        locs = [slot[id(idx.nodes[nid])] for nid in idx.input_nodes]
        if len(locs) != len(variables):
            raise NNVMError(f"partition: group {g} reads inputs its outputs do not depend on")
        return graph, locs, outer_deps

    def _cached_op(self, g: int) -> None:
        from nnvmpy.ops.control_flow.cached_op import OP
        from nnvmpy.registry import Op

        graph, locs, outer_deps = self._subgraph(g)
        attrs = {} if locs == list(range(len(locs))) else {"input_locs": str(locs)}
        node_attrs = Op.get(OP).parse_attrs(attrs, f"{OP}{g}")
        node_attrs.parsed.subgraphs = [graph]
        inputs = [self.new_entry[self.key(e)] for e in self.ext_in[g]]
        op_node = Node(node_attrs, inputs, outer_deps)
        for i in self.members[g]:
            self.new_node[i] = op_node
        for k, e in enumerate(self.ext_out[g]):
            self.new_entry[self.key(e)] = NodeEntry(op_node, k)

    def run(self) -> list[NodeEntry]:
        for kind, u in self._order():
            if kind == "n":
                self._copy(u)
            else:
                self._cached_op(u)
        return [self.new_entry[self.key(h)] for h in self.heads]


def _encounter_order(
    heads: list[NodeEntry], pos: dict[int, int], group_of: list[int | None]
) -> dict[tuple[int, int], int]:
    """Per entry a group reads from outside, when the original graph's DFS (post_order's)
    first meets it from inside the group: the `_CachedOp` node's inputs in this order make
    the partitioned graph's DFS meet the variables in the original order."""
    rank: dict[tuple[int, int], int] = {}
    seen: set[int] = set()
    for h in heads:
        if id(h.node) in seen:
            continue
        seen.add(id(h.node))
        stack: list[tuple[Node, int]] = [(h.node, 0)]
        while stack:
            node, i = stack[-1]
            n_deps = len(node.control_deps)
            if i >= n_deps + len(node.inputs):
                stack.pop()
                continue
            stack[-1] = (node, i + 1)
            if i < n_deps:
                nxt = node.control_deps[i]
            else:
                e = node.inputs[i - n_deps]
                nxt = e.node
                g = group_of[pos[id(node)]]
                if g is not None and group_of[pos[id(nxt)]] != g:
                    rank.setdefault((pos[id(nxt)], e.index), len(rank))
            if id(nxt) not in seen:
                seen.add(id(nxt))
                stack.append((nxt, 0))
    return rank


#: MXNET_SUBGRAPH_BACKEND values that bind accepts without partitioning: unset, MXNet's
#: "NONE", and "MKLDNN", the default of MXNet's oneDNN builds, a transparent fusion that
#: nnvmpy's own element-wise fusion and kernels stand in for (so an environment tuned
#: for MXNet keeps binding)
UNPARTITIONED_BACKENDS = ("", "NONE", "MKLDNN")


def partition_for_bind(symbol: Any, group2ctx: Any = None) -> Any:
    """`symbol` partitioned as MXNET_SUBGRAPH_BACKEND asks at bind time (MXNet 1.9 does
    it in bind, and not when group2ctx places nodes on devices): a backend of this module
    with registered op names; else `symbol`. A backend nnvmpy does not have raises, as
    MXNet's registry does, rather than binding as if it had been applied."""
    import os

    backend = os.environ.get("MXNET_SUBGRAPH_BACKEND", "")
    if backend in UNPARTITIONED_BACKENDS or group2ctx:
        return symbol
    if backend not in SUBGRAPH_BACKENDS:
        known = [*SUBGRAPH_BACKENDS, *UNPARTITIONED_BACKENDS[1:]]
        raise NNVMError(
            f"bind: MXNET_SUBGRAPH_BACKEND={backend!r} is not a subgraph backend nnvmpy has; "
            f"expected one of {known} or unset"
        )
    if backend not in _op_names:
        return symbol
    return partition_by_op_names(symbol, _op_names[backend], backend)


__all__ = [
    "SUBGRAPH_BACKENDS",
    "UNPARTITIONED_BACKENDS",
    "partition_by_op_names",
    "partition_for_bind",
    "partition_heads",
    "remove_subgraph_op_names",
    "set_subgraph_op_names",
    "subgraph_op_names",
]
