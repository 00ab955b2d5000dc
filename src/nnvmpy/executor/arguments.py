"""The arrays an executor binds: checking what `bind` is given, allocating for `simple_bind`.

`bind` takes arrays as a list (in list_arguments order) or a dict (keys naming nothing
here are ignored, as in MXNet), gradient requests as a string, list or dict; errors name
what is missing or mismatched. `simple_bind`
infers every shape and dtype from the ones given and allocates zeros, reusing arrays
from `shared_exec` (for `shared_arg_names`, and its auxiliary states) and from
`shared_buffer` (by name) where they fit, as MXNet's bucketing does. The zeros of one
`simple_bind` are filled by one engine push per context (MXNet pushes one fill per array,
asynchronously), not one imperative `zeros` op each: ResNet-18's 104 parameters and
their gradients took ~4 ms of a bind that way, most of it dispatch.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from ..attrs import fcompute
from ..base import Context, NNVMError, OpReqType, current_context, kernel_device
from ..graph.attrs import SHAPE
from ..graph.collector import paused_collector
from ..graph.graph import Graph
from ..infer import shape_is_known, shape_str
from ..ndarray.ndarray import NDArray, empty, zeros
from ..ndarray.views import flat_window

if TYPE_CHECKING:
    from nnvmpy.executor.executor import Executor
    from nnvmpy.symbol.symbol import Symbol

_REQ_NAMES = ("null", "write", "add", "inplace")


def check_ctx(arr: NDArray, ctx: Context, what: str, where: str = "the executor") -> None:
    if arr.context != ctx:
        raise NNVMError(f"bind: {what} is on {arr.context}, {where} on {ctx}")


def check_spanned_ctx(
    arr: NDArray, ctx: Context, group2ctx: Mapping[str, Context], what: str
) -> None:
    """With group2ctx, an argument outside a mapped ctx_group may be bound on any context the
    executor spans (its own or one of group2ctx's), as MXNet places such a variable where
    its array is; a context outside them would need a device the executor never runs on."""
    spanned = [ctx, *(c for c in group2ctx.values() if c != ctx)]
    if arr.context not in spanned:
        raise NNVMError(
            f"bind: {what} is on {arr.context}; with group2ctx it must be on one of the "
            f"executor's contexts {[str(c) for c in spanned]}"
        )


def assign(dst: NDArray, value: Any, what: str) -> None:
    """dst[:] = value for an NDArray or NumPy array of exactly dst's shape."""
    if not isinstance(value, NDArray | np.ndarray):
        raise NNVMError(f"{what} must be an NDArray or a numpy.ndarray, got {type(value).__name__}")
    if tuple(value.shape) != dst.shape:
        raise NNVMError(f"{what} has shape {tuple(value.shape)}, expected {dst.shape}")
    dst[:] = value


def bound_arrays(given: Any, names: list[str], what: str, required: bool = True) -> list[Any]:
    """Arrays in `names` order from a list or a dict; errors name what is missing."""
    if given is None:
        if names and required:
            raise NNVMError(f"bind: {what} is required for {names}")
        return [None] * len(names)
    if isinstance(given, Mapping):  # as MXNet: keys that name nothing here are ignored
        missing = [n for n in names if given.get(n) is None]
        if missing and required:
            raise NNVMError(f"bind: {what} is missing {missing}")
        out = [given.get(n) for n in names]
    else:
        out = list(given)
        if len(out) != len(names):
            raise NNVMError(f"bind: {what} needs {len(names)} arrays for {names}, got {len(out)}")
    for n, a in zip(names, out):
        if a is not None and not isinstance(a, NDArray):
            raise NNVMError(f"bind: {what}[{n!r}] must be an NDArray, got {type(a).__name__}")
    return out


def grad_reqs(grad_req: Any, names: list[str]) -> dict[str, OpReqType]:
    """One request per argument from a string, a list, or a dict (missing names: 'null')."""

    def parse(r: Any) -> OpReqType:
        if isinstance(r, str) and r not in _REQ_NAMES:
            raise NNVMError(f"bind: grad_req {r!r} is not one of 'write', 'add', 'null'")
        return OpReqType.parse(r)

    if isinstance(grad_req, str | OpReqType):
        return dict.fromkeys(names, parse(grad_req))
    if isinstance(grad_req, Mapping):  # missing names: 'null'; others ignored (MXNet)
        return {n: parse(grad_req.get(n, "null")) for n in names}
    if not isinstance(grad_req, list | tuple):
        raise NNVMError(
            f"bind: grad_req must be a string, list or dict, got {type(grad_req).__name__}"
        )
    if len(grad_req) != len(names):
        raise NNVMError(f"bind: grad_req needs {len(names)} entries, got {len(grad_req)}")
    return {n: parse(r) for n, r in zip(names, grad_req)}


def check_group2ctx(group2ctx: Any, ctx: Context) -> None:
    """MXNet's model-parallel placement: accepted and validated. nnvmpy runs every node on
    the executor's device, so the groups may name any CPU context when that is a CPU
    (CPU contexts share host memory), and only the executor's own GPU otherwise: other
    devices would need MXNet's cross-device copy nodes."""
    if group2ctx is None:
        return
    if not isinstance(group2ctx, Mapping) or not all(
        isinstance(c, Context) for c in group2ctx.values()
    ):
        raise NNVMError(f"bind: group2ctx must map group names to Contexts, got {group2ctx!r:.80}")
    on_host = kernel_device(ctx) == "cpu"
    other = {
        g: str(c)
        for g, c in group2ctx.items()
        if (kernel_device(c) != "cpu" if on_host else c != ctx)
    }
    if other:
        raise NNVMError(
            f"bind: group2ctx maps {other} off the executor's device {ctx}; nnvmpy runs "
            "an executor on one device (any CPU contexts on the CPU)"
        )


def simple_bind(
    symbol: Symbol,
    ctx: Context | None,
    grad_req: Any,
    type_dict: Any,
    shapes: Mapping[str, Any],
    group2ctx: Any = None,
    shared_arg_names: Any = None,
    shared_exec: Executor | None = None,
    shared_buffer: dict[str, NDArray] | None = None,
) -> Executor:
    """Infer every shape and dtype from the given ones, allocate zeros, and bind."""
    with paused_collector():  # no full collections while the graph is walked and built
        return _simple_bind(
            symbol, ctx, grad_req, type_dict, shapes, group2ctx,
            shared_arg_names, shared_exec, shared_buffer,
        )  # fmt: skip


def _simple_bind(
    symbol: Symbol,
    ctx: Context | None,
    grad_req: Any,
    type_dict: Any,
    shapes: Mapping[str, Any],
    group2ctx: Any,
    shared_arg_names: Any,
    shared_exec: Executor | None,
    shared_buffer: dict[str, NDArray] | None,
) -> Executor:
    from nnvmpy.executor.executor import Executor
    from nnvmpy.symbol.infer import infer_shape_raw, input_names

    ctx = ctx or current_context()
    # one graph (one index) for every inference here; the executor starts from its results
    graph = Graph(list(symbol._heads))
    arg_names, aux_names = input_names(graph)
    # as MXNet: keywords that are not shapes of this symbol's inputs are ignored
    inputs = set(arg_names + aux_names)
    shapes = {k: v for k, v in shapes.items() if k in inputs and isinstance(v, tuple | list)}
    shaped, arg_shapes, aux_shapes = infer_shape_raw(graph, shapes, "simple_bind")
    unknown = {
        n: shape_str(s)
        for n, s in zip(arg_names + aux_names, arg_shapes + aux_shapes)
        if not shape_is_known(s)
    }
    if unknown:
        raise NNVMError(
            f"simple_bind: the given shapes {dict(shapes)} do not determine every "
            f"input's shape; still unknown: {unknown} (arguments: {arg_names})"
        )
    if type_dict is not None and not isinstance(type_dict, Mapping):
        raise NNVMError(
            f"simple_bind: type_dict must map argument names to dtypes, got {type_dict!r:.60}"
        )
    typed, arg_types, aux_types = _types_with_default(graph, dict(type_dict or {}))
    reqs = grad_reqs(grad_req, arg_names)
    shared = set(shared_arg_names or ())
    source = shared_exec
    args, grads = [], []
    groups = arg_group_contexts(symbol, group2ctx)
    fresh = _Zeros()
    try:
        for n, s, t in zip(arg_names, arg_shapes, arg_types):
            if n in shared and source is not None and n in source.arg_dict:
                args.append(_same(source.arg_dict[n], s, t, n))
                grads.append(source.grad_dict.get(n) if reqs[n] != OpReqType.kNullOp else None)
                continue
            wants_grad = reqs[n] != OpReqType.kNullOp
            actx = groups.get(n, ctx)  # an argument in a ctx_group lives on that group's context
            if n in shared:  # a shared parameter bound for the first time: its own arrays,
                args.append(fresh.new(s, actx, t))  # the buffer is for the other inputs (MXNet)
                grads.append(fresh.new(s, actx, t) if wants_grad else None)
                continue
            args.append(_from_buffer(shared_buffer, n, s, t, actx, fresh))
            grad_name = f"grad of {n}"
            grads.append(
                _from_buffer(shared_buffer, grad_name, s, t, actx, fresh) if wants_grad else None
            )
        aux = []
        for n, s, t in zip(aux_names, aux_shapes, aux_types):
            old = source.aux_dict.get(n) if source is not None else None
            fits = old is not None and old.shape == s and old.dtype == np.dtype(t)
            aux.append(old if fits else fresh.new(s, ctx, t))
    finally:  # also when a check fails: shared_buffer may hold some of them already
        fresh.fill()
    inferred = typed.copy()  # the index is shared: both results index the same entries
    inferred.attrs[SHAPE] = shaped.attrs[SHAPE]
    return Executor(symbol, ctx, args, grads, reqs, aux, group2ctx, shared_exec, _inferred=inferred)


def arg_group_contexts(symbol: Symbol, group2ctx: Any) -> dict[str, Context]:
    """{argument: context} for the arguments whose ctx_group group2ctx maps."""
    if not group2ctx:
        return {}
    attrs = symbol.attr_dict()
    out = {}
    for n in symbol.list_arguments():
        group = attrs.get(n, {}).get("__ctx_group__")
        if group is not None and group in group2ctx:
            out[n] = group2ctx[group]
    return out


def _same(arr: NDArray, shape: Any, dtype: Any, name: str) -> NDArray:
    if arr.shape != tuple(shape) or arr.dtype != np.dtype(dtype):
        raise NNVMError(
            f"simple_bind: shared argument {name!r} is {arr.shape} {arr.dtype} in "
            f"shared_exec, but this graph needs {tuple(shape)} {np.dtype(dtype)}"
        )
    return arr


class _Zeros:
    """New arrays that must read as zeros: allocated now, filled by `fill` in one engine
    push per context (on the CPU; elsewhere by the `zeros` op, one push each)."""

    def __init__(self) -> None:
        self.arrays: list[NDArray] = []

    def new(self, shape: Any, ctx: Context, dtype: Any) -> NDArray:
        if kernel_device(ctx) != "cpu":
            return zeros(shape, ctx, dtype)
        arr = empty(shape, ctx, dtype)
        if arr.size:
            self.arrays.append(arr)
        return arr

    def fill(self) -> None:
        """Push the fills (asynchronous, as every push: readers wait on the variables)."""
        from nnvmpy import engine
        from nnvmpy.registry import Op
        from nnvmpy.resource import OpContext

        if not self.arrays:
            return
        op = Op.get("_zeros")
        compute = op.get_attr(fcompute("cpu"))
        attrs = op.parse_attrs({"shape": "(1,)"}, "_zeros")
        by_ctx: dict[Context, list[NDArray]] = {}
        for arr in self.arrays:
            by_ctx.setdefault(arr.context, []).append(arr)
        write = [OpReqType.kWriteTo]
        for ctx, arrays in by_ctx.items():
            data = [a._data if a.ndim else a._data.reshape(1) for a in arrays]  # () as (1,)

            def fill(run_ctx: Any, data: list[Any] = data) -> None:
                op_ctx = OpContext(False, run_ctx, [])
                for d in data:
                    compute(attrs, op_ctx, [], write, [d])

            variables = [a._chunk.var for a in arrays]
            engine.get_engine().push_sync(fill, ctx, [], variables, name="_zeros")
        self.arrays = []


def _from_buffer(
    buffer: dict[str, NDArray] | None,
    name: str,
    shape: Any,
    dtype: Any,
    ctx: Context,
    fresh: _Zeros,
) -> NDArray:
    """A view of buffer[name] when it is large enough (same dtype and device), else a new
    array that `fresh` zero-fills, which joins the buffer."""
    shape, dtype = tuple(shape), np.dtype(dtype)
    old = buffer.get(name) if buffer is not None else None
    if (
        old is not None
        and old.dtype == dtype
        and old.context == ctx
        and old.size >= math.prod(shape)
    ):
        return old if old.shape == shape else flat_window(old, 0, shape)
    arr = fresh.new(shape, ctx, dtype)
    if buffer is not None:
        buffer[name] = arr
    return arr


def _types_with_default(graph: Graph, dtypes: dict[str, Any]) -> tuple[Graph, list[Any], list[Any]]:
    """(the graph with dtypes, argument dtypes, auxiliary dtypes); an input nothing
    determines is float32 (MXNet's default). Dtypes in MXNet's form (np.float32)."""
    from nnvmpy.symbol.infer import dtype_to_user, infer_type_raw, input_names

    arg_names, aux_names = input_names(graph)
    while True:
        typed, arg, _, aux = infer_type_raw(graph, (), dtypes, "infer_type_partial")
        arg_types, aux_types = [dtype_to_user(t) for t in arg], [dtype_to_user(t) for t in aux]
        unknown = [n for n, t in zip(arg_names + aux_names, arg_types + aux_types) if t is None]
        if not unknown:
            return typed, arg_types, aux_types
        dtypes[unknown[0]] = np.float32  # then infer again: it may determine others


__all__ = [
    "arg_group_contexts",
    "assign",
    "bound_arrays",
    "check_ctx",
    "check_group2ctx",
    "check_spanned_ctx",
    "grad_reqs",
    "simple_bind",
]
