"""`_foreach`: run a body subgraph over the first axis of some arrays, carrying states.

MXNet's foreach operator (sym.contrib.foreach builds it). Op inputs: the data arrays,
the initial states, then the remaining (free) inputs of the body; outputs: the stacked
per-step outputs (`num_out_data` of them, each (T, ...)), then the final states. The body
subgraph's outputs are [step outputs..., new states...]; `in_data_locs`, `in_state_locs`
and `remain_locs` give the position of each data slice, state and free input among the
body's inputs (-1: the body does not read it).

The gradient (`_backward_foreach`) runs the body's gradient graph from the last step to
the first on what the forward kept of each step (subgraph_op.LoopState), carrying the
states' gradients and summing the free inputs' gradients.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...base import NNVMError
from .arrays import Arrays, shape_of
from .subgraph_op import (
    LoopState,
    all_known,
    infer_subgraph_shapes,
    infer_subgraph_types,
    make_parser,
    merge_into,
    register_subgraph_op,
)

OP = "_foreach"
BACKWARD_OP = "_backward_foreach"

_parse = make_parser(
    OP,
    {"num_args": None, "num_outputs": None, "num_out_data": 0},
    ("in_data_locs", "in_state_locs", "remain_locs"),
)


def _layout(p: Any) -> tuple[int, int, list[tuple[str, int, int]]]:
    """(number of data inputs, of states, and per body input: (kind, index, op input))."""
    n_d, n_s = len(p.in_data_locs), len(p.in_state_locs)
    n_sub = p.num_subgraph_inputs(0)
    sources: list[Any] = [None] * n_sub
    groups = (("data", p.in_data_locs, 0), ("state", p.in_state_locs, n_d),
              ("remain", p.remain_locs, n_d + n_s))  # fmt: skip
    for kind, locs, base in groups:
        for i, loc in enumerate(locs):
            if loc >= n_sub:
                raise NNVMError(f"{OP}: {kind} input {i} at body input {loc} of {n_sub}")
            if loc >= 0:
                sources[loc] = (kind, i, base + i)
    missing = [j for j, s in enumerate(sources) if s is None]
    if missing:
        raise NNVMError(f"{OP}: body inputs {missing} are fed by no op input")
    if n_d + n_s + len(p.remain_locs) != p.num_args:
        raise NNVMError(f"{OP}: num_args={p.num_args} but the locations name "
                        f"{n_d + n_s + len(p.remain_locs)} inputs")  # fmt: skip
    return n_d, n_s, sources


def _check_counts(p: Any) -> int:
    n_s = len(p.in_state_locs)
    if p.num_outputs != p.num_out_data + n_s:
        raise NNVMError(
            f"{OP}: num_outputs={p.num_outputs} must be num_out_data={p.num_out_data} "
            f"plus the {n_s} states"
        )
    return n_s


# -- inference -------------------------------------------------------------------------------


def _infer(attrs: Any, ins: list[Any], outs: list[Any], is_shape: bool) -> bool:
    p = attrs.parsed
    n_d, n_s, sources = _layout(p)
    _check_counts(p)
    n_od = p.num_out_data
    what = "shape" if is_shape else "dtype"

    def slice_of(v: Any) -> Any:
        if v is None or not is_shape:
            return v
        return tuple(v[1:]) if len(v) > 1 else (1,)  # MXNet 1.x has no 0-d arrays

    sub_in: list[Any] = []
    for kind, i, k in sources:
        sub_in.append(slice_of(ins[k]) if kind == "data" else ins[k])
        if kind == "state":
            tmp = [sub_in[-1]]
            merge_into(tmp, 0, outs[n_od + i], f"{OP}: state {i} {what}", is_shape)
            sub_in[-1] = tmp[0]
    graph = p.subgraph(0)
    infer = infer_subgraph_shapes if is_shape else infer_subgraph_types
    sub_ins, sub_outs = infer(graph, sub_in)
    length = None
    if is_shape:
        for i in range(n_d):
            if ins[i] is not None:
                length = length if length is not None else ins[i][0]
    for (kind, i, k), v in zip(sources, sub_ins):
        if kind == "data" and is_shape and v is not None:
            first = ins[k][0] if ins[k] is not None else length
            v = (first,) if ins[k] is not None and len(ins[k]) == 1 else (first, *v)
        merge_into(ins, k, v, f"{OP}: {kind} input {i} {what}", is_shape)
    for k in range(n_od):
        v = sub_outs[k]
        if is_shape and v is not None:
            v = (length, *v)
        merge_into(outs, k, v, f"{OP}: output {k} {what}", is_shape)
    for i in range(n_s):
        merge_into(outs, n_od + i, sub_outs[n_od + i], f"{OP}: state {i} {what}", is_shape)
        merge_into(outs, n_od + i, ins[n_d + i], f"{OP}: state {i} {what}", is_shape)
        merge_into(ins, n_d + i, outs[n_od + i], f"{OP}: state {i} {what}", is_shape)
    return all_known(ins, is_shape) and all_known(outs, is_shape)


def _infer_shape(attrs: Any, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    return _infer(attrs, in_shapes, out_shapes, True)


def _infer_type(attrs: Any, in_types: list[Any], out_types: list[Any]) -> bool:
    return _infer(attrs, in_types, out_types, False)


# -- compute ---------------------------------------------------------------------------------


def _step_slice(a: Any, t: int) -> Any:
    """Step t of a (a view, NumPy or device); a 1-D array gives shape (1,), as MXNet 1.x
    slices do."""
    return a[t] if len(a.shape) > 1 else a[t : t + 1]


def _steps(p: Any, inputs: list[np.ndarray], ctx: Any, keep: bool) -> tuple[Any, list[Any]]:
    """Run the loop: ((per step the body's inputs, per step the body's node records, or
    None unless keep), per step the body's outputs)."""
    n_d, n_s, sources = _layout(p)
    length = inputs[0].shape[0] if n_d else 0
    runner = p.runner(0)
    states = [inputs[n_d + i] for i in range(n_s)]
    step_ins, step_recs, step_outs = [], [], []
    for t in range(length):
        sub = []
        for kind, i, k in sources:
            if kind == "data":
                sub.append(_step_slice(inputs[k], t))
            elif kind == "state":
                sub.append(states[i])
            else:
                sub.append(inputs[k])
        rec: dict[int, Any] | None = {} if keep else None
        res = runner.run(sub, ctx, record=rec)
        step_ins.append(sub)
        step_recs.append(rec)
        step_outs.append(res)
        states = res[p.num_out_data :]
    return ((step_ins, step_recs) if keep else None), step_outs


def _forward(
    state: LoopState, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    p = state.parsed
    n_d, n_s, _ = _layout(p)
    n_od = p.num_out_data
    arrays = Arrays(ctx)
    state.records, step_outs = _steps(p, inputs, ctx, keep=bool(ctx.is_train))
    for t, res in enumerate(step_outs):
        for k in range(n_od):
            arrays.assign(_step_slice(outputs[k], t), req[k], res[k])
    final = step_outs[-1][n_od:] if step_outs else [inputs[n_d + i] for i in range(n_s)]
    for i in range(n_s):
        arrays.assign(outputs[n_od + i], req[n_od + i], final[i])


def _backward(
    state: LoopState, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    p = state.parsed
    n_d, n_s, sources = _layout(p)
    n_od, n_out = p.num_out_data, p.num_outputs
    ograds, fwd_in = inputs[:n_out], inputs[n_out:]
    records = state.records or _steps(p, fwd_in, ctx, keep=True)[0]
    step_ins, step_recs = records
    arrays = Arrays(ctx)
    grads = [arrays.zeros(shape_of(a), a.dtype) for a in fwd_in]
    state_g = [ograds[n_od + i] for i in range(n_s)]
    grad_runner = p.grad_runner(0) if step_ins else None
    for t in reversed(range(len(step_ins))):
        heads = [_step_slice(ograds[k], t) for k in range(n_od)] + state_g
        g = grad_runner.run(step_ins[t], heads, ctx, step_recs[t])  # type: ignore[union-attr]
        new_state_g: list[Any] = [None] * n_s
        for (kind, i, k), gj in zip(sources, g):
            if kind == "data":
                arrays.add_into(_step_slice(grads[k], t), gj)
            elif kind == "state":  # a state the body reads twice sums both gradients
                old = new_state_g[i]
                new_state_g[i] = gj if old is None else arrays.plus(old, gj)
            else:
                arrays.add_into(grads[k], gj)
        state_g = [
            gs if gs is not None else arrays.zeros(shape_of(fwd_in[n_d + i]), fwd_in[n_d + i].dtype)
            for i, gs in enumerate(new_state_g)
        ]
    for i in range(n_s):
        arrays.add_into(grads[n_d + i], state_g[i])
    for k, out in enumerate(outputs):
        arrays.assign(out, req[k], grads[k])


def _input_names(attrs: Any) -> list[str]:
    p = attrs.parsed
    return (
        [f"data{i}" for i in range(len(p.in_data_locs))]
        + [f"state{i}" for i in range(len(p.in_state_locs))]
        + [f"free{i}" for i in range(len(p.remain_locs))]
    )


register_subgraph_op(
    OP,
    BACKWARD_OP,
    describe=(
        "Runs the body subgraph over the first axis of the data inputs, carrying states "
        "from step to step (MXNet's foreach; build it with sym.contrib.foreach). Outputs: "
        "the per-step outputs stacked on a new first axis, then the final states."
    ),
    parse=_parse,
    infer_shape=_infer_shape,
    infer_type=_infer_type,
    forward=_forward,
    backward=_backward,
    inputs_doc="data arrays, then states, then free inputs",
    input_names=_input_names,
)
