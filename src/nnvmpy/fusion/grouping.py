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
    fns = (op.get_attr(FScalarFunction), op.get_attr(FResourceRequest))
    return _node_body(node, fns, node.num_outputs())


def _node_body(node: Node, fns: tuple[Any, Any], num_outputs: int) -> Any:
    """scalar_body of a node of a pure scalar op (fns: the op's FScalarFunction and
    FResourceRequest) with num_outputs outputs: what its attributes and inputs allow."""
    fscalar, fres = fns
    if fres is not None and list(fres(node.attrs)):
        return None
    body = fscalar(node.attrs)
    if body is None or len(body.kernels) != num_outputs:
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
        parent = self.parent
        root = parent[i]
        if parent[root] == root:  # a root, or one step below one: nothing to compress
            return root
        while parent[root] != root:
            root = parent[root]
        while parent[i] != root:
            parent[i], i = root, parent[i]
        return root

    def roots(self, ids: set[int] | list[int]) -> set[int]:
        """The clusters of `ids` (find of each, the usual one-step case inline)."""
        parent, out = self.parent, set()
        for x in ids:
            r = parent[x]
            out.add(r if parent[r] == r else self.find(r))
        return out

    def add_node(self, nid: int, producers: list[int]) -> None:
        """Node nid (all producers added before it) as a cluster of its own."""
        deps = self.deps[nid] = self.roots(producers)
        level, users, top = self.level, self.users, 0
        for d in deps:
            users[d].add(nid)
            if level[d] >= top:
                top = level[d] + 1
        level[nid] = top

    def reaches(self, starts: list[int], target: int) -> bool:
        """A path of dependencies from one of `starts` (clusters other than target, each
        at a level above target's) to `target`."""
        level, deps = self.level, self.deps
        floor = level[target]
        stack = list(starts)
        seen: set[int] = set()
        while stack:
            c = stack.pop()
            if c == target:
                return True
            if c in seen or level[c] <= floor:
                continue
            seen.add(c)
            stack.extend(d for d in self.roots(deps[c]) if d not in seen)
        return False

    def can_merge(self, a: int, b: int) -> bool:
        """Whether merging clusters a and b keeps the cluster graph acyclic: no path
        from one through a third cluster to the other. Leaves the dependencies of both
        as clusters (what merge needs)."""
        deps, level = self.deps, self.level
        da = deps[a] = self.roots(deps[a])
        db = deps[b] = self.roots(deps[b])
        da.discard(a)
        db.discard(b)
        # a cluster at or below the target's level reaches it only by being it
        top = level[b]
        starts = [c for c in da if c != b and level[c] > top]
        if starts and self.reaches(starts, b):
            return False
        top = level[a]
        starts = [c for c in db if c != a and level[c] > top]
        return not (starts and self.reaches(starts, a))

    def merge(self, a: int, b: int) -> int:
        """Cluster b into cluster a, right after can_merge(a, b) said yes."""
        self.parent[b] = a
        deps, users, level = self.deps, self.users, self.level
        # both dependency sets are clusters (can_merge): of those only b changed, into a
        deps[a] = (deps[a] | deps[b]) - {a, b}
        mine = users[a] = self.roots(users[a] | users[b]) - {a}
        self.members[a] += self.members[b]
        level[a] = max(level[a], level[b])
        stack = [a]  # raise the readers of the merged cluster above it, and theirs
        while stack:
            c = stack.pop()
            if c != a:
                mine = users[c] = self.roots(users[c]) - {c}
            top = level[c]
            for u in mine:
                if level[u] <= top:
                    level[u] = top + 1
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
    row_ptr = idx.node_row_ptr
    bodies: list[Any] = [None] * idx.num_nodes
    # per op, (FScalarFunction, FResourceRequest) if it is pure, else None: most nodes of
    # a large graph share a few ops, and their entries a few dtypes and shapes
    fns_of: dict[Op | None, tuple[Any, Any] | None] = {}
    known = _Known(shapes, dtypes, cpu)
    for nid, node in enumerate(idx.nodes):
        op = node.attrs.op
        if op not in fns_of:
            fns_of[op] = (
                (op.get_attr(FScalarFunction), op.get_attr(FResourceRequest))
                if op is not None and _pure_scalar_op(op)
                else None
            )
        fns = fns_of[op]
        if fns is None:
            continue
        first, end = row_ptr[nid], row_ptr[nid + 1]
        body = _node_body(node, fns, end - first)
        if body is None or not known.entries_ok([*idx[nid].input_eids, *range(first, end)]):
            continue
        if cpu and known.numpy_is_faster(first, body):
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
    find, members = cl.find, cl.members
    for nid in range(n):
        row = idx[nid]
        producers = [e[0] for e in row.inputs]  # IndexedEntry.node_id
        cl.add_node(nid, [*producers, *row.control_deps] if row.control_deps else producers)
        if bodies[nid] is None:
            continue
        for p in dict.fromkeys(producers) if len(producers) > 1 else producers:
            if bodies[p] is None or (phases is not None and phases[p] != phases[nid]):
                continue
            a, b = find(nid), find(p)
            if a == b or len(members[a]) + len(members[b]) > MAX_MEMBERS:
                continue
            if cl.can_merge(b, a):
                cl.merge(b, a)
    groups = [sorted(members[c]) for c in range(n) if find(c) == c]
    return [g for g in groups if len(g) > 1]


class _Known:
    """fusable_bodies' per-entry checks, with what they find per dtype, per shape and
    dtype, and per kernel tuple remembered for the pass: thousands of nodes share them."""

    def __init__(self, shapes: Any, dtypes: Any, cpu: bool) -> None:
        self.shapes, self.dtypes = shapes, dtypes
        self.fusable_dtype: dict[Any, bool] = {}
        self.large_float: dict[tuple[Any, Any], bool] = {}  # by (shape, dtype)
        self.vectorised: dict[tuple[int, ...], bool] = {}  # by the kernels' ids
        if cpu:
            from nnvmpy.kernel.vmath import calls_vector_math

            self.calls_vector_math = calls_vector_math

    def entries_ok(self, eids: list[int]) -> bool:
        """Every entry (a node's inputs and outputs) has one shape and a fusable dtype."""
        shapes, dtypes = self.shapes, self.dtypes
        if shapes is not None and (len({shapes[e] for e in eids}) != 1 or shapes[eids[0]] is None):
            return False
        if dtypes is not None:
            fusable = self.fusable_dtype
            for e in eids:
                t = dtypes[e]
                ok = fusable.get(t)
                if ok is None:
                    ok = fusable[t] = t is not None and np.dtype(t) in FUSABLE_DTYPES
                if not ok:
                    return False
        return True

    def numpy_is_faster(self, eid: int, body: Any) -> bool:
        """CPU: whether NumPy computes the node (first output `eid`) faster unfused."""
        # a body written with kernel.vmath is vectorised in the fused loop: one pass over
        # memory beats NumPy's SIMD ufunc plus a pass per other member
        key = tuple(map(id, body.kernels))
        fast = self.vectorised.get(key)
        if fast is None:
            fast = self.vectorised[key] = all(
                k.numpy_impl is None or self.calls_vector_math(k.py_func) for k in body.kernels
            )
        if fast:
            return False
        shapes, dtypes = self.shapes, self.dtypes
        if shapes is None or dtypes is None or shapes[eid] is None or dtypes[eid] is None:
            return True  # unknown: assume a large float array
        shape_dtype = (shapes[eid], dtypes[eid])
        large = self.large_float.get(shape_dtype)
        if large is None:
            from nnvmpy.kernel.elementwise import _FLOATS, NUMPY_MIN_SIZE

            large = self.large_float[shape_dtype] = bool(
                np.dtype(dtypes[eid]) in _FLOATS and np.prod(shapes[eid]) >= NUMPY_MIN_SIZE
            )
        return large


__all__ = ["FUSABLE_DTYPES", "MAX_MEMBERS", "find_groups", "fusable_bodies", "scalar_body"]
