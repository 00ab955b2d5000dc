"""The fixpoint sweep shared by InferShape and InferType (NNVM's InferAttr).

Values live in one list indexed by entry id. Variables are seeded from the caller's
inputs and hints and from their own attributes (`__shape__`, `__dtype__`). Then sweeps
alternate forward and backward over the topological order, calling each op's rule on
nodes that are not fully known yet, until a sweep leaves no fewer unknown entries than
the one before. Sweeping both ways is what makes mutual inference work: a rule may fill
its inputs (a weight shape from data and num_hidden), and the backward sweep carries
that to the producers and other consumers of those entries.

Every value a rule writes is merged with what was known before, so a rule may simply
write what it computes; a disagreement raises InferError naming the node, its op, the
input or output and both values.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ..attrs import AttrKey, TIsBackward
from ..base import InferError, NNVMError
from ..graph.attrs import GraphAttr
from ..graph.graph import Graph, IndexedGraph
from ..graph.node import Node, NodeEntry
from ..infer import slot_names
from ..registry import Op


@dataclass(frozen=True)
class InferSpec:
    """What differs between shape and type inference: keys, value rules and words."""

    pass_name: str  # "InferShape"
    what: str  # "shape" / "dtype", for messages
    result: GraphAttr[Any]  # per-entry result, e.g. SHAPE
    inputs: GraphAttr[Any]  # per-input-node values, e.g. SHAPE_INPUTS
    hints: GraphAttr[Any]  # {name or NodeEntry: value}, e.g. SHAPE_HINTS
    num_unknown: GraphAttr[int]
    op_key: AttrKey[Any]  # FInferShape / FInferType
    default_rule: Any  # used when an op has no rule (None: outputs stay unknown)
    normalize: Callable[[Any], Any]  # a user or rule value -> the internal form
    var_value: Callable[[Node], Any]  # value from a variable's attrs, or None
    merge: Callable[[Any, Any], Any]  # most specific of both; InferError if they disagree
    is_known: Callable[[Any], bool]
    to_str: Callable[[Any], str]


def run_fixpoint(graph: Graph, spec: InferSpec) -> Graph:
    """Infer spec.result for every entry; provides it and spec.num_unknown."""
    idx = graph.indexed
    previous = _previous_values(graph, spec)
    fresh = previous is None
    values = [None] * idx.num_node_entries if previous is None else list(previous)
    _seed_variables(graph, spec, values)
    # A fresh inference runs every rule at least once with all its inputs known, as
    # MXNet's does: a node whose entries all became known through its neighbours (the
    # transpose in transpose(v) + (x + v)) must still check them. Values carried over
    # from such an inference (Graph.seed_entry_values) are trusted as they are.
    sweep = _Sweep(idx, spec, values, checking=fresh)
    num_unknown = sweep.count_unknown()
    forward = True
    # Sweep forward and backward while anything is learnt. Progress is any value becoming
    # more specific, not only an entry becoming fully known: a partial shape (64, ?, 7, 7)
    # a Convolution gives its weight must still reach the weight through a cast before it.
    # merge() only ever refines a value, so this ends.
    while num_unknown > 0:
        before = list(values)
        sweep.run(range(idx.num_nodes) if forward else range(idx.num_nodes - 1, -1, -1))
        num_unknown = sweep.count_unknown()
        if values == before and not forward:  # a full round trip learnt nothing
            break
        forward = not forward
    if fresh:
        sweep.run(sweep.unchecked())
        num_unknown = sweep.count_unknown()
    graph.attrs[spec.result] = values
    graph.attrs[spec.num_unknown] = num_unknown
    return graph


def _previous_values(graph: Graph, spec: InferSpec) -> list[Any] | None:
    """A previous result of the same pass, the starting point (NNVM does the same)."""
    old = graph.attrs.get(spec.result)
    return old if isinstance(old, list) and len(old) == graph.indexed.num_node_entries else None


def _seed_variables(graph: Graph, spec: InferSpec, values: list[Any]) -> None:
    idx = graph.indexed
    given = graph.attrs.get(spec.inputs) or []
    if len(given) > len(idx.input_nodes):
        raise NNVMError(
            f"{spec.pass_name}: {len(given)} {spec.inputs} given but the graph "
            f"has only {len(idx.input_nodes)} inputs"
        )
    for nid, value in zip(idx.input_nodes, given):
        _seed(spec, values, idx, idx.entry_id(nid, 0), spec.normalize(value), "the given")
    hints = graph.attrs.get(spec.hints) or {}
    by_name = _variables_by_name(idx) if hints else {}
    for key, value in hints.items():
        for eid in _hint_entries(idx, key, by_name):
            _seed(spec, values, idx, eid, spec.normalize(value), "the given")
    for nid in idx.input_nodes:
        eid = idx.entry_id(nid, 0)
        if values[eid] is not None:  # a given value wins over the declared one (NNVM's rule)
            continue
        _seed(spec, values, idx, eid, spec.var_value(idx.nodes[nid]), "its attribute")


def _variables_by_name(idx: IndexedGraph) -> dict[str, list[int]]:
    """{name: entry ids of the variables so named}: hints by name look here, not through
    every variable per hint (a network has ~100 hints and ~100 variables, and a bind
    runs a dozen inferences)."""
    by_name: dict[str, list[int]] = {}
    for nid in idx.input_nodes:
        by_name.setdefault(idx.nodes[nid].name, []).append(idx.entry_id(nid, 0))
    return by_name


def _hint_entries(
    idx: IndexedGraph, key: str | NodeEntry, by_name: dict[str, list[int]]
) -> list[int]:
    """Entry ids a hint names: an entry, or every variable with that name (`by_name`).

    A hint naming nothing in this graph is skipped, as NNVM skips entry hints: callers
    merge hints for several graphs (the executor passes head-gradient shapes that a loss
    head leaves unused), and front-ends check names against their arguments themselves.
    """
    if isinstance(key, NodeEntry):
        return [idx.entry_id(key)] if idx.exist(key.node) else []
    return by_name.get(key, [])


def _seed(
    spec: InferSpec, values: list[Any], idx: IndexedGraph, eid: int, value: Any, source: str
) -> None:
    try:
        values[eid] = spec.merge(values[eid], value)
    except InferError:
        nid, _ = idx.entry_node(eid)
        kind = "variable" if idx.nodes[nid].is_variable() else "entry"
        raise InferError(
            f"{spec.pass_name}: {kind} '{idx.entry_name(eid)}' has {spec.what} "
            f"{spec.to_str(values[eid])} but {source} {spec.what} is {spec.to_str(value)}"
        ) from None


class _Sweep:
    """One node's inference step, with what it needs precomputed once per graph."""

    def __init__(
        self, idx: IndexedGraph, spec: InferSpec, values: list[Any], checking: bool
    ) -> None:
        self.idx, self.spec, self.values = idx, spec, values
        # checking: per node, whether its rule ran with every input known (a node all of
        # whose entries are known is skipped only then); else None, known nodes skipped
        self.checked: list[bool] | None = [False] * idx.num_nodes if checking else None
        # NNVM takes a backward node's values only from its forward node (control dep 0);
        # an op rule, if the backward op has one, runs as well and can fill the ograds
        self.backward: list[bool] = []
        self.rules: list[Any] = []
        # looked up once per op, not per node: a large graph repeats a few ops many times
        per_op: dict[tuple[Op | None, bool], tuple[bool, Any]] = {}
        for node in idx.nodes:
            key = (node.op, bool(node.control_deps))
            if key not in per_op:
                backward = _is_backward(*key)
                per_op[key] = backward, self._rule(node.op, backward)
            backward, rule = per_op[key]
            self.backward.append(backward)
            self.rules.append(rule)

    def _rule(self, op: Op | None, backward: bool) -> Any:
        if op is None:
            return None
        return op.get_attr(self.spec.op_key, None if backward else self.spec.default_rule)

    def count_unknown(self) -> int:
        is_known = self.spec.is_known
        return sum(1 for v in self.values if not is_known(v))

    def unchecked(self) -> list[int]:
        """Node ids, in order, whose rule has not run with all inputs known yet."""
        checked = self.checked or []
        return [nid for nid, done in enumerate(checked) if not done]

    def run(self, order: Iterable[int]) -> None:
        """One sweep: each node's step, in `order` (one loop, not a call per node)."""
        backward, rules = self.backward, self.rules
        for nid in order:
            if backward[nid]:
                self._backward_step(nid)
            rule = rules[nid]
            if rule is not None:
                self._op_step(nid, rule)

    def _op_step(self, nid: int, rule: Any) -> None:
        inode, values, is_known = self.idx[nid], self.values, self.spec.is_known
        out_eids = self.idx.output_eids_of(nid)
        ins = [values[e] for e in inode.input_eids]
        outs = [values[e] for e in out_eids]
        inputs_known = all(map(is_known, ins))
        checked = self.checked
        if inputs_known and all(map(is_known, outs)) and (checked is None or checked[nid]):
            return
        try:
            rule(inode.source.attrs, ins, outs)
        except Exception as e:
            raise _located(self.spec, inode.source, e) from e
        if inputs_known and checked is not None:
            checked[nid] = True
        # a value the rule left as it was (the same object) merges to itself: skipped
        for slot, (eid, value) in enumerate(zip(inode.input_eids, ins)):
            if value is not values[eid]:
                self._assign(eid, value, inode.source, True, slot)
        for slot, (eid, value) in enumerate(zip(out_eids, outs)):
            if value is not values[eid]:
                self._assign(eid, value, inode.source, False, slot)

    def _backward_step(self, nid: int) -> None:
        """Backward output i has the shape/type of forward input i (and vice versa)."""
        inode = self.idx[nid]
        fwd = self.idx[inode.control_deps[0]]
        out_eids, values = self.idx.output_eids_of(nid), self.values
        for slot, (out_eid, in_eid) in enumerate(zip(out_eids, fwd.input_eids)):
            if values[out_eid] is values[in_eid]:  # the same value: both merges are no-ops
                continue
            self._assign(out_eid, values[in_eid], inode.source, False, slot)
            self._assign(in_eid, values[out_eid], fwd.source, True, slot)

    def _assign(self, eid: int, value: Any, node: Node, is_input: bool, slot: int) -> None:
        spec, old = self.spec, self.values[eid]
        if value is old:  # values are kept normalized, and merging one with itself is a no-op
            return
        try:
            self.values[eid] = spec.merge(old, spec.normalize(value))
        except InferError:
            kind = "input" if is_input else "output"
            raise InferError(
                f"{spec.pass_name}: node '{node.name}' ({_op_name(node)}) {kind} "
                f"'{_slot_name(node, is_input, slot)}' has {spec.what} {spec.to_str(old)} "
                f"but {spec.to_str(value)} was inferred"
            ) from None


def _is_backward(op: Op | None, has_control_deps: bool) -> bool:
    """A node of `op` is a backward node (its control dependency 0 is its forward node)."""
    return op is not None and has_control_deps and bool(op.get_attr(TIsBackward, False))


def _op_name(node: Node) -> str:
    return node.op.name if node.op is not None else "null"


def _slot_name(node: Node, is_input: bool, slot: int) -> str:
    ins, outs = slot_names(node.attrs, len(node.inputs), node.num_outputs())
    return (ins if is_input else outs)[slot]


def _located(spec: InferSpec, node: Node, error: Exception) -> NNVMError:
    """The error of an op's rule, with the pass, node and op named when it lacks them."""
    msg, op = str(error), _op_name(node)
    where = (
        f"{spec.pass_name}: "
        if node.name in msg and op in msg
        else (f"{spec.pass_name}: node '{node.name}' ({op}): ")
    )
    if isinstance(error, NNVMError):  # DESIGN §2: a rule raises NNVMError on a conflict
        return InferError(where + msg)
    return NNVMError(f"{where}{spec.op_key.name} raised {type(error).__name__}: {msg}")


__all__ = ["InferSpec", "run_fixpoint"]
