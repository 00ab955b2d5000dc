"""`_CachedOp`: run one subgraph as a single node (what graph partitioning makes).

MXNet's default subgraph backends ('default', 'default_v2'; passes/partition.py) replace
each group of selected nodes with a `_CachedOp` node named `_CachedOp<k>` holding the
group as its one subgraph. The node's inputs are the entries the group reads from outside
(each once); its outputs are the subgraph's outputs. `input_locs` gives, per subgraph
input (its variables in graph order), the op input feeding it; absent, input i feeds
subgraph input i (as a node loaded from MXNet's JSON, which has no attributes).

A subgraph node that mutates one of the subgraph's inputs (BatchNorm's moving mean and
variance) makes the op mutate the op input feeding it (FMutateInputs), so the symbol lists
that input among its auxiliary states and the executor orders the update. The gradient
(`_backward_CachedOp`) differentiates the subgraph, reusing the training forward's values.
"""

from __future__ import annotations

from typing import Any

from ...attrs import FMutateInputs
from ...base import NNVMError
from ...graph.attrs import DTYPE, SHAPE
from ...graph.pass_registry import apply_passes
from ...registry import NodeAttrs, Op
from .arrays import Arrays, assign_input_grads
from .subgraph_op import (
    ControlFlowParam,
    LoopState,
    all_known,
    make_parser,
    merge_into,
    register_subgraph_op,
)

OP = "_CachedOp"
BACKWARD_OP = "_backward_CachedOp"

_parse_own = make_parser(OP, {"num_args": -1, "num_outputs": -1}, ("input_locs",))

#: MXNet's CachedOp flags (a hybridized block's node may carry them): accepted, unused
_MXNET_FLAGS = frozenset(
    (
        "static_alloc",
        "static_shape",
        "is_dynamic",
        "inline_limit",
        "forward_bulk_size",
        "backward_bulk_size",
        "data_indices",
        "param_indices",
    )
)


def _parse(attrs: NodeAttrs) -> ControlFlowParam:
    if _MXNET_FLAGS.isdisjoint(attrs.dict):
        return _parse_own(attrs)
    own = {k: v for k, v in attrs.dict.items() if k not in _MXNET_FLAGS}
    return _parse_own(NodeAttrs(attrs.op, attrs.name, own))


def num_args(p: ControlFlowParam) -> int:
    """The op's input count: the attribute, else the subgraph's input count."""
    return p.num_args if p.num_args >= 0 else p.num_subgraph_inputs(0)


def num_outputs(p: ControlFlowParam) -> int:
    return p.num_outputs if p.num_outputs >= 0 else len(p.subgraph(0).outputs)


def input_locs(p: ControlFlowParam) -> tuple[int, ...]:
    """Per subgraph input, the op input feeding it (checked against the subgraph)."""
    n_sub = p.num_subgraph_inputs(0)
    locs = p.input_locs or tuple(range(n_sub))
    n_args = num_args(p)
    if len(locs) != n_sub or any(not 0 <= k < n_args for k in locs):
        raise NNVMError(
            f"{OP}: input_locs={list(locs)} do not match the subgraph's {n_sub} inputs "
            f"and the op's {n_args} inputs"
        )
    if len(p.subgraph(0).outputs) != num_outputs(p):
        raise NNVMError(
            f"{OP}: the subgraph has {len(p.subgraph(0).outputs)} outputs, "
            f"num_outputs={p.num_outputs}"
        )
    return tuple(locs)


def mutated_inputs(attrs: NodeAttrs) -> list[int]:
    """FMutateInputs: the op inputs whose subgraph variable a subgraph node mutates."""
    p = attrs.parsed
    if not p.subgraphs:
        return []
    key = ("mutate", id(p.subgraphs[0]))
    cached = p._runners.get(key)
    if cached is None:
        idx = p.subgraph(0).indexed
        position = {id(idx.nodes[nid]): j for j, nid in enumerate(idx.input_nodes)}
        locs = input_locs(p)
        found: list[int] = []
        for node in idx.nodes:
            fn = node.op.get_attr(FMutateInputs) if node.op is not None else None
            for i in fn(node.attrs) if fn is not None else ():
                j = position.get(id(node.inputs[i].node)) if i < len(node.inputs) else None
                if j is not None and locs[j] not in found:
                    found.append(locs[j])
        cached = p._runners[key] = sorted(found)
    return list(cached)


def _infer(attrs: Any, ins: list[Any], outs: list[Any], is_shape: bool) -> bool:
    p = attrs.parsed
    locs = input_locs(p)
    graph = p.subgraph(0)
    what = "shape" if is_shape else "dtype"
    # the outputs' known values go in as hints, so an output's shape (a weight that its
    # consumer determines) flows back through the subgraph to the op's inputs
    hints = {e: outs[i] for i, e in enumerate(graph.outputs) if outs[i] is not None}
    if is_shape:
        g = apply_passes(
            graph, "InferShape", shape_inputs=[ins[k] for k in locs], shape_hints=hints
        )
        values = g.attrs[SHAPE]
    else:
        g = apply_passes(graph, "InferType", dtype_inputs=[ins[k] for k in locs], dtype_hints=hints)
        values = g.attrs[DTYPE]
    idx = g.indexed
    for k, nid in zip(locs, idx.input_nodes):
        merge_into(ins, k, values[idx.entry_id(nid, 0)], f"{OP}: input {k} {what}", is_shape)
    for i, eid in enumerate(idx.output_eids):
        merge_into(outs, i, values[eid], f"{OP}: output {i} {what}", is_shape)
    return all_known(ins, is_shape) and all_known(outs, is_shape)


def _infer_shape(attrs: Any, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    return _infer(attrs, in_shapes, out_shapes, True)


def _infer_type(attrs: Any, in_types: list[Any], out_types: list[Any]) -> bool:
    return _infer(attrs, in_types, out_types, False)


def _forward(
    state: LoopState, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    p = state.parsed
    sub = [inputs[k] for k in input_locs(p)]
    rec: dict[int, Any] | None = {} if ctx.is_train else None
    res = p.runner(0).run(sub, ctx, record=rec)
    state.records = (sub, rec) if ctx.is_train else None
    arrays = Arrays(ctx)
    for i, out in enumerate(outputs):
        arrays.assign(out, req[i], res[i])


def _backward(
    state: LoopState, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    p = state.parsed
    locs = input_locs(p)
    n_out = num_outputs(p)
    ograds, fwd_in = inputs[:n_out], inputs[n_out:]
    if state.records is not None:
        sub, rec = state.records
    else:
        sub, rec = [fwd_in[k] for k in locs], None
    sub_grads = p.grad_runner(0).run(sub, ograds, ctx, rec)
    assign_input_grads(ctx, fwd_in, locs, sub_grads, req, outputs)


register_subgraph_op(
    OP,
    BACKWARD_OP,
    describe=(
        "Runs its one subgraph as a single node: what graph partitioning by op names "
        "(MXNet's 'default' and 'default_v2' subgraph backends) makes of each group."
    ),
    parse=_parse,
    infer_shape=_infer_shape,
    infer_type=_infer_type,
    forward=_forward,
    backward=_backward,
    inputs_doc="the entries the subgraph reads",
)
# the input and output counts come from the subgraph when the attributes are absent
Op.get(OP).set_num_inputs(lambda attrs: num_args(attrs.parsed)).set_num_outputs(
    lambda attrs: num_outputs(attrs.parsed)
).set_attr(FMutateInputs, mutated_inputs)
Op.get(BACKWARD_OP).set_num_inputs(
    lambda attrs: num_outputs(attrs.parsed) + num_args(attrs.parsed)
).set_num_outputs(lambda attrs: num_args(attrs.parsed))

__all__ = ["BACKWARD_OP", "OP", "input_locs", "mutated_inputs", "num_args", "num_outputs"]
