"""Executor: a symbol bound to arrays, planned once, run many times through the engine.

Binding builds one graph holding the forward outputs and, when any argument wants a
gradient, the backward graph (Gradient pass); infers shapes and types; plans memory
(PlanMemory); and prepares one engine push per node. `forward` and `backward` then only
push those prepared functions, so a training step costs no graph work at all.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import engine
from .attrs import (
    FCreateOpState,
    FMutateInputs,
    FResourceRequest,
    TIsBackward,
    fcompute,
    fstateful_compute,
)
from .base import Context, NNVMError, OpReqType
from .graph import Graph, apply_passes
from .graph.attrs import (
    DTYPE,
    EXTERNAL_STORAGE_ID,
    SHAPE,
    STORAGE_ALLOCATED_BYTES,
    STORAGE_ID,
    STORAGE_INPLACE_INDEX,
    STORAGE_NAIVE_BYTES,
    STORAGE_SIZES,
)
from .graph.node import Node, NodeEntry, post_order
from .infer import shape_is_known, shape_str
from .ndarray.ndarray import Chunk, NDArray, empty, push_copy, zeros
from .resource import OpContext, Resource, get_resource
from .symbol.symbol import Symbol, entry_name

_REQ_NAMES = {
    "null": OpReqType.kNullOp,
    "write": OpReqType.kWriteTo,
    "add": OpReqType.kAddTo,
    "inplace": OpReqType.kWriteInplace,
}


@dataclass
class NodeRun:
    """Everything needed to push one node: its compute, arrays, requests and variables."""

    node: Node
    compute: Any
    first_arg: Any  # NodeAttrs, or the op state for stateful ops
    inputs: list[NDArray]
    outputs: list[NDArray]
    req: list[OpReqType]
    resources: list[Resource]
    const_vars: list[Any]
    mutate_vars: list[Any]
    fns: dict[bool, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """Node and op name, as errors raised inside the compute show them."""
        return f"{self.node.name} ({self.node.op.name if self.node.op else 'variable'})"

    def fn(self, is_train: bool) -> Any:
        """The engine function for this node (built once per is_train value)."""
        fn = self.fns.get(is_train)
        if fn is None:
            compute, first, req = self.compute, self.first_arg, self.req
            in_data = [a._data for a in self.inputs]
            out_data = [a._data for a in self.outputs]
            resources = self.resources

            def fn(run_ctx: Any) -> None:
                compute(first, OpContext(is_train, run_ctx, resources), in_data, req, out_data)

            self.fns[is_train] = fn
        return fn


class Executor:
    """A bound symbol: `forward`, `backward`, and the arrays they read and write."""

    def __init__(
        self,
        symbol: Symbol,
        ctx: Context | None,
        args: Any,
        args_grad: Any = None,
        grad_req: Any = "write",
        aux_states: Any = None,
    ) -> None:
        self._symbol = symbol
        self._ctx = ctx or Context.default_ctx()
        self._arg_names = symbol.list_arguments()
        self._aux_names = symbol.list_auxiliary_states()
        self._out_names = symbol.list_outputs()
        self.arg_arrays: list[NDArray] = _arrays(args, self._arg_names, "args")
        self.aux_arrays: list[NDArray] = _arrays(aux_states, self._aux_names, "aux_states")
        self._grad_req = _grad_reqs(grad_req, self._arg_names)
        if args_grad is None:
            self._grad_req = dict.fromkeys(self._arg_names, OpReqType.kNullOp)
            self.grad_arrays: list[NDArray | None] = [None] * len(self._arg_names)
        else:
            grads = _arrays(args_grad, self._arg_names, "args_grad", required=False)
            self.grad_arrays = list(grads)
            for name, g in zip(self._arg_names, grads):
                if g is None:
                    self._grad_req[name] = OpReqType.kNullOp
        for name, arr in zip(self._arg_names, self.arg_arrays):
            _check_ctx(arr, self._ctx, f"argument {name!r}")
        self._build()

    # -- building -------------------------------------------------------------------------------

    def _build(self) -> None:
        sym = self._symbol
        heads = list(sym._heads)
        arg_nodes = {n.name: n for n in post_order(heads) if n.is_variable()}
        xs = [
            NodeEntry(arg_nodes[n])
            for n in self._arg_names
            if self._grad_req[n] != OpReqType.kNullOp
        ]
        self._grad_names = [n for n in self._arg_names if self._grad_req[n] != OpReqType.kNullOp]
        # one variable per output, found by name later: unique even when an output repeats
        head_names = [f"{name}_head_grad" for name in self._out_names]
        if len(set(head_names)) < len(head_names):
            head_names = [f"{name}{i}" for i, name in enumerate(head_names)]
        head_vars = [Node.variable(name) for name in head_names]
        grad_entries: list[NodeEntry] = []
        if xs:
            grad_graph = apply_passes(
                Graph(heads),
                ["Gradient"],
                grad_ys=heads,
                grad_xs=xs,
                grad_ys_out_grad=[NodeEntry(v) for v in head_vars],
            )
            grad_entries = list(grad_graph.outputs)
        graph = Graph(heads + grad_entries)
        shapes, dtypes = self._input_hints(heads, head_vars)
        graph = apply_passes(graph, ["InferShape", "InferType"], shapes=shapes, dtypes=dtypes)
        idx = graph.indexed
        for eid, shape in enumerate(graph.attrs[SHAPE]):
            if not shape_is_known(shape):
                nid, i = idx.entry_node(eid)
                node = idx.nodes[nid]
                raise NNVMError(
                    f"bind: cannot infer the shape of output {i} of node "
                    f"'{node.name}' ({node.op.name if node.op else 'variable'}), "
                    f"got {shape_str(shape)}"
                )
        # With grad_req='add' a caller may accumulate by calling backward() repeatedly after
        # one forward(), so forward values that backward reads keep their blocks. Otherwise
        # backward may reuse them, as MXNet's plan does (ResNet-18 training: 757 MiB
        # instead of 876), and a second backward() without a forward() is refused.
        accumulating = any(r == OpReqType.kAddTo for r in self._grad_req.values())
        self._retained = _retained_entries(idx, heads) if accumulating else set()
        self._backward_ready = False
        graph = apply_passes(graph, ["PlanMemory"], keep_entry_ids=sorted(self._retained))
        self._graph = graph
        self._head_vars = head_vars
        self._allocate(graph, heads, grad_entries, head_vars)

    def _input_hints(
        self, heads: list[NodeEntry], head_vars: list[Node]
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        shapes: dict[str, Any] = {n: a.shape for n, a in zip(self._arg_names, self.arg_arrays)}
        shapes.update({n: a.shape for n, a in zip(self._aux_names, self.aux_arrays)})
        dtypes = {n: a.dtype for n, a in zip(self._arg_names, self.arg_arrays)}
        dtypes.update({n: a.dtype for n, a in zip(self._aux_names, self.aux_arrays)})
        fwd = apply_passes(Graph(heads), ["InferShape", "InferType"], shapes=shapes, dtypes=dtypes)
        fidx = fwd.indexed
        for var, eid in zip(head_vars, fidx.output_eids):
            shapes[var.name] = fwd.attrs[SHAPE][eid]
            dtypes[var.name] = fwd.attrs[DTYPE][eid]
        return shapes, dtypes

    def _allocate(
        self,
        graph: Graph,
        heads: list[NodeEntry],
        grad_entries: list[NodeEntry],
        head_vars: list[Node],
    ) -> None:
        idx = graph.indexed
        shape, dtype = graph.attrs[SHAPE], graph.attrs[DTYPE]
        sid, inplace = graph.attrs[STORAGE_ID], graph.attrs[STORAGE_INPLACE_INDEX]
        sizes = graph.attrs[STORAGE_SIZES]
        chunks = [Chunk(max(int(n), 1), self._ctx) for n in sizes]
        arrays: list[NDArray | None] = [None] * idx.num_node_entries
        by_name = dict(zip(self._arg_names, self.arg_arrays))
        by_name.update(zip(self._aux_names, self.aux_arrays))
        self.head_grad_arrays = [
            zeros(shape[idx.entry_id(h)], self._ctx, dtype[idx.entry_id(h)]) for h in heads
        ]
        by_name.update((v.name, a) for v, a in zip(head_vars, self.head_grad_arrays))
        for nid in idx.input_nodes:
            arrays[idx.entry_id(nid, 0)] = by_name[idx.nodes[nid].name]
        del head_vars  # only their names were needed
        for eid in range(idx.num_node_entries):
            if arrays[eid] is None and sid[eid] != EXTERNAL_STORAGE_ID:
                arrays[eid] = NDArray(chunks[sid[eid]], _known(shape[eid]), dtype[eid])
        req_of: dict[int, OpReqType] = {}
        self._fwd_copies: list[tuple[NDArray, NDArray, OpReqType]] = []
        self._bwd_copies: list[tuple[NDArray, NDArray, OpReqType]] = []
        claimed: set[int] = set()
        self.outputs = []
        for entry in heads:
            eid = idx.entry_id(entry)
            out = empty(shape[eid], self._ctx, dtype[eid])
            self.outputs.append(out)
            if arrays[eid] is None and eid not in claimed:
                arrays[eid] = out
                claimed.add(eid)
            else:
                self._fwd_copies.append((_need(arrays[eid]), out, OpReqType.kWriteTo))
        readers = _reader_counts(idx)
        for name, entry in zip(self._grad_names, grad_entries):
            eid = idx.entry_id(entry)
            grad = self.grad_arrays[self._arg_names.index(name)]
            assert grad is not None
            req = self._grad_req[name]
            direct = (
                arrays[eid] is None
                and eid not in claimed
                and (req == OpReqType.kWriteTo or readers[eid] == 0)
            )
            if direct:
                arrays[eid] = grad
                claimed.add(eid)
                req_of[eid] = req
            else:
                if arrays[eid] is None:
                    arrays[eid] = empty(shape[eid], self._ctx, dtype[eid])
                self._bwd_copies.append((_need(arrays[eid]), grad, req))
        # Outputs nothing reads (a max-pooling mask at inference, BatchNorm's batch
        # statistics without backward) get kNullOp, so kernels may skip them (MXNet's
        # storage_inplace_index -2).
        wanted = {idx.entry_id(e) for e in [*heads, *grad_entries]}
        unread = {e for e in range(idx.num_node_entries) if readers[e] == 0} - wanted
        fwd_ids = {id(n) for n in post_order(heads)}
        self._fwd_runs: list[NodeRun] = []
        self._bwd_runs: list[NodeRun] = []
        states: dict[int, Any] = {}
        for nid, node in enumerate(idx.nodes):
            if node.is_variable():
                continue
            ins = [_need(arrays[e]) for e in idx[nid].input_eids]
            outs_eids = list(idx.output_eids_of(nid))
            outs = [_need(arrays[e]) for e in outs_eids]
            reqs = [
                req_of[e] if e in req_of else _default_req(e in unread, inplace[e])
                for e in outs_eids
            ]
            run = self._node_run(node, ins, outs, reqs, states, shape, dtype, idx)
            (self._fwd_runs if id(node) in fwd_ids else self._bwd_runs).append(run)
        self._arrays = arrays
        self._storage_bytes = int(graph.attrs[STORAGE_ALLOCATED_BYTES])
        self._naive_bytes = int(graph.attrs[STORAGE_NAIVE_BYTES])
        self._head_grads_given = False

    def _node_run(
        self,
        node: Node,
        ins: list[NDArray],
        outs: list[NDArray],
        req: list[OpReqType],
        states: dict[int, Any],
        shape: list[Any],
        dtype: list[Any],
        idx: Any,
    ) -> NodeRun:
        op = node.op
        assert op is not None
        dev = "gpu" if self._ctx.device_type == "gpu" else "cpu"
        compute = op.get_attr(fcompute(dev))
        first: Any = node.attrs
        state_var: Any = None
        if compute is None:
            compute = op.get_attr(fstateful_compute(dev))
            create = op.get_attr(FCreateOpState)
            if compute is None:
                raise NNVMError(
                    f"bind: node '{node.name}' ({op.name}) has no FCompute<{dev}> "
                    f"or FStatefulCompute<{dev}>, so it cannot run on {self._ctx}"
                )
            if create is not None:
                first = create(
                    node.attrs, self._ctx, [a.shape for a in ins], [a.dtype for a in ins]
                )
                # the state gets its own engine variable (MXNet's op state var), so the
                # forward and backward calls on it never overlap
                state_var = engine.get_engine().new_var()
                states[id(node)] = (first, state_var)
            elif op.get_attr(TIsBackward, False) and node.control_deps:
                first, state_var = states.get(id(node.control_deps[0]), (None, None))
                if first is None:
                    raise NNVMError(
                        f"bind: backward node '{node.name}' ({op.name}) needs "
                        f"the state of its forward node, which has none"
                    )
            else:
                raise NNVMError(
                    f"bind: node '{node.name}' ({op.name}) has "
                    f"FStatefulCompute but no FCreateOpState"
                )
        resources, res_vars = [], []
        requests = op.get_attr(FResourceRequest)
        for kind in requests(node.attrs) if requests is not None else []:
            res, var = get_resource(kind, self._ctx)
            resources.append(res)
            res_vars.append(var)
        mutate = [a._chunk.var for a in outs] + res_vars
        if state_var is not None:
            mutate.append(state_var)
        mutated = op.get_attr(FMutateInputs)
        if mutated is not None:
            mutate += [ins[i]._chunk.var for i in mutated(node.attrs)]
        const = [a._chunk.var for a in ins]
        return NodeRun(node, compute, first, ins, outs, req, resources, const, mutate)

    # -- running ----------------------------------------------------------------------------------

    def forward(self, is_train: bool = False, **kwargs: Any) -> list[NDArray]:
        """Copy keyword inputs into their arguments, then push every forward node."""
        arg_dict = self.arg_dict
        for name, value in kwargs.items():
            if name not in arg_dict:
                raise NNVMError(
                    f"forward: unknown argument {name!r}; arguments are {self._arg_names}"
                )
            _assign(arg_dict[name], value, f"forward: argument {name!r}")
        self._push(self._fwd_runs, self._fwd_copies, bool(is_train))
        self._backward_ready = True
        return self.outputs

    def backward(self, out_grads: Any = None, is_train: bool = True) -> None:
        """Push the backward nodes; `out_grads` are the head gradients (ones when omitted)."""
        if not self._grad_names:
            raise NNVMError(
                "backward: no argument has a gradient; bind with args_grad and "
                "grad_req 'write' or 'add'"
            )
        if out_grads is None:
            if self._head_grads_given or not getattr(self, "_ones_set", False):
                for arr in self.head_grad_arrays:
                    arr[:] = 1
                self._ones_set, self._head_grads_given = True, False
        else:
            grads = [out_grads] if not isinstance(out_grads, list | tuple) else list(out_grads)
            if len(grads) != len(self.head_grad_arrays):
                raise NNVMError(
                    f"backward: expected {len(self.head_grad_arrays)} out_grads "
                    f"(one per output {self._out_names}), got {len(grads)}"
                )
            for name, arr, g in zip(self._out_names, self.head_grad_arrays, grads):
                _assign(arr, g, f"backward: out_grad for {name!r}")
            self._head_grads_given = True
        if not self._backward_ready:
            raise NNVMError(
                "backward: call forward(is_train=True) first; the memory plan lets backward "
                "reuse forward values once it has read them, so each backward needs a fresh "
                "forward (bind with grad_req='add' to call backward repeatedly)"
            )
        self._backward_ready = bool(self._retained)
        self._push(self._bwd_runs, self._bwd_copies, bool(is_train))

    def _push(self, runs: list[NodeRun], copies: list[Any], is_train: bool) -> None:
        eng = engine.get_engine()
        ctx = self._ctx
        for run in runs:
            eng.push_sync(run.fn(is_train), ctx, run.const_vars, run.mutate_vars, name=run.label)
        for src, dst, req in copies:
            if req == OpReqType.kAddTo:
                _push_add(src, dst)
            else:
                push_copy(src, dst)

    # -- views ------------------------------------------------------------------------------------

    @property
    def arg_dict(self) -> dict[str, NDArray]:
        return dict(zip(self._arg_names, self.arg_arrays))

    @property
    def grad_dict(self) -> dict[str, NDArray]:
        return {n: g for n, g in zip(self._arg_names, self.grad_arrays) if g is not None}

    @property
    def aux_dict(self) -> dict[str, NDArray]:
        return dict(zip(self._aux_names, self.aux_arrays))

    @property
    def output_dict(self) -> dict[str, NDArray]:
        return dict(zip(self._out_names, self.outputs))

    @property
    def storage_bytes(self) -> int:
        """Bytes of planned intermediate storage (what debug_str reports as allocated)."""
        return self._storage_bytes

    @property
    def storage_naive_bytes(self) -> int:
        """What the same intermediate entries would take with one buffer each."""
        return self._naive_bytes

    def copy_params_from(
        self,
        arg_params: Mapping[str, Any],
        aux_params: Mapping[str, Any] | None = None,
        allow_extra_params: bool = False,
    ) -> None:
        for pairs, arrays in ((arg_params, self.arg_dict), (aux_params or {}, self.aux_dict)):
            for name, value in pairs.items():
                if name in arrays:
                    _assign(arrays[name], value, f"copy_params_from: {name!r}")
                elif not allow_extra_params:
                    raise NNVMError(
                        f"copy_params_from: {name!r} is not an argument or "
                        f"auxiliary state of this executor"
                    )

    def debug_str(self) -> str:
        """The plan: every node with its inputs, outputs, storage ids, and the total bytes."""
        g = self._graph
        idx = g.indexed
        sid, inplace = g.attrs[STORAGE_ID], g.attrs[STORAGE_INPLACE_INDEX]
        lines = ["Symbol outputs:"]
        lines += [f"\toutput[{i}]={n}" for i, n in enumerate(self._out_names)]
        for nid, node in enumerate(idx.nodes):
            if node.is_variable():
                lines.append(f"Variable:{node.name}")
                continue
            lines.append("-" * 20)
            lines.append(f"Op:{node.op.name if node.op else '?'}, Name={node.name}")
            lines.append("Inputs:")
            for i, e in enumerate(idx[nid].input_eids):
                lines.append(f"\targ[{i}]={idx.entry_name(e)} storage={self._sid(e, sid[e])}")
            lines.append("Outputs:")
            for i, e in enumerate(idx.output_eids_of(nid)):
                how = f" inplace(input {inplace[e]})" if inplace[e] >= 0 else ""
                lines.append(
                    f"\tout[{i}] shape={shape_str(g.attrs[SHAPE][e])} "
                    f"dtype={g.attrs[DTYPE][e]} storage={self._sid(e, sid[e])}{how}"
                )
            if node.attrs.dict:
                lines.append("Attrs:")
                lines += [f"\t{k}={v}" for k, v in node.attrs.dict.items()]
        mb = self._storage_bytes / 2**20
        lines.append(
            f"Total {mb:.2f} MB allocated ({self._storage_bytes} bytes in "
            f"{len(g.attrs[STORAGE_SIZES])} blocks, {len(self._retained)} entries kept for "
            f"backward; one buffer per entry would take {self._naive_bytes} bytes)"
        )
        return "\n".join(lines)

    def _sid(self, eid: int, sid: int) -> str:
        if sid == EXTERNAL_STORAGE_ID:
            return "external"
        return f"{sid} kept" if eid in self._retained else str(sid)  # kept: read by backward

    def __repr__(self) -> str:
        return f"<Executor {self._out_names} on {self._ctx}>"


# -- helpers --------------------------------------------------------------------------------


def _need(arr: NDArray | None) -> NDArray:
    assert arr is not None
    return arr


def _retained_entries(idx: Any, heads: list[NodeEntry]) -> set[int]:
    """Outputs of forward op nodes that a backward node reads (graph outputs aside)."""
    fwd = {id(n) for n in post_order(heads)}
    retained: set[int] = set()
    for nid, node in enumerate(idx.nodes):
        if node.is_variable() or id(node) in fwd:
            continue
        for e in idx[nid].input_eids:
            src = idx.nodes[idx.entry_node(e)[0]]
            if id(src) in fwd and not src.is_variable():
                retained.add(e)
    return retained - set(idx.output_eids)


def _default_req(unread: bool, inplace_index: int) -> OpReqType:
    if unread:
        return OpReqType.kNullOp
    return OpReqType.kWriteInplace if inplace_index >= 0 else OpReqType.kWriteTo


def _reader_counts(idx: Any) -> list[int]:
    counts = [0] * idx.num_node_entries
    for nid in range(idx.num_nodes):
        for e in idx[nid].input_eids:
            counts[e] += 1
    return counts


def _push_add(src: NDArray, dst: NDArray) -> None:
    from .ops.elemwise_unary import _identity

    s, d, ctx = src._data, dst._data, dst._ctx

    def add(run_ctx: Any) -> None:
        _identity.launch(ctx, d, OpReqType.kAddTo, s)

    engine.get_engine().push_sync(add, ctx, [src._chunk.var], [dst._chunk.var], name="grad_add")


def _check_ctx(arr: NDArray, ctx: Context, what: str) -> None:
    if arr.context != ctx:
        raise NNVMError(f"bind: {what} is on {arr.context}, the executor on {ctx}")


def _assign(dst: NDArray, value: Any, what: str) -> None:
    shape = value.shape if hasattr(value, "shape") else np.shape(value)
    if tuple(shape) != dst.shape:
        raise NNVMError(f"{what} has shape {tuple(shape)}, expected {dst.shape}")
    dst[:] = value


def _arrays(given: Any, names: list[str], what: str, required: bool = True) -> list[Any]:
    """Arrays in `names` order from a list or a dict; errors name what is missing or extra."""
    if given is None:
        given = [] if not names else None
        if given is None:
            if required:
                raise NNVMError(f"bind: {what} is required for {names}")
            return [None] * len(names)
    if isinstance(given, Mapping):
        unknown = [k for k in given if k not in names]
        if unknown:
            raise NNVMError(f"bind: unknown {what} {unknown}; expected names from {names}")
        missing = [n for n in names if n not in given]
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


def _grad_reqs(grad_req: Any, names: list[str]) -> dict[str, OpReqType]:
    def parse(r: Any) -> OpReqType:
        if isinstance(r, str) and r not in _REQ_NAMES:
            raise NNVMError(f"bind: grad_req {r!r} is not one of 'write', 'add', 'null'")
        return OpReqType.parse(r)

    if isinstance(grad_req, str | OpReqType):
        return dict.fromkeys(names, parse(grad_req))
    if isinstance(grad_req, Mapping):
        unknown = [k for k in grad_req if k not in names]
        if unknown:
            raise NNVMError(f"bind: grad_req names unknown arguments {unknown}")
        return {n: parse(grad_req.get(n, "null")) for n in names}
    reqs = list(grad_req)
    if len(reqs) != len(names):
        raise NNVMError(f"bind: grad_req needs {len(names)} entries, got {len(reqs)}")
    return {n: parse(r) for n, r in zip(names, reqs)}


def simple_bind(
    symbol: Symbol, ctx: Context | None, grad_req: Any, type_dict: Any, shapes: Mapping[str, Any]
) -> Executor:
    """Infer every shape and dtype from the given ones, allocate zeros, and bind."""
    ctx = ctx or Context.default_ctx()
    arg_shapes, _, aux_shapes = symbol.infer_shape(**shapes)
    arg_names = symbol.list_arguments()
    if arg_shapes is None:
        partial, _, partial_aux = symbol.infer_shape_partial(**shapes)
        names = arg_names + symbol.list_auxiliary_states()
        unknown = {
            n: shape_str(s) for n, s in zip(names, partial + partial_aux) if not shape_is_known(s)
        }
        raise NNVMError(
            f"simple_bind: the given shapes {dict(shapes)} do not determine every "
            f"input's shape; still unknown: {unknown} (arguments: {arg_names})"
        )
    arg_types, aux_types = _types_with_default(symbol, dict(type_dict or {}))
    args = [zeros(s, ctx, t) for s, t in zip(arg_shapes, arg_types)]
    aux = [zeros(s, ctx, t) for s, t in zip(aux_shapes, aux_types)]
    reqs = _grad_reqs(grad_req, arg_names)
    grads = [
        zeros(s, ctx, t) if reqs[n] != OpReqType.kNullOp else None
        for n, s, t in zip(arg_names, arg_shapes, arg_types)
    ]
    return Executor(symbol, ctx, args, grads, reqs, aux)


def _types_with_default(symbol: Symbol, dtypes: dict[str, Any]) -> tuple[list[Any], list[Any]]:
    """Inferred input dtypes; an input nothing determines is float32 (MXNet's default)."""
    names = symbol.list_arguments() + symbol.list_auxiliary_states()
    while True:
        arg_types, _, aux_types = symbol.infer_type_partial(**dtypes)
        unknown = [n for n, t in zip(names, arg_types + aux_types) if t is None]
        if not unknown:
            return arg_types, aux_types
        dtypes[unknown[0]] = np.float32  # then infer again: it may determine others


def output_names(heads: Sequence[NodeEntry]) -> list[str]:
    return [entry_name(e) for e in heads]


def _known(shape: Any) -> tuple[int, ...]:
    """A fully inferred shape (bind checked every entry before planning)."""
    return tuple(int(d) for d in shape)
