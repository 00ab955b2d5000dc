"""What the three control-flow ops share: their parsed attributes (which hold the
subgraphs), inference through a subgraph, the backward node, and their registration.

A control-flow node keeps its subgraphs (nnvm Graphs) in `attrs.parsed.subgraphs`, as
NNVM keeps them in `NodeAttrs::subgraphs`: every pass that copies a node copies
`attrs.parsed`, so they travel with it; symbol JSON writes them under the node's
"subgraphs" key. Each subgraph's inputs are its variables in graph order
(`indexed.input_nodes`); the node's integer attributes say which op input feeds each.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...attrs import (
    FCreateOpState,
    FGradient,
    FInferShape,
    FInferType,
    FListInputNames,
    FResourceRequest,
    FStatefulCompute_cpu,
    FStatefulCompute_gpu,
    TIsBackward,
)
from ...base import NNVMError, ParamError
from ...graph.attrs import DTYPE, SHAPE
from ...graph.graph import Graph
from ...graph.node import Node, NodeEntry
from ...graph.pass_registry import apply_passes
from ...infer import merge_shapes
from ...registry import NodeAttrs, Op, register_op, skip_in_source_locations
from .runner import GradientRunner, GraphRunner

skip_in_source_locations(__file__)  # registrations name the op's own file


class ControlFlowParam:
    """Parsed attributes of a control-flow node: int and int-tuple fields, the subgraphs,
    and the runners built for them (made on first use, shared by the node's copies)."""

    def __init__(self, op_name: str, values: dict[str, Any]) -> None:
        self.op_name = op_name
        self.values = values
        self.subgraphs: list[Graph] = []
        self._runners: dict[Any, Any] = {}

    def __getattr__(self, key: str) -> Any:
        values = self.__dict__.get("values", {})
        if key in values:
            return values[key]
        raise AttributeError(key)

    def subgraph(self, i: int) -> Graph:
        if i >= len(self.subgraphs):
            raise NNVMError(
                f"{self.op_name}: the node has {len(self.subgraphs)} subgraphs, needs "
                f"{i + 1} (build it with nd/sym.contrib, or load it from JSON with its subgraphs)"
            )
        return self.subgraphs[i]

    def runner(self, i: int) -> GraphRunner:
        key = ("fwd", i, id(self.subgraph(i)))
        if key not in self._runners:
            self._runners[key] = GraphRunner(self.subgraph(i))
        return self._runners[key]

    def grad_runner(self, i: int) -> GradientRunner:
        key = ("bwd", i, id(self.subgraph(i)))
        if key not in self._runners:
            self._runners[key] = GradientRunner(self.subgraph(i))
        return self._runners[key]

    def num_subgraph_inputs(self, i: int) -> int:
        return len(self.subgraph(i).indexed.input_nodes)


def parse_int_tuple(text: str, where: str) -> tuple[int, ...]:
    body = text.strip()
    if len(body) >= 2 and body[0] in "([" and body[-1] in ")]":
        body = body[1:-1]
    try:
        return tuple(int(d.strip().rstrip("L")) for d in body.split(",") if d.strip())
    except ValueError:
        raise ParamError(f"{where}: expected a tuple of ints like (0, 1), got {text!r}") from None


def make_parser(
    op_name: str, ints: dict[str, int | None], tuples: tuple[str, ...]
) -> Callable[[NodeAttrs], ControlFlowParam]:
    """An attr parser: `ints` maps int fields to defaults (None: required), `tuples` are
    int-tuple fields (default empty). Dunder keys (AttrScope's) are ignored."""

    def parse(attrs: NodeAttrs) -> ControlFlowParam:
        values: dict[str, Any] = {}
        for key, text in attrs.dict.items():
            if key.startswith("__") and key.endswith("__"):
                continue
            where = f"{op_name}: attribute '{key}'"
            if key in ints:
                try:
                    values[key] = int(text)
                except ValueError:
                    raise ParamError(f"{where}: expected an int, got {text!r}") from None
            elif key in tuples:
                values[key] = parse_int_tuple(text, where)
            else:
                known = sorted([*ints, *tuples])
                raise ParamError(f"{op_name}: unknown attribute '{key}'; accepted: {known}")
        for key, default in ints.items():
            if key not in values:
                if default is None:
                    raise ParamError(f"{op_name}: missing required attribute '{key}'")
                values[key] = default
        for key in tuples:
            values.setdefault(key, ())
        return ControlFlowParam(op_name, values)

    return parse


# -- inference through a subgraph ---------------------------------------------------------------


def infer_subgraph_shapes(graph: Graph, in_shapes: list[Any]) -> tuple[list[Any], list[Any]]:
    """(input shapes, output shapes) of `graph` as far as InferShape gets from `in_shapes`."""
    g = apply_passes(graph, "InferShape", shape_inputs=list(in_shapes))
    return _inputs_outputs(g, g.attrs[SHAPE])


def infer_subgraph_types(graph: Graph, in_types: list[Any]) -> tuple[list[Any], list[Any]]:
    g = apply_passes(graph, "InferType", dtype_inputs=list(in_types))
    return _inputs_outputs(g, g.attrs[DTYPE])


def _inputs_outputs(g: Graph, values: list[Any]) -> tuple[list[Any], list[Any]]:
    idx = g.indexed
    ins = [values[idx.entry_id(nid, 0)] for nid in idx.input_nodes]
    return ins, [values[e] for e in idx.output_eids]


def merge_into(values: list[Any], i: int, value: Any, what: str, is_shape: bool) -> None:
    """values[i] merged with value (shapes: dimension-wise; dtypes: must agree)."""
    if value is None:
        return
    old = values[i]
    if is_shape:
        try:
            values[i] = merge_shapes(old, tuple(value))
        except NNVMError as e:
            raise NNVMError(f"{what}: {e}") from None
    elif old is None:
        values[i] = value
    elif str(old) != str(value) and _dtype(old) != _dtype(value):
        raise NNVMError(f"{what}: dtype {old} but {value} was inferred")


def _dtype(t: Any) -> Any:
    import numpy as np

    return np.dtype(t)


def all_known(values: list[Any], is_shape: bool) -> bool:
    if is_shape:
        return all(v is not None and all(d is not None for d in v) for v in values)
    return all(v is not None for v in values)


# -- the op state shared by forward and backward -----------------------------------------------


class LoopState:
    """A control-flow node's op state: what its last training forward ran, per step —
    each subgraph's inputs and every node's (outputs, op state) — so that backward
    differentiates exactly that run (the same dropout masks) without running it again.
    None until then, and after an inference forward: backward then replays the loop."""

    def __init__(self, parsed: ControlFlowParam) -> None:
        self.parsed = parsed
        self.records: Any = None


def create_loop_state(attrs: NodeAttrs, ctx: Any, shapes: Any, dtypes: Any) -> LoopState:
    """FCreateOpState of the control-flow ops."""
    return LoopState(attrs.parsed)


# -- the backward node ----------------------------------------------------------------------------


def backward_node_gradient(backward_op: str) -> Callable[[Node, list[NodeEntry]], list[NodeEntry]]:
    """FGradient: one `backward_op` node reading every output gradient, then every forward
    input; it shares the forward node's parsed attributes (and so its subgraphs)."""
    from nnvmpy.graph.grad import grads_all_zero, make_zero_grad_nodes

    def gradient(node: Node, ograds: list[NodeEntry]) -> list[NodeEntry]:
        if grads_all_zero(ograds):
            return make_zero_grad_nodes(node, ograds)
        attrs = NodeAttrs(
            Op.get(backward_op), f"{node.name}_backward", node.attrs.dict, node.attrs.parsed
        )
        bwd = Node(attrs, list(ograds) + list(node.inputs), [node])
        return [NodeEntry(bwd, i) for i in range(len(node.inputs))]

    return gradient


# -- resources --------------------------------------------------------------------------------


def subgraph_resources(backward: bool) -> Callable[[NodeAttrs], list[Any]]:
    """FResourceRequest: every kind the subgraphs' nodes request (and, for the backward
    node, their gradient graphs' nodes, since backward may first replay the forward). The
    node runs those nodes itself; declaring their resources makes the executor take the
    resources' engine variables for it, so a random or temp-space op outside the loop is
    ordered with the ones inside."""

    def requests(attrs: NodeAttrs) -> list[Any]:
        p = attrs.parsed
        graphs = list(p.subgraphs)
        if backward:
            graphs += [p.grad_runner(i).runner.graph for i in range(len(p.subgraphs))]
        kinds: list[Any] = []
        for g in graphs:
            for node in g.indexed.nodes:
                fn = node.op.get_attr(FResourceRequest) if node.op is not None else None
                kinds += [k for k in (fn(node.attrs) if fn else []) if k not in kinds]
        return kinds

    return requests


# -- registration --------------------------------------------------------------------------------


def register_subgraph_op(
    op_name: str,
    backward_op: str,
    *,
    describe: str,
    parse: Callable[[NodeAttrs], ControlFlowParam],
    infer_shape: Callable[..., bool],
    infer_type: Callable[..., bool],
    forward: Callable[..., None],
    backward: Callable[..., None],
    inputs_doc: str,
    input_names: Callable[[NodeAttrs], list[str]] | None = None,
) -> None:
    """Register a control-flow op and its backward op: num_args inputs, num_outputs
    outputs, a LoopState op state, the subgraphs' resources, stateful computes (one for
    both devices: the subgraph nodes run where the op runs) and one backward node
    reading every output gradient, then every forward input."""
    op = (
        register_op(op_name)
        .describe(describe)
        .set_attr_parser(parse)
        .set_num_inputs(lambda attrs: attrs.parsed.num_args)
        .set_num_outputs(lambda attrs: attrs.parsed.num_outputs)
    )
    if input_names is not None:
        op.set_attr(FListInputNames, input_names)
    (
        op.set_attr(FInferShape, infer_shape)
        .set_attr(FInferType, infer_type)
        .set_attr(FCreateOpState, create_loop_state)
        .set_attr(FResourceRequest, subgraph_resources(backward=False))
        .set_attr(FStatefulCompute_cpu, forward)
        .set_attr(FStatefulCompute_gpu, forward)
        .set_attr(FGradient, backward_node_gradient(backward_op))
        .add_argument("data", "NDArray-or-Symbol[]", inputs_doc)
    )
    (
        register_op(backward_op)
        .set_attr_parser(parse)
        .set_num_inputs(lambda attrs: attrs.parsed.num_outputs + attrs.parsed.num_args)
        .set_num_outputs(lambda attrs: attrs.parsed.num_args)
        .set_attr(TIsBackward, True)
        .set_attr(FResourceRequest, subgraph_resources(backward=True))
        .set_attr(FStatefulCompute_cpu, backward)
        .set_attr(FStatefulCompute_gpu, backward)
    )


__all__ = [
    "ControlFlowParam",
    "LoopState",
    "all_known",
    "backward_node_gradient",
    "create_loop_state",
    "infer_subgraph_shapes",
    "infer_subgraph_types",
    "make_parser",
    "merge_into",
    "parse_int_tuple",
    "register_subgraph_op",
    "subgraph_resources",
]
