"""Backward on the tape: the Gradient pass builds the graph, a compiled plan runs it.

`run_backward` is MXNet's Imperative::Backward: the heads' recorded nodes form the
forward graph; the Gradient pass (the executor's, from each op's FGradient) adds the
backward nodes; plan.py turns those into pushes through the engine with the same kernels
and requests as a bound executor (a variable's gradient goes straight into its buffer
with kWriteTo, or kAddTo for grad_req='add', when no other node reads it). Plans are
cached by the tape's structure, so a training loop runs the pass once. Without
retain_graph the graph is freed afterwards, as MXNet's AGInfo::Clear does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..base import NNVMError, OpReqType
from ..graph import Graph, apply_passes
from ..graph.node import Node, NodeEntry
from ..imperative import invoke
from ..registry import Op
from .plan import BackwardPlan, compile_plan, run_plan
from .state import STATE
from .tape import AG, TapeInfo, entry_of, new_variable

if TYPE_CHECKING:
    from nnvmpy.ndarray.ndarray import NDArray


def run_backward(
    heads: Sequence[NDArray],
    head_grads: Sequence[NDArray | None] | None,
    variables: Sequence[NDArray] | None,
    retain_graph: bool,
    create_graph: bool,
    train_mode: bool,
    what: str = "backward",
) -> list[NDArray] | None:
    """Gradients of heads; into the marked variables' buffers (variables None), or
    returned as new arrays for `variables` (autograd.grad)."""
    ys = [_head_entry(h, i, what) for i, h in enumerate(heads)]
    order = tape_order(ys)
    _check_alive(order, what)
    xs, targets = _differentiated(order, variables, what)
    key = None if create_graph else _signature(order, ys, xs, targets)
    plan = _plans.get(key) if key is not None else None
    # a cached plan says which default (ones) head gradients no step reads: not made
    grads = _head_grads(heads, head_grads, what, plan.unread_heads if plan else frozenset())
    ograds = []
    if plan is None:
        for g in grads:
            e = entry_of(g) if create_graph else None
            ograds.append(new_variable(g, None, OpReqType.kNullOp) if e is None else e)
        graph = apply_passes(
            Graph(ys), ["Gradient"], grad_ys=ys, grad_xs=xs, grad_ys_out_grad=ograds
        )
        plan = compile_plan(order, graph.outputs, ograds, targets)
        if key is not None:
            if len(_plans) >= _MAX_PLANS:
                _plans.clear()
            _plans[key] = plan
    prev = STATE.recording, STATE.training
    STATE.recording, STATE.training = create_graph, train_mode
    try:
        results = run_plan(
            plan, order, grads, ograds, targets, train_mode, create_graph, heads[0]._ctx
        )
    finally:
        STATE.recording, STATE.training = prev
    if not retain_graph:
        _clear(order)
    if variables is not None:
        return results  # type: ignore[return-value]
    for x_entry, value, (grad, req) in zip(xs, results, targets):
        if value is not None:  # not written in place: copy (or add) it into the buffer
            if req == OpReqType.kAddTo:
                invoke(Op.get("elemwise_add"), [grad, value], {}, out=grad)
            else:
                value.copyto(grad)
        x_entry.node.info[AG].fresh_grad = True
    return None


# Plans by tape structure: a training loop records the same graph every step.
_plans: dict[Any, BackwardPlan] = {}
_MAX_PLANS = 64


def _signature(
    order: list[Node], ys: list[NodeEntry], xs: list[NodeEntry], targets: list[Any]
) -> tuple[Any, ...] | None:
    """What decides the gradient graph: each op's attrs (imperative calls reuse one attrs
    object per op, params, input shapes and device) and wiring, each variable's shape,
    dtype, device and role, and the heads. None when a node's attrs are not reused
    (autograd.Function calls, nodes recorded by create_graph): nothing to cache then."""
    pos = {id(n): p for p, n in enumerate(order)}
    role = {
        id(e.node): (k if t is None else (k, t[1])) for k, (e, t) in enumerate(zip(xs, targets))
    }
    parts: list[Any] = []
    for n in order:
        info: TapeInfo | None = n.info.get(AG)
        if n.attrs.op is None:
            if info is None:
                parts.append(None)
            else:
                parts.append((info.shapes[0], info.dtypes[0], info.ctx, role.get(id(n))))
            continue
        if info is None or not info.reusable:
            return None
        wiring: list[Any] = [n.attrs]
        for e in n.inputs:
            wiring.append(pos[id(e.node)])
            wiring.append(e.index)
        parts.append(tuple(wiring))
    parts.append(tuple((pos[id(e.node)], e.index) for e in ys))
    return tuple(parts)


def tape_order(heads: list[NodeEntry]) -> list[Node]:
    """The recorded nodes the heads depend on, inputs (and control deps) first."""
    order: list[Node] = []
    seen: set[int] = set()
    for h in heads:
        root = h.node
        if id(root) in seen:
            continue
        seen.add(id(root))
        stack = [(root, 0)]
        while stack:
            node, i = stack[-1]
            ins, deps = node.inputs, node.control_deps
            n_in, total = len(ins), len(ins) + len(deps)
            while i < total:
                nxt = ins[i].node if i < n_in else deps[i - n_in]
                i += 1
                if id(nxt) not in seen:
                    seen.add(id(nxt))
                    stack[-1] = (node, i)
                    stack.append((nxt, 0))
                    break
            else:
                stack.pop()
                order.append(node)
    return order


def _head_entry(head: Any, i: int, what: str) -> NodeEntry:
    from nnvmpy.ndarray.ndarray import NDArray

    if not isinstance(head, NDArray):
        raise NNVMError(f"autograd.{what}: head {i} must be an NDArray, got {type(head).__name__}")
    e = entry_of(head)
    if e is None:
        raise NNVMError(
            f"autograd.{what}: head {i} (shape {head.shape}) is not in a recorded graph: "
            f"compute it inside autograd.record() from arrays marked with attach_grad(); "
            f"a graph is freed by its first backward unless retain_graph=True"
        )
    return e


def _head_grads(
    heads: Sequence[NDArray], given: Any, what: str, unread: frozenset[int]
) -> list[Any]:
    """The head gradients: those given, checked, else ones; None for a default one in
    `unread` (no step of the plan reads it)."""
    from nnvmpy.ndarray.ndarray import NDArray, ones

    if given is None:
        given = [None] * len(heads)
    elif isinstance(given, NDArray):
        given = [given]
    given = list(given)
    if len(given) != len(heads):
        raise NNVMError(
            f"autograd.{what}: {len(heads)} heads but {len(given)} head_grads; give one per "
            f"head (None for ones)"
        )
    out = []
    for i, (h, g) in enumerate(zip(heads, given)):
        if g is None:
            out.append(None if i in unread else ones(h.shape, h._ctx, h.dtype))
            continue
        if not isinstance(g, NDArray):
            raise NNVMError(
                f"autograd.{what}: head_grads[{i}] must be an NDArray or None, "
                f"got {type(g).__name__}"
            )
        if g.shape != h.shape:
            raise NNVMError(
                f"autograd.{what}: head_grads[{i}] has shape {g.shape} but head {i} has "
                f"shape {h.shape}; the head gradient must have the head's shape"
            )
        if g.dtype != h.dtype or g.context != h.context:  # as the executor copies them in
            g = g.as_in_context(h.context).astype(h.dtype)
        out.append(g)
    return out


def _check_alive(forward: list[Node], what: str) -> None:
    for n in forward:
        if not n.is_variable() and AG not in n.info:
            op = n.op.name if n.op is not None else "?"
            raise NNVMError(
                f"autograd.{what}: part of this graph ({op}) was freed by an earlier "
                f"backward; pass retain_graph=True to the first backward to differentiate "
                f"a graph twice"
            )


def _differentiated(
    forward: list[Node], variables: Sequence[NDArray] | None, what: str
) -> tuple[list[NodeEntry], list[Any]]:
    """The xs of the Gradient pass, and per x its (gradient buffer, request) or None."""
    if variables is None:
        xs, targets = [], []
        for n in forward:
            info: TapeInfo | None = n.info.get(AG)
            if n.is_variable() and info is not None and info.grad_req != OpReqType.kNullOp:
                xs.append(NodeEntry(n, 0))
                targets.append((info.grad, info.grad_req))
        if not xs:
            raise NNVMError(
                f"autograd.{what}: no array in the graph of the heads requires a gradient; "
                f"call attach_grad() (or autograd.mark_variables) on the inputs before "
                f"recording"
            )
        return xs, targets
    in_graph = {id(n) for n in forward}
    xs = []
    for i, v in enumerate(variables):
        e = entry_of(v)
        if e is None or not e.node.is_variable():
            raise NNVMError(
                f"autograd.{what}: variable {i} does not require a gradient; call "
                f"attach_grad() on it before recording"
            )
        if id(e.node) not in in_graph:
            raise NNVMError(
                f"autograd.{what}: variable {i} (shape {v.shape}) is not in the graph of the "
                f"heads: no head was computed from it while recording"
            )
        xs.append(e)
    return xs, [None] * len(xs)


def _clear(forward: list[Node]) -> None:
    """Free the graph (MXNet's AGInfo::Clear): marked variables keep their buffers, the
    variables recording made for unmarked inputs go."""
    for n in forward:
        info: TapeInfo | None = n.info.get(AG)
        if info is None:
            continue
        if n.is_variable():
            if info.grad is None:
                del n.info[AG]
            continue
        del n.info[AG]
        n.inputs.clear()
        n.control_deps.clear()


__all__ = ["run_backward", "tape_order"]
