"""foreach, while_loop and cond for NDArrays and Symbols (MXNet's nd/sym.contrib ones).

The NDArray versions are plain Python loops over NDArray ops, so autograd records them
step by step. The Symbol versions call the user's function once on new variables, cut
what it built into a subgraph (subgraph_cut.py) and return the outputs of one `_foreach`,
`_while_loop` or `_cond` node (ops/control_flow/) that runs the subgraph at run time.

Inputs and outputs may be one array / symbol or (nested) lists of them; the results keep
the structure the user's function gave, as in MXNet.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..attribute import AttrScope
from ..base import NNVMError, ParamError
from ..graph.node import Node, NodeEntry
from ..registry import Op
from .subgraph_cut import SUBGRAPH_ATTR, cut_subgraph, unique_subgraph_name


class UnusedStateError(NNVMError, AssertionError):
    """sym.contrib.foreach with a state the body never reads. MXNet fails this with an
    AssertionError, so this is one too (and an NNVMError, as nnvmpy's errors are)."""


# -- nested lists ---------------------------------------------------------------------------


def _flatten(value: Any, leaf: type, what: str) -> tuple[list[Any], Any]:
    """(leaves, format): format is -1 for a single leaf, else the nested list of formats."""
    if value is None:
        return [], []
    if isinstance(value, leaf):
        return [value], -1
    if not isinstance(value, list | tuple):
        raise NNVMError(
            f"{what} must be a {leaf.__name__} or a list of them, got {type(value).__name__}"
        )
    flat: list[Any] = []
    fmts = []
    for item in value:
        leaves, fmt = _flatten(item, leaf, what)
        flat += leaves
        fmts.append(fmt)
    return flat, fmts


def _regroup(flat: Sequence[Any], fmt: Any) -> Any:
    def take(pos: int, fmt: Any) -> tuple[Any, int]:
        if fmt == -1:
            return flat[pos], pos + 1
        out = []
        for f in fmt:
            item, pos = take(pos, f)
            out.append(item)
        return out, pos

    return take(0, fmt)[0]


def _scalar_bool(value: Any, what: str) -> bool:
    from nnvmpy.ndarray.ndarray import NDArray

    if isinstance(value, NDArray):
        if value.size != 1:
            raise NNVMError(f"{what} must be a scalar (one element), got shape {value.shape}")
        value = value.asnumpy().reshape(-1)[0]
    try:
        return bool(value)
    except Exception as e:
        raise NNVMError(f"{what} must be convertible to bool, got {type(value).__name__}") from e


# -- NDArray versions -----------------------------------------------------------------------


def nd_foreach(body: Callable[..., Any], data: Any, init_states: Any) -> tuple[Any, Any]:
    """Run body(data_slice, states) -> (outputs, states) over the first axis of data;
    return (per-step outputs stacked on a new first axis, final states)."""
    from nnvmpy.ndarray import stack
    from nnvmpy.ndarray.ndarray import NDArray

    flat_data, data_fmt = _flatten(data, NDArray, "foreach: data")
    _flatten(init_states, NDArray, "foreach: init_states")
    if not flat_data:
        raise NNVMError("foreach: data must hold at least one NDArray")
    length = flat_data[0].shape[0]
    if any(d.shape[0] != length for d in flat_data):
        raise NNVMError(f"foreach: data arrays differ in length {[d.shape[0] for d in flat_data]}")
    states = init_states
    steps: list[list[Any]] = []
    out_fmt: Any = []
    for t in range(length):
        eles = _regroup([d[t] for d in flat_data], data_fmt)
        outs, states = body(eles, states)
        flat_outs, out_fmt = _flatten(outs, NDArray, "foreach: the body's outputs")
        steps.append(flat_outs)
    stacked = [stack(*items) for items in zip(*steps)]
    return (_regroup(stacked, out_fmt) if steps else []), states


def nd_while_loop(
    cond: Callable[..., Any], func: Callable[..., Any], loop_vars: Any, max_iterations: Any = None
) -> tuple[Any, Any]:
    """While steps < max_iterations and cond(*loop_vars): (step_output, loop_vars) =
    func(*loop_vars). Returns (each step output stacked and zero-padded to
    max_iterations rows, final loop_vars)."""
    from nnvmpy.ndarray import concat, zeros
    from nnvmpy.ndarray.ndarray import NDArray

    if max_iterations is None:
        raise NNVMError("while_loop: max_iterations must be given")
    max_iterations = int(_as_int(max_iterations))
    flat_vars, var_fmt = _flatten(loop_vars, NDArray, "while_loop: loop_vars")
    single = var_fmt == -1
    steps: list[list[Any]] = []
    out_fmt: Any = []
    current = flat_vars
    while len(steps) < max_iterations and _scalar_bool(
        cond(*_as_args(current, var_fmt)), "while_loop: the value of cond"
    ):
        step_output, new_vars = func(*_as_args(current, var_fmt))
        flat_out, out_fmt = _flatten(step_output, NDArray, "while_loop: step_output")
        flat_new, _ = _flatten(new_vars, NDArray, "while_loop: new loop_vars")
        if len(flat_new) != len(current):
            raise NNVMError(f"while_loop: func gave {len(flat_new)} loop variables, "
                            f"expected {len(current)}")  # fmt: skip
        steps.append(flat_out)
        current = flat_new
    stacked = []
    for items in zip(*steps):
        rows = [x.expand_dims(0) for x in items]
        if len(steps) < max_iterations:
            pad = (max_iterations - len(steps), *items[0].shape)
            rows.append(zeros(pad, ctx=items[0].context, dtype=items[0].dtype))
        stacked.append(concat(*rows, dim=0))
    outputs = _regroup(stacked, out_fmt) if steps else []
    final = current[0] if single else _regroup(current, var_fmt)
    return outputs, final


def _as_int(value: Any) -> int:
    from nnvmpy.ndarray.ndarray import NDArray

    if isinstance(value, NDArray):
        return int(value.asnumpy().reshape(-1)[0])
    return int(value)


def _as_args(flat: list[Any], fmt: Any) -> list[Any]:
    """The loop variables as the positional arguments of cond / func."""
    return [flat[0]] if fmt == -1 else list(_regroup(flat, fmt))


def nd_cond(
    pred: Any, then_func: Callable[[], Any], else_func: Callable[[], Any], name: Any = None
) -> Any:
    """then_func() when pred (a one-element NDArray) is true, else else_func()."""
    return then_func() if _scalar_bool(pred, "cond: pred") else else_func()


# -- Symbol versions ------------------------------------------------------------------------


def _heads(symbols: list[Any], what: str) -> list[NodeEntry]:
    heads = []
    for s in symbols:
        if len(s._heads) != 1:
            raise NNVMError(f"{what}: each Symbol must have one output, got {len(s._heads)}")
        heads.append(s._heads[0])
    return heads


def _new_vars(scope: str, prefix: str, n: int) -> list[Any]:
    from nnvmpy.symbol import var

    return [var(f"{scope}_{prefix}{i}") for i in range(n)]


def _call_in_scope(scope: str, fn: Callable[..., Any], *args: Any) -> Any:
    with AttrScope(**{SUBGRAPH_ATTR: scope}):
        return fn(*args)


def _make_node(op_name: str, name: str, attrs: dict[str, Any], inputs: list[NodeEntry],
               subgraphs: list[Any]) -> Node:  # fmt: skip
    """The control-flow node; it takes the AttrScope's attributes like any symbol (so a
    loop nested in another loop's body belongs to that body's subgraph)."""
    op = Op.get(op_name)
    parsed = op.parse_attrs(AttrScope.current.get({k: str(v) for k, v in attrs.items()}), name)
    parsed.parsed.subgraphs = list(subgraphs)
    return Node(parsed, inputs)


def _locs(values: Sequence[int]) -> str:
    return "[" + ", ".join(str(v) for v in values) + "]"


class _Inputs:
    """The op's inputs: fixed ones first, then each distinct outer entry once."""

    def __init__(self, fixed: list[NodeEntry]) -> None:
        self.entries = list(fixed)
        self._index: dict[tuple[int, int], int] = {}

    def add(self, entry: NodeEntry) -> int:
        key = (id(entry.node), entry.index)
        if key not in self._index:
            self._index[key] = len(self.entries)
            self.entries.append(entry)
        return self._index[key]


def sym_foreach(
    body: Callable[..., Any], data: Any, init_states: Any, name: str = "foreach"
) -> tuple[Any, Any]:
    """foreach as one `_foreach` node: body(data_slice, states) -> (outputs, states)."""
    from nnvmpy.symbol import Symbol

    flat_data, data_fmt = _flatten(data, Symbol, "foreach: data")
    flat_init, state_fmt = _flatten(init_states, Symbol, "foreach: init_states")
    if not flat_data:
        raise NNVMError("foreach: data must hold at least one Symbol")
    scope = unique_subgraph_name(name)
    data_vars = _new_vars(scope, "data", len(flat_data))
    state_vars = _new_vars(scope, "state", len(flat_init))
    outs, states = _call_in_scope(
        scope, body, _regroup(data_vars, data_fmt), _regroup(state_vars, state_fmt)
    )
    flat_outs, out_fmt = _flatten(outs, Symbol, "foreach: the body's outputs")
    flat_states, _ = _flatten(states, Symbol, "foreach: the body's states")
    if len(flat_states) != len(flat_init):
        raise NNVMError(f"foreach: the body gave {len(flat_states)} states, expected "
                        f"{len(flat_init)} (as many as init_states)")  # fmt: skip
    loop_nodes = [v._heads[0].node for v in data_vars + state_vars]
    graph, feeds = cut_subgraph(_heads(flat_outs + flat_states, "foreach"), scope, loop_nodes)
    idx = graph.indexed
    position = {id(idx.nodes[nid]): j for j, nid in enumerate(idx.input_nodes)}
    data_locs = [position.get(id(n), -1) for n in loop_nodes[: len(flat_data)]]
    state_locs = [position.get(id(n), -1) for n in loop_nodes[len(flat_data) :]]
    unused = [i for i, loc in enumerate(state_locs) if loc < 0]
    if unused:
        raise UnusedStateError(
            f"foreach: the body does not read init_states {unused}; every state has to be "
            "used (pass a value the body does not read as a free variable instead)"
        )
    remain_locs = [j for j, f in enumerate(feeds) if f is not None]
    inputs = _heads(flat_data, "foreach: data") + _heads(flat_init, "foreach: init_states")
    inputs += [feeds[j] for j in remain_locs]  # type: ignore[misc]
    n_out = len(flat_outs) + len(flat_states)
    attrs = {
        "num_args": len(inputs),
        "num_outputs": n_out,
        "num_out_data": len(flat_outs),
        "in_data_locs": _locs(data_locs),
        "in_state_locs": _locs(state_locs),
        "remain_locs": _locs(remain_locs),
    }
    node = _make_node("_foreach", name, attrs, inputs, [graph])
    results = [Symbol([NodeEntry(node, i)]) for i in range(n_out)]
    out_syms = _regroup(results[: len(flat_outs)], out_fmt) if flat_outs else []
    return out_syms, _regroup(results[len(flat_outs) :], state_fmt)


def sym_while_loop(
    cond: Callable[..., Any],
    func: Callable[..., Any],
    loop_vars: Any,
    max_iterations: Any = None,
    name: str = "while_loop",
) -> tuple[Any, Any]:
    """while_loop as one `_while_loop` node; outputs have max_iterations rows."""
    from nnvmpy.symbol import Symbol

    if max_iterations is None:
        raise NNVMError("while_loop: max_iterations must be given")
    flat_vars, var_fmt = _flatten(loop_vars, Symbol, "while_loop: loop_vars")
    n_v = len(flat_vars)
    inputs = _Inputs(_heads(flat_vars, "while_loop: loop_vars"))

    def subgraph(fn: Callable[..., Any], suffix: str) -> tuple[str, list[Node], Any]:
        scope = unique_subgraph_name(f"{name}_{suffix}")
        new_vars = _new_vars(scope, "var", n_v)
        result = _call_in_scope(scope, fn, *_as_args(new_vars, var_fmt))
        loop_nodes = [v._heads[0].node for v in new_vars]
        return scope, loop_nodes, result

    scope_c, nodes_c, pred = subgraph(cond, "cond")
    flat_pred, _ = _flatten(pred, Symbol, "while_loop: the value of cond")
    if len(flat_pred) != 1:
        raise NNVMError(f"while_loop: cond must give one Symbol, got {len(flat_pred)}")
    scope_f, nodes_f, result = subgraph(func, "func")
    if not isinstance(result, list | tuple) or len(result) != 2:
        raise NNVMError("while_loop: func must return (step_output, new_loop_vars)")
    flat_out, out_fmt = _flatten(result[0], Symbol, "while_loop: step_output")
    flat_new, _ = _flatten(result[1], Symbol, "while_loop: new loop_vars")
    if len(flat_new) != n_v:
        raise NNVMError(f"while_loop: func gave {len(flat_new)} loop variables, expected {n_v}")

    def locs(graph: Any, feeds: list[Any], loop_nodes: list[Node]) -> list[int]:
        idx = graph.indexed
        var_pos = {id(n): k for k, n in enumerate(loop_nodes)}
        return [
            var_pos[id(idx.nodes[nid])] if f is None else inputs.add(f)
            for nid, f in zip(idx.input_nodes, feeds)
        ]

    g_c, feeds_c = cut_subgraph(_heads(flat_pred, "while_loop: cond"), scope_c, nodes_c)
    g_f, feeds_f = cut_subgraph(_heads(flat_out + flat_new, "while_loop: func"), scope_f, nodes_f)
    cond_locs, func_locs = locs(g_c, feeds_c, nodes_c), locs(g_f, feeds_f, nodes_f)
    f_idx = g_f.indexed
    func_position = {id(f_idx.nodes[nid]): j for j, nid in enumerate(f_idx.input_nodes)}
    var_locs = [func_position.get(id(n), -1) for n in nodes_f]
    unused = [k for k, j in enumerate(var_locs) if j < 0]
    if unused:  # as MXNet: func must read every loop variable
        raise ParamError(
            f"while_loop: func does not read loop_vars {unused}; every loop variable "
            "has to take part in the computation"
        )
    n_out = len(flat_out) + n_v
    attrs = {
        "num_args": len(inputs.entries),
        "num_outputs": n_out,
        "num_out_data": len(flat_out),
        "max_iterations": int(_as_int(max_iterations)),
        "cond_input_locs": _locs(cond_locs),
        "func_input_locs": _locs(func_locs),
        "func_var_locs": _locs(var_locs),
    }
    node = _make_node("_while_loop", name, attrs, inputs.entries, [g_c, g_f])
    results = [Symbol([NodeEntry(node, i)]) for i in range(n_out)]
    outputs = _regroup(results[: len(flat_out)], out_fmt) if flat_out else []
    final = results[len(flat_out) :]
    return outputs, (final[0] if var_fmt == -1 else _regroup(final, var_fmt))


def sym_cond(pred: Any, then_func: Callable[[], Any], else_func: Callable[[], Any],
             name: str = "cond") -> Any:  # fmt: skip
    """cond as one `_cond` node: only the chosen branch runs."""
    from nnvmpy.symbol import Symbol

    inputs = _Inputs([])
    graphs, all_locs, fmts = [], [], []
    for suffix, fn in (("pred", lambda: pred), ("then", then_func), ("else", else_func)):
        scope = unique_subgraph_name(f"{name}_{suffix}")
        flat, fmt = _flatten(_call_in_scope(scope, fn), Symbol, f"cond: the {suffix} value")
        graph, feeds = cut_subgraph(_heads(flat, f"cond: {suffix}"), scope, [])
        graphs.append(graph)
        all_locs.append([inputs.add(f) for f in feeds])  # type: ignore[arg-type]
        fmts.append((len(flat), fmt))
    if fmts[0][0] != 1:
        raise NNVMError(f"cond: pred must be one Symbol, got {fmts[0][0]}")
    if fmts[1][0] != fmts[2][0]:
        raise NNVMError(f"cond: then_func gives {fmts[1][0]} outputs, else_func {fmts[2][0]}")
    n_out = fmts[1][0]
    attrs = {
        "num_args": len(inputs.entries),
        "num_outputs": n_out,
        "cond_input_locs": _locs(all_locs[0]),
        "then_input_locs": _locs(all_locs[1]),
        "else_input_locs": _locs(all_locs[2]),
    }
    node = _make_node("_cond", name, attrs, inputs.entries, graphs)
    return _regroup([Symbol([NodeEntry(node, i)]) for i in range(n_out)], fmts[1][1])


__all__ = ["nd_cond", "nd_foreach", "nd_while_loop", "sym_cond", "sym_foreach", "sym_while_loop"]
