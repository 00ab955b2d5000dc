"""Bulk execution: a run of consecutive nodes pushed to the engine as one operation.

MXNet's bulk execution (MXNET_EXEC_BULK_EXEC_*): instead of one engine push per node, the
executor cuts its node list at bind into segments and pushes each segment once; the
segment's function runs its nodes' computes in order. What it saves per node is the push
(an Opr, the variable queues, a completion) and, on the threaded engines, the hand-off to
a worker: measured on a chain of 50 tiny FullyConnected nodes (1 thread, CPU time per
node, 2026-11-28), 1.4 us on NaiveEngine, 6.2 us on ThreadedEngine, 10 us on
ThreadedEnginePerDevice, against 3.4 us for the node's own work.

How segments are cut (`plan_steps`), and why:

- an executor without backward nodes bulks its whole forward graph
  (NNVMPY_EXEC_BULK_EXEC_INFERENCE); one with backward nodes cuts forward and backward into
  segments of at most NNVMPY_EXEC_BULK_EXEC_MAX_NODE_TRAIN_FWD / _BWD nodes
  (NNVMPY_EXEC_BULK_EXEC_TRAIN), never mixing the two, as MXNet's InitOpSegs does;
- a node with FStatefulCompute (Custom, legacy OperatorProperty) is pushed alone: its
  compute runs user Python that hands work to another thread and waits for it, and that
  thread's pushes must not queue behind a segment holding variables they need;
- a TMemoizable node decides to skip by the versions of its input variables, which change
  only when a push ends: it joins a segment only if no earlier node of that segment writes
  one of its inputs, otherwise it starts the next one (an input another TMemoizable node
  writes does not count: that one is judged by its writer's compute count);
- a segment reads the union of its nodes' read variables and writes the union of their
  written ones (read and written: written), minus the variables of blocks planned by this
  executor that nothing outside the segment touches (no node of another segment, no
  output, argument, gradient, auxiliary state or copy). The engine never sees those: the
  segment alone uses them, in order. While such a segment is pushed its function keeps its
  nodes' arrays (and so the blocks) alive, and it reads the executor's token variable, so
  lending this executor's memory (shared_exec, reshape) first waits for the segments in
  flight (`BulkPlan.lend`) and from then on every variable stays in the segment's sets;
- a chained plan (`BulkPlan.chained`: a CPU executor whose engine pool has one worker, as
  NNVMPY_CPU_WORKER_NTHREADS=1 by default, and both phases bulked) has every step write
  the token instead, nodes pushed alone included. Each step then comes after all of this
  executor's earlier ones, so no step needs the variables of its own blocks, wherever
  their other users are. One worker runs the steps one at a time anyway. An unrolled
  LSTM's training step (tools/bench_bind.py) declared ~17k variable uses per step, ~14 ms
  on the pushing thread plus as much again on the worker, for 63 ms of work. Not on a
  GPU: its steps complete when the device has run them, and a chain would hold each
  launch back until then.

What stays per node: a monitor callback disables bulking (the executor pushes node by
node); the profiler records every node of a segment as its own operation, from inside
(the segment's push itself is not recorded); an exception in node k is stored under node
k's label (engine/var.py's `failed_step`), so the error names that node, and the engine
and executor work on afterwards as they do after a per-node failure. Unlike per-node
pushes, a failure marks every output of its segment, also those of nodes before node k.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .. import config, engine
from ..attrs import fcompute
from ..base import Context, NNVMError
from ..engine.var import Var, set_failed_step
from ..ndarray.ndarray import NDArray
from ..profiler.recorder import RECORDER, Unrecorded
from .node_run import NodeRun

_UNLIMITED = 1 << 30


@dataclass
class Segment:
    """Consecutive nodes run by one push: the same face as a NodeRun to the executor."""

    runs: list[NodeRun]
    const_vars: list[Var]
    mutate_vars: list[Var]
    label: str
    fns: dict[bool, Any] = field(default_factory=dict)

    def fn(self, is_train: bool) -> Any:
        """The engine function running every node in order (built once per is_train)."""
        fn = self.fns.get(is_train)
        if fn is None:
            fn = self.fns[is_train] = _segment_fn(self.runs, is_train)
        return fn


def _segment_fn(runs: list[NodeRun], is_train: bool) -> Any:
    fns = [r.fn(is_train) for r in runs]
    labels = [r.label for r in runs]

    def segment(run_ctx: Any) -> None:
        k = 0
        try:
            if RECORDER.on:  # one operation per node in the profile, as without bulking
                for k, f in enumerate(fns):
                    RECORDER.run_sync(f, run_ctx, labels[k])
            else:
                for f in fns:
                    f(run_ctx)
                    k += 1
        except BaseException as e:
            # `runs` is read here so that the closure keeps the nodes' arrays alive
            set_failed_step(e, runs[k].label)
            raise

    return segment


Step = NodeRun | Segment


def max_nodes(training: bool) -> tuple[int, int]:
    """Most nodes per segment (forward, backward) the knobs allow; 1: no bulking."""
    if not training:
        on = config.EXEC_BULK_EXEC_INFERENCE.get() != "0"
        return (_UNLIMITED, _UNLIMITED) if on else (1, 1)
    if config.EXEC_BULK_EXEC_TRAIN.get() == "0":
        return 1, 1
    return _count(config.EXEC_BULK_EXEC_MAX_NODE_TRAIN_FWD), _count(
        config.EXEC_BULK_EXEC_MAX_NODE_TRAIN_BWD
    )


def _count(knob: config.Knob) -> int:
    value = knob.get()
    try:
        n = int(value)
    except ValueError:
        n = -1
    if n < 0:
        raise NNVMError(f"bind: {knob.name} expects an integer >= 0, got {value!r}")
    return max(n, 1)


class BulkPlan:
    """The forward and backward steps of one executor, and the variables they may hide."""

    def __init__(
        self,
        ctx: Context,
        fwd_runs: list[NodeRun],
        bwd_runs: list[NodeRun],
        own_vars: Iterable[Var],
        exposed: Iterable[NDArray],
    ) -> None:
        self.ctx = ctx
        self.fwd_runs, self.bwd_runs = fwd_runs, bwd_runs
        self.sizes = max_nodes(bool(bwd_runs))
        eng = engine.get_engine()
        self.token = eng.new_var("bulk token")
        self.chained = (
            ctx.device_type != "gpu" and min(self.sizes) > 1 and eng.workers_for(ctx) == 1
        )
        seen = {id(a._chunk.var) for a in exposed}
        memo_read = {id(v) for r in (*fwd_runs, *bwd_runs) if r.memo for v in r.const_vars}
        self.hideable = {id(v) for v in own_vars} - seen - memo_read
        self._plan()

    def _plan(self) -> None:
        users: dict[int, set[int]] = {}
        for r in (*self.fwd_runs, *self.bwd_runs):
            for v in (*r.const_vars, *r.mutate_vars):
                if id(v) in self.hideable:
                    users.setdefault(id(v), set()).add(id(r))
        fwd, bwd = self.sizes
        self.fwd = plan_steps(self.fwd_runs, fwd, self.ctx, users, self.token, self.chained)
        self.bwd = plan_steps(self.bwd_runs, bwd, self.ctx, users, self.token, self.chained)

    def steps(self, runs: list[NodeRun]) -> list[Step]:
        """The steps standing for `runs` (this executor's forward or backward list)."""
        if runs is self.fwd_runs:
            return self.fwd
        if runs is self.bwd_runs:
            return self.bwd
        return list(runs)

    def lend(self, runs_changed: bool = False) -> None:
        """Another executor takes this one's blocks: wait for segments in flight, then keep
        every variable visible to the engine from now on (and cut the segments again when
        the caller changed its runs' variables)."""
        if not self.hideable:
            if runs_changed:
                self._plan()
            return
        engine.get_engine().wait_for_var(self.token)
        self.hideable = set()
        self._plan()

    def segment_count(self) -> tuple[int, int]:
        """How many pushes a forward and a backward make (for tests and debug_str)."""
        return len(self.fwd), len(self.bwd)


def plan_steps(
    runs: list[NodeRun],
    limit: int,
    ctx: Context,
    users: dict[int, set[int]],
    token: Var,
    chained: bool = False,
) -> list[Step]:
    """Cut `runs` (in order) into segments of at most `limit` nodes (see the module doc);
    `chained`: every step writes `token` and hides every variable in `users`."""
    if limit <= 1:
        return list(runs)
    steps: list[Step] = []
    group: list[NodeRun] = []
    written: set[int] = set()
    for run in runs:
        if not _bulkable(run, ctx):
            steps.extend(_close(group, users, token, chained))
            steps.append(_alone(run, token) if chained else run)
            group, written = [], set()
            continue
        full = len(group) >= limit
        # inputs from memoized writers count computes, which a segment sees at once
        plain = [v for i, v in enumerate(run.const_vars) if not _memo_source(run, i)]
        if full or (run.memo and any(id(v) in written for v in plain)):
            steps.extend(_close(group, users, token, chained))
            group, written = [], set()
        group.append(run)
        written.update(id(v) for v in run.mutate_vars)
    steps.extend(_close(group, users, token, chained))
    return steps


def _memo_source(run: NodeRun, i: int) -> bool:
    """Input i of `run` comes from a memoized node (NodeRun._memoized judges it by that
    node's compute count, not by the engine version)."""
    return i < len(run.sources) and run.sources[i] is not None


def _bulkable(run: NodeRun, ctx: Context) -> bool:
    op = run.node.op
    dev = "gpu" if ctx.device_type == "gpu" else "cpu"
    return op is not None and op.get_attr(fcompute(dev)) is not None


def _close(
    group: list[NodeRun], users: dict[int, set[int]], token: Var, chained: bool
) -> list[Step]:
    """`group` as one step: the NodeRun itself when alone (unless chained)."""
    if not group or (len(group) == 1 and not chained):
        return list(group)
    members = {id(r) for r in group}
    mutate: dict[int, Var] = {}
    const: dict[int, Var] = {}
    hidden = False
    for r in group:
        for v in r.mutate_vars:
            mutate[id(v)] = v
        for v in r.const_vars:
            const[id(v)] = v
    for key in list(mutate) + list(const):
        if key in users and (chained or users[key] <= members):
            mutate.pop(key, None)
            const.pop(key, None)
            hidden = True
    reads = [v for k, v in const.items() if k not in mutate]
    writes = list(mutate.values())
    if chained:
        writes.append(token)
    elif hidden:
        reads.append(token)
    first, last = group[0].node.name, group[-1].node.name
    label = Unrecorded(f"segment {first}..{last} ({len(group)} nodes)")
    return [Segment(list(group), reads, writes, label)]


def _alone(run: NodeRun, token: Var) -> Segment:
    """A node pushed alone in a chained plan: all its own variables, and the token."""
    label = Unrecorded(f"segment {run.node.name} (alone)")
    return Segment([run], list(run.const_vars), [*run.mutate_vars, token], label)


__all__ = ["BulkPlan", "Segment", "Step", "max_nodes", "plan_steps"]
