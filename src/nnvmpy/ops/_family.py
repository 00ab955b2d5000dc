"""Registration helpers shared by op families: MXNet's MXNET_OPERATOR_REGISTER_* as functions.

Each helper sets the attributes every member of a family shares (arity, element-wise
shape/type rules, in-place option, CPU and GPU compute through one kernel), so a family
file reads as a table of kernels and one line per op.
"""

from __future__ import annotations

from typing import Any

from .. import kernel
from ..attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FInplaceOption,
    FListInputNames,
    TIsBackward,
)
from ..infer import elemwise_shape, elemwise_type
from ..param import Parameter, field
from ..registry import NodeAttrs, Op, register_op, skip_in_source_locations

skip_in_source_locations(__file__)

Kernel = Any  # an nv.kernel.elementwise kernel


class ScalarParam(Parameter):
    scalar = field(float, describe="The scalar operand.")


def same_slot(attrs: NodeAttrs) -> list[tuple[int, int]]:
    """Output 0 may reuse input 0's memory."""
    return [(0, 0)]


def elemwise_compute(fn: Kernel, scalar_params: tuple[str, ...] = ()) -> Any:
    """FCompute running one element-wise kernel: out = fn(*inputs, *params)."""

    def compute(
        attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
    ) -> None:
        params = [getattr(attrs.parsed, p) for p in scalar_params]
        fn.launch(ctx, outputs[0], req[0], *inputs, *params)

    def compute_no_params(
        attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
    ) -> None:
        fn.launch(ctx, outputs[0], req[0], *inputs)  # the common case, without a list per call

    if not scalar_params:
        compute = compute_no_params
    compute.__name__ = f"compute_{getattr(fn, '__name__', 'kernel')}"
    return compute


def multi_output_compute(fns: list[Kernel], scalar_params: tuple[str, ...] = ()) -> Any:
    """FCompute running one kernel per output over the same inputs (binary backward ops)."""

    def compute(
        attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
    ) -> None:
        params = [getattr(attrs.parsed, p) for p in scalar_params]
        for fn, out, r in zip(fns, outputs, req):
            fn.launch(ctx, out, r, *inputs, *params)

    return compute


def _elemwise(
    name: str, n_in: int, n_out: int, compute: Any, input_names: list[str], describe: str
) -> Op:
    op = (
        register_op(name)
        .describe(describe)
        .set_num_inputs(n_in)
        .set_num_outputs(n_out)
        .set_attr(FInferShape, elemwise_shape(n_in, n_out))
        .set_attr(FInferType, elemwise_type(n_in, n_out))
        .set_attr(FCompute_cpu, compute)
        .set_attr(FCompute_gpu, compute)
    )
    if n_out == 1:
        # with several outputs, one kernel per output runs in turn: a later kernel would
        # read input 0 after an earlier one overwrote it
        op.set_attr(FInplaceOption, same_slot)
    if input_names != ["data"]:
        names = list(input_names)
        op.set_attr(FListInputNames, lambda attrs: names)
    for arg in input_names:
        op.add_argument(arg, "NDArray-or-Symbol", f"The {arg} array.")
    return op


def register_unary(name: str, fn: Kernel, describe: str, grad: Any = None) -> Op:
    """y = f(x), element-wise (MXNET_OPERATOR_REGISTER_UNARY)."""
    op = _elemwise(name, 1, 1, elemwise_compute(fn), ["data"], describe)
    if grad is not None:
        op.set_attr(FGradient, grad)
    return op


def register_binary(name: str, fn: Kernel, describe: str, grad: Any = None) -> Op:
    """y = f(lhs, rhs) for two arrays of one shape (MXNET_OPERATOR_REGISTER_BINARY)."""
    op = _elemwise(name, 2, 1, elemwise_compute(fn), ["lhs", "rhs"], describe)
    if grad is not None:
        op.set_attr(FGradient, grad)
    return op


def register_scalar(name: str, fn: Kernel, describe: str, grad: Any = None) -> Op:
    """y = f(x, scalar) with the scalar as a parameter (MXNET_OPERATOR_REGISTER_BINARY_SCALAR)."""
    op = _elemwise(name, 1, 1, elemwise_compute(fn, ("scalar",)), ["data"], describe)
    op.set_attr_parser(ScalarParam).add_arguments(ScalarParam.fields())
    if grad is not None:
        op.set_attr(FGradient, grad)
    return op


def register_backward(
    name: str,
    fns: Kernel | list[Kernel],
    n_in: int,
    param: type[Parameter] | None = None,
    scalar_params: tuple[str, ...] = (),
) -> Op:
    """A backward op computing one gradient per kernel from its n_in inputs (ograds first)."""
    kernels = fns if isinstance(fns, list) else [fns]
    compute = (
        elemwise_compute(kernels[0], scalar_params)
        if len(kernels) == 1
        else multi_output_compute(kernels, scalar_params)
    )
    names = [f"arg{i}" for i in range(n_in)]
    op = _elemwise(
        name, n_in, len(kernels), compute, names, f"Backward of {name.removeprefix('_backward_')}."
    )
    op.set_attr(TIsBackward, True)
    if param is not None:
        op.set_attr_parser(param)
    return op


def kernels(**fns: Any) -> dict[str, Kernel]:
    """Turn scalar functions into element-wise kernels, keeping their names."""
    return {name: kernel.elementwise(fn) for name, fn in fns.items()}
