"""The tape: every recorded op is a graph Node, as in NNVM/MXNet (AGInfo on nnvm nodes).

Recording an op builds `Node(attrs, input entries)`, the same Node the symbolic side
uses, and points each output NDArray at it (`NDArray._entry = NodeEntry(node, i)`). The
node's `info["autograd"]` holds a TapeInfo: the output shapes and dtypes, the op state of
a stateful op, and only the arrays the op's FGradient reads. Which ones those are is
found once per op and attributes by building the gradient nodes of a probe node
(`gradient_reads`): an `ElemwiseGradUseIn` op keeps its inputs, `ElemwiseGradUseOut` its
outputs, `ElemwiseGradUseNone` nothing.

A variable (`mark_variables`, `attach_grad`) is a variable Node whose TapeInfo holds the
gradient buffer and its request. An input that is not on the tape becomes a variable
with no gradient, as MXNet does. Saved arrays are detached views (same storage, no
entry), so no array refers to itself through its node: a graph nobody differentiates is
freed by reference counting with its arrays. A node whose TapeInfo is gone (cleared by a
backward without retain_graph) is off the tape.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..attrs import FGradient
from ..base import Context, NNVMError, OpReqType
from ..graph.node import Node, NodeEntry
from ..registry import NodeAttrs

if TYPE_CHECKING:
    from nnvmpy.ndarray.ndarray import NDArray

AG = "autograd"  # the key of a recorded node's TapeInfo in Node.info


class TapeInfo:
    """What backward needs of one recorded op node (MXNet's AGInfo)."""

    __slots__ = ("ctx", "dtypes", "reusable", "saved_in", "saved_out", "shapes", "state")
    # what a variable's VarInfo holds, as an op node reads it: no gradient buffer
    grad: NDArray | None = None
    grad_req = OpReqType.kNullOp
    fresh_grad = False

    def __init__(
        self,
        ctx: Context,
        shapes: Sequence[Any],
        dtypes: Sequence[Any],
        saved_in: list[NDArray | None] | None = None,
        saved_out: list[NDArray | None] | None = None,
        state: Any = None,
        reusable: bool = True,
    ) -> None:
        self.ctx = ctx
        self.shapes = shapes  # per output; shared with the CallPlan, never modified
        self.dtypes = dtypes
        self.saved_in = saved_in  # per input, what FGradient reads (None: nothing)
        self.saved_out = saved_out
        self.state = state  # (op state, its engine var) of a stateful op
        # attrs shared by every call like this one (imperative's cached attrs): backward
        # may cache its plan for graphs made only of such nodes
        self.reusable = reusable


class VarInfo(TapeInfo):
    """A variable's: its gradient buffer and request (None / kNullOp for an input that
    recording made a variable of)."""

    __slots__ = ("fresh_grad", "grad", "grad_req")

    def __init__(self, arr: NDArray, grad: NDArray | None, grad_req: OpReqType) -> None:
        super().__init__(arr._ctx, (arr.shape,), (arr.dtype,))
        self.grad = grad
        self.grad_req = grad_req
        self.fresh_grad = False  # a backward wrote grad since the flag was cleared


def info_of(node: Node) -> TapeInfo | None:
    info: TapeInfo | None = node.info.get(AG)
    return info


def entry_of(arr: Any) -> NodeEntry | None:
    """The array's entry on the tape, or None (never recorded, detached, or freed)."""
    e: NodeEntry | None = getattr(arr, "_entry", None)
    if e is not None and AG in e.node.info:
        return e
    return None


# -- variables --------------------------------------------------------------------------------


def new_variable(arr: NDArray, grad: NDArray | None, grad_req: OpReqType) -> NodeEntry:
    """A variable node standing for `arr` (with a gradient buffer when grad_req is not null)."""
    node = Node.variable("")
    node.info[AG] = VarInfo(arr, grad, grad_req)
    return NodeEntry(node, 0)


def mark_variable(arr: NDArray, grad: NDArray | None, grad_req: OpReqType) -> None:
    if grad is not None and (grad.shape != arr.shape or grad.dtype != arr.dtype):
        raise NNVMError(
            f"mark_variables: the gradient buffer has shape {grad.shape} and dtype "
            f"{grad.dtype}, the variable {arr.shape} {arr.dtype}"
        )
    arr._entry = new_variable(arr, grad, grad_req)


def input_entry(arr: NDArray) -> NodeEntry:
    """The entry of an op input; an array off the tape becomes a variable without gradient."""
    e: NodeEntry | None = getattr(arr, "_entry", None)
    if e is not None and AG in e.node.info:
        return e
    e = arr._entry = new_variable(arr, None, OpReqType.kNullOp)
    return e


# -- recording --------------------------------------------------------------------------------


def record_op(
    attrs: NodeAttrs,
    ctx: Context,
    inputs: Sequence[NDArray],
    outputs: Sequence[NDArray],
    shapes: Sequence[Any],
    dtypes: Sequence[Any],
    state: Any = None,
    reads: tuple[tuple[int, ...], tuple[int, ...]] | None = None,
    reusable: bool = True,
) -> Node | None:
    """Put one op application on the tape; its outputs point at the new node.

    As in MXNet, an op none of whose inputs is on the tape is not recorded (nothing can
    flow back through it). `reads`: the (input, output) positions to keep, when the caller
    knows them. Returns the node, or None when nothing was recorded."""
    entries: list[Any] = []
    on_tape = False
    for x in inputs:
        e = getattr(x, "_entry", None)
        if e is not None and AG in e.node.info:
            on_tape = True
        else:
            e = None
        entries.append(e)
    if not on_tape:
        return None
    for i, e in enumerate(entries):
        if e is None:  # an input off the tape: a variable without gradient, kept on it
            x = inputs[i]
            entries[i] = x._entry = new_variable(x, None, OpReqType.kNullOp)
    node = _new_node(Node)  # Node(attrs, entries) without copying the fresh list
    node.attrs, node.inputs, node.control_deps, node.info = attrs, entries, [], {}
    if reads is None:
        reads = _reads_by_attrs.get(attrs) or gradient_reads(attrs, len(inputs), len(outputs))
    reads_in, reads_out = reads
    saved_in: list[NDArray | None] | None = None
    saved_out: list[NDArray | None] | None = None
    if reads_in:
        saved_in = [None] * len(inputs)
        for i in reads_in:
            saved_in[i] = inputs[i].detach()
    if reads_out:
        saved_out = [None] * len(outputs)
        for i in reads_out:
            saved_out[i] = outputs[i].detach()
    node.info[AG] = TapeInfo(ctx, shapes, dtypes, saved_in, saved_out, state, reusable)
    if len(outputs) == 1:
        outputs[0]._entry = NodeEntry(node, 0)
    else:
        for i, o in enumerate(outputs):
            o._entry = NodeEntry(node, i)
    return node


_new_node = object.__new__


def check_writable(what: str, outputs: Sequence[NDArray]) -> None:
    """Refuse, while recording, to write into an array already on the tape (as MXNet)."""
    for o in outputs:
        if entry_of(o) is not None:
            raise NNVMError(
                f"{what}: cannot write into an array that is already in a recorded graph "
                f"(a marked variable or a recorded result) while recording: backward would "
                f"read changed values. Call backward first, write outside "
                f"autograd.record(), or write into a new array (in-place ops such as +=, "
                f"out= and x[:] = on such arrays are refused)"
            )


# -- what an FGradient reads --------------------------------------------------------------------

_reads_by_attrs: dict[NodeAttrs, tuple[tuple[int, ...], tuple[int, ...]]] = {}
_reads_by_value: dict[Any, tuple[tuple[int, ...], tuple[int, ...]]] = {}


def gradient_reads(
    attrs: NodeAttrs, n_in: int, n_out: int
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(input positions, output positions) whose values the op's gradient nodes read.

    Cached by the attrs object (imperative calls reuse one per call signature), then by
    the op and its attribute strings (backward nodes recorded under create_graph).
    """
    hit = _reads_by_attrs.get(attrs)
    if hit is not None:
        return hit
    op = attrs.op
    assert op is not None
    key = (op, op.version, n_in, n_out, tuple(sorted(attrs.dict.items())))
    hit = _reads_by_value.get(key)
    if hit is None:
        hit = _reads_by_value[key] = _probe(attrs, n_in, n_out)
        if len(_reads_by_value) > 4096:
            _reads_by_value.clear()
    if len(_reads_by_attrs) > 4096:
        _reads_by_attrs.clear()
    _reads_by_attrs[attrs] = hit
    return hit


def _probe(attrs: NodeAttrs, n_in: int, n_out: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Build the gradient nodes of a node with these attrs and see which entries they read."""
    op = attrs.op
    assert op is not None
    fgrad = op.get_attr(FGradient)
    if fgrad is None:  # backward will name the op if anyone differentiates through it
        return (), ()
    ins = [NodeEntry(Node.variable(f"in{i}")) for i in range(n_in)]
    node = Node(attrs, ins)
    ograds = [NodeEntry(Node.variable(f"ograd{i}")) for i in range(n_out)]
    try:
        igrads = list(fgrad(node, ograds))
    except Exception:  # keep everything; backward reports the FGradient's error
        return tuple(range(n_in)), tuple(range(n_out))
    position = {id(e.node): i for i, e in enumerate(ins)}
    reads_in: set[int] = set()
    reads_out: set[int] = set()

    def note(e: NodeEntry) -> None:
        if e.node is node:
            reads_out.add(e.index)
        elif id(e.node) in position:
            reads_in.add(position[id(e.node)])

    seen: set[int] = set()
    stack: list[Node] = []
    for e in igrads:
        if isinstance(e, NodeEntry):
            note(e)
            stack.append(e.node)
    while stack:
        n = stack.pop()
        if n is node or n.is_variable() or id(n) in seen:
            continue
        seen.add(id(n))
        for e in n.inputs:
            note(e)
            stack.append(e.node)
    return tuple(sorted(reads_in)), tuple(sorted(reads_out))


__all__ = [
    "AG",
    "TapeInfo",
    "check_writable",
    "entry_of",
    "gradient_reads",
    "info_of",
    "input_entry",
    "mark_variable",
    "new_variable",
    "record_op",
]
