"""Eager invoke: parse params → infer shapes/types → allocate → grant resources → push.

This is the path every `nv.nd.<op>(...)` call takes. It is the hot path of imperative
code, so parsed attributes and inference results are cached per call signature.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from . import engine
from .attrs import (
    FCreateOpState,
    FInferShape,
    FInferType,
    FInplaceOption,
    FMutateInputs,
    FNumVisibleOutputs,
    FResourceRequest,
    fcompute,
    fstateful_compute,
)
from .base import Context, InferError, NNVMError, OpReqType
from .engine import FnProperty
from .infer import shape_is_known, shape_str
from .registry import NodeAttrs, Op
from .resource import OpContext, Resource, get_resource

if TYPE_CHECKING:
    from .ndarray.ndarray import NDArray

_WRITE = [OpReqType.kWriteTo]
_nd: Any = None  # nnvmpy.ndarray.ndarray, bound on first use (it imports this module lazily)


def _ndarray_module() -> Any:
    global _nd
    if _nd is None:
        from .ndarray import ndarray

        _nd = ndarray
    return _nd


def parse_attrs(op: Op, kwargs: dict[str, Any]) -> NodeAttrs:
    """op.parse_attrs with a cache keyed by the (hashable) keyword values."""
    try:
        key = (op, op.version, tuple(sorted(kwargs.items())))
        cached = _attrs_cache.get(key)
    except TypeError:  # a list or array among the values: no caching
        return op.parse_attrs(kwargs)
    if cached is None:
        cached = op.parse_attrs(kwargs)
        if len(_attrs_cache) > 4096:
            _attrs_cache.clear()
        _attrs_cache[key] = cached
    return cached


_attrs_cache: dict[Any, NodeAttrs] = {}
_infer_cache: dict[Any, tuple[list[Any], list[Any]]] = {}


def infer_outputs(
    attrs: NodeAttrs, in_shapes: list[Any], in_types: list[Any], n_out: int
) -> tuple[list[Any], list[Any]]:
    """Output shapes and dtypes for known inputs; an error names the op when unknown."""
    key = (attrs, tuple(in_shapes), tuple(in_types))
    hit = _infer_cache.get(key)
    if hit is not None:
        return hit
    op = attrs.op
    assert op is not None
    ishapes: list[Any] = list(in_shapes)
    oshapes: list[Any] = [None] * n_out
    infer_shape = op.get_attr(FInferShape)
    if infer_shape is None:
        raise NNVMError(f"{op.name}: has no FInferShape, so it cannot be called imperatively")
    infer_shape(attrs, ishapes, oshapes)
    for i, s in enumerate(oshapes):
        if not shape_is_known(s):
            raise InferError(
                f"{op.name}: cannot infer the shape of output {i} from inputs "
                f"{', '.join(map(shape_str, in_shapes))} (got {shape_str(s)})"
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
    if len(_infer_cache) > 4096:
        _infer_cache.clear()
    _infer_cache[key] = result
    return result


# -- invoke ---------------------------------------------------------------------------------


def invoke(
    op: Op,
    inputs: Sequence[NDArray],
    kwargs: dict[str, Any],
    out: NDArray | Sequence[NDArray] | None = None,
    is_train: bool = False,
) -> list[NDArray]:
    """Run `op` on NDArrays asynchronously; returns every output (visible or not)."""
    plan = _plan_for(op, inputs, kwargs, out)
    if out is None:  # the hot path
        return plan.run(inputs, is_train)
    nd = _nd or _ndarray_module()
    outputs, req, staged = _outputs(
        op, plan.attrs, inputs, out, plan.shapes, plan.dtypes, plan.ctx, nd
    )
    plan.push(inputs, outputs, req, is_train)
    for j, target in staged:
        nd.push_copy(outputs[j], target)
        outputs[j] = target
    return outputs


def _plan_for(op: Op, inputs: Sequence[NDArray], kwargs: dict[str, Any], out: Any) -> CallPlan:
    """The CallPlan of a call like this one made before (same op, params, input shapes,
    dtypes and device), or a new one; building one does every check and inference."""
    try:
        if inputs:
            ctx = inputs[0]._ctx
            where: Any = id(ctx)  # the plan keeps ctx alive: its id stays its own
        else:
            ctx = out_ctx(out) or Context.default_ctx()
            where = (ctx.device_type, ctx.device_id)
        key = (op, tuple(sorted(kwargs.items())) if kwargs else (), where, _signature(inputs))
        plan = _plans.get(key)
    except (AttributeError, TypeError):  # not NDArrays, or unhashable params
        plan = key = None
    if plan is None or plan.version != op.version or (plan.ctx is not ctx and inputs):
        plan = CallPlan(op, inputs, kwargs, out)
        if key is not None:
            if len(_plans) > 4096:
                _plans.clear()
            _plans[key] = plan
    else:
        for x in inputs:
            if x._ctx is not ctx:  # the key holds input 0's device only
                _check_same_device(op, inputs, ctx)
                break
    return plan


def _signature(inputs: Sequence[NDArray]) -> tuple[Any, ...]:
    """Input shapes then dtypes; one and two inputs spelled out (the common, hot cases)."""
    n = len(inputs)
    if n == 1:
        x = inputs[0]
        return (x.shape, x.dtype)
    if n == 2:
        a, b = inputs
        return (a.shape, b.shape, a.dtype, b.dtype)
    return (*[x.shape for x in inputs], *[x.dtype for x in inputs])


def _check_and_infer(
    op: Op, inputs: Sequence[NDArray], kwargs: dict[str, Any], out: Any
) -> tuple[NodeAttrs, Context, list[Any], list[Any]]:
    """Parsed params, the device, output shapes and dtypes; errors name the op."""
    NDArray = (_nd or _ndarray_module()).NDArray
    attrs = parse_attrs(op, kwargs)
    n_in = op.get_num_inputs(attrs)
    if len(inputs) != n_in:
        raise NNVMError(f"{op.name}: expects {n_in} inputs, got {len(inputs)}")
    for i, x in enumerate(inputs):
        if not isinstance(x, NDArray):
            raise NNVMError(f"{op.name}: input {i} must be an NDArray, got {type(x).__name__}")
    ctx = inputs[0]._ctx if inputs else (out_ctx(out) or Context.default_ctx())
    _check_same_device(op, inputs, ctx)
    shapes, dtypes = infer_outputs(
        attrs, [x.shape for x in inputs], [x.dtype for x in inputs], op.get_num_outputs(attrs)
    )
    return attrs, ctx, shapes, dtypes


def _check_same_device(op: Op, inputs: Sequence[NDArray], ctx: Context) -> None:
    for i, x in enumerate(inputs):
        if x._ctx is not ctx and x._ctx != ctx:  # `is` first: Context.__eq__ is Python code
            raise NNVMError(f"{op.name}: input {i} is on {x._ctx} but input 0 is on {ctx}")


_plans: dict[tuple[Any, ...], CallPlan] = {}


class CallPlan:
    """What invoke derives from (op, params, input shapes and dtypes, device), kept for the
    next call with the same signature: imperative code repeats a few signatures millions of
    times, so a repeat only allocates the outputs and pushes the kernel."""

    __slots__ = (
        "attrs",
        "compute",
        "ctx",
        "dtypes",
        "mutated_inputs",
        "nbytes",
        "op",
        "prop",
        "req",
        "resource_vars",
        "resources",
        "shapes",
        "stateful",
        "version",
    )

    def __init__(
        self, op: Op, inputs: Sequence[NDArray], kwargs: dict[str, Any], out: Any = None
    ) -> None:
        self.op = op
        self.version = op.version
        self.attrs, self.ctx, self.shapes, self.dtypes = _check_and_infer(op, inputs, kwargs, out)
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
        # Stateful ops (CustomOp, OperatorProperty) run user code that may block: never.
        small = all(math.prod(s) <= INLINE_MAX_SIZE for s in self.shapes)
        inline = not self.stateful and self.ctx.device_type == "cpu" and small
        self.prop = _INLINE if inline else _NORMAL

    def run(self, inputs: Sequence[NDArray], is_train: bool) -> list[NDArray]:
        """Allocate fresh outputs and push the op (kWriteTo); returns the outputs."""
        ctx = self.ctx
        new = (_nd or _ndarray_module()).new_array
        outputs = [new(s, d, n, ctx) for s, d, n in zip(self.shapes, self.dtypes, self.nbytes)]
        self.push(inputs, outputs, self.req, is_train)
        return outputs

    def push(
        self,
        inputs: Sequence[NDArray],
        outputs: Sequence[NDArray],
        req: list[OpReqType],
        is_train: bool,
    ) -> None:
        """Push the op's FCompute (or a new state's FStatefulCompute) with its engine
        dependencies: reads of the inputs, writes of outputs, resources, mutated inputs."""
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
        if self.stateful:
            compute, first = _new_state(self.op, self.attrs, self.ctx, inputs)

        def run(run_ctx: Any) -> None:
            compute(first, OpContext(is_train, run_ctx, resources), in_data, req, out_data)

        engine.get_engine().push_sync(run, self.ctx, const, mutate, 0, self.op.name, self.prop)


def _new_array(nd: Any, shape: tuple[int, ...], dtype: np.dtype, ctx: Context) -> NDArray:
    return nd.new_array(shape, dtype, math.prod(shape) * dtype.itemsize, ctx)


def out_ctx(out: Any) -> Context | None:
    if out is None:
        return None
    first = out if not isinstance(out, list | tuple) else out[0]
    ctx: Context = first._ctx
    return ctx


def _outputs(
    op: Op,
    attrs: NodeAttrs,
    inputs: Sequence[NDArray],
    out: Any,
    shapes: list[Any],
    dtypes: list[Any],
    ctx: Context,
    nd: Any,
) -> tuple[list[NDArray], list[OpReqType], list[tuple[int, NDArray]]]:
    """The out= arrays checked, their requests, and (j, out[j]) to copy from a staging array."""
    outs = list(out) if isinstance(out, list | tuple) else [out]
    n_vis = _num_visible(op, attrs, len(shapes))
    if len(outs) not in (n_vis, len(shapes)):
        raise NNVMError(f"{op.name}: out= needs {n_vis} arrays, got {len(outs)}")
    outs += [_new_array(nd, s, d, ctx) for s, d in zip(shapes[len(outs) :], dtypes[len(outs) :])]
    req = []
    staged = []
    inplace = set(op.get_attr(FInplaceOption, _no_inplace)(attrs))
    for j, (o, s, d) in enumerate(zip(outs, shapes, dtypes)):
        if o.shape != s or o.dtype != d:
            raise NNVMError(
                f"{op.name}: out[{j}] has shape {o.shape} and dtype {o.dtype}, "
                f"but the op produces {s} {d}"
            )
        if o._ctx != ctx:
            raise NNVMError(f"{op.name}: out[{j}] is on {o._ctx}, the inputs on {ctx}")
        aliased = [i for i, x in enumerate(inputs) if x._chunk is o._chunk]
        allowed = [i for i in aliased if (i, j) in inplace]
        if aliased and not allowed:
            raise NNVMError(
                f"{op.name}: out[{j}] is the same array as input {aliased[0]}, but the op "
                f"does not allow in-place (FInplaceOption {sorted(inplace)}); pass a "
                f"different out= array"
            )
        if len(allowed) < len(aliased):
            # `x += x`: out is also an input the op may read after writing out (add_n(x, y,
            # x, out=x) would), so compute into a fresh array and copy it over afterwards
            staged.append((j, o))
            outs[j] = _new_array(nd, s, d, ctx)
            req.append(OpReqType.kWriteTo)
            continue
        req.append(OpReqType.kWriteInplace if aliased else OpReqType.kWriteTo)
    return outs, req, staged


def _no_inplace(attrs: NodeAttrs) -> list[tuple[int, int]]:
    return []


def _num_visible(op: Op, attrs: NodeAttrs, n_out: int) -> int:
    fn = op.get_attr(FNumVisibleOutputs)
    return int(fn(attrs)) if fn is not None else n_out


def visible_outputs(op: Op, attrs: NodeAttrs, outputs: list[NDArray]) -> list[NDArray]:
    return outputs[: _num_visible(op, attrs, len(outputs))]


INLINE_MAX_SIZE = 4096  # output elements up to which a CPU op is pushed as FnProperty.INLINE
_NORMAL, _INLINE = FnProperty.NORMAL, FnProperty.INLINE


_op_attrs_cache: dict[tuple[Op, str], tuple[int, tuple[Any, Any, Any]]] = {}


def _op_attrs(op: Op, ctx: Context) -> tuple[Any, Any, Any]:
    """(FCompute<dev> or None, FResourceRequest, FMutateInputs), cached per op version."""
    dev = ctx.device_type if ctx.device_type != "cpu_pinned" else "cpu"
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
    dev = ctx.device_type if ctx.device_type != "cpu_pinned" else "cpu"
    state = op.get_attr(FCreateOpState)(
        attrs, ctx, [x.shape for x in inputs], [x.dtype for x in inputs]
    )
    return op.get_attr(fstateful_compute(dev)), state


def _check_stateful(op: Op, ctx: Context) -> None:
    """An op without FCompute<dev> needs FCreateOpState and FStatefulCompute<dev>."""
    dev = ctx.device_type if ctx.device_type != "cpu_pinned" else "cpu"
    if op.has_attr(FCreateOpState) and op.has_attr(fstateful_compute(dev)):
        return
    has = [
        d for d in ("cpu", "gpu") if op.has_attr(fcompute(d)) or op.has_attr(fstateful_compute(d))
    ]
    raise NNVMError(
        f"{op.name}: no FCompute<{dev}> is registered, so it cannot run on {ctx} "
        f"(it runs on: {', '.join(has) or 'no device'})"
    )
