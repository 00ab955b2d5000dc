"""Run a subgraph node by node on the op's device, inside the compute of a control-flow op.

A control-flow op (`_foreach`, `_while_loop`, `_cond`) runs its subgraphs many times per
call, with shapes known only then. Pushing each subgraph node to the engine from inside
the op's own push would wait on the engine from an engine worker; instead the op's
compute calls each node's FCompute (or FStatefulCompute) of the op's device itself, in
topological order, on arrays it allocates there (arrays.Arrays): on a GPU nothing but
the loop conditions leaves the device. Shapes and dtypes come from the InferShape /
InferType passes, once per distinct input signature.

`GradientRunner` runs the gradient graph of a subgraph (the Gradient pass over each op's
FGradient, as the executor builds it): inputs are the subgraph's inputs and one head
gradient per subgraph output; outputs are the gradients of every subgraph input.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...attrs import FCreateOpState, FResourceRequest, TIsBackward, fcompute, fstateful_compute
from ...base import NNVMError, OpReqType
from ...graph.attrs import DTYPE, SHAPE
from ...graph.graph import Graph
from ...graph.node import Node, NodeEntry
from ...graph.pass_registry import apply_passes
from ...infer import shape_is_known, shape_str
from ...resource import OpContext, get_resource
from .arrays import Arrays


class GraphRunner:
    """Evaluates `graph` on inputs (NumPy or device arrays) given in the order of
    `input_nodes`."""

    def __init__(self, graph: Graph, input_nodes: list[Node] | None = None) -> None:
        self.graph = graph
        self.idx = graph.indexed
        nodes = self.idx.nodes
        if input_nodes is None:
            input_nodes = [nodes[n] for n in self.idx.input_nodes]
        position = {id(n): i for i, n in enumerate(input_nodes)}
        # per graph input node: the position of its array among run()'s inputs
        self._feed = []
        for nid in self.idx.input_nodes:
            pos = position.get(id(nodes[nid]))
            if pos is None:
                raise NNVMError(
                    f"control flow: subgraph variable '{nodes[nid].name}' has no input array"
                )
            self._feed.append((nid, pos))
        self.num_inputs = len(input_nodes)
        self._plans: dict[Any, tuple[list[Any], list[Any]]] = {}

    def _plan(self, inputs: list[np.ndarray]) -> tuple[list[Any], list[Any]]:
        key = tuple((a.shape, a.dtype.str) for a in inputs)
        plan = self._plans.get(key)
        if plan is None:
            shapes = [inputs[pos].shape for _, pos in self._feed]
            dtypes = [inputs[pos].dtype for _, pos in self._feed]
            g = apply_passes(
                self.graph,
                ["InferShape", "InferType"],
                shape_inputs=shapes,
                dtype_inputs=dtypes,
            )
            plan = (list(g.attrs[SHAPE]), list(g.attrs[DTYPE]))
            for eid, shape in enumerate(plan[0]):
                if not shape_is_known(shape) or plan[1][eid] is None:
                    nid, i = self.idx.entry_node(eid)
                    node = self.idx.nodes[nid]
                    raise NNVMError(
                        f"control flow: cannot infer output {i} of subgraph node "
                        f"'{node.name}' ({node.op.name if node.op else 'variable'}): "
                        f"shape {shape_str(shape)}, dtype {plan[1][eid]}"
                    )
            self._plans[key] = plan
        return plan

    def run(
        self,
        inputs: list[np.ndarray],
        ctx: OpContext,
        known: dict[int, Any] | None = None,
        record: dict[int, Any] | None = None,
    ) -> list[np.ndarray]:
        """The graph's outputs for these inputs (an output may be one of the inputs).

        known: per node (by id), the (outputs, op state) an earlier run computed: such a
        node is not run again (a gradient graph reuses its forward nodes' values, random
        ones included). record: filled with every node's (outputs, op state).
        """
        if len(inputs) != self.num_inputs:
            raise NNVMError(
                f"control flow: subgraph takes {self.num_inputs} inputs, got {len(inputs)}"
            )
        arrays = Arrays(ctx)
        inputs = [arrays.contiguous(a) for a in inputs]
        shapes, dtypes = self._plan(inputs)
        idx = self.idx
        values: list[Any] = [None] * idx.num_node_entries
        for nid, pos in self._feed:
            values[idx.entry_id(nid, 0)] = inputs[pos]
        states: dict[int, Any] = {}
        for nid, node in enumerate(idx.nodes):
            if node.is_variable():
                continue
            out_eids = idx.output_eids_of(nid)
            done = known.get(id(node)) if known is not None else None
            if done is not None:
                outs, state = done
                if state is not None:
                    states[id(node)] = state
            else:
                outs = [arrays.zeros(shapes[e], dtypes[e]) for e in out_eids]
                ins = [values[e] for e in idx[nid].input_eids]
                _run_node(node, ins, outs, ctx, states)
            if record is not None:
                record[id(node)] = (outs, states.get(id(node)))
            for e, a in zip(out_eids, outs):
                values[e] = a
        return [values[e] for e in idx.output_eids]


def _run_node(
    node: Node, ins: list[np.ndarray], outs: list[np.ndarray], ctx: OpContext, states: dict
) -> None:
    op = node.op
    assert op is not None
    dev = "gpu" if ctx.ctx.device_type == "gpu" else "cpu"
    requests = op.get_attr(FResourceRequest)
    kinds = requests(node.attrs) if requests is not None else []
    resources = [get_resource(kind, ctx.ctx)[0] for kind in kinds]
    sub_ctx = OpContext(ctx.is_train, ctx.run_ctx, resources)
    req = [OpReqType.kWriteTo] * len(outs)
    compute = op.get_attr(fcompute(dev))
    if compute is not None:
        compute(node.attrs, sub_ctx, ins, req, outs)
        return
    compute = op.get_attr(fstateful_compute(dev))
    if compute is None:
        raise NNVMError(
            f"control flow: subgraph node '{node.name}' ({op.name}) has no "
            f"FCompute<{dev}> or FStatefulCompute<{dev}>"
        )
    create = op.get_attr(FCreateOpState)
    if create is not None:
        state = create(node.attrs, ctx.ctx, [a.shape for a in ins], [a.dtype for a in ins])
        states[id(node)] = state
    elif op.get_attr(TIsBackward, False) and node.control_deps:
        state = states.get(id(node.control_deps[0]))
        if state is None:
            raise NNVMError(
                f"control flow: backward node '{node.name}' ({op.name}) has no forward state"
            )
    else:
        raise NNVMError(f"control flow: node '{node.name}' ({op.name}) has no FCreateOpState")
    compute(state, sub_ctx, ins, req, outs)


class GradientRunner:
    """Gradients of a subgraph's inputs, from its inputs and its outputs' gradients.

    run(inputs, head_grads) -> one gradient per subgraph input (zeros where an input does
    not reach any output).
    """

    def __init__(self, graph: Graph) -> None:
        idx = graph.indexed
        self.input_nodes = [idx.nodes[n] for n in idx.input_nodes]
        heads = list(graph.outputs)
        self.head_vars = [Node.variable(f"_cf_head_grad{i}") for i in range(len(heads))]
        grad = apply_passes(
            Graph(heads),
            ["Gradient"],
            grad_ys=heads,
            grad_xs=[NodeEntry(n) for n in self.input_nodes],
            grad_ys_out_grad=[NodeEntry(v) for v in self.head_vars],
        )
        self.runner = GraphRunner(Graph(grad.outputs), self.input_nodes + self.head_vars)

    def run(
        self,
        inputs: list[np.ndarray],
        head_grads: list[np.ndarray],
        ctx: OpContext,
        forward: dict[int, Any] | None = None,
    ) -> list[np.ndarray]:
        """forward: the `record` of the forward run on these inputs (else it is redone)."""
        return self.runner.run(list(inputs) + list(head_grads), ctx, known=forward)


__all__ = ["GradientRunner", "GraphRunner"]
