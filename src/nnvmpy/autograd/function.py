"""autograd.Function: a differentiable function with a forward and backward in Python.

`Function.__call__` runs the user's forward with recording paused, then records one node
of the op `_CustomFunction` whose parsed attributes are the Function itself. Its
FGradient is an ordinary one: a `_backward_CustomFunction` node fed with the output
gradients. That backward op computes on NDArrays (attribute `FNDArrayFunction`, MXNet's
name for ops implemented by calling other ops), so backward calls the user's `backward`
in the thread running backward, and the ops it calls are pushed like any other; under
`create_graph` they are recorded too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..attrs import FGradient, TIsBackward
from ..base import NNVMError
from ..graph.node import Node, NodeEntry
from ..registry import NodeAttrs, Op, register_op
from .state import STATE, set_recording
from .tape import entry_of, record_op

if TYPE_CHECKING:
    from nnvmpy.ndarray.ndarray import NDArray

FORWARD_OP = "_CustomFunction"
BACKWARD_OP = "_backward_CustomFunction"


class _Call:
    """The parsed attributes of a recorded call: the Function and its arity."""

    __slots__ = ("function", "n_in", "n_out")

    def __init__(self, function: Function, n_in: int, n_out: int) -> None:
        self.function, self.n_in, self.n_out = function, n_in, n_out


def _gradient(node: Node, ograds: list[NodeEntry]) -> list[NodeEntry]:
    call: _Call = node.attrs.parsed
    attrs = NodeAttrs(Op.get(BACKWARD_OP), f"{node.name}_backward", None, call)
    grad = Node(attrs, list(ograds), [node])
    return [NodeEntry(grad, i) for i in range(call.n_in)]


def _backward(attrs: NodeAttrs, ograds: list[NDArray]) -> list[NDArray]:
    """FNDArrayFunction of the backward op: the user's backward on the output gradients."""
    from nnvmpy.ndarray.ndarray import NDArray

    call: _Call = attrs.parsed
    name = type(call.function).__name__
    grads = call.function.backward(*ograds)
    if isinstance(grads, NDArray):
        grads = (grads,)
    grads = list(grads) if isinstance(grads, list | tuple) else [grads]
    if len(grads) != call.n_in or not all(isinstance(g, NDArray) for g in grads):
        raise NNVMError(
            f"autograd.Function {name}: backward must return one NDArray per forward "
            f"input ({call.n_in}), got {grads!r:.200}"
        )
    return grads


def _register() -> None:
    def n_in(attrs: NodeAttrs) -> int:
        return int(attrs.parsed.n_in) if attrs.parsed is not None else 0

    def n_out(attrs: NodeAttrs) -> int:
        return int(attrs.parsed.n_out) if attrs.parsed is not None else 1

    (
        register_op(FORWARD_OP)
        .describe("A recorded call of an autograd.Function (never run: forward ran in Python).")
        .set_num_inputs(n_in)
        .set_num_outputs(n_out)
        .set_attr(FGradient, _gradient)
    )
    (
        register_op(BACKWARD_OP)
        .describe("The backward of an autograd.Function: its Python backward.")
        .set_num_inputs(n_out)
        .set_num_outputs(n_in)
        .set_attr(TIsBackward, True)
        .set_attr("FNDArrayFunction", _backward)
    )


if FORWARD_OP not in Op.list_op_names():
    _register()


class Function:
    """A function with a custom backward, as MXNet's autograd.Function.

    Subclass it and implement `forward(*inputs)` and `backward(*output_grads)` on NDArrays;
    `save_for_backward` keeps arrays for backward in `saved_tensors`. Each instance is
    called once.
    """

    def __init__(self) -> None:
        self._used = False
        self.saved_tensors: tuple[Any, ...] = ()

    def save_for_backward(self, *args: Any) -> None:
        self.saved_tensors = args

    def forward(self, *inputs: NDArray) -> Any:
        raise NotImplementedError("autograd.Function.forward must be implemented")

    def backward(self, *output_grads: NDArray) -> Any:
        raise NotImplementedError("autograd.Function.backward must be implemented")

    def __call__(self, *inputs: NDArray) -> Any:
        from nnvmpy.ndarray.ndarray import NDArray

        name = type(self).__name__
        if self._used:
            raise NNVMError(
                f"autograd.Function {name}: each instance can be called only once; "
                f"create another instance"
            )
        self._used = True
        for i, x in enumerate(inputs):
            if not isinstance(x, NDArray):
                raise NNVMError(
                    f"autograd.Function {name}: input {i} must be an NDArray, "
                    f"got {type(x).__name__}"
                )
        prev = set_recording(False)
        try:
            results = self.forward(*inputs)
        finally:
            set_recording(prev)
        if not STATE.recording:
            return results
        single = isinstance(results, NDArray)
        outputs = [results] if single else list(results)
        if not outputs or not all(isinstance(o, NDArray) for o in outputs):
            raise NNVMError(
                f"autograd.Function {name}: forward must return an NDArray or a list of "
                f"NDArrays, got {results!r:.200}"
            )
        # an output already on the tape (an input returned as is) gets its own array
        outputs = [o.detach() if entry_of(o) is not None else o for o in outputs]
        attrs = NodeAttrs(Op.get(FORWARD_OP), "", None, _Call(self, len(inputs), len(outputs)))
        record_op(
            attrs,
            outputs[0].context,
            list(inputs),
            outputs,
            [o.shape for o in outputs],
            [o.dtype for o in outputs],
            reads=((), ()),  # backward reads only the output gradients
            reusable=False,  # the attrs hold this call's Function
        )
        return outputs[0] if single else type(results)(outputs)


__all__ = ["Function"]
