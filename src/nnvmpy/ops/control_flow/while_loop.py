"""`_while_loop`: run a body subgraph while a condition subgraph says so.

MXNet's while_loop operator (sym.contrib.while_loop builds it), with MXNet's attributes,
so symbol files MXNet wrote load too. Subgraph 0 (cond) gives a scalar; subgraph 1 (func)
gives [step outputs..., new loop variables...]. `cond_input_locs` and `func_input_locs`
give, per subgraph input, the op input feeding it; `func_var_locs[k]` is the position of
loop variable k among func's inputs, so loop variable k starts as op input
`func_input_locs[func_var_locs[k]]` and is replaced by func's new value after each step.
Outputs: each step output stacked to (max_iterations, ...) — rows after the last step
are zeros — then the final loop variables. At most `max_iterations` steps run.

The gradient (`_backward_while_loop`) runs func's gradient graph backwards over the steps
the forward took (their values kept in the op state); cond is not differentiated.
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

OP = "_while_loop"
BACKWARD_OP = "_backward_while_loop"

_parse = make_parser(
    OP,
    {"num_args": None, "num_outputs": None, "num_out_data": 0, "max_iterations": None},
    ("cond_input_locs", "func_input_locs", "func_var_locs"),
)


def _layout(p: Any) -> tuple[list[int], int]:
    """(the op input of each loop variable, the number of step outputs), checked."""
    n_v = p.num_outputs - p.num_out_data
    if n_v < 0 or len(p.func_var_locs) != n_v:
        raise NNVMError(
            f"{OP}: num_outputs={p.num_outputs} must be num_out_data={p.num_out_data} plus "
            f"one per loop variable (func_var_locs={p.func_var_locs})"
        )
    if p.max_iterations < 0:
        raise NNVMError(f"{OP}: max_iterations must be >= 0, got {p.max_iterations}")
    for g, locs, name in ((0, p.cond_input_locs, "cond"), (1, p.func_input_locs, "func")):
        if len(locs) != p.num_subgraph_inputs(g) or any(not 0 <= k < p.num_args for k in locs):
            raise NNVMError(
                f"{OP}: {name}_input_locs={locs} do not match the {name} subgraph's "
                f"{p.num_subgraph_inputs(g)} inputs and {p.num_args} op inputs"
            )
    if any(not 0 <= j < len(p.func_input_locs) for j in p.func_var_locs):
        raise NNVMError(f"{OP}: func_var_locs={p.func_var_locs} must name func inputs")
    if len(p.subgraph(1).outputs) != p.num_outputs:
        raise NNVMError(
            f"{OP}: func has {len(p.subgraph(1).outputs)} outputs, expected {p.num_outputs}"
        )
    return [p.func_input_locs[j] for j in p.func_var_locs], p.num_out_data


def _infer(attrs: Any, ins: list[Any], outs: list[Any], is_shape: bool) -> bool:
    p = attrs.parsed
    var_in, n_od = _layout(p)
    what = "shape" if is_shape else "dtype"
    infer = infer_subgraph_shapes if is_shape else infer_subgraph_types

    def same_var(i: int) -> None:  # a loop variable keeps its shape and dtype
        merge_into(ins, var_in[i], outs[n_od + i], f"{OP}: loop variable {i} {what}", is_shape)
        merge_into(outs, n_od + i, ins[var_in[i]], f"{OP}: loop variable {i} {what}", is_shape)

    for i in range(len(var_in)):
        same_var(i)
    for g, locs in ((0, p.cond_input_locs), (1, p.func_input_locs)):
        sub_ins, sub_outs = infer(p.subgraph(g), [ins[k] for k in locs])
        for k, v in zip(locs, sub_ins):
            merge_into(ins, k, v, f"{OP}: input {k} {what}", is_shape)
        if g == 1:
            for k in range(n_od):
                v = sub_outs[k]
                if is_shape and v is not None:
                    v = (p.max_iterations, *v)
                merge_into(outs, k, v, f"{OP}: output {k} {what}", is_shape)
            for i in range(len(var_in)):
                v = sub_outs[n_od + i]
                merge_into(outs, n_od + i, v, f"{OP}: loop variable {i} {what}", is_shape)
    for i in range(len(var_in)):
        same_var(i)
    return all_known(ins, is_shape) and all_known(outs, is_shape)


def _infer_shape(attrs: Any, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    return _infer(attrs, in_shapes, out_shapes, True)


def _infer_type(attrs: Any, in_types: list[Any], out_types: list[Any]) -> bool:
    return _infer(attrs, in_types, out_types, False)


def cond_value(value: Any, ctx: Any, what: str) -> bool:
    """The truth of a condition subgraph's output (read back from a GPU: one element)."""
    if value.size != 1:
        shape = tuple(int(d) for d in value.shape)
        raise NNVMError(f"{what} must give a scalar (one element), got shape {shape}")
    return bool(Arrays(ctx).to_host(value).reshape(-1)[0])


def _steps(
    p: Any, inputs: list[np.ndarray], ctx: Any, keep: bool
) -> tuple[Any, list[Any], list[Any]]:
    """Run the loop: ((per step func's inputs, per step func's node records) or None
    unless keep, per step func's outputs, the final loop variables)."""
    var_in, n_od = _layout(p)
    current = list(inputs)
    cond, func = p.runner(0), p.runner(1)
    step_ins: list[list[np.ndarray]] = []
    step_recs: list[dict[int, Any] | None] = []
    step_outs: list[list[np.ndarray]] = []
    while len(step_outs) < p.max_iterations:
        c = cond.run([current[k] for k in p.cond_input_locs], ctx)[0]
        if not cond_value(c, ctx, f"{OP}: cond"):
            break
        sub = [current[k] for k in p.func_input_locs]
        rec: dict[int, Any] | None = {} if keep else None
        res = func.run(sub, ctx, record=rec)
        step_ins.append(sub)
        step_recs.append(rec)
        step_outs.append(res)
        for i, k in enumerate(var_in):
            current[k] = res[n_od + i]
    return ((step_ins, step_recs) if keep else None), step_outs, [current[k] for k in var_in]


def _forward(
    state: LoopState, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    p = state.parsed
    var_in, n_od = _layout(p)
    arrays = Arrays(ctx)
    state.records, step_outs, final = _steps(p, inputs, ctx, keep=bool(ctx.is_train))
    for k in range(n_od):
        for t, res in enumerate(step_outs):
            arrays.assign(outputs[k][t], req[k], res[k])
        if len(step_outs) < p.max_iterations:  # rows no step wrote
            arrays.clear(outputs[k][len(step_outs) :], req[k])
    for i in range(len(var_in)):
        arrays.assign(outputs[n_od + i], req[n_od + i], final[i])


def _backward(
    state: LoopState, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    p = state.parsed
    var_in, n_od = _layout(p)
    var_of = {k: i for i, k in enumerate(var_in)}
    ograds, fwd_in = inputs[: p.num_outputs], inputs[p.num_outputs :]
    step_ins, step_recs = state.records or _steps(p, fwd_in, ctx, keep=True)[0]
    arrays = Arrays(ctx)
    grads = [arrays.zeros(shape_of(a), a.dtype) for a in fwd_in]
    var_g = [ograds[n_od + i] for i in range(len(var_in))]
    grad_runner = p.grad_runner(1) if step_ins else None
    for t in reversed(range(len(step_ins))):
        heads = [ograds[k][t] for k in range(n_od)] + var_g
        g = grad_runner.run(step_ins[t], heads, ctx, step_recs[t])  # type: ignore[union-attr]
        new_var_g: list[Any] = [None] * len(var_in)
        for k, gj in zip(p.func_input_locs, g):
            if k in var_of:  # func may read a loop variable at several inputs
                old = new_var_g[var_of[k]]
                new_var_g[var_of[k]] = gj if old is None else arrays.plus(old, gj)
            else:
                arrays.add_into(grads[k], gj)
        var_g = [
            g_i if g_i is not None else arrays.zeros(shape_of(fwd_in[k]), fwd_in[k].dtype)
            for g_i, k in zip(new_var_g, var_in)
        ]
    for i, k in enumerate(var_in):
        arrays.add_into(grads[k], var_g[i])
    for k, out in enumerate(outputs):
        arrays.assign(out, req[k], grads[k])


register_subgraph_op(
    OP,
    BACKWARD_OP,
    describe=(
        "Runs the func subgraph while the cond subgraph gives true, at most max_iterations "
        "times (MXNet's while_loop; build it with sym.contrib.while_loop). Outputs: the "
        "per-step outputs stacked to (max_iterations, ...), zero after the last step, then "
        "the final loop variables."
    ),
    parse=_parse,
    infer_shape=_infer_shape,
    infer_type=_infer_type,
    forward=_forward,
    backward=_backward,
    inputs_doc="loop variables, then free inputs",
)
