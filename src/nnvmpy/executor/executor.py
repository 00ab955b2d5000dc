"""Executor: a symbol bound to arrays, planned once, run many times through the engine.

Binding merges duplicate computations (EliminateCommonExpr, unless
NNVMPY_ELIMINATE_COMMON_EXPR=0), builds one graph holding the forward outputs and, when
any argument wants a gradient, the backward graph (Gradient pass, after FuseBatchNormReLU
made each BatchNorm -> [add ->] relu chain one node, unless NNVMPY_FUSE_BN_RELU=0); infers
shapes and types (from simple_bind's inference of the symbol, and each graph from the one
before it: only nodes a pass made are inferred again); without gradients, simplifies the
graph for inference (SimplifyInference and FuseEpilogue, unless
NNVMPY_SIMPLIFY_INFERENCE=0 / NNVMPY_FUSE_EPILOGUE=0; AmpBFloat16 on the CPU for nodes
marked for bfloat16 or with NNVMPY_INFER_BF16=1; docs/inference.md); fuses element-wise
groups, forward and backward apart (FusePointwise, unless NNVMPY_FUSION=0); plans memory
(PlanMemory); and prepares one engine push per node, then groups consecutive nodes into
segments pushed as one operation each (bulk.py, unless NNVMPY_EXEC_BULK_EXEC_INFERENCE /
_TRAIN=0). `forward` and `backward` then only push those prepared functions, so a training
step costs no graph work at all. An executor bound with `shared_exec` takes its blocks
from that executor's memory where they fit (MXNet's bucketing): the two must not run at
the same time.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .. import config, engine
from ..attrs import FInferDynamicShape
from ..base import Context, NNVMError, OpReqType, current_context
from ..graph import Graph, apply_passes
from ..graph.attrs import (
    DTYPE,
    EXTERNAL_STORAGE_ID,
    SHAPE,
    STORAGE_ALLOCATED_BYTES,
    STORAGE_ID,
    STORAGE_INPLACE_INDEX,
    STORAGE_NAIVE_BYTES,
)
from ..graph.collector import paused_collector
from ..graph.node import Node, NodeEntry, post_order
from ..infer import shape_is_known, shape_str
from ..ndarray.ndarray import Chunk, NDArray, empty, push_copy, zeros
from ..symbol.symbol import Symbol
from . import planned_memory
from .arguments import (
    arg_group_contexts,
    assign,
    bound_arrays,
    check_ctx,
    check_group2ctx,
    check_spanned_ctx,
    grad_reqs,
)
from .bulk import BulkPlan
from .monitor import Monitor
from .node_run import (
    NodeRun,
    default_req,
    forward_entries_read_by_backward,
    link_memo_sources,
    make_node_run,
    memo_entries,
    push_add,
    reader_counts,
    retained_entries,
)
from .shared_memory import SharedChunks


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
        group2ctx: Mapping[str, Context] | None = None,
        shared_exec: Executor | None = None,
        *,
        _simplify: bool = True,
        _inferred: Graph | None = None,  # simple_bind's inferred symbol graph (see _build)
    ) -> None:
        if not isinstance(symbol, Symbol):
            raise NNVMError(f"bind: expected a Symbol, got {type(symbol).__name__}")
        if shared_exec is not None and not isinstance(shared_exec, Executor):
            raise NNVMError(f"bind: shared_exec must be an Executor, got {shared_exec!r:.60}")
        from nnvmpy.passes.partition import partition_for_bind

        symbol = partition_for_bind(symbol, group2ctx)  # MXNET_SUBGRAPH_BACKEND, as MXNet 1.9
        self._symbol = symbol
        self._ctx = ctx or current_context()
        check_group2ctx(group2ctx, self._ctx)
        self._group2ctx = group2ctx
        self._arg_names, self._aux_names = _input_names(symbol, _inferred)
        self._out_names = symbol.list_outputs()
        self.arg_arrays: list[NDArray] = bound_arrays(args, self._arg_names, "args")
        self.aux_arrays: list[NDArray] = bound_arrays(aux_states, self._aux_names, "aux_states")
        self._grad_req = grad_reqs(grad_req, self._arg_names)
        if args_grad is None:
            self._grad_req = dict.fromkeys(self._arg_names, OpReqType.kNullOp)
            self.grad_arrays: list[NDArray | None] = [None] * len(self._arg_names)
        else:
            grads = bound_arrays(args_grad, self._arg_names, "args_grad", required=False)
            self.grad_arrays = list(grads)
            for name, g in zip(self._arg_names, grads):
                if g is None:
                    self._grad_req[name] = OpReqType.kNullOp
        placed = arg_group_contexts(symbol, group2ctx)  # arguments in a mapped ctx_group live there
        for name, arr in zip(self._arg_names, self.arg_arrays):
            if name in placed:
                check_ctx(arr, placed[name], f"argument {name!r}", "its ctx_group's context")
            elif not group2ctx:
                check_ctx(arr, self._ctx, f"argument {name!r}")
            else:  # as MXNet: outside a mapped group, an argument stays where it was bound
                check_spanned_ctx(arr, self._ctx, group2ctx, f"argument {name!r}")
        self._monitor: Monitor | None = None
        self._simplify_ok = _simplify
        self._plain: Executor | None = None  # the unsimplified graph, for is_train=True
        with paused_collector():  # no full collections while the graph is built
            self._build(shared_exec, _inferred)

    # -- building -------------------------------------------------------------------------------

    def _build(self, shared_exec: Executor | None, inferred: Graph | None) -> None:
        """inferred: the symbol's graph as simple_bind inferred it (its shapes and dtypes
        are where the forward graph's inference starts), or None."""
        # One forward Graph object goes from pass to pass, so its index is built once.
        fwd = Graph(list(self._symbol._heads))
        # the passes making the forward graph, for get_optimized_symbol: once the graph is
        # fused, keeping this one's nodes alive would only give full collections more work
        self._forward_passes: list[str] = []
        if config.ELIMINATE_COMMON_EXPR.get() != "0":
            fwd = apply_passes(fwd, ["EliminateCommonExpr"])
            self._forward_passes.append("EliminateCommonExpr")
        self._grad_names = [n for n in self._arg_names if self._grad_req[n] != OpReqType.kNullOp]
        self._with_relu: dict[str, str] = {}
        if self._grad_names and config.FUSE_BN_RELU.get() != "0":
            fwd = apply_passes(fwd, ["FuseBatchNormReLU"])
            self._with_relu = fwd.attrs["with_relu"]
            self._forward_passes.append("FuseBatchNormReLU")
        heads = list(fwd.outputs)
        arg_nodes = {n.name: n for n in fwd.indexed.nodes if n.is_variable()}
        xs = [NodeEntry(arg_nodes[n]) for n in self._grad_names]
        # one variable per output, found by name later: unique even when an output repeats
        head_names = [f"{name}_head_grad" for name in self._out_names]
        if len(set(head_names)) < len(head_names):
            head_names = [f"{name}{i}" for i, name in enumerate(head_names)]
        head_vars = [Node.variable(name) for name in head_names]
        grad_entries: list[NodeEntry] = []
        if xs:
            grad_graph = apply_passes(
                fwd,
                ["Gradient"],
                grad_ys=heads,
                grad_xs=xs,
                grad_ys_out_grad=[NodeEntry(v) for v in head_vars],
            )
            grad_entries = list(grad_graph.outputs)
        shapes, dtypes, fwd = self._input_hints(fwd, head_vars, inferred)
        if grad_entries:
            # the forward nodes' shapes and types are known now: only the backward's are
            # inferred
            graph = Graph(heads + grad_entries).seed_entry_values(fwd, (SHAPE, DTYPE))
            graph = apply_passes(graph, ["InferShape", "InferType"], shapes=shapes, dtypes=dtypes)
        else:  # the forward graph is the whole graph: its inference is the answer
            graph = Graph(heads)
            graph._indexed = fwd.indexed
            graph.attrs[SHAPE], graph.attrs[DTYPE] = fwd.attrs[SHAPE], fwd.attrs[DTYPE]
        self._simplified: dict[str, str] = {}
        self._train_safe = True
        if not xs and self._simplify_ok:
            graph, heads = self._simplify(graph, heads, shapes, dtypes)
        self._fused_groups: dict[str, list[str]] = {}
        if config.FUSION.get() != "0":
            graph, heads, grad_entries = self._fuse(graph, heads, shapes, dtypes)
        idx = graph.indexed
        for eid, shape in enumerate(graph.attrs[SHAPE]):
            if not shape_is_known(shape):
                nid, i = idx.entry_node(eid)
                node = idx.nodes[nid]
                why = (
                    ": its output shape depends on its input values, so it runs only "
                    "imperatively (nd), as in MXNet"
                    if node.op is not None and node.op.has_attr(FInferDynamicShape)
                    else ""
                )
                raise NNVMError(
                    f"bind: cannot infer the shape of output {i} of node "
                    f"'{node.name}' ({node.op.name if node.op else 'variable'}), "
                    f"got {shape_str(shape)}{why}"
                )
        # With grad_req='add' a caller may accumulate by calling backward() repeatedly after
        # one forward(), so forward values that backward reads keep their blocks. Otherwise
        # backward may reuse them, as MXNet's plan does (ResNet-18 training: 757 MiB
        # instead of 876), and a second backward() without a forward() is refused.
        accumulating = any(r == OpReqType.kAddTo for r in self._grad_req.values())
        self._retained = retained_entries(idx, heads) if accumulating else set()
        # A backward that reads no forward value may run before any forward (MXNet's
        # test_repeat does): the same then holds for every later backward.
        self._backward_alone = not forward_entries_read_by_backward(idx, heads)
        self._backward_ready = self._backward_alone
        # a memoizable node's outputs get memory nothing else writes, so that skipping its
        # push while its inputs are unchanged leaves its last results there (node_run.py)
        graph = apply_passes(
            graph,
            ["PlanMemory"],
            keep_entry_ids=sorted(self._retained),
            external_entry_ids=memo_entries(idx),
            memory_plan=config.MEMORY_PLAN.get(),
        )
        self._graph = graph
        self._head_grad_used = [idx.exist(v) for v in head_vars]
        pool = SharedChunks(shared_exec._memory(), self._ctx) if shared_exec else None
        self._allocate(graph, heads, grad_entries, head_vars, pool)
        # The runs hold what running needs; the index (an IndexedEntry per edge, an
        # IndexedNode per node: ~25 000 objects each full collection walks in a 4000-node
        # LSTM) is rebuilt, numbered alike, if debug_str asks for it.
        graph._indexed = None

    def _simplify(
        self, graph: Graph, heads: list[NodeEntry], shapes: Any, dtypes: Any
    ) -> tuple[Graph, list[NodeEntry]]:
        """SimplifyInference, then FuseEpilogue, on a typed graph without backward."""
        from nnvmpy.executor.inference import simplify

        device = "mixed" if self._group2ctx else self._ctx.device_type
        graph, self._simplified, self._train_safe = simplify(graph, shapes, dtypes, device)
        return graph, list(graph.outputs[: len(heads)])

    def _fuse(
        self, graph: Graph, heads: list[NodeEntry], shapes: Any, dtypes: Any
    ) -> tuple[Graph, list[NodeEntry], list[NodeEntry]]:
        """FusePointwise on the typed forward+backward graph (never mixing the two)."""
        n = len(heads)
        device = "gpu" if self._ctx.device_type == "gpu" else "cpu"
        fused = apply_passes(graph, ["FusePointwise"], fuse_phase_outputs=n, fuse_device=device)
        self._fused_groups = fused.attrs["fused_groups"]
        if self._fused_groups:  # shapes and types of the nodes left as they were carry over
            seeded = Graph(fused.outputs).seed_entry_values(
                graph,
                (SHAPE, DTYPE),
                fused.attrs["fuse_copied_from"],
                fused.attrs["fuse_entry_origins"],  # a fused node's outputs are members'
            )
            graph = apply_passes(seeded, ["InferShape", "InferType"], shapes=shapes, dtypes=dtypes)
        return graph, list(graph.outputs[:n]), list(graph.outputs[n:])

    def _input_hints(
        self, fwd: Graph, head_vars: list[Node], inferred: Graph | None
    ) -> tuple[dict[str, Any], dict[str, Any], Graph]:
        """Shapes and dtypes by variable name (arguments, auxiliary states, head gradients,
        the last from the forward graph's inference), and that typed forward graph."""
        shapes: dict[str, Any] = {n: a.shape for n, a in zip(self._arg_names, self.arg_arrays)}
        shapes.update({n: a.shape for n, a in zip(self._aux_names, self.aux_arrays)})
        dtypes = {n: a.dtype for n, a in zip(self._arg_names, self.arg_arrays)}
        dtypes.update({n: a.dtype for n, a in zip(self._aux_names, self.aux_arrays)})
        if inferred is not None:  # the symbol's results, for the nodes kept or copied
            fwd = fwd.copy().seed_entry_values(inferred, (SHAPE, DTYPE), _origins(fwd))
        fwd = apply_passes(fwd, ["InferShape", "InferType"], shapes=shapes, dtypes=dtypes)
        fidx = fwd.indexed
        for var, eid in zip(head_vars, fidx.output_eids):
            shapes[var.name] = fwd.attrs[SHAPE][eid]
            dtypes[var.name] = fwd.attrs[DTYPE][eid]
        return shapes, dtypes, fwd

    def _allocate(
        self,
        graph: Graph,
        heads: list[NodeEntry],
        grad_entries: list[NodeEntry],
        head_vars: list[Node],
        pool: SharedChunks | None,
    ) -> None:
        """Arrays for every entry (outputs first, then planned blocks), then the pushes."""
        idx = graph.indexed
        shape, dtype = graph.attrs[SHAPE], graph.attrs[DTYPE]
        self.outputs = []
        for i, entry in enumerate(heads):  # outputs first: they take the shared outputs' memory
            eid = idx.entry_id(entry)
            if pool is not None:
                self.outputs.append(pool.output(i, _known(shape[eid]), dtype[eid]))
            else:
                self.outputs.append(empty(shape[eid], self._ctx, dtype[eid]))
        self._planned = planned_memory.allocate(graph, self._ctx, pool)
        self._chunks = self._planned.chunks
        self.head_grad_arrays = [
            zeros(shape[idx.entry_id(h)], self._ctx, dtype[idx.entry_id(h)]) for h in heads
        ]
        by_name = dict(zip(self._arg_names, self.arg_arrays))
        by_name.update(zip(self._aux_names, self.aux_arrays))
        by_name.update((v.name, a) for v, a in zip(head_vars, self.head_grad_arrays))
        arrays: list[NDArray | None] = [None] * idx.num_node_entries
        for nid in idx.input_nodes:
            arrays[idx.entry_id(nid, 0)] = by_name[idx.nodes[nid].name]
        sid = graph.attrs[STORAGE_ID]
        for eid in range(idx.num_node_entries):
            if arrays[eid] is None and sid[eid] != EXTERNAL_STORAGE_ID:
                arrays[eid] = NDArray(self._chunks[sid[eid]], _known(shape[eid]), dtype[eid])
        req_of = self._claim_results(graph, heads, grad_entries, arrays)
        for eid in range(idx.num_node_entries):  # memoized outputs (external, not results)
            if arrays[eid] is None:
                arrays[eid] = empty(_known(shape[eid]), self._ctx, dtype[eid])
        self._prepare_runs(graph, heads, grad_entries, arrays, req_of)
        self._plan_bulk(pool)
        self._arrays = arrays
        self._storage_bytes = int(graph.attrs[STORAGE_ALLOCATED_BYTES])
        self._naive_bytes = int(graph.attrs[STORAGE_NAIVE_BYTES])
        self._head_grads_given = False
        self._ones_set = False

    def _claim_results(
        self,
        graph: Graph,
        heads: list[NodeEntry],
        grad_entries: list[NodeEntry],
        arrays: list[NDArray | None],
    ) -> dict[int, OpReqType]:
        """Outputs and gradients written in place where the plan allows, else copied after
        the run; returns the write request of each entry written straight into a result."""
        idx = graph.indexed
        shape, dtype = graph.attrs[SHAPE], graph.attrs[DTYPE]
        req_of: dict[int, OpReqType] = {}
        self._fwd_copies: list[tuple[NDArray, NDArray, OpReqType]] = []
        self._bwd_copies: list[tuple[NDArray, NDArray, OpReqType]] = []
        claimed: set[int] = set()
        for entry, out in zip(heads, self.outputs):
            eid = idx.entry_id(entry)
            if arrays[eid] is None and eid not in claimed:
                arrays[eid] = out
                claimed.add(eid)
            else:
                self._fwd_copies.append((_need(arrays[eid]), out, OpReqType.kWriteTo))
        readers = reader_counts(idx)
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
        return req_of

    def _prepare_runs(
        self,
        graph: Graph,
        heads: list[NodeEntry],
        grad_entries: list[NodeEntry],
        arrays: list[NDArray | None],
        req_of: dict[int, OpReqType],
    ) -> None:
        idx = graph.indexed
        inplace = graph.attrs[STORAGE_INPLACE_INDEX]
        # Outputs nothing reads (a max-pooling mask at inference, BatchNorm's batch
        # statistics without backward) get kNullOp, so kernels may skip them (MXNet's
        # storage_inplace_index -2).
        readers = reader_counts(idx)
        wanted = {idx.entry_id(e) for e in [*heads, *grad_entries]}
        unread = {e for e in range(idx.num_node_entries) if readers[e] == 0} - wanted
        fwd_ids = {id(n) for n in post_order(heads)}
        self._fwd_runs: list[NodeRun] = []
        self._bwd_runs: list[NodeRun] = []
        run_of: dict[int, NodeRun] = {}
        states: dict[int, Any] = {}
        for nid, node in enumerate(idx.nodes):
            if node.is_variable():
                continue
            ins = [_need(arrays[e]) for e in idx[nid].input_eids]
            outs_eids = list(idx.output_eids_of(nid))
            outs = [_need(arrays[e]) for e in outs_eids]
            reqs = [
                req_of[e] if e in req_of else default_req(e in unread, inplace[e])
                for e in outs_eids
            ]
            run = run_of[nid] = make_node_run(node, self._ctx, ins, outs, reqs, states)
            (self._fwd_runs if id(node) in fwd_ids else self._bwd_runs).append(run)
        link_memo_sources(self._fwd_runs + self._bwd_runs)
        forward = {id(r) for r in self._fwd_runs}
        planned_memory.order_overlaps(graph, self._planned, run_of, forward)

    def _plan_bulk(self, pool: SharedChunks | None) -> None:
        """Segments of nodes pushed as one operation each (bulk.py, NNVMPY_EXEC_BULK_*)."""
        borrowed = pool.used if pool is not None else set()
        own = [c.var for c in self._chunks if id(c) not in borrowed]
        exposed = [*self.outputs, *self.arg_arrays, *self.aux_arrays, *self.head_grad_arrays]
        exposed += [g for g in self.grad_arrays if g is not None]
        exposed += [a for src, dst, _ in self._fwd_copies + self._bwd_copies for a in (src, dst)]
        self._bulk = BulkPlan(self._ctx, self._fwd_runs, self._bwd_runs, own, exposed)

    def _memory(self) -> tuple[list[NDArray], list[Chunk]]:
        """What an executor bound with shared_exec=self may reuse: outputs, planned blocks."""
        changed = planned_memory.lend(self._planned, self._fwd_runs + self._bwd_runs)
        self._bulk.lend(changed)  # its pushes must order against ours on every shared block
        return self.outputs, self._planned.lendable

    # -- running ----------------------------------------------------------------------------------

    def forward(self, is_train: bool = False, **kwargs: Any) -> list[NDArray]:
        """Copy keyword inputs (NDArray or NumPy) into their arguments, then push every
        forward node; returns `outputs`."""
        arg_dict = self.arg_dict
        for name, value in kwargs.items():
            if name not in arg_dict:
                raise NNVMError(
                    f"forward: unknown argument {name!r}; arguments are {self._arg_names}"
                )
            assign(arg_dict[name], value, f"forward: argument {name!r}")
        if is_train and not self._train_safe:  # the simplified graph assumed is_train=False
            from nnvmpy.executor.inference import forward_plain

            forward_plain(self)
            return self.outputs
        self._push(self._fwd_runs, self._fwd_copies, bool(is_train))
        self._backward_ready = True
        return self.outputs

    def backward(self, out_grads: Any = None, is_train: bool = True) -> None:
        """Push the backward nodes; `out_grads` are the head gradients (ones when omitted)."""
        if not self._grad_names:  # as MXNet: nothing wants a gradient, nothing runs
            return
        if out_grads is None:
            if self._head_grads_given or not self._ones_set:
                for arr in self.head_grad_arrays:
                    arr[:] = 1
                self._ones_set, self._head_grads_given = True, False
        else:
            grads = [out_grads] if not isinstance(out_grads, list | tuple) else list(out_grads)
            # as MXNet: out_grads past the outputs are ignored (its test_prelu passes one for
            # the gamma input too); a missing one is an error
            if len(grads) < len(self.head_grad_arrays):
                raise NNVMError(
                    f"backward: expected {len(self.head_grad_arrays)} out_grads "
                    f"(one per output {self._out_names}), got {len(grads)}"
                )
            for name, arr, g, used in zip(
                self._out_names, self.head_grad_arrays, grads, self._head_grad_used
            ):
                if used:  # an output whose gradient nothing reads (argmax) ignores its own
                    assign(arr, g, f"backward: out_grad for {name!r}")
            self._head_grads_given = True
        if not self._backward_ready:
            raise NNVMError(
                "backward: call forward(is_train=True) first; the memory plan lets backward "
                "reuse forward values once it has read them, so each backward needs a fresh "
                "forward (bind with grad_req='add' to call backward repeatedly)"
            )
        self._backward_ready = bool(self._retained) or self._backward_alone
        self._push(self._bwd_runs, self._bwd_copies, bool(is_train))

    def _push(self, runs: list[NodeRun], copies: list[Any], is_train: bool) -> None:
        eng = engine.get_engine()
        ctx = self._ctx
        monitor = self._monitor
        if monitor is None:
            for step in self._bulk.steps(runs):
                eng.push_sync(
                    step.fn(is_train), ctx, step.const_vars, step.mutate_vars, name=step.label
                )
        else:  # the monitor sees each node as it is pushed: no bulking
            # the token orders these after segments still in flight, which may not have
            # declared every variable of this executor (bulk.py, chained plans)
            token = self._bulk.token
            for run in runs:
                monitor.before(run)
                eng.push_sync(
                    run.fn(is_train), ctx, run.const_vars, [*run.mutate_vars, token],
                    name=run.label,
                )  # fmt: skip
                monitor.after(run)
        for src, dst, req in copies:
            if req == OpReqType.kAddTo:
                push_add(src, dst)
            else:
                push_copy(src, dst)

    def set_monitor_callback(
        self, callback: Callable[[str, NDArray], Any], monitor_all: bool = False
    ) -> None:
        """Call `callback(name, array)` with every node output as it is computed (and every
        node input before, with monitor_all); names are MXNet's (`fc1_output`, `fc1_data`)."""
        if not callable(callback):
            raise NNVMError(
                f"set_monitor_callback: callback must be callable, got {type(callback).__name__}"
            )
        self._monitor = Monitor(callback, bool(monitor_all))

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

    def get_optimized_symbol(self) -> Symbol:
        """The forward graph this executor runs, after EliminateCommonExpr (as MXNet's CPU
        executor; the fused graph is in debug_str, or Symbol.optimize_for('fuse')): the
        bind's passes again, on the bound symbol."""
        fwd = Graph(list(self._symbol._heads))
        if self._forward_passes:
            fwd = apply_passes(fwd, self._forward_passes)
        return Symbol(list(fwd.outputs))

    def copy_params_from(
        self,
        arg_params: Mapping[str, Any],
        aux_params: Mapping[str, Any] | None = None,
        allow_extra_params: bool = False,
    ) -> None:
        """Copy arrays into the arguments and auxiliary states of the same names."""
        for pairs, arrays, what in (
            (arg_params, self.arg_dict, "an argument"),
            (aux_params or {}, self.aux_dict, "an auxiliary state"),
        ):
            if not isinstance(pairs, Mapping):
                raise NNVMError(f"copy_params_from: expects dicts of arrays, got {pairs!r:.60}")
            for name, value in pairs.items():
                if name in arrays:
                    assign(arrays[name], value, f"copy_params_from: {name!r}")
                elif not allow_extra_params:
                    raise NNVMError(
                        f"copy_params_from: {name!r} is not {what} of this executor "
                        f"(pass allow_extra_params=True to skip it)"
                    )

    def reshape(
        self, partial_shaping: bool = False, allow_up_sizing: bool = False, **kwargs: Any
    ) -> Executor:
        """A new executor for new input shapes that shares this one's arrays and memory."""
        from nnvmpy.executor.reshape import reshape

        return reshape(self, partial_shaping, allow_up_sizing, kwargs)

    def debug_str(self) -> str:
        """The plan: every node with its inputs, outputs, storage ids, and the total bytes."""
        from nnvmpy.executor.debug import executor_debug_str

        return executor_debug_str(self)

    def __repr__(self) -> str:
        return f"<Executor {self._out_names} on {self._ctx}>"


def _need(arr: NDArray | None) -> NDArray:
    assert arr is not None
    return arr


def _input_names(symbol: Symbol, inferred: Graph | None) -> tuple[list[str], list[str]]:
    """(argument names, auxiliary state names): from the index of simple_bind's graph of
    this symbol when there is one (no walk of a large graph), else from the symbol."""
    if inferred is not None and inferred.outputs == symbol._heads:
        from nnvmpy.symbol.infer import input_names

        return input_names(inferred)
    return symbol._input_names()


def _origins(fwd: Graph) -> dict[Node, Node]:
    """{node of the forward graph: the symbol's node it copies}, through the copies
    EliminateCommonExpr and then FuseBatchNormReLU made (nodes they kept are the symbol's)."""
    from nnvmpy.passes.eliminate_common_expr import CSE_COPIED_FROM
    from nnvmpy.passes.fuse_bn_relu import BN_RELU_COPIED_FROM

    cse: dict[Node, Node] = fwd.attrs.get(CSE_COPIED_FROM) or {}
    bn_relu: dict[Node, Node] = fwd.attrs.get(BN_RELU_COPIED_FROM) or {}
    return {**cse, **{new: cse.get(old, old) for new, old in bn_relu.items()}}


def _known(shape: Any) -> tuple[int, ...]:
    """A fully inferred shape (bind checked every entry before planning)."""
    return tuple(int(d) for d in shape)


__all__ = ["Executor"]
