"""Pushing one graph node on arrays whose shapes are known: autograd's backward steps.

imperative.invoke pushes a call of an op (parse, infer, allocate, push); a node of a
gradient graph arrives parsed and with its output shapes decided, so it only needs the
push itself: its compute on the device, its resources, the inputs it mutates, the op state
of a stateful op and whether it may run inline. NodePush looks those up once (plan.py
keeps one per step), push() runs per call.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from . import engine
from .attrs import FCreateOpState, fstateful_compute
from .base import Context, NNVMError, OpReqType, kernel_device
from .engine import RunContext
from .imperative import (
    _INLINE,
    _NORMAL,
    _check_stateful,
    _new_state,
    _op_attrs,
    inline_limit,
)
from .registry import NodeAttrs
from .resource import OpContext, Resource, get_resource

if TYPE_CHECKING:
    from nnvmpy.ndarray.ndarray import NDArray


def push_node(
    attrs: NodeAttrs,
    ctx: Context,
    inputs: Sequence[NDArray],
    outputs: Sequence[NDArray],
    req: list[OpReqType],
    is_train: bool,
    state: Any = None,
) -> Any:
    """Push one graph node's compute on arrays whose shapes are known (autograd runs the
    gradient graph this way); see NodePush, which callers pushing a node repeatedly keep."""
    sizes = [o.size for o in outputs]
    return NodePush(attrs, ctx, sizes).push(inputs, outputs, req, is_train, state)


class NodePush:
    """What pushing one graph node on one device needs, looked up once: its compute, its
    resources, the inputs it mutates and whether it may run inline. A backward node of a
    stateful op gets `state`, the (op state, engine var) of its forward call; a stateful
    forward op gets a new state, which push returns."""

    __slots__ = (
        "attrs",
        "compute",
        "ctx",
        "fast",
        "fast_req",
        "mutated",
        "name",
        "op_ctx",
        "prop",
        "res_vars",
        "resources",
        "stateful",
    )

    def __init__(
        self,
        attrs: NodeAttrs,
        ctx: Context,
        out_sizes: Sequence[int],
        signature: tuple[list[Any], list[Any], list[OpReqType]] | None = None,
    ) -> None:
        """`signature`: (input (shape, dtype)s, output ones, req) of every later call
        with that very req list, when the caller knows them (a compiled backward step):
        an FCompute that offers `specialize` is then called pre-checked, as imperative
        call plans call it."""
        op = attrs.op
        assert op is not None
        self.attrs, self.ctx, self.name = attrs, ctx, op.name
        compute, requests, mutated = _op_attrs(op, ctx)
        self.stateful = compute is None
        if self.stateful:
            dev = kernel_device(ctx)
            if not op.has_attr(fstateful_compute(dev)):
                _check_stateful(op, ctx)  # raises, naming the devices it runs on
            compute = op.get_attr(fstateful_compute(dev))
        self.compute = compute
        self.resources: list[Resource] = []
        self.res_vars: list[Any] = []
        for kind in requests(attrs) if requests is not None else ():
            res, var = get_resource(kind, ctx)
            self.resources.append(res)
            self.res_vars.append(var)
        self.mutated = list(mutated(attrs)) if mutated is not None else []
        cpu = kernel_device(ctx) == "cpu"
        limit = inline_limit(op)
        small = all(n <= limit for n in out_sizes)
        self.prop = _INLINE if cpu and small and not self.stateful else _NORMAL
        self.op_ctx = (
            [
                OpContext(False, RunContext(ctx), self.resources),
                OpContext(True, RunContext(ctx), self.resources),
            ]
            if cpu
            else None
        )
        self.fast: Any = None
        self.fast_req: list[OpReqType] | None = None
        specialize = getattr(compute, "specialize", None)
        if (
            signature is not None
            and specialize is not None
            and not self.stateful
            and not self.resources
            and not self.mutated
        ):
            in_sigs, out_sigs, req = signature
            self.fast = specialize(attrs, ctx, in_sigs, out_sigs, req)
            self.fast_req = req

    def push(
        self,
        inputs: Sequence[NDArray],
        outputs: Sequence[NDArray],
        req: list[OpReqType],
        is_train: bool,
        state: Any = None,
    ) -> Any:
        in_data, const, out_data, mutate = [], [], [], []
        for x in inputs:
            in_data.append(x._data)
            const.append(x._chunk.var)
        for o in outputs:
            out_data.append(o._data)
            mutate.append(o._chunk.var)
        if self.res_vars:
            mutate += self.res_vars
        for i in self.mutated:
            mutate.append(inputs[i]._chunk.var)
        compute, first, new_state = self.compute, self.attrs, None
        if self.stateful:
            op = self.attrs.op
            assert op is not None
            if state is None:
                if not op.has_attr(FCreateOpState):
                    raise NNVMError(
                        f"{op.name}: this backward op runs on the state of its forward "
                        f"call, which the recorded graph does not have"
                    )
                op_state = _new_state(op, self.attrs, self.ctx, inputs)[1]
                state = new_state = (op_state, engine.get_engine().new_var())
            first = state[0]
            mutate.append(state[1])
        op_ctx = self.op_ctx[is_train] if self.op_ctx is not None else None
        fast = self.fast
        if fast is not None and req is self.fast_req:  # the signature it was made for
            if op_ctx is not None:

                def run(run_ctx: Any) -> None:
                    fast(in_data, out_data)

            else:  # a GPU: the engine's RunContext carries the stream

                def run(run_ctx: Any) -> None:
                    fast(in_data, out_data, run_ctx)

        elif op_ctx is None:
            resources = self.resources

            def run(run_ctx: Any) -> None:
                compute(first, OpContext(is_train, run_ctx, resources), in_data, req, out_data)

        else:

            def run(run_ctx: Any) -> None:
                compute(first, op_ctx, in_data, req, out_data)

        eng = engine._engine or engine.get_engine()
        eng.push_sync(run, self.ctx, const, mutate, 0, self.name, self.prop)
        return new_state


__all__ = ["NodePush", "push_node"]
