"""Which nodes fuse: maximal connected groups of element-wise nodes that keep the graph a DAG.

A node is fusable when its op declares a scalar body for its attributes (FScalarFunction),
it is pure (no FMutateInputs, FCreateOpState or resource requests), and — where the
graph already carries shapes and dtypes — every entry it reads and writes has one shape
and a dtype the generated kernels compute in. Groups grow along data edges in
topological order: a node joins the group of an input, and two groups merge through a
node, unless that would put a path from the group out through another node and back
(the fused node would then depend on itself). Nodes of different phases (forward and
backward, which the executor runs at different times) never share a group.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..attrs import FCreateOpState, FMutateInputs, FResourceRequest, FScalarFunction
from ..graph.attrs import DTYPE, SHAPE
from ..graph.graph import Graph
from ..graph.node import Node
from ..registry import Op

#: dtypes the generated kernels compute in (float16 through float32 on the CPU)
FUSABLE_DTYPES = frozenset(
    np.dtype(t) for t in (np.float16, np.float32, np.float64, np.int8, np.int32, np.int64, np.uint8)
)
#: more members make one kernel slow to compile for little gain
MAX_MEMBERS = 64


def _pure_scalar_op(op: Op | None) -> bool:
    """Whether nodes of `op` may fuse at all: it has a scalar body and is pure."""
    return (
        op is not None
        and op.get_attr(FScalarFunction) is not None
        and op.get_attr(FMutateInputs) is None
        and op.get_attr(FCreateOpState) is None
    )


def scalar_body(node: Node) -> Any:
    """The node's ScalarBody if it may be fused, else None."""
    op = node.op
    if op is None or not _pure_scalar_op(op):
        return None
    return _node_body(node, op)


def _node_body(node: Node, op: Op) -> Any:
    """scalar_body of a node of a pure scalar op: what its attributes and inputs allow."""
    fres = op.get_attr(FResourceRequest)
    if fres is not None and list(fres(node.attrs)):
        return None
    body = op.get_attr(FScalarFunction)(node.attrs)
    if body is None or len(body.kernels) != node.num_outputs():
        return None
    if len(node.inputs) != node.num_inputs() or not node.inputs:
        return None
    return body


class _Clusters:
    """Union-find over node ids with, per cluster, the clusters it reads from and those
    reading it, and a level: higher than every cluster it reads from.

    The levels keep the cycle checks short: a cluster reaches (reads, through any chain)
    a cluster of a level as high as its own only if that is itself, so a search for
    `target` never leaves the levels above target's. Without that bound each check
    walked every ancestor, and building an unrolled 3-layer LSTM (80 steps) spent 28 s
    in it.
    """

    def __init__(self, n: int) -> None:
        self.parent = list(range(n))
        self.deps: list[set[int]] = [set() for _ in range(n)]
        self.users: list[set[int]] = [set() for _ in range(n)]
        self.members: list[list[int]] = [[i] for i in range(n)]
        self.level = [0] * n

    def find(self, i: int) -> int:
        root = i
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[i] != root:
            self.parent[i], i = root, self.parent[i]
        return root

    def add_node(self, nid: int, producers: list[int]) -> None:
        """Node nid (all producers added before it) as a cluster of its own."""
        self.deps[nid] = {self.find(p) for p in producers}
        self.level[nid] = 1 + max((self.level[d] for d in self.deps[nid]), default=-1)
        for d in self.deps[nid]:
            self.users[d].add(nid)

    def reaches(self, starts: set[int], target: int) -> bool:
        """A path of dependencies from one of `starts` to `target`."""
        floor = self.level[target]
        stack = [self.find(s) for s in starts]
        seen: set[int] = set()
        while stack:
            c = stack.pop()
            if c == target:
                return True
            if c in seen or self.level[c] <= floor:
                continue
            seen.add(c)
            stack.extend(d for d in (self.find(x) for x in self.deps[c]) if d not in seen)
        return False

    def can_merge(self, a: int, b: int) -> bool:
        da = {self.find(x) for x in self.deps[a]} - {b, a}
        db = {self.find(x) for x in self.deps[b]} - {a, b}
        return not self.reaches(da, b) and not self.reaches(db, a)

    def merge(self, a: int, b: int) -> int:
        self.parent[b] = a
        self.deps[a] = {self.find(x) for x in self.deps[a] | self.deps[b]} - {a}
        self.users[a] = {self.find(x) for x in self.users[a] | self.users[b]} - {a}
        self.members[a] += self.members[b]
        self.level[a] = max(self.level[a], self.level[b])
        stack = [a]  # raise the readers of the merged cluster above it, and theirs
        while stack:
            c = stack.pop()
            for u in {self.find(x) for x in self.users[c]} - {c}:
                if self.level[u] <= self.level[c]:
                    self.level[u] = self.level[c] + 1
                    stack.append(u)
        return a


def fusable_bodies(graph: Graph, cpu: bool = False) -> list[Any]:
    """The ScalarBody of each node id that may join a group, else None.

    cpu: the graph runs on the CPU, where a member whose kernel has a NumPy SIMD
    implementation (exp, tanh, log, ...) stays apart on large float arrays: Numba's
    per-element libm call inside a fused loop is slower than NumPy's vector loop.
    """
    idx = graph.indexed
    shapes = graph.attrs.get(SHAPE)
    dtypes = graph.attrs.get(DTYPE)
    bodies: list[Any] = [None] * idx.num_nodes
    pure: dict[Op | None, bool] = {}  # per op: most nodes of a large graph share a few ops
    vectorised = _Vectorised() if cpu else None
    for nid, node in enumerate(idx.nodes):
        op = node.op
        if op not in pure:
            pure[op] = _pure_scalar_op(op)
        body = _node_body(node, op) if op is not None and pure[op] else None
        if body is None or not _entries_ok(idx, nid, shapes, dtypes):
            continue
        if vectorised is not None and _numpy_is_faster(idx, nid, body, shapes, dtypes, vectorised):
            continue
        bodies[nid] = body
    return bodies


def find_groups(
    graph: Graph,
    phases: list[int] | None = None,
    cpu: bool = False,
    bodies: list[Any] | None = None,
) -> list[list[int]]:
    """Node ids of each fused group (two members or more), members in topological order.

    phases: one int per node id; nodes of different phases never share a group.
    cpu: as fusable_bodies; bodies: what fusable_bodies(graph, cpu) returns, when the
    caller has it already (the FusePointwise pass builds its members from it).
    """
    idx = graph.indexed
    n = idx.num_nodes
    if bodies is None:
        bodies = fusable_bodies(graph, cpu)
    cl = _Clusters(n)
    for nid in range(n):
        row = idx[nid]
        cl.add_node(nid, [e.node_id for e in row.inputs] + list(row.control_deps))
        if bodies[nid] is None:
            continue
        for p in dict.fromkeys(e.node_id for e in row.inputs):
            if bodies[p] is None or (phases is not None and phases[p] != phases[nid]):
                continue
            a, b = cl.find(nid), cl.find(p)
            if a == b or len(cl.members[a]) + len(cl.members[b]) > MAX_MEMBERS:
                continue
            if cl.can_merge(b, a):
                cl.merge(b, a)
    groups = [sorted(cl.members[c]) for c in range(n) if cl.find(c) == c]
    return [g for g in groups if len(g) > 1]


class _Vectorised:
    """Whether a body's kernels all compute as fast fused as NumPy does (no NumPy SIMD
    implementation, or written with kernel.vmath), asked once per kernel tuple."""

    def __init__(self) -> None:
        from nnvmpy.kernel.vmath import calls_vector_math

        self.calls_vector_math = calls_vector_math
        self.known: dict[tuple[int, ...], bool] = {}  # by the kernels' ids, within one pass

    def __call__(self, body: Any) -> bool:
        key = tuple(map(id, body.kernels))
        if key not in self.known:
            self.known[key] = all(
                k.numpy_impl is None or self.calls_vector_math(k.py_func) for k in body.kernels
            )
        return self.known[key]


def _numpy_is_faster(
    idx: Any, nid: int, body: Any, shapes: Any, dtypes: Any, vectorised: _Vectorised
) -> bool:
    from nnvmpy.kernel.elementwise import _FLOATS, NUMPY_MIN_SIZE

    # a body written with kernel.vmath is vectorised in the fused loop: one pass over
    # memory beats NumPy's SIMD ufunc plus a pass per other member
    if vectorised(body):
        return False
    eid = idx.output_eids_of(nid)[0]
    if shapes is None or dtypes is None or shapes[eid] is None or dtypes[eid] is None:
        return True  # unknown: assume a large float array
    return bool(np.dtype(dtypes[eid]) in _FLOATS and np.prod(shapes[eid]) >= NUMPY_MIN_SIZE)


def _entries_ok(idx: Any, nid: int, shapes: Any, dtypes: Any) -> bool:
    eids = [*idx[nid].input_eids, *idx.output_eids_of(nid)]
    if shapes is not None and (len({shapes[e] for e in eids}) != 1 or shapes[eids[0]] is None):
        return False
    if dtypes is not None:
        for e in eids:
            if dtypes[e] is None or np.dtype(dtypes[e]) not in FUSABLE_DTYPES:
                return False
    return True


__all__ = ["FUSABLE_DTYPES", "MAX_MEMBERS", "find_groups", "fusable_bodies", "scalar_body"]
