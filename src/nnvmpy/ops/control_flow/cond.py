"""`_cond`: run the then or the else subgraph, as a predicate subgraph decides.

MXNet's cond operator (sym.contrib.cond builds it). Subgraphs: 0 the predicate (a
scalar), 1 then, 2 else; both branches give `num_outputs` outputs of the same shapes and
dtypes. `cond_input_locs`, `then_input_locs` and `else_input_locs` give, per subgraph
input, the op input feeding it. Only the chosen branch runs. The gradient
(`_backward_cond`) differentiates the branch the forward took (its values kept in the op
state); the inputs only the other branch reads get zero gradients.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...base import NNVMError
from .arrays import Arrays, assign_input_grads
from .subgraph_op import (
    LoopState,
    all_known,
    infer_subgraph_shapes,
    infer_subgraph_types,
    make_parser,
    merge_into,
    register_subgraph_op,
)
from .while_loop import cond_value

OP = "_cond"
BACKWARD_OP = "_backward_cond"

_parse = make_parser(
    OP,
    {"num_args": None, "num_outputs": None},
    ("cond_input_locs", "then_input_locs", "else_input_locs"),
)

_LOCS = ("cond_input_locs", "then_input_locs", "else_input_locs")


def _check(p: Any) -> None:
    for g, key in enumerate(_LOCS):
        locs = getattr(p, key)
        if len(locs) != p.num_subgraph_inputs(g) or any(not 0 <= k < p.num_args for k in locs):
            raise NNVMError(
                f"{OP}: {key}={locs} do not match subgraph {g}'s "
                f"{p.num_subgraph_inputs(g)} inputs and {p.num_args} op inputs"
            )
    for g in (1, 2):
        if len(p.subgraph(g).outputs) != p.num_outputs:
            raise NNVMError(f"{OP}: branch {g} has {len(p.subgraph(g).outputs)} outputs, "
                            f"expected num_outputs={p.num_outputs}")  # fmt: skip


def _infer(attrs: Any, ins: list[Any], outs: list[Any], is_shape: bool) -> bool:
    p = attrs.parsed
    _check(p)
    what = "shape" if is_shape else "dtype"
    infer = infer_subgraph_shapes if is_shape else infer_subgraph_types
    for g, key in enumerate(_LOCS):
        locs = getattr(p, key)
        sub_ins, sub_outs = infer(p.subgraph(g), [ins[k] for k in locs])
        for k, v in zip(locs, sub_ins):
            merge_into(ins, k, v, f"{OP}: input {k} {what}", is_shape)
        if g > 0:
            branch = "then" if g == 1 else "else"
            for i, v in enumerate(sub_outs):
                merge_into(outs, i, v, f"{OP}: output {i} {what} ({branch} branch)", is_shape)
    return all_known(ins, is_shape) and all_known(outs, is_shape)


def _infer_shape(attrs: Any, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    return _infer(attrs, in_shapes, out_shapes, True)


def _infer_type(attrs: Any, in_types: list[Any], out_types: list[Any]) -> bool:
    return _infer(attrs, in_types, out_types, False)


def _branch(p: Any, inputs: list[np.ndarray], ctx: Any) -> int:
    pred = p.runner(0).run([inputs[k] for k in p.cond_input_locs], ctx)[0]
    return 1 if cond_value(pred, ctx, f"{OP}: the predicate") else 2


def _forward(
    state: LoopState, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    p = state.parsed
    _check(p)
    g = _branch(p, inputs, ctx)
    locs = getattr(p, _LOCS[g])
    sub = [inputs[k] for k in locs]
    rec: dict[int, Any] | None = {} if ctx.is_train else None
    res = p.runner(g).run(sub, ctx, record=rec)
    state.records = (g, sub, rec) if ctx.is_train else None
    arrays = Arrays(ctx)
    for i, out in enumerate(outputs):
        arrays.assign(out, req[i], res[i])


def _backward(
    state: LoopState, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    p = state.parsed
    _check(p)
    ograds, fwd_in = inputs[: p.num_outputs], inputs[p.num_outputs :]
    if state.records is not None:
        g, sub, rec = state.records
    else:
        g = _branch(p, fwd_in, ctx)
        sub, rec = [fwd_in[k] for k in getattr(p, _LOCS[g])], None
    locs = getattr(p, _LOCS[g])
    sub_grads = p.grad_runner(g).run(sub, ograds, ctx, rec)
    assign_input_grads(ctx, fwd_in, locs, sub_grads, req, outputs)


register_subgraph_op(
    OP,
    BACKWARD_OP,
    describe=(
        "Runs the then subgraph when the predicate subgraph gives true, else the else "
        "subgraph (MXNet's cond; build it with sym.contrib.cond)."
    ),
    parse=_parse,
    infer_shape=_infer_shape,
    infer_type=_infer_type,
    forward=_forward,
    backward=_backward,
    inputs_doc="the inputs of the three subgraphs",
)
