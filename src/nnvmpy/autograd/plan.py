"""A backward graph compiled into a list of pushes, reusable for every tape of one shape.

The Gradient pass's output is turned into steps over numbered slots: the head gradients,
the forward values recording kept (found by position in the tape's topological order),
and each step's outputs. Running a plan fills the slots from the current tape and pushes
each step's op through the engine (`node_push.NodePush`): the same kernels, requests
and engine dependencies as a bound executor. A training loop records the same graph at
every step, so backward caches plans by the tape's structure (backprop.py) and the pass,
shape derivation and bookkeeping run once, not once per step.

Compiling decides per step: its input slots; its outputs' shapes and dtypes (TIsBackward
ops take their forward node's input shapes, as InferShape does; others their op's
FInferShape); the requests (kNullOp for outputs nobody reads, the variable's kWriteTo or
kAddTo for a gradient written straight into its buffer); which slots die after it (so
intermediate gradients are freed early); and where an op state comes from.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ..attrs import TIsBackward
from ..base import NNVMError, OpReqType
from ..graph.node import Node, NodeEntry
from ..imperative import infer_outputs, invoke
from ..node_push import NodePush
from ..registry import NodeAttrs, Op
from .tape import AG, TapeInfo, entry_of, gradient_reads, new_variable

if TYPE_CHECKING:
    from nnvmpy.ndarray.ndarray import NDArray

_WRITE, _NULL, _ADD = OpReqType.kWriteTo, OpReqType.kNullOp, OpReqType.kAddTo

# Ops that read only the shape and dtype of an input (MXNet's FIgnoreInputs): the Gradient
# pass gives an output nobody differentiates zeros_like(output), whose value recording
# did not keep; an uninitialised array of the right shape stands in for it.
_SHAPE_ONLY = frozenset({"zeros_like", "ones_like"})


class Step:
    """One node of the backward graph: its op, slots, output layout and requests."""

    __slots__ = (
        "allocs",
        "attrs",
        "direct",
        "dtypes",
        "fwd_pos",
        "in_sigs",
        "ins",
        "nbytes",
        "nd_function",
        "out_sigs",
        "outs",
        "pusher",
        "release",
        "req",
        "shapes",
        "sizes",
    )

    def __init__(self, attrs: NodeAttrs, ins: list[int], outs: list[int]) -> None:
        self.attrs = attrs
        self.ins = ins
        self.outs = outs
        self.shapes: list[tuple[int, ...]] = []
        self.dtypes: list[Any] = []
        self.nbytes: list[int] = []
        self.req: list[OpReqType] = []
        self.direct: list[tuple[int, int]] = []  # (output index, x index) written in place
        # (output index, shape, dtype, nbytes) of the outputs run_plan allocates: not the
        # direct ones, which are the variables' gradient buffers
        self.allocs: list[tuple[int, tuple[int, ...], Any, int]] = []
        self.release: list[int] = []  # slots nobody reads after this step
        self.fwd_pos = -1  # tape position of the forward node (control dependency 0)
        self.sizes: list[int] = []
        self.in_sigs: list[tuple[tuple[int, ...], Any]] = []  # (shape, dtype) per input
        self.out_sigs: list[tuple[tuple[int, ...], Any]] = []
        self.pusher: NodePush | None = None  # made on the first run, per device
        op = attrs.op
        assert op is not None
        self.nd_function = op.get_attr("FNDArrayFunction")


class BackwardPlan:
    """The compiled gradient graph of one tape structure."""

    __slots__ = (
        "head_slots",
        "n_slots",
        "placeholders",
        "results",
        "sources",
        "steps",
        "unread_heads",
    )

    def __init__(self) -> None:
        self.n_slots = 0
        self.head_slots: list[int] = []
        # heads whose gradient no step reads and no result is (SoftmaxOutput's backward
        # ignores its head gradient): backward need not make their default ones
        self.unread_heads: frozenset[int] = frozenset()
        # (slot, tape position, kept as output (True) or as an input of that node, index)
        self.sources: list[tuple[int, int, bool, int]] = []
        self.placeholders: list[tuple[int, int, int]] = []  # (slot, tape position, output)
        self.steps: list[Step] = []
        self.results: list[tuple[int, bool]] = []  # per x: (slot, written in place)


# -- compiling ----------------------------------------------------------------------------------


def compile_plan(
    order: list[Node],
    grads: list[NodeEntry],
    ograds: list[NodeEntry],
    targets: list[Any],
) -> BackwardPlan:
    """The plan of the Gradient pass's outputs `grads` over the tape `order`."""
    plan = BackwardPlan()
    pos = {id(n): p for p, n in enumerate(order)}
    kept_in = _kept_inputs(order)
    slot_of: dict[tuple[int, int], int] = {}
    shape_of: list[Any] = []
    dtype_of: list[Any] = []

    def new_slot(shape: Any, dtype: Any) -> int:
        shape_of.append(shape)
        dtype_of.append(dtype)
        plan.n_slots += 1
        return plan.n_slots - 1

    for e in ograds:
        k = (id(e.node), e.index)
        if k not in slot_of:
            info: TapeInfo = e.node.info[AG]
            slot_of[k] = new_slot(info.shapes[e.index], info.dtypes[e.index])
        plan.head_slots.append(slot_of[k])

    def forward_slot(node: Node, e: NodeEntry) -> int:
        """A slot for forward value e, filled from what recording kept."""
        k = (id(e.node), e.index)
        p = pos.get(id(e.node))
        info: TapeInfo | None = e.node.info.get(AG)
        if p is None or info is None:
            raise NNVMError(f"autograd: {_name(node)} reads {_name(e.node)}, which is off the tape")
        s = slot_of[k] = new_slot(info.shapes[e.index], info.dtypes[e.index])
        if info.saved_out is not None and info.saved_out[e.index] is not None:
            plan.sources.append((s, p, True, e.index))
        elif k in kept_in:
            c, j = kept_in[k]
            plan.sources.append((s, c, False, j))
        elif _name(node) in _SHAPE_ONLY or _ignores(node, e):
            plan.placeholders.append((s, p, e.index))
        else:
            raise NNVMError(
                f"autograd: the gradient node {_name(node)} reads output {e.index} of "
                f"{_name(e.node)}, whose value recording did not keep (an FGradient read an "
                f"entry other than its node's inputs and outputs)"
            )
        return s

    for node in _new_nodes(grads, pos, slot_of):
        ins = []
        for e in node.inputs:
            s = slot_of.get((id(e.node), e.index))
            ins.append(forward_slot(node, e) if s is None else s)
        shapes, dtypes = output_shapes(node, [shape_of[s] for s in ins], [dtype_of[s] for s in ins])
        outs = []
        for i, (shape, dtype) in enumerate(zip(shapes, dtypes)):
            slot_of[(id(node), i)] = s = new_slot(shape, dtype)
            outs.append(s)
        step = Step(node.attrs, ins, outs)
        step.shapes, step.dtypes = [tuple(s) for s in shapes], list(dtypes)
        step.sizes = [math.prod(s) for s in step.shapes]
        step.nbytes = [n * d.itemsize for n, d in zip(step.sizes, step.dtypes)]
        step.in_sigs = [(tuple(shape_of[s]), dtype_of[s]) for s in ins]
        step.out_sigs = list(zip(step.shapes, step.dtypes))
        if node.control_deps:
            step.fwd_pos = pos.get(id(node.control_deps[0]), -1)
        plan.steps.append(step)
    _plan_results_and_requests(plan, grads, slot_of, targets)
    return plan


def _new_nodes(
    grads: list[NodeEntry], pos: dict[int, int], known: dict[tuple[int, int], int]
) -> list[Node]:
    """The nodes the Gradient pass made, inputs first (a DFS that stops at the tape)."""
    head_nodes = {k[0] for k in known}
    order: list[Node] = []
    seen: set[int] = set()
    for g in grads:
        root = g.node
        if id(root) in seen or id(root) in pos or id(root) in head_nodes:
            continue
        seen.add(id(root))
        stack = [(root, iter(root.inputs))]
        while stack:
            node, it = stack[-1]
            for e in it:
                n = e.node
                i = id(n)
                if i not in seen and i not in pos and i not in head_nodes:
                    seen.add(i)
                    stack.append((n, iter(n.inputs)))
                    break
            else:
                stack.pop()
                order.append(node)
    return order


def _kept_inputs(order: list[Node]) -> dict[tuple[int, int], tuple[int, int]]:
    """Entry -> (tape position, input index) of a node that kept it as an input."""
    kept: dict[tuple[int, int], tuple[int, int]] = {}
    for p, n in enumerate(order):
        info: TapeInfo | None = n.info.get(AG)
        if info is None or info.saved_in is None:
            continue
        for j, (e, a) in enumerate(zip(n.inputs, info.saved_in)):
            if a is not None:
                kept.setdefault((id(e.node), e.index), (p, j))
    return kept


def _plan_results_and_requests(
    plan: BackwardPlan, grads: list[NodeEntry], slot_of: dict[Any, int], targets: list[Any]
) -> None:
    readers = [0] * plan.n_slots
    last = [-1] * plan.n_slots
    for i, step in enumerate(plan.steps):
        for s in step.ins:
            readers[s] += 1
            last[s] = i
    result_slots = [slot_of[(id(g.node), g.index)] for g in grads]
    uses = {s: result_slots.count(s) for s in result_slots}
    made_by = {s: (i, j) for i, step in enumerate(plan.steps) for j, s in enumerate(step.outs)}
    for x, (s, target) in enumerate(zip(result_slots, targets)):
        direct = target is not None and s in made_by and uses[s] == 1 and not readers[s]
        if direct:
            i, j = made_by[s]
            plan.steps[i].direct.append((j, x))
        plan.results.append((s, direct))
    wanted = set(result_slots)
    for step in plan.steps:
        step.req = [_WRITE if readers[s] or s in wanted else _NULL for s in step.outs]
        for j, x in step.direct:
            step.req[j] = targets[x][1]
        in_buffers = {j for j, _ in step.direct}
        step.allocs = [
            (j, shape, dtype, n)
            for j, (shape, dtype, n) in enumerate(zip(step.shapes, step.dtypes, step.nbytes))
            if j not in in_buffers
        ]
    plan.unread_heads = frozenset(
        h for h, s in enumerate(plan.head_slots) if not readers[s] and s not in wanted
    )
    for s, i in enumerate(last):
        if i >= 0 and s not in wanted:
            plan.steps[i].release.append(s)


def output_shapes(node: Node, in_shapes: list[Any], in_dtypes: list[Any]) -> tuple[list, list]:
    """A backward node's outputs have its forward node's input shapes (TIsBackward, as
    InferShape does); other nodes use their op's FInferShape/FInferType."""
    op = node.op
    assert op is not None
    n_out = op.get_num_outputs(node.attrs)
    if node.control_deps and op.get_attr(TIsBackward, False):
        fwd = node.control_deps[0]
        if len(fwd.inputs) >= n_out:
            shapes, dtypes = [], []
            for e in fwd.inputs[:n_out]:
                info: TapeInfo | None = e.node.info.get(AG)
                if info is None:
                    break
                shapes.append(info.shapes[e.index])
                dtypes.append(info.dtypes[e.index])
            else:
                return shapes, dtypes
    return infer_outputs(node.attrs, in_shapes, in_dtypes, n_out)


def _ignores(node: Node, e: NodeEntry) -> bool:
    fn = node.op.get_attr("FIgnoreInputs") if node.op is not None else None
    return fn is not None and any(
        node.inputs[j] is e or node.inputs[j] == e for j in fn(node.attrs)
    )


def _name(node: Node) -> str:
    return node.op.name if node.op is not None else "a variable"


# -- running ------------------------------------------------------------------------------------


def run_plan(
    plan: BackwardPlan,
    order: list[Node],
    head_grads: list[NDArray],
    ograds: list[NodeEntry],
    targets: list[Any],
    train_mode: bool,
    record: bool,
    ctx: Any,
) -> list[NDArray | None]:
    """Push every step on the current tape's values; returns per x its gradient (None
    when written into the variable's buffer). With `record` (create_graph) each step
    is recorded as a Node, so the results can be differentiated again. A head gradient
    may be None where `plan.unread_heads` says no step reads it. `ctx`: the heads'
    device, where steps without inputs run."""
    from nnvmpy.ndarray.ndarray import new_array

    slots: list[Any] = [None] * plan.n_slots
    for s, g in zip(plan.head_slots, head_grads):
        slots[s] = g
    for s, p, as_output, i in plan.sources:
        info: TapeInfo = order[p].info[AG]
        kept = info.saved_out if as_output else info.saved_in
        assert kept is not None
        slots[s] = kept[i]
    for s, p, i in plan.placeholders:
        info = order[p].info[AG]
        shape, dtype = info.shapes[i], info.dtypes[i]
        slots[s] = new_array(shape, dtype, math.prod(shape) * dtype.itemsize, info.ctx)
    entries = _entries(plan, order, ograds) if record else None
    anchor_ctx = ctx
    outs: list[Any]
    for step in plan.steps:
        ins = [slots[s] for s in step.ins]
        ctx = ins[0]._ctx if ins else anchor_ctx
        if step.nd_function is not None:
            outs = _run_nd_function(step, ins, targets)
            if entries is not None:  # create_graph: the ops it called recorded themselves
                for s, o in zip(step.outs, outs):
                    entries[s] = entry_of(o)
        else:
            outs = [None] * len(step.shapes)
            for j, shape, dtype, n in step.allocs:
                outs[j] = new_array(shape, dtype, n, ctx)
            req = step.req
            for j, x in step.direct:
                outs[j] = targets[x][0]
            if record:
                req = [r if r != _NULL else _WRITE for r in req]
            state = None
            if step.fwd_pos >= 0:
                state = order[step.fwd_pos].info[AG].state
            pusher = step.pusher
            if pusher is None or (pusher.ctx is not ctx and pusher.ctx != ctx):
                pusher = step.pusher = NodePush(
                    step.attrs, ctx, step.sizes, (step.in_sigs, step.out_sigs, step.req)
                )
            new_state = pusher.push(ins, outs, req, train_mode, state)
            if entries is not None:
                _record_step(step, order, entries, ctx, ins, outs, new_state or state)
        for s, o in zip(step.outs, outs):
            slots[s] = o
        for s in step.release:
            slots[s] = None
    return [None if direct else slots[s] for s, direct in plan.results]


def _run_nd_function(step: Step, ins: list[NDArray], targets: list[Any]) -> list[NDArray]:
    """A step computed by calling ops on NDArrays (FNDArrayFunction: autograd.Function's
    backward). Its results carry their own tape entries under create_graph."""
    results = list(step.nd_function(step.attrs, ins))
    op = step.attrs.op.name if step.attrs.op is not None else "?"
    for i, (r, s) in enumerate(zip(results, step.shapes)):
        if r.shape != s:
            raise NNVMError(
                f"autograd: {op} gave gradient {i} of shape {r.shape}, but the input it "
                f"belongs to has shape {s}"
            )
    for j, x in step.direct:
        grad, req = targets[x]
        if req == _ADD:
            invoke(Op.get("elemwise_add"), [grad, results[j]], {}, out=grad)
        else:
            results[j].copyto(grad)
        results[j] = grad
    return results


def _entries(plan: BackwardPlan, order: list[Node], ograds: list[NodeEntry]) -> list[Any]:
    """create_graph: the tape entry of every slot filled before the steps run."""
    entries: list[Any] = [None] * plan.n_slots
    for s, e in zip(plan.head_slots, ograds):
        entries[s] = e
    for s, p, as_output, i in plan.sources:
        entries[s] = NodeEntry(order[p], i) if as_output else order[p].inputs[i]
    for s, p, i in plan.placeholders:
        entries[s] = NodeEntry(order[p], i)
    return entries


def _record_step(
    step: Step,
    order: list[Node],
    entries: list[Any],
    ctx: Any,
    ins: list[NDArray],
    outs: list[NDArray],
    state: Any,
) -> None:
    """Put a pushed step on the tape as a Node (create_graph)."""
    inputs = []
    for s, x in zip(step.ins, ins):
        e = entries[s]
        if e is None or AG not in e.node.info:
            e = new_variable(x, None, _NULL)
        inputs.append(e)
    deps = [order[step.fwd_pos]] if step.fwd_pos >= 0 else None
    node = Node(step.attrs, inputs, deps)
    reads_in, reads_out = gradient_reads(step.attrs, len(ins), len(outs))
    saved_in = [x.detach() if j in reads_in else None for j, x in enumerate(ins)]
    saved_out = [o.detach() if j in reads_out else None for j, o in enumerate(outs)]
    # reusable=False: the attrs of one compiled plan are not worth a plan cache entry
    node.info[AG] = TapeInfo(
        ctx,
        step.shapes,
        step.dtypes,
        saved_in if reads_in else None,
        saved_out if reads_out else None,
        state,
        False,
    )
    for i, (s, o) in enumerate(zip(step.outs, outs)):
        o._entry = entries[s] = NodeEntry(node, i)


__all__ = ["BackwardPlan", "compile_plan", "output_shapes", "run_plan"]
