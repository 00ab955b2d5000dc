"""Registration helpers shared by op families: MXNet's MXNET_OPERATOR_REGISTER_* as functions.

Each helper sets the attributes every member of a family shares (arity, element-wise
shape/type rules, in-place option, CPU and GPU compute through one kernel), so a family
file reads as a table of kernels and one line per op.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import kernel
from ..attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FInplaceOption,
    FListInputNames,
    FScalarFunction,
    TIsBackward,
)
from ..graph.grad import ElemwiseGradUseIn, ElemwiseGradUseOut
from ..infer import elemwise_shape, elemwise_type, type_assign
from ..param import Parameter
from ..registry import NodeAttrs, Op, register_op, skip_in_source_locations
from ._numpy_fast import numpy_compute
from ._scalar_param import ScalarParam, scalar_values
from ._second_order import (
    ZERO,
    ThirdDerivative,
    second_name,
    unary_backward_gradient,
    unary_second_gradient,
)

skip_in_source_locations(__file__)

Kernel = Any  # an nv.kernel.elementwise kernel


def scalar_type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    """FInferType of the scalar ops: the input's dtype, or float64 for an integer input
    with a non-integer scalar (is_int=False), as MXNet 1.9's BinaryScalarOp types it."""
    p = attrs.parsed
    src = in_types[0]
    if p is not None and not p.is_int and src is not None and np.dtype(src).kind in "iub":
        type_assign(out_types, 0, np.dtype(np.float64), f"{attrs.op.name}: output 'output'")  # type: ignore[union-attr]
        return True
    return bool(elemwise_type(1, 1)(attrs, in_types, out_types))


def same_slot(attrs: NodeAttrs) -> list[tuple[int, int]]:
    """Output 0 may reuse input 0's memory."""
    return [(0, 0)]


def elemwise_compute(fn: Kernel, scalar_params: tuple[str, ...] = ()) -> Any:
    """FCompute running one element-wise kernel: out = fn(*inputs, *params)."""

    def compute(
        attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
    ) -> None:
        params = scalar_values(attrs, scalar_params, outputs[0].dtype)
        fn.launch(ctx, outputs[0], req[0], *inputs, *params)

    def compute_no_params(
        attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
    ) -> None:
        fn.launch(ctx, outputs[0], req[0], *inputs)  # the common case, without a list per call

    def specialize(
        attrs: NodeAttrs, ctx: Any, in_sigs: list[Any], out_sigs: list[Any], req: list[Any]
    ) -> Any:
        """compute for one fixed signature on one device (see FCompute specialisation in
        imperative): a call `(inputs, outputs)` on a CPU, `(inputs, outputs, run_ctx)` on a
        GPU; None where launch() must stay."""
        gpu = ctx.device_type == "gpu"
        launcher = getattr(fn, "gpu_launcher" if gpu else "cpu_launcher", None)
        if launcher is None or len(out_sigs) != 1:
            return None
        params = tuple(scalar_values(attrs, scalar_params, out_sigs[0][1]))
        if gpu:
            return launcher(req[0], ctx.device_id, out_sigs[0], in_sigs, params)
        return launcher(req[0], out_sigs[0], in_sigs, params)

    if not scalar_params:
        compute = compute_no_params
    compute.__name__ = f"compute_{getattr(fn, '__name__', 'kernel')}"
    compute.specialize = specialize  # type: ignore[attr-defined]
    return compute


def set_scalar_function(op: Op, fns: list[Kernel], params: tuple[str, ...] = ()) -> Op:
    """Declare op's scalar body (FScalarFunction, read by fusion) when every fn is an
    nv.kernel.elementwise kernel run on the inputs followed by the named params."""
    if fns and all(isinstance(fn, kernel.ElementwiseKernel) for fn in fns):
        op.set_attr(FScalarFunction, kernel.scalar_function(*fns, params=params))
    return op


def multi_output_compute(fns: list[Kernel], scalar_params: tuple[str, ...] = ()) -> Any:
    """FCompute running one kernel per output over the same inputs (binary backward ops)."""

    def compute(
        attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
    ) -> None:
        params = scalar_values(attrs, scalar_params, outputs[0].dtype)
        for fn, out, r in zip(fns, outputs, req):
            fn.launch(ctx, out, r, *inputs, *params)

    return compute


def _elemwise(
    name: str,
    n_in: int,
    n_out: int,
    compute: Any,
    input_names: list[str],
    describe: str,
    infer_type: Any = None,
) -> Op:
    op = (
        register_op(name)
        .describe(describe)
        .set_num_inputs(n_in)
        .set_num_outputs(n_out)
        .set_attr(FInferShape, elemwise_shape(n_in, n_out))
        .set_attr(FInferType, infer_type or elemwise_type(n_in, n_out))
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
    set_scalar_function(op, [fn])
    if grad is not None:
        op.set_attr(FGradient, grad)
    return op


def register_binary(
    name: str, fn: Kernel, describe: str, grad: Any = None, numpy_fn: Any = None
) -> Op:
    """y = f(lhs, rhs) for two arrays of one shape (MXNET_OPERATOR_REGISTER_BINARY).

    numpy_fn(lhs, rhs, out=): the same function through NumPy's SIMD loops, used for float
    arrays on the CPU where libm is slow per element (pow)."""
    compute = numpy_compute(fn, numpy_fn) if numpy_fn is not None else elemwise_compute(fn)
    op = _elemwise(name, 2, 1, compute, ["lhs", "rhs"], describe)
    set_scalar_function(op, [fn])
    if grad is not None:
        op.set_attr(FGradient, grad)
    return op


def register_scalar(
    name: str,
    fn: Kernel,
    describe: str,
    grad: Any = None,
    numpy_fn: Any = None,
    compute: Any = None,
) -> Op:
    """y = f(x, scalar) with the scalar as a parameter (MXNET_OPERATOR_REGISTER_BINARY_SCALAR).

    numpy_fn(x, scalar, out=): as in register_binary. compute: an FCompute of the op's
    own in place of both (fn still gives the scalar function and the docs)."""
    if compute is None:
        compute = (
            numpy_compute(fn, numpy_fn, ("scalar",))
            if numpy_fn is not None
            else elemwise_compute(fn, ("scalar",))
        )
    op = _elemwise(name, 1, 1, compute, ["data"], describe, scalar_type)
    op.set_attr_parser(ScalarParam).add_arguments(ScalarParam.fields())
    set_scalar_function(op, [fn], ("scalar",))
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
    set_scalar_function(op, kernels, scalar_params)
    return op


def register_unary_math(
    name: str,
    fn: Kernel,
    describe: str,
    grad: Kernel,
    use: str,
    grad2: Kernel | str | None = None,
    param: type[Parameter] | None = None,
    grad3: ThirdDerivative | None = None,
) -> Op:
    """y = f(x) with its backward op `_backward_<name>` and the backward's own gradient.

    grad(dy, v) is dx, where v is x (use='in') or y (use='out'); grad2(g, dy, v) is
    g * d(grad)/dv, registered as `_backward__backward_<name>`, which makes the backward
    op differentiable (see _second_order.py). grad2=ZERO: that derivative is zero;
    None: the backward op gets no FGradient. grad3 is h'' where grad2 is g * dy * h'(v);
    built from registered ops (or a constant, or ZERO), it makes the second-order op
    differentiable too, and with it every higher order. A Parameter class (params passed
    to every kernel after the arrays, in field order) goes to all three ops.
    """
    scalars = tuple(param.field_specs()) if param is not None else ()
    bwd = f"_backward_{name}"
    rule = ElemwiseGradUseIn(bwd) if use == "in" else ElemwiseGradUseOut(bwd)
    op = _elemwise(name, 1, 1, elemwise_compute(fn, scalars), ["data"], describe)
    set_scalar_function(op, [fn], scalars)
    op.set_attr(FGradient, rule)
    if param is not None:
        op.set_attr_parser(param).add_arguments(param.fields())
    backward = register_backward(bwd, grad, 2, param, scalars)
    if grad2 is None:
        return op
    second = None
    if grad2 != ZERO:
        second = second_name(bwd)
        second_op = register_backward(second, grad2, 3, param, scalars)
        if grad3 is not None:
            second_op.set_attr(FGradient, unary_second_gradient(grad3))
    backward.set_attr(FGradient, unary_backward_gradient(second))
    return op


def kernels(**fns: Any) -> dict[str, Kernel]:
    """Turn scalar functions into element-wise kernels, keeping their names."""
    return {name: kernel.elementwise(fn) for name, fn in fns.items()}
