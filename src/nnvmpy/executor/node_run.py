"""One prepared engine push per node of a bound graph, and the plan facts they depend on.

`make_node_run` resolves, once at bind time, everything a push needs — the compute
function (or the op state for stateful ops), the arrays, write requests, resources and
engine variables — so that running a graph is only a loop of pushes.

A bound graph keeps one NodeRun per node for the executor's life, so what each holds is
counted: CPython's full collections walk every tracked object, and a 4000-node unrolled
LSTM's runs once held ~85 000 of them (per run a closure with seven cells, a dict of
engine functions, four lists of per-run state that only memoized or stamping nodes use).
The engine function of a plain node is now one shared function bound to a tuple of its
arguments (`functools.partial`), and state a node does not use is the shared empty tuple
or None.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from .. import engine, input_stamps
from ..attrs import (
    FCreateOpState,
    FMutateInputs,
    FResourceRequest,
    FStampedInputs,
    TIsBackward,
    TMemoizable,
    fcompute,
    fstateful_compute,
)
from ..base import Context, NNVMError, OpReqType
from ..graph.node import Node, NodeEntry, post_order
from ..ndarray.ndarray import NDArray
from ..resource import OpContext, Resource, get_resource


@dataclass
class NodeRun:
    """Everything needed to push one node: its compute, arrays, requests and variables."""

    node: Node
    compute: Any
    first_arg: Any  # NodeAttrs, or the op state for stateful ops
    inputs: list[NDArray]
    outputs: list[NDArray]
    req: list[OpReqType]
    resources: Sequence[Resource]  # () when the op requests none
    const_vars: list[Any]
    mutate_vars: list[Any]
    memo: bool = False  # TMemoizable: skip the compute while no input changed
    fn_train: Any = None  # the engine functions, built on first use (fn)
    fn_infer: Any = None
    # memoized only ([None], [0]; __post_init__): the versions at the last run, and how
    # many times this node really computed
    seen: list[Any] | None = None
    computed: list[int] | None = None
    # memoized or stamping: per input, the memoized node writing it (None: another
    # writer) (link_memo_sources)
    sources: Sequence[NodeRun | None] = ()
    # FStampedInputs: (input index, whether a graph variable feeds it); those fed by a
    # variable or a memoized writer (`sources`) get a stamp, the others none
    stamped: Sequence[tuple[int, bool]] = ()
    # on a GPU, the compute specialised to this node's one signature (FCompute's
    # `specialize`, as imperative call plans use it): called (inputs, outputs, run_ctx)
    planned: Any = None

    def __post_init__(self) -> None:
        if self.memo and self.seen is None:
            self.seen, self.computed = [None], [0]

    def count(self) -> int:
        """How many times this memoized node really computed."""
        return self.computed[0] if self.computed is not None else 0

    @property
    def label(self) -> str:
        """Node and op name, as errors raised inside the compute show them."""
        return f"{self.node.name} ({self.node.op.name if self.node.op else 'variable'})"

    def fn(self, is_train: bool) -> Any:
        """The engine function for this node (built once per is_train value)."""
        fn = self.fn_train if is_train else self.fn_infer
        if fn is None:
            in_data = [a._data for a in self.inputs]
            out_data = [a._data for a in self.outputs]
            if self.planned is not None:
                fn = partial(self.planned, in_data, out_data)
            else:
                fn = partial(
                    _run_compute, self.compute, self.first_arg, is_train, self.resources,
                    in_data, self.req, out_data,
                )  # fmt: skip
            if self.stamped:
                fn = self._stamping(fn)
            if self.memo:
                fn = self._memoized(fn)
            if is_train:
                self.fn_train = fn
            else:
                self.fn_infer = fn
        return fn

    def _stamping(self, fn: Any) -> Any:
        """fn, with the stamps of the FStampedInputs published while it runs
        (nnvmpy.input_stamps): a variable's (engine variable, version), a memoized
        writer's (compute counter, count)."""
        sources = self.sources or [None] * len(self.inputs)
        known: list[tuple[int, Any, bool]] = []
        for i, from_variable in self.stamped:
            a, source = self.inputs[i], sources[i]
            if source is None and not from_variable:
                continue  # an intermediate: a bulk segment may write it unversioned
            holder: Any = source.computed if source is not None else a._chunk.var
            known.append((input_stamps.start_address(a._data), holder, source is not None))
        if not known:
            return fn

        def stamping(run_ctx: Any) -> None:
            stamps = {
                addr: (holder, holder[0] if counted else holder.version)
                for addr, holder, counted in known
            }
            with input_stamps.published(stamps):
                fn(run_ctx)

        return stamping

    def _memoized(self, fn: Any) -> Any:
        """fn, skipped while the versions of the input and output variables are those
        the last run left (the engine bumps a variable's version at each write ending;
        the reads this push holds mean every earlier write has ended).

        An input written by another memoized node is judged by how often that node
        really computed instead: its push bumps the version even when it skipped (the
        bfloat16 weight packed from a folded BatchNorm weight repacks only after a
        refold), and the count is right inside a bulk segment, before any version bump.
        """
        sources = self.sources or [None] * len(self.inputs)
        in_vars = [a._chunk.var for a in self.inputs]
        out_vars = [a._chunk.var for a in self.outputs]
        bumps = [self.mutate_vars.count(v) for v in out_vars]  # this push's own writes
        seen: list[Any] = self.seen or []  # __post_init__ gives a memoized run its state
        computed: list[int] = self.computed or []

        def memo(run_ctx: Any) -> None:
            ins = [v.version if s is None else s.count() for v, s in zip(in_vars, sources)]
            outs = [v.version for v in out_vars]
            if seen[0] != (ins, outs):
                fn(run_ctx)
                computed[0] += 1
            seen[0] = (ins, [v + b for v, b in zip(outs, bumps)])

        return memo


def _run_compute(
    compute: Any,
    first: Any,
    is_train: bool,
    resources: Any,  # a list, or () for none: OpContext.requested is only read
    in_data: list[Any],
    req: list[OpReqType],
    out_data: list[Any],
    run_ctx: Any,
) -> None:
    """A plain node's engine function, bound to its arguments by NodeRun.fn."""
    compute(first, OpContext(is_train, run_ctx, resources), in_data, req, out_data)


def make_node_run(
    node: Node,
    ctx: Context,
    ins: list[NDArray],
    outs: list[NDArray],
    req: list[OpReqType],
    states: dict[int, Any],
) -> NodeRun:
    """The prepared push for `node`; `states` collects op states for their backward nodes."""
    op = node.op
    assert op is not None
    dev = "gpu" if ctx.device_type == "gpu" else "cpu"
    compute = op.get_attr(fcompute(dev))
    first: Any = node.attrs
    state_var: Any = None
    if compute is None:
        compute = op.get_attr(fstateful_compute(dev))
        create = op.get_attr(FCreateOpState)
        if compute is None:
            raise NNVMError(
                f"bind: node '{node.name}' ({op.name}) has no FCompute<{dev}> "
                f"or FStatefulCompute<{dev}>, so it cannot run on {ctx}"
            )
        if create is not None:
            first = create(node.attrs, ctx, [a.shape for a in ins], [a.dtype for a in ins])
            # the state gets its own engine variable (MXNet's op state var), so the
            # forward and backward calls on it never overlap
            state_var = engine.get_engine().new_var()
            states[id(node)] = (first, state_var)
        elif op.get_attr(TIsBackward, False) and node.control_deps:
            first, state_var = states.get(id(node.control_deps[0]), (None, None))
            if first is None:
                raise NNVMError(
                    f"bind: backward node '{node.name}' ({op.name}) needs "
                    f"the state of its forward node, which has none"
                )
        else:
            raise NNVMError(
                f"bind: node '{node.name}' ({op.name}) has FStatefulCompute but no FCreateOpState"
            )
    resources: list[Resource] = []
    res_vars = []
    requests = op.get_attr(FResourceRequest)
    for kind in requests(node.attrs) if requests is not None else []:
        res, var = get_resource(kind, ctx)
        resources.append(res)
        res_vars.append(var)
    mutate = [a._chunk.var for a in outs] + res_vars
    if state_var is not None:
        mutate.append(state_var)
    mutated = op.get_attr(FMutateInputs)
    if mutated is not None:
        mutate += [ins[i]._chunk.var for i in mutated(node.attrs)]
    const = [a._chunk.var for a in ins]
    memo = bool(op.get_attr(TMemoizable, False))
    run = NodeRun(node, compute, first, ins, outs, req, resources or (), const, mutate, memo)
    stamped = op.get_attr(FStampedInputs)
    if stamped is not None:
        run.stamped = [(i, node.inputs[i].node.is_variable()) for i in stamped(node.attrs)]
    specialize = getattr(compute, "specialize", None)
    if (  # a GPU launch's per-call checks are most of the host's time per node
        specialize is not None
        and dev == "gpu"
        and first is node.attrs
        and not resources
        and mutated is None
    ):
        run.planned = specialize(
            node.attrs,
            ctx,
            [(a.shape, a.dtype) for a in ins],
            [(a.shape, a.dtype) for a in outs],
            req,
        )
    return run


def link_memo_sources(runs: list[NodeRun]) -> None:
    """Tell each memoized or stamping run which of its inputs another memoized run writes
    (before their engine functions are built)."""
    writer = {id(a._chunk.var): r for r in runs if r.memo for a in r.outputs}
    for r in runs:
        if r.memo or r.stamped:
            r.sources = [writer.get(id(a._chunk.var)) for a in r.inputs]


def memo_entries(idx: Any) -> list[int]:
    """Output entry ids of the TMemoizable nodes (their memory must be theirs alone)."""
    return [
        eid
        for nid, node in enumerate(idx.nodes)
        if node.op is not None and node.op.get_attr(TMemoizable, False)
        for eid in idx.output_eids_of(nid)
    ]


def retained_entries(idx: Any, heads: list[NodeEntry]) -> set[int]:
    """Outputs of forward op nodes that a backward node reads (graph outputs aside)."""
    return forward_entries_read_by_backward(idx, heads) - set(idx.output_eids)


def forward_entries_read_by_backward(idx: Any, heads: list[NodeEntry]) -> set[int]:
    """Outputs of forward op nodes (graph outputs included) that a backward node reads:
    when there are none, backward needs no forward before it (repeat's, tile's, ...)."""
    fwd = {id(n) for n in post_order(heads)}
    retained: set[int] = set()
    for nid, node in enumerate(idx.nodes):
        if node.is_variable() or id(node) in fwd:
            continue
        for e in idx[nid].input_eids:
            src = idx.nodes[idx.entry_node(e)[0]]
            if id(src) in fwd and not src.is_variable():
                retained.add(e)
    return retained


def default_req(unread: bool, inplace_index: int) -> OpReqType:
    if unread:
        return OpReqType.kNullOp
    return OpReqType.kWriteInplace if inplace_index >= 0 else OpReqType.kWriteTo


def reader_counts(idx: Any) -> list[int]:
    counts = [0] * idx.num_node_entries
    for nid in range(idx.num_nodes):
        for e in idx[nid].input_eids:
            counts[e] += 1
    return counts


def push_add(src: NDArray, dst: NDArray) -> None:
    """dst += src through the engine (a gradient accumulated with grad_req='add')."""
    from nnvmpy.ops.elemwise_unary import _identity

    s, d, ctx = src._data, dst._data, dst._ctx

    def add(run_ctx: Any) -> None:
        _identity.launch(ctx, d, OpReqType.kAddTo, s)

    engine.get_engine().push_sync(add, ctx, [src._chunk.var], [dst._chunk.var], name="grad_add")


__all__ = [
    "NodeRun",
    "default_req",
    "link_memo_sources",
    "make_node_run",
    "memo_entries",
    "push_add",
    "reader_counts",
    "retained_entries",
]
