"""nv.contrib.autograd: MXNet's first autograd interface (`mx.contrib.autograd`).

Older MXNet code differentiates imperative code with it; it is a thin layer over
`nv.autograd` and shares its tape. Where `nv.autograd` keeps recording and training
apart, this interface switches both at once: a `train_section()` records and trains,
a `test_section()` does neither.

    x = nv.nd.array([1.0, 2.0])
    grads, y = grad_and_loss(lambda x: x * x)(x)     # grads[0] == 2 * x
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any

from .. import autograd as _autograd
from ..autograd.state import set_recording, set_training
from ..base import NNVMError

if TYPE_CHECKING:
    from nnvmpy.ndarray.ndarray import NDArray


def set_is_training(is_train: bool) -> bool:
    """Turn recording and training mode on or off together; returns the previous training
    flag."""
    prev = set_training(is_train)
    set_recording(is_train)
    return prev


class TrainingStateScope:
    """`with` scope that sets recording and training to `enter_state` and restores both
    flags as they were on exit."""

    def __init__(self, enter_state: bool) -> None:
        self._enter_state = bool(enter_state)
        self._prev: tuple[bool, bool] | None = None

    def __enter__(self) -> None:
        self._prev = (set_recording(self._enter_state), set_training(self._enter_state))

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._prev is not None
        set_recording(self._prev[0])
        set_training(self._prev[1])


def train_section() -> TrainingStateScope:
    """Record ops for backward and run them in training mode inside the scope."""
    return TrainingStateScope(True)


def test_section() -> TrainingStateScope:
    """Neither record nor train inside the scope (e.g. an evaluation inside training)."""
    return TrainingStateScope(False)


def mark_variables(
    variables: NDArray | Sequence[NDArray],
    gradients: NDArray | Sequence[NDArray],
    grad_reqs: str | Sequence[str] = "write",
) -> None:
    """Mark arrays as variables; backward writes (or adds, grad_reqs='add') their gradients
    into `gradients`."""
    _autograd.mark_variables(variables, gradients, grad_reqs)


def backward(
    outputs: NDArray | Sequence[NDArray],
    out_grads: NDArray | Sequence[NDArray | None] | None = None,
    retain_graph: bool = False,
) -> None:
    """Gradients of `outputs` into the marked variables' buffers. A None in `out_grads`
    stands for ones; without retain_graph the recorded graph is freed."""
    _autograd.backward(outputs, out_grads, retain_graph=retain_graph)


def compute_gradient(outputs: NDArray | Sequence[NDArray]) -> None:
    """backward(outputs) with ones as head gradients (MXNet's older name)."""
    backward(outputs)


def grad_and_loss(
    func: Callable[..., Any], argnum: int | Sequence[int] | None = None
) -> Callable[..., tuple[list[NDArray], Any]]:
    """Wrap `func` so a call returns (gradients, outputs): the gradients of its outputs
    w.r.t. the arguments at positions `argnum` (all arguments when None), each a new
    array of the argument's shape."""
    from nnvmpy.ndarray.ndarray import NDArray, zeros

    @functools.wraps(func)
    def wrapped(*args: Any) -> tuple[list[NDArray], Any]:
        if argnum is None:
            positions = list(range(len(args)))
        else:
            positions = [argnum] if isinstance(argnum, int) else list(argnum)
        for i in positions:
            if not -len(args) <= i < len(args):
                raise NNVMError(
                    f"grad_and_loss: argnum {i} is out of range for {len(args)} arguments"
                )
        variables = [args[i] for i in positions]
        for i, v in zip(positions, variables):
            if not isinstance(v, NDArray):
                raise NNVMError(
                    f"grad_and_loss: argument {i} must be an NDArray to be differentiated, "
                    f"got {type(v).__name__}"
                )
        grads = [zeros(v.shape, v.context, v.dtype) for v in variables]
        mark_variables(variables, grads)
        with train_section():
            outputs = func(*args)
        compute_gradient([outputs] if isinstance(outputs, NDArray) else outputs)
        return grads, outputs

    return wrapped


def grad(
    func: Callable[..., Any], argnum: int | Sequence[int] | None = None
) -> Callable[..., list[NDArray]]:
    """Wrap `func` so a call returns only the gradients of grad_and_loss(func, argnum)."""
    with_loss = grad_and_loss(func, argnum)

    @functools.wraps(func)
    def wrapped(*args: Any) -> list[NDArray]:
        return with_loss(*args)[0]

    return wrapped


__all__ = [
    "TrainingStateScope",
    "backward",
    "compute_gradient",
    "grad",
    "grad_and_loss",
    "mark_variables",
    "set_is_training",
    "test_section",
    "train_section",
]
