"""Eager invoke: parse params → infer shapes/types → allocate → grant resources → push.

This is the path every `nv.nd.<op>(...)` call takes. It is the hot path of imperative
code, so parsed attributes and inference results are cached per call signature, except
for ops marked TParseEveryCall (Custom: its parser builds the user's CustomOpProp, which
MXNet builds, infers and creates anew on every call).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from . import engine
from . import threads as _threads
from .attrs import (
    FCreateOpState,
    FInferDynamicShape,
    FInferShape,
    FInferType,
    FMutateInputs,
    FResourceRequest,
    FScalarFunction,
    TParseEveryCall,
    fcompute,
    fstateful_compute,
)
from .autograd.state import STATE as _AG
from .autograd.tape import check_writable, gradient_reads, record_op
from .base import (
    Context,
    InferError,
    NNVMError,
    OpReqType,
    context_from,
    current_context,
    kernel_device,
)
from .engine import FnProperty, RunContext, fences
from .imperative_out import num_visible, out_ctx, outputs_for
from .imperative_out import visible_outputs as visible_outputs  # re-exported
from .infer import shape_is_known, shape_str
from .registry import NodeAttrs, Op
from .resource import OpContext, Resource, get_resource

if TYPE_CHECKING:
    from nnvmpy.ndarray.ndarray import NDArray

_WRITE = [OpReqType.kWriteTo]
_nd: Any = None  # nnvmpy.ndarray.ndarray, bound on first use (it imports this module lazily)


def _ndarray_module() -> Any:
    global _nd
    if _nd is None:
        from nnvmpy.ndarray import ndarray

        _nd = ndarray
    return _nd


def _frozen(value: Any) -> Any:
    """A parameter value as a cache-key part: a list (or a list inside a tuple) becomes a
    tuple; a value that stays unhashable makes the lookup raise TypeError (no caching)."""
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) if isinstance(v, (list, tuple)) else v for v in value)
    return value


def parse_attrs(op: Op, kwargs: dict[str, Any]) -> NodeAttrs:
    """op.parse_attrs with a cache keyed by the (hashable) keyword values."""
    try:
        key = (op, op.version, tuple(sorted(kwargs.items())))
        try:
            cached = _attrs_cache.get(key)
        except TypeError:  # list values (multi_sgd's lrs=[...]): keyed as tuples
            key = (op, op.version, tuple((k, _frozen(v)) for k, v in sorted(kwargs.items())))
            cached = _attrs_cache.get(key)
    except TypeError:  # an array among the values: no caching
        return op.parse_attrs(kwargs)
    if cached is None:
        cached = op.parse_attrs(kwargs)
        if op.get_attr(TParseEveryCall, False):
            return cached
        if len(_attrs_cache) > 4096:
            _attrs_cache.clear()
        _attrs_cache[key] = cached
    return cached


_attrs_cache: dict[Any, NodeAttrs] = {}
_infer_cache: dict[Any, tuple[list[Any], list[Any]]] = {}


def infer_outputs(
    attrs: NodeAttrs,
    in_shapes: list[Any],
    in_types: list[Any],
    n_out: int,
    out_shapes: list[Any] | None = None,
) -> tuple[list[Any], list[Any]]:
    """Output shapes and dtypes for known inputs; an error names the op when unknown.

    `out_shapes`: the output shapes when known already (FInferDynamicShape's, from the
    input values); then only the dtypes are inferred."""
    key = (
        attrs,
        tuple(in_shapes),
        tuple(in_types),
        None if out_shapes is None else tuple(out_shapes),
    )
    hit = _infer_cache.get(key)
    if hit is not None:
        return hit
    op = attrs.op
    assert op is not None
    ishapes: list[Any] = list(in_shapes)
    oshapes: list[Any] = [None] * n_out if out_shapes is None else list(out_shapes)
    infer_shape = op.get_attr(FInferShape)
    if infer_shape is None:
        raise NNVMError(f"{op.name}: has no FInferShape, so it cannot be called imperatively")
    if out_shapes is None:
        infer_shape(attrs, ishapes, oshapes)
    for i, s in enumerate(oshapes):
        if not shape_is_known(s):
            source = (
                f"inputs {', '.join(map(shape_str, in_shapes))}"
                if in_shapes
                else "its parameters; pass out= an array of the shape wanted"
            )
            raise InferError(
                f"{op.name}: cannot infer the shape of output {i} from {source} "
                f"(got {shape_str(s)})"
            )
    itypes: list[Any] = list(in_types)
    otypes: list[Any] = [None] * n_out
    infer_type = op.get_attr(FInferType)
    if infer_type is not None:
        infer_type(attrs, itypes, otypes)
    else:
        known = next((t for t in itypes if t is not None), np.dtype(np.float32))
        otypes = [known] * n_out
    if any(t is None for t in otypes):
        raise InferError(f"{op.name}: cannot infer the dtype of its outputs")
    result = ([tuple(s) for s in oshapes], [np.dtype(t) for t in otypes])
    if op.get_attr(TParseEveryCall, False):  # its attrs are never seen again
        return result
    if len(_infer_cache) > 4096:
        _infer_cache.clear()
    _infer_cache[key] = result
    return result


# -- invoke ---------------------------------------------------------------------------------


def invoke(
    op: Op,
    inputs: Sequence[NDArray],
    kwargs: dict[str, Any] | NodeAttrs,
    out: NDArray | Sequence[NDArray] | None = None,
    is_train: bool | None = None,
) -> list[NDArray]:
    """Run `op` on NDArrays asynchronously; returns every output (visible or not).

    `kwargs` are the op's parameters, or a graph node's parsed NodeAttrs (CachedOp-style
    runners of a bound graph's nodes; ops made only by passes, like `_FusedOp`, have no
    string form to parse).

    `is_train` defaults to this thread's autograd training flag; under autograd.record()
    the call is put on the tape.
    """
    return _invoke(op, inputs, kwargs, out, is_train)[0]


def invoke_visible(
    op: Op,
    inputs: Sequence[NDArray],
    kwargs: dict[str, Any],
    out: NDArray | Sequence[NDArray] | None = None,
) -> list[NDArray]:
    """invoke, returning only the visible outputs (FNumVisibleOutputs of this call's own
    attrs: an op that parses every call, like Custom, is not parsed a second time).

    Outside autograd.record() nobody can read the hidden outputs (a max-pooling mask,
    BatchNorm's batch statistics), so a stateless op gets kNullOp for them, as the
    executor gives outputs no node reads: kernels skip that work."""
    outputs, plan = _invoke(op, inputs, kwargs, out, None, hidden_unread=True)
    return outputs if len(outputs) == 1 else visible_outputs(op, plan.attrs, outputs)


def _invoke(
    op: Op,
    inputs: Sequence[NDArray],
    kwargs: dict[str, Any] | NodeAttrs,
    out: NDArray | Sequence[NDArray] | None = None,
    is_train: bool | None = None,
    hidden_unread: bool = False,
) -> tuple[list[NDArray], CallPlan]:
    """invoke's work; also returns the call's plan (its attrs serve invoke_visible).
    `hidden_unread`: the caller drops the hidden outputs, so they get kNullOp (recorded:
    those the op's gradient does not read)."""
    plan = None
    if out is None and not kwargs:  # the hot path: nd.relu(x), x + y
        try:
            n = len(inputs)
            if n == 1:
                x = inputs[0]
                ctx = x._ctx
                key: Any = (op, ctx.device_type, ctx.device_id, x.shape, x.dtype)
                plan = _plans_positional.get(key)
            elif n == 2:
                a, b = inputs
                ctx = a._ctx
                if b._ctx is ctx or b._ctx == ctx:
                    key = (op, ctx.device_type, ctx.device_id, a.shape, b.shape, a.dtype, b.dtype)
                    plan = _plans_positional.get(key)
        except AttributeError:  # not NDArrays: the general path words the error
            pass
        if plan is not None and plan.version != op.version:
            plan = None
    elif out is None and type(kwargs) is dict and len(kwargs) == 1 and len(inputs) == 1:
        try:  # one param, one input: x + 1.0, nd.sum(x, axis=1)
            ((name, value),) = kwargs.items()
            x = inputs[0]
            ctx = x._ctx
            key = (op, name, value, ctx.device_type, ctx.device_id, x.shape, x.dtype)
            plan = _plans_one_param.get(key)
        except (AttributeError, TypeError):  # not an NDArray, or an unhashable value
            pass
        if plan is not None and plan.version != op.version:
            plan = None
    if plan is None:
        plan = _plan_for(op, inputs, kwargs, out)
    if is_train is None:
        is_train = _AG.training
    if out is None:
        if not _AG.recording:
            if hidden_unread and plan.visible_req is not None:
                return plan.run(inputs, is_train, plan.visible_req), plan
            return plan.run(inputs, is_train), plan
        if plan.simple:  # stateless: no state to keep
            outputs, state = plan.run(inputs, is_train), None
        else:
            outputs = plan.allocate()
            req = plan.recorded_req() if hidden_unread else plan.req
            state = plan.push(inputs, outputs, req, is_train)
        record_op(plan.attrs, plan.ctx, inputs, outputs, plan.shapes, plan.dtypes, state)
        return outputs, plan
    nd = _nd or _ndarray_module()
    outputs, req, staged = outputs_for(
        op, plan.attrs, inputs, out, plan.shapes, plan.dtypes, plan.ctx, nd
    )
    if _AG.recording:  # refuse before anything runs (MXNet's rule)
        check_writable(op.name, [*outputs, *(t for _, t in staged)])
    state = plan.push(inputs, outputs, req, is_train)
    for j, target in staged:
        nd.push_copy(outputs[j], target)
        outputs[j] = target
    if _AG.recording:
        record_op(plan.attrs, plan.ctx, inputs, outputs, plan.shapes, plan.dtypes, state)
    return outputs, plan


def _plan_for(
    op: Op, inputs: Sequence[NDArray], kwargs: dict[str, Any] | NodeAttrs, out: Any
) -> CallPlan:
    """The CallPlan of a call like this one made before (same op, params, input shapes,
    dtypes and device), or a new one; building one does every check and inference."""
    try:
        # Keyed by the device, not the Context object: nd.array() makes a new Context
        # each time, and equal Contexts are the same device.
        ctx = inputs[0]._ctx if inputs else _no_input_ctx(kwargs, out)
        where = (ctx.device_type, ctx.device_id)
        params = (
            kwargs  # parsed already (a graph node's): keyed by identity
            if isinstance(kwargs, NodeAttrs)
            else tuple(sorted(kwargs.items()))
            if kwargs
            else ()
        )
        key = (op, params, where, _signature(inputs))
        try:
            plan = _plans.get(key)
        except TypeError:  # list-valued params (multi_sgd's lrs=[...]): keyed as tuples
            if isinstance(params, NodeAttrs):  # not made of params: give up on the cache
                raise
            params = tuple((k, _frozen(v)) for k, v in params)
            key = (op, params, where, _signature(inputs))
            plan = _plans.get(key)
    except (AttributeError, TypeError):  # not NDArrays, or unhashable params
        plan = key = None
    if plan is None or plan.version != op.version:
        plan = CallPlan(op, inputs, kwargs, out)
        if key is not None and plan.reusable:
            if len(_plans) > 4096:
                _plans.clear()
                _plans_positional.clear()
                _plans_one_param.clear()
            _plans[key] = plan
            if not params and out is None and 1 <= len(inputs) <= 2:
                _plans_positional[(op, *where, *_signature(inputs))] = plan
            elif (
                type(kwargs) is dict
                and isinstance(params, tuple)  # always, for a dict: tells mypy so
                and len(params) == 1
                and out is None
                and len(inputs) == 1
            ):
                ((name, value),) = params
                _plans_one_param[(op, name, value, *where, *_signature(inputs))] = plan
    else:
        for x in inputs:
            if x._ctx is not ctx:  # the key holds input 0's device only
                _check_same_device(op, inputs, ctx)
                break
    return plan


def _no_input_ctx(kwargs: dict[str, Any] | NodeAttrs, out: Any) -> Context:
    """The device of an op without inputs: out='s, else its `ctx` parameter (MXNet's
    nd.random_uniform(ctx=...), nd._zeros(ctx=...)), else the current default."""
    params = kwargs.dict if isinstance(kwargs, NodeAttrs) else kwargs
    return out_ctx(out) or context_from(params.get("ctx")) or current_context()


def _signature(inputs: Sequence[NDArray]) -> tuple[Any, ...]:
    """Input shapes then dtypes; none, one and two inputs spelled out (the common, hot
    cases: nd.zeros, nd.relu(x), x + y)."""
    n = len(inputs)
    if n == 0:
        return ()
    if n == 1:
        x = inputs[0]
        return (x.shape, x.dtype)
    if n == 2:
        a, b = inputs
        return (a.shape, b.shape, a.dtype, b.dtype)
    return (*[x.shape for x in inputs], *[x.dtype for x in inputs])


def _check_and_infer(
    op: Op, inputs: Sequence[NDArray], kwargs: dict[str, Any] | NodeAttrs, out: Any
) -> tuple[NodeAttrs, Context, list[Any], list[Any], bool]:
    """Parsed params, the device, output shapes and dtypes, and whether those came from
    the out= arrays; errors name the op."""
    NDArray = (_nd or _ndarray_module()).NDArray
    attrs = kwargs if isinstance(kwargs, NodeAttrs) else parse_attrs(op, kwargs)
    n_in = op.get_num_inputs(attrs)
    if len(inputs) != n_in:
        raise NNVMError(f"{op.name}: expects {n_in} inputs, got {len(inputs)}")
    for i, x in enumerate(inputs):
        if not isinstance(x, NDArray):
            raise NNVMError(f"{op.name}: input {i} must be an NDArray, got {type(x).__name__}")
    ctx = inputs[0]._ctx if inputs else _no_input_ctx(kwargs, out)
    _check_same_device(op, inputs, ctx)
    in_shapes, in_types = [x.shape for x in inputs], [x.dtype for x in inputs]
    n_out = op.get_num_outputs(attrs)
    dynamic = op.get_attr(FInferDynamicShape)
    if dynamic is None:
        try:
            shapes, dtypes = infer_outputs(attrs, in_shapes, in_types, n_out)
        except InferError:
            seeded = _infer_from_out(attrs, in_shapes, in_types, n_out, out)
            if seeded is None:
                raise
            return attrs, ctx, *seeded, True
        return attrs, ctx, shapes, dtypes, False
    # FInferShape checks the input shapes; the values give the output shapes
    op.get_attr(FInferShape)(attrs, list(in_shapes), [None] * n_out)
    shapes = [tuple(s) for s in dynamic(attrs, inputs)]
    dtypes = infer_outputs(attrs, in_shapes, in_types, n_out, shapes)[1]
    return attrs, ctx, shapes, dtypes, False


def _infer_from_out(
    attrs: NodeAttrs, in_shapes: list[Any], in_types: list[Any], n_out: int, out: Any
) -> tuple[list[Any], list[Any]] | None:
    """Output shapes and dtypes inferred again from the out= arrays' own, as MXNet seeds its
    imperative inference: an op whose inputs and params leave an output unknown (legacy
    `_set_value(src, out=x)`) takes x's. None when that does not help either: the caller
    then raises its first error, which does not depend on out=."""
    outs = [] if out is None else list(out) if isinstance(out, list | tuple) else [out]
    if not outs or len(outs) > n_out or not all(hasattr(o, "shape") for o in outs):
        return None
    op = attrs.op
    assert op is not None
    ishapes, oshapes = list(in_shapes), [o.shape for o in outs] + [None] * (n_out - len(outs))
    itypes, otypes = list(in_types), [o.dtype for o in outs] + [None] * (n_out - len(outs))
    try:
        op.get_attr(FInferShape)(attrs, ishapes, oshapes)
        infer_type = op.get_attr(FInferType)
        if infer_type is not None:
            infer_type(attrs, itypes, otypes)
    except InferError:
        return None
    if not all(shape_is_known(s) for s in oshapes) or any(t is None for t in otypes):
        return None
    return [tuple(s) for s in oshapes], [np.dtype(t) for t in otypes]


def _check_same_device(op: Op, inputs: Sequence[NDArray], ctx: Context) -> None:
    for i, x in enumerate(inputs):
        if x._ctx is not ctx and x._ctx != ctx:  # `is` first: Context.__eq__ is Python code
            raise NNVMError(f"{op.name}: input {i} is on {x._ctx} but input 0 is on {ctx}")


_plans: dict[tuple[Any, ...], CallPlan] = {}
# the same plans for calls with one or two inputs and no params or out= (most imperative
# calls), keyed by (op, device type, device id, shapes..., dtypes...): one dict lookup
_plans_positional: dict[tuple[Any, ...], CallPlan] = {}
# and for calls with one input, one param and no out= (x + 1.0), keyed by (op, param
# name, value, device type, device id, shape, dtype)
_plans_one_param: dict[tuple[Any, ...], CallPlan] = {}


class CallPlan:
    """What invoke derives from (op, params, input shapes and dtypes, device), kept for the
    next call with the same signature: imperative code repeats a few signatures millions of
    times, so a repeat only allocates the outputs and pushes the kernel."""

    __slots__ = (
        "attrs",
        "compute",
        "ctx",
        "dtypes",
        "dynamic",
        "fast",
        "mutated_inputs",
        "name",
        "nbytes",
        "op",
        "op_ctx",
        "prop",
        "recorded",
        "req",
        "resource_vars",
        "resources",
        "reusable",
        "shapes",
        "simple",
        "stateful",
        "version",
        "visible_req",
    )

    def __init__(
        self,
        op: Op,
        inputs: Sequence[NDArray],
        kwargs: dict[str, Any] | NodeAttrs,
        out: Any = None,
    ) -> None:
        self.op = op
        self.name = op.name
        self.version = op.version
        self.attrs, self.ctx, self.shapes, self.dtypes, from_out = _check_and_infer(
            op, inputs, kwargs, out
        )
        self.dynamic = op.has_attr(FInferDynamicShape)
        # never kept: value-dependent shapes, shapes taken from this call's out= arrays, or
        # a parser the user sees run (Custom's prop)
        self.reusable = not (self.dynamic or from_out or op.get_attr(TParseEveryCall, False))
        self.nbytes = [math.prod(s) * d.itemsize for s, d in zip(self.shapes, self.dtypes)]
        self.req = _WRITE * len(self.shapes)
        compute, requests, mutated = _op_attrs(op, self.ctx)
        self.compute = compute
        self.stateful = compute is None  # FCreateOpState: a new state per call
        if self.stateful:
            _check_stateful(op, self.ctx)  # raises if it has no kernel here
        self.resources: list[Resource] = []
        self.resource_vars: list[Any] = []
        for kind in requests(self.attrs) if requests is not None else ():
            res, var = get_resource(kind, self.ctx)
            self.resources.append(res)
            self.resource_vars.append(var)
        self.mutated_inputs = list(mutated(self.attrs)) if mutated is not None else []
        # A stateless op on a few CPU elements takes microseconds: a threaded engine may run
        # it in this thread when its inputs are ready, saving a hand-off to a worker per op.
        # So may a GPU op when GPU functions complete once queued (engine/fences.py): it
        # only launches, on this thread's stream, as PyTorch launches from the caller.
        # Stateful ops (CustomOp, OperatorProperty) run user code that may block: never.
        limit = inline_limit(op)
        device = kernel_device(self.ctx)
        small = all(math.prod(s) <= limit for s in self.shapes)
        here = small if device == "cpu" else device == "gpu" and fences.on()
        inline = not self.stateful and here
        self.prop = _INLINE if inline else _NORMAL
        # kWriteTo for the visible outputs, kNullOp for the hidden ones: the req of a call
        # whose hidden outputs are dropped (invoke_visible). None when every output is
        # visible, or for a stateful op (user code, as MXNet's, may not expect kNullOp).
        n_visible = num_visible(op, self.attrs, len(self.shapes))
        self.recorded: list[OpReqType] | None = None  # recorded_req(), made on first use
        self.visible_req = (
            None
            if self.stateful or n_visible == len(self.shapes)
            else _WRITE * n_visible + [OpReqType.kNullOp] * (len(self.shapes) - n_visible)
        )
        self.simple = (
            not self.stateful
            and len(self.shapes) == 1
            and not self.resources
            and not self.mutated_inputs
        )
        # A CPU kernel's OpContext is the same for every call (no stream, no resources
        # here), so it is made once per is_train value.
        cpu = kernel_device(self.ctx) == "cpu"
        self.op_ctx = (
            [OpContext(False, RunContext(self.ctx), []), OpContext(True, RunContext(self.ctx), [])]
            if cpu
            else [None, None]
        )
        # An FCompute may offer `specialize(attrs, ctx, in_sigs, out_sigs, req)`: itself
        # for this one signature with its per-call checks done now (element-wise kernels:
        # the compiled loop, called directly, or on a GPU the launch with its grid and
        # variant fixed). A CPU one is called (inputs, outputs), a GPU one (inputs,
        # outputs, run_ctx) for the stream. Only for the hot path below.
        specialize = getattr(compute, "specialize", None)
        self.fast = (
            specialize(
                self.attrs,
                self.ctx,
                [(x.shape, x.dtype) for x in inputs],
                list(zip(self.shapes, self.dtypes)),
                self.req,
            )
            if specialize is not None and self.simple
            else None
        )

    def run(
        self, inputs: Sequence[NDArray], is_train: bool, req: list[OpReqType] | None = None
    ) -> list[NDArray]:
        """Allocate fresh outputs and push the op (kWriteTo, or `req`); returns the outputs."""
        ctx = self.ctx
        if not self.simple:
            new = (_nd or _ndarray_module()).new_array
            outputs = [new(s, d, n, ctx) for s, d, n in zip(self.shapes, self.dtypes, self.nbytes)]
            self.push(inputs, outputs, req or self.req, is_train)
            return outputs
        # The hot path, push() inlined: a stateless single-output op without resources
        # or mutated inputs. Plain loops (a comprehension is a frame).
        out = (_nd or _ndarray_module()).new_array(
            self.shapes[0], self.dtypes[0], self.nbytes[0], ctx
        )
        in_data, const = [], []
        for x in inputs:
            in_data.append(x._data)
            const.append(x._chunk.var)
        out_data = [out._data]
        fast, compute, attrs, req = self.fast, self.compute, self.attrs, self.req
        op_ctx = self.op_ctx[is_train]
        if fast is not None and op_ctx is not None:

            def run(run_ctx: Any) -> None:
                fast(in_data, out_data)

        elif fast is not None:  # a GPU: the engine's RunContext carries the stream

            def run(run_ctx: Any) -> None:
                fast(in_data, out_data, run_ctx)

        elif op_ctx is None:  # a GPU: the engine's RunContext carries the stream

            def run(run_ctx: Any) -> None:
                compute(attrs, OpContext(is_train, run_ctx, []), in_data, req, out_data)

        else:

            def run(run_ctx: Any) -> None:
                compute(attrs, op_ctx, in_data, req, out_data)

        eng = engine._engine or engine.get_engine()
        eng.push_sync(run, ctx, const, [out._chunk.var], 0, self.name, self.prop)
        return [out]

    def recorded_req(self) -> list[OpReqType]:
        """The req of a recorded call whose hidden outputs are dropped: kNullOp for those
        the op's gradient nodes do not read (max pooling's mask: its backward finds each
        window's maximum again), kWriteTo for the rest."""
        if self.visible_req is None:
            return self.req
        if self.recorded is None:
            n_in = self.op.get_num_inputs(self.attrs)
            reads_out = gradient_reads(self.attrs, n_in, len(self.shapes))[1]
            self.recorded = [
                OpReqType.kWriteTo if r == OpReqType.kWriteTo or j in reads_out else r
                for j, r in enumerate(self.visible_req)
            ]
        return self.recorded

    def allocate(self) -> list[NDArray]:
        ctx = self.ctx
        new = (_nd or _ndarray_module()).new_array
        return [new(s, d, n, ctx) for s, d, n in zip(self.shapes, self.dtypes, self.nbytes)]

    def push(
        self,
        inputs: Sequence[NDArray],
        outputs: Sequence[NDArray],
        req: list[OpReqType],
        is_train: bool,
    ) -> Any:
        """Push the op's FCompute (or a new state's FStatefulCompute) with its engine
        dependencies: reads of the inputs, writes of outputs, resources, mutated inputs.
        Returns (op state, its engine variable) for a stateful op, else None: autograd
        keeps it for the backward node."""
        # plain loops, not comprehensions: each comprehension is a frame on this hot path
        in_data, const, out_data, mutate = [], [], [], []
        for x in inputs:
            in_data.append(x._data)
            const.append(x._chunk.var)
        for o in outputs:
            out_data.append(o._data)
            mutate.append(o._chunk.var)
        if self.resource_vars:
            mutate += self.resource_vars
        if self.mutated_inputs:
            mutate += [inputs[i]._chunk.var for i in self.mutated_inputs]
        compute, first, resources = self.compute, self.attrs, self.resources
        state = None
        if self.stateful:
            compute, first = _new_state(self.op, self.attrs, self.ctx, inputs)
            # the state's own variable orders this call before its backward (MXNet's
            # op state var): a backward that reads only inputs could otherwise overlap it
            state = (first, engine.get_engine().new_var())
            mutate.append(state[1])

        def run(run_ctx: Any) -> None:
            compute(first, OpContext(is_train, run_ctx, resources), in_data, req, out_data)

        engine.get_engine().push_sync(run, self.ctx, const, mutate, 0, self.op.name, self.prop)
        return state


INLINE_MAX_SIZE = 4096  # output elements up to which a CPU op is pushed as FnProperty.INLINE
#: the same for element-wise ops (FScalarFunction: about a nanosecond an element). A hand-off
#: to an engine worker and back costs ~50-80 us on a 2-core machine (a bare Python queue
#: ping-pong takes 46 us here) while such an op on 32k elements computes in ~6 us: x * y +
#: 1.0 ten times on 32k float32 ran 623 us through the workers and 207 inline, one op and
#: its wait 84 us against 10; at 128k 851 against 468 us. Ops with more work per output
#: element (dot, reductions) keep INLINE_MAX_SIZE: inline they block the caller, where a
#: worker overlaps them with the Python that pushes the next op. Capped by the parallel cut
#: (nnvmpy.threads.parallel_size): a loop that starts a thread team stays on the workers,
#: whose OpenMP teams are warm (a thread calling into OpenMP first gets a team of its own:
#: a dot run by the waiting main thread instead of a worker took 620 us against 449).
INLINE_ELEMENTWISE_MAX_SIZE = 1 << 18


def inline_limit(op: Op) -> int:
    """Output elements up to which a free CPU call of `op` runs in the calling thread."""
    if op.has_attr(FScalarFunction):
        return min(INLINE_ELEMENTWISE_MAX_SIZE, _threads.parallel_size() - 1)
    return INLINE_MAX_SIZE


_NORMAL, _INLINE = FnProperty.NORMAL, FnProperty.INLINE


_op_attrs_cache: dict[tuple[Op, str], tuple[int, tuple[Any, Any, Any]]] = {}


def _op_attrs(op: Op, ctx: Context) -> tuple[Any, Any, Any]:
    """(FCompute<dev> or None, FResourceRequest, FMutateInputs), cached per op version."""
    dev = kernel_device(ctx)
    hit = _op_attrs_cache.get((op, dev))
    if hit is not None and hit[0] == op.version:
        return hit[1]
    found = (op.get_attr(fcompute(dev)), op.get_attr(FResourceRequest), op.get_attr(FMutateInputs))
    _op_attrs_cache[(op, dev)] = (op.version, found)
    return found


def _new_state(
    op: Op, attrs: NodeAttrs, ctx: Context, inputs: Sequence[NDArray]
) -> tuple[Any, Any]:
    """(FStatefulCompute<dev>, a new op state from FCreateOpState) for one call."""
    dev = kernel_device(ctx)
    state = op.get_attr(FCreateOpState)(
        attrs, ctx, [x.shape for x in inputs], [x.dtype for x in inputs]
    )
    return op.get_attr(fstateful_compute(dev)), state


def _check_stateful(op: Op, ctx: Context) -> None:
    """An op without FCompute<dev> needs FCreateOpState and FStatefulCompute<dev>."""
    dev = kernel_device(ctx)
    if op.has_attr(FCreateOpState) and op.has_attr(fstateful_compute(dev)):
        return
    has = [
        d for d in ("cpu", "gpu") if op.has_attr(fcompute(d)) or op.has_attr(fstateful_compute(d))
    ]
    raise NNVMError(
        f"{op.name}: no FCompute<{dev}> is registered, so it cannot run on {ctx} "
        f"(it runs on: {', '.join(has) or 'no device'})"
    )
