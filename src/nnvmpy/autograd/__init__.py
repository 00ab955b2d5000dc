"""nv.autograd: record imperative ops, then differentiate them (MXNet 1.x's mx.autograd).

    x = nv.nd.array([1.0, 2.0]); x.attach_grad()
    with nv.autograd.record():
        y = (x * x).sum()
    y.backward()          # x.grad == 2 * x

Recording puts each op on a tape of graph Nodes (tape.py); backward builds the gradient
graph with the executor's Gradient pass from each op's FGradient and pushes it through
the engine (backward.py). Recording and training flags are per thread (state.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any

from ..base import NNVMError, OpReqType
from .function import Function
from .state import is_recording, is_training, set_recording, set_training
from .tape import entry_of, mark_variable

if TYPE_CHECKING:
    from nnvmpy.ndarray.ndarray import NDArray
    from nnvmpy.symbol.symbol import Symbol

_GRAD_REQS = {"null": OpReqType.kNullOp, "write": OpReqType.kWriteTo, "add": OpReqType.kAddTo}


class _RecordingStateScope:
    """`with` scope setting the recording and/or training flag, restoring them on exit."""

    def __init__(self, is_record: bool | None, train_mode: bool | None) -> None:
        self._enter_is_record = is_record
        self._enter_train_mode = train_mode
        self._prev_is_record: bool | None = None
        self._prev_train_mode: bool | None = None

    def __enter__(self) -> None:
        if self._enter_is_record is not None:
            self._prev_is_record = set_recording(self._enter_is_record)
        if self._enter_train_mode is not None:
            self._prev_train_mode = set_training(self._enter_train_mode)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._enter_is_record is not None and self._prev_is_record is not None:
            set_recording(self._prev_is_record)
        if self._enter_train_mode is not None and self._prev_train_mode is not None:
            set_training(self._prev_train_mode)


def record(train_mode: bool = True) -> _RecordingStateScope:
    """Record ops in this scope for backward; ops run in training mode unless told not to."""
    return _RecordingStateScope(True, train_mode)


def pause(train_mode: bool = False) -> _RecordingStateScope:
    """Stop recording in this scope (inference mode unless train_mode)."""
    return _RecordingStateScope(False, train_mode)


def train_mode() -> _RecordingStateScope:
    """Training mode in this scope; recording unchanged."""
    return _RecordingStateScope(None, True)


def predict_mode() -> _RecordingStateScope:
    """Inference mode in this scope; recording unchanged."""
    return _RecordingStateScope(None, False)


def _grad_req(req: Any, what: str) -> OpReqType:
    if isinstance(req, OpReqType) and req in _GRAD_REQS.values():
        return req
    if isinstance(req, str) and req in _GRAD_REQS:
        return _GRAD_REQS[req]
    raise NNVMError(f"{what}: grad_req {req!r} is not one of 'write', 'add', 'null'")


def mark_variables(
    variables: NDArray | Sequence[NDArray],
    gradients: NDArray | Sequence[NDArray],
    grad_reqs: str | Sequence[str] = "write",
) -> None:
    """Mark arrays as variables whose gradients backward writes into `gradients`."""
    from nnvmpy.ndarray.ndarray import NDArray

    if isinstance(variables, NDArray):
        if not isinstance(gradients, NDArray):
            raise NNVMError("mark_variables: a single variable needs a single gradient NDArray")
        variables, gradients = [variables], [gradients]
    variables, gradients = list(variables), list(gradients)  # type: ignore[arg-type,unused-ignore]
    if len(variables) != len(gradients):
        raise NNVMError(
            f"mark_variables: {len(variables)} variables but {len(gradients)} gradients"
        )
    reqs = [grad_reqs] * len(variables) if isinstance(grad_reqs, str) else list(grad_reqs)
    if len(reqs) != len(variables):
        raise NNVMError(f"mark_variables: {len(variables)} variables but {len(reqs)} grad_reqs")
    parsed = [_grad_req(r, "mark_variables") for r in reqs]
    for i, (v, g) in enumerate(zip(variables, gradients)):
        if not isinstance(v, NDArray) or not isinstance(g, NDArray):
            raise NNVMError(f"mark_variables: variable {i} and its gradient must be NDArrays")
    for v, g, r in zip(variables, gradients, parsed):
        mark_variable(v, g, r)


def attach_grad(arr: NDArray, grad_req: str = "write", stype: str | None = None) -> None:
    """NDArray.attach_grad: a zero gradient buffer of the array's shape, dtype and device."""
    from nnvmpy.ndarray.ndarray import zeros

    req = _grad_req(grad_req, "attach_grad")
    if stype not in (None, "default"):
        raise NNVMError(
            f"attach_grad: stype {stype!r} is not supported; nnvmpy arrays are dense "
            f"(stype 'default')"
        )
    mark_variable(arr, zeros(arr.shape, arr.context, arr.dtype), req)


def _heads(heads: Any, head_grads: Any) -> tuple[list[Any], Any]:
    """Heads as a list, and head_grads to match (MXNet's _parse_head)."""
    from nnvmpy.ndarray.ndarray import NDArray

    if isinstance(heads, NDArray):
        heads = [heads]
        if head_grads is not None and not isinstance(head_grads, list | tuple):
            head_grads = [head_grads]
    return list(heads), head_grads


def backward(
    heads: NDArray | Sequence[NDArray],
    head_grads: NDArray | Sequence[NDArray | None] | None = None,
    retain_graph: bool = False,
    train_mode: bool = True,
) -> None:
    """Gradients of heads w.r.t. the marked variables, written into their buffers.

    head_grads default to ones; without retain_graph the graph is freed afterwards.
    """
    from nnvmpy.autograd.backprop import run_backward

    head_list, grad_list = _heads(heads, head_grads)
    run_backward(head_list, grad_list, None, retain_graph, False, train_mode)


def grad(
    heads: NDArray | Sequence[NDArray],
    variables: NDArray | Sequence[NDArray],
    head_grads: NDArray | Sequence[NDArray | None] | None = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    train_mode: bool = True,
) -> Any:
    """Gradients of heads w.r.t. `variables`, returned as a list of new arrays (the
    variables' buffers are left alone). With create_graph the gradient computation is
    recorded, so the results can be differentiated again.

    The result is a list even for a single NDArray `variables`, as MXNet 1.x returns it
    (its `return ret[0]` branch never runs), so `grad(y, x)[0]` is x's gradient."""
    from nnvmpy.autograd.backprop import run_backward
    from nnvmpy.ndarray.ndarray import NDArray

    head_list, grad_list = _heads(heads, head_grads)
    single = isinstance(variables, NDArray)
    var_list: list[Any] = [variables] if single else list(variables)  # type: ignore[arg-type,unused-ignore]
    if not var_list:
        raise NNVMError("autograd.grad: variables cannot be an empty list")
    if retain_graph is None:
        retain_graph = create_graph
    result = run_backward(
        head_list, grad_list, var_list, retain_graph, create_graph, train_mode, what="grad"
    )
    assert result is not None
    return result


def get_symbol(x: NDArray) -> Symbol:
    """The recorded graph of `x` as a Symbol (variables named var0, var1, ...)."""
    from nnvmpy.autograd.graph_symbol import tape_symbol

    return tape_symbol(x)


def __getattr__(name: str) -> Any:
    """NDArray, which MXNet's `from mxnet.autograd import *` hands out too (imported lazily:
    nnvmpy.ndarray imports this package)."""
    if name == "NDArray":
        from nnvmpy.ndarray.ndarray import NDArray

        return NDArray
    raise AttributeError(f"module 'nnvmpy.autograd' has no attribute {name!r}")


__all__ = [
    "Function",
    "NDArray",
    "backward",
    "entry_of",
    "get_symbol",
    "grad",
    "is_recording",
    "is_training",
    "mark_variables",
    "pause",
    "predict_mode",
    "record",
    "set_recording",
    "set_training",
    "train_mode",
]
