"""Python custom operators (MXNet's CustomOp / CustomOpProp) on the one registry.

`@register("softmax")` records a CustomOpProp class under an op_type; the single registry
op `Custom` (and `_backward_Custom`) looks the class up from the node's `op_type`
attribute and builds a PropInfo (legacy.py) from an instance, so shapes, types, names,
aux states and backward dependencies go through the same attributes as every op.

Where the Python callbacks run, and why:

* The engine pushes the FStatefulCompute of a Custom node like any other op, holding the
  node's variables. The compute hands the user's forward/backward to a dedicated pool of
  callback threads (a push_async whose completion that thread reports), and the engine
  worker waits on that completion with `wait_for_var`, which keeps the worker running
  other ready engine work meanwhile (the engine's nested-wait support).
* The callback sees NDArrays that wrap the engine's buffers under fresh variables, so the
  nd ops and `.asnumpy()` calls it makes are ordinary pushes and waits from a non-engine
  thread: they never queue behind the custom op itself, and they need no free worker —
  with one worker, the waiting worker runs them. Before completing, the callback thread
  waits for everything pushed on those wrappers, so the outputs are written when the
  node's variables are released.
* This is MXNet's design (custom ops on their own threads, issues 2180, 3813, 14396) made
  safe: the pool grows when every thread is busy, so independent custom ops run at the
  same time (issues 8884, 14363) and a custom op calling another never starves; the pool
  is rebuilt in a forked child (issues 14522, 18090); and an exception in a callback is
  raised from the node's compute, so the engine stores it on the node's outputs and the
  next wait re-raises it naming the op_type (issue 4521: swallowed errors led to hangs).
* Running callbacks on the engine worker directly would also work (nested waits), but a
  callback that sleeps or blocks would then hold a worker, serialising independent
  custom ops on a small pool.
* The profiler sees each callback as MXNet's does (category "Custom Operator"): the call
  is a span '<op_type>::pure_python' ('_backward_<op_type>::pure_python'), and what it
  pushes is named '<op_type>::<op>'. The hand-off push itself is not recorded: the node's
  own operation ('Custom') already spans it.

Do not call `nd.waitall()` inside a callback: it would wait for this very op.
"""

from __future__ import annotations

import math
import os
import queue
import threading
from collections.abc import Callable
from typing import Any, cast

import numpy as np

from .. import engine
from ..attrs import TParseEveryCall
from ..base import Context, NNVMError, OpReqType
from ..ndarray.ndarray import NDArray
from ..profiler.recorder import RECORDER, Unrecorded
from ..registry import NodeAttrs, Op, register_op, skip_in_source_locations
from ..resource import OpContext
from .legacy import OpState, PropInfo, call_user, register_prop_ops

_REQ_STR = {
    OpReqType.kNullOp: "null",
    OpReqType.kWriteTo: "write",
    OpReqType.kWriteInplace: "inplace",
    OpReqType.kAddTo: "add",
}


class CustomOp:
    """The computation of a custom op; arrays are NDArrays, `req` entries are strings."""

    def forward(
        self,
        is_train: bool,
        req: list[str],
        in_data: list[NDArray],
        out_data: list[NDArray],
        aux: list[NDArray],
    ) -> None:
        raise NotImplementedError("CustomOp.forward must be implemented")

    def backward(
        self,
        req: list[str],
        out_grad: list[Any],
        in_data: list[Any],
        out_data: list[Any],
        in_grad: list[NDArray],
        aux: list[NDArray],
    ) -> None:
        """Arrays that declare_backward_dependency left out are None."""
        raise NotImplementedError("CustomOp.backward must be implemented")

    def assign(self, dst: NDArray, req: str | OpReqType, src: Any) -> None:
        """dst = src for 'write'/'inplace', dst += src for 'add', nothing for 'null'."""
        req = OpReqType.parse(req)
        if req in (OpReqType.kWriteTo, OpReqType.kWriteInplace):
            dst[:] = src
        elif req == OpReqType.kAddTo:
            dst[:] = dst + src


class CustomOpProp:
    """What a custom op is: its inputs, outputs, shapes, types; creates its CustomOp.

    Keyword arguments given to `nd.Custom` / `sym.Custom` reach `__init__` as strings.
    """

    def __init__(self, need_top_grad: bool = True) -> None:
        self.need_top_grad_ = need_top_grad

    def list_arguments(self) -> list[str]:
        return ["data"]

    def list_outputs(self) -> list[str]:
        return ["output"]

    def list_auxiliary_states(self) -> list[str]:
        return []

    def infer_shape(self, in_shape: list[Any]) -> tuple[list[Any], list[Any], list[Any]]:
        """(in_shapes, out_shapes, aux_shapes); unknown inputs come in as None."""
        return in_shape, [in_shape[0]] * len(self.list_outputs()), []

    def infer_type(self, in_type: list[Any]) -> tuple[list[Any], list[Any], list[Any]]:
        t = in_type[0]
        return in_type, [t] * len(self.list_outputs()), [t] * len(self.list_auxiliary_states())

    def declare_backward_dependency(
        self, out_grad: list[int], in_data: list[int], out_data: list[int]
    ) -> list[int]:
        """Backward reads out_grad only when need_top_grad (a loss layer does not)."""
        return [*(out_grad if self.need_top_grad_ else []), *in_data, *out_data]

    def create_operator(self, ctx: Context, in_shapes: list[Any], in_dtypes: list[Any]) -> CustomOp:
        raise NotImplementedError("CustomOpProp.create_operator must be implemented")


_PROPS: dict[str, type[CustomOpProp]] = {}


def register(reg_name: str) -> Callable[[type[CustomOpProp]], type[CustomOpProp]]:
    """Class decorator: make a CustomOpProp usable as `Custom(..., op_type=reg_name)`."""

    def do_register(prop_cls: type[CustomOpProp]) -> type[CustomOpProp]:
        if not (isinstance(prop_cls, type) and issubclass(prop_cls, CustomOpProp)):
            raise NNVMError(f"register({reg_name!r}) expects a CustomOpProp subclass")
        _PROPS[reg_name] = prop_cls  # a later registration under the same name replaces it
        op = _register_custom_op()  # again, in case a test scope removed it
        op.describe(op.description)  # a new version: nodes parsed before are not reused
        return prop_cls

    return do_register


def registered_op_types() -> list[str]:
    """The op_type names registered with @register (the ops `Custom` can run)."""
    return sorted(_PROPS)


# -- the callback threads ---------------------------------------------------------------------


class _CallbackPool:
    """Threads that run custom-op callbacks; a new one starts when none is idle."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Forget every thread (a forked child has none of the parent's)."""
        self._lock = threading.Lock()
        self._tasks: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._idle = 0
        self._count = 0

    def submit(self, task: Callable[[], None]) -> None:
        with self._lock:
            start = not self._idle
            if start:
                self._count += 1
            else:
                self._idle -= 1  # that idle thread (or another) takes the task
            tasks, n = self._tasks, self._count
        tasks.put(task)
        if start:
            name = f"nnvmpy-custom-{n}"
            threading.Thread(target=self._work, args=(tasks,), daemon=True, name=name).start()

    def _work(self, tasks: queue.SimpleQueue[Callable[[], None]]) -> None:
        while True:
            tasks.get()()
            with self._lock:
                if tasks is not self._tasks:
                    return  # the pool was reset
                self._idle += 1


_pool = _CallbackPool()
os.register_at_fork(after_in_child=_pool.reset)


def run_callback(
    label: str,
    what: str,
    fn: Callable[[], None],
    written: list[NDArray],
    ctx: Context,
    scope: str,
) -> None:
    """Run fn on a callback thread and wait for it (and its pushes on `written`);
    `scope` names it and its pushes in the profiler (the op_type, '_backward_<op_type>')."""
    eng = engine.get_engine()
    done = eng.new_var(f"{label} {what}")
    failure: list[BaseException] = []

    def task(on_complete: Any) -> None:
        try:
            with ctx:  # nd arrays the callback creates default to the op's device
                with RECORDER.custom_scope(scope):
                    fn()
                for arr in written:
                    arr.wait_to_read()
        except BaseException as e:
            failure.append(e)
        finally:
            on_complete()

    def start(run_ctx: Any, on_complete: Any) -> None:
        _pool.submit(lambda: task(on_complete))

    eng.push_async(start, ctx, [], [done], name=Unrecorded(f"{label} {what}"))
    eng.wait_for_var(done)
    if failure:
        e = failure[0]
        raise NNVMError(f"{label}: {what} raised {type(e).__name__}: {e}") from e


class _Borrowed:
    """An NDArray chunk over a buffer the engine already owns, under a fresh variable."""

    __slots__ = ("__weakref__", "_array", "ctx", "nbytes", "var")

    def __init__(self, array: Any, ctx: Context) -> None:
        self._array, self.ctx = array, ctx
        self.nbytes = int(array.size) * array.dtype.itemsize
        self.var = engine.get_engine().new_var()

    def view(self, shape: tuple[int, ...], dtype: np.dtype) -> Any:
        a = self._array
        if tuple(a.shape) == tuple(shape) and a.dtype == dtype:
            return a
        need = math.prod(shape) * np.dtype(dtype).itemsize
        return a.reshape(a.size).view(np.uint8)[:need].view(dtype).reshape(shape)


def _wrap(arrays: list[Any], ctx: Context) -> list[Any]:
    return [
        None if a is None else NDArray(_Borrowed(a, ctx), tuple(a.shape), np.dtype(a.dtype))  # type: ignore[arg-type]
        for a in arrays
    ]


# -- the Custom op ----------------------------------------------------------------------------


def _parse(attrs: NodeAttrs) -> PropInfo:
    kwargs = {k: v for k, v in attrs.dict.items() if not (k.startswith("__") and k.endswith("__"))}
    op_type = kwargs.pop("op_type", None)
    if op_type is None:
        raise NNVMError(f"Custom: the op_type argument is required; registered: {sorted(_PROPS)}")
    prop_cls: Any = _PROPS.get(op_type)  # a user subclass: its __init__ takes the kwargs
    if prop_cls is None:
        raise NNVMError(
            f"Custom: op_type {op_type!r} is not registered (use @nv.operator.register); "
            f"registered: {sorted(_PROPS)}"
        )
    label = f"Custom op_type={op_type!r}"
    prop = call_user(label, f"{prop_cls.__name__}(**{kwargs})", lambda: prop_cls(**kwargs))
    return _CustomInfo(prop, label, op_type)


class _CustomInfo(PropInfo):
    """A Custom node's PropInfo, with the op_type the profiler names its callbacks by."""

    def __init__(self, prop: Any, label: str, op_type: str) -> None:
        super().__init__(prop, label)
        self.op_type = op_type


def _create(attrs: NodeAttrs, ctx: Context, in_shapes: list[Any], in_types: list[Any]) -> OpState:
    info: PropInfo = attrs.parsed
    shapes = [list(s) for s in in_shapes]
    op = call_user(
        info.label, "create_operator", info.prop.create_operator, ctx, shapes, list(in_types)
    )
    if not isinstance(op, CustomOp):
        raise NNVMError(f"{info.label}: create_operator must return a CustomOp, got {op!r}")
    return OpState(op, info)


def _forward(
    state: OpState, ctx: OpContext, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    info = cast(_CustomInfo, state.info)
    dev = ctx.ctx
    in_data, aux = _wrap(inputs[: info.n_args], dev), _wrap(inputs[info.n_args :], dev)
    out_data = _wrap(outputs, dev)
    reqs = [_REQ_STR[OpReqType(r)] for r in req]

    def call() -> None:
        state.op.forward(ctx.is_train, reqs, in_data, out_data, aux)

    run_callback(info.label, "forward", call, out_data + aux, dev, info.op_type)


def _backward(
    state: OpState, ctx: OpContext, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    info = cast(_CustomInfo, state.info)
    dev = ctx.ctx
    out_grad, in_data, out_data, aux = (_wrap(x, dev) for x in info.unpack_backward(inputs))
    in_grad = _wrap(outputs, dev)
    reqs = [_REQ_STR[OpReqType(r)] for r in req]

    def call() -> None:
        state.op.backward(reqs, out_grad, in_data, out_data, in_grad, aux)

    run_callback(info.label, "backward", call, in_grad + aux, dev, f"_backward_{info.op_type}")


def _register_custom_op() -> Op:
    if "Custom" in Op.list_op_names():
        return Op.get("Custom")
    op = register_prop_ops("Custom", _parse, _create, _forward, _backward)
    op.set_attr(TParseEveryCall, True)  # a prop per imperative call, as MXNet builds one
    op.describe(
        "Apply a custom operator implemented in Python (a CustomOpProp registered with "
        "@nv.operator.register(op_type)). Extra keyword arguments reach the prop's "
        "__init__ as strings."
    )
    op.add_argument("data", "NDArray-or-Symbol[]", "Input data for the custom operator.")
    op.add_argument("op_type", "string", "Name of the registered custom operator.")
    return register_op("Custom")


_register_custom_op()
# after it: Custom's own source is this file; re-registrations from @register name the user's
skip_in_source_locations(__file__)

__all__ = ["CustomOp", "CustomOpProp", "register", "registered_op_types"]
