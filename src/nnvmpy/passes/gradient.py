"""Gradient: build the backward graph of ys with respect to xs from each op's FGradient.

NNVM's Gradient pass. The graph attributes `grad_ys` (default: the graph outputs),
`grad_ys_out_grad` (one head gradient per y, usually variables the caller made) and
`grad_xs` say what to differentiate. Nodes are visited in reverse topological order;
each node's FGradient(node, ograds) returns one entry per input, and the contributions to
one entry are summed by a single `grad_aggregate_op` node (default "add_n").

Only nodes on a data path from some x to some y get gradients: whatever grad_req='null'
would throw away is never built. An output nobody differentiates gets `grad_zero_op`
(default "zeros_like") of itself, and so does an x that no y depends on. Zeros propagate
as in MXNet: a sum drops its zero terms, the element-wise rules (graph/grad.py) give zero
input gradients for all-zero output gradients, and an op without FGradient is accepted
when all its output gradients are zero — so nothing behind a BlockGrad is differentiated.

The result is a new graph whose outputs are the gradients of xs, in order; the forward
nodes hang off the backward nodes as inputs and control dependencies, as in NNVM.
"""

from __future__ import annotations

from ..attrs import FGradient
from ..base import NNVMError
from ..graph.attrs import (
    DTYPE_HINTS,
    GRAD_AGGREGATE_OP,
    GRAD_XS,
    GRAD_YS,
    GRAD_YS_OUT_GRAD,
    GRAD_ZERO_OP,
    SHAPE_HINTS,
)
from ..graph.grad import grads_all_zero, make_node, make_zero_grad_nodes
from ..graph.graph import Graph, IndexedGraph
from ..graph.node import Node, NodeEntry
from ..graph.pass_registry import register_pass
from ..registry import Op

#: graph attributes that do not depend on node numbering, so the result keeps them.
_CARRIED = (SHAPE_HINTS, DTYPE_HINTS)


@register_pass("Gradient", requires=(GRAD_XS, GRAD_YS_OUT_GRAD), op_attrs=(FGradient,))
def gradient(graph: Graph) -> Graph:
    """A graph computing d(ys)/d(xs) · head gradients, one output per x."""
    ys = list(graph.attrs.get(GRAD_YS) or graph.outputs)
    xs: list[NodeEntry] = list(graph.attrs[GRAD_XS])
    heads: list[NodeEntry] = list(graph.attrs[GRAD_YS_OUT_GRAD])
    if len(heads) != len(ys):
        raise NNVMError(
            f"Gradient: {len(ys)} grad_ys but {len(heads)} grad_ys_out_grad; "
            f"give one head gradient per y"
        )
    # ys are usually the graph's outputs, whose index the graph may hold already
    builder = _Backward(
        graph.indexed if ys == graph.outputs else Graph(ys).indexed,
        xs,
        graph.attrs.get(GRAD_AGGREGATE_OP, "add_n"),
        graph.attrs.get(GRAD_ZERO_OP, "zeros_like"),
    )
    grads = builder.run(ys, heads)
    return Graph(grads, {k: graph.attrs[k] for k in _CARRIED if k in graph.attrs})


class _Backward:
    """The state of one backward sweep: contributions per entry and their sums."""

    def __init__(
        self, idx: IndexedGraph, xs: list[NodeEntry], aggregate_op: str, zero_op: str
    ) -> None:
        self.idx, self.xs = idx, xs
        self.aggregate_op, self.zero_op = aggregate_op, zero_op
        self.x_nodes = {idx.node_id(x.node) for x in xs if idx.exist(x.node)}
        self.wants = self._wants_gradient()
        self.contributions: dict[int, list[NodeEntry]] = {}
        self.sums: dict[int, NodeEntry] = {}

    def _wants_gradient(self) -> list[bool]:
        """Per node: is it an x, or does it read (transitively) from an x?"""
        wants = [False] * self.idx.num_nodes
        for nid in range(self.idx.num_nodes):
            wants[nid] = nid in self.x_nodes or any(
                wants[src] for src, _, _ in self.idx[nid].inputs
            )
        return wants

    def _needed(self, ys: list[NodeEntry]) -> list[bool]:
        """Per node: an op node that reads from an x and that some y reads from."""
        idx = self.idx
        reaches_y = [False] * idx.num_nodes
        for y in ys:
            reaches_y[idx.node_id(y.node)] = True
        for nid in range(idx.num_nodes - 1, -1, -1):
            if reaches_y[nid]:
                for src, _, _ in idx[nid].inputs:
                    reaches_y[src] = True
        return [
            reaches_y[nid]
            and not node.is_variable()
            and any(self.wants[src] for src, _, _ in idx[nid].inputs)
            for nid, node in enumerate(idx.nodes)
        ]

    def run(self, ys: list[NodeEntry], heads: list[NodeEntry]) -> list[NodeEntry]:
        idx = self.idx
        for y, head in zip(ys, heads):
            self.contributions.setdefault(idx.entry_id(y), []).append(head)
        needed = self._needed(ys)
        for nid in range(idx.num_nodes - 1, -1, -1):
            if needed[nid]:
                self._backward_node(nid)
        return [
            self.total(idx.entry_id(x), x) if idx.exist(x.node) else self._zero(x) for x in self.xs
        ]

    def _backward_node(self, nid: int) -> None:
        inode = self.idx[nid]
        node = inode.source
        ograds = [
            self.total(eid, NodeEntry(node, i))
            for i, eid in enumerate(self.idx.output_eids_of(nid))
        ]
        igrads = _call_fgradient(node, ograds)
        for (src, _, _), eid, grad in zip(inode.inputs, inode.input_eids, igrads):
            if self.wants[src]:
                self.contributions.setdefault(eid, []).append(grad)

    def total(self, eid: int, entry: NodeEntry) -> NodeEntry:
        """The summed gradient of one entry (built once; zeros when nothing flows in)."""
        if eid not in self.sums:
            grads = self.contributions.pop(eid, [])
            # zeros add nothing: drop them from a sum, keeping one (MXNet's aggregation)
            nonzero = [g for g in grads if not grads_all_zero([g])]
            grads = nonzero or grads[:1]
            if not grads:
                self.sums[eid] = self._zero(entry)
            elif len(grads) == 1:
                self.sums[eid] = grads[0]
            else:
                name = f"{_label(entry)}_grad_sum"
                node = make_node(self.aggregate_op, name, grads, {"num_args": len(grads)})
                self.sums[eid] = NodeEntry(node, 0)
        return self.sums[eid]

    def _zero(self, entry: NodeEntry) -> NodeEntry:
        return NodeEntry(make_node(self.zero_op, f"{_label(entry)}_zero_grad", [entry]), 0)


def _call_fgradient(node: Node, ograds: list[NodeEntry]) -> list[NodeEntry]:
    op = node.op
    assert op is not None
    fgrad = Op.get_attr(FGradient).get(op)
    if fgrad is None and grads_all_zero(ograds):  # nothing flows back: zeros (as NNVM)
        return make_zero_grad_nodes(node, ograds)
    if fgrad is None:
        raise NNVMError(
            f"Gradient: node '{node.name}' ({op.name}) lies between an x and a y "
            f"but its op has no FGradient; register one, or leave the inputs "
            f"before it out of grad_xs (grad_req='null')"
        )
    try:
        igrads = list(fgrad(node, ograds))
    except Exception as e:
        raise NNVMError(
            f"Gradient: FGradient of node '{node.name}' ({op.name}) raised {type(e).__name__}: {e}"
        ) from e
    if len(igrads) != len(node.inputs) or not all(isinstance(g, NodeEntry) for g in igrads):
        raise NNVMError(
            f"Gradient: FGradient of node '{node.name}' ({op.name}) must return "
            f"one NodeEntry per input ({len(node.inputs)}), got {igrads!r:.200}"
        )
    return igrads


def _label(entry: NodeEntry) -> str:
    node = entry.node
    return node.name if node.num_outputs() == 1 else f"{node.name}_out{entry.index}"


__all__ = ["gradient"]
