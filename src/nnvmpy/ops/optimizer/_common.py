"""What every optimizer update op shares: the gradient preprocessing, write modes, launching,
the common parameters and the registration chain.

Update ops compute the new weight into their output (pass out=weight to update in place,
FInplaceOption (0, 0) allows it) and update their state inputs in place (FMutateInputs:
in a symbol those are auxiliary states). As in MXNet the states are written even when the
output's request is kNullOp. Kernels are one body for both devices (kernel.parallel_for);
float16 arrays on the CPU, where numba cannot compute in float16, run on float32 copies
that are written back.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ...attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FInferShape,
    FInferType,
    FInplaceOption,
    FListInputNames,
    FMutateInputs,
)
from ...base import InferError
from ...infer import elemwise_shape, elemwise_type, slot_names, type_assign
from ...kernel import ParallelFor, device_function, like
from ...kernel.launch import ADD, NULL, WRITE, flat, is_gpu, req_code
from ...param import Parameter, field
from ...registry import NodeAttrs, Op, register_op

__all__ = [
    "ADD",
    "NULL",
    "WRITE",
    "ClipParam",
    "Group",
    "assign",
    "check_per_weight",
    "clip",
    "infer_groups",
    "launch",
    "launch_groups",
    "mp_type",
    "op_name",
    "register_update",
    "req_code",
    "sign",
]

_HALF = np.dtype(np.float16)
#: one launch's worth of an update: (items, arguments, positions the kernel writes)
Group = tuple[int, Sequence[Any], Sequence[int]]
_F32 = np.dtype(np.float32)


# -- device functions shared by the bodies ----------------------------------------------------


@device_function
def clip(x, bound):
    """x clipped to [-bound, bound]; a negative bound turns clipping off (MXNet's rule)."""
    if bound >= 0:
        return min(max(x, -bound), bound)
    return x


@device_function
def sign(x):
    """-1, 0 or 1 (0 for NaN, as MXNet's (x > 0) - (x < 0)), in x's type (a Python float
    made `lr * sign(x)` float64 in float32 GPU loops)."""
    if x > 0:
        return like(x, 1.0)
    if x < 0:
        return like(x, -1.0)
    return like(x, 0.0)


@device_function
def assign(out, i, mode, value):
    """out[i] = value (WRITE), out[i] += value (ADD), nothing (NULL): KERNEL_ASSIGN."""
    if mode == ADD:
        out[i] += value
    elif mode == WRITE:
        out[i] = value


# -- launching ------------------------------------------------------------------------------------


def launch(
    ctx: Any,
    loop: ParallelFor,
    n: int,
    args: Sequence[Any],
    written: Sequence[int] = (),
    work: int | None = None,
) -> None:
    """loop.launch(ctx, n, *args, work=work) with arrays flattened, floats as args[0]'s.

    On the CPU float16 arrays become float32 copies; those at the `written` positions of
    `args` are copied back afterwards (an output and the states the kernel updates).
    `work` (default n) decides whether the CPU loop runs in parallel.
    """
    if n == 0:
        return
    flat_args = _flat_args(args)
    staged: list[tuple[np.ndarray, np.ndarray]] = []
    if not is_gpu(ctx):
        for k, a in enumerate(flat_args):
            if isinstance(a, np.ndarray) and a.dtype == _HALF:
                up = a.astype(np.float32)
                if k in written:
                    staged.append((a, up))
                flat_args[k] = up
    loop.launch(ctx, n, *flat_args, work=work)
    for original, up in staged:
        np.copyto(original, up, casting="unsafe")


def launch_groups(ctx: Any, loop: ParallelFor, groups: Sequence[Group]) -> None:
    """launch(ctx, loop, n, args, written) for every group (n, args, written); on a GPU
    in as few launches as their kernel parameters allow (kernel/multi_tensor.py), as
    MXNet's multi_* update ops launch one kernel for their weights."""
    if not is_gpu(ctx):
        for n, args, written in groups:
            launch(ctx, loop, n, args, written)
        return
    from nnvmpy.kernel.multi_tensor import launch_many

    launch_many(ctx, loop, [g[0] for g in groups], [_flat_args(g[1]) for g in groups])


def _flat_args(args: Sequence[Any]) -> list[Any]:
    """Arrays flattened, Python floats in args[0]'s precision: MXNet casts scalars to
    DType (float32 for float16 and float32 arrays), and float64 scalars would drag
    float32 math into float64."""
    real = np.float64 if args[0].dtype == np.float64 else np.float32
    return [flat(a) if hasattr(a, "shape") else real(a) if type(a) is float else a for a in args]


def size_of(x: Any) -> int:
    return math.prod(tuple(x.shape))


def op_name(attrs: NodeAttrs) -> str:
    """The op's name for messages (ops registered under several names share a compute)."""
    return attrs.op.name if attrs.op is not None else "?"


# -- parameters ------------------------------------------------------------------------------------


class ClipParam(Parameter):
    """rescale_grad and clip_gradient: how every update op preprocesses the gradient."""

    rescale_grad = field(
        float, default=1.0, describe="Rescale gradient to grad = rescale_grad*grad."
    )
    clip_gradient = field(
        float,
        default=-1.0,
        describe="Clip gradient to the range of [-clip_gradient, clip_gradient] If "
        "clip_gradient <= 0, gradient clipping is turned off. "
        "grad = max(min(grad, clip_gradient), -clip_gradient).",
    )


WD_DESCRIPTION = (
    "Weight decay augments the objective function with a regularization term that penalizes "
    "large weights. The penalty scales with the square of the magnitude of each weight."
)
LAZY_DESCRIPTION = (
    "If true, lazy updates are applied if gradient's stype is row_sparse (nnvmpy has dense "
    "arrays only, so this has no effect)."
)


# -- type inference for mixed precision -------------------------------------------------------


def mp_type(n_low: int, out_float32: bool = False) -> Callable[..., bool]:
    """FInferType of an mp_* op: inputs[:n_low] (and the output unless `out_float32`) share
    one dtype, usually float16; every later input (states, master copy) is float32."""

    def infer(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
        ins, outs = slot_names(attrs, len(in_types), len(out_types))
        op = attrs.op.name if attrs.op is not None else "?"
        for i in range(n_low, len(in_types)):
            type_assign(in_types, i, _F32, f"{op}: input '{ins[i]}' (float32)")
        group = [in_types[i] for i in range(n_low)]
        if out_float32:
            type_assign(out_types, 0, _F32, f"{op}: output (float32)")
        else:
            group.append(out_types[0])
        known = next((t for t in group if t is not None), None)
        if known is not None:
            for i in range(n_low):
                type_assign(in_types, i, known, f"{op}: input '{ins[i]}'")
            if not out_float32:
                type_assign(out_types, 0, known, f"{op}: output '{outs[0]}'")
        return all(t is not None for t in (*in_types, *out_types))

    return infer


def infer_groups(
    rule: Callable[..., bool],
    attrs: NodeAttrs,
    stride: int,
    n: int,
    ins: list[Any],
    outs: list[Any],
) -> bool:
    """Apply an FInferShape / FInferType `rule` of one weight to each of the n groups of a
    multi-weight op: inputs [stride * i, stride * (i + 1)) with output i, in place.
    True when every group is done."""
    done = True
    for i in range(n):
        lo, hi = stride * i, stride * (i + 1)
        group_in, group_out = ins[lo:hi], [outs[i]]
        done = rule(attrs, group_in, group_out) and done
        ins[lo:hi], outs[i] = group_in, group_out[0]
    return done


def check_per_weight(
    op: str, p: Any, names: Sequence[str], n: int, count: str = "num_weights", unit: str = "weight"
) -> None:
    """InferError unless each tuple parameter in `names` has one value per weight (n)."""
    for what in names:
        got = len(getattr(p, what))
        if got != n:
            raise InferError(
                f"{op}: {what} has {got} values but {count} is {n}; give one per {unit}"
            )


# -- registration ------------------------------------------------------------------------------


def _weight_to_out(attrs: NodeAttrs) -> list[tuple[int, int]]:
    return [(0, 0)]


def register_update(
    name: str,
    param: type[Parameter],
    inputs: list[str],
    compute: Callable[..., None],
    describe: str,
    *,
    mutate: Sequence[int] = (),
    infer_type: Callable[..., bool] | None = None,
    infer_shape: Callable[..., bool] | None = None,
) -> Op:
    """The attribute chain of a one-output update op: weight (input 0) -> new weight."""
    n = len(inputs)
    mutated = list(mutate)
    op = (
        register_op(name)
        .describe(describe)
        .set_attr_parser(param)
        .set_num_inputs(n)
        .set_num_outputs(1)
        .set_attr(FListInputNames, lambda attrs: list(inputs))
        .set_attr(FInferShape, infer_shape or elemwise_shape(n, 1))
        .set_attr(FInferType, infer_type or elemwise_type(n, 1))
        .set_attr(FInplaceOption, _weight_to_out)
        .set_attr(FCompute_cpu, compute)
        .set_attr(FCompute_gpu, compute)
    )
    if mutated:
        op.set_attr(FMutateInputs, lambda attrs: list(mutated))
    for arg in inputs:
        op.add_argument(arg, "NDArray-or-Symbol", arg.capitalize())
    return op.add_arguments(param.fields())
